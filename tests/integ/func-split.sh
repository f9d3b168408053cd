#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a function gcc splits (partial inlining), as Lua's
# luaV_concat: funcprog split N.  split_work's first test goes into its
# caller with the entry's hook; the rest, split_work.part.0, jumps to the
# exit's hook at its end, from the cfa the entry's hook had, with the frame
# as far below it as at the entry.  The exit must pop the frame its entry
# pushed, recorded or not: rip report --functions counts every call with
# its exit (N of split_work, 3 N / 2 of split_leaf), and the shadow stack
# keeps no frame behind (no exit without its entry when the program ends).
# The program built by gcc (which splits it), by clang (which does not)
# and by gcc without frame pointers.
. tests/data/common.sh
. tests/data/fn-lib.sh
fn_need_builds
n=4000

# check PROG NAME: the counts of PROG split N (fn_builds)
check() {
	fn_record t -- "$1" split "$n"
	{
		printf 'main 1 0\nsplit_leaf %s 0\nsplit_run 1 0\nsplit_work %s 0\n' $((3 * n / 2)) "$n"
		fn_paired $((n + 3 * n / 2 + 2))
	} >want.txt
	fn_counts t
}

fn_builds check
t_done
