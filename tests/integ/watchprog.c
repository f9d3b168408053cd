// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/watchprog.c - threads that block where no wrapper sees them,
 * for the watcher tests (watch-*.sh).
 *
 * usage: watchprog READY [futex=N] [read=N] [churn] [nodump] [unshare]
 *        [fork] [spin]
 *
 *  - futex=N: N threads in futex_waiter -> a raw futex(FUTEX_WAIT) (the syscall
 *             instruction itself: libc's syscall() is wrapped now)
 *  - read=N:  N threads in pipe_reader -> a raw read on a pipe
 *  - uring=N: N threads in uring_waiter -> io_uring_enter waiting for a
 *             completion of nothing ("uring unavailable: ERR" if the kernel
 *             refuses io_uring_setup: ENOSYS, EPERM, EACCES, or ENOMEM of a
 *             small RLIMIT_MEMLOCK; "uring failed: ERR" for any other
 *             error, ours); never woken
 *  - churn:   a thread that keeps creating threads which block a moment and exit
 *  - nodump:  prctl(PR_SET_DUMPABLE, 0) first
 *  - unshare: single-threaded, calls unshare(CLONE_NEWUSER) first and prints
 *             "unshare ok" or "unshare failed: ERR" (then goes on)
 *  - unshare-after-thread: the same after a thread was created and joined
 *             (the watcher runs then: the wrapper must stop it for the call)
 *  - fork:    after the threads started, fork; the child makes a thread,
 *             blocks it and its main thread in child_waiter (raw futex) and
 *             writes READY.child
 *
 * Each thread attaches a slot with rip_thread_attach (the preload library
 * will do it at birth; until then the test does it).  When READY exists the
 * threads have been started (the tests wait for rip ps to show them
 * blocked).  The program ends on SIGTERM: main waits for it in sigwait,
 * then wakes every futex waiter and pipe reader, joins them and prints
 * "early N": blocking calls that returned before they were woken (EINTR or
 * a spurious 0).  Exit 0 if N is 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

/*
 * A system call made with the instruction itself, as Go or a static
 * runtime does: libc's syscall() is wrapped by the preload library (it
 * records futex waits), this is not.  -errno on failure, as the kernel says.
 */
static long raw_syscall(long nr, long a1, long a2, long a3, long a4)
{
#if defined(__x86_64__)
	long ret;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = 0;
	register long r9 __asm__("r9") = 0;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	register long x4 __asm__("x4") = 0;
	register long x5 __asm__("x5") = 0;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
#else
	long r = syscall(nr, a1, a2, a3, a4, 0L, 0L);

	return r < 0 ? -errno : r;
#endif
}

static uint32_t go_word; /* 1: futex waiters may leave */
static int pipefd[2];
static volatile int stopping; /* set before the wake-ups */
static unsigned long early;   /* returns before the wake-up */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int churn_stop;

static void count_early(void)
{
	pthread_mutex_lock(&lock);
	early++;
	pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) static void futex_waiter(void)
{
	while (!__atomic_load_n(&go_word, __ATOMIC_ACQUIRE)) {
		long r = raw_syscall(SYS_futex, (long)&go_word, FUTEX_WAIT, 0, 0);

		if (!__atomic_load_n(&go_word, __ATOMIC_ACQUIRE) && (r == 0 || r == -EINTR))
			count_early();
	}
	__asm__ volatile("" ::: "memory");
}

static void *futex_thread(void *arg)
{
	rip_thread_attach();
	rip_thread_set_name("futexer");
	futex_waiter();
	return NULL;
}

__attribute__((noinline)) static void pipe_reader(void)
{
	char c;

	for (;;) {
		long r = raw_syscall(SYS_read, pipefd[0], (long)&c, 1, 0);

		if (r == 1 || (r == 0 && stopping))
			break;
		if (!stopping)
			count_early();
		if (r == 0)
			break;
	}
	__asm__ volatile("" ::: "memory");
}

static void *read_thread(void *arg)
{
	rip_thread_attach();
	rip_thread_set_name("reader");
	pipe_reader();
	return NULL;
}

static void *short_thread(void *arg)
{
	struct timespec ts = { 0, 200000 };

	rip_thread_attach();
	syscall(SYS_nanosleep, &ts, NULL);
	return NULL;
}

static void *churn_thread(void *arg)
{
	rip_thread_attach();
	while (!churn_stop) {
		pthread_t t[8];
		int n = 0;

		for (int i = 0; i < 8; i++)
			if (!pthread_create(&t[n], NULL, short_thread, NULL))
				n++;
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
	}
	return NULL;
}

/* Waits for a completion of a ring nothing was submitted to: blocks for good. */
__attribute__((noinline)) static void uring_waiter(int fd)
{
	for (;;)
		raw_syscall(SYS_io_uring_enter, fd, 0, 1, IORING_ENTER_GETEVENTS);
}

static void *uring_thread(void *arg)
{
	struct io_uring_params p;
	long fd;

	memset(&p, 0, sizeof(p));
	rip_thread_attach();
	rip_thread_set_name("uring");
	fd = syscall(SYS_io_uring_setup, 4, &p);
	if (fd < 0) {
		int e = errno;
		bool refused = e == ENOSYS || e == EPERM || e == EACCES || e == ENOMEM;

		printf("uring %s: %s\n", refused ? "unavailable" : "failed", strerror(e));
		return NULL;
	}
	uring_waiter((int)fd);
	return NULL;
}

__attribute__((noinline)) static void child_waiter(void)
{
	static uint32_t never;

	for (;;)
		raw_syscall(SYS_futex, (long)&never, FUTEX_WAIT, 0, 0);
}

static void *child_thread(void *arg)
{
	child_waiter();
	return arg;
}

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs("ready\n", f);
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	int nfutex = 0, nread = 0, nuring = 0;
	int churn = 0, nodump = 0, do_unshare = 0, do_fork = 0;
	pthread_t *th, ch;
	sigset_t set;
	int sig, n = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: watchprog READY [futex=N] [read=N] [churn] [nodump] "
				"[unshare] [fork]\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (!strncmp(argv[i], "futex=", 6))
			nfutex = atoi(argv[i] + 6);
		else if (!strncmp(argv[i], "read=", 5))
			nread = atoi(argv[i] + 5);
		else if (!strncmp(argv[i], "uring=", 6))
			nuring = atoi(argv[i] + 6);
		else if (!strcmp(argv[i], "churn"))
			churn = 1;
		else if (!strcmp(argv[i], "nodump"))
			nodump = 1;
		else if (!strcmp(argv[i], "unshare"))
			do_unshare = 1;
		else if (!strcmp(argv[i], "unshare-after-thread"))
			do_unshare = 2;
		else if (!strcmp(argv[i], "fork"))
			do_fork = 1;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	if (nodump)
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (do_unshare == 2) {
		/* A thread came and went: the watcher runs, the program is single-threaded again. */
		pthread_t t;

		if (!pthread_create(&t, NULL, short_thread, NULL))
			pthread_join(t, NULL);
	}
	if (do_unshare) {
		if (unshare(CLONE_NEWUSER))
			printf("unshare failed: %s\n", strerror(errno));
		else
			printf("unshare ok\n");
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pipe(pipefd))
		return 1;
	rip_thread_attach();
	th = calloc((size_t)(nfutex + nread) + 1, sizeof(*th));
	for (int i = 0; i < nfutex; i++)
		if (!pthread_create(&th[n], NULL, futex_thread, NULL))
			n++;
	for (int i = 0; i < nread; i++)
		if (!pthread_create(&th[n], NULL, read_thread, NULL))
			n++;
	for (int i = 0; i < nuring; i++) {
		pthread_t u; /* never woken, never joined: they end with the process */

		pthread_create(&u, NULL, uring_thread, NULL);
	}
	if (churn)
		pthread_create(&ch, NULL, churn_thread, NULL);
	if (do_fork) {
		pid_t pid = fork();

		if (pid == 0) {
			char path[4096];
			pthread_t t;

			snprintf(path, sizeof(path), "%s.child", argv[1]);
			pthread_create(&t, NULL, child_thread, NULL);
			touch(path);
			child_waiter();
		}
		/*
		 * No wrapped call (not even printf's write) until the child has its
		 * file: librip copies the parent's slots into the child's file in
		 * the child, from the parent's live file, so a wait record the
		 * forking thread writes meanwhile reaches the child's copy, and the
		 * child's main thread would look covered by a wrapper (a bug of
		 * the wait records at fork, not of the watcher).
		 */
		{
			char path[4096];
			struct timespec ms = { 0, 1000000 };

			snprintf(path, sizeof(path), "%s.child", argv[1]);
			for (int i = 0; i < 30000 && access(path, F_OK); i++)
				raw_syscall(SYS_nanosleep, (long)&ms, 0, 0, 0);
		}
		printf("child %d\n", (int)pid);
	}
	touch(argv[1]);
	sigwait(&set, &sig);
	stopping = 1;
	churn_stop = 1;
	__atomic_store_n(&go_word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &go_word, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
	for (int i = 0; i < nread; i++)
		if (write(pipefd[1], "x", 1) != 1)
			break;
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	if (churn)
		pthread_join(ch, NULL);
	printf("early %lu\n", early);
	return early ? 1 : 0;
}
