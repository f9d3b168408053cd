// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/fork_dl.c - forks while librip walks the loaded objects
 * (trust-fork-dl.sh): two threads create and destroy coroutines for ever
 * (librip looks whether its module map is behind at each creation, with
 * dl_iterate_phdr, as it does when a thread exits); meanwhile the main
 * thread forks N times, and each child walks the loaded objects with
 * dl_iterate_phdr and exits.  A child that has not exited
 * after 10 s is hung: said on standard output, killed.  Prints "N forks, H
 * hung" and exits 1 if any child hung.
 */
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

static volatile int stop;

static void *churn(void *arg)
{
	(void)arg;
	while (!stop) {
		struct rip_coro *co;

		if (!rip_coro_create("brief", &co))
			rip_coro_destroy(co);
	}
	return NULL;
}

static int count(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	++*(int *)arg;
	return 0;
}

/* Has child p exited within 10 s?  Killed and reaped if not.  SIGCHLD is blocked. */
static int reaped(pid_t p)
{
	const struct timespec tick = { 0, 100000000 };
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (int i = 0; i < 100; i++) {
		if (waitpid(p, NULL, WNOHANG) == p)
			return 1;
		sigtimedwait(&chld, NULL, &tick);
	}
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	return 0;
}
int main(int argc, char **argv)
{
	int n = argc == 2 ? atoi(argv[1]) : 0, hung = 0;
	sigset_t chld;
	pthread_t c[2];

	if (n <= 0) {
		fprintf(stderr, "usage: fork_dl FORKS\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL); /* the threads' masks too: reaped() waits for it */
	rip_snap();
	for (int i = 0; i < 2; i++)
		if (pthread_create(&c[i], NULL, churn, NULL))
			return 1;
	for (int i = 0; i < n && hung < 3; i++) {
		pid_t p = fork();

		if (p < 0)
			return 1;
		if (p == 0) {
			int objects = 0;

			dl_iterate_phdr(count, &objects);
			_exit(objects > 0 ? 0 : 1);
		}
		if (!reaped(p)) {
			printf("hung: the child of fork %d (pid %d)\n", i, (int)p);
			hung++;
		}
	}
	stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(c[i], NULL);
	printf("%d forks, %d hung\n", n, hung);
	return hung ? 1 : 0;
}
