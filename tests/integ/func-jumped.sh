#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a longjmp with no traced call after it.  funcprog jumped:
# three threads jump out of jumped_base > jumped_01 > ... > jumped_10 back
# to jumped_base, by longjmp, siglongjmp and __longjmp_chk (what
# _FORTIFY_SOURCE builds call), then park with no traced call after the
# jump.  librip-preload.so's hooks of the jumps drop the frames jumped over
# before the jump (else they stayed on the shadow stack until a next
# traced entry, which never comes): rip ps --stacks shows each thread in
# jumped_thread > jumped_base, live and after kill -9, and the trace has
# the exit of every call jumped over.  Built with -finstrument-functions
# by gcc, clang and gcc without frame pointers, and with patchable entries
# by gcc and clang (patched before main: rip run --functions='jumped_*').
. tests/data/common.sh
. tests/data/fn-lib.sh
fn_need_builds
need_bin "$FN_TOP/$BUILD/tests/integ/funcprog-patch" "$FN_TOP/$BUILD/tests/integ/funcprog-patch-clang"

# check PROG NAME: PROG jumped under rip run (with librip-preload.so)
check() {
	opt=--functions
	case $2 in patch*) opt='--functions=jumped_*' ;; esac
	"$RIP" run "$opt" -o t -- "$1" jumped "$TEST_TMP/$2.ready" >run.out 2>run.err &
	run=$!
	T_PIDS="$T_PIDS $run"
	wait_file "$TEST_TMP/$2.ready" 60 || die "$2: funcprog jumped never got ready: $(cat run.err)"
	pid=$(ps -o pid= --ppid "$run" | tr -d ' ')
	[ -n "$pid" ] || die "$2: no program under rip run"
	# (the three threads in one rip ps)
	fn_paths_has "$pid" "jmp-long thread blocked: jumped_thread>jumped_base" \
		"jmp-sig thread blocked: jumped_thread>jumped_base" \
		"jmp-chk thread blocked: jumped_thread>jumped_base"
	kill -9 "$pid"
	wait "$run"
	T_PIDS=""
	fn_paths_has t "jmp-long thread blocked: jumped_thread>jumped_base" \
		"jmp-sig thread blocked: jumped_thread>jumped_base" \
		"jmp-chk thread blocked: jumped_thread>jumped_base"
	"$RIP" report --functions --json t >t.json 2>t.rerr || die "$2: rip report: $(cat t.rerr)"
	python3 "$FN_REPORT" <t.json >t.txt || die "$2: not JSON: $(head -c 300 t.json)"
	# calls, and calls still running: those jumped over have their exits
	for f in 01 02 03 04 05 06 07 08 09 10; do
		grep -qx "jumped_$f 3 0" t.txt || fail "$2: jumped_$f: $(grep "^jumped_$f " t.txt)"
	done
	for l in "jumped_base 3 3" "no_entry 0" "no_exit 0"; do
		grep -qx "$l" t.txt || fail "$2: want $l: $(cat t.txt)"
	done
}

fn_builds check
for b in funcprog-patch:patch funcprog-patch-clang:patch-clang; do
	mkdir -p "$TEST_TMP/${b#*:}" && cd "$TEST_TMP/${b#*:}" || die "no $TEST_TMP/${b#*:}"
	check "$FN_TOP/$BUILD/tests/integ/${b%%:*}" "${b#*:}"
done
t_done
