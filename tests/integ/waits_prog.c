// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/waits_prog.c - a test server that never calls librip, for
 * waits-server.sh: one thread per kind of blocking call, each started in a
 * function named after what it waits in (w_epoll, w_poll, ...), which makes
 * the call itself, so that rip ps must name that function as the caller.
 *
 *	waits_prog READY SECONDS
 *
 * The timed waits (epoll_wait, poll, select, nanosleep, sigtimedwait,
 * accept and recv with SO_RCVTIMEO, a futex, sem_timedwait) last SECONDS
 * and must end by their timeout: an EINTR or an early return is printed as
 * "FAIL".  The others (read on a pipe, a mutex the main thread holds, a
 * condition, sem_wait, pthread_join) wait until the main thread releases
 * them after the timed ones.  w_nest waits in read; once everything waits,
 * the main thread sends it SIGUSR1, whose handler calls write (wrapped too),
 * and writes READY.nest after the handler ran.  READY gets the pid once the
 * threads are about to block.  Prints "ok NAME" per thread, then "done".
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>

#define NOINLINE __attribute__((noinline))

static int secs;
static atomic_int started, handled;
static int pipe_r[2], pipe_nest[2], pipe_poll[2];
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int cv_go;
static sem_t sem_t1, sem_t2;
static uint32_t futex_word;
static pthread_t joined;
static char results[32][96];
static atomic_int nres;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void result(const char *name, int ok, const char *why)
{
	int i = atomic_fetch_add(&nres, 1);

	snprintf(results[i], sizeof(results[i]), "%s %s%s%s", ok ? "ok" : "FAIL", name,
		 why ? ": " : "", why ? why : "");
}

/* A timed wait: it must come back by its timeout, not before and not with EINTR. */
static void timed(const char *name, double t0, int ret, int err, int want_ret, int want_err)
{
	char why[64];
	double el = now_s() - t0;

	if (ret != want_ret || (want_err && err != want_err)) {
		snprintf(why, sizeof(why), "returned %d (%s)", ret, strerror(err));
		result(name, 0, why);
	} else if (el < secs - 0.05) {
		snprintf(why, sizeof(why), "early, after %.2fs", el);
		result(name, 0, why);
	} else {
		result(name, 1, NULL);
	}
}

static void up(void)
{
	atomic_fetch_add(&started, 1);
}

static NOINLINE void *w_epoll(void *a)
{
	struct epoll_event ev;
	int ep = epoll_create1(0);
	double t0;
	int r;

	ev.events = EPOLLIN;
	epoll_ctl(ep, EPOLL_CTL_ADD, pipe_poll[0], &ev);
	up();
	t0 = now_s();
	r = epoll_wait(ep, &ev, 1, secs * 1000);
	timed("w_epoll", t0, r, errno, 0, 0);
	return a;
}

static NOINLINE void *w_poll(void *a)
{
	struct pollfd p = { .fd = pipe_poll[0], .events = POLLIN };
	double t0;
	int r;

	up();
	t0 = now_s();
	r = poll(&p, 1, secs * 1000);
	timed("w_poll", t0, r, errno, 0, 0);
	return a;
}

static NOINLINE void *w_select(void *a)
{
	struct timeval tv = { .tv_sec = secs };
	fd_set r;
	double t0;
	int n;

	FD_ZERO(&r);
	FD_SET(pipe_poll[0], &r);
	up();
	t0 = now_s();
	n = select(pipe_poll[0] + 1, &r, NULL, NULL, &tv);
	timed("w_select", t0, n, errno, 0, 0);
	return a;
}

static NOINLINE void *w_nanosleep(void *a)
{
	struct timespec ts = { .tv_sec = secs };
	double t0;
	int r;

	up();
	t0 = now_s();
	r = nanosleep(&ts, NULL);
	timed("w_nanosleep", t0, r, errno, 0, 0);
	return a;
}

static NOINLINE void *w_sigtimedwait(void *a)
{
	struct timespec ts = { .tv_sec = secs };
	sigset_t s;
	double t0;
	int r;

	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	up();
	t0 = now_s();
	r = sigtimedwait(&s, NULL, &ts);
	timed("w_sigtimedwait", t0, r, errno, -1, EAGAIN);
	return a;
}

static int listener(struct timeval *tv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, tv, sizeof(*tv));
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) || listen(s, 4))
		return -1;
	return s;
}

static NOINLINE void *w_accept(void *a)
{
	struct timeval tv = { .tv_sec = secs };
	int s = listener(&tv), r;
	double t0;

	up();
	t0 = now_s();
	r = accept(s, NULL, NULL);
	timed("w_accept", t0, r, errno, -1, EAGAIN);
	return a;
}

static NOINLINE void *w_recv(void *a)
{
	struct timeval tv = { .tv_sec = secs };
	int sv[2], r;
	char c;
	double t0;

	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	up();
	t0 = now_s();
	r = (int)recv(sv[0], &c, 1, 0);
	timed("w_recv", t0, r, errno, -1, EAGAIN);
	return a;
}

