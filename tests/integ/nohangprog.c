// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the program of integ/preload-nohang.sh: calls whose first
 * traced allocation happens while glibc holds a lock of the calling thread.
 * Modes (argv[1]):
 *
 *   getattr-main    pthread_getattr_np on the main thread first thing (glibc
 *                   holds the thread's lock while it reads /proc/self/maps
 *                   through stdio and reallocs the cpuset: Rust's start-up)
 *   getattr-thread  the same as the first call of a new thread (the JVM's
 *                   GC workers)
 *   own-stack       a thread on a stack the program allocated itself
 *                   (pthread_attr_setstack), which leaks 4242 bytes from
 *                   leak_on_own_stack()
 *   threads N       N threads, each leaking 3131 bytes from leak_in_thread()
 *                   after a pthread_getattr_np of its own
 *
 * Prints "nohang MODE done" and exits 0 when all went well.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINL __attribute__((noinline))

static void *volatile sink;

static int getattr_self(void)
{
	pthread_attr_t a;
	void *lo = NULL;
	size_t sz = 0;
	int err = pthread_getattr_np(pthread_self(), &a);

	if (err)
		return err;
	err = pthread_attr_getstack(&a, &lo, &sz);
	pthread_attr_destroy(&a);
	return err ? err : !(lo && sz);
}

static void *getattr_thread(void *arg)
{
	return (void *)(long)getattr_self();
}

NOINL static void leak_on_own_stack(void)
{
	sink = malloc(4242);
	memset(sink, 1, 4242);
	sink = NULL;
}

static void *own_stack_thread(void *arg)
{
	leak_on_own_stack();
	return NULL;
}

NOINL static void leak_in_thread(void)
{
	sink = malloc(3131);
	memset(sink, 2, 3131);
	sink = NULL;
}

static void *leaking_thread(void *arg)
{
	if (getattr_self())
		return (void *)1L;
	leak_in_thread();
	return NULL;
}

/* Start n threads running fn with attr, join them: 0 when all returned NULL. */
static int run_threads(int n, const pthread_attr_t *attr, void *(*fn)(void *))
{
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	int bad = 0, i;

	if (!t)
		return 1;
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], attr, fn, NULL))
			break;
	bad = i != n;
	while (i-- > 0) {
		void *ret;

		pthread_join(t[i], &ret);
		bad |= ret != NULL;
	}
	free(t);
	return bad;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int bad;

	if (!strcmp(mode, "getattr-main")) {
		bad = getattr_self();
	} else if (!strcmp(mode, "getattr-thread")) {
		bad = run_threads(1, NULL, getattr_thread);
	} else if (!strcmp(mode, "own-stack")) {
		size_t sz = 1 << 20;
		void *stack = NULL;
		pthread_attr_t a;

		if (posix_memalign(&stack, 4096, sz) || pthread_attr_init(&a) ||
		    pthread_attr_setstack(&a, stack, sz))
			return 2;
		bad = run_threads(1, &a, own_stack_thread);
		pthread_attr_destroy(&a);
		free(stack);
	} else if (!strcmp(mode, "threads") && argc > 2) {
		bad = run_threads(atoi(argv[2]), NULL, leaking_thread);
	} else {
		fprintf(stderr, "usage: nohangprog getattr-main|getattr-thread|own-stack|threads N\n");
		return 2;
	}
	if (bad)
		return 1;
	printf("nohang %s done\n", mode);
	return 0;
}
