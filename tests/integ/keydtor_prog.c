// SPDX-License-Identifier: Apache-2.0
/*
 * keydtor_prog - threads whose thread-specific data is freed and closed by
 * a key destructor, as a program's own or a library's are (node, V8, libuv):
 * the key is made after the preload library's, so at thread exit its
 * destructor runs after librip's in the same round.  Each of N threads
 * (joined one by one) sets a malloc'd block and a descriptor open on
 * /dev/null as its value; the destructor closes and frees both.  With
 * "late", the destructor sets the value again until glibc's last round
 * (PTHREAD_DESTRUCTOR_ITERATIONS), so that it frees after librip gave the
 * thread's ring back (as glibc's own frees of dynamic TLS blocks come).
 * Prints "done N" and exits 0.
 *
 *   keydtor_prog N [late]
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tsd {
	int fd;
	int rounds;
	char data[36];
};

static pthread_key_t key;
static int late;

static void tsd_free(void *p)
{
	struct tsd *t = p;

	if (late && ++t->rounds < PTHREAD_DESTRUCTOR_ITERATIONS) {
		pthread_setspecific(key, t); /* again in the next round */
		return;
	}
	close(t->fd);
	free(t);
}

static void *worker(void *arg)
{
	struct tsd *t = malloc(sizeof(*t));

	(void)arg;
	if (!t)
		return NULL;
	t->rounds = 0;
	t->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pthread_setspecific(key, t);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;

	late = argc > 2 && !strcmp(argv[2], "late");
	if (pthread_key_create(&key, tsd_free))
		return 1;
	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, NULL))
			return 1;
	}
	printf("done %d\n", n);
	return 0;
}
