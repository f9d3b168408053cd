#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a program that blocks every signal and reads them through a
# signalfd (of all signals), run with rip run --sample: each of its 10
# rounds burns 100 ms of CPU (ten sampling periods, so timer signals become
# pending on it), sends itself SIGUSR1 and must read exactly that signal,
# never one of the sampler's.  The same with sigwaitinfo and sigtimedwait
# of every signal.  Each program then unblocks every signal: the timer signal
# left pending is the sampler's (a sample is stored), never the end of it.
# Timeout: 120
. tests/data/common.sh
prog=$BUILD/tests/integ/topprog
need_bin "$prog" "$RIP"

TOPPROG_RING=$TEST_TMP/signalfd.ring "$RIP" run -q --sample -o "$TEST_TMP/trace" -- \
	"$prog" signalfd 10 >"$TEST_TMP/out" 2>"$TEST_TMP/err" ||
	fail "exit $?: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
grep -q "signalfd ok" "$TEST_TMP/out" || fail "no success line: $(cat "$TEST_TMP/out")"
samples_stored "$TEST_TMP/signalfd.ring" signalfd
TOPPROG_RING=$TEST_TMP/sigwait.ring "$RIP" run -q --sample -o "$TEST_TMP/trace2" -- \
	"$prog" sigwait 10 >"$TEST_TMP/out" 2>"$TEST_TMP/err" ||
	fail "sigwait: exit $?: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
grep -q "sigwait ok" "$TEST_TMP/out" || fail "sigwait: no success line: $(cat "$TEST_TMP/out")"
samples_stored "$TEST_TMP/sigwait.ring" sigwait
t_done
