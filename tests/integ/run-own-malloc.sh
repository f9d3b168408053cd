#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run --mem of a program that defines the C allocator
# itself (ownmallocprog: malloc, calloc, realloc and free of its own, as a
# program linked with a static jemalloc or tcmalloc) warns at start that
# its allocations do not reach librip-preload.so, naming the program and
# the function, instead of only a report of no allocation later; the
# program runs as it does untraced.  No warning without --mem, nor for a
# program that leaves the allocator to libc.
. tests/data/common.sh
prog=$BUILD/tests/integ/ownmallocprog
plain=$BUILD/tests/integ/shmexistprog
need_bin "$prog" "$plain" "$RIP"

expect_status 0 "rip run --mem" "$RIP" run --mem -q -o "$TEST_TMP/t1" -- "$prog"
grep -qx "done" "$TEST_TMP/out" || fail "the program's output: $(cat "$TEST_TMP/out")"
grep -q "warning: .*ownmallocprog defines \(malloc\|calloc\|realloc\|free\) itself" \
	"$TEST_TMP/err" || fail "no warning of the program's own allocator: $(cat "$TEST_TMP/err")"
grep -q -- "--mem records" "$TEST_TMP/err" || fail "the warning does not say what --mem misses"

expect_status 0 "rip run --fd" "$RIP" run --fd -q -o "$TEST_TMP/t2" -- "$prog"
! grep -q warning "$TEST_TMP/err" || fail "a warning without --mem: $(cat "$TEST_TMP/err")"

# a program of libc's allocator: no warning (its usage message, exit 1)
expect_status 1 "rip run --mem of a plain program" "$RIP" run --mem -q -o "$TEST_TMP/t3" -- "$plain"
! grep -q "defines .* itself" "$TEST_TMP/err" || fail "a warning for libc's allocator"
t_done
