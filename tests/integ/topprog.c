// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the helper of the rip top and --sample tests: a program that
 * never calls rip_snap(), run under `rip run --sample`.  Modes:
 *
 *   top READY           one thread spins in top_spin_here(), others wait
 *                       (nanosleep, poll, epoll_wait, a condition variable);
 *                       READY is written once they are all started; runs
 *                       until killed
 *   eintr SECONDS       three threads alternate CPU work and a timed wait
 *                       (epoll_wait, poll, nanosleep), a fourth spins; any
 *                       EINTR or early return fails (exit 1); then the main
 *                       thread burns 20 ms
 *   sigprof N           owns SIGPROF (setitimer ITIMER_PROF) and counts its
 *                       own signals until N arrived; installs a handler for
 *                       SIGRTMAX too and raises it 3 times: exactly those 3
 *                       must arrive, with si_code SI_TKILL
 *   signalfd ROUNDS [sys4|sys]  every signal blocked, read through a
 *                       signalfd: each round burns CPU, sends itself SIGUSR1
 *                       and must read exactly that one signal; then every
 *                       signal is unblocked (the timer signal left pending is
 *                       taken); sys4, sys: the signalfd made by
 *                       syscall(SYS_signalfd4) or syscall(SYS_signalfd), not
 *                       glibc's wrapper
 *   sigwait ROUNDS [sys]  the same with sigwaitinfo and sigtimedwait; then
 *                       a ppoll and an epoll_pwait of 20 ms with every signal
 *                       unblocked must time out, not end early, and a
 *                       sigsuspend of none must end with the SIGUSR1 a timer
 *                       sends 20 ms later; then the same unblocking; sys:
 *                       the five through syscall(SYS_rt_sigtimedwait,
 *                       SYS_ppoll, SYS_epoll_pwait, SYS_rt_sigsuspend)
 *   pwait ROUNDS CALL   every signal blocked; each round burns CPU, then
 *                       CALL waits 20 ms with every signal unblocked: it
 *                       must time out, not end early on a pending timer
 *                       signal; then waits 10 s, unblocked, and must end
 *                       with EINTR on the SIGUSR1 a timer sends 20 ms
 *                       later; then every signal is unblocked (the masks
 *                       are static, not on the stack).  CALL:
 *                       epoll_pwait2 (glibc's), sys_epoll_pwait2,
 *                       sys_pselect6, sys_io_pgetevents (syscall()); exit 3
 *                       if the kernel refuses the call (ENOSYS, no aio)
 *   many N              N short-lived threads, 64 alive at a time, each
 *                       burning a little CPU; then the main thread burns
 *                       50 ms (five periods at 100 Hz)
 *   fork                vfork + exec of true, posix_spawn of true, then a
 *                       fork without exec whose child burns 300 ms of CPU;
 *                       prints the child's pid
 *   cputimer            without the preload library: does a timer on the
 *                       thread's CPU-time clock (the sampler's kind) deliver
 *                       its signal here?  Exit 0 if it does, 3 if none came
 *                       in 1 s of CPU time or the kernel refused the timer
 *   burn MS             two threads each burn MS ms of CPU in
 *                       top_burn_here(), called from top_burn_caller();
 *                       then the program exits normally (prints "burned")
 *   badfp MS            the main thread burns MS ms of CPU in a loop that
 *                       keeps in rbp (as code built without frame pointers
 *                       may) an address in a PROT_NONE page of its own
 *                       stack, above the loop's frames, made by a raw
 *                       system call (no wrapper sees it); prints "badfp ok";
 *                       exit 3 where the loop is not written (not x86-64)
 *   strict MS HOW       the main thread enters seccomp strict mode (HOW:
 *                       prctl, sys_prctl or sys_seccomp: glibc's prctl, or
 *                       syscall(2)), burns about MS ms of CPU (a loop count
 *                       measured before: no clock can be read there), writes
 *                       "strict ok" and ends with SYS_exit (exit_group is
 *                       refused in strict mode); exit 3 if the kernel refuses
 *                       strict mode
 *
 * With TOPPROG_RING=PATH, a mode that returns first makes PATH a hard link to
 * the ring file the process maps (rip run removes its own name for it when
 * the program ends): the test then reads the samples the process left.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rbpspin.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

