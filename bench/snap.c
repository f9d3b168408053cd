/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/snap.c - cost of the rip.h fast paths against their floors.
 *
 * Each measured path runs in its own loop function of the same shape: a
 * counted loop whose body is the path plus an empty asm with a memory
 * clobber, so the compiler can neither drop, merge nor vectorise iterations.
 * The loops are noipa (no inlining, no cloning) so that they keep their names
 * for callgrind --toggle-collect and objdump --disassemble.
 *
 *	floor	one thread-local 8-byte store
 *	snap	one rip_snap()
 *	rdtsc	one bare rdtsc
 *	coro	rip_coro_switch_in(co) + rip_coro_switch_out()
 *	private	the snap loop on a thread-private slot outside the ring (a control)
 *
 *   snap time [REPS]        ns per iteration of every loop, median of REPS
 *   snap threads [REPS]     ns per rip_snap() (and per floor store) with 1 thread (on
 *                           each CPU in turn) and with 2 threads at once, each on its
 *                           own CPU and slot, and how concurrently the 2 really ran
 *   snap count LOOP N       run one loop N times and exit (for callgrind)
 *
 * Output is one "key value..." line per figure; bench/run.sh tabulates it.
 * Every loop checks afterwards that it did all its work (the slot's snap_seq
 * moved by exactly N, the coroutine was switched in N times) and the program
 * exits 1 if not.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

#include "bench.h"

#define BENCH_CLOBBER() __asm__ __volatile__("" ::: "memory")

static __thread uint64_t floor_word;

BENCH_NOINLINE static void loop_floor(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		floor_word = i;
		BENCH_CLOBBER();
	}
}

BENCH_NOINLINE static void loop_snap(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		rip_snap();
		BENCH_CLOBBER();
	}
}

/*
 * The control for "no sharing": loop_snap itself, with the thread's
 * __rip_self.cur pointed for the while at a slot of its own malloc'd memory,
 * outside the ring.  What two threads cost each other there is the
 * hardware's doing (two vCPUs on one core, say), not librip's.
 */
static __thread struct rip_slot *private_slot;

static struct rip_slot *private_slot_get(void)
{
	if (!private_slot) {
		private_slot = aligned_alloc(4096, sizeof(*private_slot));
		if (!private_slot) {
			fprintf(stderr, "snap: out of memory\n");
			exit(1);
		}
		memset(private_slot, 0, sizeof(*private_slot));
	}
	return private_slot;
}

BENCH_NOINLINE static void loop_rdtsc(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
#if defined(__x86_64__)
		uint32_t lo, hi;

		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
#else
		floor_word = rip_clock_ticks();
#endif
		BENCH_CLOBBER();
	}
}

BENCH_NOINLINE static void loop_coro(struct rip_coro *co, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		rip_coro_switch_in(co);
		rip_coro_switch_out();
		BENCH_CLOBBER();
	}
}

static struct rip_coro *bench_co;
static int bench_bad;

/* Run loop `name` n times and check that every iteration did its work. */
static void run_loop(const char *name, uint64_t n)
{
	struct rip_slot *co = (struct rip_slot *)bench_co;
	uint32_t before, after, want = (uint32_t)n;

	if (!strcmp(name, "floor")) {
		loop_floor(n);
		if (n && floor_word != n - 1)
			bench_bad = 1;
		return;
	}
	if (!strcmp(name, "snap")) {
		before = __rip_self.cur->snap_seq;
		loop_snap(n);
		after = __rip_self.cur->snap_seq;
	} else if (!strcmp(name, "private")) {
		struct rip_slot *ring_slot = __rip_self.cur;

		__rip_self.cur = private_slot_get();
		before = private_slot->snap_seq;
		loop_snap(n);
		after = private_slot->snap_seq;
		__rip_self.cur = ring_slot;
	} else if (!strcmp(name, "rdtsc")) {
		loop_rdtsc(n);
		return;
	} else if (!strcmp(name, "coro")) {
		before = co->switches;
		loop_coro(bench_co, n);
		after = co->switches;
		if (__rip_self.cur != __rip_self.thread)
			bench_bad = 1;
	} else {
		fprintf(stderr, "snap: unknown loop %s\n", name);
		exit(2);
	}
	if (after - before != want) {
		fprintf(stderr, "snap: loop %s recorded %u for %u iterations\n", name,
			after - before, want);
		bench_bad = 1;
	}
}

