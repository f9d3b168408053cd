#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the func category (rip enable PID func / rip disable PID
# func) toggled 20 times while threads recurse deeper than the 63 frames a
# shadow stack keeps: funcprog spindeep (3 threads, each turn spin_dive 60
# levels deep, whose bottom recurses 16 times 40 levels further, a call of
# spin_c beside each level's call of itself, spin_a > spin_b > spin_c at
# the bottom) under rip run --functions, built
# with -finstrument-functions by gcc and by clang (hooks), and with
# patched entries by gcc and by clang (patch: rip enable patches, rip
# disable unpatches).  A level past the frames kept has no frame to say
# whether its entry's record was written: its exit must still be in the
# trace exactly when its entry is, whatever the category at its return.
# rip report --functions then shows no exit without its entry, no call
# without its exit, none still running (the threads are joined before the
# program ends), entries = exits, and the program's results are right.
# The hooks' builds run once more 4140 levels deep, across depth 4159:
# past the levels whose records librip keeps track of one by one (4096
# past the 63 kept), the calls follow the deepest one tracked, and pair
# too.
. tests/data/common.sh
. tests/data/fn-lib.sh
need_cmd python3
rep=$PWD/tests/data/fn-report.py
cd "$TEST_TMP" || die "no TEST_TMP"

for v in gcc-hooks:60 clang-hooks:60 gcc:60 clang:60 gcc-hooks:4140 clang-hooks:4140; do
	depth=${v#*:}
	v=${v%:*}
	prog=$(fn_prog "$v") || exit $?
	v=$v-$depth
	rm -f "ready.$v"
	"$RIP" run --functions -o "t.$v" -- "$prog" spindeep 600 3 "$depth" "$TEST_TMP/ready.$v" \
		>"run.$v.out" 2>"run.$v.err" &
	run=$!
	T_PIDS="$T_PIDS $run"
	wait_file "$TEST_TMP/ready.$v" 60 || die "$v: funcprog never got ready: $(cat "run.$v.err")"
	pid=$(ps -o pid= --ppid "$run" | tr -d ' ')
	[ -n "$pid" ] || die "$v: no program under rip run"
	k=0
	while [ $k -lt 20 ]; do
		"$RIP" enable -q "$pid" func 2>en.err || fail "$v: rip enable $k: $(cat en.err)"
		"$RIP" disable -q "$pid" func 2>dis.err || fail "$v: rip disable $k: $(cat dis.err)"
		k=$((k + 1))
	done
	kill -INT "$pid"
	wait "$run"
	rc=$?
	T_PIDS=""
	[ $rc = 0 ] || fail "$v: rip run (the program checks its results): exit $rc: $(cat "run.$v.err")"
	grep -q ", 0 lost\$" "run.$v.err" || fail "$v: rip run lost records: $(cat "run.$v.err")"
	"$RIP" report --functions --json "t.$v" | python3 "$rep" >"rep.$v.txt" || fail "$v: rip report"
	echo "$v: $(grep -E '^(spin_dive|spin_deep|entries|exits|no_entry|no_exit|running) ' "rep.$v.txt" | tr '\n' ' ')"
	grep -q '^spin_deep [1-9]' "rep.$v.txt" || fail "$v: no spin_deep recorded: $(cat "rep.$v.txt")"
	for t in no_entry no_exit running; do
		grep -q "^$t 0\$" "rep.$v.txt" || fail "$v: $(grep "^$t " "rep.$v.txt"), want 0"
	done
	n=$(sed -n 's/^entries //p' "rep.$v.txt")
	grep -q "^exits $n\$" "rep.$v.txt" || fail "$v: $n entries but $(grep '^exits ' "rep.$v.txt")"
done
t_done
