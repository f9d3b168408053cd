#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Timeout: 120
#
# Description: thread exits free nothing the trace did not see made.  A
# program with __thread variables and a dlopen'ed library with TLS of its
# own creates and joins 100 threads one after the other (glibc reuses their
# cached stacks) and then 100 at once (their stacks are freed:
# _dl_deallocate_tls); every thread touches both TLS blocks and mallocs.
# Under rip run --mem (whose libunwind, loaded by dlopen, has a dynamic TLS
# block per thread that glibc frees with the thread), rip report --json
# counts no free of a block never seen allocated and nothing allocated
# again while live, and rip report's text says neither.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3
CC=${CC:-cc}

cat >"$TEST_TMP/tl.c" <<'C'
__thread char tl_big[10000];
__thread int tl_small = 5;

int touch(int i)
{
	tl_big[i % 10000] = (char)i;
	return tl_small + tl_big[0];
}
C
cat >"$TEST_TMP/th.c" <<'C'
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static __thread char mine[5000];
static int (*touch)(int);
static pthread_barrier_t all;

static void *run(void *a)
{
	long i = (long)a;
	void *p = malloc(100 + (size_t)i);

	mine[i % 5000] = 1;
	if (i >= 100)
		pthread_barrier_wait(&all);
	free(p);
	return (void *)(long)touch((int)i);
}

int main(int argc, char **argv)
{
	pthread_t t[100];
	void *h = dlopen(argv[1], RTLD_NOW);

	if (!h || !(touch = (int (*)(int))dlsym(h, "touch")))
		return 2;
	for (long i = 0; i < 100; i++) {
		if (pthread_create(&t[0], NULL, run, (void *)i))
			return 3;
		pthread_join(t[0], NULL);
	}
	pthread_barrier_init(&all, NULL, 100);
	for (long i = 0; i < 100; i++)
		if (pthread_create(&t[i], NULL, run, (void *)(100 + i)))
			return 3;
	for (long i = 0; i < 100; i++)
		pthread_join(t[i], NULL);
	printf("threads done\n");
	return 0;
}
C
"$CC" -shared -fPIC -g -o "$TEST_TMP/libtl.so" "$TEST_TMP/tl.c" &&
	"$CC" -O0 -g -pthread -o "$TEST_TMP/th" "$TEST_TMP/th.c" -ldl ||
	die "cannot build the test program"

expect_status 0 "rip run" "$RIP" run --mem -q -o "$TEST_TMP/trace" -- "$TEST_TMP/th" \
	"$TEST_TMP/libtl.so"
grep -q '^threads done$' "$TEST_TMP/out" || fail "the program did not run to its end"
expect_status 0 "rip report --json" "$RIP" report --json "$TEST_TMP/trace"
python3 - "$TEST_TMP/out" <<'PY' || fail "rip report: thread exits free blocks never seen"
import json, sys
r = json.load(open(sys.argv[1]))
m = r["memory"]
assert r["complete"], "incomplete trace"
assert m["frees_unseen"] == 0, ("frees of blocks never seen allocated", m["frees_unseen"])
assert m["allocated_again"] == 0, ("allocated again while live", m["allocated_again"])
assert m["allocations"] >= 200, ("the threads' mallocs are missing", m["allocations"])
PY
expect_status 0 "rip report" "$RIP" report "$TEST_TMP/trace"
if grep -E 'never seen allocated: [1-9]|allocated again while live: [1-9]' "$TEST_TMP/out"; then
	fail "rip report's text says so too"
fi
t_done
