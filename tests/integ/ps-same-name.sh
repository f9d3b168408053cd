#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip ps names the threads of a group that all have the same
# numbered name (three threads "pool7", as a program's pool or Python's
# threads, which inherit "python3.11", are named) "pool7 (x3)".  It said
# "some of pool7..7": a range, and a part of it, where all of them have
# one name.  The same in rip ps --stacks (a build with
# -finstrument-functions).  The threads block in a raw system call, so
# that they are grouped by their newest snap, not by a wait record.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
[ "$(uname -m)" = x86_64 ] || skip "the test's raw system call is x86-64's"

CC=${CC:-cc}
cat >"$TEST_TMP/main.c" <<'C'
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
__attribute__((noinline)) static void same_wait(void)
{
	for (;;) /* no wrapper sees it */
		__asm__ volatile("syscall" : : "a"(SYS_pause) : "rcx", "r11", "memory");
}
static void *same_name(void *arg)
{
	pthread_setname_np(pthread_self(), "pool7");
	same_wait();
	return arg;
}
int main(int argc, char **argv)
{
	pthread_t t;
	FILE *f;

	for (int i = 0; i < 3; i++)
		if (pthread_create(&t, NULL, same_name, NULL))
			return 1;
	usleep(100000); /* named */
	f = fopen(argv[1], "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	for (;;)
		pause();
}
C
"$CC" -g -o "$TEST_TMP/main" "$TEST_TMP/main.c" -pthread || die "cannot build main"
"$CC" -g -finstrument-functions -o "$TEST_TMP/main-fn" "$TEST_TMP/main.c" -pthread ||
	die "cannot build main-fn"

# check NAME OPTION PROG: rip ps OPTION of PROG under rip run names the group "pool7 (x3)"
check() {
	rm -f "$TEST_TMP/ready"
	t_bg "$RIP" run -q -o "$TEST_TMP/trace-$1" -- "$3" "$TEST_TMP/ready"
	wait_file "$TEST_TMP/ready" 30 || die "$1: the program did not start"
	pid=$(cat "$TEST_TMP/ready")
	T_PIDS="$T_PIDS $pid"
	# shellcheck disable=SC2086 # no option or one
	expect_status 0 "$1: rip ps $2 PID" "$RIP" ps $2 "$pid"
	grep -q 'pool7 (x3)' "$TEST_TMP/out" || fail "$1: the group's names: $(cat "$TEST_TMP/out")"
	grep -q 'pool7\.\.7' "$TEST_TMP/out" && fail "$1: a range of one name: $(cat "$TEST_TMP/out")"
	kill -9 "$pid"
}
check grouped "" "$TEST_TMP/main"
check stacks --stacks "$TEST_TMP/main-fn"
t_done
