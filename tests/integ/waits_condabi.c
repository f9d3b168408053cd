// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/waits_condabi.c - a condition wait bound to one of glibc's two
 * pthread_cond_wait versions, for waits-condabi.sh: built with -DOLD_ABI it
 * binds to pthread_cond_wait, _timedwait and _broadcast @GLIBC_2.2.5
 * (the old layout: glibc's compatibility functions keep a pointer to a
 * condition they allocate in its first word), else to the current ones.
 * The thread "waiter" waits on cv; once READY (the pid) is written and GO
 * exists, main signals it.  A timed wait of 50 ms must time out.  Prints
 * "old layout", "new layout" (from the condition's first word: which
 * function really ran) and "timedout".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef OLD_ABI
__asm__(".symver pthread_cond_wait, pthread_cond_wait@GLIBC_2.2.5");
__asm__(".symver pthread_cond_timedwait, pthread_cond_timedwait@GLIBC_2.2.5");
__asm__(".symver pthread_cond_broadcast, pthread_cond_broadcast@GLIBC_2.2.5");
#endif

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER, cv2 = PTHREAD_COND_INITIALIZER;
static int go, up;

static __attribute__((noinline)) void *waiter(void *a)
{
	pthread_setname_np(pthread_self(), "waiter");
	pthread_mutex_lock(&m);
	up = 1;
	while (!go)
		pthread_cond_wait(&cv, &m);
	pthread_mutex_unlock(&m);
	return a;
}

int main(int argc, char **argv)
{
	struct timespec ts;
	uint64_t first;
	pthread_t t;
	FILE *f;
	int r;

	if (argc != 3)
		return 2;
	pthread_create(&t, NULL, waiter, NULL);
	for (;;) {
		pthread_mutex_lock(&m);
		r = up;
		pthread_mutex_unlock(&m);
		if (r)
			break;
		usleep(1000);
	}
	f = fopen(argv[1], "w");
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	while (access(argv[2], F_OK))
		usleep(10000);
	pthread_mutex_lock(&m);
	go = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	memcpy(&first, &cv, sizeof(first));
	printf("%s layout\n", first > 0x10000 ? "old" : "new");
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 50000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&m);
	r = pthread_cond_timedwait(&cv2, &m, &ts);
	pthread_mutex_unlock(&m);
	printf("%s\n", r == ETIMEDOUT ? "timedout" : "not timed out");
	return 0;
}
