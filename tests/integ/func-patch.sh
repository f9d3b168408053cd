#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: functions built with -fpatchable-function-entry=5, by gcc
# (five 1-byte nops) and by clang (one 5-byte nop), in a program run under
# rip run --functions (funcprog-patch spin: 4 threads calling spin_a >
# spin_b > spin_c and checking every result, throughout).  Nothing is
# traced until rip enable PID func patches them; then the calls are in
# the trace and the threads' stacks show them; rip disable puts every
# byte of the program's code back (its executable mappings hashed before
# and after); the program ends well.  A second rip enable or disable of the
# same functions changes none, and says so.  --functions=GLOB patches only the
# functions it names.  funcprog-patch park, patched before its threads
# start: the paths of rip ps --stacks are exact, through a longjmp over 10
# patched frames and coroutines switched mid-chain (the program's own,
# co-mid and co-hop: librip-preload.so's hooks of swapcontext make no slots
# of their own once the program has made one).
# funcprog-patch-nopie (gcc, not position-independent): rip enable fails,
# saying why, and leaves the code alone; rip run --functions='*' says why too.
# fntail: sibling calls (one return through three trampolines), stacks
# 8 bytes off the ABI's alignment (gcc calls chains it knows need none so),
# a longjmp, floating-point arguments in every vector argument register and
# a pair of doubles returned, a recursion deeper than a slot's return stack,
# a timer's signal every 200 us in each thread, its handler calling patched
# functions:
# 4 threads and the handler check every result while patched.  rip enable on a
# process that dies (stopped, then killed) while it waits says so at once.
# funcprog-cxx-patch: exceptions through 10 patched frames, rethrown, and
# through 5 patched C frames: the unwinder sees the real return addresses,
# the catch drops the frames unwound and gives the frames that live on the
# return trampoline again (rehook's catching function returns, and its
# exit is seen).
. tests/data/common.sh
need_cmd python3
paths=$PWD/tests/data/fn-paths.py
texthash=$PWD/tests/data/text-hash.py
rep=$PWD/tests/data/fn-report.py
cd "$TEST_TMP" || die "no TEST_TMP"

# live_pid RUN: the pid of rip run RUN's program into $pid
live_pid() {
	pid=$(ps -o pid= --ppid "$1" | tr -d ' ')
	[ -n "$pid" ]
}
# stacks_of PID: how many threads rip ps --stacks shows in a traced function
in_stacks() {
	"$RIP" ps --stacks --json "$1" | python3 -c '
import json, sys
print(sum(len(g["members"]) for g in json.load(sys.stdin)["stacks"]))'
}

for v in gcc clang; do
	prog=$OLDPWD/$BUILD/tests/integ/funcprog-patch
	[ $v = clang ] && prog=$prog-clang
	need_bin "$prog" "$RIP"
	rm -f ready.$v
	"$RIP" run --functions -o t.$v -- "$prog" spin 600 4 "$TEST_TMP/ready.$v" >run.$v.out 2>run.$v.err &
	run=$!
	T_PIDS="$T_PIDS $run"
	wait_file "$TEST_TMP/ready.$v" 60 || die "$v: funcprog-patch never got ready: $(cat run.$v.err)"
	live_pid "$run" || die "$v: no program under rip run"
	before=$(python3 "$texthash" "$pid" "$prog") || die "$v: cannot read the program's code"
	n=$(in_stacks "$pid")
	[ "$n" = 0 ] || fail "$v: $n threads in traced functions before rip enable"
	"$RIP" dump "$pid" 2>/dev/null | grep -q 'rip:fn_entry' && fail "$v: records before rip enable"

	if [ $v = clang ]; then
		# one function by name: only its calls
		expect_status 0 "$v: rip enable --functions=spin_c" "$RIP" enable --functions=spin_c "$pid" func
		grep -q "patched 1 function; 1 patched now" out || fail "$v: --functions=spin_c: $(cat out)"
		# again: nothing to do, and it says so (it said "patched 1 function")
		expect_status 0 "$v: rip enable --functions=spin_c again" \
			"$RIP" enable --functions=spin_c "$pid" func
		grep -q "patched 0 functions; 1 patched now" out ||
			fail "$v: --functions=spin_c again: $(cat out)"
		expect_status 0 "$v: rip disable --functions=spin_c" \
			"$RIP" disable --functions=spin_c "$pid" func
		grep -q "unpatched 1 function; 0 patched now" out ||
			fail "$v: rip disable --functions=spin_c: $(cat out)"
		expect_status 0 "$v: rip disable --functions=spin_c again" \
			"$RIP" disable --functions=spin_c "$pid" func
		grep -q "unpatched 0 functions; 0 patched now" out ||
			fail "$v: rip disable --functions=spin_c again: $(cat out)"
	fi
	expect_status 0 "$v: rip enable PID func" "$RIP" enable "$pid" func
	grep -q "patched [0-9]* functions; [0-9]* patched now" out || fail "$v: rip enable said: $(cat out)"
	wait_until 30 sh -c "[ \"\$('$RIP' ps --stacks --json $pid | grep -c spin_)\" -gt 0 ]" ||
		fail "$v: no thread in spin_a, spin_b or spin_c after rip enable"
	during=$(python3 "$texthash" "$pid" "$prog")
	[ "$during" != "$before" ] || fail "$v: the code did not change when patched"
	expect_status 0 "$v: rip disable PID func" "$RIP" disable "$pid" func
	grep -q "unpatched [0-9]* functions; 0 patched now" out || fail "$v: rip disable said: $(cat out)"
	after=$(python3 "$texthash" "$pid" "$prog")
	[ "$after" = "$before" ] || fail "$v: the code differs after rip disable: $before, then $after"
	kill -INT "$pid"
	wait "$run"
	rc=$?
	[ $rc = 0 ] || fail "$v: rip run (the program checks its results): exit $rc: $(cat run.$v.err)"
	grep -q "^calls [1-9]" run.$v.out || fail "$v: the program did not count its calls: $(cat run.$v.out)"
	grep -q ", 0 lost\$" run.$v.err || fail "$v: rip run lost records: $(cat run.$v.err)"
	"$RIP" report --functions --json t.$v | python3 "$rep" >rep.$v.txt || fail "$v: rip report"
	grep -q "^spin_c [1-9]" rep.$v.txt && grep -q "^spin_a [1-9]" rep.$v.txt ||
		fail "$v: no calls of spin_a and spin_c in the trace: $(cat rep.$v.txt)"
