/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/stream.c - sustained event rate for bench/relayd.sh: T threads emit
 * N events each, one u64 field, as fast as they can, with rip_event1() or
 * (built with -DBENCH_LTTNG, as build/bench/stream-lttng) the LTTng-UST
 * tracepoint ripbench:count.  Under a lossless consumer (rip run in block
 * mode, an LTTng channel with --blocking-timeout=inf) the writers wait for
 * the consumer, so the rate is the consumer's.
 *
 *   stream N T     prints "events E ns NS rate EVENTS_PER_S"
 *
 * NS runs from the start of the first thread to the end of the last.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <rip.h>

#ifdef BENCH_LTTNG
#define TRACEPOINT_DEFINE
#include "lttng-tp.h"
#endif

RIP_EVENT_TYPE(ev_count, "stream:count", RIP_CAT_USER, RIP_FIELD(U64, "n"));

static uint64_t n_per_thread;

static void *writer(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg << 40;

	for (uint64_t i = 0; i < n_per_thread; i++) {
#ifdef BENCH_LTTNG
		tracepoint(ripbench, count, base | i);
#else
		rip_event1(&ev_count, base | i);
#endif
	}
	return NULL;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	int threads;
	int64_t t0, t1;

	if (argc != 3) {
		fprintf(stderr, "usage: stream N THREADS\n");
		return 2;
	}
	n_per_thread = strtoull(argv[1], NULL, 10);
	threads = atoi(argv[2]);
	if (threads < 1 || threads > 64 || !n_per_thread)
		return 2;
	t0 = now_ns();
	for (int t = 0; t < threads; t++)
		if (pthread_create(&th[t], NULL, writer, (void *)(uintptr_t)t))
			return 1;
	for (int t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
	t1 = now_ns();
	printf("events %llu ns %lld rate %.0f\n", (unsigned long long)n_per_thread * threads,
	       (long long)(t1 - t0), (double)n_per_thread * threads * 1e9 / (double)(t1 - t0));
	return 0;
}
