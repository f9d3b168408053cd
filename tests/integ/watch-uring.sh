#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: threads blocked in io_uring_enter (waiting for a completion),
# which no libc wrapper sees: rip ps shows them "in syscall io_uring_enter"
# with uring_waiter <- uring_thread on their stacks, live and after kill -9.
# A kernel that refuses io_uring skips the test; any other failure of
# io_uring_setup in the helper fails it.
. tests/data/common.sh
. tests/data/watch.sh

w_start "$TEST_TMP/a" uring=2
ring=$(w_ring "$TEST_TMP/a")
blocked() {
	grep -q 'uring \(unavailable\|failed\)' "$W_OUT" && return 0
	w_ps_has "$ring" "2 threads in syscall io_uring_enter" "uring_waiter" "uring_thread"
}
wait_until 20 blocked || die "rip ps: $(cat "$TEST_TMP/ps.out" "$TEST_TMP/ps.err")"
grep -q 'uring failed' "$W_OUT" && die "watchprog: $(grep -m1 'uring failed' "$W_OUT")"
if grep -q 'uring unavailable' "$W_OUT"; then
	skip "io_uring is not available here: $(grep -m1 'uring unavailable' "$W_OUT")"
fi
t_kill "$W_PID"
w_ps_has "$ring" "2 threads in syscall io_uring_enter" "uring_waiter" "uring_thread" ||
	fail "after kill -9: $(cat "$TEST_TMP/ps.out" "$TEST_TMP/ps.err")"
t_done
