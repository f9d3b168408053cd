// SPDX-License-Identifier: Apache-2.0
/*
 * bench/leakthreads.c - issue 27's workload, as a user would write it: N
 * threads all alive at once (a barrier before any works and one after all
 * are done), each doing PAIRS malloc/free pairs of 32 to 95 bytes, then
 * leaking exactly one 100-byte block from leak_once().  bench/leakthreads.sh
 * runs it plain, under `rip run --mem` and under heaptrack.
 *
 * It is a plain program: no librip, glibc's default thread stacks, built
 * like the (`-O1 -g -pthread`, without frame pointers, see the
 * Makefile), so that the tracers see what users run.  The sizes come from a
 * per-thread xorshift PRNG; the block goes through a volatile pointer and is
 * written to, so that the compiler keeps every pair.
 *
 *   leakthreads N PAIRS     prints "leaked N" and exits 0 (1 when a thread
 *                           could not be started or a malloc failed)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_barrier_t start, done;
static long pairs;
static int failed;

/* the one leak of each thread: N blocks of 100 bytes at this function in all */
__attribute__((noinline)) static void leak_once(void)
{
	char *volatile p = malloc(100);

	if (!p) {
		__atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
		return;
	}
	memset(p, 1, 100);
}

static void *worker(void *arg)
{
	uint64_t rng = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;

	pthread_barrier_wait(&start);
	for (long i = 0; i < pairs; i++) {
		rng ^= rng >> 12;
		rng ^= rng << 25;
		rng ^= rng >> 27;
		size_t size = 32 + (rng * 0x2545f4914f6cdd1dull >> 58); /* 32..95 */
		char *volatile p = malloc(size);

		if (!p) {
			__atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
			break;
		}
		p[0] = (char)i;
		p[size - 1] = (char)size;
		free(p);
	}
	leak_once();
	pthread_barrier_wait(&done);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t *t;
	long n;

	if (argc != 3 || (n = atol(argv[1])) < 1 || (pairs = atol(argv[2])) < 0) {
		fprintf(stderr, "usage: leakthreads N PAIRS\n");
		return 2;
	}
	t = calloc((size_t)n, sizeof(*t));
	if (!t) {
		perror("leakthreads: calloc");
		return 1;
	}
	pthread_barrier_init(&start, NULL, (unsigned)n + 1);
	pthread_barrier_init(&done, NULL, (unsigned)n + 1);
	for (long i = 0; i < n; i++) {
		int e = pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));

		if (e) {
			fprintf(stderr, "leakthreads: pthread_create, thread %ld of %ld: %s\n",
				i + 1, n, strerror(e));
			return 1; /* the started ones wait at the barrier: exit takes them */
		}
	}
	pthread_barrier_wait(&start);
	pthread_barrier_wait(&done);
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	if (failed) {
		fprintf(stderr, "leakthreads: malloc failed\n");
		return 1;
	}
	printf("leaked %ld\n", n);
	return 0;
}
