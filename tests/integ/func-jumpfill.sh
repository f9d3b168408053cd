#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the return stack of patched calls after a longjmp out of
# many levels (Lua's error() out of a deep pcall, then more calls).
# funcprog jumpfill: jf_catch (setjmp) > jf_dive x 101, the last longjmps
# back; then jf_chain x 41 > jf_leaf, which returns, and the innermost
# jf_chain parks.  Before, the entries of the 101 levels jumped over stayed
# on the slot's return stack (their slots still held the trampoline),
# under the entries of the calls after them, which never took them off: the
# stack filled up, later calls had no entry, their returns went unseen, and
# rip ps --stacks showed jf_leaf on the path after it had returned (as
# lua's prepbuffsize under read_line, blocked in read).  Patched before
# main (rip run --functions='jf_*'), built by gcc and by clang; the path
# live and after kill -9, and jf_leaf's exit in the trace.  The 40 levels
# of jf_dive past the 63 frames a shadow stack keeps have their exits too,
# written at the jump (before, they were calls without an exit).
. tests/data/common.sh
. tests/data/fn-lib.sh
need_bin "$FN_TOP/$BUILD/tests/integ/funcprog-patch" "$FN_TOP/$BUILD/tests/integ/funcprog-patch-clang" \
	"$RIP"
need_cmd python3

want="main thread blocked: jf_run"
i=0
while [ $i -lt 41 ]; do
	want="$want>jf_chain"
	i=$((i + 1))
done

# check PROG NAME: PROG jumpfill under rip run, patched before main
check() {
	"$RIP" run --functions='jf_*' -o t -- "$1" jumpfill "$TEST_TMP/$2.ready" >run.out 2>run.err &
	run=$!
	T_PIDS="$T_PIDS $run"
	wait_file "$TEST_TMP/$2.ready" 60 || die "$2: funcprog jumpfill never got ready: $(cat run.err)"
	pid=$(ps -o pid= --ppid "$run" | tr -d ' ')
	[ -n "$pid" ] || die "$2: no program under rip run"
	fn_paths_has "$pid" "$want"
	kill -9 "$pid"
	wait "$run"
	T_PIDS=""
	fn_paths_has t "$want"
	"$RIP" report --functions --json t >t.json 2>t.rerr || die "$2: rip report: $(cat t.rerr)"
	python3 "$FN_REPORT" <t.json >t.txt || die "$2: not JSON: $(head -c 300 t.json)"
	for l in "jf_leaf 1 0" "jf_chain 41 41" "jf_catch 1 0" "jf_run 1 1" "jf_dive 101 0" \
		"no_exit 0"; do
		grep -qx "$l" t.txt || fail "$2: want $l: $(cat t.txt)"
	done
}

for b in funcprog-patch:patch funcprog-patch-clang:patch-clang; do
	mkdir -p "$TEST_TMP/${b#*:}" && cd "$TEST_TMP/${b#*:}" || die "no $TEST_TMP/${b#*:}"
	check "$FN_TOP/$BUILD/tests/integ/${b%%:*}" "${b#*:}"
done
t_done
