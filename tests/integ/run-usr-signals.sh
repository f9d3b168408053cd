#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: SIGUSR1 and SIGUSR2 sent to rip run reach the program, as
# SIGINT, SIGTERM, SIGHUP and SIGQUIT do.  Their default action killed rip
# run (the trace left without its index) while the program ran on without
# the signal it was sent to reopen its logs or take a pagemap snapshot.
# The program counts both and exits when it has them; rip run ends with
# its status, the trace whole.
. tests/data/common.sh
need_bin "$RIP"
cd "$TEST_TMP" || die "no TEST_TMP"

cat >usr.c <<'C'
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "helpers.h"

static volatile sig_atomic_t got1, got2;

static void on(int sig)
{
	if (sig == SIGUSR1)
		got1 = 1;
	else
		got2 = 1;
}

int main(int argc, char **argv)
{
	signal(SIGUSR1, on);
	signal(SIGUSR2, on);
	t_ready(argv[1]);
	for (int i = 0; i < 1000 && !(got1 && got2); i++)
		usleep(10000);
	printf("usr1 %d usr2 %d\n", (int)got1, (int)got2);
	return got1 && got2 ? 7 : 1;
}
C
t_cc_rip usr
"$RIP" run -o t -- ./usr "$TEST_TMP/ready" >run.out 2>run.err &
run=$!
T_PIDS="$T_PIDS $run"
wait_file "$TEST_TMP/ready" 30 || die "the program did not start: $(cat run.err)"
kill -USR1 "$run"
sleep 0.2
kill -USR2 "$run"
wait "$run"
rc=$?
[ "$rc" = 7 ] || fail "rip run: exit $rc, want the program's 7: $(cat run.out run.err)"
grep -q '^usr1 1 usr2 1$' run.out || fail "the program did not get both: $(cat run.out)"
expect_status 0 "rip dump t" "$RIP" dump t
t_done
