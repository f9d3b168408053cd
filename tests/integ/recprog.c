/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/integ/recprog.c - an event producer for the rip record tests, with
 * the contract of examples/events plus pacing:
 *
 *	recprog N [--threads T] [--forever] [--rate R]
 *
 * Each of T threads emits "events:count" events whose u64 field "n" counts
 * 0..N-1 (on and on with --forever, until SIGINT or SIGTERM; SIGKILL is
 * fine too: the trace's last counter tells how many were emitted).  With
 * --rate, each thread emits R events per second in bursts of R/1000 every
 * millisecond, so that a 10-second test records a bounded volume while the
 * bursts still overrun small rings.  At the end: "thread I emitted N".
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rip.h>

#define MAX_THREADS 1000

RIP_EVENT_TYPE(ev_count, "events:count", RIP_CAT_USER, RIP_FIELD(U64, "n"));

static uint64_t count, rate;
static int forever;
static volatile sig_atomic_t stop;

struct worker {
	pthread_t th;
	uint64_t emitted;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t n = 0, burst = rate ? (rate + 999) / 1000 : UINT64_MAX;
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	while ((forever || n < count) && !stop) {
		for (uint64_t i = 0; i < burst && (forever || n < count) && !stop; i++, n++)
			rip_event1(&ev_count, n);
		if (!rate)
			continue;
		next.tv_nsec += 1000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	w->emitted = n;
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: recprog N [--threads T] [--forever] [--rate R]\n");
	return 2;
}

int main(int argc, char **argv)
{
	static struct worker w[MAX_THREADS];
	int nthreads = 1, have_n = 0, err;
	char *end;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			nthreads = (int)strtol(argv[++i], &end, 10);
			if (*end || nthreads < 1 || nthreads > MAX_THREADS)
				return usage();
		} else if (!strcmp(argv[i], "--rate") && i + 1 < argc) {
			rate = strtoull(argv[++i], &end, 10);
			if (*end)
				return usage();
		} else if (!strcmp(argv[i], "--forever")) {
			forever = 1;
		} else if (!have_n && argv[i][0] >= '0' && argv[i][0] <= '9') {
			count = strtoull(argv[i], &end, 10);
			if (*end)
				return usage();
			have_n = 1;
		} else {
			return usage();
		}
	}
	if (!have_n && !forever)
		return usage();
	/* RIP_RING opened it before main; else the defaults and the environment. */
	err = rip_ring_open(NULL);
	if (err && err != -EALREADY) {
		fprintf(stderr, "recprog: cannot open the ring: %s\n", strerror(-err));
		return 1;
	}
	rip_category_name(RIP_CAT_USER, "events");
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (int i = 0; i < nthreads; i++) {
		err = pthread_create(&w[i].th, NULL, worker_main, &w[i]);
		if (err) {
			fprintf(stderr, "recprog: pthread_create: %s\n", strerror(err));
			stop = 1;
			nthreads = i;
		}
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(w[i].th, NULL);
	for (int i = 0; i < nthreads; i++)
		printf("thread %d emitted %llu\n", i, (unsigned long long)w[i].emitted);
	return 0;
}
