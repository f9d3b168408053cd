#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the first line of rip top on a trace, and on the file of a
# process that is gone, gives no CPU figure: only samples are known there,
# and their shares always sum to 100%.  It said "CPU 100.0% over the trace"
# of any program that was sampled at all (and "CPU 0.0%" of one that was
# not, such as sleep(1)), and "1 threads".  A thread of a process that is
# gone that left neither a sample nor a wait record is in a group "gone",
# not "sleep (blocked outside the wrapped calls)": it was not seen blocked.  Live, the line still says the
# CPU used over the interval.
. tests/data/common.sh
prog=$BUILD/tests/integ/topprog
need_bin "$prog" "$RIP"
need_cmd sleep

expect_status 0 "rip run --sample sleep" "$RIP" run -q --sample -o "$TEST_TMP/sleep" -- sleep 0.2
expect_status 0 "rip top TRACE (sleep)" "$RIP" top "$TEST_TMP/sleep"
head -n 1 "$TEST_TMP/out" >"$TEST_TMP/head"
grep -q '^rip top - pid [0-9]* (sleep) (a trace: the samples it recorded) - 1 thread - sort: cpu$' \
	"$TEST_TMP/head" || fail "sleep: header: $(cat "$TEST_TMP/head")"
# its one thread left no sample and no wait record: not "sleep", which says blocked
grep -q ' gone  (no sample and no wait record' "$TEST_TMP/out" ||
	fail "sleep: its thread's group: $(tail -n 1 "$TEST_TMP/out")"

expect_status 0 "rip run --sample burn" "$RIP" run -q --sample -o "$TEST_TMP/burn" -- "$prog" burn 200
expect_status 0 "rip top TRACE (burn)" "$RIP" top "$TEST_TMP/burn"
head -n 1 "$TEST_TMP/out" >"$TEST_TMP/head"
grep -q 'CPU' "$TEST_TMP/head" && fail "burn: header claims a CPU figure: $(cat "$TEST_TMP/head")"
grep -q '^rip top - pid [0-9]* (topprog) (a trace: the samples it recorded) - [0-9]* threads\? - sort: cpu$' \
	"$TEST_TMP/head" || fail "burn: header: $(cat "$TEST_TMP/head")"

# live: the CPU of the interval
t_bg "$RIP" run -q --sample -o "$TEST_TMP/live" -- "$prog" top "$TEST_TMP/ready"
wait_file "$TEST_TMP/ready" 60 || die "topprog top did not start"
pid=$(cat "$TEST_TMP/ready")
T_PIDS="$T_PIDS $pid"
expect_status 0 "rip top --once PID" "$RIP" top --once --delay=200ms "$pid"
head -n 1 "$TEST_TMP/out" >"$TEST_TMP/head"
grep -q "^rip top - pid $pid (topprog) - [0-9]* threads - CPU [0-9.]*% over [0-9.]*m\?s - sort: cpu\$" \
	"$TEST_TMP/head" || fail "live: header: $(cat "$TEST_TMP/head")"
t_done
