/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of integ/record-killed-first.sh: 4 threads each leak
 * 250 blocks of 100 bytes from leak_once, with malloc/free churn around
 * them; then the pid goes into FILE and the program waits to be killed.
 *
 *	killed_leaks FILE
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *volatile keep[1000];

/* the store after the call: no tail call, leak_once is in the stack */
__attribute__((noinline)) static void leak_once(int i)
{
	keep[i] = malloc(100);
}

static void *worker(void *arg)
{
	long t = (long)arg;

	for (int i = 0; i < 250; i++) {
		for (int j = 0; j < 40; j++) {
			void *volatile p = malloc(32 + (size_t)(i + j) % 64);

			free(p);
		}
		leak_once((int)t * 250 + i);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[4];
	FILE *f;

	for (long t = 0; t < 4; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)t))
			return 1;
	for (int t = 0; t < 4; t++)
		pthread_join(th[t], NULL);
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
		return 1;
	for (;;)
		pause();
}
