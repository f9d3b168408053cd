/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/many.c - a process with many threads and coroutines for timing
 * `rip ps` on a big ring, live and post-mortem.
 *
 *   many [THREADS [COROS]]      default 10000 threads, 1000000 coroutines
 *
 * It opens a ring with a slot for each of them, starts THREADS threads on
 * 64 KiB stacks that snap a few times in one of PARKS functions and then
 * block in read(2) on a pipe nobody writes, and creates COROS coroutine
 * slots that it switches in and out on the main thread, snapping once in one
 * of PARKS other functions.  Then it prints
 *
 *	ready PATH PID THREADS COROS SETUP_MS
 *
 * on stdout and sleeps until killed.  bench/run.sh times rip ps on it, then
 * kills it with SIGKILL and times rip ps on the file it leaves.
 *
 * Built with -finstrument-functions as many-fn (-DBENCH_FN), for rip ps
 * --stacks (bench/funcs.sh): each thread parks three traced calls deep, and
 * each coroutine switches out inside its step function, which it leaves
 * parked on its shadow stack (its exit then comes on the main thread's,
 * where it has no frame, and changes nothing).
 *
 * The machine's tasks (kernel pid_max) are shared, so it is a careful
 * neighbour: it never takes the last RESERVE tasks of the system, and when
 * pthread_create fails with EAGAIN it says how many threads it got and goes
 * on with those; THREADS on the ready line is the number it really runs.
 * It dies with its parent (PR_SET_PDEATHSIG) and after LIFETIME seconds at
 * the latest, so no stray copy holds 10,000 tasks.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

#include "bench.h"

#define PARKS 20
#define STACK_SIZE (64 * 1024)
#define RESERVE 2048 /* tasks left to the rest of the machine */
#define LIFETIME 300 /* seconds before the watchdog (SIGALRM) ends the process */

static int park_pipe[2];
static unsigned parked;

/* Every thread ends here, inside its park function, until the process dies. */
BENCH_NOINLINE static void park_block(void)
{
	char c;

	__atomic_fetch_add(&parked, 1, __ATOMIC_RELEASE);
	while (read(park_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
}

/* Twenty distinct places for rip ps to resolve: three snaps, then block. */
#define PARK_FN(N)                                                                                 \
	BENCH_NOINLINE static void park_##N(void)                                                  \
	{                                                                                          \
		rip_snap();                                                                        \
		rip_snap();                                                                        \
		rip_snap();                                                                        \
		park_block();                                                                      \
	}
/* And twenty for the coroutines: one snap while switched in. */
#ifdef BENCH_FN
#define STEP_FN(N)                                                                                 \
	BENCH_NOINLINE static void step_##N(void)                                                  \
	{                                                                                          \
		rip_snap();                                                                        \
		rip_coro_switch_out();                                                             \
	}
#else
#define STEP_FN(N)                                                                                 \
	BENCH_NOINLINE static void step_##N(void)                                                  \
	{                                                                                          \
		rip_snap();                                                                        \
	}
#endif
#define TWENTY(X)                                                                                  \
	X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)      \
		X(16) X(17) X(18) X(19)

TWENTY(PARK_FN)
TWENTY(STEP_FN)

#define FN_REF(N) park_##N,
static void (*const park_fns[PARKS])(void) = { TWENTY(FN_REF) };
#undef FN_REF
#define FN_REF(N) step_##N,
static void (*const step_fns[PARKS])(void) = { TWENTY(FN_REF) };
#undef FN_REF

static void *thread_main(void *arg)
{
	park_fns[(uintptr_t)arg % PARKS]();
	return NULL;
}

/* How many more tasks the system can take, keeping RESERVE for others; -1 if unknown. */
static long task_headroom(void)
{
	long pid_max = -1, threads_max = -1, running, total = -1, lim;
	FILE *f;

	f = fopen("/proc/sys/kernel/pid_max", "r");
	if (f) {
		if (fscanf(f, "%ld", &pid_max) != 1)
			pid_max = -1;
		fclose(f);
	}
	f = fopen("/proc/sys/kernel/threads-max", "r");
	if (f) {
		if (fscanf(f, "%ld", &threads_max) != 1)
			threads_max = -1;
		fclose(f);
	}
	/* the fourth field is "runnable/total scheduling entities" */
	f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%*s %*s %*s %ld/%ld", &running, &total) != 2)
			total = -1;
		fclose(f);
	}
	lim = pid_max;
	if (threads_max > 0 && (lim < 0 || threads_max < lim))
		lim = threads_max;
	if (lim < 0 || total < 0)
		return -1;
	return lim - total - RESERVE > 0 ? lim - total - RESERVE : 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	unsigned long nthreads = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
	unsigned long ncoros = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000;
	RIP_OPTS(rip_ring_opts, o, .slots = (uint32_t)(nthreads + ncoros + 1000));
	double t0 = now_ms();
	char path[4096], name[32];
	unsigned long want = nthreads;
	pthread_attr_t attr;
	struct rip_coro *co;
	long room;
	pthread_t th;
	int err;

	if (nthreads > 1000000 || ncoros > 4000000) {
		fprintf(stderr, "usage: many [THREADS [COROS]]\n");
		return 2;
	}
	/* never outlive the benchmark that started us */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(LIFETIME);
	room = task_headroom();
	if (room >= 0 && (unsigned long)room < nthreads) {
		fprintf(stderr, "many: the system has room for %ld more tasks (keeping %d free);"
				" starting %ld threads, not %lu\n",
			room, RESERVE, room, nthreads);
		nthreads = (unsigned long)room;
	}
	err = rip_ring_open(&o);
	if (err) {
		fprintf(stderr, "many: rip_ring_open: %s\n", strerror(-err));
		return 1;
	}
	rip_ring_path(path, sizeof(path));
	rip_thread_set_name("many-main");
	if (pipe(park_pipe)) {
		perror("many: pipe");
		return 1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_SIZE);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (unsigned long i = 0; i < nthreads; i++) {
		err = pthread_create(&th, &attr, thread_main, (void *)(uintptr_t)i);
		if (err == EAGAIN || err == ENOMEM) {
			/* out of tasks or memory: measure with the threads we have */
			fprintf(stderr, "many: pthread_create: %s after %lu of %lu threads;"
					" going on with %lu\n",
				strerror(err), i, want, i);
			nthreads = i;
			break;
		}
		if (err) {
			fprintf(stderr, "many: thread %lu of %lu: %s\n", i, nthreads,
				strerror(err));
			return 1;
		}
	}
	pthread_attr_destroy(&attr);
	for (unsigned long i = 0; i < ncoros; i++) {
		snprintf(name, sizeof(name), "co-%lu", i);
		err = rip_coro_create(name, &co);
		if (err) {
			fprintf(stderr, "many: coroutine %lu of %lu: %s\n", i, ncoros,
				strerror(-err));
			return 1;
		}
		rip_coro_switch_in(co);
		step_fns[i % PARKS]();
		rip_coro_switch_out(); /* (with BENCH_FN, step did it: nothing to do) */
	}
	/* Pairs with the release increments in park_block: every thread has snapped. */
	while (__atomic_load_n(&parked, __ATOMIC_ACQUIRE) < nthreads)
		usleep(1000);
	rip_snap();
	printf("ready %s %d %lu %lu %.0f\n", path, (int)getpid(), nthreads, ncoros, now_ms() - t0);
	fflush(stdout);
	for (;;)
		pause();
}