done

# ---- the paths: patched before the threads start ----
chain="chain_thread"
for i in 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20; do
	chain="$chain>chain_$i"
done
cat >want.txt <<EOW
chain thread blocked: $chain>chain_park>park_here
co-hop coroutine parked: co_hop_entry>co_hop_a>co_hop_b>co_pause
co-mid coroutine parked: co_entry>co_a>co_b>co_c>co_pause
hopper thread blocked: hop_thread>hop_park>park_here
jumper thread blocked: jump_thread>jump_base>jump_park>park_here
main thread blocked: sched_run>main_park
reader thread blocked: reader_thread>reader_wait
EOW
for v in gcc clang; do
	prog=$OLDPWD/$BUILD/tests/integ/funcprog-patch
	[ $v = clang ] && prog=$prog-clang
	rm -f park.$v park.$v.gate go.$v
	"$RIP" run --functions -o tp.$v -- "$prog" park "$TEST_TMP/park.$v" "$TEST_TMP/go.$v" \
		>runp.$v.out 2>runp.$v.err &
	run=$!
	T_PIDS="$T_PIDS $run"
	wait_file "$TEST_TMP/park.$v.gate" 60 || die "$v: funcprog-patch park never opened its gate"
	live_pid "$run" || die "$v: no program under rip run"
	expect_status 0 "$v: rip enable PID func (park)" "$RIP" enable "$pid" func
	: >go.$v
	wait_file "$TEST_TMP/park.$v" 60 || die "$v: funcprog-patch park never got ready: $(cat runp.$v.err)"
	"$RIP" ps --stacks --threads --json "$pid" | python3 "$paths" | grep -v '^gate\|: $' >paths.$v.txt
	diff want.txt paths.$v.txt >paths.$v.diff || fail "$v: the paths differ (want, got):
$(cat paths.$v.diff)"
	"$RIP" ps --stacks --threads -v "$pid" >v.$v.txt
	grep -q '^thread jumper .* 10 frames dropped by longjmp or exceptions:$' v.$v.txt ||
		fail "$v: the 10 frames the longjmp jumped over: $(grep jumper v.$v.txt)"
	kill -9 "$pid"
	wait "$run"
done

# ---- gcc's nops in an executable that is not position-independent: refused, untouched ----
prog=$OLDPWD/$BUILD/tests/integ/funcprog-patch-nopie
need_bin "$prog"
rm -f ready.np
"$RIP" run -o tnp -- "$prog" spin 600 1 "$TEST_TMP/ready.np" >runnp.out 2>runnp.err &
run=$!
T_PIDS="$T_PIDS $run"
wait_file "$TEST_TMP/ready.np" 60 || die "funcprog-patch-nopie never got ready: $(cat runnp.err)"
live_pid "$run" || die "no funcprog-patch-nopie under rip run"
before=$(python3 "$texthash" "$pid" "$prog") || die "nopie: cannot read the program's code"
expect_status 1 "nopie: rip enable PID func" "$RIP" enable "$pid" func
grep -q "no address space for the calls' pads" err ||
	fail "nopie: rip enable did not say why: $(cat err)"
after=$(python3 "$texthash" "$pid" "$prog")
[ "$after" = "$before" ] || fail "nopie: the code changed"
kill -INT "$pid"
wait "$run" || fail "nopie: the program did not end well: $(cat runnp.err)"
# and rip run --functions=GLOB, patching at the start, says the same
"$RIP" run -q --functions='*' -o tnp2 -- "$prog" count 100 >runnp2.out 2>runnp2.err ||
	fail "nopie: rip run --functions='*': $(cat runnp2.err)"
