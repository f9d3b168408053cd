/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of integ/postmortem.sh.  Starts NTHREADS threads, each
 * parked in a function of its own (park_0000 .. park_0999, generated below)
 * that snaps and then blocks on a pipe that is never written.  Writes the
 * runtime address of every park function to ADDRS, then "ready" to READY,
 * and waits to be killed with SIGKILL.
 *
 *	postmortem_prog RING ADDRS READY [NTHREADS]
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rip.h>

#define MAX_THREADS 1000

static int park_fd = -1;
static const char *volatile park_tag;
static atomic_int parked;

/* clang has no noclone: noinline is the nearest it has */
#if __has_attribute(noclone)
#define PARK_NOINLINE __attribute__((noinline, noclone))
#else
#define PARK_NOINLINE __attribute__((noinline))
#endif

/* One distinct function per thread: the tag store keeps gcc from folding them. */
#define PARK(n)                                                                                    \
	PARK_NOINLINE static void park_##n(void)                                                   \
	{                                                                                          \
		char c;                                                                            \
		park_tag = #n;                                                                     \
		rip_snap();                                                                        \
		atomic_fetch_add(&parked, 1);                                                      \
		while (read(park_fd, &c, 1) < 0 && errno == EINTR)                                 \
			;                                                                          \
		pause();                                                                           \
	}
#define P1(X, a, b, c, d) X(a##b##c##d)
#define P10(X, a, b, c)                                                                            \
	P1(X, a, b, c, 0) P1(X, a, b, c, 1) P1(X, a, b, c, 2) P1(X, a, b, c, 3) P1(X, a, b, c, 4)  \
	P1(X, a, b, c, 5) P1(X, a, b, c, 6) P1(X, a, b, c, 7) P1(X, a, b, c, 8) P1(X, a, b, c, 9)
#define P100(X, a, b)                                                                              \
	P10(X, a, b, 0) P10(X, a, b, 1) P10(X, a, b, 2) P10(X, a, b, 3) P10(X, a, b, 4)            \
	P10(X, a, b, 5) P10(X, a, b, 6) P10(X, a, b, 7) P10(X, a, b, 8) P10(X, a, b, 9)
#define P1000(X)                                                                                   \
	P100(X, 0, 0) P100(X, 0, 1) P100(X, 0, 2) P100(X, 0, 3) P100(X, 0, 4)                      \
	P100(X, 0, 5) P100(X, 0, 6) P100(X, 0, 7) P100(X, 0, 8) P100(X, 0, 9)

P1000(PARK)

#define ENTRY(n) park_##n,
static void (*const park_fns[MAX_THREADS])(void) = { P1000(ENTRY) };

static void *start(void *arg)
{
	int i = (int)(intptr_t)arg;
	char name[32];

	snprintf(name, sizeof(name), "park-%04d", i);
	rip_thread_set_name(name);
	rip_snap(); /* one step of history before the park */
	park_fns[i]();
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 4 ? atoi(argv[4]) : MAX_THREADS;
	RIP_OPTS(rip_ring_opts, o, .slots = MAX_THREADS + 16);
	pthread_attr_t attr;
	int fds[2], err;
	FILE *f;

	if (argc < 4 || n < 1 || n > MAX_THREADS) {
		fprintf(stderr, "usage: postmortem_prog RING ADDRS READY [NTHREADS]\n");
		return 2;
	}
	o.path = argv[1];
	err = rip_ring_open(&o);
	if (err) {
		fprintf(stderr, "postmortem_prog: rip_ring_open %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	if (pipe(fds))
		return 1;
	park_fd = fds[0];
	f = fopen(argv[2], "w");
	if (!f)
		return 1;
	for (int i = 0; i < n; i++)
		fprintf(f, "park_%04d %p\n", i, (void *)park_fns[i]);
	fclose(f);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 0; i < n; i++) {
		pthread_t t;

		err = pthread_create(&t, &attr, start, (void *)(intptr_t)i);
		if (err) {
			fprintf(stderr, "postmortem_prog: thread %d: %s\n", i, strerror(err));
			return 1;
		}
	}
	while (atomic_load(&parked) < n)
		usleep(1000);
	f = fopen(argv[3], "w");
	if (!f)
		return 1;
	fputs("ready\n", f);
	fclose(f);
	for (;;)
		pause();
}
