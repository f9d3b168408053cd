/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/integ/phaseprog.c - an event producer in numbered phases, for the
 * tests of several recorders at once (tests/integ/record-two.sh):
 *
 *	phaseprog DIR PHASES N [THREADS]
 *
 * For each phase P from 0 to PHASES-1 it waits until the file DIR/go.P
 * exists, then THREADS threads (new ones each phase) each emit N
 * "phase:ev" events whose fields are the phase and the event's number,
 * and when all are done it creates DIR/done.P.  It prints "ready" once its
 * ring file is complete, and a line per phase done.  So a test knows exactly
 * which events were emitted between two moments of its own: those of the
 * phases it started in between.  It ends after the last phase.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

#define MAX_THREADS 64

RIP_EVENT_TYPE(ev_phase, "phase:ev", RIP_CAT_USER, RIP_FIELD(U64, "phase"), RIP_FIELD(U64, "i"));

static uint64_t phase, count;

static void *worker(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; i < count; i++)
		rip_event2(&ev_phase, phase, i);
	return NULL;
}

/* Wait for DIR/go.P: polled every ms, as a test cannot signal a process it did not start. */
static void wait_go(const char *dir, uint64_t p)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/go.%llu", dir, (unsigned long long)p);
	while (access(path, F_OK)) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
	}
}

static int mark_done(const char *dir, uint64_t p)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/done.%llu", dir, (unsigned long long)p);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		fprintf(stderr, "phaseprog: %s: %s\n", path, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_THREADS];
	uint64_t phases;
	int nthreads = 1, err;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: phaseprog DIR PHASES N [THREADS]\n");
		return 2;
	}
	phases = strtoull(argv[2], NULL, 10);
	count = strtoull(argv[3], NULL, 10);
	if (argc == 5)
		nthreads = atoi(argv[4]);
	if (nthreads < 1 || nthreads > MAX_THREADS) {
		fprintf(stderr, "phaseprog: 1 to %d threads\n", MAX_THREADS);
		return 2;
	}
	err = rip_ring_open(NULL);
	if (err && err != -EALREADY) {
		fprintf(stderr, "phaseprog: cannot open the ring: %s\n", strerror(-err));
		return 1;
	}
	rip_category_name(RIP_CAT_USER, "phase");
	/* the ring file is complete: a recorder may attach */
	printf("ready\n");
	fflush(stdout);
	for (phase = 0; phase < phases; phase++) {
		wait_go(argv[1], phase);
		for (int i = 0; i < nthreads; i++) {
			err = pthread_create(&th[i], NULL, worker, NULL);
			if (err) {
				fprintf(stderr, "phaseprog: pthread_create: %s\n", strerror(err));
				return 1;
			}
		}
		for (int i = 0; i < nthreads; i++)
			pthread_join(th[i], NULL);
		if (mark_done(argv[1], phase))
			return 1;
		printf("phase %llu: %d threads emitted %llu events each\n",
		       (unsigned long long)phase, nthreads, (unsigned long long)count);
		fflush(stdout);
	}
	return 0;
}
