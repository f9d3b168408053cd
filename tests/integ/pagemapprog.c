// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/pagemapprog.c - the program tests/integ/pagemap-*.sh trace:
 * memory laid out so that the pages rip pagemap counts are known exactly.
 *
 *   pagemapprog block K M        a 64 MiB malloc block (its own mmap, no huge
 *                                pages) with its first K pages written with
 *                                nonzero bytes (every other one only its
 *                                last byte) and the next M with zeros, a
 *                                1 MB region of the heap freed; then exit
 *   pagemapprog signal K M K2    the same, then kill(self, SIGUSR2), then K2
 *                                more pages written, then exit
 *   pagemapprog storm N          a thread mallocs and frees while N SIGUSR2
 *                                hit the process and the thread itself
 *   pagemapprog defer            SIGUSR2 to a thread that never made a traced
 *                                call (it has no event ring: the handler defers),
 *                                then one malloc in main, which takes it
 *   pagemapprog quit             _exit(0): no snapshot at exit
 *   pagemapprog hostile CASE     no preload: emits mem:mapping / mem:pagemap
 *                                events of its own that make no sense
 *
 * block and signal print "block ADDR SIZE" on stdout.
 */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>
#include <rip/resource.h>

#define BLOCK (64u << 20)
#define PAGE 4096u

static void *volatile keep; /* volatile: the compiler may not drop the allocation */

static char *block_setup(unsigned k, unsigned m)
{
	char *p = malloc(BLOCK), *base, *q[256];

	if (!p)
		exit(2);
	base = (char *)((uintptr_t)p & ~(uintptr_t)(PAGE - 1));
	/* Before the first touch: 4 KiB pages only, so that present pages are exact. */
	madvise(base, BLOCK + PAGE, MADV_NOHUGEPAGE);
	for (unsigned i = 0; i < k; i++) {
		char *pg = base + (size_t)i * PAGE;
		char *from = pg < p ? p : pg;

		/* every other page is zero but for its last byte: not a zero page */
		if (i % 2 && pg >= p) {
			memset(pg, 0, PAGE - 1);
			pg[PAGE - 1] = 0x5a;
			continue;
		}
		memset(from, 0x5a, (size_t)(pg + PAGE - from));
	}
	for (unsigned i = k; i < k + m; i++)
		memset(base + (size_t)i * PAGE, 0, PAGE);
	/*
	 * A megabyte of heap in use, then freed, and not trimmed: keep alone
	 * held the top only when no free chunk lay lower, which depended on
	 * what the loader had freed before (the length of the libraries'
	 * paths), so the trim threshold is raised instead.
	 */
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	for (int i = 0; i < 256; i++) {
		q[i] = malloc(4000);
		if (q[i])
			memset(q[i], 1, 4000);
	}
	keep = malloc(100);
	for (int i = 0; i < 256; i++)
		free(q[i]);
	printf("block %p %u\n", (void *)p, BLOCK);
	fflush(stdout);
	return base;
}

static volatile int storm_stop;

static void *storm_thread(void *arg)
{
	void *v[64] = { 0 };
	unsigned x = 1;

	(void)arg;
	while (!storm_stop) {
		x = x * 1103515245u + 12345u;
		free(v[x % 64]);
		v[x % 64] = malloc(16 + (x >> 8) % 5000);
	}
	for (int i = 0; i < 64; i++)
		free(v[i]);
	return NULL;
}

static void storm(int n)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	pthread_t t;

	if (pthread_create(&t, NULL, storm_thread, NULL))
		exit(2);
	for (int i = 0; i < n; i++) {
		if (i % 2)
			pthread_kill(t, SIGUSR2); /* most likely inside a hook */
		else
			kill(getpid(), SIGUSR2);
		nanosleep(&ts, NULL);
	}
	storm_stop = 1;
	pthread_join(t, NULL);
}

static int defer_pipe[2];

static void *defer_thread(void *arg)
{
	char c;

	(void)arg;
	while (read(defer_pipe[0], &c, 1) < 0)
		;
	return NULL;
}

static void defer(void)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	pthread_t t;

	if (pipe(defer_pipe) || pthread_create(&t, NULL, defer_thread, NULL))
		exit(2);
	pthread_kill(t, SIGUSR2);
	nanosleep(&ts, NULL);
	keep = malloc(10); /* its hook takes the snapshot the thread could not */
	if (write(defer_pipe[1], "x", 1) != 1)
		exit(2);
	pthread_join(t, NULL);
}

/* ---- hostile: the preload library's event types, misused ---- */

RIP_EVENT_TYPE(ev_mapping, "mem:mapping", RIP_CAT_MEM, RIP_FIELD(HEX64, "start"),
	       RIP_FIELD(HEX64, "end"), RIP_FIELD(U32, "seq"), RIP_FIELD(U32, "prot"),
	       RIP_FIELD(U32, "flags"), RIP_FIELD(U32, "page_size"), RIP_FIELD(STRING, "path"));
