// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the program of tests/integ/func-clone.sh, built by gcc with
 * -O2 -fipa-cp-clone and -fpatchable-function-entry=5, so that gcc makes a
 * copy of clone_cp for its calls with a constant mode
 * (clone_cp.constprop.0.isra.0, with patchable nops of its own) and keeps
 * the original for the calls through a pointer.
 *
 *   fnclone N [READY GO]
 *	calls clone_cp(1, ...) twice (the copy) and through clone_ptr once
 *	(the original), N times; prints "calls N 2N" (original, copy).  With
 *	READY and GO: first starts a thread (librip-preload.so's watcher
 *	starts with it: rip enable needs it), writes READY and waits until
 *	the file GO exists
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile int sink;

/* mode is a constant at two calls of three: gcc copies it for them */
static __attribute__((noinline)) int clone_cp(int mode, int n)
{
	int r = 0;

	for (int i = 0; i < n; i++) {
		switch (mode) {
		case 0:
			r += i * 7;
			break;
		case 1:
			r ^= i << 2;
			break;
		case 2:
			r -= i / 3;
			break;
		default:
			r += i % 5;
			break;
		}
	}
	sink += r;
	return r;
}

static int (*volatile clone_ptr)(int, int) = clone_cp;

static void *clone_idle(void *arg)
{
	(void)arg;
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;

	if (argc == 4) {
		pthread_t t;
		FILE *f;

		if (pthread_create(&t, NULL, clone_idle, NULL) || pthread_join(t, NULL))
			return 1;
		f = fopen(argv[2], "w");
		if (!f)
			return 1;
		fputs("ready\n", f);
		fclose(f);
		while (access(argv[3], F_OK))
			usleep(10000);
	} else if (argc != 2) {
		fprintf(stderr, "usage: fnclone N [READY GO]\n");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		clone_cp(1, i & 7);
		clone_cp(1, i & 3);
		clone_ptr(argc, i & 7);
	}
	printf("calls %d %d\n", n, 2 * n);
	return 0;
}
