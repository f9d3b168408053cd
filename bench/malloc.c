/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/malloc.c - a malloc-heavy workload for comparing resource tracers:
 * plain, under `rip run --mem`, and under heaptrack (bench/heaptrack.sh).
 *
 * Each of THREADS threads does PAIRS malloc/free pairs.  Sizes come from a
 * cheap per-thread PRNG (xorshift64*), 16 to 4096 bytes in four size mixes;
 * every new block replaces a random one of LIVE kept live in a per-thread
 * array, so blocks are freed out of order and a while after they were
 * made, not reused at once.  Every pair is made through a chain of DEPTH
 * distinct noipa functions, the leaf included: the levels come in two
 * variants picked by bits of a per-pair route (bit d % PATH_BITS at level
 * d) and the leaf in four (one per size mix).  Two shapes, chosen when
 * built:
 *
 *  - `malloc` (the defaults): 16 live, DEPTH 10 for every pair: 32
 *    distinct allocation stacks, each 10 frames deep below the thread's
 *    own loop.
 *  - `malloc-nofp` (-DMALLOC_SHAPE_REAL, built -fomit-frame-pointer as
 *    Debian builds): shaped like real code, as issue 27 measured it: 256
 *    live, and a DEPTH that varies per pair from 8 to 11 frames (two bits
 *    of the route), 16 paths through the levels: 256 distinct stacks.
 *    Sizes go in steps of 16 bytes (a call site allocates a few sizes, not
 *    any byte count): heaptrack 1.4's interpreter runs out of memory (18
 *    GB, std::bad_alloc) once it has seen some 130,000 distinct pairs of
 *    size and stack, which byte-exact sizes over 256 stacks pass.
 *
 * The first LIVE frees are free(NULL) and the LIVE blocks left are freed
 * at the end, so a trace holds 2 * PAIRS + LIVE malloc and free events per
 * thread, and the few of start-up.
 *
 *   malloc THREADS PAIRS [DEPTH]      (DEPTH: the deepest chain, the others
 *                                      down to DEPTH - DEPTH_SPAN + 1)
 *
 * prints one line:
 *   malloc threads T pairs N depth D seconds S ns_per_pair P cpu_ns_per_pair C live L
 *   depth_min M
 * S is the wall time of the timed part (threads started to all joined),
 * P = S / PAIRS (each thread does PAIRS, side by side), C the mean CPU time
 * of one thread per pair.  THREADS (1 to 100,000) are all alive before any
 * starts its pairs.  Exit status 1 on a failed malloc or bad usage.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#ifdef MALLOC_SHAPE_REAL
#define LIVE 256	 /* blocks kept live per thread */
#define DEPTH_DEFAULT 11 /* the deepest chain */
#define DEPTH_SPAN 4	 /* chains of DEPTH - 3 to DEPTH frames, picked per pair */
#define PATH_BITS 4	 /* level d's variant: bit d % PATH_BITS of the route */
#define SIZE_STEP 16	 /* sizes in steps of 16 bytes, as a call site's structs and strings */
#else
#define LIVE 16
#define DEPTH_DEFAULT 10
#define DEPTH_SPAN 1
#define PATH_BITS 3
#define SIZE_STEP 1
#endif
#define MAX_DEPTH 16
#define NOIPA BENCH_NOINLINE

struct thr {
	uint64_t rng;
	uint64_t sum;	/* keeps every level's call a real call, not a tail jump */
	unsigned depth;
	long pairs;
	void *live[LIVE];
	pthread_t tid;
	double cpu_s;
	int failed;
};

static inline uint64_t rnd(struct thr *t)
{
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return t->rng * 0x2545f4914f6cdd1dull;
}

/* one pair: a new block of MIN..MIN+SPAN-1 bytes replaces a random live one */
static inline void pair(struct thr *t, size_t min, size_t span)
{
	uint64_t r = rnd(t);
	unsigned slot = r & (LIVE - 1);
	size_t size = min + (r >> 8) % span / SIZE_STEP * SIZE_STEP;
	char *p = malloc(size);

	if (!p) {
		t->failed = 1;
		return;
	}
	p[0] = (char)r;
	p[size - 1] = (char)size;
	free(t->live[slot]);
	t->live[slot] = p;
}

/* the four leaves, one per size mix (tcache sizes, small bins, large ones, all) */
static NOIPA void leaf_tiny(struct thr *t) { pair(t, 16, 113); }
static NOIPA void leaf_small(struct thr *t) { pair(t, 128, 897); }
static NOIPA void leaf_large(struct thr *t) { pair(t, 1024, 3073); }
static NOIPA void leaf_mixed(struct thr *t) { pair(t, 16, 4081); }

static void (*const leaves[4])(struct thr *) = {
	leaf_tiny, leaf_small, leaf_large, leaf_mixed,
};

typedef void level_fn(struct thr *t, unsigned d, unsigned route);
static level_fn *const lvl_a[MAX_DEPTH], *const lvl_b[MAX_DEPTH];

/*
 * Level d calls level d-1, variant a or b after bit d % PATH_BITS of the
 * route, and level 1 calls the leaf that the two bits above those pick:
 * 2^PATH_BITS paths times 4 leaves (times DEPTH_SPAN depths).
 */
static inline void leaf(struct thr *t, unsigned route)
{
	leaves[(route >> PATH_BITS) & 3](t);
}

