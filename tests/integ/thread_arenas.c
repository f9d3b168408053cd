// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the helper of run-thread-arenas.sh: a server's threads that
 * never allocate.  It starts 4 threads that wait in sem_wait, then prints
 * how many arenas glibc's malloc has (malloc_info's <heap> elements): 1
 * untraced, as none of the threads called malloc or free.  Never calls
 * librip.
 */
#include <malloc.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sem_t go, started;

static void *waiter(void *arg)
{
	(void)arg;
	sem_post(&started);
	sem_wait(&go);
	return NULL;
}

int main(void)
{
	pthread_t th[4];
	char *buf = NULL;
	size_t len = 0;
	int heaps = 0;
	FILE *f;

	if (sem_init(&go, 0, 0) || sem_init(&started, 0, 0))
		return 1;
	for (int i = 0; i < 4; i++)
		if (pthread_create(&th[i], NULL, waiter, NULL))
			return 1;
	for (int i = 0; i < 4; i++)
		sem_wait(&started);
	f = open_memstream(&buf, &len);
	if (!f || malloc_info(0, f) || fclose(f))
		return 1;
	for (const char *p = buf; (p = strstr(p, "<heap nr=")); p++)
		heaps++;
	printf("%d arenas\n", heaps);
	free(buf);
	for (int i = 0; i < 4; i++)
		sem_post(&go);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	return 0;
}
