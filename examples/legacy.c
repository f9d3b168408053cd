/* SPDX-License-Identifier: Apache-2.0 */
/*
 * examples/legacy.c - a program written for the original librip API, as its
 * README describes it, built unchanged against include/librip.h.
 *
 * The program defines the storage the API needs, creates the ring with
 * rip_create_ring(), and each thread calls rip_init() with a small id, snaps
 * in a loop and calls rip_exit() at the end.
 *
 *	build/examples/legacy [PATH] [--wait]
 *
 * PATH defaults to /dev/shm/legacy-example.ring; with --wait the threads
 * keep snapping until the process is killed.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <librip.h>

thread_local pid_t rip_tid;
thread_local uint8_t rip_idx;
thread_local uint8_t rip_ctr;
struct rip_ring *rip_ring;

#define MAX_PROCS 64
#define THREADS 4

static int wait_forever;

__attribute__((noinline)) static void legacy_work(unsigned long i)
{
	rip_snap();
	if (i % 100 == 0) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
}

static void *legacy_thread(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	char name[32];
	int len;

	len = snprintf(name, sizeof(name), "legacy-%u", id);
	rip_init(id, name, (size_t)len, 0, 0);
	for (unsigned long i = 0; wait_forever || i < 1000; i++)
		legacy_work(i);
	rip_exit();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *path = "/dev/shm/legacy-example.ring";
	pthread_t t[THREADS];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait"))
			wait_forever = 1;
		else
			path = argv[i];
	}
	if (!rip_create_ring(path, MAX_PROCS)) {
		perror("legacy: rip_create_ring");
		return 1;
	}
	printf("ring %s\n", path);
	fflush(stdout);
	for (int i = 0; i < THREADS; i++) {
		int err = pthread_create(&t[i], NULL, legacy_thread, (void *)(uintptr_t)(i + 1));

		if (err) {
			fprintf(stderr, "legacy: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}
