#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a program that blocks every signal and reads them through a
# signalfd (of all signals), run with rip run --sample: each of its 10
# rounds burns 100 ms of CPU (ten sampling periods, so timer signals become
# pending on it), sends itself SIGUSR1 and must read exactly that signal,
# never one of the sampler's; the signalfd made by glibc's wrapper, and by
# syscall(SYS_signalfd4) and syscall(SYS_signalfd) (once read the
# sampler's signal 64, code SI_TIMER, in round 0).  The same with
# sigwaitinfo and sigtimedwait of every signal, after which ppoll,
# epoll_pwait and sigsuspend with every signal unblocked must not end early
# on a pending timer signal, by the wrappers and through syscall() (once
# gave signal 64, EINTR at once).  The same for the waits that take a mask
# whose libc wrapper was not hooked, or whose mask the kernel reads through
# a pointer of its own: glibc's epoll_pwait2, and syscall(SYS_epoll_pwait2,
# SYS_pselect6, SYS_io_pgetevents) (each once ended its wait of 20 ms with
# EINTR at once); each must also end a longer wait with EINTR on the
# program's own SIGUSR1, which the mask it gave unblocks.  Each program then
# unblocks every signal: the timer signal left pending is the sampler's (a
# sample is stored), never the end of it.
# Timeout: 120
. tests/data/common.sh
prog=$BUILD/tests/integ/topprog
need_bin "$prog" "$RIP"

# run_mode MODE HOW: topprog MODE under rip run --sample, through the wrappers (HOW empty)
# or syscall() (sys4: signalfd4, sys: the older call), or the call HOW names (pwait), must
# end well with its samples stored.  Exit 3: the kernel refuses the call (not checked).
run_mode() {
	# $2 unquoted: none for the wrappers
	# shellcheck disable=SC2086
	TOPPROG_RING=$TEST_TMP/$1$2.ring "$RIP" run -q --sample -o "$TEST_TMP/trace-$1$2" -- \
		"$prog" "$1" 10 $2 >"$TEST_TMP/out" 2>"$TEST_TMP/err"
	rc=$?
	if [ "$rc" = 3 ]; then
		skip_part "$1 $2: the kernel refuses the call: $(cat "$TEST_TMP/err")"
		return 0
	fi
	[ "$rc" = 0 ] || fail "$1 $2: exit $rc: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
	grep -q "$1 ok" "$TEST_TMP/out" || fail "$1 $2: no success line: $(cat "$TEST_TMP/out")"
	samples_stored "$TEST_TMP/$1$2.ring" "$1 $2"
}
for how in "" sys4 sys; do
	run_mode signalfd "$how"
done
for how in "" sys; do
	run_mode sigwait "$how"
done
for how in epoll_pwait2 sys_epoll_pwait2 sys_pselect6 sys_io_pgetevents; do
	run_mode pwait "$how"
done
t_done