static volatile unsigned long sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Burn ns of this thread's CPU time. */
static __attribute__((noinline)) void burn(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns;

	while (cpu_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i * 7;
}

void top_spin_here(void);

__attribute__((noinline)) void top_spin_here(void)
{
	for (;;) {
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i ^ sink;
		__asm__ volatile("" ::: "memory");
	}
}

static void *spinner(void *arg)
{
	(void)arg;
	top_spin_here();
	return NULL;
}

static int pipefd[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		sleep(1000);
	return NULL;
}

static void *poller(void *arg)
{
	struct pollfd p = { .fd = pipefd[0], .events = POLLIN };

	(void)arg;
	for (;;)
		poll(&p, 1, -1);
	return NULL;
}

static void *epoller(void *arg)
{
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN }, out;

	(void)arg;
	epoll_ctl(ep, EPOLL_CTL_ADD, pipefd[0], &ev);
	for (;;)
		epoll_wait(ep, &out, 1, -1);
	return NULL;
}

static void *condwaiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	for (;;)
		pthread_cond_wait(&cv, &mu);
	return NULL;
}

static int mode_top(const char *ready)
{
	void *(*fns[])(void *) = { spinner, sleeper, poller, epoller, condwaiter };
	pthread_t t;
	FILE *f;

	if (pipe(pipefd))
		return 1;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (pthread_create(&t, NULL, fns[i], NULL))
			return 1;
	f = fopen(ready, "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	for (;;)
		pause();
}

/* ---- eintr ---- */

static volatile int stop;
static int bad;

static void check(const char *what, int r, uint64_t t0, uint64_t want_ns)
{
	uint64_t took = now_ns() - t0;

	if (r < 0 && errno == EINTR) {
		fprintf(stderr, "%s: EINTR\n", what);
		__atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
	} else if (took + 200000 < want_ns) {
		fprintf(stderr, "%s: returned after %lu ns of %lu\n", what, (unsigned long)took,
			(unsigned long)want_ns);
		__atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
	}
}

static unsigned long waits;

static void *eintr_worker(void *arg)
{
	int kind = (int)(long)arg, ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct pollfd p = { .fd = pipefd[0], .events = POLLIN };

	epoll_ctl(ep, EPOLL_CTL_ADD, pipefd[0], &ev);
	while (!stop) {
		struct timespec ts = { 0, 5000000 };
		uint64_t t0;
		int r;

		burn(2000000);
		t0 = now_ns();
		if (kind == 0)
			r = epoll_wait(ep, &out, 1, 5), check("epoll_wait", r, t0, 5000000);
		else if (kind == 1)
			r = poll(&p, 1, 5), check("poll", r, t0, 5000000);
		else
			r = nanosleep(&ts, NULL), check("nanosleep", r, t0, 5000000);
		__atomic_add_fetch(&waits, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *eintr_spinner(void *arg)
{
	(void)arg;
	while (!stop)
		burn(1000000);
	return NULL;
}

static int mode_eintr(int seconds)
{
	pthread_t t[4];

	if (pipe(pipefd))
		return 1;
	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, eintr_worker, (void *)i);
	pthread_create(&t[3], NULL, eintr_spinner, NULL);
	sleep((unsigned)seconds);
	stop = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	/* Samples of a thread still running when the process ends (the others' slots are free). */
	burn(20000000);
	printf("waits %lu bad %d\n", waits, bad);
	return bad ? 1 : 0;
}

/* ---- sigprof ---- */

static volatile sig_atomic_t prof_count, rt_count, rt_wrong;

static void on_prof(int sig)
{
	(void)sig;
	prof_count++;
}

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	rt_count++;
	if (si->si_code != SI_TKILL)
		rt_wrong++;
}

static int mode_sigprof(int n)
{
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
	struct sigaction sa;
	uint64_t end = now_ns() + 120ull * 1000000000u;
	pthread_t t;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_rt;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGRTMAX, &sa, NULL);
	/* A second thread burns CPU too: its timer's signals must never reach on_rt. */
	pthread_create(&t, NULL, eintr_spinner, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	for (int i = 0; i < 3; i++)
		raise(SIGRTMAX);
	while (prof_count < n && now_ns() < end)
		burn(1000000);
	stop = 1;
	pthread_join(t, NULL);
	printf("sigprof %d rtmax %d wrong %d\n", (int)prof_count, (int)rt_count, (int)rt_wrong);
	return prof_count >= n && rt_count == 3 && !rt_wrong ? 0 : 1;
}

/* ---- signalfd ---- */

/* The kernel's sigset_t: 64 signals, what a raw call's size argument says. */
#define KSIGSET 8

static int mode_signalfd(int rounds, const char *how)
{
	sigset_t all;
	int fd;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if (!how)
		fd = signalfd(-1, &all, SFD_NONBLOCK | SFD_CLOEXEC);
	else if (!strcmp(how, "sys4"))
		fd = (int)syscall(SYS_signalfd4, -1, &all, KSIGSET, SFD_NONBLOCK | SFD_CLOEXEC);
	else if (!strcmp(how, "sys"))
		fd = (int)syscall(SYS_signalfd, -1, &all, KSIGSET);
	else
		return 2;
	if (fd >= 0 && how && !strcmp(how, "sys") &&
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)) {
		perror("fcntl");
		return 1;
	}
	if (fd < 0) {
		perror("signalfd");
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		struct signalfd_siginfo si;
		struct pollfd p = { .fd = fd, .events = POLLIN };

		burn(100000000); /* 100 ms of CPU: ten of our timers' periods at 100 Hz */
		kill(getpid(), SIGUSR1);
		if (poll(&p, 1, 10000) != 1) {
			fprintf(stderr, "round %d: SIGUSR1 did not come\n", r);
			return 1;
		}
		while (read(fd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo != SIGUSR1) {
				fprintf(stderr, "round %d: read signal %u, code %d\n", r,
					si.ssi_signo, si.ssi_code);
				return 1;
			}
		}
		if (errno != EAGAIN) {
			perror("read");
			return 1;
		}
	}
	/* The timer signals left pending go to the sampler's handler, not to a default action. */
	pthread_sigmask(SIG_UNBLOCK, &all, NULL);
	printf("signalfd ok\n");
	return 0;
}

static volatile sig_atomic_t usr1_count;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_count++;
}

