/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/integ/recprog.c - an event producer for the rip record tests, with
 * the contract of examples/events plus pacing:
 *
 *	recprog N [--threads T] [--forever] [--rate R] [--progress FILE] [--noise]
 *		  [--spin NS]
 *
 * Each of T threads emits "events:count" events whose u64 field "n" counts
 * 0..N-1 (on and on with --forever, until SIGINT or SIGTERM; SIGKILL is
 * fine too: the trace's last counter tells how many were emitted).  With
 * --rate, each thread emits R events per second in bursts of R/1000 every
 * millisecond, so that a 10-second test records a bounded volume while the
 * bursts still overrun small rings.  With --progress, FILE holds one line,
 * the events emitted so far (all threads; whether recorded or not), and is
 * replaced (renamed over) every 10 ms: a test waits on it instead of
 * sleeping.  With --noise, every fourth counter is followed by an
 * "events:noise" event whose u64 field "r" is drawn at random: a trace that
 * packs to about 2 bytes an event, for the tests of --max-size and
 * --rotate, where the counters alone pack to a tenth of a byte.  At the
 * end: "thread I emitted N".
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rip.h>

#define MAX_THREADS 1000

RIP_EVENT_TYPE(ev_count, "events:count", RIP_CAT_USER, RIP_FIELD(U64, "n"));
RIP_EVENT_TYPE(ev_noise, "events:noise", RIP_CAT_USER, RIP_FIELD(U64, "r"));

static uint64_t count, rate, spin_ns;
static int forever, noise;
static volatile sig_atomic_t stop;
static atomic_int running;

struct worker {
	pthread_t th;
	uint64_t emitted;
	atomic_uint_fast64_t progress; /* events emitted so far, for --progress */
};

/* Busy for ns nanoseconds (on the CPU: sampled). */
static void spin(uint64_t ns)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)b.tv_nsec -
		       (uint64_t)a.tv_nsec <
	       ns);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t n = 0, burst = rate ? (rate + 999) / 1000 : UINT64_MAX;
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)w;
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	while ((forever || n < count) && !stop) {
		for (uint64_t i = 0; i < burst && (forever || n < count) && !stop; i++, n++) {
			rip_event1(&ev_count, n);
			if (spin_ns)
				spin(spin_ns);
			if (noise && n % 4 == 0) {
				rng ^= rng >> 12;
				rng ^= rng << 25;
				rng ^= rng >> 27;
				rip_event1(&ev_noise, rng * 2685821657736338717ull);
			}
		}
		atomic_store_explicit(&w->progress, n, memory_order_relaxed);
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
	atomic_store(&w->progress, n);
	atomic_fetch_sub(&running, 1);
	return NULL;
}

/* FILE.tmp, then renamed over FILE: a reader never sees half a line. */
static void write_progress(const char *path, struct worker *w, int nthreads)
{
	char tmp[4096], line[32];
	uint64_t sum = 0;
	FILE *f;

	for (int i = 0; i < nthreads; i++)
		sum += atomic_load_explicit(&w[i].progress, memory_order_relaxed);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(line, sizeof(line), "%llu\n", (unsigned long long)sum);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fputs(line, f);
	if (fclose(f) == 0)
		rename(tmp, path);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: recprog N [--threads T] [--forever] [--rate R] [--progress FILE] "
		"[--noise] [--spin NS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	static struct worker w[MAX_THREADS];
	int nthreads = 1, have_n = 0, err;
	const char *progress = NULL;
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
		} else if (!strcmp(argv[i], "--spin") && i + 1 < argc) {
			spin_ns = strtoull(argv[++i], &end, 10);
			if (*end)
				return usage();
		} else if (!strcmp(argv[i], "--progress") && i + 1 < argc) {
			progress = argv[++i];
		} else if (!strcmp(argv[i], "--forever")) {
			forever = 1;
		} else if (!strcmp(argv[i], "--noise")) {
			noise = 1;
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
		atomic_fetch_add(&running, 1);
		err = pthread_create(&w[i].th, NULL, worker_main, &w[i]);
		if (err) {
			fprintf(stderr, "recprog: pthread_create: %s\n", strerror(err));
			atomic_fetch_sub(&running, 1);
			stop = 1;
			nthreads = i;
		}
	}
	while (progress && atomic_load(&running) > 0) {
		struct timespec tick = { 0, 10000000 };

		write_progress(progress, w, nthreads);
		nanosleep(&tick, NULL);
	}
	if (progress)
		write_progress(progress, w, nthreads);
	for (int i = 0; i < nthreads; i++)
		pthread_join(w[i].th, NULL);
	for (int i = 0; i < nthreads; i++)
		printf("thread %d emitted %llu\n", i, (unsigned long long)w[i].emitted);
	return 0;
}
