#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: functions the compiler inlined, whose hooks gcc and clang
# call from the frame of the function they went into (the same frame, the
# same return address): each is a call of its own, nested in the one it
# went into, not a new call that drops it.  funcprog inline N: inl_outer >
# inl_mid > inl_leaf (both inlined) > inl_real, N times; rip report
# --functions counts N calls of each and no exit without its entry; then
# rip ps --stacks shows main parked through two inlined functions, live and
# after kill -9.  The program built by gcc, by clang, and by gcc without
# frame pointers.
. tests/data/common.sh
. tests/data/fn-lib.sh
fn_need_builds
n=1000

# check PROG NAME: the counts and the parked path of PROG (fn_builds)
check() {
	prog=$1
	fn_record t -- "$prog" inline "$n"
	cat >want.txt <<-EOW
	inl_leaf $n 0
	inl_mid $n 0
	inl_outer $n 0
	inl_real $n 0
	inline_run 1 0
	main 1 0
	EOW
	fn_paired "$((4 * n + 2))" >>want.txt
	fn_counts t
	"$RIP" export --format=folded --value=calls t -o f.txt 2>exp.err || fail "rip export: $(cat exp.err)"
	grep -qx "main;inline_run;inl_outer;inl_mid;inl_leaf;inl_real $n" f.txt ||
		fail "folded calls: $(cat f.txt)"

	# parked through two inlined functions: the path has them, live and after kill -9
	want="main thread running: main>inline_run>inl_park_outer>inl_park_mid>inl_park_leaf>inl_park"
	fn_parked "$want" "$TEST_TMP/$2.ready" "$prog" inline 10 "$TEST_TMP/$2.ready"
}

fn_builds check
t_done
