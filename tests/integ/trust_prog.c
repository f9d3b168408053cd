// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/trust_prog.c - programs whose allocations have one right
 * answer, for the tests of what rip may not get wrong (trust-*.sh).
 *
 * usage: trust_prog MODE
 *
 *  - thread: makes one thread and joins it; frees everything it allocates.
 *    Nothing of rip's own (its watcher thread) may show as a leak.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *worker(void *arg)
{
	free(malloc(100));
	return arg;
}

static int mode_thread(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	return pthread_join(t, NULL) != 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "thread"))
		return mode_thread();
	fprintf(stderr, "usage: trust_prog thread\n");
	return 2;
}
