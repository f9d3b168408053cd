#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the mremap hook reads /proc/self/maps without a descriptor
# in the program's table.  trust_mapsfd moves an anonymous mapping 1,000
# times with mremap while a second thread opens /dev/null and checks that
# it gets the lowest free number every time.  Untraced and under rip run
# --mem (the watcher answers the hook's question in its own table) every
# open must, and the moves are still recorded: the last mapping, left
# mapped, is a leak of kind mremap of its last size.
. tests/data/common.sh
prog=$BUILD/tests/integ/trust_mapsfd
need_bin "$prog" "$RIP"

"$prog" 1000 keep >"$TEST_TMP/plain.out" 2>&1 ||
	die "trust_mapsfd fails untraced: $(cat "$TEST_TMP/plain.out")"

# three runs: the first moves come while the watcher starts, as the opening thread does
for i in 1 2 3; do
	rm -rf "$TEST_TMP/t"
	"$RIP" run --mem -o "$TEST_TMP/t" -- "$prog" 1000 keep >"$TEST_TMP/run.out" 2>"$TEST_TMP/run.err"
	rc=$?
	grep -q '^rounds 1000' "$TEST_TMP/run.out" || die "no result: $(cat "$TEST_TMP/run.err")"
	[ "$rc" = 0 ] || fail "run $i: a descriptor of ours took the program's number: $(cat "$TEST_TMP/run.out")"
	grep -q ', 0 lost' "$TEST_TMP/run.err" || fail "run $i: events lost: $(cat "$TEST_TMP/run.err")"
done

# round 999 made 8 pages (1 + 999 % 8)
pg=$(getconf PAGESIZE)
"$RIP" leaks "$TEST_TMP/t" >"$TEST_TMP/leaks.out" 2>&1 || fail "rip leaks: $(cat "$TEST_TMP/leaks.out")"
grep -q "($((pg * 8)) bytes) in 1 block never freed (mremap)" "$TEST_TMP/leaks.out" ||
	fail "the last mapping is not a leak of kind mremap: $(cat "$TEST_TMP/leaks.out")"
t_done
