/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the leaks pass of analysis/leaks.c on a trace this test
 * writes itself (tests/restrace.h): exactly the groups left live, by
 * resource and backtrace, with their counts, bytes, kinds and samples;
 * the totals; releases of what was never made, things made again while
 * live, failed allocations; a backtrace defined after its use by another
 * thread; the --tid and --min-size filters; and rip leaks --diff of two
 * reports (analysis/leakdiff.c).

 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "analysis/leakdiff.h"
#include "analysis/leaks.h"
#include "helpers.h"
#include "restrace.h"

enum { BT_MALLOC = 1, BT_CALLOC, BT_REALLOC, BT_FD, BT_SHM, BT_THREAD, BT_FREE };

static const uint64_t frames_realloc[3] = { 0x401000, 0x402000, 0x403000 };
static int32_t worker_tid;

static void bt(uint32_t id)
{
	const uint64_t f[2] = { 0x400000 + id * 0x10, 0x500000 };

	if (id == BT_REALLOC)
		rt_bt(id, frames_realloc, 3);
	else
		rt_bt(id, f, 2);
}

static void *worker(void *arg)
{
	(void)arg;
	worker_tid = (int32_t)gettid();
	rt_ev(ROLE_MEM_ALLOC, 0x90000, 777, BT_THREAD, RIP_MEM_NEW);
	rt_ev(ROLE_MEM_ALLOC, 0x91000, 1, BT_THREAD, RIP_MEM_MALLOC);
	rt_ev(ROLE_MEM_FREE, 0x91000, BT_FREE, RIP_MEM_FREE);
	rip_thread_detach();
	return NULL;
}

/*
 * What is left live:
 *	shm      BT_SHM      1 segment, 65536 bytes  (shmget; attached and detached)
 *	mem      BT_CALLOC   1 block, 4096 bytes
 *	mem      BT_THREAD   1 block, 777 bytes      (the worker's; BT_THREAD defined last)
 *	mem      BT_MALLOC   3 blocks, 300 bytes     (4 malloc'd, 1 freed, 1 made again)
 *	mem      BT_REALLOC  1 block, 50 bytes       (realloc(NULL, 10), moved to 50)
 *	fd       BT_FD       1 descriptor, "/tmp/a"  (/tmp/b closed)
 * and: a free and a close of things never made, a failed malloc, a block
 * made again while live.
 */
static void write_trace(void)
{
	pthread_t t;

	rt_open();
	bt(BT_MALLOC);
	bt(BT_CALLOC);
	bt(BT_REALLOC);
	bt(BT_FD);
	bt(BT_SHM);
	bt(BT_FREE);
	for (uint64_t i = 0; i < 4; i++)
		rt_ev(ROLE_MEM_ALLOC, 0x1000 + i * 0x100, 100, BT_MALLOC, RIP_MEM_MALLOC);
	rt_ev(ROLE_MEM_FREE, 0x1100, BT_FREE, RIP_MEM_FREE);
	rt_ev(ROLE_MEM_ALLOC, 0x1000, 100, BT_MALLOC, RIP_MEM_MALLOC); /* its free was lost */
	rt_ev(ROLE_MEM_ALLOC, 0x20000, 4096, BT_CALLOC, RIP_MEM_CALLOC);
	rt_ev(ROLE_MEM_REALLOC, 0, 0x30000, 10, BT_REALLOC);
	rt_ev(ROLE_MEM_REALLOC, 0x30000, 0x31000, 50, BT_REALLOC);
	rt_ev(ROLE_MEM_FREE, 0xdead0, BT_FREE, RIP_MEM_FREE); /* never made */
	rt_ev(ROLE_MEM_FREE, 0, BT_FREE, RIP_MEM_FREE);	       /* free(NULL): nothing */
	rt_ev(ROLE_MEM_ALLOC, 0, 1u << 30, BT_MALLOC, RIP_MEM_MALLOC); /* failed */
	rt_ev(ROLE_FD_OPEN, 5, BT_FD, RIP_FD_OPEN, 0, (uintptr_t)"/tmp/a");
	rt_ev(ROLE_FD_OPEN, 6, BT_FD, RIP_FD_OPENAT, 0, (uintptr_t)"/tmp/b");
	rt_ev(ROLE_FD_CLOSE, 6, BT_FREE, RIP_FD_CLOSE);
	rt_ev(ROLE_FD_CLOSE, 0, BT_FREE, RIP_FD_CLOSE); /* inherited */
	rt_ev(ROLE_SHM_CREATE, 3, 65536, BT_SHM, RIP_SHM_GET, (uintptr_t)"");
	rt_ev(ROLE_SHM_ATTACH, 0x7000000, 65536, 3, BT_SHM, RIP_SHM_AT);
	rt_ev(ROLE_SHM_DETACH, 0x7000000, 65536, BT_FREE, RIP_SHM_DT);
	if (pthread_create(&t, NULL, worker, NULL)) {
		perror("pthread_create");
		exit(1);
	}
	pthread_join(t, NULL);
	bt(BT_THREAD); /* after its use, in another thread's stream */
	rt_close();
}

static struct lk *run(const struct lk_opts *o)
{
	struct evs *s = rt_source();
	struct lk *lk = lk_new(o);
	char err[512];

	if (!lk || lk_run(lk, s, err, sizeof(err))) {
		fprintf(stderr, "lk_run: %s\n", lk ? err : "out of memory");
		exit(1);
	}
	evs_close(s);
	return lk;
}

#define GROUP(G, RES, BT, COUNT, BYTES)                                                            \
	do {                                                                                       \
		T_EQ((G)->res, RES);                                                               \
		T_EQ((G)->bt, BT);                                                                 \
		T_EQ((G)->count, COUNT);                                                           \
		T_EQ((G)->bytes, BYTES);                                                           \
	} while (0)

