#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip ps --all marks a row "(exited)" only when every member
# of it exited, and says how many did in a row of both.  Three threads snap
# in both_site; one of them exits, the other two wait in pause(); a fourth
# snaps in gone_site and exits.  The both_site row has 3 threads, "(1
# exited)" (it said "(exited)" of the row, the two live ones too); the
# gone_site row is "(exited)".
. tests/data/common.sh
need_bin "$RIP"
cd "$TEST_TMP" || die "no TEST_TMP"

cat >ex.c <<'C'
#include <pthread.h>
#include <rip.h>

#include "helpers.h"
#include <stdio.h>
#include <unistd.h>

static pthread_barrier_t bar;

__attribute__((noinline)) void both_site(void)
{
	rip_snap();
}

__attribute__((noinline)) void gone_site(void)
{
	rip_snap();
}

static void *stay(void *a)
{
	both_site();
	pthread_barrier_wait(&bar);
	for (;;)
		pause();
	return a;
}

static void *leave(void *a)
{
	both_site();
	return a;
}

static void *leave_other(void *a)
{
	gone_site();
	return a;
}

int main(int argc, char **argv)
{
	pthread_t t;

	pthread_barrier_init(&bar, NULL, 3);
	for (int i = 0; i < 2; i++)
		pthread_create(&t, NULL, stay, NULL);
	pthread_create(&t, NULL, leave, NULL);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, leave_other, NULL);
	pthread_join(t, NULL);
	pthread_barrier_wait(&bar);
	t_ready(argv[1]);
	for (;;)
		pause();
}
C
t_cc_rip ex
t_bg env RIP_RING=1 ./ex "$TEST_TMP/ready"
t_ready_pid "$TEST_TMP/ready"
expect_status 0 "rip ps --all" "$RIP" ps --all "$pid"
grep -q ' both_site .* threads .*(1 exited)$' "$TEST_TMP/out" ||
	fail "the both_site row: $(grep both_site "$TEST_TMP/out")"
grep -q ' gone_site .* thread .*(exited)$' "$TEST_TMP/out" ||
	fail "the gone_site row: $(grep gone_site "$TEST_TMP/out")"
grep -q '^ *3  both_site ' "$TEST_TMP/out" ||
	fail "both_site: not 3 threads: $(grep both_site "$TEST_TMP/out")"
t_done
