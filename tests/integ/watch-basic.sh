#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the watcher thread sees threads blocked where no wrapper does
# (raw syscall(SYS_futex), raw syscall(SYS_read) on a pipe): rip ps shows
# "in syscall futex" / "in syscall read" with a stack unwound from the copy
# that goes through the right callers (futex_waiter <- futex_thread,
# pipe_reader <- read_thread), live and again after kill -9, from the file
# alone.  RIP_WATCH=0 turns it off and rip ps says so.
. tests/data/common.sh
. tests/data/watch.sh

w_start "$TEST_TMP/a" futex=3 read=2
ring=$(w_ring "$TEST_TMP/a")
[ -n "$ring" ] || die "no ring file in $TEST_TMP/a"
live() {
	w_ps_has "$ring" "3 threads in syscall futex" "futex_waiter +watchprog.c" \
		"futex_thread +watchprog.c" "2 threads in syscall read" \
		"pipe_reader +watchprog.c" "read_thread +watchprog.c" "watcher: last sweep"
}
wait_until 20 live || die "rip ps live did not show the blocked threads: $(cat "$TEST_TMP/ps.out" "$TEST_TMP/ps.err")"
# The futex group's stack: syscall, then the caller, then its caller, in that order.
sed -n '/threads in syscall futex/,/clone/p' "$TEST_TMP/ps.out" | grep -E '^ +#[0-9]' |
	awk '{print $2}' | tr '\n' ' ' | grep -q 'futex_waiter futex_thread' ||
	fail "futex stack not in caller order: $(cat "$TEST_TMP/ps.out")"
t_kill "$W_PID"
w_ps_has "$ring" "dead" "3 threads in syscall futex \(since sweep at [0-9:.]+, at least" \
	"futex_waiter" "futex_thread" "2 threads in syscall read" "pipe_reader" "read_thread" ||
	fail "rip ps after kill -9: $(cat "$TEST_TMP/ps.out" "$TEST_TMP/ps.err")"

# Off.
export RIP_WATCH=0
w_start "$TEST_TMP/b" futex=1
unset RIP_WATCH
w_ps_has "$(w_ring "$TEST_TMP/b")" "watcher: off \(RIP_WATCH=0\)" ||
	fail "RIP_WATCH=0: $(cat "$TEST_TMP/ps.out" "$TEST_TMP/ps.err")"
grep -q 'in syscall' "$TEST_TMP/ps.out" && fail "RIP_WATCH=0 still swept"
t_done
