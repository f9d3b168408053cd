#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the watcher thread sees threads blocked where no wrapper does
# (raw syscall(SYS_futex), raw syscall(SYS_read) on a pipe): rip ps shows
# "in syscall futex" / "in syscall read" with a stack unwound from the copy
# that goes through the right callers (futex_waiter <- futex_thread,
# pipe_reader <- read_thread), live and again after kill -9, from the file
# alone, and in --json (grouped and --threads) too.  RIP_WATCH=0 turns it
# off and rip ps says so.
. tests/data/common.sh
. tests/data/watch.sh
need_cmd python3

w_start "$TEST_TMP/a" futex=3 read=2
ring=$(w_ring "$TEST_TMP/a")
[ -n "$ring" ] || die "no ring file in $TEST_TMP/a"
live() {
	w_ps_has "$ring" "3 threads in syscall futex" "futex_waiter +watchprog.c" \
		"futex_thread +watchprog.c" "2 threads in syscall read" \
		"pipe_reader +watchprog.c" "read_thread +watchprog.c" "watcher: last sweep"
}
wait_until 20 live || die "rip ps live did not show the blocked threads: $(cat "$TEST_TMP/ps.out" "$TEST_TMP/ps.err")"
# The futex group's stack: syscall, then the caller, then its caller, in that order.
sed -n '/threads in syscall futex/,/clone/p' "$TEST_TMP/ps.out" | grep -E '^ +#[0-9]' |
	awk '{print $2}' | tr '\n' ' ' | grep -q 'futex_waiter futex_thread' ||
	fail "futex stack not in caller order: $(cat "$TEST_TMP/ps.out")"
# --json carries them too: grouped and --threads, with the same stacks.
json_check() { # WHEN
	for mode in "" --threads; do
		"$RIP" ps --json $mode "$ring" >"$TEST_TMP/ps.json" 2>"$TEST_TMP/ps.err" ||
			{ fail "$1: rip ps --json $mode: $(cat "$TEST_TMP/ps.err")"; continue; }
		python3 - "$TEST_TMP/ps.json" <<'PY' || fail "$1: rip ps --json $mode: watcher threads wrong"
import json, sys
d = json.load(open(sys.argv[1]))
kb = d.get("kernel_blocked")
bad = []
if d.get("watcher", {}).get("sweeps", 0) < 1:
    bad.append("watcher %s" % d.get("watcher"))
def has(t, *fns):
    names = [f["function"] for f in t["stack"]]
    pos = [names.index(f) if f in names else -1 for f in fns]
    return all(p >= 0 for p in pos) and pos == sorted(pos)
fut = [t for t in kb or [] if t["syscall"] == "futex" and has(t, "futex_waiter", "futex_thread")]
rd = [t for t in kb or [] if t["syscall"] == "read" and has(t, "pipe_reader", "read_thread")]
if len(fut) != 3 or len(rd) != 2:
    bad.append("%d futex and %d read threads with their stacks: %s" % (len(fut), len(rd), kb))
if any(t["blocked_ns"] < 0 or not t["copy"] or t["tid"] <= 0 for t in kb or []):
    bad.append("fields: %s" % kb)
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
	done
}
json_check live
t_kill "$W_PID"
json_check "after kill -9"
w_ps_has "$ring" "dead" "3 threads in syscall futex \(since sweep at [0-9:.]+, at least" \
	"futex_waiter" "futex_thread" "2 threads in syscall read" "pipe_reader" "read_thread" ||
	fail "rip ps after kill -9: $(cat "$TEST_TMP/ps.out" "$TEST_TMP/ps.err")"

# Off.
export RIP_WATCH=0
w_start "$TEST_TMP/b" futex=1
unset RIP_WATCH
w_ps_has "$(w_ring "$TEST_TMP/b")" "watcher: off \(RIP_WATCH=0\)" ||
	fail "RIP_WATCH=0: $(cat "$TEST_TMP/ps.out" "$TEST_TMP/ps.err")"
grep -q 'in syscall' "$TEST_TMP/ps.out" && fail "RIP_WATCH=0 still swept"
t_done
