// SPDX-License-Identifier: Apache-2.0
/*
 * Description: allocations from signal handlers and from a thread a
 * dlopen'd library starts, for tests/integ/robust-signals.sh.  Modes:
 *
 *   sig SECONDS THREADS  THREADS workers malloc/free (sizes 1000..1480,
 *                        from worker_alloc) and mmap/munmap 8192 bytes in
 *                        tight bursts while a 100 us SIGALRM timer's handler
 *                        frees the block it made last time on that thread
 *                        and mallocs 4242 bytes (handler_alloc).  It skips
 *                        that when it interrupted the worker's own
 *                        malloc/free (glibc's malloc is not reentrant), not
 *                        when it interrupted an mmap, munmap or the tracer.
 *                        Prints "robust_sig sig done" when the handler ran
 *                        at least 100 times; its counts go to stderr.
 *   sig SECONDS THREADS READY  the same; READY (a fifo) is opened at the
 *                        start and "running" written to it once the
 *                        handler has run 100 times, for a test that kills
 *                        the program in the middle
 *   dlopen LIB           dlopen LIB, whose constructor starts a thread that
 *                        allocates; wait for it with LIB's lib_wait(), print
 *                        "robust_sig dlopen done" and its result
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define NOINL __attribute__((noinline))

static volatile sig_atomic_t stop;
static volatile sig_atomic_t handler_runs, handler_skips;
static __thread volatile sig_atomic_t in_alloc;
static __thread void *volatile slot;

NOINL static void *handler_alloc(void)
{
	return malloc(4242);
}

static void on_alarm(int sig)
{
	(void)sig;
	if (in_alloc) {
		handler_skips++;
		return;
	}
	free(slot);
	slot = handler_alloc();
	if (slot)
		memset(slot, 0x42, 64);
	handler_runs++;
}

NOINL static void *worker_alloc(size_t n)
{
	void *p;

	in_alloc = 1;
	p = malloc(n);
	in_alloc = 0;
	return p;
}

NOINL static void worker_free(void *p)
{
	in_alloc = 1;
	free(p);
	in_alloc = 0;
}

static void *worker(void *arg)
{
	struct timespec pause = { 0, 1000000 };
	unsigned seed = (unsigned)(uintptr_t)arg;
	sigset_t set;
	void *keep[8] = { 0 };

	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	while (!stop) {
		for (int i = 0; i < 32; i++) {
			size_t n = 1000 + (size_t)(rand_r(&seed) % 61) * 8;
			unsigned k = (unsigned)i & 7;
			char *p = worker_alloc(n);

			if (!p)
				abort();
			memset(p, i, n);
			worker_free(keep[k]);
			keep[k] = p;
		}
		for (int i = 0; i < 2; i++) {
			void *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				       -1, 0);

			if (m == MAP_FAILED)
				abort();
			*(volatile char *)m = 1;
			munmap(m, 8192);
		}
		/* the whole pause: signals cut it short */
		while (nanosleep(&pause, &pause) && !stop)
			;
		pause.tv_nsec = 1000000;
	}
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (int k = 0; k < 8; k++)
		worker_free(keep[k]);
	free(slot);
	slot = NULL;
	return NULL;
}

static int do_sig(double secs, int nthreads, const char *ready)
{
	struct itimerval it = { { 0, 100 }, { 0, 100 } }, off = { 0 };
	struct sigaction sa;
	struct timespec t0, now;
	pthread_t th[64];
	sigset_t set;
	int ready_fd = -1;

	if (nthreads < 1 || nthreads > 64)
		return 2;
	if (ready) {
		ready_fd = open(ready, O_WRONLY | O_CLOEXEC);
		if (ready_fd < 0)
			return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	/* The workers take the signals: main only waits. */
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1)))
			return 3;
	setitimer(ITIMER_REAL, &it, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		struct timespec ts = { 0, 20000000 };

		nanosleep(&ts, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (ready_fd >= 0 && handler_runs >= 100) {
			if (write(ready_fd, "running\n", 8) != 8)
				return 2;
			close(ready_fd);
			ready_fd = -1;
		}
	} while ((double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	setitimer(ITIMER_REAL, &off, NULL);
	stop = 1;
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	fprintf(stderr, "handler ran %d times, skipped %d\n", (int)handler_runs,
		(int)handler_skips);
	if (handler_runs < 100)
		return 4;
	printf("robust_sig sig done\n");
	return 0;
}

static int do_dlopen(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW);
	long (*wait_fn)(void);
	long r;

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 5;
	}
	*(void **)&wait_fn = dlsym(h, "lib_wait");
	if (!wait_fn) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 6;
	}
	r = wait_fn();
	printf("robust_sig dlopen done %ld\n", r);
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "sig"))
		return do_sig(atof(argv[2]), atoi(argv[3]), argc == 5 ? argv[4] : NULL);
	if (argc == 3 && !strcmp(argv[1], "dlopen"))
		return do_dlopen(argv[2]);
	fprintf(stderr, "usage: robust_sig sig SECONDS THREADS [READY] | dlopen LIB\n");
	return 2;
}
