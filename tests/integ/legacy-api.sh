#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a program written for the original librip API (include
# <librip.h>, define rip_tid/rip_idx/rip_ctr/rip_ring, rip_create_ring,
# rip_init, rip_snap, rip_exit) compiles unchanged with -Werror, links with
# -lrip, and `rip ps` reads the file it writes, live and after SIGKILL: the
# names given to rip_init, each thread's history in order, exited threads
# only with --all, and a coroutine resumed on a second thread by rip_init
# with its id keeping one history.
. tests/data/common.sh
prog=$BUILD/tests/integ/legacy_prog
need_bin "$prog" "$RIP" "$RIP_ASAN"
need_cmd python3
cc=${CC:-cc}

# Unchanged source, plain flags, only -lrip: as a user of the original would build it.
"$cc" -std=gnu11 -Wall -Wextra -Werror -O2 -Iinclude -o "$TEST_TMP/legacy_cc" \
	tests/integ/legacy_prog.c -L"$BUILD" -lrip -pthread 2>"$TEST_TMP/cc.err" ||
	fail "the original-API program does not compile cleanly: $(head -n 5 "$TEST_TMP/cc.err")"
"$cc" -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -fsyntax-only -Iinclude \
	tests/integ/legacy_prog.c 2>"$TEST_TMP/cc.err" ||
	fail "librip.h does not compile as strict C11: $(head -n 5 "$TEST_TMP/cc.err")"

ring=$TEST_TMP/legacy.ring
echo "stale contents" >"$ring" # the original overwrote an old file at the same place
t_bg "$prog" "$ring" "$TEST_TMP/ready"
pid=$T_LAST
wait_file "$TEST_TMP/ready" 20 || die "legacy_prog did not get ready"

check() { # FILE ALL(0/1) ALIVE(0/1)
	python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
all_, alive = sys.argv[2] == "1", sys.argv[3] == "1"
slots = {s["name"]: s for s in d["slots"]}
bad = []
if d["alive"] != alive:
    bad.append("alive is %s" % d["alive"])
def funcs(s):
    return [p["function"] for p in s["path"]]
for i in range(1, 5):
    s = slots.get("park-%d" % i)
    if not s:
        bad.append("park-%d missing" % i)
    elif s["state"] != "running" or funcs(s) != ["legacy_step", "legacy_parked"]:
        bad.append("park-%d: %s %s" % (i, s["state"], funcs(s)))
for i in range(5, 8):
    s = slots.get("gone-%d" % i)
    if not all_:
        if s:
            bad.append("gone-%d shown without --all" % i)
    elif not s:
        bad.append("gone-%d missing with --all" % i)
    elif s["state"] != "exited" or funcs(s) != ["legacy_step", "legacy_before_exit"]:
        bad.append("gone-%d: %s %s" % (i, s["state"], funcs(s)))
s = slots.get("coro-10")
if not s or funcs(s) != ["legacy_coro_a", "legacy_coro_b"]:
    bad.append("coro-10: %s" % (funcs(s) if s else "missing"))
names = set(slots)
want = {"park-%d" % i for i in range(1, 5)} | {"coro-10"}
if all_:
    want |= {"gone-%d" % i for i in range(5, 8)}
if names != want:
    bad.append("slots %s, want %s" % (sorted(names), sorted(want)))
for b in bad:
    print(sys.argv[1] + ": " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

expect_status 0 "rip ps --threads --json (live)" "$RIP" ps --threads --json "$ring"
cp "$TEST_TMP/out" "$TEST_TMP/live.json"
check "$TEST_TMP/live.json" 0 1 || fail "live file, without --all"
expect_status 0 "rip ps --threads --all --json (live)" "$RIP" ps --threads --all --json "$ring"
cp "$TEST_TMP/out" "$TEST_TMP/live-all.json"
check "$TEST_TMP/live-all.json" 1 1 || fail "live file, with --all"
expect_status 0 "rip ps PID" "$RIP" ps "$pid"
grep -q 'legacy_parked' "$TEST_TMP/out" || fail "rip ps PID: no legacy_parked group"
grep -q ' 4  *legacy_parked .*park-1\.\.4' "$TEST_TMP/out" ||
	fail "grouped: want 4 threads park-1..4 in legacy_parked: $(cat "$TEST_TMP/out")"

t_kill "$pid"
expect_status 0 "rip ps --threads --all --json (dead)" "$RIP" ps --threads --all --json "$ring"
cp "$TEST_TMP/out" "$TEST_TMP/dead.json"
check "$TEST_TMP/dead.json" 1 0 || fail "dead file, with --all"
asan_run ps --threads --all "$ring"
[ "$asan_rc" = 0 ] || fail "rip (asan) ps --threads --all: exit $asan_rc"
grep -q 'dead (killed or crashed)' "$TEST_TMP/asan.out" || fail "not reported dead"
[ "$(grep -c '^thread  *gone-[5-7] .* exited' "$TEST_TMP/asan.out")" = 3 ] ||
	fail "--threads --all: want 3 exited gone- threads: $(cat "$TEST_TMP/asan.out")"
t_done
