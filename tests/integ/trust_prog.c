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
 *  - signal, signal-altstack: a SIGALRM handler (on an alternate signal
 *    stack for the second) leaks one 48-byte block per signal, 500 signals
 *    (an interval timer of 200 us, stopped by the 500th), while the main
 *    loop churns traced calls: mmap/munmap of a page, and open/close (not
 *    malloc: a handler's malloc that interrupts malloc is the program's
 *    own undefined behaviour, and corrupts glibc's heap).  The only leaks
 *    are the handler's 500 blocks.
 *  - syscall READY: a thread blocks in pause made through syscall(2), from
 *    park_deep; main writes its pid into the file READY and waits for a
 *    signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <linux/sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
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

__attribute__((noinline)) static void churn_calls(void)
{
	for (int i = 0; i < 200; i++) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		int fd = open("/dev/null", O_RDONLY);

		if (p != MAP_FAILED)
			munmap(p, 4096);
		if (fd >= 0)
			close(fd);
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

#define NSIG_WANT 500
static void *from_handler[NSIG_WANT];
static volatile sig_atomic_t nsig;

__attribute__((noinline)) static void on_alarm(int sig)
{
	(void)sig;
	if (nsig < NSIG_WANT)
		from_handler[nsig] = malloc(48);
	if (++nsig == NSIG_WANT) {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };

		setitimer(ITIMER_REAL, &off, NULL);
	}
}

static int mode_signal(int altstack)
{
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	if (altstack) {
		stack_t ss = { .ss_sp = malloc(1 << 16), .ss_size = 1 << 16 };

		if (!ss.ss_sp || sigaltstack(&ss, NULL))
			return 1;
		sa.sa_flags |= SA_ONSTACK;
	}
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL))
		return 1;
	while (nsig < NSIG_WANT)
		churn_calls();
	if (altstack) {
		/* the signal stack is freed: only the handler's blocks stay */
		stack_t ss = { .ss_flags = SS_DISABLE }, old;

		if (sigaltstack(&ss, &old))
			return 1;
		free(old.ss_sp);
	}
	return 0;
}

__attribute__((noinline)) static void park_deep(void)
{
	syscall(SYS_pause);
	__asm__ volatile("" ::: "memory"); /* not a tail call: park_deep stays the caller */
}

static void *parker(void *arg)
{
	park_deep();
	return arg;
}

static int mode_syscall(const char *ready)
{
	pthread_t t;
	FILE *f;

	if (pthread_create(&t, NULL, parker, NULL))
		return 1;
	f = fopen(ready, "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	pause();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "thread"))
		return mode_thread();
	if (argc == 2 && !strcmp(argv[1], "fork"))
		return mode_fork();
	if (argc == 2 && !strncmp(argv[1], "clone", 5))
		return mode_clone(argv[1]);
	if (argc == 2 && !strcmp(argv[1], "signal"))
		return mode_signal(0);
	if (argc == 2 && !strcmp(argv[1], "signal-altstack"))
		return mode_signal(1);
	if (argc == 3 && !strcmp(argv[1], "syscall"))
		return mode_syscall(argv[2]);
	fprintf(stderr, "usage: trust_prog thread|fork|clone-fork|clone3|clone-vm|signal|"
			"signal-altstack|syscall READY\n");
	return 2;
}
