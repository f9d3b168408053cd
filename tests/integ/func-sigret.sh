#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a signal handler that calls patched functions, run at the
# one instruction where it broke a patched exit: fnsigret (threads recursing
# 120 deep through patched functions, so that the exits past the 63 frames
# kept take the exit trampoline's slow path, __rip_fn_pexit_c) under rip
# run --functions, patched by rip enable; gdb stops a thread in that slow
# path at the return of the return stack's lookup (rip_fn_ret_take), after
# the entry was popped, and runs the program's handler there (on_timer, as
# a signal would), three times.  Its patched calls push onto the return
# stack at its count: the lookup read the popped entry's return address
# after the count freed it, got the handler's call's, and the program
# died of SIGSEGV every time (a one-instruction window that fntail's timer
# hit now and then).  Now the program ends well, every result right.  Each
# run ends within a second of gdb's detach (the file done.N; the threads
# resume at once, where the bug crashed them), not 20 s after its start.
. tests/data/common.sh
need_cmd gdb
prog=$PWD/$BUILD/tests/integ/fnsigret
need_bin "$prog" "$RIP"
# the line of the lookup's return, where the entry is popped already
line=$(awk '/^static uintptr_t rip_fn_ret_take\(/ { f = 1 } f && /^\t\treturn / { print NR; exit }' lib/patch.c)
[ -n "$line" ] || die "no return in rip_fn_ret_take in lib/patch.c"
src=$PWD/lib/patch.c
cd "$TEST_TMP" || die "no TEST_TMP"

for i in 1 2 3; do
	rm -f ready.$i done.$i
	"$RIP" run --functions -o t.$i -- "$prog" "$TEST_TMP/ready.$i" 20 "$TEST_TMP/done.$i" \
		>run.$i.out 2>run.$i.err &
	run=$!
	T_PIDS="$T_PIDS $run"
	wait_file "$TEST_TMP/ready.$i" 60 || die "fnsigret never got ready: $(cat run.$i.err)"
	pid=$(ps -o pid= --ppid "$run" | tr -d ' ')
	[ -n "$pid" ] || die "no fnsigret under rip run"
	expect_status 0 "rip enable PID func" "$RIP" enable "$pid" func
	cat >g.$i <<GDB
set pagination off
set confirm off
handle SIG34 nostop noprint pass
break $src:$line
continue
delete
call on_timer(34)
detach
GDB
	gdb -q -p "$pid" -batch -x g.$i >gdb.$i.out 2>&1
	: >done.$i
	if ! grep -q "^Breakpoint 1 at" gdb.$i.out; then
		grep -q "ptrace: Operation not permitted" gdb.$i.out &&
			skip "gdb may not attach to a process here (ptrace: Operation not permitted)"
		die "gdb set no breakpoint at $src:$line: $(tail -n 5 gdb.$i.out)"
	fi
	grep -q "hit Breakpoint 1" gdb.$i.out || fail "run $i: no thread reached the lookup: $(tail -n 5 gdb.$i.out)"
	wait "$run"
	rc=$?
	[ $rc = 0 ] || fail "run $i: exit $rc: $(tail -n 3 gdb.$i.out run.$i.err | tr '\n' ' ')"
	grep -q "^bad 0\$" run.$i.out || fail "run $i: wrong results: $(cat run.$i.out)"
done
t_done
