// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/trust_prog.c - programs whose allocations have one right
 * answer, for the tests of what rip may not get wrong (trust-*.sh).
 *
 * usage: trust_prog MODE
 *
 *  - thread: makes one thread and joins it; frees everything it allocates.
 *    Nothing of rip's own (its watcher thread) may show as a leak.
 *  - fork: makes 300 threads that exit (their slots are exited ones a fork
 *    child sorts back into its free queue) and one that stays, then forks;
 *    the child exits at once with _exit(0).  Exit 0 if the child did.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *worker(void *arg)
{
	free(malloc(100));
	return arg;
}

static int mode_thread(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	return pthread_join(t, NULL) != 0;
}

static void *stay(void *arg)
{
	pause();
	return arg;
}

static int mode_fork(void)
{
	pthread_t t;
	pid_t pid;
	int st;

	for (int i = 0; i < 300; i++) {
		if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, NULL))
			return 1;
	}
	if (pthread_create(&t, NULL, stay, NULL))
		return 1;
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	return !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "thread"))
		return mode_thread();
	if (argc == 2 && !strcmp(argv[1], "fork"))
		return mode_fork();
	fprintf(stderr, "usage: trust_prog thread|fork\n");
	return 2;
}
