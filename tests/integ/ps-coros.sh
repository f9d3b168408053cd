#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip ps on 200,000 coroutines, in little memory.  A program
# parks 200,000 coroutines in four functions (50,000 each) and 4 threads in
# read(2), in a ring of RIP_SLOTS=210000 (100 MB of slots used).  rip ps
# PID, then rip ps FILE after SIGKILL, must show the four groups of 50,000
# and the threads, with a peak RSS (ru_maxrss, through integ/rusage) under
# 48 MiB: the reader keeps groups, not a copy of every slot (270 MB), and
# gives back the pages of the file it has read.  rip ps --threads streams
# every slot in the same budget; --json (every member, packed) runs through
# the AddressSanitizer build of rip.
. tests/data/common.sh
prog=$BUILD/tests/integ/coros_prog
ru=$BUILD/tests/integ/rusage
need_bin "$prog" "$ru" "$RIP"
n=200000
limit=49152 # KiB

t_bg env RIP_RING="$TEST_TMP/coros.ring" RIP_SLOTS=210000 "$prog" "$TEST_TMP/ready" "$n" 4
pid=$T_LAST
wait_file "$TEST_TMP/ready" 60 || die "the helper did not park its $n coroutines in 60s"

# check WHAT: the grouped output in $TEST_TMP/out, its cost in $TEST_TMP/ru
check() {
	read -r _ms kb <"$TEST_TMP/ru"
	[ "$kb" -le "$limit" ] || fail "$1: peak RSS $kb KiB, over the $limit KiB budget"
	grep -q "^5 threads, $n coroutines ($n waiting), 0 exited" "$TEST_TMP/out" ||
		fail "$1: header: $(sed -n 2p "$TEST_TMP/out")"
	# four groups of 50,000 coroutines, one per function (by name when symbols are there)
	groups=$(awk -v nosym="${RIP_TEST_NOSYM:-0}" '
		$1 == 50000 && / coroutines some of co-[0-3]\.\.19999[6-9];/ &&
			(nosym == 1 || $2 ~ /^coro_step_[0-3]$/) { seen[$2] = 1 }
		END { print length(seen) }' "$TEST_TMP/out")
	[ "$groups" = 4 ] || fail "$1: $groups groups of 50000 coroutines, want 4"
	awk '$1 == 4 && / threads coros_prog \(x4\)$/ { ok = 1 } END { exit !ok }' "$TEST_TMP/out" ||
		fail "$1: no group of the 4 parked threads"
	[ "$T_FAILED" = 0 ] || sed 's/^/    out: /' "$TEST_TMP/out" | head -n 12 >&2
}

"$ru" "$TEST_TMP/ru" "$RIP" ps "$pid" >"$TEST_TMP/out" 2>"$TEST_TMP/err" ||
	fail "rip ps $pid: exit $?: $(head -n 3 "$TEST_TMP/err")"
check "rip ps PID"

t_kill "$pid"
"$ru" "$TEST_TMP/ru" "$RIP" ps "$TEST_TMP/coros.ring" >"$TEST_TMP/out" 2>"$TEST_TMP/err" ||
	fail "rip ps FILE: exit $?: $(head -n 3 "$TEST_TMP/err")"
check "rip ps FILE (after SIGKILL)"

# --threads: one entry per slot, streamed
c=$("$ru" "$TEST_TMP/ru" "$RIP" ps --threads "$TEST_TMP/coros.ring" 2>"$TEST_TMP/err" |
	grep -c '^coroutine co-')
[ "$c" = "$n" ] || fail "rip ps --threads FILE: $c coroutines listed, want $n: $(head -n 3 "$TEST_TMP/err")"
read -r _ms kb <"$TEST_TMP/ru"
[ "$kb" -le "$limit" ] || fail "rip ps --threads FILE: peak RSS $kb KiB, over the $limit KiB budget"

# the streamed views under AddressSanitizer: --json keeps each member packed
asan_run ps --json --still=1ms "$TEST_TMP/coros.ring"
[ "$asan_rc" = 0 ] || fail "rip (asan) ps --json: exit $asan_rc"
c=$(grep -o '"name":"co-[0-9]*","still":true' "$TEST_TMP/asan.out" | wc -l)
[ "$c" = "$n" ] || fail "rip (asan) ps --json --still: $c coroutine members, want $n, all still"
t_done