/*
 * sigsuspend with every signal unblocked, the sampler's timer signals
 * pending: it must end with the SIGUSR1 a timer sends 20 ms later, not at
 * once.  0, or 1 (said why).
 */
static int suspend_round(int r, bool sys)
{
	struct itimerspec its = { .it_value = { 0, 20000000 } };
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1 };
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t none;
	timer_t t;
	uint64_t t0;
	int s, e;

	sigemptyset(&none);
	sigaction(SIGUSR1, &sa, NULL);
	if (timer_create(CLOCK_MONOTONIC, &sev, &t)) {
		perror("timer_create");
		return 1;
	}
	usr1_count = 0;
	t0 = now_ns();
	timer_settime(t, 0, &its, NULL);
	s = sys ? (int)syscall(SYS_rt_sigsuspend, &none, KSIGSET) : sigsuspend(&none);
	e = errno;
	timer_delete(t);
	signal(SIGUSR1, SIG_DFL);
	if (s != -1 || e != EINTR || usr1_count != 1 || now_ns() - t0 < 19000000) {
		fprintf(stderr, "round %d: sigsuspend gave %d (%s), %d SIGUSR1, after %lu ns\n", r,
			s, strerror(e), (int)usr1_count, (unsigned long)(now_ns() - t0));
		return 1;
	}
	return 0;
}

static int mode_sigwait(int rounds, const char *how)
{
	struct timespec zero = { 0, 0 };
	bool sys = how && !strcmp(how, "sys");
	sigset_t all;
	siginfo_t si;
	int s, ep;

	if (how && !sys)
		return 2;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (int r = 0; r < rounds; r++) {
		burn(100000000);
		kill(getpid(), SIGUSR1);
		s = sys ? (int)syscall(SYS_rt_sigtimedwait, &all, &si, NULL, KSIGSET) :
			  sigwaitinfo(&all, &si);
		if (s != SIGUSR1) {
			fprintf(stderr, "round %d: sigwaitinfo gave %d, code %d\n", r, s, si.si_code);
			return 1;
		}
		s = sys ? (int)syscall(SYS_rt_sigtimedwait, &all, &si, &zero, KSIGSET) :
			  sigtimedwait(&all, &si, &zero);
		if (s >= 0 || errno != EAGAIN) {
			fprintf(stderr, "round %d: sigtimedwait gave %d, code %d\n", r, s, si.si_code);
			return 1;
		}
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) {
		perror("epoll_create1");
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		struct timespec ts = { 0, 20000000 };
		struct epoll_event ev;
		sigset_t none;
		uint64_t t0;

		sigemptyset(&none);
		burn(100000000);
		t0 = now_ns();
		s = sys ? (int)syscall(SYS_ppoll, NULL, 0, &ts, &none, KSIGSET) :
			  ppoll(NULL, 0, &ts, &none);
		if (s != 0 || now_ns() - t0 < 19000000) {
			fprintf(stderr, "round %d: ppoll gave %d (%s) after %lu ns\n", r, s,
				s < 0 ? strerror(errno) : "", (unsigned long)(now_ns() - t0));
			return 1;
		}
		/* the timer signals still pending, blocked */
		t0 = now_ns();
		s = sys ? (int)syscall(SYS_epoll_pwait, ep, &ev, 1, 20, &none, KSIGSET) :
			  epoll_pwait(ep, &ev, 1, 20, &none);
		if (s != 0 || now_ns() - t0 < 19000000) {
			fprintf(stderr, "round %d: epoll_pwait gave %d (%s) after %lu ns\n", r, s,
				s < 0 ? strerror(errno) : "", (unsigned long)(now_ns() - t0));
			return 1;
		}
		if (suspend_round(r, sys))
			return 1;
	}
	close(ep);
	pthread_sigmask(SIG_UNBLOCK, &all, NULL);
	printf("sigwait ok\n");
	return 0;
}

