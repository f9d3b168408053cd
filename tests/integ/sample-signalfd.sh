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
# gave signal 64, EINTR at once).  Each program then unblocks every
# signal: the timer signal left pending is the sampler's (a sample is
# stored), never the end of it.
# Timeout: 120
. tests/data/common.sh
prog=$BUILD/tests/integ/topprog
need_bin "$prog" "$RIP"

# $how unquoted: none for the wrappers
# shellcheck disable=SC2086
for how in "" sys4 sys; do
	TOPPROG_RING=$TEST_TMP/signalfd$how.ring "$RIP" run -q --sample -o "$TEST_TMP/trace$how" -- \
		"$prog" signalfd 10 $how >"$TEST_TMP/out" 2>"$TEST_TMP/err" ||
		fail "signalfd $how: exit $?: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
	grep -q "signalfd ok" "$TEST_TMP/out" ||
		fail "signalfd $how: no success line: $(cat "$TEST_TMP/out")"
	samples_stored "$TEST_TMP/signalfd$how.ring" "signalfd $how"
done
# shellcheck disable=SC2086
for how in "" sys; do
	TOPPROG_RING=$TEST_TMP/sigwait$how.ring "$RIP" run -q --sample -o "$TEST_TMP/trace2$how" -- \
		"$prog" sigwait 10 $how >"$TEST_TMP/out" 2>"$TEST_TMP/err" ||
		fail "sigwait $how: exit $?: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
	grep -q "sigwait ok" "$TEST_TMP/out" ||
		fail "sigwait $how: no success line: $(cat "$TEST_TMP/out")"
	samples_stored "$TEST_TMP/sigwait$how.ring" "sigwait $how"
done
t_done
