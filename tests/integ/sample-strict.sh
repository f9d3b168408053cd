#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a thread in seccomp strict mode (only read, write, _exit
# and sigreturn allowed) under rip run --sample: topprog strict enters it
# through glibc's prctl, syscall(SYS_prctl) and syscall(SYS_seccomp), burns
# 300 ms of CPU there, writes and exits.  The sampler's handler made system
# calls at its first sample, and the kernel killed the program; now the
# thread's timer goes before the call.  Also under --sample --mem --fd.
# Where rip run's clock is the TSC, which strict mode turns off (rdtsc
# faults), the write after it killed the program with SIGSEGV (the wait
# record's time): the thread now records nothing once in strict mode.
. tests/data/common.sh
prog=$BUILD/tests/integ/topprog
need_bin "$prog" "$RIP"

for how in prctl sys_prctl sys_seccomp; do
	"$prog" strict 300 $how >"$TEST_TMP/plain" 2>"$TEST_TMP/err"
	rc=$?
	if [ $rc = 3 ]; then
		skip_part "$how: the kernel refuses strict mode: $(cat "$TEST_TMP/err")"
		continue
	fi
	[ $rc = 0 ] || die "untraced, $how: exit $rc: $(cat "$TEST_TMP/plain" "$TEST_TMP/err")"
	n=0
	for mode in "--sample" "--sample --mem --fd"; do
		n=$((n + 1))
		# shellcheck disable=SC2086 # the mode's words
		"$RIP" run -q $mode -o "$TEST_TMP/t-$how-$n" -- "$prog" strict 300 $how \
			>"$TEST_TMP/$how-$n" 2>"$TEST_TMP/err-$how-$n"
		rc=$?
		[ $rc = 0 ] || fail "$how under rip run $mode: exit $rc: $(cat "$TEST_TMP/err-$how-$n")"
		same_as_plain "$how-$n" "$how under rip run $mode: not what it wrote untraced"
	done
done
t_done
