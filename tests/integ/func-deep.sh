#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a longjmp (an error caught, as Lua's pcall does) from
# levels deeper than the 63 frames a shadow stack keeps to a frame it
# keeps: the levels past them are gone, and so are the kept frames above
# the one it lands in.  funcprog deep N: deep_rec x 50 > deep_catch
# (setjmp, depth 53) > deep_dive x 40 (to depth 93, longjmp to
# deep_catch), N times; rip report --functions counts every call and no
# exit without its entry (the levels not kept have no exits: no_exit);
# then the program parks in deep_catch > deep_park after the jump, and rip
# ps --stacks shows that path, not the jumped-over deep_dive frames, live
# and after kill -9.  The program built by gcc, by clang, and by gcc
# without frame pointers.
. tests/data/common.sh
. tests/data/fn-lib.sh
fn_need_builds
n=200

# the path funcprog deep parks in: main > deep_run > deep_rec x 50 > deep_catch > deep_park
want="main thread running: main>deep_run"
i=0
while [ $i -lt 50 ]; do
	want="$want>deep_rec"
	i=$((i + 1))
done
want="$want>deep_catch>deep_park"

# check PROG NAME: the counts and the parked path of PROG (fn_builds)
check() {
	prog=$1
	fn_record t -- "$prog" deep "$n"
	# 40 deep_dive a jump: the 30 past depth 63 end without an exit record
	cat >want.txt <<-EOW
	deep_catch $n 0
	deep_dive $((40 * n)) 0
	deep_rec $((50 * n)) 0
	deep_run 1 0
	main 1 0
	entries $((91 * n + 2))
	exits $((61 * n + 2))
	no_entry 0
	no_exit $((30 * n))
	running 0
	ids_unknown 0
	id0 0
	EOW
	fn_counts t

	fn_parked "$want" "$TEST_TMP/$2.ready" "$prog" deep 3 "$TEST_TMP/$2.ready"
}

fn_builds check
t_done
