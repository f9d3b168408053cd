// SPDX-License-Identifier: Apache-2.0
/*
 * bench/psprog.c - an uninstrumented program with many blocked threads, for
 * bench/ps-watch.sh: how long `rip ps` (the watcher), gdb and eu-stack take
 * to show every thread's stack, and the pause the program sees meanwhile.
 *
 * usage: psprog N READY
 *
 * N threads block in a mix of waits no wrapper sees (futex and read on a
 * pipe made with the syscall instruction itself: the watcher's) and that
 * the wrappers see (pthread_cond_wait, sleep of an hour), a quarter each.  One more
 * thread measures its own latency: it sleeps 1 ms at a time (clock_nanosleep
 * on CLOCK_MONOTONIC) and keeps the longest gap between two wake-ups.  Once
 * every thread has started, READY is written.  Commands on stdin, one per
 * line: "r" resets the longest gap, "p" prints it in microseconds; end of
 * input ends the program.  Nothing of librip is linked or called.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint32_t never;
static int pipes[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile uint64_t max_gap_ns;
static volatile int reset;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The syscall instruction itself (no wrapper sees it), as Go or a static runtime does. */
static long raw_syscall3(long nr, long a1, long a2, long a3)
{
#if defined(__x86_64__)
	long ret;
	register long r10 __asm__("r10") = 0;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
#else
	return syscall(nr, a1, a2, a3, 0L, 0L, 0L);
#endif
}

__attribute__((noinline)) static void wait_futex(void)
{
	for (;;)
		raw_syscall3(SYS_futex, (long)&never, FUTEX_WAIT, 0);
}

__attribute__((noinline)) static void wait_raw_read(void)
{
	char c;

	for (;;)
		raw_syscall3(SYS_read, pipes[0], (long)&c, 1);
}

__attribute__((noinline)) static void wait_cond(void)
{
	pthread_mutex_lock(&mu);
	for (;;)
		pthread_cond_wait(&cv, &mu);
}

__attribute__((noinline)) static void wait_sleep(void)
{
	for (;;)
		sleep(3600);
}

static void *blocker(void *arg)
{
	switch ((uintptr_t)arg % 4) {
	case 0:
		wait_futex();
		break;
	case 1:
		wait_raw_read();
		break;
	case 2:
		wait_cond();
		break;
	default:
		wait_sleep();
	}
	return NULL;
}

static void *ticker(void *arg)
{
	struct timespec d = { 0, 1000000 };
	uint64_t last = now_ns();

	for (;;) {
		uint64_t t;

		clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL);
		t = now_ns();
		if (reset) {
			reset = 0;
			max_gap_ns = 0;
		} else if (t - last > max_gap_ns) {
			max_gap_ns = t - last;
		}
		last = t;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_attr_t a;
	pthread_t t;
	char line[64];
	FILE *f;
	int n;

	if (argc != 3) {
		fprintf(stderr, "usage: psprog N READY\n");
		return 2;
	}
	n = atoi(argv[1]);
	if (pipe(pipes))
		return 1;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 << 10);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t, &a, blocker, (void *)(uintptr_t)i)) {
			fprintf(stderr, "psprog: thread %d: cannot create\n", i);
			return 1;
		}
	pthread_create(&t, NULL, ticker, NULL);
	f = fopen(argv[2], "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", n);
	fclose(f);
	setvbuf(stdout, NULL, _IONBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		if (line[0] == 'r')
			reset = 1;
		else if (line[0] == 'p')
			printf("%llu\n", (unsigned long long)(max_gap_ns / 1000));
	}
	return 0;
}