/* ---- pwait ---- */

/* The kernel's argument of pselect6 and io_pgetevents that carries the mask. */
struct ksigpack {
	const sigset_t *ss;
	size_t len;
};

enum pwait_call {
	PW_EPOLL_PWAIT2,
	PW_SYS_EPOLL_PWAIT2,
	PW_SYS_PSELECT6,
	PW_SYS_IO_PGETEVENTS
};

/* call waits ms with mask: its result, errno as it left it. */
static int pwait_once(enum pwait_call call, int ep, aio_context_t ctx, const sigset_t *mask,
		      long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	struct ksigpack pack = { mask, KSIGSET };
	struct epoll_event ev;
	struct io_event iev;

	switch (call) {
	case PW_EPOLL_PWAIT2:
		return epoll_pwait2(ep, &ev, 1, &ts, mask);
	case PW_SYS_EPOLL_PWAIT2:
		return (int)syscall(SYS_epoll_pwait2, ep, &ev, 1, &ts, mask, KSIGSET);
	case PW_SYS_PSELECT6:
		return (int)syscall(SYS_pselect6, 0, NULL, NULL, NULL, &ts, &pack);
	case PW_SYS_IO_PGETEVENTS:
		return (int)syscall(SYS_io_pgetevents, ctx, 1, 1, &iev, &ts, &pack);
	}
	return -1;
}

static int mode_pwait(int rounds, const char *how)
{
	static const char *const names[] = { "epoll_pwait2", "sys_epoll_pwait2", "sys_pselect6",
					     "sys_io_pgetevents" };
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1 };
	enum pwait_call call;
	aio_context_t ctx = 0;
	/* Not on the stack: the wrappers probe them before they read them (rip_pl_peek). */
	static sigset_t all, none;
	timer_t tm;
	int ep, s, e;

	for (call = 0; call < 4 && strcmp(how, names[call]); call++)
		;
	if (call == 4)
		return 2;
	sigfillset(&all);
	sigemptyset(&none);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) {
		perror("epoll_create1");
		return 1;
	}
	if (call == PW_SYS_IO_PGETEVENTS && syscall(SYS_io_setup, 1, &ctx)) {
		fprintf(stderr, "io_setup: %s\n", strerror(errno));
		return errno == ENOSYS || errno == EAGAIN || errno == EPERM ? 3 : 1;
	}
	/* the kernel's answer to the call, without a signal in the way */
	if (pwait_once(call, ep, ctx, &all, 0) && errno == ENOSYS) {
		fprintf(stderr, "%s: %s\n", how, strerror(errno));
		return 3;
	}
	sigaction(SIGUSR1, &sa, NULL);
	if (timer_create(CLOCK_MONOTONIC, &sev, &tm)) {
		perror("timer_create");
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		struct itimerspec its = { .it_value = { 0, 20000000 } };
		uint64_t t0;

		burn(100000000); /* timer signals pending, blocked */
		t0 = now_ns();
		s = pwait_once(call, ep, ctx, &none, 20);
		if (s != 0 || now_ns() - t0 < 19000000) {
			fprintf(stderr, "round %d: %s gave %d (%s) after %lu ns\n", r, how, s,
				s < 0 ? strerror(errno) : "", (unsigned long)(now_ns() - t0));
			return 1;
		}
		/* the program's own signals still come through the mask it gave */
		usr1_count = 0;
		t0 = now_ns();
		timer_settime(tm, 0, &its, NULL);
		s = pwait_once(call, ep, ctx, &none, 10000);
		e = errno;
		if (s != -1 || e != EINTR || usr1_count != 1 || now_ns() - t0 < 19000000) {
			fprintf(stderr, "round %d: %s gave %d (%s), %d SIGUSR1, after %lu ns\n", r,
				how, s, strerror(e), (int)usr1_count,
				(unsigned long)(now_ns() - t0));
			return 1;
		}
	}
	timer_delete(tm);
	if (ctx)
		syscall(SYS_io_destroy, ctx);
	close(ep);
	pthread_sigmask(SIG_UNBLOCK, &all, NULL);
	printf("pwait ok\n");
	return 0;
}

