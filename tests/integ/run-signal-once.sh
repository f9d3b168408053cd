#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a signal reaches a program under rip run once, however it
# was sent.  rip run passed on every signal sent to it, so one sent to its
# process group (the program's own kill(0, ...), `timeout`, `kill -TERM 0`
# in a script) or to its control group (systemd) reached the program
# twice: once from the sender, once from rip.  A server whose second
# SIGTERM means "stop now" then stopped otherwise under rip.  The program
# counts SIGTERM and SIGUSR1 and who sent them (its parent is rip run):
#   its own kill(0, SIGUSR1): 1, from itself (it was 2 before the fix);
#   timeout -s TERM: 1, not from rip;
#   kill -TERM 0 in a script: 1, not from rip;
#   rip run alone killed (a script's kill $!): 1, from rip (passed on);
#   a program in a process group of its own, rip's group killed: 1, from rip.
# While rip run records, its only child is the program; its witness (a
# grandchild in its process group, "rip-sigwitness RIP-PID") holds its two
# pipes and its signalfd and nothing else, its command line does not name
# the program (pgrep -f PROG, pkill -f PROG), and it ends with rip run,
# killed or not.
. tests/data/common.sh
need_bin "$RIP"
need_cmd timeout setsid
cd "$TEST_TMP" || die "no TEST_TMP"
export RIP_DIR="$TEST_TMP/rings"
mkdir -p "$RIP_DIR"

cat >sigc.c <<'C'
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

static volatile sig_atomic_t term, usr1, parent, self;

static void on(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig == SIGTERM)
		term++;
	else
		usr1++;
	if (si->si_pid == getppid())
		parent++;
	if (si->si_pid == getpid())
		self++;
}

/* sigc READY [self|ownpgrp]: counts until 1 s after the first signal (10 s at most) */
int main(int argc, char **argv)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	if (argc > 2 && !strcmp(argv[2], "ownpgrp"))
		setpgid(0, 0);
	t_ready(argv[1]);
	if (argc > 2 && !strcmp(argv[2], "self")) {
		usleep(100000);
		kill(0, SIGUSR1);
	}
	for (int i = 0; i < 1000 && !term && !usr1; i++)
		usleep(10000);
	sleep(1);
	printf("term %d usr1 %d parent %d self %d\n", (int)term, (int)usr1, (int)parent,
	       (int)self);
	return 0;
}
C
t_cc_rip sigc

# witness_of RUN: the pid of rip run RUN's witness into $witness ("" when none)
witness_of() {
	witness=
	for d in /proc/[0-9]*; do
		[ "$(cat "$d"/comm 2>/dev/null)" = rip-sigwitness ] || continue
		[ "$(tr '\0' ' ' <"$d"/cmdline 2>/dev/null | sed 's/ *$//')" = "rip-sigwitness $1" ] &&
			witness=${d#/proc/}
	done
	[ -n "$witness" ] || fail "no rip-sigwitness $1"
}

# witness_gone WHEN: the witness ended within 5 s of WHEN
witness_gone() {
	i=0
	while [ -n "$witness" ] && [ "$(cat /proc/"$witness"/comm 2>/dev/null)" = rip-sigwitness ]; do
		i=$((i + 1))
		[ $i -gt 50 ] && { fail "the witness $witness outlived $1 by 5 s"; break; }
		sleep 0.1
	done
}

# the program's own kill(0, SIGUSR1), in a group of the test's own (the shell ignores it)
rm -f ready
setsid sh -c "trap '' USR1; \"$RIP\" run -q -o t1 -- ./sigc \"$TEST_TMP/ready\" self" \
	>self.out 2>self.err
grep -q '^term 0 usr1 1 parent 0 self 1$' self.out ||
	fail "the program's kill(0, SIGUSR1): want it once, from itself: $(cat self.out self.err)"

# timeout: kills rip run, then its process group
rm -f ready
timeout -s TERM 2 "$RIP" run -q -o t2 -- ./sigc "$TEST_TMP/ready" >to.out 2>to.err
grep -q '^term 1 usr1 0 parent 0 self 0$' to.out ||
	fail "timeout -s TERM: want SIGTERM once, from timeout: $(cat to.out to.err)"

# a script that kills its process group
rm -f ready
setsid sh -c "\"$RIP\" run -q -o t3 -- ./sigc \"$TEST_TMP/ready\" & \
	while [ ! -s \"$TEST_TMP/ready\" ]; do sleep 0.05; done; sleep 0.2; trap '' TERM; \
	kill -TERM 0; wait" >grp.out 2>grp.err
grep -q '^term 1 usr1 0 parent 0 self 0$' grp.out ||
	fail "kill -TERM 0: want SIGTERM once, from the script: $(cat grp.out grp.err)"

# rip run alone: passed on; its only child is the program; its witness holds its pipes only
rm -f ready
"$RIP" run -q -o t4 -- ./sigc "$TEST_TMP/ready" >one.out 2>one.err &
run=$!
T_PIDS="$T_PIDS $run"
wait_file "$TEST_TMP/ready" 30 || die "the program did not start: $(cat one.err)"
prog=$(cat ready)
kids=$(cat /proc/"$run"/task/*/children 2>/dev/null | tr -s ' \n' ' ' | sed 's/ $//')
[ "$kids" = "$prog" ] || fail "rip run's children: '$kids', want the program's pid only ($prog)"
witness_of "$run"
if [ -n "$witness" ]; then
	[ "$(cut -d' ' -f5 /proc/"$witness"/stat)" = "$(cut -d' ' -f5 /proc/"$run"/stat)" ] ||
		fail "the witness is not in rip run's process group"
	fds=$(ls /proc/"$witness"/fd | wc -l)
	[ "$fds" = 3 ] ||
		fail "the witness holds $fds descriptors, want its two pipes and signalfd: $(ls -l /proc/"$witness"/fd)"
fi
kill -TERM "$run"
wait "$run"
grep -q '^term 1 usr1 0 parent 1 self 0$' one.out ||
	fail "kill of rip run alone: want SIGTERM once, passed on by rip: $(cat one.out one.err)"
witness_gone "rip run's end"

# a kill -9 of rip run ends its witness too
rm -f ready
"$RIP" run -q -o t6 -- ./sigc "$TEST_TMP/ready" >k.out 2>k.err &
run=$!
wait_file "$TEST_TMP/ready" 30 || die "the program did not start: $(cat k.err)"
prog=$(cat ready)
witness_of "$run"
kill -9 "$run"
wait "$run" 2>/dev/null
kill -TERM "$prog" 2>/dev/null
witness_gone "rip run's kill -9"

# a program in a process group of its own: a kill of rip's group does not reach it, rip's does
rm -f ready
setsid sh -c "\"$RIP\" run -q -o t5 -- ./sigc \"$TEST_TMP/ready\" ownpgrp & \
	while [ ! -s \"$TEST_TMP/ready\" ]; do sleep 0.05; done; sleep 0.2; trap '' TERM; \
	kill -TERM 0; wait" >own.out 2>own.err
grep -q '^term 1 usr1 0 parent 1 self 0$' own.out ||
	fail "a program in its own group, rip's killed: want SIGTERM once, from rip: $(cat own.out own.err)"

for t in t1 t2 t3 t4 t5; do
	expect_status 0 "rip dump $t" "$RIP" dump $t
done
t_done
