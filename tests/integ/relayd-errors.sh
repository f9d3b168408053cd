#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: --relayd's errors are clear and lose nothing locally: bad
# URLs and options are usage errors (exit 2); a refused connection or a
# host that does not resolve fails before the program runs (exit 1, no
# trace left behind); and killing lttng-relayd in the middle of a run
# leaves the local trace complete (every event, rip dump reads it), says
# why on stderr, and makes rip run exit 1; a relayd started again on the
# same ports in time gets the rest of the run in a new session (-r1), and
# rip run still exits 1 (relayd's copies miss what was in flight).
# Timeout: 120
. tests/data/common.sh
. tests/data/relayd-lib.sh
relayd_need
prog=$PWD/$BUILD/tests/integ/relaydprog
need_bin "$prog"
cd "$TEST_TMP" || die "no TEST_TMP"

usage() {
	expect_status 2 "$1" "$RIP" run --relayd="$2" -o t -- "$prog" --events 1
	grep -q "$3" "$TEST_TMP/err" || fail "$1: the message does not say '$3': $(cat "$TEST_TMP/err")"
}
usage "http URL" http://127.0.0.1 'net://'
usage "port out of range" net://127.0.0.1:99999 'port'
usage "no host" net:// 'no host'
usage "garbage after the ports" net://127.0.0.1:5342:5343:1 'port'
expect_status 2 "--session without --relayd" "$RIP" run --session=s -- "$prog" --events 1
grep -q -- '--relayd' "$TEST_TMP/err" || fail "--session alone: the message does not name --relayd"
expect_status 2 "-o - without --relayd" "$RIP" run -o - -- "$prog" --events 1
expect_status 2 "unsafe session name" "$RIP" run --relayd=net://127.0.0.1 --session=../x -- "$prog"
expect_status 2 "bad live timer" "$RIP" run --relayd=net://127.0.0.1 --live-timer=soon -- "$prog"
[ -e t ] && fail "a usage error left a trace behind"

# Refused: a port nobody listens on (found the way relayd_start finds them).
relayd_start rd
relayd_stop
expect_status 1 "refused connection" "$RIP" run --relayd="$RD_URL" -o t -- "$prog" --events 1
grep -q 'refused' "$TEST_TMP/err" || fail "refused: the message does not say so: $(cat "$TEST_TMP/err")"
grep -q 'emitted' "$TEST_TMP/out" && fail "refused: the program ran anyway"
[ -e t ] && fail "refused: a trace was left behind"
expect_status 1 "unknown host" "$RIP" run --relayd=net://no-such-host.invalid -o t -- "$prog" --events 1
grep -q 'no-such-host.invalid' "$TEST_TMP/err" || fail "unknown host: the message does not name it"

# relayd killed in the middle: the local trace is whole, exit 1.
relayd_start rd2
t_bg "$RIP" run -q --ctf --relayd="$RD_URL" --session=lost --hostname=hoste --live-timer=100ms \
	-o "$TEST_TMP/local" -- "$prog" --events 3000 --gap-us 10000 >/dev/null 2>"$TEST_TMP/run.err"
run_pid=$T_LAST
wait_until 30 sh -c "ls '$RD_OUT'/hoste/lost-*/stream_2 >/dev/null 2>&1" ||
	die "relayd never got a packet of the third thread"
t_kill "$RD_PID"
wait "$run_pid"
rc=$?
[ "$rc" = 1 ] || fail "rip run with relayd killed: exit $rc, want 1"
grep -q 'relayd' "$TEST_TMP/run.err" || fail "rip run did not say relayd was lost: $(cat "$TEST_TMP/run.err")"
grep -q 'local trace' "$TEST_TMP/run.err" || fail "rip run did not say the local trace goes on"
n=$(babeltrace2 "$TEST_TMP/local" 2>/dev/null | grep -c 'relaydprog:tick')
[ "$n" = 9000 ] || fail "local trace after relayd was killed: $n events, want 9000"
"$RIP" dump "$TEST_TMP/local" >/dev/null 2>"$TEST_TMP/dump.err" ||
	fail "rip dump on the local trace: $(head -n 1 "$TEST_TMP/dump.err")"

# relayd killed, then started again on its ports: rip connects again.
relayd_start rd3
t_bg "$RIP" run -q --ctf --relayd="$RD_URL" --session=again --hostname=hoste --live-timer=100ms \
	-o "$TEST_TMP/local2" -- "$prog" --events 4000 --gap-us 10000 >/dev/null 2>"$TEST_TMP/run2.err"
run_pid=$T_LAST
wait_until 30 sh -c "ls '$RD_OUT'/hoste/again-*/stream_2 >/dev/null 2>&1" ||
	die "relayd never got a packet of the third thread"
t_kill "$RD_PID"
LTTNG_HOME=$TEST_TMP/rd3-home t_bg lttng-relayd -C "tcp://127.0.0.1:$RD_C" \
	-D "tcp://127.0.0.1:$RD_D" -L "tcp://127.0.0.1:$RD_L" -o "$RD_OUT" >"$TEST_TMP/rd3b.log" 2>&1
RD_PID=$T_LAST
wait "$run_pid"
rc=$?
[ "$rc" = 1 ] || fail "rip run with relayd restarted: exit $rc, want 1"
grep -q 'connected again' "$TEST_TMP/run2.err" || fail "rip run did not connect again: $(cat "$TEST_TMP/run2.err")"
n=$(babeltrace2 "$TEST_TMP/local2" 2>/dev/null | grep -c 'relaydprog:tick')
[ "$n" = 12000 ] || fail "local trace after relayd restarted: $n events, want 12000"
c=$(ls -d "$RD_OUT"/hoste/again-*-r1 2>/dev/null | tail -n 1)
[ -n "$c" ] || fail "no -r1 session on the restarted relayd"
m=$(babeltrace2 "$c" 2>/dev/null | grep -c 'relaydprog:tick')
[ "$m" -gt 0 ] && [ "$m" -lt 12000 ] || fail "the -r1 session holds $m events (want some, not all)"
"$RIP" dump "$c" >/dev/null 2>"$TEST_TMP/dump.err" ||
	fail "rip dump on the -r1 session: $(head -n 1 "$TEST_TMP/dump.err")"
relayd_stop
t_done