static void check_all(void)
{
	struct lk *lk = run(NULL);
	const struct lk_group *g = lk->groups;
	const uint64_t *f;
	uint32_t n;

	T_EQ(lk->ngroups, 6);
	if (lk->ngroups != 6) {
		lk_free(lk);
		return;
	}
	GROUP(&g[0], LK_SHM, BT_SHM, 1, 65536);
	GROUP(&g[1], LK_MEM, BT_CALLOC, 1, 4096);
	GROUP(&g[2], LK_MEM, BT_THREAD, 1, 777);
	GROUP(&g[3], LK_MEM, BT_MALLOC, 3, 300);
	GROUP(&g[4], LK_MEM, BT_REALLOC, 1, 50);
	GROUP(&g[5], LK_FD, BT_FD, 1, 0);
	T_EQ(g[0].kinds, 1u << RIP_SHM_GET);
	T_EQ(g[2].kinds, 1u << RIP_MEM_NEW);
	T_EQ(g[4].kinds, 1u << RIP_MEM_REALLOC);
	T_EQ(g[5].kinds, 1u << RIP_FD_OPEN);
	T_STREQ(g[5].sample, "/tmp/a");
	T_CHECK(!g[3].sample);
	T_CHECK(lk->first_ns <= g[3].first_ns && g[3].first_ns <= g[3].last_ns &&
		g[3].last_ns <= lk->last_ns);

	T_EQ(lk->total_count[LK_MEM], 6);
	T_EQ(lk->total_bytes[LK_MEM], 4096 + 777 + 300 + 50);
	T_EQ(lk->total_count[LK_FD], 1);
	T_EQ(lk->total_count[LK_SHM], 1);
	T_EQ(lk->total_bytes[LK_SHM], 65536);
	T_EQ(lk->total_count[LK_SHM_MAP], 0);
	T_EQ(lk->un.release[LK_MEM], 1);
	T_EQ(lk->un.release[LK_FD], 1);
	T_EQ(lk->un.replaced[LK_MEM], 1);
	T_EQ(lk->failed_allocs, 1);
	T_EQ(lk->bad_events, 0);

	/* 7 stacks, 22 resource events */
	T_EQ(lk->bt_defs, 7);
	T_EQ(lk->bt_bad, 0);
	T_EQ(lk->bt_unknown, 0);
	T_EQ(lk->res_events, 22);
	T_EQ(lk->events, 29);
	T_CHECK(lk->has_types);
	f = lk_bt(lk, BT_REALLOC, &n);
	T_CHECK(f && n == 3 && !memcmp(f, frames_realloc, sizeof(frames_realloc)));
	T_CHECK(!lk_bt(lk, 99, &n) && n == 0);
	lk_free(lk);
}

static void check_filters(void)
{
	struct lk_opts o = { .tid = worker_tid };
	struct lk *lk = run(&o);

	/* the worker's block only; the rest is still tracked, not reported */
	T_EQ(lk->ngroups, 1);
	if (lk->ngroups == 1)
		GROUP(&lk->groups[0], LK_MEM, BT_THREAD, 1, 777);
	T_EQ(lk->un.release[LK_MEM], 1);
	lk_free(lk);

	o = (struct lk_opts){ .min_size = 1000, .sort = LK_SORT_COUNT, .resources = LK_F_MEM };
	lk = run(&o);
	T_EQ(lk->ngroups, 1);
	if (lk->ngroups == 1)
		GROUP(&lk->groups[0], LK_MEM, BT_CALLOC, 1, 4096);
	lk_free(lk);
}

/*
 * rip leaks --diff (analysis/leakdiff.c) of the whole report against the
 * worker's alone, without symbols: every frame is "?", so the memory groups
 * of two-frame stacks are one group (BT_CALLOC, BT_THREAD, BT_MALLOC: 5
 * blocks, 5173 bytes), grown from the worker's 1 block of 777 bytes.
 */
static void check_diff(void)
{
	struct lk_opts o = { .tid = worker_tid };
	struct lk *old = run(&o), *nw = run(NULL);
	struct ld_diff d;

	T_EQ(ld_run(old, NULL, nw, NULL, &d), 0);
	T_EQ(d.n, 4);
	T_EQ(d.nnew, 3);
	if (d.n == 4) {
		T_EQ(d.v[0].res, LK_SHM); /* by growth in bytes */
		T_EQ(d.v[0].bytes, 65536);
		T_EQ(d.v[0].ocount, 0);
		T_STREQ(d.v[0].key, "?;?");
		T_EQ(d.v[1].res, LK_MEM);
		T_STREQ(d.v[1].key, "?;?");
		T_EQ(d.v[1].count, 5);
		T_EQ(d.v[1].bytes, 4096 + 777 + 300);
		T_EQ(d.v[1].ocount, 1);
		T_EQ(d.v[1].obytes, 777);
		T_EQ(d.v[2].res, LK_MEM);
		T_STREQ(d.v[2].key, "?;?;?");
		T_EQ(d.v[2].bytes, 50);
		T_EQ(d.v[3].res, LK_FD);
		T_EQ(d.v[3].count, 1);
		T_CHECK(d.v[3].g && d.v[3].g->bt == BT_FD);
	}
	ld_free(&d);
	/* a report against itself: nothing new, nothing grown */
	T_EQ(ld_run(nw, NULL, nw, NULL, &d), 0);
	T_EQ(d.n, 0);
	ld_free(&d);
	lk_free(old);
	lk_free(nw);
}

int main(void)
{
	write_trace();
	check_all();
	check_filters();
	check_diff();
	return t_result();
}
