// SPDX-License-Identifier: Apache-2.0
/*
 * Description: a program that allocates in phases on command, for
 * tests/integ/robust-toggle.sh (rip enable/disable of mem from outside).
 * Prints "pid PID" then reads commands from stdin, one a line:
 *
 *   N (1..99)  phase N: 100 blocks of 10000+N bytes made and freed, one of
 *              20000+N kept (phase_leak), the block kept by the previous
 *              phase freed; then prints "phase N done"
 *   spin MS    two threads malloc/free 30000-byte blocks for MS ms (rip
 *              enable/disable may flip mem meanwhile); "spin done"
 *   q          exit 0
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINL __attribute__((noinline))

static void *volatile sink;
static void *prev;

NOINL static void *phase_leak(size_t n)
{
	char *p = malloc(n);

	if (!p)
		exit(98);
	memset(p, 1, n);
	return p;
}

NOINL static void phase(int n)
{
	for (int i = 0; i < 100; i++) {
		char *p = malloc(10000 + (size_t)n);

		if (!p)
			exit(98);
		p[0] = (char)i;
		sink = p;
		free(p);
	}
	free(prev);
	prev = phase_leak(20000 + (size_t)n);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double spin_end;

static void *spinner(void *arg)
{
	(void)arg;
	while (now() < spin_end) {
		for (int i = 0; i < 100; i++) {
			char *p = malloc(30000);

			if (!p)
				exit(98);
			p[0] = 1;
			sink = p;
			free(p);
		}
		usleep(2000);
	}
	return NULL;
}

int main(void)
{
	char line[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid %d\n", (int)getpid());
	while (fgets(line, sizeof(line), stdin)) {
		int n = atoi(line);

		if (line[0] == 'q')
			break;
		if (!strncmp(line, "spin ", 5)) {
			pthread_t th[2];

			spin_end = now() + atoi(line + 5) / 1000.0;
			for (int i = 0; i < 2; i++)
				if (pthread_create(&th[i], NULL, spinner, NULL))
					return 3;
			for (int i = 0; i < 2; i++)
				pthread_join(th[i], NULL);
			printf("spin done\n");
			continue;
		}
		if (n < 1 || n > 99) {
			fprintf(stderr, "robust_toggle: bad command %s", line);
			return 2;
		}
		phase(n);
		printf("phase %d done\n", n);
	}
	return 0;
}
