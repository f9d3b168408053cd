/* SPDX-License-Identifier: Apache-2.0 */
/*
 * examples/events.c - the events API in one page: define an event type,
 * name its category, emit it from several threads.
 *
 *	build/examples/events N [--threads T] [--forever] [--mode=overwrite|discard|block]
 *
 * Each of T threads (default 1) emits N events "events:count" whose one
 * field "n" counts 0, 1, ... N-1 (with --forever it counts on until the
 * program gets SIGINT or SIGTERM).  At the end, and only then, it prints one
 * line per thread on stdout, "thread I emitted N" (I from 0), so that a test
 * can compare with what a trace holds:
 *
 *	rip run -o /tmp/t -- build/examples/events 1000000 --threads 2
 *	rip dump /tmp/t | grep -c events:count
 *
 * The ring file is opened here unless the program runs under `rip run` (or
 * with RIP_RING set), which opens it before main(): rip_ring_open() then
 * says -EALREADY and the mode is the one the ring was opened with.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rip.h>

#define MAX_THREADS 1000

/* Category bit 8, the first one free for programs: `rip disable PID events` turns it off. */
#define CAT_EVENTS RIP_CAT_USER

/* The event type: registered in the ring file before main(), so every reader knows it. */
RIP_EVENT_TYPE(ev_count, "events:count", CAT_EVENTS, RIP_FIELD(U64, "n"));

static uint64_t count;	 /* events per thread */
static int forever;	 /* count on until SIGINT or SIGTERM */
static volatile sig_atomic_t stop;

struct worker {
	pthread_t th;
	int index;
	uint64_t emitted;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char name[32];
	uint64_t n;

	snprintf(name, sizeof(name), "events-%d", w->index);
	rip_thread_set_name(name);
	for (n = 0; (forever || n < count) && !stop; n++)
		rip_event1(&ev_count, n); /* a bit test when the category is off */
	w->emitted = n;
	return NULL;
}

static void on_signal(int sig)
{
	stop = 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: events N [--threads T] [--forever] "
			"[--mode=overwrite|discard|block]\n");
	return 2;
}

int main(int argc, char **argv)
{
	RIP_OPTS(rip_ring_opts, opts);
	static struct worker w[MAX_THREADS];
	const char *mode = NULL;
	int nthreads = 1, have_n = 0, failed = 0, err;
	char *end;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			nthreads = (int)strtol(argv[++i], &end, 10);
			if (*end || nthreads < 1 || nthreads > MAX_THREADS)
				return usage();
		} else if (!strcmp(argv[i], "--forever")) {
			forever = 1;
		} else if (!strncmp(argv[i], "--mode=", 7)) {
			mode = argv[i] + 7;
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

	/* What a full ring does; ev_mode is the enum plus one (0: $RIP_MODE or overwrite). */
	if (!mode)
		opts.ev_mode = 0;
	else if (!strcmp(mode, "overwrite"))
		opts.ev_mode = RIP_MODE_OVERWRITE + 1;
	else if (!strcmp(mode, "discard"))
		opts.ev_mode = RIP_MODE_DISCARD + 1;
	else if (!strcmp(mode, "block"))
		opts.ev_mode = RIP_MODE_BLOCK + 1;
	else
		return usage();
	/* One event ring per thread that emits at once. */
	opts.ev_rings = nthreads < 64 ? 64 : (uint32_t)nthreads;
	err = rip_ring_open(&opts);
	if (err == -EALREADY && mode)
		fprintf(stderr, "events: the ring was already open; --mode=%s is ignored\n", mode);
	else if (err && err != -EALREADY) {
		fprintf(stderr, "events: cannot open the ring: %s\n", strerror(-err));
		return 1;
	}
	rip_category_name(CAT_EVENTS, "events");

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (int i = 0; i < nthreads; i++) {
		w[i].index = i;
		err = pthread_create(&w[i].th, NULL, worker_main, &w[i]);
		if (err) {
			fprintf(stderr, "events: pthread_create: %s\n", strerror(err));
			stop = failed = 1;
			nthreads = i;
			break;
		}
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(w[i].th, NULL);
	for (int i = 0; i < nthreads; i++)
		printf("thread %d emitted %llu\n", i, (unsigned long long)w[i].emitted);
	return failed;
}
