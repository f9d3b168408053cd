/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of tests/integ/run-leader-exit.sh: a forked child
 * whose main thread leaves with pthread_exit while another thread works on:
 * /proc/PID/maps and /proc/PID/exe of the process are empty from then (they
 * are the leader's) and its state is a zombie's, though it runs its image.
 * The worker waits until the file GO exists (the test looks at the process
 * meanwhile), makes and frees 1,000 blocks, leaves 10 of 100 bytes from
 * leak_late(), and the process exits 0; the parent waits for it and exits
 * with its status.  Prints the child's pid.
 *
 *	leader_exit GO
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *volatile keep[10];

__attribute__((noinline)) static void leak_late(int i)
{
	keep[i] = malloc(100);
}

static void *worker(void *arg)
{
	struct timespec ts = { 0, 10000000 };

	/* at most 60 s */
	for (int i = 0; i < 6000 && access(arg, F_OK); i++)
		nanosleep(&ts, NULL);
	for (int i = 0; i < 1000; i++) {
		keep[0] = malloc(32 + (size_t)i % 64);
		free(keep[0]);
	}
	for (int i = 0; i < 10; i++)
		leak_late(i);
	exit(0);
}

int main(int argc, char **argv)
{
	pid_t pid = fork();
	pthread_t t;
	int st;

	if (argc != 2 || pid < 0)
		return 2;
	if (!pid) {
		if (pthread_create(&t, NULL, worker, argv[1]))
			_exit(2);
		pthread_exit(NULL);
	}
	printf("%d\n", (int)pid);
	fflush(stdout);
	if (waitpid(pid, &st, 0) != pid)
		return 2;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
}
