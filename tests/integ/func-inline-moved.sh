#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: functions inlined into a function called through a pointer
# (a thread function, a pool job, a callback), whose hooks run after the
# stack pointer moved from where that function's entry had it: gcc still
# has the last arguments of an 8-argument call pushed, or a VLA lies
# below.  The call site is no direct call to read, and the hook's distance
# to the return address is not the frame's own: each is still a call
# nested in the one it went into, not a new call that drops it.  funcprog
# ptrinl N: rip report --functions counts N calls of each function and no
# exit without its entry; then rip ps --stacks shows main parked through
# pinl_job (called through a pointer), live and after kill -9.  pinl_job
# is called from the frame that called pinl_jump, which longjmped out:
# without librip-preload.so (whose hook of longjmp would drop pinl_jump
# there; rip run --no-waits has none, nor a run of the program itself),
# pinl_job's entry is a new call that drops pinl_jump, not a function
# inlined into it.  The program built by gcc, by clang, and by
# gcc without frame pointers.
. tests/data/common.sh
. tests/data/fn-lib.sh
fn_need_builds
n=1000

# check PROG NAME: the counts and the parked path of PROG (fn_builds)
check() {
	prog=$1
	fn_record t -- "$prog" ptrinl "$n"
	cat >want.txt <<-EOW
	main 1 0
	pinl_args $n 0
	pinl_eight $n 0
	pinl_err $n 0
	pinl_fill $n 0
	pinl_twice $n 0
	pinl_vla $n 0
	ptrinl_run 1 0
	EOW
	fn_paired "$((6 * n + 2))" >>want.txt
	fn_counts t

	want="main thread running: main>ptrinl_run>pinl_then>pinl_job>pinl_park"
	fn_parked "$want" "$TEST_TMP/$2.ready" "$prog" ptrinl 10 "$TEST_TMP/$2.ready"

	# without librip-preload.so: the frame jumped out of goes at pinl_job's entry
	RIP_RING=1 "$prog" ptrinl 10 "$TEST_TMP/$2.direct" >direct.out 2>direct.err &
	pid=$!
	T_PIDS="$T_PIDS $pid"
	wait_file "$TEST_TMP/$2.direct" 60 || die "$2: funcprog ptrinl never got ready: $(cat direct.err)"
	fn_paths_has "$pid" "$want"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
}

fn_builds check
t_done
