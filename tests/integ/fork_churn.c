// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/fork_churn.c - a program that forks after many of its threads
 * have come and gone (fork-churn.sh): THREADS threads, one after the
 * other, each snaps and allocates a block (an event ring under rip run
 * --mem) and exits; then the program forks.  The child starts 4 threads
 * that snap in kid_park() and wait on a pipe for ever, and waits in
 * pause(); the parent prints "PARENT CHILD" and waits for the child, which
 * the test kills.  Exits 0 when the child died of a signal.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rip.h>

#include "helpers.h"

static int park[2];

static void *churn(void *arg)
{
	void *volatile p;

	(void)arg;
	rip_snap();
	p = malloc(100);
	free(p);
	return NULL;
}

static __attribute__((noinline)) void kid_park(void)
{
	char c;

	rip_snap();
	while (read(park[0], &c, 1) != 0)
		;
}

static void *kid(void *arg)
{
	(void)arg;
	kid_park();
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc == 2 ? atoi(argv[1]) : -1;
	pid_t c;

	if (n < 0) {
		fprintf(stderr, "usage: fork_churn THREADS\n");
		return 2;
	}
	rip_snap();
	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, churn, NULL) || pthread_join(t, NULL))
			return 1;
	}
	if (pipe(park))
		return 1;
	c = fork();
	if (c < 0)
		return 1;
	if (c == 0) {
		for (int i = 0; i < 4; i++) {
			pthread_t t;

			if (pthread_create(&t, NULL, kid, NULL))
				_exit(1);
		}
		for (;;)
			pause();
	}
	return t_parent_of(c);
}
