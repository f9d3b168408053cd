/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/bench.h - what the benchmark programs share: timing a loop in the
 * calling thread's CPU time (other processes' time slices on this shared
 * machine do not count; cache misses and contention between our own threads
 * do), and printing a figure as "KEY MEDIAN EACH..." lines that run.sh reads.
 */
#ifndef RIP_BENCH_H
#define RIP_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_MAX_REPS 64

/*
 * A measured function keeps its name and its shape: gcc's noipa (no
 * inlining, no cloning, nothing assumed across the call); clang has no
 * noipa, and noinline is the nearest it has.
 */
#if __has_attribute(noipa)
#define BENCH_NOINLINE __attribute__((noipa))
#else
#define BENCH_NOINLINE __attribute__((noinline))
#endif

static inline double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns per iteration of run(name, n) */
static inline double bench_time_loop(void (*run)(const char *, uint64_t), const char *name,
				     uint64_t n)
{
	double t0 = bench_now_ns();

	run(name, n);
	return (bench_now_ns() - t0) / (double)n;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static inline double bench_median(const double *v, int n)
{
	double s[BENCH_MAX_REPS];

	memcpy(s, v, sizeof(*v) * (size_t)n);
	qsort(s, (size_t)n, sizeof(*s), bench_cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* "KEY MEDIAN V0 V1 ..." */
static inline void bench_print_figure(const char *key, const double *v, int n)
{
	printf("%s %.3f", key, bench_median(v, n));
	for (int i = 0; i < n; i++)
		printf(" %.3f", v[i]);
	printf("\n");
}

/* key, then the median and each of num[r] / (k * den[r]) */
static inline void bench_print_ratio(const char *key, const double *num, const double *den,
				     double k, int n)
{
	double q[BENCH_MAX_REPS];

	for (int i = 0; i < n; i++)
		q[i] = den[i] > 0 ? num[i] / (k * den[i]) : 0;
	bench_print_figure(key, q, n);
}

#endif /* RIP_BENCH_H */
