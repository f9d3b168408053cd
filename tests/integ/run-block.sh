#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run records a program's events without loss in block
# mode: build/examples/events on 2 threads, every thread's counter 0..N-1
# complete and in order in what babeltrace2 reads back, and a summary that
# says 0 lost.  PROG's stdout and exit status pass through (exit 3, death by
# SIGTERM as 143, 127 for a program that does not exist), a program without
# a ring file is reported and still gives its status, an existing trace
# directory is never overwritten (and PROG is not started), and the default
# directory is rip-PROG-PID.
. tests/data/common.sh
ev=$PWD/$BUILD/examples/events
need_bin "$ev" "$RIP"
need_cmd babeltrace2
N=${RUN_BLOCK_N:-1000000}
cd "$TEST_TMP" || die "no TEST_TMP"

# 1. Two threads, block mode (the default): nothing lost.
"$RIP" run -o t1 -- "$ev" "$N" --threads 2 >out 2>err
rc=$?
[ "$rc" = 0 ] || fail "rip run events: exit $rc: $(cat err)"
grep -q "^thread 0 emitted $N\$" out && grep -q "^thread 1 emitted $N\$" out ||
	fail "PROG's stdout did not pass through: $(cat out)"
grep -q "^rip run: $((2 * N)) events (.*) recorded in t1/, 0 lost\$" err ||
	fail "summary line: $(cat err)"
[ -f t1/.rip-index ] && [ -f t1/chunk-000000.rpk ] || die "t1 is not a packed trace: $(ls -a t1)"
# the packed trace as CTF for babeltrace2: the one documented command
"$RIP" export --format=ctf t1 -o t1.ctf 2>ex.err || fail "rip export --format=ctf: $(cat ex.err)"
babeltrace2 t1.ctf >bt.txt 2>bt.err || fail "babeltrace2 cannot read the trace: $(head -n 3 bt.err)"
grep -q WARNING bt.err && fail "babeltrace2 reports losses: $(head -n 3 bt.err)"
# every thread: n = 0, 1, ..., N-1 in order
awk -v N="$N" '
/events:count:/ {
	t = $0; sub(/.*\{ tid = /, "", t); sub(/,.*/, "", t)
	n = $0; sub(/.*\{ n = /, "", n); sub(/ \}.*/, "", n)
	if (!(t in next_n)) { next_n[t] = 0; threads++ }
	if (n + 0 != next_n[t]) { bad++; if (bad < 5) print "thread " t ": n = " n ", want " next_n[t] }
	next_n[t] = n + 1
	total++
}
END {
	if (threads != 2) { print threads " threads in the trace, want 2"; exit 1 }
	for (t in next_n) if (next_n[t] != N) { print "thread " t " ends at " next_n[t] ", want " N; bad++ }
	if (total != 2 * N) { print total " events, want " 2 * N; bad++ }
	exit bad > 0
}' bt.txt >check.txt || fail "counters in the trace: $(head -n 5 check.txt)"

# 2. Exit status and output pass through; a program without librip (and without the
# preload library's slots and waits: --no-waits) is reported.
"$RIP" run -o t2 --no-waits -- sh -c 'echo hello; exit 3' >out 2>err
rc=$?
[ "$rc" = 3 ] || fail "rip run of a program that exits 3: exit $rc"
[ "$(cat out)" = hello ] || fail "stdout of sh did not pass through: $(cat out)"
grep -q "created no ring file" err || fail "no ring file not reported: $(cat err)"
[ -e t2 ] && fail "a trace directory was left for a program without events"
"$RIP" run -o t3 --preload -- sh -c 'echo preloaded; exit 4' >out 2>err
rc=$?
[ "$rc" = 4 ] || fail "rip run --preload: exit $rc, want 4: $(cat err)"
[ "$(cat out)" = preloaded ] || fail "rip run --preload: stdout $(cat out)"
grep -q "^rip run: 0 events .* recorded in t3/, 0 lost\$" err || fail "--preload summary: $(cat err)"
[ -f t3/.rip-index ] || fail "--preload: no trace written"
"$RIP" export --format=ctf t3 -o t3.ctf 2>ex.err || fail "rip export of an empty trace: $(cat ex.err)"
babeltrace2 t3.ctf >/dev/null 2>bt.err || fail "babeltrace2 cannot read an empty trace: $(head -n 3 bt.err)"
"$RIP" run -o t4 -- sh -c 'kill -TERM $$' >out 2>err
rc=$?
[ "$rc" = 143 ] || fail "rip run of a program killed by SIGTERM: exit $rc, want 143"
"$RIP" run -o t5 -- ./no-such-program >out 2>err
rc=$?
[ "$rc" = 127 ] || fail "rip run of a missing program: exit $rc, want 127"
grep -q "cannot run ./no-such-program" err || fail "missing program message: $(cat err)"

# 3. Never overwrite: an existing directory is an error before PROG starts.
mkdir exists
"$RIP" run -o exists -- sh -c 'echo ran' >out 2>err
rc=$?
[ "$rc" = 1 ] || fail "rip run -o EXISTING: exit $rc, want 1"
grep -q "exists" err || fail "rip run -o EXISTING: message $(cat err)"
[ -s out ] && fail "rip run -o EXISTING started the program anyway"

# 4. The default directory: rip-events-PID in the current directory.
"$RIP" run -q -- "$ev" 1000 >out 2>err || fail "rip run without -o: $(cat err)"
d=$(ls -d rip-events-* 2>/dev/null)
[ "$(echo "$d" | wc -w)" = 1 ] && [ -f "$d/.rip-index" ] || fail "default trace directory: '$d'"
[ -s err ] && fail "rip run -q printed: $(cat err)"

# 5. Usage.
expect_status 0 "rip run --help" "$RIP" run --help
expect_status 2 "rip run without PROG" "$RIP" run
expect_status 2 "rip run --mode=bad" "$RIP" run --mode=bad -- true
# nothing left behind in the ring directory
ls "$RIP_DIR" | grep -q rip-run && fail "ring directories left: $(ls "$RIP_DIR")"
t_done