static char ring_file[4096];

static void ring_setup(void)
{
	RIP_OPTS(rip_ring_opts, o, .slots = 64);
	int err = rip_ring_open(&o);

	if (err) {
		fprintf(stderr, "snap: rip_ring_open: %s\n", strerror(-err));
		exit(1);
	}
	rip_ring_path(ring_file, sizeof(ring_file));
	/* The first snap attaches the thread: keep it out of every loop. */
	rip_snap();
	err = rip_coro_create("bench", &bench_co);
	if (err) {
		fprintf(stderr, "snap: rip_coro_create: %s\n", strerror(-err));
		exit(1);
	}
}

static void ring_teardown(void)
{
	rip_coro_destroy(bench_co);
	rip_ring_close();
	unlink(ring_file);
}

static int parse_reps(int argc, char **argv, int i)
{
	int reps = argc > i ? atoi(argv[i]) : 9;

	return reps < 1 ? 1 : reps > 63 ? 63 : reps;
}

static const struct {
	const char *name;
	uint64_t iters;
} bench_loops[] = {
	{ "floor", 50000000 },
	{ "snap", 50000000 },
	{ "rdtsc", 2000000 },
	{ "coro", 2000000 },
};
#define NLOOPS (sizeof(bench_loops) / sizeof(bench_loops[0]))

static void cmd_time(int reps)
{
	double v[NLOOPS][64];
	char key[64];

	/* one untimed pass: page faults, frequency ramp-up */
	for (size_t l = 0; l < NLOOPS; l++)
		run_loop(bench_loops[l].name, bench_loops[l].iters / 4);
	/* interleaved, so that a noisy neighbour hits every loop alike */
	for (int r = 0; r < reps; r++)
		for (size_t l = 0; l < NLOOPS; l++)
			v[l][r] = bench_time_loop(run_loop, bench_loops[l].name, bench_loops[l].iters);
	for (size_t l = 0; l < NLOOPS; l++) {
		snprintf(key, sizeof(key), "ns %s", bench_loops[l].name);
		bench_print_figure(key, v[l], reps);
	}
	/*
	 * Ratios of the same repetition: the loops of one repetition ran within
	 * a fraction of a second of each other, so a busy neighbour slows them
	 * alike; the median of these is steadier than a ratio of medians.
	 */
	bench_print_ratio("ratio snap floor", v[1], v[0], 1, reps);
	bench_print_ratio("ratio coro rdtsc2", v[3], v[2], 2, reps);
	printf("clock %s\n", __rip_clock_tsc ? "tsc" : "mono");
}

/* ---- 1 vs 2 threads ------------------------------------------------- */

struct worker {
	pthread_t th;
	int cpu;
	const char *loop;
	uint64_t iters;
	pthread_barrier_t *bar;
	double ns;	      /* thread CPU ns per iteration */
	double wall0, wall1; /* CLOCK_MONOTONIC ns around the timed loop */
};

static double wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pin(w->cpu);
	rip_snap(); /* attach this thread to a slot of its own */
	run_loop(w->loop, w->iters / 4);
	pthread_barrier_wait(w->bar);
	w->wall0 = wall_ns();
	w->ns = bench_time_loop(run_loop, w->loop, w->iters);
	w->wall1 = wall_ns();
	pthread_barrier_wait(w->bar);
	rip_thread_detach();
	free(private_slot);
	return NULL;
}