static inline void down(struct thr *t, unsigned d, unsigned route)
{
	if (d <= 1)
		leaf(t, route);
	else if ((route >> (d % PATH_BITS)) & 1)
		lvl_b[d - 1](t, d - 1, route);
	else
		lvl_a[d - 1](t, d - 1, route);
}

/* distinct bodies (the constant added after the call), so no two are folded */
#define LEVEL(n)                                                              \
	static NOIPA void lvl##n##a(struct thr *t, unsigned d, unsigned route) \
	{                                                                     \
		down(t, d, route);                                            \
		t->sum += 2 * n;                                              \
	}                                                                     \
	static NOIPA void lvl##n##b(struct thr *t, unsigned d, unsigned route) \
	{                                                                     \
		down(t, d, route);                                            \
		t->sum += 2 * n + 1;                                          \
	}
LEVEL(1) LEVEL(2) LEVEL(3) LEVEL(4) LEVEL(5) LEVEL(6) LEVEL(7) LEVEL(8)
LEVEL(9) LEVEL(10) LEVEL(11) LEVEL(12) LEVEL(13) LEVEL(14) LEVEL(15)

static level_fn *const lvl_a[MAX_DEPTH] = {
	NULL, lvl1a, lvl2a, lvl3a, lvl4a, lvl5a, lvl6a, lvl7a, lvl8a,
	lvl9a, lvl10a, lvl11a, lvl12a, lvl13a, lvl14a, lvl15a,
};
static level_fn *const lvl_b[MAX_DEPTH] = {
	NULL, lvl1b, lvl2b, lvl3b, lvl4b, lvl5b, lvl6b, lvl7b, lvl8b,
	lvl9b, lvl10b, lvl11b, lvl12b, lvl13b, lvl14b, lvl15b,
};

/*
 * N pairs, each through DEPTH frames (DEPTH - 1 levels and the leaf), DEPTH
 * picked per pair by the two route bits above the leaf's among the
 * DEPTH_SPAN deepest (at least 1).
 */
static NOIPA void run_pairs(struct thr *t, long n)
{
	for (long i = 0; i < n && !t->failed; i++) {
		unsigned route = (unsigned)(rnd(t) >> 40);
		unsigned less = DEPTH_SPAN > 1 ? ((route >> (PATH_BITS + 2)) & 3) % DEPTH_SPAN : 0;
		unsigned top = t->depth > less + 1 ? t->depth - 1 - less : 0;

		if (top)
			lvl_a[top](t, top, route);
		else
			leaf(t, route);
	}
}

static double now_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* every thread starts its pairs when all are alive: THREADS live at once */
static pthread_barrier_t start;

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	double c0;

	pthread_barrier_wait(&start);
	c0 = now_s(CLOCK_THREAD_CPUTIME_ID);

	run_pairs(t, t->pairs);
	t->cpu_s = now_s(CLOCK_THREAD_CPUTIME_ID) - c0;
	for (unsigned i = 0; i < LIVE; i++) {
		free(t->live[i]);
		t->live[i] = NULL;
	}
	return NULL;
}

static long arg_long(const char *s, long min, long max, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "malloc: %s must be %ld..%ld, not '%s'\n", what, min, max, s);
		exit(1);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct thr *th;
	long nthr, pairs;
	unsigned depth = DEPTH_DEFAULT;
	double t0, t1, cpu = 0;
	pthread_attr_t attr;
	int failed = 0;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: malloc THREADS PAIRS [DEPTH]\n");
		return 1;
	}
	nthr = arg_long(argv[1], 1, 100000, "THREADS");
	pairs = arg_long(argv[2], 1, 1L << 40, "PAIRS");
	if (argc == 4)
		depth = arg_long(argv[3], 1, MAX_DEPTH, "DEPTH");
	th = calloc(nthr, sizeof(*th));
	if (!th)
		return 1;
	for (long i = 0; i < nthr; i++) {
		th[i].rng = 0x9e3779b97f4a7c15ull * (i + 1);
		th[i].depth = depth;
		th[i].pairs = pairs;
	}

	/* small stacks: ten thousand threads fit; the deepest chain is MAX_DEPTH frames */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	pthread_barrier_init(&start, NULL, (unsigned)nthr);
	t0 = now_s(CLOCK_MONOTONIC);
	for (long i = 0; i < nthr; i++) {
		int e = pthread_create(&th[i].tid, &attr, thread_main, &th[i]);

		if (e) {
			fprintf(stderr, "malloc: pthread_create: %s\n", strerror(e));
			return 1;
		}
	}
	for (long i = 0; i < nthr; i++)
		pthread_join(th[i].tid, NULL);
	t1 = now_s(CLOCK_MONOTONIC);

	for (long i = 0; i < nthr; i++) {
		failed |= th[i].failed;
		cpu += th[i].cpu_s;
	}
	if (failed) {
		fprintf(stderr, "malloc: out of memory\n");
		return 1;
	}
	printf("malloc threads %ld pairs %ld depth %u seconds %.4f ns_per_pair %.2f "
	       "cpu_ns_per_pair %.2f live %u depth_min %u\n",
	       nthr, pairs, depth, t1 - t0, (t1 - t0) * 1e9 / pairs, cpu / nthr * 1e9 / pairs, LIVE,
	       depth > DEPTH_SPAN - 1 ? depth - (DEPTH_SPAN - 1) : 1);
	free(th);
	return 0;
}
