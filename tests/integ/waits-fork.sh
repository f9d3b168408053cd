#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: vfork (whose child calls wrapped write and nanosleep),
# vfork + execve, posix_spawn and fork without exec (whose child calls
# wrapped functions): nothing the children do changes the wait records of
# the parent's slots (its main thread's, and a thread's blocked in read),
# and the parent records again after vfork.  waits_fork.c watches its own
# ring file read-only.
# Timeout: 60
. tests/data/common.sh
prog=$BUILD/tests/integ/waits_fork
need_bin "$prog"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"
for follow in none fork; do
	timeout -k 5 30 env RIP_FOLLOW=$follow RIP_RING="$TEST_TMP/f-$follow.ring" \
		LD_PRELOAD="$PWD/$BUILD/librip-preload.so" \
		"$prog" "$TEST_TMP/f-$follow.ring" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
	rc=$?
	[ "$rc" = 0 ] || fail "RIP_FOLLOW=$follow: exit $rc: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
	grep -qx "done" "$TEST_TMP/out" || fail "RIP_FOLLOW=$follow: did not finish"
	[ "$(grep -c '^ok ' "$TEST_TMP/out")" = 5 ] ||
		fail "RIP_FOLLOW=$follow: $(grep -v '^ok ' "$TEST_TMP/out")"
done
t_done
