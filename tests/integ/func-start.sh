#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run --functions=GLOB and RIP_FUNCTIONS=GLOB patch the
# functions built with -fpatchable-function-entry=5 that the globs name
# before main, with no rip enable, in a program that never starts a thread
# (funcprog-patch count N, by gcc and by clang: count_outer N calls,
# count_inner 2N, count_leaf 3N, count_rec 10N, count_run once).  The trace holds the
# exact calls of the functions picked, and of no other; "!GLOB" leaves
# names out; without a glob nothing is patched; a glob that picks nothing
# says so and the program runs on; --functions=GLOB with --no-waits (no
# librip-preload.so to patch) is refused.
. tests/data/common.sh
need_cmd python3
rep=$PWD/tests/data/fn-report.py
cd "$TEST_TMP" || die "no TEST_TMP"

# report T: "FUNCTION CALLS" of trace T, one a line, sorted, then the totals' no_exit
report() {
	"$RIP" report --functions --json "$1" | python3 "$rep" | awk '
		NF == 3 { print $1, $2 } $1 == "no_exit" || $1 == "no_entry" { print }'
}

n=300
for v in gcc clang; do
	prog=$OLDPWD/$BUILD/tests/integ/funcprog-patch
	[ $v = clang ] && prog=$prog-clang
	need_bin "$prog" "$RIP"

	"$RIP" run --functions='count_inner' --functions='count_l*' -o a.$v -- "$prog" count $n \
		>a.$v.out 2>a.$v.err || fail "$v: rip run --functions=GLOB: $(cat a.$v.err)"
	printf 'count_inner %d\ncount_leaf %d\nno_entry 0\nno_exit 0\n' $((2 * n)) $((3 * n)) >want
	report a.$v >got.a.$v || fail "$v: rip report"
	diff want got.a.$v >diff.a.$v || fail "$v: --functions=count_inner --functions='count_l*' (want, got):
$(cat diff.a.$v)"

	RIP_FUNCTIONS='count_*,!count_r*' "$RIP" run --functions -o b.$v -- "$prog" count $n \
		>b.$v.out 2>b.$v.err || fail "$v: RIP_FUNCTIONS=GLOB: $(cat b.$v.err)"
	printf 'count_inner %d\ncount_leaf %d\ncount_outer %d\nno_entry 0\nno_exit 0\n' \
		$((2 * n)) $((3 * n)) $n >want
	report b.$v >got.b.$v || fail "$v: rip report"
	diff want got.b.$v >diff.b.$v || fail "$v: RIP_FUNCTIONS='count_*,!count_r*' (want, got):
$(cat diff.b.$v)"

	# no glob: nothing patched, nothing recorded
	"$RIP" run --functions -o c.$v -- "$prog" count $n >c.$v.out 2>c.$v.err ||
		fail "$v: rip run --functions: $(cat c.$v.err)"
	printf 'no_entry 0\nno_exit 0\n' >want
	report c.$v >got.c.$v || fail "$v: rip report"
	diff want got.c.$v >diff.c.$v || fail "$v: without a glob (want, got):
$(cat diff.c.$v)"

	# a glob that picks nothing: said, and the program runs on
	"$RIP" run --functions='nothing_*' -o d.$v -- "$prog" count $n >d.$v.out 2>d.$v.err ||
		fail "$v: rip run --functions=nothing_*: $(cat d.$v.err)"
	grep -q "RIP_FUNCTIONS=nothing_\*: no function patched" d.$v.err ||
		fail "$v: a glob that picks nothing was not said: $(cat d.$v.err)"
	cmp a.$v.out d.$v.out || fail "$v: the program's output differs"
done

expect_status 2 "--functions=GLOB --no-waits" "$RIP" run --functions='count_*' --no-waits -o e -- \
	"$prog" count 1
grep -q "librip-preload.so patches the functions" err || fail "--no-waits: $(cat err)"
t_done
