#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: our threads never change what the kernel allows the
# program.  trust_ns makes namespace calls that need a single-threaded
# process, or filesystem state no other thread shares (setns of every
# type in a fork child of a program that once had a thread, unshare of
# CLONE_NEWNS | CLONE_FS, unshare(CLONE_NEWUSER) with the system call
# instruction in a single-threaded child, and through syscall(2) in a
# child and in the parent after their threads were joined): each must
# return what it returns untraced, under rip run --follow-fork, plain rip run, and with
# RIP_RING=1 and the preload library.
. tests/data/common.sh
prog=$BUILD/tests/integ/trust_ns
need_bin "$prog" "$RIP"

"$prog" >"$TEST_TMP/plain" 2>&1 || die "trust_ns fails untraced: $(cat "$TEST_TMP/plain")"
[ "$(wc -l <"$TEST_TMP/plain")" = 10 ] || die "trust_ns: 10 lines wanted: $(cat "$TEST_TMP/plain")"

check() {
	same_as_plain "$1" "the kernel answered otherwise than untraced"
}
"$RIP" run --follow-fork -o "$TEST_TMP/t1" -- "$prog" >"$TEST_TMP/follow" 2>"$TEST_TMP/err" ||
	fail "rip run --follow-fork: $(cat "$TEST_TMP/err")"
check follow
"$RIP" run --mem -o "$TEST_TMP/t2" -- "$prog" >"$TEST_TMP/run" 2>"$TEST_TMP/err" ||
	fail "rip run --mem: $(cat "$TEST_TMP/err")"
check run
preloaded preload "$prog"
check preload
t_done
