#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a piece of a packet begins in the coroutine that runs at
# its first event.  rip run writes what an open packet holds every 250 ms
# (a piece), and a piece's header took the coroutine of the packet's
# begin: a program that switched back from its ucontext coroutines, then
# slept before it returned, had main's exit put in the coroutine it last
# ran (rip report --functions: "1 exits without their entry", main still
# running).  The program (-finstrument-functions, linked with librip)
# runs 20 coroutines 10 rounds each (the first makes 20,000 calls a round,
# so that packets begin in it), sleeps 1 s and returns: every exit must
# have its entry, and main must end on the thread.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3
CC=${CC:-cc}
rep=$PWD/tests/data/fn-report.py
lib=$PWD/$BUILD
inc=$PWD/include
cd "$TEST_TMP" || die "no TEST_TMP"

cat >uc.c <<'C'
#include <stdlib.h>
#include <ucontext.h>
#include <unistd.h>

#define N 20
static ucontext_t main_uc, uc[N];
static volatile long n_work;

__attribute__((noinline)) void work(void)
{
	n_work++;
}

__attribute__((noinline)) void park(int i)
{
	swapcontext(&uc[i], &main_uc);
}

__attribute__((noinline)) void coro_fn(int i)
{
	for (;;) {
		/* the first: enough calls that a packet begins in the coroutine */
		for (int k = 0; k < (i ? 1 : 20000); k++)
			work();
		park(i);
	}
}

int main(void)
{
	for (int i = 0; i < N; i++) {
		getcontext(&uc[i]);
		uc[i].uc_stack.ss_sp = malloc(65536);
		uc[i].uc_stack.ss_size = 65536;
		uc[i].uc_link = &main_uc;
		makecontext(&uc[i], (void (*)(void))coro_fn, 1, i);
	}
	for (int r = 0; r < 10; r++)
		for (int i = 0; i < N; i++)
			swapcontext(&main_uc, &uc[i]);
	sleep(1); /* past the recorder's next pass */
	return 0;
}
C
"$CC" -O1 -g -finstrument-functions -I"$inc" -o uc uc.c -L"$lib" -lrip -Wl,-rpath,"$lib" ||
	die "cannot build the test program"

"$RIP" run -q --functions -o t -- ./uc 2>run.err || fail "rip run: $(cat run.err)"
"$RIP" report --functions --json t | python3 "$rep" >r.txt || fail "rip report --functions failed"
grep -qx "no_entry 0" r.txt || fail "exits without their entry: $(grep no_entry r.txt)"
grep -qx "main 1 0" r.txt || fail "main is not one call, ended: $(grep '^main ' r.txt)"
"$RIP" dump t >d.txt 2>&1 || fail "rip dump failed"
last=$(grep 'rip:fn_exit' d.txt | tail -n 1)
case $last in
*"["*) fail "main's exit is put in a coroutine: $last" ;;
esac
t_done