/* ---- many ---- */

static void *short_lived(void *arg)
{
	(void)arg;
	burn(200000);
	return NULL;
}

static int mode_many(int n)
{
	pthread_t t[64];

	for (int done = 0; done < n;) {
		int k = n - done < 64 ? n - done : 64;

		for (int i = 0; i < k; i++)
			if (pthread_create(&t[i], NULL, short_lived, NULL)) {
				perror("pthread_create");
				return 1;
			}
		for (int i = 0; i < k; i++)
			pthread_join(t[i], NULL);
		done += k;
	}
	burn(50000000);
	printf("threads %d\n", n);
	return 0;
}

/* ---- burn ---- */

void top_burn_here(uint64_t ns);
void top_burn_caller(uint64_t ns);

__attribute__((noinline)) void top_burn_here(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns;

	do {
		for (int i = 0; i < 2000000; i++)
			sink += (unsigned long)i ^ sink;
		__asm__ volatile("" ::: "memory");
	} while (cpu_ns() < end);
}

__attribute__((noinline)) void top_burn_caller(uint64_t ns)
{
	top_burn_here(ns);
	__asm__ volatile("" ::: "memory"); /* a call, not a tail jump: this frame stays */
}

static void *burner(void *arg)
{
	top_burn_caller((uint64_t)(uintptr_t)arg * 1000000u);
	return NULL;
}

static int mode_burn(int ms)
{
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, burner, (void *)(uintptr_t)ms)) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("burned\n");
	return 0;
}

/* ---- badfp ---- */

#if defined(__x86_64__)
/*
 * mprotect by the syscall instruction: a change of the stack that no
 * wrapper of the preload library sees (thread.c's holes), as another
 * thread's, or madvise's guards, are not.  The sampler's probe is what
 * keeps its walk out of the page.
 */
static long badfp_mprotect(void *a, size_t len, int prot)
{
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"((long)SYS_mprotect), "D"(a), "S"(len), "d"((long)prot)
			 : "rcx", "r11", "memory");
	return r;
}
#endif

static int mode_badfp(int ms)
{
#if defined(__x86_64__)
	/* a page of our own stack, above the frames of the loop, made PROT_NONE */
	char frame[3 * 4096];
	char *page = (char *)(((uintptr_t)frame + 4095) & ~(uintptr_t)4095);
	uint64_t end;

	memset(frame, 0, sizeof(frame));
	if (badfp_mprotect(page, 4096, PROT_NONE)) {
		fprintf(stderr, "topprog: mprotect failed\n");
		return 1;
	}
	end = cpu_ns() + (uint64_t)ms * 1000000u;
	while (cpu_ns() < end)
		sink += (unsigned long)rbp_spin(page + 64, 10000000);
	if (badfp_mprotect(page, 4096, PROT_READ | PROT_WRITE)) {
		fprintf(stderr, "topprog: mprotect failed\n");
		return 1;
	}
	printf("badfp ok\n");
	return 0;
#else
	(void)ms;
	return 3;
#endif
}

/* ---- strict ---- */

static int mode_strict(int ms, const char *how)
{
	uint64_t t0, loops = 0, n;
	long ret;

	/* Loops of the burn a millisecond, measured over 20 ms. */
	t0 = cpu_ns();
	while (cpu_ns() - t0 < 20000000u) {
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i * 7;
		loops++;
	}
	n = loops / 20 * (uint64_t)ms;
	fflush(NULL);
	if (!strcmp(how, "prctl"))
		ret = prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0);
	else if (!strcmp(how, "sys_prctl"))
		ret = syscall(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0);
	else if (!strcmp(how, "sys_seccomp"))
		ret = syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL);
	else
		return 2;
	if (ret) {
		fprintf(stderr, "topprog: strict mode refused: %s\n", strerror(errno));
		return 3;
	}
	for (uint64_t k = 0; k < n; k++)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i * 7;
	if (write(1, "strict ok\n", 10) != 10)
		syscall(SYS_exit, 1);
	syscall(SYS_exit, 0);
	return 1;
}

