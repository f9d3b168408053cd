/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: a tiny program linked with librip that only snaps, for the
 * shell tests.  It never opens a ring itself: RIP_RING in the environment
 * decides whether (and where) librip's constructor creates one.
 *
 *	snapper                 snap a few times in snapper_work() and exit
 *	snapper wait READY      the same, then write READY and wait to be killed
 *	snapper still READY     a thread "blocked" that snaps once and blocks, a
 *	                        thread "spinner" that snaps every millisecond;
 *	                        write READY once both have snapped and wait to
 *	                        be killed
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

static atomic_int started;
static int block_fd = -1;

__attribute__((noinline)) static void snapper_work(int i)
{
	rip_snap();
	__asm__ volatile("" ::"r"(i) : "memory");
}

__attribute__((noinline)) static void snapper_blocked(void)
{
	char c;

	rip_snap();
	atomic_fetch_add(&started, 1);
	while (read(block_fd, &c, 1) < 0 && errno == EINTR)
		;
	pause();
}

static void *blocked_main(void *arg)
{
	(void)arg;
	rip_thread_set_name("blocked");
	snapper_blocked();
	return NULL;
}

__attribute__((noinline)) static void snapper_spin(void)
{
	struct timespec ts = { 0, 1000000 };

	for (int i = 0;; i++) {
		rip_snap();
		if (!i)
			atomic_fetch_add(&started, 1);
		nanosleep(&ts, NULL);
	}
}

static void *spinner_main(void *arg)
{
	(void)arg;
	rip_thread_set_name("spinner");
	snapper_spin();
	return NULL;
}

static int ready(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return 1;
	fputs("ready\n", f);
	return fclose(f) != 0;
}

int main(int argc, char **argv)
{
	for (int i = 0; i < 5; i++)
		snapper_work(i);
	if (argc == 1)
		return 0;
	if (argc == 3 && !strcmp(argv[1], "wait")) {
		if (ready(argv[2]))
			return 1;
		for (;;)
			pause();
	}
	if (argc == 3 && !strcmp(argv[1], "still")) {
		pthread_t a, b;
		int fds[2];

		if (pipe(fds))
			return 1;
		block_fd = fds[0];
		if (pthread_create(&a, NULL, blocked_main, NULL) ||
		    pthread_create(&b, NULL, spinner_main, NULL))
			return 1;
		while (atomic_load(&started) < 2)
			usleep(1000);
		if (ready(argv[2]))
			return 1;
		for (;;)
			pause();
	}
	fprintf(stderr, "usage: snapper [wait READY | still READY]\n");
	return 2;
}