/*
 * Mean ns per iteration of loop over nthreads threads running it at once.
 * *conc is how many of them really ran at the same time, on average: their
 * CPU time over the wall time from the first start to the last end (a
 * loaded machine may time-slice "concurrent" threads one after the other).
 */
static double run_threads(const char *loop, int nthreads, const int *cpus, uint64_t iters,
			  double *conc)
{
	struct worker w[2];
	pthread_barrier_t bar;
	double sum = 0, cpu = 0, t0 = 0, t1 = 0;

	pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
	for (int i = 0; i < nthreads; i++) {
		w[i] = (struct worker){ .cpu = cpus[i], .loop = loop, .iters = iters, .bar = &bar };
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i])) {
			fprintf(stderr, "snap: pthread_create failed\n");
			exit(1);
		}
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(w[i].th, NULL);
		sum += w[i].ns;
		cpu += w[i].ns * (double)iters;
		if (!i || w[i].wall0 < t0)
			t0 = w[i].wall0;
		if (!i || w[i].wall1 > t1)
			t1 = w[i].wall1;
	}
	pthread_barrier_destroy(&bar);
	*conc = t1 > t0 ? cpu / (t1 - t0) : 0;
	return sum / nthreads;
}

static void cmd_threads(int reps)
{
	static const char *const loops[] = { "snap", "private", "floor" };
	const uint64_t iters = 20000000;
	double v[3][2][64], conc[3][2][64];
	int cpus[2] = { -1, -1 }, ncpu = 0;
	cpu_set_t set;
	char key[64];

	/* two distinct CPUs when we may use two: no migrations, truly concurrent */
	if (!sched_getaffinity(0, sizeof(set), &set))
		for (int c = 0; c < CPU_SETSIZE && ncpu < 2; c++)
			if (CPU_ISSET(c, &set))
				cpus[ncpu++] = c;
	if (ncpu < 2)
		cpus[0] = cpus[1] = -1;
	/*
	 * One thread runs once on each of the two CPUs and the two are averaged,
	 * so that it is measured on the same CPUs as the pair: interrupts are
	 * charged to whatever thread they hit, and one CPU usually takes more.
	 */
	for (int r = 0; r < reps; r++)
		for (int l = 0; l < 3; l++) {
			double c1;

			v[l][0][r] = run_threads(loops[l], 1, &cpus[0], iters, &conc[l][0][r]);
			v[l][0][r] += run_threads(loops[l], 1, &cpus[1], iters, &c1);
			v[l][0][r] /= 2;
			conc[l][0][r] = (conc[l][0][r] + c1) / 2;
			v[l][1][r] = run_threads(loops[l], 2, cpus, iters, &conc[l][1][r]);
		}
	for (int l = 0; l < 3; l++)
		for (int t = 0; t < 2; t++) {
			snprintf(key, sizeof(key), "threads %s %d", loops[l], t + 1);
			bench_print_figure(key, v[l][t], reps);
			snprintf(key, sizeof(key), "concurrency %s %d", loops[l], t + 1);
			bench_print_figure(key, conc[l][t], reps);
		}
	for (int l = 0; l < 3; l++) {
		snprintf(key, sizeof(key), "ratio %s 2 1", loops[l]);
		bench_print_ratio(key, v[l][1], v[l][0], 1, reps);
	}
	printf("cpus %d\n", ncpu);
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "time";

	ring_setup();
	if (!strcmp(cmd, "time")) {
		cmd_time(parse_reps(argc, argv, 2));
	} else if (!strcmp(cmd, "threads")) {
		cmd_threads(parse_reps(argc, argv, 2));
	} else if (!strcmp(cmd, "count") && argc == 4) {
		run_loop(argv[2], strtoull(argv[3], NULL, 10));
	} else {
		fprintf(stderr, "usage: snap time [REPS] | threads [REPS] | count LOOP N\n");
		ring_teardown();
		return 2;
	}
	ring_teardown();
	if (bench_bad) {
		fprintf(stderr, "snap: a loop skipped work; figures are not valid\n");
		return 1;
	}
	return 0;
}