/* ---- fork ---- */

extern char **environ;

static int reap(pid_t p, const char *what)
{
	int st;

	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "%s failed\n", what);
		return 1;
	}
	return 0;
}

static int mode_fork(void)
{
	char *argv[] = { "true", NULL };
	pid_t p;
	int failed = 0;

	burn(50000000);
	p = vfork();
	if (p == 0) {
		execvp("true", argv);
		_exit(127);
	}
	failed |= reap(p, "vfork");
	if (posix_spawnp(&p, "true", NULL, NULL, argv, environ))
		p = -1;
	failed |= reap(p, "posix_spawn");
	p = fork();
	if (p == 0) {
		burn(300000000);
		_exit(0);
	}
	printf("child %d\n", (int)p);
	fflush(stdout);
	failed |= reap(p, "fork");
	burn(50000000);
	return failed;
}

/* ---- cputimer ---- */

static volatile sig_atomic_t ticks;

static void on_tick(int sig)
{
	(void)sig;
	ticks++;
}

static int mode_cputimer(void)
{
	struct itimerspec its = { { 0, 10000000 }, { 0, 10000000 } };
	struct sigevent sev;
	struct sigaction sa;
	uint64_t end = cpu_ns() + 1000000000u;
	timer_t t;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_tick;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGUSR2, &sa, NULL)) {
		perror("sigaction");
		return 1;
	}
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR2;
	sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t) || timer_settime(t, 0, &its, NULL)) {
		printf("cputimer: no timer on the thread's CPU-time clock: %s\n", strerror(errno));
		return 3;
	}
	while (!ticks && cpu_ns() < end)
		burn(1000000);
	printf("cputimer: %d signal(s)%s\n", (int)ticks, ticks ? "" : " in 1 s of CPU time");
	return ticks ? 0 : 3;
}

/* ---- TOPPROG_RING ---- */

static int keep_ring(void)
{
	const char *to = getenv("TOPPROG_RING");
	char line[4096 + 256];
	int ret = 1;
	FILE *f;

	if (!to)
		return 0;
	f = fopen("/proc/self/maps", "re");
	if (!f) {
		perror("topprog: /proc/self/maps");
		return 1;
	}
	while (ret && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');
		size_t n;

		if (!path)
			continue;
		n = strcspn(path, "\n");
		path[n] = 0;
		if (n < 5 || strcmp(path + n - 5, ".ring"))
			continue;
		if (link(path, to)) {
			fprintf(stderr, "topprog: link %s %s: %s\n", path, to, strerror(errno));
			break;
		}
		ret = 0;
	}
	fclose(f);
	if (ret)
		fprintf(stderr, "topprog: no ring file kept at %s\n", to);
	return ret;
}

static int run_mode(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "fork"))
		return mode_fork();
	if (argc == 2 && !strcmp(argv[1], "cputimer"))
		return mode_cputimer();
	if (argc == 3 && !strcmp(argv[1], "top"))
		return mode_top(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "eintr"))
		return mode_eintr(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "sigprof"))
		return mode_sigprof(atoi(argv[2]));
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "signalfd"))
		return mode_signalfd(atoi(argv[2]), argc == 4 ? argv[3] : NULL);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "sigwait"))
		return mode_sigwait(atoi(argv[2]), argc == 4 ? argv[3] : NULL);
	if (argc == 4 && !strcmp(argv[1], "pwait"))
		return mode_pwait(atoi(argv[2]), argv[3]);
	if (argc == 3 && !strcmp(argv[1], "many"))
		return mode_many(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "burn"))
		return mode_burn(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "badfp"))
		return mode_badfp(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "strict"))
		return mode_strict(atoi(argv[2]), argv[3]);
	fprintf(stderr,
		"usage: topprog top READY | eintr SECONDS | sigprof N | signalfd ROUNDS "
		"[sys4|sys] | sigwait ROUNDS [sys] | pwait ROUNDS CALL | many N | fork | cputimer "
		"| burn MS | badfp MS | strict MS HOW\n");
	return 2;
}

int main(int argc, char **argv)
{
	int rc = run_mode(argc, argv);

	if (rc == 0 && keep_ring())
		rc = 1;
	return rc;
}
