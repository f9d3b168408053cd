#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip enable / rip disable flip a category of a live program
# from outside.  recprog --forever (examples/events' contract, paced to
# 200k events/s to keep the trace small) runs under rip run (block mode:
# nothing is lost); its category "events" is listed as on, turned off and
# on again.  Its counter runs on while the category is off, so the trace
# must show exactly one gap in the counter, events before it and events
# after it.  The phases end on the program's --progress file, not on a
# clock: 2000 events before the disable, the counter 2000 further on
# before the enable, 2000 more after it.  Also: a bit number works, an
# unknown category lists the known ones and exits 2, and a dead process
# cannot be changed (exit 1).
. tests/data/common.sh
ev=$PWD/$BUILD/tests/integ/recprog
need_bin "$ev" "$RIP"
cd "$TEST_TMP" || die "no TEST_TMP"

"$RIP" run -o t -- "$ev" 0 --forever --rate 200000 --progress "$TEST_TMP/progress" \
	>out 2>err &
run=$!
T_PIDS="$T_PIDS $run"
# the program is rip run's child; its ring file is found through /proc/PID/maps, and
# lists the program's own category (bit 8) once the program registered it
live_pid() {
	pid=$(ps -o pid= --ppid "$run" | tr -d ' ')
	[ -n "$pid" ] && "$RIP" enable "$pid" >list.txt 2>list.err && grep -q '^ *8 ' list.txt
}
wait_until 60 live_pid ||
	die "no live events program under rip run: $(cat err list.err 2>/dev/null)"
grep -q '^ *8  on   events  .*events:count' list.txt || fail "listing: $(cat list.txt)"
grep -q '^ *0  on   coro ' list.txt || fail "listing has no coro: $(cat list.txt)"

# emitted: the events the program had emitted when it last wrote --progress
emitted() { cat "$TEST_TMP/progress" 2>/dev/null || echo 0; }
above() { [ "$(emitted)" -gt "$1" ]; }
# count_now: c = a count taken after the call began.  The file is rewritten
# every 10 ms, but the write we see first may have counted before we came:
# the second newer one counted after the first newer one was out.
count_now() {
	for _ in 1 2; do
		c=$(emitted)
		wait_until 60 above "$c" || die "the program stopped emitting ($c events): $(cat err)"
	done
	c=$(emitted)
}

wait_until 60 above 2000 || die "the program did not emit 2000 events: $(cat err)"
expect_status 0 "rip disable PID events" "$RIP" disable "$pid" events
grep -q "events (bit 8) off\$" "$TEST_TMP/out" || fail "rip disable said: $(cat "$TEST_TMP/out")"
"$RIP" enable "$pid" >list.txt
grep -q '^ *8  off  events ' list.txt || fail "listing after disable: $(cat list.txt)"
# the counter runs on while off: 2000 events past the last one recorded
count_now
wait_until 60 above $((c + 2000)) || die "the counter stopped while off: $(cat err)"
expect_status 0 "rip enable PID 8" "$RIP" enable "$pid" 8
grep -q "events (bit 8) on\$" "$TEST_TMP/out" || fail "rip enable said: $(cat "$TEST_TMP/out")"
expect_status 0 "rip enable PID events (already on)" "$RIP" enable "$pid" events
grep -q "on (already)\$" "$TEST_TMP/out" || fail "rip enable again said: $(cat "$TEST_TMP/out")"
expect_status 2 "rip disable PID nosuch" "$RIP" disable "$pid" nosuch
grep -q "known categories: coro (0), mem (1), fd (2), shm (3), bt (4), func (6), res (7), events (8)" "$TEST_TMP/err" ||
	fail "unknown category: $(cat "$TEST_TMP/err")"
expect_status 2 "rip disable PID 256" "$RIP" disable "$pid" 256
count_now
wait_until 60 above $((c + 2000)) || die "the program stopped emitting after the enable"

# SIGTERM to rip run goes on to the program, which stops; rip run drains (not SIGINT: a
# script's background job, rip run and the program alike, ignores it)
kill -TERM "$run"
i=0
while kill -0 "$run" 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 600 ] && die "rip run did not end after SIGTERM"
	sleep 0.1
done
wait "$run"
rc=$?
[ "$rc" = 0 ] || fail "rip run: exit $rc: $(cat err)"
grep -q "^thread 0 emitted" out || fail "the program did not stop cleanly: $(cat out)"
grep -q ", 0 lost\$" err || fail "rip run lost events: $(cat err)"
"$RIP" dump t >dump.txt 2>dump.err || die "rip dump: $(cat dump.err)"
awk '
$3 == "events:count" {
	n = substr($4, 3) + 0
	if (total && n != prev + 1) { gaps++; gap = n - prev - 1 }
	else if (gaps) after++
	else before++
	prev = n; total++
}
END {
	print "events " total ", before " before ", after " after ", gaps " gaps + 0 ", gap " gap
	exit !(gaps == 1 && before > 1000 && after > 1000 && gap > 1000)
}' dump.txt >check.txt || fail "want one gap while disabled: $(cat check.txt)"
cat check.txt

expect_status 1 "rip disable on a dead process" "$RIP" disable "$pid" events
expect_status 0 "rip enable --help" "$RIP" enable --help
expect_status 0 "rip disable --help" "$RIP" disable --help
expect_status 2 "rip enable without TARGET" "$RIP" enable
t_done
