#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the watcher's unwinder (rip ps of a process with blocked
# threads) reads the module file it checked, not whatever has its name a
# moment later.  A copy of watchprog runs from a directory of the test
# with threads blocked in raw syscalls, is swept and killed; rip ps reads
# its ring file with tests/data/swap-open.c renaming a FIFO over the copy's
# path at its first, second, ... open by any code in rip (as another user
# who can write that directory could between a check and an open).  The
# unwinder checked the file, then had libdw open the name again, which
# blocked on the FIFO for ever: rip ps must finish within 20 s each time,
# and never open the FIFO (a writer waiting on it would go on).
. tests/data/common.sh
. tests/data/watch.sh
need_cmd python3
[ "${RIP_TEST_NOSYM:-0}" = 1 ] && skip "RIP_TEST_NOSYM=1: rip is built without a symbolizer"
CC=${CC:-cc}

mkdir -p "$TEST_TMP/bin" && cp "$W_PROG" "$TEST_TMP/bin/watchprog" || die "cannot copy $W_PROG"
$CC -O1 -fPIC -shared -o "$TEST_TMP/swap.so" tests/data/swap-open.c -ldl ||
	die "cannot build the swapping preload library"
W_PROG=$TEST_TMP/bin/watchprog
LD_LIBRARY_PATH=$PWD/$BUILD
export LD_LIBRARY_PATH
w_start "$TEST_TMP/a" futex=2
ring=$(w_ring "$TEST_TMP/a")
[ -n "$ring" ] || die "no ring file in $TEST_TMP/a"
wait_until 20 w_ps_has "$ring" "2 threads in syscall futex" "futex_waiter" ||
	die "rip ps did not show the blocked threads: $(cat "$TEST_TMP/ps.out" "$TEST_TMP/ps.err")"
t_kill "$W_PID"
w_ps_has "$ring" "2 threads in syscall futex" "futex_waiter" ||
	die "rip ps after kill -9: $(cat "$TEST_TMP/ps.out" "$TEST_TMP/ps.err")"
cp "$TEST_TMP/bin/watchprog" "$TEST_TMP/watchprog.keep" || die "cp"

for at in 1 2 3 4; do
	rm -f "$TEST_TMP/bin/watchprog"
	cp "$TEST_TMP/watchprog.keep" "$TEST_TMP/bin/watchprog" || die "cp"
	rm -f "$TEST_TMP/fifo" "$TEST_TMP/fifo.w" "$TEST_TMP/opened"
	mkfifo "$TEST_TMP/fifo" && ln "$TEST_TMP/fifo" "$TEST_TMP/fifo.w" || die "mkfifo"
	# a writer, by a name the swap leaves: its open returns only when a reader opens the FIFO
	t_bg sh -c 'exec 3>"$1" && : >"$2"' sh "$TEST_TMP/fifo.w" "$TEST_TMP/opened"
	writer=$T_LAST
	SWAP_PATH=$TEST_TMP/bin/watchprog SWAP_FROM=$TEST_TMP/fifo SWAP_AT=$at \
		LD_PRELOAD=$TEST_TMP/swap.so timeout -s KILL 20 "$RIP" ps "$ring" \
		>"$TEST_TMP/swapped" 2>&1
	st=$?
	[ "$st" = 137 ] && fail "rip ps hung on a FIFO swapped in at open $at"
	[ "$st" = 0 ] || fail "rip ps (swap at open $at): exit $st: $(head -n 3 "$TEST_TMP/swapped")"
	sleep 0.5
	[ -e "$TEST_TMP/opened" ] && fail "rip ps opened the FIFO swapped in at open $at"
	t_kill "$writer"
done
t_done
