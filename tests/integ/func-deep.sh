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
need_bin "$PWD/$BUILD/tests/integ/funcprog" "$PWD/$BUILD/tests/integ/funcprog-clang" \
	"$PWD/$BUILD/tests/integ/funcprog-nofp" "$RIP"
need_cmd python3
top=$PWD
rep=$PWD/tests/data/fn-report.py
paths=$PWD/tests/data/fn-paths.py
n=200

# the path funcprog deep parks in: main > deep_run > deep_rec x 50 > deep_catch > deep_park
want="main thread running: main>deep_run"
i=0
while [ $i -lt 50 ]; do
	want="$want>deep_rec"
	i=$((i + 1))
done
want="$want>deep_catch>deep_park"

# check BUILD: the counts and the parked path of funcprog as BUILD built it, in TEST_TMP/BUILD
check() {
	prog=$1
	mkdir -p "$TEST_TMP/$2" && cd "$TEST_TMP/$2" || die "no $TEST_TMP/$2"

	"$RIP" run --functions -o t -- "$prog" deep $n >run.out 2>run.err || die "rip run: $(cat run.err)"
	grep -q ", 0 lost\$" run.err || fail "rip run lost records: $(cat run.err)"
	"$RIP" report --functions --json t >rep.json 2>rep.err || die "rip report: $(cat rep.err)"
	python3 "$rep" <rep.json >rep.txt || die "not JSON: $(head -c 300 rep.json)"
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
	diff want.txt rep.txt >rep.diff || fail "rip report --functions (want, got): $(cat rep.diff)"

	"$RIP" run --no-waits -o tr -- "$prog" deep 3 "$TEST_TMP/$2.ready" >run2.out 2>run2.err &
	run=$!
	T_PIDS="$T_PIDS $run"
	wait_file "$TEST_TMP/$2.ready" 60 || die "funcprog never got ready: $(cat run2.err)"
	pid=$(ps -o pid= --ppid "$run" | tr -d ' ')
	"$RIP" ps --stacks --threads --json "$pid" >live.json 2>live.err || fail "rip ps live: $(cat live.err)"
	python3 "$paths" <live.json >live.txt || fail "live: not JSON: $(head -c 300 live.json)"
	grep -qx "$want" live.txt || fail "live path: $(cat live.txt)"
	kill -9 "$pid"
	wait "$run"
	"$RIP" ps --stacks --threads --json tr >dead.json 2>dead.err || fail "rip ps tr: $(cat dead.err)"
	python3 "$paths" <dead.json >dead.txt || fail "dead: not JSON: $(head -c 300 dead.json)"
	grep -qx "$want" dead.txt || fail "after kill -9: $(cat dead.txt)"
}

for b in funcprog:gcc funcprog-clang:clang funcprog-nofp:nofp; do
	check "$top/$BUILD/tests/integ/${b%%:*}" "${b#*:}"
done
t_done
