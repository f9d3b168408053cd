// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the helper of tests/integ/badptr.sh: calls whose timeout,
 * signal set or mask points at memory that cannot be read (a PROT_NONE
 * page, an unmapped one, then a PROT_NONE page of main's own stack, above
 * the frames of the call), each made in a child of its own, one line
 * each: "CALL POINTER: r=R errno=E", or "CALL POINTER: killed by signal S"
 * when the child died.  The kernel answers such calls with EFAULT; the
 * wrappers of librip-preload.so read these arguments too (the wait
 * record's timeout and set, the sampler's signal taken out of sets and
 * masks), and a wrapper that read one directly killed the program with
 * SIGSEGV where it would have got EFAULT.  The test compares the lines of
 * a plain run with those under rip run.  A call whose glibc wrapper reads
 * the argument itself (ppoll's and pselect's timeouts, sem_timedwait's)
 * is left out: the program crashes without rip too.  With the argument
 * "sandboxed", each call is made under a seccomp filter that kills the
 * process at process_vm_readv (a sandbox that does not list it, as most
 * do not), and exits 77 where no filter can be installed.
 */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"

#define KSIGSET 8 /* the kernel's sigset_t */

static int ep;
static uint32_t word;

/* pselect6's last argument: the mask and its size */
struct kpack {
	const void *ss;
	unsigned long len;
};

/* A call that returns an error number: -1 and errno, as the others. */
static long ern(int e)
{
	errno = e;
	return e ? -1 : 0;
}

/* Make call i with bad pointer b: its result, errno set; -2: no call i. */
static long call(int i, void *b, const char **name)
{
	static const struct timespec zero = { 0, 0 };
	struct kpack pack = { b, KSIGSET };
	struct epoll_event ev;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	switch (i) {
#define C(N, E)                                                                                    \
	case __COUNTER__:                                                                          \
		*name = N;                                                                         \
		return (E)
		C("nanosleep", nanosleep(b, NULL));
		C("clock_nanosleep", ern(clock_nanosleep(CLOCK_MONOTONIC, 0, b, NULL)));
		C("clock_nanosleep_abs",
		  ern(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, b, NULL)));
		C("sigsuspend", sigsuspend(b));
		C("sigwaitinfo", sigwaitinfo(b, NULL));
		C("sigtimedwait_set", sigtimedwait(b, NULL, &zero));
		C("sigtimedwait_timeout", sigtimedwait(&set, NULL, b));
		C("sigwait", ern(sigwait(b, &sig)));
		C("ppoll_mask", ppoll(NULL, 0, &zero, b));
		C("pselect_mask", pselect(0, NULL, NULL, NULL, &zero, b));
		C("epoll_pwait_mask", epoll_pwait(ep, &ev, 1, 0, b));
		C("epoll_pwait2_timeout", epoll_pwait2(ep, &ev, 1, b, NULL));
		C("epoll_pwait2_mask", epoll_pwait2(ep, &ev, 1, &zero, b));
		C("signalfd", signalfd(-1, b, 0));
		C("pthread_mutex_timedlock", ern(pthread_mutex_timedlock(&m, b)));
		C("sys_nanosleep", syscall(SYS_nanosleep, b, NULL));
		C("sys_clock_nanosleep_abs",
		  syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, b, NULL));
		C("sys_ppoll_mask", syscall(SYS_ppoll, NULL, 0, &zero, b, KSIGSET));
		C("sys_ppoll_timeout", syscall(SYS_ppoll, NULL, 0, b, NULL, KSIGSET));
		C("sys_pselect6_pack", syscall(SYS_pselect6, 0, NULL, NULL, NULL, &zero, b));
		C("sys_pselect6_mask", syscall(SYS_pselect6, 0, NULL, NULL, NULL, &zero, &pack));
		C("sys_epoll_pwait_mask", syscall(SYS_epoll_pwait, ep, &ev, 1, 0, b, KSIGSET));
		C("sys_epoll_pwait2_timeout",
		  syscall(SYS_epoll_pwait2, ep, &ev, 1, b, NULL, KSIGSET));
		C("sys_rt_sigsuspend", syscall(SYS_rt_sigsuspend, b, KSIGSET));
		C("sys_rt_sigtimedwait_set", syscall(SYS_rt_sigtimedwait, b, NULL, &zero, KSIGSET));
		C("sys_rt_sigtimedwait_timeout",
		  syscall(SYS_rt_sigtimedwait, &set, NULL, b, KSIGSET));
		C("sys_signalfd4", syscall(SYS_signalfd4, -1, b, KSIGSET, 0));
		C("sys_futex_wait", syscall(SYS_futex, &word, FUTEX_WAIT, 0, b, NULL, 0));
		C("sys_futex_wait_bitset",
		  syscall(SYS_futex, &word, FUTEX_WAIT_BITSET, 0, b, NULL, FUTEX_BITSET_MATCH_ANY));
#undef C
	default:
		return -2;
	}
}

