// SPDX-License-Identifier: Apache-2.0
/*
 * Description: a program that allocates in phases on command, for
 * tests/integ/robust-toggle.sh (rip enable/disable of mem from outside).
 * Prints "pid PID" then reads commands from stdin, one a line:
 *
 *   N (1..99)  phase N: 100 blocks of 10000+N bytes made and freed, one of
 *              20000+N kept (phase_leak), the block kept by the previous
 *              phase freed; then prints "phase N done"
 *   spin       two threads malloc/free 30000-byte blocks until "stop" (rip
 *              enable/disable may flip mem meanwhile); prints "spinning"
 *              once each has made and freed its first 100 blocks
 *   stop       the spin threads end; "spin done"
 *   q          exit 0
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static atomic_int spin_stop, spin_rounds;

static void *spinner(void *arg)
{
	(void)arg;
	for (int round = 0; !atomic_load(&spin_stop); round++) {
		for (int i = 0; i < 100; i++) {
			char *p = malloc(30000);

			if (!p)
				exit(98);
			p[0] = 1;
			sink = p;
			free(p);
		}
		if (!round)
			atomic_fetch_add(&spin_rounds, 1);
		usleep(2000);
	}
	return NULL;
}

int main(void)
{
	pthread_t th[2];
	int spinning = 0;
	char line[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid %d\n", (int)getpid());
	while (fgets(line, sizeof(line), stdin)) {
		int n = atoi(line);

		if (line[0] == 'q')
			break;
		if (!strcmp(line, "spin\n") && !spinning) {
			atomic_store(&spin_stop, 0);
			atomic_store(&spin_rounds, 0);
			for (int i = 0; i < 2; i++)
				if (pthread_create(&th[i], NULL, spinner, NULL))
					return 3;
			while (atomic_load(&spin_rounds) < 2)
				usleep(1000);
			spinning = 1;
			printf("spinning\n");
			continue;
		}
		if (!strcmp(line, "stop\n") && spinning) {
			atomic_store(&spin_stop, 1);
			for (int i = 0; i < 2; i++)
				pthread_join(th[i], NULL);
			spinning = 0;
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
