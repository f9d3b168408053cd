#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: functions built with -fpatchable-function-entry=N,M (M nops
# before the entry) are patched at their entry.  The section lists where
# the nops begin, M bytes before the function: rip enable patched there,
# in bytes that never run, said "patched 7 functions" and recorded
# nothing, and rip run --functions=GLOB picked none.  A program built by
# gcc with =16,8 calls mid N times and leaf 2N: rip run --functions must
# count exactly that; rip enable PID func on the program running must
# record calls of both; and clang's =16 (a 10-byte nop then a 6-byte one,
# which librip does not replace) must be refused with a message that says
# what to build with, not a bare errno.
# Timeout: 60
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3 gcc clang
rep=$PWD/tests/data/fn-report.py
tests=$PWD/tests
cd "$TEST_TMP" || die "no TEST_TMP"

cat >prog.c <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

static volatile long sink;

__attribute__((noinline)) void leaf(long x)
{
	sink += x;
}

__attribute__((noinline)) void mid(long x)
{
	leaf(x);
	leaf(x + 1);
}

static char **args;

/* a thread (the watcher that patches starts with the first): until the file args[2] appears */
static void *loop(void *arg)
{
	long n = atol(args[1]);

	(void)arg;
	while (access(args[2], F_OK))
		for (long i = 0; i < n; i++)
			mid(i);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = atol(argv[1]);

	if (argc > 3) { /* our pid in argv[3] once the thread runs */
		pthread_t t;

		args = argv;
		if (pthread_create(&t, NULL, loop, NULL) || t_ready(argv[3]))
			return 2;
		pthread_join(t, NULL);
		return 0;
	}
	for (long i = 0; i < n; i++)
		mid(i);
	return 0;
}
C
gcc -O2 -g -pthread -fpatchable-function-entry=16,8 -fno-optimize-sibling-calls -I"$tests" -o prog prog.c ||
	die "cannot build with gcc"
clang -O2 -g -pthread -fpatchable-function-entry=16 -I"$tests" -o prog16 prog.c || die "cannot build with clang"

# report T: "FUNCTION CALLS" of trace T, one a line
report() {
	"$RIP" report --functions --json "$1" | python3 "$rep" | awk 'NF == 3 { print $1, $2 }'
}

n=1000
"$RIP" run -q --functions=leaf --functions=mid -o a -- ./prog $n 2>a.err ||
	fail "rip run --functions: $(cat a.err)"
report a >a.txt
printf 'leaf %d\nmid %d\n' $((2 * n)) $n >want.txt
cmp -s a.txt want.txt || fail "rip run --functions counted $(tr '\n' ' ' <a.txt), want $(tr '\n' ' ' <want.txt)"

t_bg "$RIP" run -q -o b -- ./prog 1000 stop ready
run=$T_LAST
wait_file ready 30 || die "the program did not start"
pid=$(cat ready)
T_PIDS="$T_PIDS $pid"
"$RIP" enable "$pid" func >en.out 2>en.err || fail "rip enable $pid func: $(cat en.err)"
sleep 0.5
: >stop
wait "$run" || fail "rip run of the program enabled: $(cat en.err)"
report b >b.txt
awk '$2 > 0 { n++ } END { exit n != 2 }' b.txt ||
	fail "rip enable recorded $(tr '\n' ' ' <b.txt), want calls of leaf and mid ($(cat en.out))"

"$RIP" run --functions='*' -o c -- ./prog16 10 >c.out 2>c.err
grep -q "no function patched: the nops at their entries are not 5 bytes librip can replace (build with -fpatchable-function-entry=5" c.err ||
	fail "clang's =16 is not refused with a clear message: $(cat c.err)"
t_done
