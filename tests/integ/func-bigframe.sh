#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a function whose frame is bigger than the hooks' first look
# (24 words), whose locals, not yet set at its entry, hold copies of its
# return address below the real one, and a function inlined into it.
# The hooks take the function's frame pointer for where its frame is when
# it has one, else the highest copy below the frame below's cfa, not the
# first copy they meet; a cfa too low made the inlined function's entry,
# which found the real one, drop the frame it went into (cxxopts built by
# clang++ -O2 -fno-omit-frame-pointer: 21 exits without their entry;
# funcprog-nofp big 1000: 999).  funcprog big N: big_host (48 words of
# locals, which it zeroes) > big_inl (inlined) > big_leaf, N times after an
# untraced function filled the stack with big_host's return address;
# funcprog bigrec N: the same through a recursion from one call site,
# big_rec > big_rec ... 5 levels, where the frame below has the same
# return address just under its cfa.  rip report --functions counts N
# calls (5 N) of each and no exit without its entry.  The program built by
# gcc and by clang (both with frame pointers) and by gcc without them.
. tests/data/common.sh
. tests/data/fn-lib.sh
fn_need_builds
n=1000

# check PROG NAME: the counts of big and bigrec (fn_builds)
check() {
	fn_record t -- "$1" big "$n"
	cat >want.txt <<-EOW
	big_host $n 0
	big_inl $n 0
	big_leaf $n 0
	big_run 1 0
	main 1 0
	EOW
	fn_paired "$((3 * n + 2))" >>want.txt
	fn_counts t
	fn_record r -- "$1" bigrec "$n"
	cat >want.txt <<-EOW
	big_inl $((5 * n)) 0
	big_leaf $((5 * n)) 0
	big_rec $((5 * n)) 0
	main 1 0
	rec_run 1 0
	EOW
	fn_paired "$((15 * n + 2))" >>want.txt
	fn_counts r
}
fn_builds check
t_done
