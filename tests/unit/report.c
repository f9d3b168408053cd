/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the report pass of analysis/report.c on a trace this test
 * writes itself (tests/restrace.h): the peak of heap in use (bytes,
 * blocks, the event that reached it and its time, between two sleeps),
 * what each site held at the peak and at the end, the totals of
 * allocations and frees, the lifetimes, the thread, descriptors and
 * shared memory.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "analysis/report.h"
#include "helpers.h"
#include "restrace.h"

enum { BT_A = 1, BT_B, BT_FREE };

#define SLEEP_NS 30000000 /* around the peak */

static void nap(void)
{
	struct timespec ts = { 0, SLEEP_NS };

	nanosleep(&ts, NULL);
}

/*
 * Events, numbered from 1 as rp->peak_event counts them:
 *	1-3	rip:bt A, B, FREE
 *	4	A: malloc 1000 at 0x1000		in use 1000
 *	5	B: malloc 2000 at 0x2000		3000
 *		(30 ms)
 *	6	free 0x1000				2000
 *	7	A: malloc 5000 at 0x3000		7000: the peak, 2 blocks
 *		(30 ms)
 *	8	free 0x2000				5000
 *	9	B: realloc(NULL) 100 at 0x4000		5100
 *	10	free 0x3000				100
 *	11-12	fd:open 3, fd:close 3
 *	13	shm:create "/r" 4096 (shm_open)
 */
static void write_trace(void)
{
	const uint64_t fa[2] = { 0x401000, 0x500000 }, fb[1] = { 0x402000 };
	const uint64_t ff[1] = { 0x403000 };

	rt_open();
	rt_bt(BT_A, fa, 2);
	rt_bt(BT_B, fb, 1);
	rt_bt(BT_FREE, ff, 1);
	rt_ev(ROLE_MEM_ALLOC, 0x1000, 1000, BT_A, RIP_MEM_MALLOC);
	rt_ev(ROLE_MEM_ALLOC, 0x2000, 2000, BT_B, RIP_MEM_MALLOC);
	nap();
	rt_ev(ROLE_MEM_FREE, 0x1000, BT_FREE, RIP_MEM_FREE);
	rt_ev(ROLE_MEM_ALLOC, 0x3000, 5000, BT_A, RIP_MEM_MALLOC);
	nap();
	rt_ev(ROLE_MEM_FREE, 0x2000, BT_FREE, RIP_MEM_FREE);
	rt_ev(ROLE_MEM_REALLOC, 0, 0x4000, 100, BT_B);
	rt_ev(ROLE_MEM_FREE, 0x3000, BT_FREE, RIP_MEM_FREE);
	rt_ev(ROLE_FD_OPEN, 3, BT_A, RIP_FD_OPEN, 0, (uintptr_t)"/tmp/r");
	rt_ev(ROLE_FD_CLOSE, 3, BT_FREE, RIP_FD_CLOSE);
	rt_ev(ROLE_SHM_CREATE, 7, 4096, BT_B, RIP_SHM_OPEN, (uintptr_t)"/r");
	rt_close();
}

/* The time of event number k (1-based) of the trace, INT64_MIN if there is none. */
static int64_t event_ns(uint64_t k)
{
	struct evs *s = rt_source();
	struct evs_event e;
	char err[512];
	int64_t ns = INT64_MIN;

	for (uint64_t i = 1; evs_next(s, &e, err, sizeof(err)) > 0; i++)
		if (i == k)
			ns = e.ns;
	evs_close(s);
	return ns;
}

static const struct rp_site *site(const struct rp *rp, uint32_t bt)
{
	for (size_t i = 0; i < rp->nsites; i++)
		if (rp->sites[i].bt == bt)
			return &rp->sites[i];
	return NULL;
}

int main(void)
{
	struct evs *s;
	struct rp *rp;
	const struct rp_site *a, *b;
	char err[512];
	uint32_t n;

	write_trace();
	s = rt_source();
	rp = rp_new();
	if (!rp || rp_run(rp, s, err, sizeof(err))) {
		fprintf(stderr, "rp_run: %s\n", rp ? err : "out of memory");
		return T_FAIL;
	}
	evs_close(s);

	/* the peak: 7000 bytes in 2 blocks, at event 7, between the two sleeps */
	T_EQ(rp->peak_bytes, 7000);
	T_EQ(rp->peak_count, 2);
	T_EQ(rp->peak_event, 7);
	T_EQ(rp->peak_ns, event_ns(7));
	T_CHECK(rp->peak_ns - rp->first_ns >= SLEEP_NS);
	T_CHECK(rp->last_ns - rp->peak_ns >= SLEEP_NS);

	/* what made it up, and what is left */
	a = site(rp, BT_A);
	b = site(rp, BT_B);
	T_EQ(rp->nsites, 2);
	T_CHECK(a && b);
	if (a && b) {
		T_EQ(a->peak_bytes, 5000);
		T_EQ(a->peak_count, 1);
		T_EQ(b->peak_bytes, 2000);
		T_EQ(a->count, 2);
		T_EQ(a->bytes, 6000);
		T_EQ(a->live_count, 0);
		T_EQ(b->count, 2);
		T_EQ(b->bytes, 2100);
		T_EQ(b->live_bytes, 100);
	}
	T_EQ(rp->allocs, 4);
	T_EQ(rp->alloc_bytes, 8100);
	T_EQ(rp->reallocs, 0); /* realloc(NULL) is an allocation, not a realloc of a block */
	T_EQ(rp->frees, 3);
	T_EQ(rp->freed_bytes, 8000);
	T_EQ(rp->frees_unseen, 0);
	T_EQ(rp->live_count, 1);
	T_EQ(rp->live_bytes, 100);
	T_EQ(rp->hist[10].count, 1); /* 1000: in [512, 1024) */
	T_EQ(rp->hist_live[7].bytes, 100);
	/* lifetimes: 0x1000 and 0x2000 lived over a sleep, 0x3000 over the other */
	T_EQ(rp->life[5].count + rp->life[6].count, 3); /* [10 ms, 1 s) */

	T_EQ(rp->nthreads, 1);
	if (rp->nthreads == 1) {
		T_EQ(rp->threads[0].allocs, 4);
		T_EQ(rp->threads[0].frees, 3);
	}
	T_EQ(rp->fd.opened, 1);
	T_EQ(rp->fd.closed, 1);
	T_EQ(rp->fd.open_at_end, 0);
	T_EQ(rp->shm.created, 1);
	T_EQ(rp->shm.live, 1);
	T_EQ(rp->shm.live_bytes, 4096);

	T_EQ(rp->events, 13);
	T_EQ(rp->res_events, 10);
	T_EQ(rp->bt_defs, 3);
	T_CHECK(rp_bt(rp, BT_A, &n) && n == 2);
	rp_free(rp);
	return t_result();
}
