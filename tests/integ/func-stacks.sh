#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip ps --stacks shows the call path of every thread and
# coroutine of a program built with -finstrument-functions (funcprog park),
# from the shadow stacks the hooks keep in the ring file: live through the
# pid, after kill -9 through the ring file, and through the trace rip run
# wrote.  The paths are exact: a chain of 20 functions, a thread in read
# (a function whose frame is bigger than the hooks' first scan), a longjmp
# over 10 frames, a coroutine parked mid-chain, and one that parked on one
# thread and went on on another; the threads that ran the coroutines show
# their own paths, not the coroutines'.  The grouped view puts the two
# threads parked in park_here at different depths apart and counts the rest.
# Under the preload library, the threads' waits show with their paths, live
# and in the trace: pause() as pause (not signal), read with its fd.
# funcprog-cxx: exceptions thrown through 10 traced C++ frames, rethrown,
# and thrown through 5 C frames whose exits the unwinding does not run (the
# catch drops them, and rip ps -v says so); the stack is right at the catch
# (a thread parks in the catching function) and after it returns.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/funcprog
cxx=$PWD/$BUILD/tests/integ/funcprog-cxx
need_bin "$prog" "$cxx" "$RIP"
need_cmd python3
paths=$PWD/tests/data/fn-paths.py
cd "$TEST_TMP" || die "no TEST_TMP"

chain="chain_thread"
for i in 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20; do
	chain="$chain>chain_$i"
done
cat >want.txt <<EOW
chain thread running: $chain>chain_park>park_here
co-hop coroutine parked: co_hop_entry>co_hop_a>co_hop_b>co_pause
co-mid coroutine parked: co_entry>co_a>co_b>co_c>co_pause
hopper thread running: hop_thread>hop_park>park_here
jumper thread running: jump_thread>jump_base>jump_park>park_here
main thread running: main>sched_run>main_park
reader thread running: reader_thread>reader_wait
EOW

# check WHAT TARGET: the paths rip ps --stacks --threads shows for TARGET are the ones wanted
check() {
	if ! "$RIP" ps --stacks --threads --json "$2" >"$1.json" 2>"$1.err"; then
		fail "$1: rip ps --stacks --threads --json $2: $(head -n 3 "$1.err")"
		return
	fi
	python3 "$paths" <"$1.json" >"$1.txt" || {
		fail "$1: not JSON: $(head -c 300 "$1.json")"
		return
	}
	diff want.txt "$1.txt" >"$1.diff" || fail "$1: the paths differ (want, got):
$(cat "$1.diff")"
}

# rip run without the preload library (its ucontext hooks would make coroutines of
# their own): the program switches its coroutines with the rip_coro API
"$RIP" run --no-waits -o tr -- "$prog" park "$TEST_TMP/ready" >run.out 2>run.err &
run=$!
T_PIDS="$T_PIDS $run"
wait_file "$TEST_TMP/ready" 60 || die "funcprog never got ready: $(cat run.err)"
pid=$(ps -o pid= --ppid "$run" | tr -d ' ')
[ -n "$pid" ] || die "no funcprog under rip run"
check live "$pid"

# the grouped view: seven paths, one member each
"$RIP" ps --stacks "$pid" >grouped.txt 2>grouped.err || fail "rip ps --stacks: $(cat grouped.err)"
n=$(grep -c '^1 \(thread\|coroutine\) ' grouped.txt)
[ "$n" = 7 ] || fail "grouped: $n groups of one, want 7: $(cat grouped.txt)"
grep -q '^1 thread chain (tid [0-9]*), running, 23 frames:$' grouped.txt ||
	fail "grouped: no chain group of 23 frames: $(cat grouped.txt)"
grep -q '^      chain_park  *funcprog.c:[0-9]*$' grouped.txt ||
	fail "grouped: chain_park has no file:line: $(cat grouped.txt)"

kill -9 "$pid"
wait "$run"
# rip run leaves the ring file of a program that was killed in the ring directory
ring=$(ls "$RIP_DIR"/rip-"$pid"-*.ring 2>/dev/null | head -n 1)
[ -f "$ring" ] || die "no ring file of $pid left in $RIP_DIR: $(cat run.err)"
check dead "$ring"
"$RIP" ps --stacks "$ring" | grep -q 'dead (killed or crashed)' ||
	fail "rip ps --stacks does not say the process died"
check trace tr

# under rip run with the preload library: what the threads wait in, live and in the trace
# (pause() is a wait of its own, not "signal")
rm -f "$TEST_TMP/ready-w"
"$RIP" run -o tw -- "$prog" park "$TEST_TMP/ready-w" >runw.out 2>runw.err &
run=$!
T_PIDS="$T_PIDS $run"
wait_file "$TEST_TMP/ready-w" 60 || die "funcprog (preloaded) never got ready: $(cat runw.err)"
wpid=$(ps -o pid= --ppid "$run" | tr -d ' ')
[ -n "$wpid" ] || die "no funcprog under rip run (preloaded)"
for target in "$wpid" tw; do
	if [ "$target" = tw ]; then
		kill -9 "$wpid"
		wait "$run"
	fi
	"$RIP" ps --stacks "$target" >waits.txt 2>waits.err || fail "rip ps --stacks $target: $(cat waits.err)"
	grep -q '^1 thread chain (tid [0-9]*), blocked, 23 frames, in pause:$' waits.txt ||
		fail "$target: the chain thread is not shown in pause: $(grep chain waits.txt | head -n 1)"
	grep -q '^1 thread reader (tid [0-9]*), blocked, 2 frames, in read (fd [0-9]*):$' waits.txt ||
		fail "$target: the reader is not shown in read: $(grep reader waits.txt | head -n 1)"
done

# exceptions: C++ frames (their exit hooks run in the unwinding's cleanups), C frames (not),
# under rip run: the preload library's hook of __cxa_begin_catch drops the unwound frames at
# the catch (caught parks in the catching function, after no traced call); static C++
# functions named with their parameters, from their mangled symbols
cat >want.txt <<EOW
caught thread blocked: caught_thread(void*)>caught_base()
cthrow thread blocked: cthrow_thread(void*)>cthrow_base()>cthrow_park()>park_here()
rehook thread blocked: rehook_thread(void*)>rehook_base()
rethrow thread blocked: rethrow_thread(void*)>rethrow_base()>rethrow_park()>park_here()
thrower thread blocked: throw_thread(void*)>throw_base()>throw_park()>park_here()
EOW
"$RIP" run -o trc -- "$cxx" "$TEST_TMP/ready-cxx" >cxx.out 2>cxx.err &
crun=$!
T_PIDS="$T_PIDS $crun"
wait_file "$TEST_TMP/ready-cxx" 60 || die "funcprog-cxx never got ready: $(cat cxx.err)"
cpid=$(ps -o pid= --ppid "$crun" | tr -d ' ')
[ -n "$cpid" ] || die "no funcprog-cxx under rip run"
"$RIP" ps --stacks --threads --json "$cpid" | python3 "$paths" | grep -v ': $' >cxx.txt
diff want.txt cxx.txt >cxx.diff || fail "cxx: the paths differ (want, got):
$(cat cxx.diff)"
"$RIP" ps --stacks --threads -v "$cpid" >cxx-v.txt 2>&1
grep -q '^thread cthrow .*, 4 frames, .*5 frames dropped by longjmp or exceptions:$' cxx-v.txt ||
	fail "the 5 C frames the exception unwound are not counted: $(cat cxx-v.txt)"
kill -9 "$cpid"
wait "$crun"
t_done
