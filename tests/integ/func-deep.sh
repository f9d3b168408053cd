#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a longjmp (an error caught, as Lua's pcall does) from
# levels deeper than the 63 frames a shadow stack keeps to a frame it
# keeps: the levels past them are gone, and so are the kept frames above
# the one it lands in.  funcprog deep N: deep_rec x 50 > deep_catch
# (setjmp, depth 53) > deep_dive x 40 (to depth 93, longjmp to
# deep_catch), N times; rip report --functions counts every call, no
# exit without its entry and no call without its exit (the levels not
# kept end at one rip:fn_exit of RIP_FN_ID_DEEP, the kept ones jumped over
# at their own exits written at the jump).  funcprog deepslow, where
# deep_catch waits 20 ms after each jump: no call of deep_dive lasts 20 ms
# (a reader that paired the kept frames' exits with deep_dive calls among
# the levels not kept, a recursion, ended the kept ones at deep_catch's
# exit, as bash's `return` from 5 nested shell functions showed).  Then
# the program parks in deep_catch > deep_park after the jump, and rip
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
	# 40 deep_dive a jump: the 30 past depth 63 end at the jump's RIP_FN_ID_DEEP record
	cat >want.txt <<-EOW
	deep_catch $n 0
	deep_dive $((40 * n)) 0
	deep_rec $((50 * n)) 0
	deep_run 1 0
	main 1 0
	EOW
	fn_paired "$((91 * n + 2))" >>want.txt
	fn_counts t

	fn_record s -- "$prog" deepslow 5
	"$RIP" report --functions --json s >s.json 2>s.rerr || die "rip report: $(cat s.rerr)"
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = [f for f in d["functions"] if f["function"] == "deep_dive"]
sys.exit(0 if len(f) == 1 and f[0]["calls"] == 200 and f[0]["max_ns"] < 10000000 and d["no_exit"] == 0 else 1)
' s.json || fail "$2: deepslow: a call of deep_dive ended after the jump: $(python3 "$FN_REPORT" <s.json | head -8; grep -o '"function": "deep_dive"[^}]*' s.json)"

	fn_parked "$want" "$TEST_TMP/$2.ready" "$prog" deep 3 "$TEST_TMP/$2.ready"
}

fn_builds check
t_done
