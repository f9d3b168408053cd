#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: after a crash, coroutines are parked up to the last time
# the file holds, the watcher's last sweep too, and the note on a pool too
# small counts coroutines as what they are.  A program under rip run
# starts a thread (the watcher starts with it), parks coroutines at once,
# is looked at by rip ps 1.2 s later (the watcher sweeps the file for it)
# and killed 1 s after that: rip ps of its ring file said "parked
# 1ms..1ms" (the last switch was the newest time it took), though the
# watcher swept the file more than a second after; now at least 1 s.
# With RIP_SLOTS=4 some of its 6 rip_coro_create calls find no slot: "N
# threads or coroutines found no free slot" (it said "threads").
. tests/data/common.sh
need_bin "$RIP"
cd "$TEST_TMP" || die "no TEST_TMP"

cat >pk.c <<'C'
#include <pthread.h>
#include <rip.h>

#include "helpers.h"
#include <stdio.h>
#include <unistd.h>

static void *idle(void *a)
{
	for (;;)
		pause();
	return a;
}

__attribute__((noinline)) void pk_park(struct rip_coro *c)
{
	rip_coro_switch_in(c);
	rip_snap();
	rip_coro_switch_out();
}

int main(int argc, char **argv)
{
	struct rip_coro *c;
	pthread_t t;

	pthread_create(&t, NULL, idle, NULL);
	for (int i = 0; i < 6; i++)
		if (!rip_coro_create("pk", &c))
			pk_park(c);
	t_ready(argv[1]);
	for (;;)
		pause();
}
C
t_cc_rip pk
RIP_SLOTS=4 "$RIP" run -q -o t -- ./pk "$TEST_TMP/ready" >run.out 2>&1 &
run=$!
T_PIDS="$T_PIDS $run"
t_ready_pid "$TEST_TMP/ready"
sleep 1.2
# a look while it lives: the watcher sweeps the file for it
expect_status 0 "rip ps PID" "$RIP" ps "$pid"
sleep 1
kill -9 "$pid"
wait "$run"
expect_status 0 "rip ps t" "$RIP" ps t
grep -q ' coroutines pk (x[0-9]*); parked \([1-9][0-9.]*s\)\.\.' "$TEST_TMP/out" ||
	fail "parked times end at the last switch: $(grep parked "$TEST_TMP/out")"
grep -q '; [1-9][0-9]* threads or coroutines found no free slot (raise RIP_SLOTS)$' "$TEST_TMP/out" ||
	fail "the pool's note: $(sed -n 2p "$TEST_TMP/out")"
t_done
