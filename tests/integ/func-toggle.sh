#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip enable PID func / rip disable PID func toggled 15 times
# while the functions they patch run: funcprog-patch spin (built by gcc,
# five 1-byte nops, and by clang, one 5-byte nop; 4 threads calling spin_a >
# spin_b > spin_c throughout, and every 16th time spin_jump > spin_down x 5,
# the last of which longjmps over the 5) under rip run --functions.  The
# frames jumped over get their exits when librip drops them: those too
# only for the calls whose entries are in the trace.  The threads never
# stop calling, so every disable comes while calls are under way and every
# enable finds calls that began unpatched.  A call's exit is in the trace exactly when its entry
# is, whatever the patch state and the func category at its return: rip
# report --functions shows no exit without its entry, no call without its
# exit, none still running (the threads are joined before the program
# ends), entries = exits, and the program's results are right.  rip ps
# --stacks after every 5th enable shows the spinners in paths of patched
# calls only (spin_a>spin_b>spin_c, spin_jump>spin_down..., or the end of
# one whose first calls came before the enable: never a frame left behind
# by a call toggled mid-way), and after the last disable, once the calls
# under way return, in none.
# The same program built with -finstrument-functions (gcc, clang: hooks), its
# func category toggled so: the hooks keep every frame whatever the
# category, and a call's exit is in the trace exactly when its entry is
# too (the frame says so: no exit without its entry, none left running).
. tests/data/common.sh
. tests/data/fn-lib.sh
need_cmd python3
rep=$PWD/tests/data/fn-report.py
fnpaths=$PWD/tests/data/fn-paths.py
cd "$TEST_TMP" || die "no TEST_TMP"

# in_spin PID: rip ps --stacks shows a thread of PID in spin_a, spin_b or spin_c
in_spin() {
	"$RIP" ps --stacks --json "$1" 2>/dev/null | grep -q '"spin_[abc]"'
}
# paths PID: the spinner threads' paths, one a line, into paths (none when empty)
paths() {
	"$RIP" ps --stacks --threads --json "$1" | python3 "$fnpaths" >paths.all &&
		sed -n 's/^spinner thread running: //p' paths.all | grep . >paths
	return 0
}
# settled PID: no spinner shows a frame (a longjmp out of patched
# spin_downs into a spin_jump entered before the patching, whose return
# librip does not see, drops them too: librip-preload.so's hook of longjmp)
settled() { paths "$1" && ! grep . paths >left; }
# the paths a spinner may show: a chain's calls made since rip enable (the
# ones under way when it came were entered unpatched: not on the stack)
whole='spin_a|(spin_a>)?spin_b|((spin_a>)?spin_b>)?spin_c|spin_jump|(spin_jump>)?spin_down(>spin_down){0,4}'

for v in gcc clang gcc-hooks clang-hooks; do
	prog=$(fn_prog "$v") || exit $?
	rm -f ready.$v
	"$RIP" run --functions -o t.$v -- "$prog" spin 600 4 "$TEST_TMP/ready.$v" \
		>run.$v.out 2>run.$v.err &
	run=$!
	T_PIDS="$T_PIDS $run"
	wait_file "$TEST_TMP/ready.$v" 60 || die "$v: funcprog-patch never got ready: $(cat run.$v.err)"
	pid=$(ps -o pid= --ppid "$run" | tr -d ' ')
	[ -n "$pid" ] || die "$v: no program under rip run"
	k=0
	while [ $k -lt 15 ]; do
		"$RIP" enable -q "$pid" func 2>en.err || fail "$v: rip enable $k: $(cat en.err)"
		# every 5th time (the calls recorded meanwhile make the trace longer to read)
		if [ $((k % 5)) = 0 ] && [ "${v%-hooks}" = $v ]; then
			wait_until 30 in_spin "$pid" ||
				fail "$v: no thread in spin_* after rip enable $k"
			paths "$pid"
			grep -Ev "^($whole)\$" paths >bad &&
				fail "$v: enable $k: paths not of the patched calls: $(cat bad)"
		fi
		"$RIP" disable -q "$pid" func 2>dis.err || fail "$v: rip disable $k: $(cat dis.err)"
		k=$((k + 1))
	done
	if [ "${v%-hooks}" = $v ]; then
		wait_until 30 settled "$pid" ||
			fail "$v: frames left after the last rip disable: $(cat left)"
	fi
	kill -INT "$pid"
	wait "$run"
	rc=$?
	T_PIDS=""
	[ $rc = 0 ] || fail "$v: rip run (the program checks its results): exit $rc: $(cat run.$v.err)"
	grep -q ", 0 lost\$" run.$v.err || fail "$v: rip run lost records: $(cat run.$v.err)"
	"$RIP" report --functions --json t.$v | python3 "$rep" >rep.$v.txt || fail "$v: rip report"
	echo "$v: $(grep -E '^(entries|exits|no_entry|no_exit|running) ' rep.$v.txt | tr '\n' ' ')"
	grep -q '^entries [1-9]' rep.$v.txt || fail "$v: no entries recorded: $(cat rep.$v.txt)"
	for t in no_entry no_exit running; do
		grep -q "^$t 0\$" rep.$v.txt || fail "$v: $(grep "^$t " rep.$v.txt), want 0"
	done
	n=$(sed -n 's/^entries //p' rep.$v.txt)
	grep -q "^exits $n\$" rep.$v.txt || fail "$v: $n entries but $(grep '^exits ' rep.$v.txt)"
done
t_done
