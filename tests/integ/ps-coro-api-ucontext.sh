#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a program that runs the coroutine API over ucontext has its
# coroutines once under rip run.  librip-preload.so gives every context
# made by makecontext a slot of its own (for programs that know nothing of
# librip); a program that keeps its own (rip_coro_create, switch_in/out
# around swapcontext) had each twice: its named slots empty ("(no snap
# yet)") and the hooks' "ucontext" ones with its snaps.  The hooks now step
# aside once the program makes a coroutine itself: rip ps shows 2
# coroutines, co-0..1, parked in park.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
cd "$TEST_TMP" || die "no TEST_TMP"

cat >uc.c <<'C'
#include <rip.h>

#include "helpers.h"
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>
#include <unistd.h>

static ucontext_t main_uc, uc[2];
static struct rip_coro *co[2];

__attribute__((noinline)) static void park(int i)
{
	rip_snap();
	rip_coro_switch_out();
	swapcontext(&uc[i], &main_uc);
}

static void fn(int i)
{
	park(i);
}

int main(int argc, char **argv)
{

	for (int i = 0; i < 2; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "co-%d", i);
		if (rip_coro_create(nm, &co[i]))
			return 1;
		getcontext(&uc[i]);
		uc[i].uc_stack.ss_sp = malloc(65536);
		uc[i].uc_stack.ss_size = 65536;
		uc[i].uc_link = &main_uc;
		makecontext(&uc[i], (void (*)(void))fn, 1, i);
		rip_coro_switch_in(co[i]);
		swapcontext(&main_uc, &uc[i]);
	}
	t_ready(argv[1]);
	for (;;)
		pause();
}
C
t_cc_rip uc
t_bg "$RIP" run -q -o t -- ./uc "$TEST_TMP/ready"
t_ready_pid "$TEST_TMP/ready"
T_PIDS="$T_PIDS $pid"
expect_status 0 "rip ps" "$RIP" ps "$pid"
grep -q '^1 thread, 2 coroutines (2 waiting)' "$TEST_TMP/out" ||
	fail "rip ps: $(sed -n 2p "$TEST_TMP/out")"
grep -q '^ *2  park .* coroutines co-0\.\.1; parked ' "$TEST_TMP/out" ||
	fail "rip ps: the coroutines are not in park: $(cat "$TEST_TMP/out")"
grep -q 'no snap yet\|coroutines\? ucontext' "$TEST_TMP/out" &&
	fail "rip ps: slots of the hooks, or empty ones: $(cat "$TEST_TMP/out")"
t_done
