#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: threads exiting while the watcher sweeps.  A thread keeps
# creating threads that sleep 0.2 ms and exit (their slots are taken and
# given back, their tids vanish between the watcher's reads) while rip ps
# asks for sweep after sweep: no error escapes (the program runs on and
# ends cleanly, every rip ps succeeds), copies of threads that moved are
# dropped, and the four futex waiters are still shown with their stacks.
# Timeout: 120
. tests/data/common.sh
. tests/data/watch.sh

w_start "$TEST_TMP/a" futex=4 churn
ring=$(w_ring "$TEST_TMP/a")
wait_until 20 w_ps_has "$ring" "4 threads in syscall futex" "futex_waiter" ||
	die "the futex waiters never showed: $(cat "$TEST_TMP/ps.out")"
i=0
while [ $i -lt 60 ]; do
	"$RIP" ps "$ring" >"$TEST_TMP/ps.out" 2>"$TEST_TMP/ps.err" ||
		fail "rip ps run $i failed: $(cat "$TEST_TMP/ps.err")"
	grep -q "4 threads in syscall futex" "$TEST_TMP/ps.out" ||
		fail "run $i lost the futex waiters: $(cat "$TEST_TMP/ps.out")"
	i=$((i + 1))
done
kill -0 "$W_PID" || die "watchprog died during the sweeps: $(cat "$W_OUT")"
kill -TERM "$W_PID"
wait "$W_PID"
st=$?
[ "$st" -eq 0 ] || fail "watchprog exited with $st: $(cat "$W_OUT")"
grep -q '^early 0$' "$W_OUT" || fail "blocking calls returned early: $(cat "$W_OUT")"
t_done
