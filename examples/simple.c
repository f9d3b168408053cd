/* SPDX-License-Identifier: Apache-2.0 */
/*
 * examples/simple.c - the smallest use of rip.h: open the ring, let two
 * threads snap in a loop, print where the ring file is.
 *
 *	build/examples/simple [--wait]
 *
 * Without --wait it runs for a second and exits; the ring file stays, so
 * `rip ps FILE` still shows where each thread was last.  With --wait it runs
 * until killed and `rip ps PID` shows it live.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

static volatile int stop;

__attribute__((noinline)) static void step(unsigned long i)
{
	rip_snap(); /* records this line into the thread's slot */
	if (i % 1000 == 0) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
}

static void *worker(void *arg)
{
	char name[32];

	snprintf(name, sizeof(name), "simple-%d", (int)(intptr_t)arg);
	rip_thread_set_name(name);
	for (unsigned long i = 0; !stop; i++)
		step(i);
	return NULL;
}

int main(int argc, char **argv)
{
	int wait = argc > 1 && !strcmp(argv[1], "--wait");
	pthread_t t[2];
	char path[4096];
	int err;

	/*
	 * NULL options: the default place ($RIP_DIR, ...) and 131072 slots; or
	 * the ring the environment opened (RIP_RING=1, rip run), taken as it is.
	 */
	err = rip_ring_open(NULL);
	if (!err)
		err = rip_ring_path(path, sizeof(path));
	if (err) {
		fprintf(stderr, "simple: cannot open the ring: %s\n", strerror(-err));
		return 1;
	}
	printf("ring %s\n", path);
	fflush(stdout);
	for (int i = 0; i < 2; i++) {
		err = pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
		if (err) {
			fprintf(stderr, "simple: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	if (wait)
		for (;;)
			pause();
	sleep(1);
	stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
