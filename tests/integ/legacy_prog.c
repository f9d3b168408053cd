/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of integ/legacy-api.sh, written for the ORIGINAL
 * librip API only (librip.h, the storage it asks the program to define,
 * rip_create_ring, rip_init, rip_snap, rip_exit) and built unchanged.
 * integ/legacy-pie.sh builds it as a PIE against tests/data/orig/librip.h,
 * the original header's stand-in, which writes the original raw file.
 * Threads park-1..park-4 snap in legacy_step() then park in legacy_parked();
 * gone-5..gone-7 snap in legacy_step() and legacy_before_exit(), call
 * rip_exit() and end; id 10 ("coro-10") is a coroutine in the original's
 * sense: started on one thread (legacy_coro_a), resumed with rip_init() on
 * another (legacy_coro_b).  Writes "ready" to READY and waits for SIGKILL.
 *
 *	legacy_prog RING READY
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <librip.h>

thread_local pid_t rip_tid;
thread_local uint8_t rip_idx;
thread_local uint8_t rip_ctr;
struct rip_ring *rip_ring;

#define MAX_PROCS 64

static int block_fd = -1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int done;

static void signal_done(void)
{
	pthread_mutex_lock(&lock);
	done++;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) static void legacy_step(void)
{
	rip_snap();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void legacy_parked(void)
{
	char c;

	rip_snap();
	signal_done();
	while (read(block_fd, &c, 1) < 0 && errno == EINTR)
		;
	pause();
}

__attribute__((noinline)) static void legacy_before_exit(void)
{
	rip_snap();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void legacy_coro_a(void)
{
	rip_snap();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void legacy_coro_b(void)
{
	rip_snap();
	__asm__ volatile("" ::: "memory");
}

static void *thread_main(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	char name[32];

	snprintf(name, sizeof(name), "%s-%u", id <= 4 ? "park" : "gone", id);
	rip_init(id, name, strlen(name), 0, 0);
	legacy_step();
	if (id <= 4)
		legacy_parked();
	legacy_before_exit();
	rip_exit();
	signal_done();
	return NULL;
}

static void *coro_part(void *arg)
{
	int part = (int)(uintptr_t)arg;

	rip_init(10, "coro-10", 7, 0, 0);
	if (part == 0)
		legacy_coro_a();
	else
		legacy_coro_b();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int fds[2];
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: legacy_prog RING READY\n");
		return 2;
	}
	if (!rip_create_ring(argv[1], MAX_PROCS)) {
		perror("rip_create_ring");
		return 1;
	}
	if (pipe(fds))
		return 1;
	block_fd = fds[0];
	for (uintptr_t id = 1; id <= 7; id++) {
		if (pthread_create(&t, NULL, thread_main, (void *)id))
			return 1;
		pthread_detach(t);
	}
	for (uintptr_t part = 0; part < 2; part++) {
		if (pthread_create(&t, NULL, coro_part, (void *)part))
			return 1;
		pthread_join(t, NULL);
	}
	pthread_mutex_lock(&lock);
	while (done < 7)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	f = fopen(argv[2], "w");
	if (!f)
		return 1;
	fputs("ready\n", f);
	fclose(f);
	for (;;)
		pause();
}
