// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the program of func-sigret (not a test itself), built with
 * -fpatchable-function-entry=5: threads recurse 120 deep, past the 63
 * frames a shadow stack keeps (so the patched exits past them take the
 * exit trampoline's slow path, __rip_fn_pexit_c) and within the 128
 * entries of a slot's return stack (so every one of them is hijacked),
 * over and over, while a timer's signal every 20 us in each thread runs a
 * handler, on_timer, that calls patched functions, wherever the thread
 * stands (func-sigret also runs it from gdb at one chosen instruction).
 * fnsigret READY SECONDS [DONE]: 4 threads for SECONDS, every result checked
 * (the handler's too); READY is written once they run; the run ends early,
 * within a second, once a file DONE exists (func-sigret makes it when gdb is
 * done: the threads need not spin on for the rest of SECONDS); prints "bad N"
 * and "signals N", and exits 1 when a result was wrong.
 */
#include <errno.h>
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

/* d + 1 through d + 1 frames (the local escapes: no loop made of the recursion) */
N static int down(int d, volatile int *up)
{
	volatile int here = *up + 1;

	return d ? down(d - 1, &here) : here;
}

N static int leaf(int x)
{
	return x * 3 + 1;
}

N static int twice(int x)
{
	return leaf(x) + leaf(x + 1);
}

/* SIGRTMIN: patched calls from a handler, on top of whatever the thread was doing */
UNTRACED static void on_timer(int sig)
{
	int e = errno, x = (int)(sig_n++ & 63);

	sig_bad += twice(x) != 6 * x + 5;
	errno = e;
}

UNTRACED static void *worker(void *arg)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGRTMIN };
	struct itimerspec it = { { 0, 20000 }, { 0, 20000 } };
	long bad = 0;
	timer_t tm;

	/* sigev_notify_thread_id, which this glibc does not name */
	sev._sigev_un._tid = (pid_t)gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, &tm) || timer_settime(tm, 0, &it, NULL))
		return (void *)1000000L;
	while (!stop) {
		volatile int zero = 0;

		bad += down(120, &zero) != 121;
	}
	timer_delete(tm);
	return (void *)bad;
}

UNTRACED int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_timer, .sa_flags = SA_RESTART };
	pthread_t t[4];
	long bad = 0;
	time_t end;
	FILE *f;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: fnsigret READY SECONDS [DONE]\n");
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
