// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/waits_tmo.c - threads parked in every kind of wait with a
 * timeout, each of 60 s, for waits-timeout.sh: absolute deadlines on
 * CLOCK_MONOTONIC and CLOCK_REALTIME (clock_nanosleep with TIMER_ABSTIME,
 * as Python's time.sleep; pthread_cond_timedwait on a default condition and
 * on one whose clock is CLOCK_MONOTONIC; pthread_cond_clockwait;
 * sem_timedwait, sem_clockwait; FUTEX_WAIT_BITSET on either clock;
 * pthread_mutex_timedlock and _clocklock, pthread_rwlock_timedwrlock and
 * _clockwrlock on locks main holds; pthread_timedjoin_np) and relative ones
 * (clock_nanosleep, nanosleep, FUTEX_WAIT, poll).  Each thread is named
 * after its wait (the name rip ps shows).
 *
 *	waits_tmo READY
 *
 * READY gets the pid once every thread is about to block.  A thread whose
 * wait ends early waits again until its deadline, then exits; the program
 * ends by SIGALRM 20 s after the last deadline if nobody killed it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TMO 60

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER, cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t cv_real = PTHREAD_COND_INITIALIZER, cv_mono;
static sem_t sem;
static uint32_t fword;
static atomic_int up;
static pthread_t forever;

/* now on clk plus TMO seconds */
static struct timespec deadline(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	ts.tv_sec += TMO;
	return ts;
}

/* Is the deadline ts on clk past? */
static int past(const struct timespec *ts, clockid_t clk)
{
	struct timespec now;

	clock_gettime(clk, &now);
	return now.tv_sec > ts->tv_sec || (now.tv_sec == ts->tv_sec && now.tv_nsec >= ts->tv_nsec);
}

/* The loops: a spurious or early wakeup waits again, until the deadline. */
static void *abs_mono(void *a)
{
	struct timespec ts = deadline(CLOCK_MONOTONIC);

	atomic_fetch_add(&up, 1);
	while (!past(&ts, CLOCK_MONOTONIC))
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	return a;
}

static void *abs_real(void *a)
{
	struct timespec ts = deadline(CLOCK_REALTIME);

	atomic_fetch_add(&up, 1);
	while (!past(&ts, CLOCK_REALTIME))
		clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL);
	return a;
}

static void *rel_sleep(void *a)
{
	struct timespec ts = { TMO, 0 }, end = deadline(CLOCK_MONOTONIC);

	atomic_fetch_add(&up, 1);
	while (!past(&end, CLOCK_MONOTONIC))
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	return a;
}

static void *nanosleeper(void *a)
{
	struct timespec ts = { TMO, 0 }, end = deadline(CLOCK_MONOTONIC);

	atomic_fetch_add(&up, 1);
	while (!past(&end, CLOCK_MONOTONIC))
		nanosleep(&ts, NULL);
	return a;
}

static void *cond_real(void *a)
{
	struct timespec ts = deadline(CLOCK_REALTIME);

	pthread_mutex_lock(&cm);
	atomic_fetch_add(&up, 1);
	while (!past(&ts, CLOCK_REALTIME))
		pthread_cond_timedwait(&cv_real, &cm, &ts);
	return a;
}

static void *cond_mono(void *a)
{
	struct timespec ts = deadline(CLOCK_MONOTONIC);

	pthread_mutex_lock(&cm);
	atomic_fetch_add(&up, 1);
	while (!past(&ts, CLOCK_MONOTONIC))
		pthread_cond_timedwait(&cv_mono, &cm, &ts);
	return a;
}

static void *cond_clock(void *a)
{
	struct timespec ts = deadline(CLOCK_MONOTONIC);

	pthread_mutex_lock(&cm);
	atomic_fetch_add(&up, 1);
	while (!past(&ts, CLOCK_MONOTONIC))
		pthread_cond_clockwait(&cv_real, &cm, CLOCK_MONOTONIC, &ts);
	return a;
}

static void *sem_timed(void *a)
{
	struct timespec ts = deadline(CLOCK_REALTIME);

	atomic_fetch_add(&up, 1);
	while (!past(&ts, CLOCK_REALTIME))
		sem_timedwait(&sem, &ts);
	return a;
}

static void *sem_clock(void *a)
{
	struct timespec ts = deadline(CLOCK_MONOTONIC);

	atomic_fetch_add(&up, 1);
	while (!past(&ts, CLOCK_MONOTONIC))
		sem_clockwait(&sem, CLOCK_MONOTONIC, &ts);
	return a;
}

