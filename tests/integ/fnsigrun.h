/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/integ/fnsigrun.h - what fnsigret.c and fntail.c share: programs
 * built with -fpatchable-function-entry=5 whose 4 threads call patched
 * functions while a timer's SIGRTMIN in each runs a handler that calls
 * patched functions too.  The program defines its handler and its worker
 * (which runs until `stop`, counting wrong results, with a sig_timer of
 * its own) and calls sig_main; the handler counts its signals in sig_n
 * and its wrong results in sig_bad.  Nothing here is patched (UNTRACED).
 */
#ifndef RIP_TESTS_FNSIGRUN_H
#define RIP_TESTS_FNSIGRUN_H

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define N __attribute__((noinline))
#define UNTRACED __attribute__((noinline, patchable_function_entry(0, 0)))

static volatile int stop;
static volatile sig_atomic_t sig_bad, sig_n;

/* SIGRTMIN to the calling thread every ns nanoseconds: 0, or -1 (errno). */
UNTRACED static int sig_timer(long ns, timer_t *tm)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGRTMIN };
	struct itimerspec it = { { 0, ns }, { 0, ns } };

	/* sigev_notify_thread_id, which this glibc does not name */
	sev._sigev_un._tid = (pid_t)gettid();
	return timer_create(CLOCK_MONOTONIC, &sev, tm) || timer_settime(*tm, 0, &it, NULL) ? -1 : 0;
}

/*
 * NAME READY SECONDS [DONE]: handler on SIGRTMIN, 4 workers for SECONDS,
 * READY written once they run; the run ends early, within a second, once a
 * file DONE exists; prints "bad N" and "signals N"; 1 when a result was
 * wrong, 2 for bad usage, 3 when the set-up failed.
 */
UNTRACED static int sig_main(int argc, char **argv, const char *name, void (*handler)(int),
			     void *(*worker)(void *))
{
	struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_RESTART };
	pthread_t t[4];
	long bad = 0;
	time_t end;
	FILE *f;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s READY SECONDS [DONE]\n", name);
		return 2;
	}
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGRTMIN, &sa, NULL))
		return 3;
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 3;
	f = fopen(argv[1], "w");
	if (!f || fputs("ready\n", f) < 0 || fclose(f))
		return 3;
	/* A signal may cut a sleep short. */
	for (end = time(NULL) + atoi(argv[2]); time(NULL) < end;) {
		sleep(1);
		if (argc == 4 && access(argv[3], F_OK) == 0)
			break;
	}
	stop = 1;
	for (int i = 0; i < 4; i++) {
		void *r;

		pthread_join(t[i], &r);
		bad += (long)r;
	}
	bad += sig_bad;
	printf("bad %ld\nsignals %ld\n", bad, (long)sig_n);
	return bad != 0;
}

#endif
