#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the sampler's frame-pointer walk never reads memory the
# program cannot.  topprog badfp burns 300 ms of CPU in a loop that keeps
# in rbp, as code built without frame pointers may keep anything there, an
# address in a PROT_NONE page of its own stack above the loop's frames,
# made by a raw system call that no wrapper sees (thread.c's holes): run
# with rip run --sample (and --mem --fd), it must end well with its samples
# stored.  The walk read that page directly and killed the program with
# SIGSEGV at its first sample (seen in trust-badptr's program, whose main
# kept such a pointer in rbp).  Made with mprotect, the page lowers the top
# of the stack the walk stays under (trust-stackhole), and the probe is not
# reached: the test passed without it.
. tests/data/common.sh
prog=$BUILD/tests/integ/topprog
need_bin "$prog" "$RIP"

for opts in "--sample" "--sample --mem --fd"; do
	# $opts unquoted: several options
	# shellcheck disable=SC2086
	TOPPROG_RING=$TEST_TMP/badfp.ring "$RIP" run -q $opts -o "$TEST_TMP/trace" -- \
		"$prog" badfp 300 >"$TEST_TMP/out" 2>"$TEST_TMP/err"
	rc=$?
	[ "$rc" = 3 ] && skip "no loop written for this architecture"
	[ "$rc" = 0 ] || fail "rip run $opts: exit $rc: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
	grep -q "badfp ok" "$TEST_TMP/out" || fail "rip run $opts: no success line"
	samples_stored "$TEST_TMP/badfp.ring" "rip run $opts"
	rm -rf "$TEST_TMP/badfp.ring" "$TEST_TMP/trace"
done
t_done
