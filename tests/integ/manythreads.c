// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the program of integ/threads-many.sh: N threads alive at
 * once, all started before any of them works and none gone before all are
 * done (a barrier on each side).  Modes (argv[1]):
 *
 *   events N PER     each thread emits PER test:tick events (one u32)
 *   wide N PER       the first 10 threads emit PER test:wide events (four
 *                    u64: 36 bytes, so that a small ring wraps sooner), the
 *                    others one test:tick each (all of them take a ring,
 *                    and the trace stays small enough to check whole)
 *   leak N ROUNDS    each thread mallocs and frees ROUNDS blocks of 64
 *                    bytes, and leaks exactly one 100-byte block from
 *                    leak_once()
 *
 * With a third argument "wait", the threads stay alive after the work until
 * the process is killed (for snapshots of a live or killed process); the
 * line "ready" is printed when all of them are done.  Prints "emitted E"
 * (events, or blocks leaked) and exits 0 otherwise.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rip.h>

RIP_EVENT_TYPE(ev_tick, "test:tick", RIP_CAT_USER, RIP_FIELD(U32, "i"));
RIP_EVENT_TYPE(ev_wide, "test:wide", RIP_CAT_USER, RIP_FIELD(U64, "a"), RIP_FIELD(U64, "b"),
	       RIP_FIELD(U64, "c"), RIP_FIELD(U64, "d"));

static pthread_barrier_t start, done;
static const char *mode;
static long per;
static int wait_forever;

__attribute__((noinline)) static void leak_once(void)
{
	char *volatile p = malloc(100); /* per thread: the threads run this at once */

	memset(p, 1, 100);
}

static long wide_threads;

static void *worker(void *arg)
{
	long me = __atomic_fetch_add(&wide_threads, 1, __ATOMIC_RELAXED);

	pthread_barrier_wait(&start);
	if (!strcmp(mode, "events")) {
		for (long i = 0; i < per; i++)
			rip_event1(&ev_tick, (uint64_t)i);
	} else if (!strcmp(mode, "wide")) {
		if (me < 10)
			for (long i = 0; i < per; i++)
				rip_event4(&ev_wide, (uint64_t)i, 1, 2, 3);
		else
			rip_event1(&ev_tick, 0);
	} else {
		for (long i = 0; i < per; i++) {
			/* through a volatile: gcc drops a malloc/free pair it can see */
			char *volatile p = malloc(64);

			memset(p, 2, 64);
			free(p);
		}
		leak_once();
	}
	pthread_barrier_wait(&done);
	while (wait_forever)
		pause();
	return arg;
}

int main(int argc, char **argv)
{
	pthread_attr_t a;
	pthread_t *t;
	long n;

	if (argc < 4 || (strcmp(argv[1], "events") && strcmp(argv[1], "wide") &&
			 strcmp(argv[1], "leak"))) {
		fprintf(stderr, "usage: manythreads events|wide|leak N PER [wait]\n");
		return 2;
	}
	mode = argv[1];
	n = atol(argv[2]);
	per = atol(argv[3]);
	wait_forever = argc > 4 && !strcmp(argv[4], "wait");
	t = calloc((size_t)n, sizeof(*t));
	if (!t || n < 1)
		return 2;
	/* small stacks: thousands of threads */
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 << 10);
	pthread_barrier_init(&start, NULL, (unsigned)n + 1);
	pthread_barrier_init(&done, NULL, (unsigned)n + 1);
	for (long i = 0; i < n; i++) {
		if (pthread_create(&t[i], &a, worker, NULL)) {
			perror("pthread_create");
			return 1;
		}
	}
	pthread_barrier_wait(&start);
	pthread_barrier_wait(&done);
	if (wait_forever) {
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("emitted %ld\n", !strcmp(mode, "events") ? n * per
				: !strcmp(mode, "wide")	  ? (n < 10 ? n : 10) * per + (n > 10 ? n - 10 : 0)
							  : n);
	return 0;
}