static void *futex_mono(void *a)
{
	struct timespec ts = deadline(CLOCK_MONOTONIC);

	atomic_fetch_add(&up, 1);
	while (!past(&ts, CLOCK_MONOTONIC))
		syscall(SYS_futex, &fword, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0, &ts, NULL,
			FUTEX_BITSET_MATCH_ANY);
	return a;
}

static void *futex_real(void *a)
{
	struct timespec ts = deadline(CLOCK_REALTIME);

	atomic_fetch_add(&up, 1);
	while (!past(&ts, CLOCK_REALTIME))
		syscall(SYS_futex, &fword,
			FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME, 0, &ts, NULL,
			FUTEX_BITSET_MATCH_ANY);
	return a;
}

static void *futex_rel(void *a)
{
	struct timespec ts = { TMO, 0 }, end = deadline(CLOCK_MONOTONIC);

	atomic_fetch_add(&up, 1);
	while (!past(&end, CLOCK_MONOTONIC))
		syscall(SYS_futex, &fword, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0, &ts, NULL, 0);
	return a;
}

static void *mutex_timed(void *a)
{
	struct timespec ts = deadline(CLOCK_REALTIME);

	atomic_fetch_add(&up, 1);
	while (!past(&ts, CLOCK_REALTIME))
		pthread_mutex_timedlock(&held, &ts);
	return a;
}

static void *mutex_clock(void *a)
{
	struct timespec ts = deadline(CLOCK_MONOTONIC);

	atomic_fetch_add(&up, 1);
	while (!past(&ts, CLOCK_MONOTONIC))
		pthread_mutex_clocklock(&held, CLOCK_MONOTONIC, &ts);
	return a;
}

static void *rw_timed(void *a)
{
	struct timespec ts = deadline(CLOCK_REALTIME);

	atomic_fetch_add(&up, 1);
	while (!past(&ts, CLOCK_REALTIME))
		pthread_rwlock_timedwrlock(&rw, &ts);
	return a;
}

static void *rw_clock(void *a)
{
	struct timespec ts = deadline(CLOCK_MONOTONIC);

	atomic_fetch_add(&up, 1);
	while (!past(&ts, CLOCK_MONOTONIC))
		pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &ts);
	return a;
}

static void *join_timed(void *a)
{
	struct timespec ts = deadline(CLOCK_REALTIME);

	atomic_fetch_add(&up, 1);
	while (!past(&ts, CLOCK_REALTIME))
		pthread_timedjoin_np(forever, NULL, &ts);
	return a;
}

static void *poller(void *a)
{
	struct timespec end = deadline(CLOCK_MONOTONIC);

	atomic_fetch_add(&up, 1);
	while (!past(&end, CLOCK_MONOTONIC))
		poll(NULL, 0, TMO * 1000);
	return a;
}

static const struct {
	const char *name;
	void *(*fn)(void *);
} waiters[] = {
	{ "abs_mono", abs_mono },	{ "abs_real", abs_real },	{ "rel_sleep", rel_sleep },
	{ "nanosleep", nanosleeper },	{ "cond_real", cond_real },	{ "cond_mono", cond_mono },
	{ "cond_clock", cond_clock },	{ "sem_timed", sem_timed },	{ "sem_clock", sem_clock },
	{ "futex_mono", futex_mono },	{ "futex_real", futex_real },	{ "futex_rel", futex_rel },
	{ "mutex_timed", mutex_timed }, { "mutex_clock", mutex_clock }, { "rw_timed", rw_timed },
	{ "rw_clock", rw_clock },	{ "join_timed", join_timed },	{ "poll", poller },
};
#define NWAITERS (int)(sizeof(waiters) / sizeof(waiters[0]))

int main(int argc, char **argv)
{
	pthread_condattr_t ca;
	FILE *f;

	if (argc != 2)
		return 2;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cv_mono, &ca);
	sem_init(&sem, 0, 0);
	pthread_mutex_lock(&held);
	pthread_rwlock_rdlock(&rw);
	forever = pthread_self();
	for (int i = 0; i < NWAITERS; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, waiters[i].fn, NULL))
			return 1;
		pthread_setname_np(t, waiters[i].name);
		if (!i)
			forever = t; /* join_timed joins abs_mono, which never ends */
	}
	while (atomic_load(&up) < NWAITERS)
		usleep(1000);
	f = fopen(argv[1], "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	alarm(TMO + 20);
	for (;;)
		pause();
}
