#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the watcher's sweeps disturb no one.  40 threads block in raw
# futex and raw read calls; 40 rip ps runs each ask for a fresh sweep (each
# copies every blocked thread's stack); then the program wakes its threads
# and counts the blocking calls that returned before the wake-up (EINTR or
# early): there must be none, and every rip ps must have had its sweep.
# Timeout: 120
. tests/data/common.sh
. tests/data/watch.sh

w_start "$TEST_TMP/a" futex=20 read=20
ring=$(w_ring "$TEST_TMP/a")
wait_until 20 w_ps_has "$ring" "20 threads in syscall futex" "20 threads in syscall read" ||
	die "the threads never showed as blocked: $(cat "$TEST_TMP/ps.out")"
i=0
while [ $i -lt 40 ]; do
	"$RIP" ps "$ring" >"$TEST_TMP/ps.out" 2>&1 || fail "rip ps run $i failed"
	grep -q "did not answer" "$TEST_TMP/ps.out" && fail "rip ps run $i: no fresh sweep"
	i=$((i + 1))
done
kill -TERM "$W_PID"
wait "$W_PID"
st=$?
grep -q '^early 0$' "$W_OUT" || fail "blocking calls returned early: $(cat "$W_OUT")"
[ "$st" -eq 0 ] || fail "watchprog exited with $st: $(cat "$W_OUT")"
t_done
