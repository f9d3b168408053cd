/* SPDX-License-Identifier: Apache-2.0 */
/*
 * examples/demo.c - a pretend server with 10,000 threads and 100,000
 * coroutines, a few of them stuck, for `rip ps` to find (make demo).
 *
 *	demo [--threads N] [--coros N]
 *
 * Worker threads ("worker-N") idle in wait_for_work() on condition
 * variables (woken every half second or so), in read_socket_idle() on pipes
 * that never get data, or in timer_sleep_loop().  A scheduler thread
 * ("sched") runs the coroutines ("conn-N") of coro.h; they park in
 * await_request(), await_db() or await_upstream() and the ticker thread
 * has them woken every 100 ms, about a fifth at a time.  Each waits at a
 * rip_snap(), so the ring says where.
 *
 * Five things are stuck, each in a function of its own that snaps right
 * before it gets stuck:
 *	stuck_reading_pipe   a thread reads a pipe nobody writes to
 *	deadlock_a/_b        two threads take two mutexes in opposite orders
 *	forgotten_coroutine  a coroutine parks on a queue nobody wakes
 *	busy_spin            a thread spins forever, snapping in the loop
 *
 * When all is set up it prints "ready <ring file>" and runs until killed.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

#include "coro.h"

#define WORKER_STACK (64u * 1024u)
#define WORK_QUEUES 256	   /* condition variables the idle workers wait on */
#define SOCKET_PIPES 16	   /* pipes the idle socket readers share */
#define TICK_NS 100000000L /* the ticker's period: 100 ms */
#define WAKE_SHARE 5	   /* each tick wakes about 1/WAKE_SHARE of the waiters */
#define SETUP_TIMEOUT 60   /* seconds to wait for everything to park */

enum worker_kind {
	WORKER_CV,
	WORKER_SOCKET,
	WORKER_TIMER
};

struct work_queue {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned long gen; /* bumped when there is work */
} __attribute__((aligned(64)));

struct worker {
	unsigned id;
	enum worker_kind kind;
	unsigned long handled; /* requests handled */
	unsigned long work;
};

struct conn {
	unsigned id;
	unsigned long requests;
};

static struct work_queue work_queues[WORK_QUEUES];
static int socket_pipes[SOCKET_PIPES][2];
static int stuck_pipe[2];
static int tick_pipe[2]; /* ticker -> scheduler: one byte per tick */
static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t deadlock_barrier;

static unsigned long parked; /* threads and coroutines that reached their first wait */
static int sched_ready;	     /* every coroutine has run up to its first wait */
static unsigned conn_count;
static int spin_go; /* setup is done: busy_spin may start */

/* Coroutine wait queues: only the scheduler thread touches them. */
static struct coro_sched sched;
static struct coro_queue request_waiters, db_waiters, upstream_waiters;
static struct coro_queue lost_waiters; /* nobody ever wakes these */

static void die(const char *what, int err)
{
	fprintf(stderr, "demo: %s: %s\n", what, strerror(err));
	exit(1);
}

static void note_parked(void)
{
	__atomic_fetch_add(&parked, 1, __ATOMIC_RELAXED);
}

static void sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- idle worker threads ------------------------------------------------ */

__attribute__((noinline)) static void wait_for_work(struct work_queue *q, int *first)
{
	unsigned long gen;

	pthread_mutex_lock(&q->lock);
	gen = q->gen;
	rip_snap();
	if (*first) {
		*first = 0;
		note_parked();
	}
	while (q->gen == gen)
		pthread_cond_wait(&q->cond, &q->lock);
	pthread_mutex_unlock(&q->lock);
}

__attribute__((noinline)) static void handle_request(struct worker *w)
{
	for (unsigned i = 0; i < 64; i++)
		w->work += i * w->id;
	w->handled++;
	rip_snap();
}

__attribute__((noinline)) static void read_socket_idle(int fd, int *first)
{
	char buf[64];

	rip_snap();
	if (*first) {
		*first = 0;
		note_parked();
	}
	/* A keep-alive connection whose client never says anything. */
	while (read(fd, buf, sizeof(buf)) < 0 && errno == EINTR)
		;
}

