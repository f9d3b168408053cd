// SPDX-License-Identifier: Apache-2.0
/*
 * bench/waits.c - the cost of librip-preload.so's wait wrappers on the
 * calls that usually do not wait: an uncontended pthread_mutex_lock +
 * unlock, and a 1-byte read of /dev/zero (a ready descriptor).  Run it
 * under the preload library (bench/waits.sh does): each is timed through
 * the program's own binding (the wrapper) and through libc's function
 * itself (dlsym on libc's handle), alternately in each repetition, in CPU
 * time of the thread.  Prints "KEY MEDIAN EACH..." lines (bench.h):
 * waits.mutex_plain, waits.mutex_wrapped, waits.read_plain,
 * waits.read_wrapped in ns per call, and their ratios.
 *
 *	waits [N] [REPS]
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include "bench.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int (*lock_fn)(pthread_mutex_t *), (*unlock_fn)(pthread_mutex_t *);
static ssize_t (*read_fn)(int, void *, size_t);
static int zero;

BENCH_NOINLINE static void loop_mutex(const char *name, uint64_t n)
{
	(void)name;
	for (uint64_t i = 0; i < n; i++) {
		lock_fn(&mu);
		unlock_fn(&mu);
	}
}

BENCH_NOINLINE static void loop_read(const char *name, uint64_t n)
{
	char c;

	(void)name;
	for (uint64_t i = 0; i < n; i++)
		if (read_fn(zero, &c, 1) != 1)
			exit(1);
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
	int reps = argc > 2 ? atoi(argv[2]) : 9;
	double mp[BENCH_MAX_REPS], mw[BENCH_MAX_REPS], rp[BENCH_MAX_REPS], rw[BENCH_MAX_REPS];
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	int (*plock)(pthread_mutex_t *), (*punlock)(pthread_mutex_t *);
	ssize_t (*pread_)(int, void *, size_t);

	if (reps < 1 || reps > BENCH_MAX_REPS || !libc)
		return 2;
	zero = open("/dev/zero", O_RDONLY);
	plock = (int (*)(pthread_mutex_t *))dlsym(libc, "pthread_mutex_lock");
	punlock = (int (*)(pthread_mutex_t *))dlsym(libc, "pthread_mutex_unlock");
	pread_ = (ssize_t(*)(int, void *, size_t))dlsym(libc, "read");
	if (zero < 0 || !plock || !punlock || !pread_)
		return 2;
	for (int r = 0; r < reps; r++) {
		lock_fn = plock;
		unlock_fn = punlock;
		mp[r] = bench_time_loop(loop_mutex, "mutex_plain", n);
		lock_fn = pthread_mutex_lock;
		unlock_fn = pthread_mutex_unlock;
		mw[r] = bench_time_loop(loop_mutex, "mutex_wrapped", n);
		read_fn = pread_;
		rp[r] = bench_time_loop(loop_read, "read_plain", n / 4);
		read_fn = read;
		rw[r] = bench_time_loop(loop_read, "read_wrapped", n / 4);
	}
	bench_print_figure("waits.mutex_plain", mp, reps);
	bench_print_figure("waits.mutex_wrapped", mw, reps);
	bench_print_ratio("waits.mutex_ratio", mw, mp, 1, reps);
	bench_print_figure("waits.read_plain", rp, reps);
	bench_print_figure("waits.read_wrapped", rw, reps);
	bench_print_ratio("waits.read_ratio", rw, rp, 1, reps);
	/* no: not run under the preload library, both columns time libc's own */
	printf("waits.wrapped %s\n", (void *)read != (void *)pread_ ? "yes" : "no");
	return 0;
}
