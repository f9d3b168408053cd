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
 *  - clone-fork, clone3, clone-vm: leaks one block of 64 KiB, then makes a
 *    child with syscall(SYS_clone, SIGCHLD), syscall(SYS_clone3) or glibc's
 *    clone(CLONE_VM | SIGCHLD) on a stack of its own; the child makes 2,000
 *    malloc/free pairs of 32-95 bytes and exits, the parent (after the
 *    child ended, for clone-vm, whose child shares its heap) as many.  The
 *    only leak is the parent's 64 KiB block.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <linux/sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
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

static void *kept;

__attribute__((noinline)) static void churn(void)
{
	for (int i = 0; i < 2000; i++) {
		void *p = malloc(32 + (size_t)(i % 64));

		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
}

static int vm_child(void *arg)
{
	churn();
	return arg != NULL;
}

static int mode_clone(const char *how)
{
	pid_t pid;
	int st;

	kept = malloc(65536); /* the one leak */
	__asm__ volatile("" : : "r"(kept) : "memory");
	if (!strcmp(how, "clone-vm")) {
		size_t len = 256 << 10;
		char *stack = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				   -1, 0);

		if (stack == MAP_FAILED)
			return 1;
		pid = clone(vm_child, stack + len, CLONE_VM | SIGCHLD, NULL);
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return 1;
		munmap(stack, len);
		churn();
		return !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	if (!strcmp(how, "clone3")) {
		struct clone_args ca;

		memset(&ca, 0, sizeof(ca));
		ca.exit_signal = SIGCHLD;
		pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	} else {
		pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	}
	if (pid == 0) {
		churn();
		_exit(0);
	}
	if (pid < 0)
		return 1;
	churn();
	if (waitpid(pid, &st, 0) != pid)
		return 1;
	return !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "thread"))
		return mode_thread();
	if (argc == 2 && !strcmp(argv[1], "fork"))
		return mode_fork();
	if (argc == 2 && !strncmp(argv[1], "clone", 5))
		return mode_clone(argv[1]);
	fprintf(stderr, "usage: trust_prog thread|fork|clone-fork|clone3|clone-vm\n");
	return 2;
}
