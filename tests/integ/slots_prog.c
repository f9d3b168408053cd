// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/slots_prog.c - a program that knows nothing of librip (no
 * rip_snap, no librip call) for waits-slots.sh: three threads start in
 * idle_worker, one in self_namer (which names itself "namer-self"), one in
 * other_named (named "named-by-main" by the main thread), and one in
 * short_lived that exits at once.  When all are up it writes READY and the
 * main thread waits on a pipe that nobody writes.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int block_fd[2];
static pthread_barrier_t up;

static void park(void)
{
	char c;

	pthread_barrier_wait(&up);
	while (read(block_fd[0], &c, 1) != 0)
		;
}

static void *idle_worker(void *arg)
{
	(void)arg;
	park();
	return NULL;
}

static void *self_namer(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "namer-self");
	park();
	return NULL;
}

static void *other_named(void *arg)
{
	(void)arg;
	park();
	return NULL;
}

static void *short_lived(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t[6];
	FILE *f;

	if (argc != 2 || pipe(block_fd))
		return 2;
	pthread_barrier_init(&up, NULL, 6);
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, idle_worker, NULL);
	pthread_create(&t[3], NULL, self_namer, NULL);
	pthread_create(&t[4], NULL, other_named, NULL);
	pthread_setname_np(t[4], "named-by-main");
	pthread_create(&t[5], NULL, short_lived, NULL);
	pthread_join(t[5], NULL);
	pthread_barrier_wait(&up);
	f = fopen(argv[1], "w");
	if (!f)
		return 2;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	park();
	return 0;
}