__attribute__((noinline)) static void timer_sleep_loop(struct worker *w)
{
	int first = 1;

	for (unsigned long n = 0;; n++) {
		rip_snap();
		if (first) {
			first = 0;
			note_parked();
		}
		/* 200..299 ms, so that the timers do not all fire together */
		sleep_ns(200000000L + (long)((w->id * 7919u + n) % 100u) * 1000000L);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char name[32];
	int first = 1;

	snprintf(name, sizeof(name), "worker-%u", w->id);
	rip_thread_set_name(name);
	switch (w->kind) {
	case WORKER_CV:
		for (;;) {
			wait_for_work(&work_queues[w->id % WORK_QUEUES], &first);
			handle_request(w);
		}
	case WORKER_SOCKET:
		for (;;)
			read_socket_idle(socket_pipes[w->id % SOCKET_PIPES][0], &first);
	case WORKER_TIMER:
		timer_sleep_loop(w);
	}
	return NULL;
}

/* ---- the stuck threads ---------------------------------------------------- */

__attribute__((noinline)) static void stuck_reading_pipe(void)
{
	char c;

	rip_snap();
	note_parked();
	/* Nobody ever writes to this pipe. */
	while (read(stuck_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
}

static void *stuck_pipe_main(void *arg)
{
	(void)arg;
	rip_thread_set_name("pipe-reader");
	for (;;)
		stuck_reading_pipe();
	return NULL;
}

__attribute__((noinline)) static void deadlock_a(void)
{
	pthread_mutex_lock(&lock_a);
	pthread_barrier_wait(&deadlock_barrier); /* B is held by now */
	rip_snap();
	note_parked();
	pthread_mutex_lock(&lock_b);
	pthread_mutex_unlock(&lock_b);
	pthread_mutex_unlock(&lock_a);
}

__attribute__((noinline)) static void deadlock_b(void)
{
	pthread_mutex_lock(&lock_b);
	pthread_barrier_wait(&deadlock_barrier); /* A is held by now */
	rip_snap();
	note_parked();
	pthread_mutex_lock(&lock_a);
	pthread_mutex_unlock(&lock_a);
	pthread_mutex_unlock(&lock_b);
}

static void *deadlock_a_main(void *arg)
{
	(void)arg;
	rip_thread_set_name("deadlock-a");
	deadlock_a();
	return NULL;
}

static void *deadlock_b_main(void *arg)
{
	(void)arg;
	rip_thread_set_name("deadlock-b");
	deadlock_b();
	return NULL;
}

__attribute__((noinline)) static void busy_spin(void)
{
	volatile unsigned long spins = 0;

	for (;;) {
		rip_snap();
		spins++;
		__builtin_ia32_pause();
	}
}

static void *busy_spin_main(void *arg)
{
	(void)arg;
	rip_thread_set_name("busy-spin");
	/* Spinning during setup would only slow it down: wait for main's go. */
	while (!__atomic_load_n(&spin_go, __ATOMIC_ACQUIRE))
		sleep_ns(10000000L);
	busy_spin();
	return NULL;
}

/* ---- coroutines --------------------------------------------------------- */

__attribute__((noinline)) static void await_request(void)
{
	rip_snap();
	coro_wait(&request_waiters);
}

__attribute__((noinline)) static void await_db(void)
{
	rip_snap();
	coro_wait(&db_waiters);
}

__attribute__((noinline)) static void await_upstream(void)
{
	rip_snap();
	coro_wait(&upstream_waiters);
}

__attribute__((noinline)) static void forgotten_coroutine(struct conn *c)
{
	c->requests = ~0ul; /* marks it in a core dump */
	rip_snap();
	/* Parks on a queue that nothing ever wakes: the bug. */
	coro_wait(&lost_waiters);
}

__attribute__((noinline)) static unsigned long parse_request(struct conn *c)
{
	unsigned long h = c->id * 2654435761u + c->requests;

	for (int i = 0; i < 16; i++)
		h = h * 31 + (unsigned long)i;
	rip_snap();
	return h;
}

__attribute__((noinline)) static void send_response(struct conn *c, unsigned long h)
{
	c->requests++;
	if (h == 0) /* never: keeps h alive */
		c->requests++;
	rip_snap();
}

static void conn_main(void *arg)
{
	struct conn *c = arg;

	for (;;) {
		unsigned long h;

		await_request();
		h = parse_request(c);
		if (c->id == conn_count / 2 && c->requests == 0)
			forgotten_coroutine(c);
		else if ((c->id + c->requests) % 3 == 0)
			await_db();
		else if ((c->id + c->requests) % 7 == 0)
			await_upstream();
		send_response(c, h);
	}
}

/* Wake the longest waiting ~1/WAKE_SHARE of q (at least one). */
static void wake_some(struct coro_queue *q)
{
	size_t n = q->len / (WAKE_SHARE - 1) + 1;

	while (n-- && coro_wake_one(q))
		;
}

/* The scheduler's idle point: wait for the ticker, then wake some coroutines. */
__attribute__((noinline)) static void sched_idle(void)
{
	char buf[64];

	rip_snap();
	while (read(tick_pipe[0], buf, sizeof(buf)) < 0 && errno == EINTR)
		;
	wake_some(&request_waiters);
	wake_some(&db_waiters);
	wake_some(&upstream_waiters);
}

static void *sched_main(void *arg)
{
	struct conn *conns;
	char name[32];
	int err;

	(void)arg;
	rip_thread_set_name("sched");
	conns = calloc(conn_count ? conn_count : 1, sizeof(*conns));
	if (!conns)
		die("coroutines", ENOMEM);
	err = coro_sched_init(&sched, conn_count ? conn_count : 1);
	if (err)
		die("coroutine stacks", -err);
	for (unsigned i = 0; i < conn_count; i++) {
		conns[i].id = i;
		snprintf(name, sizeof(name), "conn-%u", i);
		if (!coro_spawn(&sched, name, conn_main, &conns[i]))
			die("coro_spawn", errno);
		/* Run them in batches so the run queue never holds them all. */
		if (i % 1024 == 1023)
			coro_sched_run(&sched);
	}
	coro_sched_run(&sched);
	/* One round more, so that the forgotten one gets lost. */
	while (request_waiters.len)
		coro_wake_one(&request_waiters);
	coro_sched_run(&sched);
	if (sched.no_slot)
		fprintf(stderr, "demo: %u coroutines got no slot in the ring\n", sched.no_slot);
	__atomic_store_n(&sched_ready, 1, __ATOMIC_RELEASE);
	for (;;) {
		sched_idle();
		coro_sched_run(&sched);
	}
	return NULL;
}

/* ---- the ticker ------------------------------------------------------------ */

__attribute__((noinline)) static void tick_sleep(void)
{
	rip_snap();
	sleep_ns(TICK_NS);
}

static void *ticker_main(void *arg)
{
	(void)arg;
	rip_thread_set_name("ticker");
	for (unsigned long tick = 0;; tick++) {
		tick_sleep();
		/* The scheduler wakes a share of the coroutines on every byte. */
		if (write(tick_pipe[1], "t", 1) < 0 && errno != EAGAIN)
			perror("demo: ticker");
		/* Each work queue gets work every WAKE_SHARE ticks. */
		for (unsigned i = tick % WAKE_SHARE; i < WORK_QUEUES; i += WAKE_SHARE) {
			struct work_queue *q = &work_queues[i];

			pthread_mutex_lock(&q->lock);
			q->gen++;
			pthread_cond_broadcast(&q->cond);
			pthread_mutex_unlock(&q->lock);
		}
	}
	return NULL;
}

/* ---- setup ------------------------------------------------------------------ */

static void start(void *(*fn)(void *), const char *what)
{
	pthread_t t;
	int err = pthread_create(&t, NULL, fn, NULL);

	if (err)
		die(what, err);
	pthread_detach(t);
}

/* Start up to n workers; returns how many started. */
static unsigned start_workers(unsigned n)
{
	struct worker *ws = calloc(n ? n : 1, sizeof(*ws));
	pthread_attr_t attr;
	unsigned i;
	int err;

	if (!ws)
		die("workers", ENOMEM);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, WORKER_STACK);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (i = 0; i < n; i++) {
		pthread_t t;

		ws[i].id = i;
		/* 70% wait for work, 20% idle on sockets, 10% in timers */
		ws[i].kind = i % 10 < 7 ? WORKER_CV : i % 10 < 9 ? WORKER_SOCKET : WORKER_TIMER;
		err = pthread_create(&t, &attr, worker_main, &ws[i]);
		if (err) {
			fprintf(stderr,
				"demo: pthread_create: %s after %u of %u worker threads;"
				" continuing with %u\n",
				strerror(err), i, n, i);
			break;
		}
	}
	pthread_attr_destroy(&attr);
	return i;
}

static unsigned parse_count(const char *opt, const char *v)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = v ? strtoul(v, &end, 10) : 0;
	if (!v || !*v || *end || errno || n > 1000000) {
		fprintf(stderr, "demo: %s wants a number up to 1000000\n", opt);
		fprintf(stderr, "usage: demo [--threads N] [--coros N]\n");
		exit(2);
	}
	return (unsigned)n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void main_wait(void)
{
	rip_snap();
	pause();
}

int main(int argc, char **argv)
{
	unsigned threads = 10000, started;
	unsigned long expect;
	char path[PATH_MAX];
	double t0 = now_s();
	int err;

	conn_count = 100000;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads")) {
			threads = parse_count(argv[i], argv[i + 1]);
			i++;
		} else if (!strcmp(argv[i], "--coros")) {
			conn_count = parse_count(argv[i], argv[i + 1]);
			i++;
		} else {
			fprintf(stderr, "usage: demo [--threads N] [--coros N]\n");
			return 2;
		}
	}

	RIP_OPTS(rip_ring_opts, o, .slots = threads + conn_count + 1000);
	err = rip_ring_open(&o);
	if (!err)
		err = rip_ring_path(path, sizeof(path));
	if (err)
		die("cannot open the ring file", -err);
	rip_thread_set_name("main");

	if (pipe(stuck_pipe) || pipe(tick_pipe))
		die("pipe", errno);
	for (int i = 0; i < SOCKET_PIPES; i++)
		if (pipe(socket_pipes[i]))
			die("pipe", errno);
	for (int i = 0; i < WORK_QUEUES; i++) {
		pthread_mutex_init(&work_queues[i].lock, NULL);
		pthread_cond_init(&work_queues[i].cond, NULL);
	}
	pthread_barrier_init(&deadlock_barrier, NULL, 2);

	/* The stuck ones first, so that they exist whatever happens later. */
	start(stuck_pipe_main, "stuck_reading_pipe thread");
	start(deadlock_a_main, "deadlock_a thread");
	start(deadlock_b_main, "deadlock_b thread");
	start(busy_spin_main, "busy_spin thread");
	start(sched_main, "scheduler thread");
	start(ticker_main, "ticker thread");
	/* Last, so that running out of threads only costs workers. */
	started = start_workers(threads);

	/* Wait until every thread sits where it idles and the coroutines have parked. */
	expect = started + 3;
	while (__atomic_load_n(&parked, __ATOMIC_RELAXED) < expect ||
	       !__atomic_load_n(&sched_ready, __ATOMIC_ACQUIRE)) {
		if (now_s() - t0 > SETUP_TIMEOUT) {
			fprintf(stderr,
				"demo: only %lu of %lu threads parked after %d s; going on\n",
				__atomic_load_n(&parked, __ATOMIC_RELAXED), expect, SETUP_TIMEOUT);
			break;
		}
		sleep_ns(10000000L);
	}
	__atomic_store_n(&spin_go, 1, __ATOMIC_RELEASE);
	fprintf(stderr, "demo: %u worker threads, %u coroutines, set up in %.1f s\n", started,
		conn_count, now_s() - t0);
	printf("ready %s\n", path);
	fflush(stdout);
	for (;;)
		main_wait();
	return 0;
}
