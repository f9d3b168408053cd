#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the symbolizer reads the module file it checked, not
# whatever has its name a moment later.  A copy of build/examples/simple
# runs from a directory of the test and is killed; rip ps reads its ring
# file with a small preload library (tests/data/swap-open.c) that, at the
# second open of the copy's path by any code in rip, first renames a FIFO
# over it (what another user who can write that directory could do
# between a check and an open).  A symbolizer that checks one descriptor (regular file, ELF
# magic) and lets libdw open the name again would block on the FIFO for
# ever: rip ps must finish, within 20 s, and name the program's functions.
. tests/data/common.sh
prog=$BUILD/examples/simple
need_bin "$prog" "$RIP"
[ "${RIP_TEST_NOSYM:-0}" = 1 ] && skip "RIP_TEST_NOSYM=1: rip is built without a symbolizer"
CC=${CC:-cc}

mkdir -p "$TEST_TMP/bin" && cp "$prog" "$TEST_TMP/bin/simple" || die "cannot copy $prog"
$CC -O1 -fPIC -shared -o "$TEST_TMP/swap.so" tests/data/swap-open.c -ldl ||
	die "cannot build the swapping preload library"

t_bg env LD_LIBRARY_PATH="$PWD/$BUILD" "$TEST_TMP/bin/simple" --wait >"$TEST_TMP/simple.out" 2>&1
pid=$T_LAST
wait_until 20 grep -q '^ring ' "$TEST_TMP/simple.out" ||
	die "simple made no ring file: $(cat "$TEST_TMP/simple.out")"
ring=$(sed -n 's/^ring //p' "$TEST_TMP/simple.out")
t_kill "$pid"

# without the swap: the functions are named (else the check below would mean nothing)
"$RIP" ps "$ring" >"$TEST_TMP/plain" 2>&1 || die "rip ps $ring: $(cat "$TEST_TMP/plain")"
grep -q 'step' "$TEST_TMP/plain" || die "rip ps names no function of simple: $(cat "$TEST_TMP/plain")"

mkfifo "$TEST_TMP/fifo" || die "mkfifo"
SWAP_PATH=$TEST_TMP/bin/simple SWAP_FROM=$TEST_TMP/fifo SWAP_AT=2 LD_PRELOAD=$TEST_TMP/swap.so \
	timeout -s KILL 20 "$RIP" ps "$ring" >"$TEST_TMP/swapped" 2>&1
st=$?
[ "$st" = 137 ] && fail "rip ps hung on a FIFO swapped in for $TEST_TMP/bin/simple"
[ "$st" = 0 ] || fail "rip ps: exit $st: $(cat "$TEST_TMP/swapped")"
[ "$st" = 0 ] && ! grep -q 'step' "$TEST_TMP/swapped" &&
	fail "rip ps names no function of simple: $(cat "$TEST_TMP/swapped")"
t_done
