/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/funcs.c - the cost of function tracing per call (issue 31's
 * budgets), one program built several ways (the Makefile):
 *
 *   funcs        plain: no instrumentation
 *   funcs-instr  -finstrument-functions, the hooks librip's (lib/func.c):
 *                off without a ring (RIP_RING unset), the shadow stack alone
 *                (RIP_RING=1 RIP_DISABLE=func), timed records too
 *                (RIP_RING=1), and under uftrace (its libmcount takes the
 *                hooks)
 *   funcs-empty  -finstrument-functions, hooks of its own that do nothing
 *                (bench/funcs-hooks.c): what the compiler's hook calls cost
 *   funcs-floor  -finstrument-functions, hooks of its own that read the TSC
 *                and store 8 bytes into a thread-local buffer: the floor of
 *                a timed record per entry and per exit
 *   funcs-patch  -fpatchable-function-entry=5: nops at each entry, never
 *                patched; or patched by rip enable PID func under rip run
 *                (GATE GO below), and under uftrace record -P (its dynamic
 *                tracing)
 *
 *   funcs time REPS N WORK   best of REPS timings of N chains, each 8 calls
 *                            deep through 8 distinct functions that do WORK
 *                            rounds of arithmetic each (0: none): prints
 *                            "ns_per_call NS" (the calling thread's CPU time)
 *   funcs time REPS N WORK GATE GO
 *                            the same, once a thread started (rip run's
 *                            watcher starts with it), GATE written and the
 *                            file GO there: the functions patched meanwhile
 *   funcs threads T N        T threads, N chains each, then exit 0
 *
 * The chain's result is checked, so that no build computes anything else.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define NOFN __attribute__((no_instrument_function))

static volatile unsigned work_rounds;

#define CHAIN_FN(N, NEXT)                                                                          \
	BENCH_NOINLINE static uint64_t f##N(uint64_t x)                                            \
	{                                                                                          \
		unsigned r = work_rounds;                                                          \
		for (unsigned i = 0; i < r; i++)                                                   \
			x = x * 0x9E3779B97F4A7C15ull + i;                                         \
		return NEXT + N;                                                                   \
	}

BENCH_NOINLINE static uint64_t f9(uint64_t x)
{
	return x ^ 0x55;
}
CHAIN_FN(8, f9(x))
CHAIN_FN(7, f8(x))
CHAIN_FN(6, f7(x))
CHAIN_FN(5, f6(x))
CHAIN_FN(4, f5(x))
CHAIN_FN(3, f4(x))
CHAIN_FN(2, f3(x))
CHAIN_FN(1, f2(x))

#define CALLS_PER_CHAIN 9 /* f1 .. f9 */

NOFN BENCH_NOINLINE static uint64_t run_chains(uint64_t n)
{
	uint64_t s = 0;

	for (uint64_t i = 0; i < n; i++)
		s += f1(i);
	return s;
}

/* What run_chains(n) returns, worked out without the chain (WORK 0 only). */
NOFN static uint64_t expect(uint64_t n)
{
	uint64_t s = 0;

	for (uint64_t i = 0; i < n; i++)
		s += (i ^ 0x55) + 8 + 7 + 6 + 5 + 4 + 3 + 2 + 1;
	return s;
}

NOFN static void *thread_main(void *arg)
{
	uint64_t n = (uint64_t)(uintptr_t)arg;

	return (void *)(uintptr_t)(run_chains(n) != expect(n));
}

/* Wait for the file GO. */
NOFN __attribute__((patchable_function_entry(0, 0))) static void *gate_main(void *go)
{
	while (access((const char *)go, F_OK))
		usleep(1000);
	return NULL;
}

/* Start a thread that waits for GO, write GATE, wait for the thread.  0 or -1. */
NOFN __attribute__((patchable_function_entry(0, 0))) static int gate(const char *path,
								     const char *go)
{
	pthread_t t;
	FILE *f;

	if (pthread_create(&t, NULL, gate_main, (void *)go))
		return -1;
	f = fopen(path, "w");
	if (!f || fputs("gate\n", f) < 0 || fclose(f))
		return -1;
	pthread_join(t, NULL);
	return 0;
}

NOFN int main(int argc, char **argv)
{
	if ((argc == 5 || argc == 7) && !strcmp(argv[1], "time")) {
		int reps = atoi(argv[2]);
		uint64_t n = strtoull(argv[3], NULL, 10);
		double best = 1e300;

		work_rounds = (unsigned)atoi(argv[4]);
		if (reps < 1 || reps > BENCH_MAX_REPS || !n)
			return 2;
		if (argc == 7 && gate(argv[5], argv[6]))
			return 3;
		if (!work_rounds && run_chains(1000) != expect(1000)) {
			fprintf(stderr, "funcs: the chain computes something else\n");
			return 1;
		}
		for (int r = 0; r < reps; r++) {
			double t0 = bench_now_ns(), t;

			run_chains(n);
			t = (bench_now_ns() - t0) / (double)(n * CALLS_PER_CHAIN);
			if (t < best)
				best = t;
		}
		printf("ns_per_call %.3f\n", best);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "threads")) {
		int nt = atoi(argv[2]);
		uint64_t n = strtoull(argv[3], NULL, 10);
		pthread_t *t = calloc((size_t)(nt > 0 ? nt : 1), sizeof(*t));
		int bad = 0;

		if (!t || nt < 1 || nt > 100000)
			return 2;
		for (int i = 0; i < nt; i++)
			if (pthread_create(&t[i], NULL, thread_main, (void *)(uintptr_t)n))
				return 3;
		for (int i = 0; i < nt; i++) {
			void *r;

			pthread_join(t[i], &r);
			bad += r != NULL;
		}
		free(t);
		return bad ? 1 : 0;
	}
	fprintf(stderr, "usage: funcs time REPS N WORK [GATE GO] | funcs threads T N\n");
	return 2;
}
