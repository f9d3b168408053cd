// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the program of integ/ps-coros.sh.  Makes COROS coroutines,
 * "co-0" .. "co-(COROS-1)", each switched in once on the main thread,
 * snapped in one of four functions (coro_step_<i % 4>) and switched out:
 * parked.  Then THREADS threads snap in thread_park and block in read(2) on
 * a pipe nobody writes.  The ring comes from the environment (RIP_RING,
 * RIP_SLOTS).  Writes "ready" to READY once all are parked, and waits to be
 * killed.
 *
 *	coros_prog READY COROS THREADS
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rip.h>

static int park_fd = -1;
static atomic_int parked;
static const char *volatile step_tag;

/* clang has no noclone: noinline is the nearest it has */
#if __has_attribute(noclone)
#define STEP_NOINLINE __attribute__((noinline, noclone))
#else
#define STEP_NOINLINE __attribute__((noinline))
#endif

/* Four places to park in; the tag store keeps them apart. */
#define STEP(n)                                                                                    \
	STEP_NOINLINE static void coro_step_##n(void)                                              \
	{                                                                                          \
		step_tag = #n;                                                                     \
		rip_snap();                                                                        \
	}
STEP(0)
STEP(1)
STEP(2)
STEP(3)
static void (*const steps[4])(void) = { coro_step_0, coro_step_1, coro_step_2, coro_step_3 };

STEP_NOINLINE static void thread_park(void)
{
	char c;

	rip_snap();
	atomic_fetch_add(&parked, 1);
	while (read(park_fd, &c, 1) < 0 && errno == EINTR)
		;
}

static void *thread_main(void *arg)
{
	(void)arg;
	thread_park();
	return NULL;
}

int main(int argc, char **argv)
{
	long ncoros = argc > 3 ? atol(argv[2]) : -1, nthreads = argc > 3 ? atol(argv[3]) : -1;
	struct rip_coro *co;
	char name[32];
	pthread_t th;
	int fds[2], err;
	FILE *f;

	if (ncoros < 0 || nthreads < 0 || nthreads > 1000) {
		fprintf(stderr, "usage: coros_prog READY COROS THREADS\n");
		return 2;
	}
	if (pipe(fds)) {
		perror("coros_prog: pipe");
		return 1;
	}
	park_fd = fds[0];
	for (long i = 0; i < ncoros; i++) {
		snprintf(name, sizeof(name), "co-%ld", i);
		err = rip_coro_create(name, &co);
		if (err) {
			fprintf(stderr, "coros_prog: coroutine %ld: error %d\n", i, err);
			return 1;
		}
		rip_coro_switch_in(co);
		steps[i % 4]();
		rip_coro_switch_out();
	}
	for (long i = 0; i < nthreads; i++) {
		err = pthread_create(&th, NULL, thread_main, NULL);
		if (err) {
			fprintf(stderr, "coros_prog: thread %ld: error %d\n", i, err);
			return 1;
		}
	}
	while (atomic_load(&parked) < nthreads)
		usleep(1000);
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "ready\n") < 0 || fclose(f)) {
		perror("coros_prog: READY");
		return 1;
	}
	for (;;)
		pause();
}
