// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the program of tests/integ/func-fork.sh, built with
 * -finstrument-functions and linked with librip: a process that forks
 * from inside traced calls, so that its child starts with frames open
 * that it inherited.
 *
 *   funcfork MODE N
 *	main > fork_run > fork_mid > fork_at, which makes a child by MODE;
 *	the child calls fork_leaf N times (from fork_at), then returns
 *	through fork_at, fork_mid, fork_run and main (exits 0); the parent
 *	waits for it and calls fork_leaf once more after the wait.  MODE:
 *	  fork     fork() from the main thread
 *	  thread   fork() from a thread (fork_thread > fork_mid > fork_at)
 *	  vfork    vfork(), the child _exits at once (no traced call)
 *	  spawn    posix_spawn of "funcfork leaf N" (the image's own calls)
 *	  named    fork, after main called fork_leaf once: its id was handed
 *	           out and named in the parent's trace before the fork
 *	  leaf     main > fork_leaf N times (what spawn runs)
 *   funcfork park N READY
 *	fork; the child calls fork_leaf N times, then parks in fork_park
 *	(main > fork_run > fork_mid > fork_at > fork_park), writes READY
 *	and waits to be killed; the parent waits for it
 */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *mode, *self, *ready;
static int n;
static volatile int sink;

__attribute__((noinline)) static void fork_leaf(int i)
{
	sink += i;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void fork_park(void)
{
	FILE *f = fopen(ready, "w");

	if (f) {
		fputs("ready\n", f);
		fclose(f);
	}
	for (;;)
		pause();
}

/* Wait for pid: 0 when it exited 0. */
__attribute__((noinline)) static int fork_wait(pid_t pid)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	return !WIFEXITED(st) || WEXITSTATUS(st);
}

__attribute__((noinline)) static int fork_at(void)
{
	pid_t pid;
	int ret;

	if (!strcmp(mode, "vfork")) {
		pid = vfork();
		if (!pid)
			_exit(0);
	} else if (!strcmp(mode, "spawn")) {
		char num[16];
		char *argv[] = { (char *)self, (char *)"leaf", num, NULL };

		snprintf(num, sizeof(num), "%d", n);
		if (posix_spawn(&pid, self, NULL, NULL, argv, environ))
			return 1;
	} else {
		pid = fork();
		if (pid < 0)
			return 1;
		if (!pid) {
			for (int i = 0; i < n; i++)
				fork_leaf(i);
			if (ready)
				fork_park();
			return 0;
		}
	}
	ret = fork_wait(pid);
	fork_leaf(0);
	return ret;
}

__attribute__((noinline)) static int fork_mid(void)
{
	int ret = fork_at();

	__asm__ volatile("" ::: "memory");
	return ret;
}

__attribute__((noinline)) static void *fork_thread(void *arg)
{
	*(int *)arg = fork_mid();
	return NULL;
}

__attribute__((noinline)) static int fork_run(void)
{
	pthread_t t;
	int ret = 1;

	if (strcmp(mode, "thread") != 0) {
		ret = fork_mid();
		__asm__ volatile("" ::: "memory");
		return ret;
	}
	if (pthread_create(&t, NULL, fork_thread, &ret) || pthread_join(t, NULL))
		return 1;
	return ret;
}

int main(int argc, char **argv)
{
	self = argv[0];
	if (argc == 3 && !strcmp(argv[1], "leaf")) {
		for (int i = atoi(argv[2]); i > 0; i--)
			fork_leaf(i);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "park")) {
		ready = argv[3];
		argv[1] = (char *)"fork";
	} else if (argc != 3) {
		fprintf(stderr,
			"usage: funcfork fork|named|thread|vfork|spawn|leaf N | park N READY\n");
		return 2;
	}
	mode = argv[1];
	n = atoi(argv[2]);
	if (!strcmp(mode, "named"))
		fork_leaf(0);
	return fork_run();
}
