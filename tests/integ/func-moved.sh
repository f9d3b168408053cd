#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the entry hook takes the distance from its frame to the
# function's return address from what the same hook call had before,
# checked only by the word there being the return address.  A function
# inlined after an alloca has its hooks run lower by the alloca's size, so
# that distance changes from one pass to the next, and a copy of the
# return address left at the old distance would pass the check (a cfa too
# high: the entry drops the frame it went into, whose exit then has no
# entry).  Such a call site is marked and its distance worked out at each
# pass.  funcprog moved N: moved_host allocas 2 or 6 words (alternately)
# then calls moved_inl (inlined) > moved_leaf, N times, from an untraced
# function whose alloca'd words, just above moved_host's return address,
# hold copies of it (where the 6 words' pass found it, seen from a 2
# words' pass).  funcprog movedkeep N: the same with the copies left until
# moved_host has returned, so that its exit hook, whose frame the alloca
# moved, finds copies above the real return address (it took the highest
# within 24 words, in the caller's frame, and missed its frame).  rip
# report --functions counts N calls of each and no exit without its entry.  The program built by gcc and by clang (both with
# frame pointers) and by gcc without them.
. tests/data/common.sh
. tests/data/fn-lib.sh
fn_need_builds
n=1000

# check PROG NAME: the counts of moved (fn_builds)
check() {
	fn_record t -- "$1" moved "$n"
	cat >want.txt <<-EOW
	main 1 0
	moved_host $n 0
	moved_inl $n 0
	moved_leaf $n 0
	moved_run 1 0
	EOW
	fn_paired "$((3 * n + 2))" >>want.txt
	fn_counts t
	fn_record k -- "$1" movedkeep "$n"
	fn_counts k
}
fn_builds check
t_done
