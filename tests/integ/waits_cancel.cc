// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/waits_cancel.cc - pthread_cancel of threads blocked in wrapped
 * calls, for waits-cancel.sh (built there with g++).  "reader" blocks in
 * read inside try { } catch (...) { caught++; throw; }: the forced unwind
 * must reach the catch and go on; "condw" blocks in pthread_cond_wait.
 * Once both wait (READY holds the pid), the test creates GO; both are
 * cancelled and joined, "caught 1" and "canceled 2" are printed, DONE is
 * written and the main thread waits in pause for rip ps to look.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string>
#include <unistd.h>

static int fds[2];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int caught, up;

static void *reader(void *)
{
	char c;

	pthread_setname_np(pthread_self(), "reader");
	try {
		__atomic_add_fetch(&up, 1, __ATOMIC_SEQ_CST);
		if (read(fds[0], &c, 1) < 0)
			return nullptr;
	} catch (...) {
		caught++;
		throw;
	}
	return nullptr;
}

static void *condw(void *)
{
	pthread_setname_np(pthread_self(), "condw");
	pthread_mutex_lock(&m);
	__atomic_add_fetch(&up, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pthread_cond_wait(&cv, &m);
	return nullptr;
}

static void unlock(void *)
{
	pthread_mutex_unlock(&m);
}

static void *condw_clean(void *a)
{
	void *r;

	pthread_cleanup_push(unlock, nullptr);
	r = condw(a);
	pthread_cleanup_pop(0);
	return r;
}

int main(int argc, char **argv)
{
	pthread_t r, c;
	void *rr, *rc;
	int canceled = 0;
	FILE *f;

	if (argc != 4 || pipe(fds))
		return 2;
	pthread_create(&r, nullptr, reader, nullptr);
	pthread_create(&c, nullptr, condw_clean, nullptr);
	while (__atomic_load_n(&up, __ATOMIC_SEQ_CST) < 2)
		usleep(1000);
	f = fopen(argv[1], "w");
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	while (access(argv[2], F_OK))
		usleep(10000);
	pthread_cancel(r);
	pthread_cancel(c);
	pthread_join(r, &rr);
	pthread_join(c, &rc);
	canceled = (rr == PTHREAD_CANCELED) + (rc == PTHREAD_CANCELED);
	printf("caught %d\ncanceled %d\n", caught, canceled);
	fflush(stdout);
	f = fopen(argv[3], "w");
	fputs("done\n", f);
	fclose(f);
	pause();
	return 0;
}
