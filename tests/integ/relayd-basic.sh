#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: `rip run --relayd` streams a 3-thread program's trace to
# lttng-relayd (started here on free loopback ports) while it writes the
# local trace: babeltrace2 reading the session live prints exactly what it
# prints for the local trace, and so does babeltrace2 on relayd's copy on
# disk.  relayd's copy has no .rip-index, yet `rip dump`,
# `rip leaks --json` and `rip report --json` on it (a second, --mem run) equal the local ones,
# because the index travels in the CTF metadata; a third run, with CPU
# samples (--sample) beside resource events, reads the same from relayd's
# copy as from the local trace.  (The live comparison
# uses the run without --mem: babeltrace2 2.0's live reader prints an
# empty string field as the string before it, which its reader of the
# same bytes on disk does not.)
# Timeout: 120
. tests/data/common.sh
. tests/data/relayd-lib.sh
relayd_need
prog=$BUILD/tests/integ/relaydprog
need_bin "$prog" "$BUILD/tests/integ/topprog"

relayd_start rd
go=$TEST_TMP/go
t_bg "$RIP" run -q --ctf --relayd="$RD_URL" --session=basic --hostname=hosta \
	--live-timer=100ms -o "$TEST_TMP/local" -- "$prog" --go "$go" --events 2000 --gap-us 300 \
	>"$TEST_TMP/prog.out" 2>"$TEST_TMP/run.err"
run_pid=$T_LAST
wait_until 30 session_listed hosta basic || die "relayd does not list session hosta/basic"
live_start "$TEST_TMP/live.txt" hosta basic
# attached (the reader starts at the beginning of streams added after it attached)
wait_until 30 sh -c "babeltrace2 query src.ctf.lttng-live sessions \
	-p 'url=\"net://127.0.0.1:$RD_L\"' 2>/dev/null | grep -B6 'host/hosta/basic' | \
	grep -q 'client-count: 1'" || die "the live reader did not attach"
touch "$go"
wait "$run_pid"
rc=$?
[ "$rc" = 0 ] || { cat "$TEST_TMP/run.err" >&2; die "rip run --relayd: exit $rc"; }
live_wait 60 || fail "the live reader did not end with the session"
[ "$LIVE_RC" = 0 ] || { head -n 20 "$TEST_TMP/live.txt.err" >&2; fail "live reader: exit $LIVE_RC"; }

babeltrace2 "$TEST_TMP/local" >"$TEST_TMP/local.txt" 2>"$TEST_TMP/local.err" ||
	die "babeltrace2 on the local trace failed"
n=$(grep -c 'relaydprog:tick' "$TEST_TMP/local.txt")
[ "$n" = 6000 ] || fail "local trace: $n relaydprog:tick events, want 6000"
cmp -s "$TEST_TMP/live.txt" "$TEST_TMP/local.txt" ||
	fail "live output ($(wc -l <"$TEST_TMP/live.txt") lines) differs from the local trace's ($(wc -l <"$TEST_TMP/local.txt"))"

copy=$(relayd_copy hosta basic)
[ -n "$copy" ] || die "no trace for hosta/basic in $RD_OUT"
[ -e "$copy/.rip-index" ] && fail "relayd's copy has a .rip-index: the test proves nothing"
babeltrace2 "$copy" >"$TEST_TMP/disk.txt" 2>"$TEST_TMP/disk.err" || fail "babeltrace2 on relayd's copy failed"
cmp -s "$TEST_TMP/disk.txt" "$TEST_TMP/local.txt" || fail "relayd's copy differs from the local trace (babeltrace2)"

# The --mem run, relayd's copy on disk against the local trace.
"$RIP" run -q --ctf --mem --relayd="$RD_URL" --session=mem --hostname=hosta --live-timer=100ms \
	-o "$TEST_TMP/mem" -- "$prog" --events 500 --mem >/dev/null 2>"$TEST_TMP/run.err" ||
	{ cat "$TEST_TMP/run.err" >&2; die "rip run --mem --relayd failed"; }