grep -q "no function patched: .*no address space for the calls' pads" runnp2.err ||
	fail "nopie: rip run --functions='*' did not say why: $(cat runnp2.err)"

# ---- sibling calls, a stack off the ABI's alignment, a longjmp: the program runs on ----
prog=$OLDPWD/$BUILD/tests/integ/fntail
need_bin "$prog"
rm -f ready.tail
"$RIP" run --functions -o tt -- "$prog" "$TEST_TMP/ready.tail" 2 >runt.out 2>runt.err &
run=$!
T_PIDS="$T_PIDS $run"
wait_file "$TEST_TMP/ready.tail" 60 || die "fntail never got ready: $(cat runt.err)"
live_pid "$run" || die "no fntail under rip run"
expect_status 0 "fntail: rip enable PID func" "$RIP" enable "$pid" func
wait "$run"
rc=$?
[ $rc = 0 ] || fail "fntail: exit $rc: $(cat runt.out runt.err | tail -n 5)"
grep -q "^bad 0\$" runt.out || fail "fntail: wrong results: $(cat runt.out)"
grep -q "^signals [1-9]" runt.out || fail "fntail: no timer's signal came: $(cat runt.out)"
"$RIP" report --functions --json tt | python3 "$rep" >rept.txt || fail "fntail: rip report"
grep -q "^tail_leaf [1-9]" rept.txt && grep -q "^tail_1 [1-9]" rept.txt &&
	grep -q "^jump_down [1-9]" rept.txt && grep -q "^vec_sum [1-9]" rept.txt && grep -q "^deep [1-9]" rept.txt || fail "fntail: calls missing: $(cat rept.txt)"

# ---- a process that dies while rip enable waits for its answer: rip enable says so, at once ----
rm -f ready.die
"$RIP" run -o td -- "$prog" "$TEST_TMP/ready.die" 600 >rund.out 2>rund.err &
run=$!
T_PIDS="$T_PIDS $run"
wait_file "$TEST_TMP/ready.die" 60 || die "fntail (die) never got ready: $(cat rund.err)"
live_pid "$run" || die "no fntail (die) under rip run"
kill -STOP "$pid"
"$RIP" enable "$pid" func >en.out 2>en.err &
en=$!
T_PIDS="$T_PIDS $en"
# its request written (the list next to the ring file), the answer awaited
wait_until 10 sh -c "find '$RIP_DIR' -name 'rip-$pid-*.ring.patch' | grep -q ." ||
	fail "rip enable wrote no request"
kill -9 "$pid"
t0=$(date +%s)
wait "$en"
rc=$?
t1=$(date +%s)
wait "$run"
[ $rc = 1 ] || fail "rip enable on a process that died: exit $rc, want 1: $(cat en.err)"
grep -q "the process ended before the watcher answered" en.err ||
	fail "rip enable did not say the process ended: $(cat en.err)"
[ $((t1 - t0)) -lt 10 ] || fail "rip enable waited $((t1 - t0)) s for a dead process"

# ---- exceptions through patched frames ----
cat >want.txt <<EOW
caught thread blocked: caught_thread(void*)>caught_base()
cthrow thread blocked: cthrow_thread(void*)>cthrow_base()>cthrow_park()>park_here()
rehook thread blocked: rehook_thread(void*)>rehook_base()
rethrow thread blocked: rethrow_thread(void*)>rethrow_base()>rethrow_park()>park_here()
thrower thread blocked: throw_thread(void*)>throw_base()>throw_park()>park_here()
EOW
prog=$OLDPWD/$BUILD/tests/integ/funcprog-cxx-patch
need_bin "$prog"
"$RIP" run --functions -o tx -- "$prog" "$TEST_TMP/cxx" "$TEST_TMP/go.cxx" >runx.out 2>runx.err &
run=$!
T_PIDS="$T_PIDS $run"
wait_file "$TEST_TMP/cxx.gate" 60 || die "funcprog-cxx-patch never opened its gate: $(cat runx.err)"
live_pid "$run" || die "no funcprog-cxx-patch under rip run"
expect_status 0 "rip enable PID func (cxx)" "$RIP" enable "$pid" func
: >go.cxx
wait_file "$TEST_TMP/cxx" 60 || die "funcprog-cxx-patch never got ready: $(cat runx.err)"
"$RIP" ps --stacks --threads --json "$pid" | python3 "$paths" | grep -v ': $' >cxx.txt
diff want.txt cxx.txt >cxx.diff || fail "cxx: the paths differ (want, got):
$(cat cxx.diff)"
kill -TERM "$pid" # it has no handler: a script's background job ignores SIGINT
wait "$run"
"$RIP" report --functions --json tx | python3 "$rep" >repx.txt || fail "cxx: rip report"
grep -q "^rehook_mid() 1 0\$" repx.txt || fail "cxx: rehook_mid's one call, ended: $(grep rehook repx.txt)"
grep -q "^no_exit 0\$" repx.txt || fail "cxx: calls without their exit: $(grep no_ repx.txt)"
t_done