/* Each call with each bad pointer, in a child of its own: 0, or 2 (a setup failure), 77. */
static int run_calls(bool sandboxed, void *const bad[3])
{
	static const char *const bad_name[3] = { "prot_none", "unmapped", "stack_prot_none" };

	if (sandboxed) {
		pid_t pid = fork();
		int st;

		if (!pid)
			_exit(sandbox_kill_vm_readv() ? 77 : 0);
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return 2;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			return 77; /* no seccomp filter here */
	}
	for (int i = 0;; i++) {
		for (int k = 0; k < 3; k++) {
			const char *name = NULL;
			int fds[2], st;
			char line[160] = "";
			ssize_t n;
			pid_t pid;

			if (pipe(fds))
				return 2;
			fflush(stdout);
			pid = fork();
			if (pid < 0)
				return 2;
			if (!pid) {
				long r;

				close(fds[0]);
				if (sandboxed && sandbox_kill_vm_readv())
					_exit(4);
				errno = 0;
				r = call(i, bad[k], &name);
				if (r == -2 && !name)
					_exit(3);
				n = snprintf(line, sizeof(line), "%s %s: r=%ld errno=%s\n", name,
					     bad_name[k], r, errno ? strerrorname_np(errno) : "0");
				(void)!write(fds[1], line, (size_t)n);
				_exit(0);
			}
			close(fds[1]);
			n = read(fds[0], line, sizeof(line) - 1);
			close(fds[0]);
			if (waitpid(pid, &st, 0) != pid)
				return 2;
			if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
				return 0; /* past the last call */
			if (WIFSIGNALED(st))
				printf("call %d %s: killed by signal %d\n", i, bad_name[k],
				       WTERMSIG(st));
			else if (n > 0)
				fputs(line, stdout);
			else
				printf("call %d %s: no answer, status %d\n", i, bad_name[k], st);
		}
	}
}

int main(int argc, char **argv)
{
	bool sandboxed = argc > 1 && !strcmp(argv[1], "sandboxed");
	void *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/*
	 * Far under where mappings are made (top down): a hole there stays
	 * one, where a hole among the others is soon taken (libunwind's first
	 * call maps a page).
	 */
	void *gone =
		mmap((void *)(16ul << 40), 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* a page of our own stack, above the frames of the calls, made PROT_NONE */
	char frame[3 * 4096];
	void *stack = (void *)(((uintptr_t)frame + 4095) & ~(uintptr_t)4095);
	void *bad[3] = { none, gone, stack };
	int rc;

	ep = epoll_create1(EPOLL_CLOEXEC);
	memset(frame, 0, sizeof(frame));
	if (none == MAP_FAILED || gone == MAP_FAILED || munmap(gone, 4096) || ep < 0 ||
	    mprotect(stack, 4096, PROT_NONE)) {
		perror("setup");
		return 2;
	}
	/* SIGUSR2 blocked, never sent: the waits for it time out at once. */
	sigset_t usr2;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	sigprocmask(SIG_BLOCK, &usr2, NULL);
	rc = run_calls(sandboxed, bad);
	/*
	 * The page made readable again before main returns: the frames of the
	 * exit handlers reuse this part of the stack (a deep one, the
	 * library's at-exit snapshot with a sample taken in it, was killed).
	 */
	if (mprotect(stack, 4096, PROT_READ | PROT_WRITE)) {
		perror("mprotect");
		return 2;
	}
	return rc;
}
