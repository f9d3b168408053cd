#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: CPU sampling never interrupts a wait.  Under rip run
# --sample=1000, three threads alternate 2 ms of CPU work and a 5 ms
# epoll_wait, poll or nanosleep while a fourth spins, for 5 seconds: no call
# may fail with EINTR or return early, and samples were stored (the timers
# did fire: a sampler that stores nothing interrupts nothing either).
# Timeout: 120
. tests/data/common.sh
prog=$BUILD/tests/integ/topprog
need_bin "$prog" "$RIP"

TOPPROG_RING=$TEST_TMP/kept.ring "$RIP" run -q --sample=1000 -o "$TEST_TMP/trace" -- \
	"$prog" eintr 5 >"$TEST_TMP/out" 2>"$TEST_TMP/err" ||
	fail "exit $?: $(cat "$TEST_TMP/out" "$TEST_TMP/err" | head -n 20)"
grep -q "bad 0" "$TEST_TMP/out" || fail "interrupted waits: $(cat "$TEST_TMP/out")"
samples_stored "$TEST_TMP/kept.ring" "eintr at 1000 Hz"
t_done
