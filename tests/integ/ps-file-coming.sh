#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip ps PID of a program whose ring file is being created
# waits for it.  A ring file is there by its name before its header is
# written (its magic last): rip ps and rip record given the pid of a
# program that had just started failed with "no ring file for pid" or
# "not a ring file: no magic (a file still being created ...)" (the CI's
# run-recorder-nice met it).  ring_late.c leaves its ring file empty for
# 400 ms; rip ps PID, started then, must wait and show its thread in
# waiting(); a process whose file stays empty must still be refused, in
# about three seconds (the bound of the wait: one second was too short on
# a loaded CI machine).
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/ring_late
need_bin "$prog" "$RIP"
cd "$TEST_TMP" || die "no $TEST_TMP"

t_bg "$prog" ready
pid=$T_LAST
wait_file ready 20 || die "ring_late did not start"
expect_status 0 "rip ps $pid (its file being created)" "$RIP" ps "$pid"
grep -q "waiting" "$TEST_TMP/out" || fail "rip ps $pid: $(cat "$TEST_TMP/out")"
# one thread, no coroutine: said in the singular ("1 threads, 0 coroutines" before)
grep -q "^1 thread, 0 coroutines (0 waiting)" "$TEST_TMP/out" ||
	fail "rip ps $pid: no '1 thread, 0 coroutines' line: $(cat "$TEST_TMP/out")"
t_kill "$pid"

# A file that stays without its header: refused, not waited for without end.
sleep 30 &
spid=$!
T_PIDS="$T_PIDS $spid"
start=$(sed 's/^.*) //' "/proc/$spid/stat" | cut -d' ' -f20)
head -c 4096 /dev/zero >"$RIP_DIR/rip-$spid-$start.ring"
t0=$(date +%s)
expect_status 1 "rip ps $spid (an empty file)" "$RIP" ps "$spid"
t1=$(date +%s)
[ $((t1 - t0)) -le 5 ] || fail "rip ps of a file that stays empty took $((t1 - t0)) s"
rm -f "$RIP_DIR/rip-$spid-$start.ring"
t_done
