#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a recursion deeper than the 63 frames a shadow stack keeps
# whose levels are functions inlined into one another (C++ destructors and
# copy constructors of a recursive type: yaml-cpp's RegEx tree).  The
# entry of a function inlined into a level past the frames kept, in the
# frame of the deepest kept one (its cfa), took those levels for gone
# (jumped out of) and dropped them: their exits came without their
# entries, and the kept frames' exits were written twice.  funcprog
# deepinl PAD N: deepinl_run > dinl_pad x PAD > dinl_rec > dinl_a >
# dinl_b > dinl_rec ... (dinl_a and dinl_b inlined), 41 levels of
# dinl_rec, N times, with PAD 0, 1 and 2 so that each of the three is the
# 63rd level; rip report --functions counts every call and pairs every
# entry with its exit.  The program built by gcc, by clang, and by gcc
# without frame pointers.

. tests/data/common.sh
. tests/data/fn-lib.sh
fn_need_builds
n=20

# check PROG NAME: the counts of PROG (fn_builds) at each PAD
check() {
	for pad in 0 1 2; do
		fn_record "t$pad" -- "$1" deepinl "$pad" "$n"
		{
			[ "$pad" -ge 1 ] && echo "dinl_pad1 $n 0"
			[ "$pad" -ge 2 ] && echo "dinl_pad2 $n 0"
			cat <<-EOW
			dinl_a $((41 * n)) 0
			dinl_b $((41 * n)) 0
			dinl_rec $((41 * n)) 0
			EOW
			printf 'deepinl_run 1 0\nmain 1 0\n'
		} | LC_ALL=C sort >want.txt
		calls=$((123 * n + pad * n + 2))
		fn_paired "$calls" >>want.txt
		fn_counts "t$pad"
	done
}

fn_builds check
t_done