RIP_EVENT_TYPE(ev_pagemap, "mem:pagemap", RIP_CAT_MEM, RIP_FIELD(HEX64, "start"),
	       RIP_FIELD(U32, "seq"), RIP_FIELD(U32, "npages"), RIP_FIELD(HEX64_ARRAY, "pages"));
RIP_EVENT_TYPE(ev_end, "mem:pagemap_end", RIP_CAT_MEM, RIP_FIELD(U32, "seq"),
	       RIP_FIELD(U32, "mappings"), RIP_FIELD(U32, "reason"), RIP_FIELD(S32, "error"));
RIP_EVENT_TYPE(ev_alloc, "mem:alloc", RIP_CAT_MEM, RIP_FIELD(HEX64, "addr"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));

static void mapping(uint64_t start, uint64_t end, uint32_t seq, uint32_t ps)
{
	const uint64_t v[6] = { start, end, seq, 3, RIP_PM_ZERO_TESTED, ps };

	rip_event_str(&ev_mapping, v, "hostile");
}

static void chunk(uint64_t start, uint32_t seq, uint32_t npages, uint32_t nwords, uint64_t fill)
{
	uint64_t w[RIP_ARRAY_MAX];
	const uint64_t v[3] = { start, seq, npages };

	for (unsigned i = 0; i < RIP_ARRAY_MAX; i++)
		w[i] = fill;
	rip_event_array(&ev_pagemap, v, w, nwords);
}

static void end(uint32_t seq, uint32_t n)
{
	rip_event4(&ev_end, seq, n, RIP_PM_EXIT, 0);
}

static int hostile(const char *c)
{
	const uint64_t a = 0x10000000;

	if (!strcmp(c, "short-array")) {
		mapping(a, a + (64u << 20), 1, PAGE);
		chunk(a, 1, 8192, 3, ~0ull); /* 8192 pages want 256 values */
		end(1, 1);
	} else if (!strcmp(c, "past-end")) {
		mapping(a, a + 16 * PAGE, 1, PAGE);
		chunk(a + 8 * PAGE, 1, 64, 2, ~0ull);
		end(1, 1);
	} else if (!strcmp(c, "overlap")) {
		mapping(a, a + 16 * PAGE, 1, PAGE);
		mapping(a + 8 * PAGE, a + 32 * PAGE, 1, PAGE);
		end(1, 2);
	} else if (!strcmp(c, "twice")) {
		mapping(a, a + 16 * PAGE, 1, PAGE);
		chunk(a, 1, 16, 1, ~0ull);
		chunk(a + 4 * PAGE, 1, 4, 1, ~0ull);
		end(1, 1);
	} else if (!strcmp(c, "bad-range")) {
		mapping(a + PAGE, a, 1, PAGE);
		end(1, 1);
	} else if (!strcmp(c, "orphan")) {
		chunk(a, 7, 16, 1, ~0ull);
		end(7, 0);
	} else if (!strcmp(c, "huge")) {
		/* Valid, if odd: 64 TiB, one chunk at its very end, a block as big as it. */
		uint64_t big = 1ull << 46;

		rip_event4(&ev_alloc, a, big, 0, RIP_MEM_MMAP);
		rip_event4(&ev_alloc, a + big - 10, ~0ull, 0, RIP_MEM_MALLOC);
		mapping(a, a + big, 1, PAGE);
		chunk(a + big - 32 * PAGE, 1, 32, 1, 0x5555555555555555ull); /* present */
		end(1, 1);
	} else if (!strcmp(c, "cut")) {
		mapping(a, a + 16 * PAGE, 1, PAGE);
		chunk(a, 1, 16, 1, ~0ull);
		/* no end: killed while it was taken */
	} else {
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "block") && argc == 4) {
		block_setup((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));
		return 0;
	}
	if (!strcmp(mode, "signal") && argc == 5) {
		unsigned k = (unsigned)atoi(argv[2]), m = (unsigned)atoi(argv[3]);
		unsigned k2 = (unsigned)atoi(argv[4]);
		char *base = block_setup(k, m);

		kill(getpid(), SIGUSR2);
		for (unsigned i = k + m; i < k + m + k2; i++)
			memset(base + (size_t)i * PAGE, 0x33, PAGE);
		return 0;
	}
	if (!strcmp(mode, "storm") && argc == 3) {
		storm(atoi(argv[2]));
		return 0;
	}
	if (!strcmp(mode, "defer")) {
		defer();
		return 0;
	}
	if (!strcmp(mode, "quit")) {
		/* through a volatile: the compiler may drop free(malloc(10)) */
		void *volatile p = malloc(10);

		free(p);
		_exit(0);
	}
	if (!strcmp(mode, "hostile") && argc == 3)
		return hostile(argv[2]);
	fprintf(stderr, "usage: pagemapprog block K M | signal K M K2 | storm N | defer | quit | "
			"hostile CASE\n");
	return 2;
}