copy=$(relayd_copy hosta mem)
[ -n "$copy" ] || die "no trace for hosta/mem in $RD_OUT"
babeltrace2 "$TEST_TMP/mem" >"$TEST_TMP/local.txt" 2>/dev/null
babeltrace2 "$copy" >"$TEST_TMP/disk.txt" 2>"$TEST_TMP/disk.err" || fail "babeltrace2 on relayd's copy (--mem) failed"
cmp -s "$TEST_TMP/disk.txt" "$TEST_TMP/local.txt" || fail "relayd's copy differs from the local trace (--mem, babeltrace2)"
"$RIP" dump "$TEST_TMP/mem" >"$TEST_TMP/dump.local" 2>&1 || fail "rip dump on the local trace"
"$RIP" dump "$copy" >"$TEST_TMP/dump.copy" 2>&1 || fail "rip dump on relayd's copy: $(head -n 1 "$TEST_TMP/dump.copy")"
cmp -s "$TEST_TMP/dump.local" "$TEST_TMP/dump.copy" || fail "rip dump differs on relayd's copy"
grep -q 'worker-2' "$TEST_TMP/dump.copy" || fail "rip dump on relayd's copy lost the thread names"

"$RIP" leaks --json "$TEST_TMP/mem" >"$TEST_TMP/leaks.local" 2>&1 || fail "rip leaks on the local trace"
"$RIP" leaks --json "$copy" >"$TEST_TMP/leaks.copy" 2>&1 || fail "rip leaks on relayd's copy"
# the trace's own path aside
sed "s|$TEST_TMP/mem|TRACE|g" "$TEST_TMP/leaks.local" >"$TEST_TMP/leaks.a"
sed "s|$copy|TRACE|g" "$TEST_TMP/leaks.copy" >"$TEST_TMP/leaks.b"
cmp -s "$TEST_TMP/leaks.a" "$TEST_TMP/leaks.b" || fail "rip leaks --json differs on relayd's copy"
grep -q '4096' "$TEST_TMP/leaks.b" || fail "rip leaks on relayd's copy misses the 4096-byte leaks"
"$RIP" report --json "$TEST_TMP/mem" 2>&1 | sed "s|$TEST_TMP/mem|TRACE|g" >"$TEST_TMP/report.a"
"$RIP" report --json "$copy" 2>&1 | sed "s|$copy|TRACE|g" >"$TEST_TMP/report.b"
cmp -s "$TEST_TMP/report.a" "$TEST_TMP/report.b" || fail "rip report --json differs on relayd's copy"

# CPU samples with resource events: the rip:sample type, made by the recorder at the end,
# must reach relayd's metadata too, after the types it declared already.
"$RIP" run -q --ctf --mem --sample=1000 --relayd="$RD_URL" --session=smp --hostname=hosta --live-timer=0 \
	-o "$TEST_TMP/smp" -- "$BUILD/tests/integ/topprog" burn 100 >/dev/null 2>"$TEST_TMP/run.err" ||
	{ cat "$TEST_TMP/run.err" >&2; die "rip run --sample --relayd failed"; }
copy=$(relayd_copy hosta smp)
[ -n "$copy" ] || die "no trace for hosta/smp in $RD_OUT"
babeltrace2 "$TEST_TMP/smp" >"$TEST_TMP/local.txt" 2>/dev/null
grep -q 'rip:sample' "$TEST_TMP/local.txt" || die "no CPU sample in the local trace of a busy loop"
babeltrace2 "$copy" >"$TEST_TMP/disk.txt" 2>"$TEST_TMP/disk.err" ||
	fail "babeltrace2 on relayd's copy (--sample) failed: $(grep -m 1 'E PLUGIN' "$TEST_TMP/disk.err")"
cmp -s "$TEST_TMP/disk.txt" "$TEST_TMP/local.txt" || fail "relayd's copy differs from the local trace (--sample)"

relayd_stop
t_done
