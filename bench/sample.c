// SPDX-License-Identifier: Apache-2.0
/*
 * bench/sample.c - a CPU-bound program for bench/sample.sh: THREADS threads
 * each run ITERS rounds of a small call chain of arithmetic (no system
 * calls, no allocation), then the process prints the CPU time it used
 * (user + system, getrusage) and a checksum so the work cannot be dropped.
 *
 *   sample THREADS ITERS
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static unsigned long iters;

static __attribute__((noinline)) uint64_t leaf(uint64_t x)
{
	for (int i = 0; i < 64; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	__asm__ volatile("" : "+r"(x));
	return x;
}

static __attribute__((noinline)) uint64_t middle(uint64_t x)
{
	return leaf(x) ^ leaf(x >> 7);
}

static void *worker(void *arg)
{
	uint64_t x = (uintptr_t)arg + 1;

	for (unsigned long i = 0; i < iters; i++)
		x = middle(x);
	return (void *)(uintptr_t)x;
}

int main(int argc, char **argv)
{
	pthread_t t[64];
	uint64_t sum = 0;
	struct rusage ru;
	int n;

	if (argc != 3 || (n = atoi(argv[1])) < 1 || n > 64) {
		fprintf(stderr, "usage: sample THREADS ITERS\n");
		return 2;
	}
	iters = strtoul(argv[2], NULL, 10);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i))
			return 1;
	for (int i = 0; i < n; i++) {
		void *r;

		pthread_join(t[i], &r);
		sum += (uintptr_t)r;
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("cpu_ns %llu sum %llx\n",
	       (unsigned long long)((ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
				    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull),
	       (unsigned long long)sum);
	return 0;
}
