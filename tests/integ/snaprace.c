// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/snaprace.c - threads that call rip_snap() as fast as they can
 * while the CPU sampler interrupts them (sample-snaprace.sh).
 *
 * usage: snaprace THREADS SNAPS
 *
 * Each thread takes SNAPS snaps in a loop, at two call sites in turn, and
 * checks its slot afterwards: its snap ring's sequence must have moved by
 * exactly SNAPS (a sampler that wrote into the snap ring, or moved its
 * sequence back when its signal landed between rip_snap()'s load and store,
 * breaks that), and every entry in it must be one of the two sites.  It
 * prints "thread N: ok" or what was wrong, and exits 0 when all are ok.
 * The threads stay alive until the process exits, so that their slots,
 * and the samples in them, are the file's last word.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rip.h>

static unsigned long snaps;
static int bad, done;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

__attribute__((noinline)) static void site_a(void)
{
	rip_snap();
}

__attribute__((noinline)) static void site_b(void)
{
	rip_snap();
}

static void *worker(void *arg)
{
	long n = (long)(intptr_t)arg;
	struct rip_slot *s;
	uint32_t before, after;
	uintptr_t lo = (uintptr_t)site_a < (uintptr_t)site_b ? (uintptr_t)site_a : (uintptr_t)site_b;
	uintptr_t hi = (uintptr_t)site_a > (uintptr_t)site_b ? (uintptr_t)site_a : (uintptr_t)site_b;
	int odd = 0;

	if (rip_thread_attach())
		return NULL;
	s = __rip_self.thread;
	before = __atomic_load_n(&s->snap_seq, __ATOMIC_RELAXED);
	for (unsigned long i = 0; i < snaps; i++) {
		if (i & 1)
			site_b();
		else
			site_a();
	}
	after = __atomic_load_n(&s->snap_seq, __ATOMIC_RELAXED);
	/* every entry a site's: between the two functions' starts and 256 bytes past */
	for (unsigned k = 0; k < RIP_SNAP_DEPTH; k++)
		if (s->snap[k] < lo || s->snap[k] > hi + 256)
			odd++;
	pthread_mutex_lock(&lock);
	if (after - before != snaps || odd) {
		printf("thread %ld: the sequence moved by %u, want %lu; %d entries not a site's\n",
		       n, after - before, snaps, odd);
		bad = 1;
	} else {
		printf("thread %ld: ok\n", n);
	}
	done++;
	pthread_cond_broadcast(&cond);
	/* alive until the process exits */
	for (;;)
		pthread_cond_wait(&cond, &lock);
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 2 ? atoi(argv[1]) : 0;
	pthread_t th[64];

	if (argc != 3 || nthreads < 1 || nthreads > 64) {
		fprintf(stderr, "usage: snaprace THREADS SNAPS\n");
		return 2;
	}
	snaps = strtoul(argv[2], NULL, 10);
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i))
			return 2;
	pthread_mutex_lock(&lock);
	while (done < nthreads)
		pthread_cond_wait(&cond, &lock);
	fflush(stdout);
	_exit(bad);
}
