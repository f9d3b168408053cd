/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/integ/fdopener.h - the second thread of the tests that librip's
 * descriptors never take the program's numbers (trust_mapsfd.c,
 * trust_pagemapfd.c): it opens and closes /dev/null until fdo_done, and
 * counts the opens that did not get the number that was the lowest free
 * one when it started (fdo_start), which a descriptor of ours had taken.
 */
#ifndef RIP_TESTS_FDOPENER_H
#define RIP_TESTS_FDOPENER_H

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int fdo_done;
static long fdo_opens, fdo_wrong;
static int fdo_expect;
static int fdo_report_now; /* print the first wrong number at once (main may be gone by the end) */
static int fdo_spin;	   /* a pause after each close: the number free most of the time */

static void *fdo_loop(void *arg)
{
	(void)arg;
	/* Acquire: pairs with the release store of fdo_done by the thread that stops us. */
	while (!__atomic_load_n(&fdo_done, __ATOMIC_ACQUIRE)) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			perror("open");
			exit(2);
		}
		/* Release: pairs with the acquire load in fdo_wait (the opens before it). */
		__atomic_store_n(&fdo_opens, fdo_opens + 1, __ATOMIC_RELEASE);
		if (fd != fdo_expect && !fdo_wrong++ && fdo_report_now) {
			char msg[32];
			int n = snprintf(msg, sizeof(msg), "wrong %d\n", fd);

			if (write(1, msg, (size_t)n) != n)
				_exit(2);
		}
		close(fd);
		for (volatile int i = 0; i < fdo_spin; i++)
			;
	}
	return NULL;
}

/* The opener started in *th, spinning spin rounds after each close: 0, or -1. */
static int fdo_start(pthread_t *th, int spin)
{
	fdo_expect = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fdo_expect < 0)
		return -1;
	close(fdo_expect);
	fdo_spin = spin;
	return pthread_create(th, NULL, fdo_loop, NULL) ? -1 : 0;
}

/* fdo_start, then wait for its first thousand opens (a number it gets every time by then). */
static inline int fdo_start_warm(pthread_t *th, int spin)
{
	if (fdo_start(th, spin))
		return -1;
	/* Acquire: pairs with the opener's release store. */
	while (__atomic_load_n(&fdo_opens, __ATOMIC_ACQUIRE) < 1000)
		sched_yield();
	return 0;
}

/* The opener stopped: its count of wrong numbers. */
static long fdo_stop(pthread_t th)
{
	/* Release: pairs with the opener's acquire load. */
	__atomic_store_n(&fdo_done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	return fdo_wrong;
}

#endif /* RIP_TESTS_FDOPENER_H */
