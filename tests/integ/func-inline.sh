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
need_bin "$PWD/$BUILD/tests/integ/funcprog" "$PWD/$BUILD/tests/integ/funcprog-clang" \
	"$PWD/$BUILD/tests/integ/funcprog-nofp" "$RIP"
need_cmd python3
top=$PWD
rep=$PWD/tests/data/fn-report.py
paths=$PWD/tests/data/fn-paths.py
n=1000

# check BUILD: the counts and the parked path of funcprog as BUILD built it, in TEST_TMP/BUILD
check() {
	prog=$1
	mkdir -p "$TEST_TMP/$2" && cd "$TEST_TMP/$2" || die "no $TEST_TMP/$2"

	"$RIP" run --functions -o t -- "$prog" inline $n >run.out 2>run.err || die "rip run: $(cat run.err)"
	grep -q ", 0 lost\$" run.err || fail "rip run lost records: $(cat run.err)"
	"$RIP" report --functions --json t >rep.json 2>rep.err || die "rip report: $(cat rep.err)"
	python3 "$rep" <rep.json >rep.txt || die "not JSON: $(head -c 300 rep.json)"
	cat >want.txt <<-EOW
	inl_leaf $n 0
	inl_mid $n 0
	inl_outer $n 0
	inl_real $n 0
	inline_run 1 0
	main 1 0
	entries $((4 * n + 2))
	exits $((4 * n + 2))
	no_entry 0
	no_exit 0
	running 0
	ids_unknown 0
	id0 0
	EOW
	diff want.txt rep.txt >rep.diff || fail "rip report --functions (want, got): $(cat rep.diff)"
	"$RIP" export --format=folded --value=calls t -o f.txt 2>exp.err || fail "rip export: $(cat exp.err)"
	grep -qx "main;inline_run;inl_outer;inl_mid;inl_leaf;inl_real $n" f.txt ||
		fail "folded calls: $(cat f.txt)"

	# parked through two inlined functions: the path has them, live and after kill -9
	"$RIP" run --no-waits -o tr -- "$prog" inline 10 "$TEST_TMP/$2.ready" >run2.out 2>run2.err &
	run=$!
	T_PIDS="$T_PIDS $run"
	wait_file "$TEST_TMP/$2.ready" 60 || die "funcprog never got ready: $(cat run2.err)"
	pid=$(ps -o pid= --ppid "$run" | tr -d ' ')
	want="main thread running: main>inline_run>inl_park_outer>inl_park_mid>inl_park_leaf>inl_park"
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