static NOINLINE void *w_futex(void *a)
{
	struct timespec ts = { .tv_sec = secs };
	double t0;
	long r;

	up();
	t0 = now_s();
	r = syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
	timed("w_futex", t0, (int)r, errno, -1, ETIMEDOUT);
	return a;
}

static NOINLINE void *w_semtimed(void *a)
{
	struct timespec ts;
	double t0;
	int r;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	up();
	t0 = now_s();
	r = sem_timedwait(&sem_t1, &ts);
	timed("w_semtimed", t0, r, errno, -1, ETIMEDOUT);
	return a;
}

/* ---- released by the main thread ---- */

static NOINLINE void *w_read(void *a)
{
	char c;
	ssize_t r;

	up();
	r = read(pipe_r[0], &c, 1);
	result("w_read", r == 1, r == 1 ? NULL : "read failed");
	return a;
}

static NOINLINE void *w_mutex(void *a)
{
	int r;

	up();
	r = pthread_mutex_lock(&held);
	result("w_mutex", r == 0, r ? "lock failed" : NULL);
	pthread_mutex_unlock(&held);
	return a;
}

static NOINLINE void *w_cond(void *a)
{
	int r = 0;

	pthread_mutex_lock(&cm);
	up();
	while (!cv_go && !r)
		r = pthread_cond_wait(&cv, &cm);
	pthread_mutex_unlock(&cm);
	result("w_cond", r == 0, r ? "cond_wait failed" : NULL);
	return a;
}

static NOINLINE void *w_sem(void *a)
{
	int r;

	up();
	r = sem_wait(&sem_t2);
	result("w_sem", r == 0, r ? "sem_wait failed" : NULL);
	return a;
}

static NOINLINE void *w_joined(void *a)
{
	char c;

	if (read(pipe_r[0], &c, 1) != 1)
		return NULL;
	return a;
}

static NOINLINE void *w_join(void *a)
{
	int r;

	up();
	r = pthread_join(joined, NULL);
	result("w_join", r == 0, r ? "join failed" : NULL);
	return a;
}

static void on_usr1(int sig)
{
	static const char msg[] = "nested\n";
	int fd = open("/dev/null", O_WRONLY);

	(void)sig;
	if (write(fd, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	close(fd);
	atomic_store(&handled, 1);
}

static NOINLINE void *w_nest(void *a)
{
	char c;
	ssize_t r;

	up();
	r = read(pipe_nest[0], &c, 1);
	result("w_nest", r == 1, r == 1 ? NULL : "read failed");
	return a;
}

int main(int argc, char **argv)
{
	static void *(*const timed_fns[])(void *) = { w_epoll,	w_poll,	 w_select, w_nanosleep,
						     w_sigtimedwait, w_accept, w_recv, w_futex,
						     w_semtimed };
	static void *(*const held_fns[])(void *) = { w_read, w_mutex, w_cond, w_sem, w_join };
	enum { NT = sizeof(timed_fns) / sizeof(timed_fns[0]), NH = 5 };
	pthread_t t[NT], h[NH], nest;
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	char path[4096];
	sigset_t s;
	FILE *f;

	if (argc != 3 || (secs = atoi(argv[2])) <= 0)
		return 2;
	if (pipe(pipe_r) || pipe(pipe_nest) || pipe(pipe_poll))
		return 2;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sem_init(&sem_t1, 0, 0);
	sem_init(&sem_t2, 0, 0);
	pthread_mutex_lock(&held);
	pthread_create(&joined, NULL, w_joined, NULL);
	for (int i = 0; i < NT; i++)
		pthread_create(&t[i], NULL, timed_fns[i], NULL);
	for (int i = 0; i < NH; i++)
		pthread_create(&h[i], NULL, held_fns[i], NULL);
	pthread_create(&nest, NULL, w_nest, NULL);
	while (atomic_load(&started) < NT + NH + 1)
		usleep(1000);
	f = fopen(argv[1], "w");
	if (!f)
		return 2;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	/* The nested handler, once w_nest blocks (a little after it said it would). */
	usleep(200000);
	pthread_kill(nest, SIGUSR1);
	while (!atomic_load(&handled))
		usleep(1000);
	snprintf(path, sizeof(path), "%s.nest", argv[1]);
	f = fopen(path, "w");
	if (!f)
		return 2;
	fputs("handled\n", f);
	fclose(f);
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	/* Release the others. */
	pthread_mutex_unlock(&held);
	pthread_mutex_lock(&cm);
	cv_go = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&cm);
	sem_post(&sem_t2);
	if (write(pipe_r[1], "xx", 2) != 2 || write(pipe_nest[1], "x", 1) != 1)
		return 2;
	for (int i = 0; i < NH; i++)
		pthread_join(h[i], NULL);
	pthread_join(nest, NULL);
	for (int i = 0; i < atomic_load(&nres); i++)
		printf("%s\n", results[i]);
	printf("done\n");
	return 0;
}
