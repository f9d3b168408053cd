/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the leaks and report passes on a trace with more live
 * blocks at once than fit the caches (20,000: LIVE_MEM passes LIVE_HOLD_CAP
 * slots, and heap events are held a few events before the pass sees them,
 * analysis/live.h) give exactly what a model of the same events gives:
 * the blocks left live by backtrace, with their bytes, the frees of what
 * was never made, the peak (its bytes, blocks and event number: report.c
 * reads the count of events read while an event is held), in a trace that
 * mixes streams (a second thread frees, reuses and moves the first one's
 * blocks), descriptors among the heap events (which let the held ones go
 * first), and packets enough that the source loads new ones while events
 * are held.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/leaks.h"
#include "analysis/report.h"
#include "helpers.h"
#include "restrace.h"

#define N 20000 /* blocks made by the first thread, all live at once */
#define NBT 8

enum {
	BT_FREE = 7,
	BT_FD = 8
};

/* The model: what is live at each of the addresses the trace uses. */
struct blk {
	uint64_t addr, size;
	uint32_t bt;
	bool live;
};

static struct blk model[3 * N];
static uint64_t m_events, m_unseen, m_live_bytes, m_live_count, m_peak_bytes, m_peak_count;
static uint64_t m_peak_event, m_fds;

/* the address of block i of the first thread (A), and where the second moves it (R) */
static uint64_t addr_a(uint64_t i)
{
	return 0x100000 + i * 0x40;
}
static uint64_t addr_r(uint64_t i)
{
	return 0x900000 + i * 0x40;
}

static struct blk *slot_of(uint64_t addr)
{
	if (addr >= 0x900000)
		return &model[N + (addr - 0x900000) / 0x40];
	return &model[(addr - 0x100000) / 0x40];
}

static void peak(void)
{
	if (m_live_bytes > m_peak_bytes) {
		m_peak_bytes = m_live_bytes;
		m_peak_count = m_live_count;
		m_peak_event = m_events;
	}
}

static void m_alloc(uint64_t addr, uint64_t size, uint32_t bt)
{
	struct blk *b = slot_of(addr);

	*b = (struct blk){ addr, size, bt, true };
	m_live_bytes += size;
	m_live_count++;
	m_events++;
	rt_ev(ROLE_MEM_ALLOC, addr, size, bt, RIP_MEM_MALLOC);
	peak();
}

static void m_free(uint64_t addr)
{
	struct blk *b = addr >= 0x100000 ? slot_of(addr) : NULL;

	if (b && b->live) {
		b->live = false;
		m_live_bytes -= b->size;
		m_live_count--;
	} else {
		m_unseen++;
	}
	m_events++;
	rt_ev(ROLE_MEM_FREE, addr, BT_FREE, RIP_MEM_FREE);
}

static void m_realloc(uint64_t old, uint64_t addr, uint64_t size, uint32_t bt)
{
	struct blk *o = slot_of(old), *b = slot_of(addr);

	if (o->live) {
		o->live = false;
		m_live_bytes -= o->size;
		m_live_count--;
	}
	*b = (struct blk){ addr, size, bt, true };
	m_live_bytes += size;
	m_live_count++;
	m_events++;
	rt_ev(ROLE_MEM_REALLOC, old, addr, size, bt);
	peak();
}

static void fd(int64_t n, bool open)
{
	m_events++;
	m_fds += open ? 1 : -1;
	if (open)
		rt_ev(ROLE_FD_OPEN, (uint64_t)n, BT_FD, RIP_FD_OPEN, 0, (uintptr_t) "/tmp/held");
	else
		rt_ev(ROLE_FD_CLOSE, (uint64_t)n, BT_FREE, RIP_FD_CLOSE);
}

/* the second thread: frees a third of the blocks, reuses some addresses, moves others */
static void *worker(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; i < N; i += 3) {
		m_free(addr_a(i));
		if (i % 7 == 0)
			m_alloc(addr_a(i), 8, 5); /* the same address again */
		if (i % 11 == 0 && i + 1 < N)
			m_realloc(addr_a(i + 1), addr_r(i), 33, 6);
		if (i % 500 == 0)
			fd((int64_t)(i / 500) + 10, true);
		if (i % 1000 == 0)
			m_free(0x50000 + i); /* never made */
	}
	rip_thread_detach();
	return NULL;
}

static void write_trace(void)
{
	const uint64_t f[2] = { 0x400000, 0x500000 };
	pthread_t t;

	rt_open();
	for (uint32_t b = 1; b <= NBT; b++)
		rt_bt(b, f, 2), m_events++;
	for (uint64_t i = 0; i < N; i++)
		m_alloc(addr_a(i), 16 + i % 100, 1 + (uint32_t)(i % 4));
	if (pthread_create(&t, NULL, worker, NULL)) {
		perror("pthread_create");
		exit(1);
	}
	pthread_join(t, NULL);
	/* the first thread again: frees some of the moved blocks, closes a descriptor */
	for (uint64_t i = 0; i < N; i += 22)
		m_free(addr_r(i));
	fd(10, false);
	for (uint64_t i = 1; i < N; i += 5)
		m_free(addr_a(i));
	rt_close();
}

static void check_leaks(void)
{
	struct evs *s = rt_source();
	struct lk *lk = lk_new(NULL);
	uint64_t count[NBT + 1] = { 0 }, bytes[NBT + 1] = { 0 }, total = 0;
	char err[512];

	if (!lk || lk_run(lk, s, err, sizeof(err))) {
		fprintf(stderr, "lk_run: %s\n", lk ? err : "out of memory");
		exit(1);
	}
	evs_close(s);
	for (size_t i = 0; i < sizeof(model) / sizeof(model[0]); i++)
		if (model[i].live) {
			count[model[i].bt]++;
			bytes[model[i].bt] += model[i].size;
			total += model[i].size;
		}
	for (size_t g = 0; g < lk->ngroups; g++) {
		const struct lk_group *x = &lk->groups[g];

		if (x->res != LK_MEM)
			continue;
		T_CHECK(x->bt >= 1 && x->bt <= NBT);
		if (x->bt < 1 || x->bt > NBT)
			continue;
		T_EQ(x->count, count[x->bt]);
		T_EQ(x->bytes, bytes[x->bt]);
		count[x->bt] = 0; /* seen */
	}
	for (uint32_t b = 1; b <= NBT; b++)
		T_EQ(count[b], 0); /* every live group reported */
	T_EQ(lk->total_count[LK_MEM], m_live_count);
	T_EQ(lk->total_bytes[LK_MEM], total);
	T_EQ(lk->un.release[LK_MEM], m_unseen);
	T_EQ(lk->un.replaced[LK_MEM], 0);
	T_EQ(lk->total_count[LK_FD], m_fds);
	T_EQ(lk->events, m_events);
	lk_free(lk);
}

static void check_report(void)
{
	struct evs *s = rt_source();
	struct rp *rp = rp_new();
	char err[512];

	if (!rp || rp_run(rp, s, err, sizeof(err))) {
		fprintf(stderr, "rp_run: %s\n", rp ? err : "out of memory");
		exit(1);
	}
	evs_close(s);
	T_EQ(rp->live_count, m_live_count);
	T_EQ(rp->live_bytes, m_live_bytes);
	T_EQ(rp->frees_unseen, m_unseen);
	T_EQ(rp->peak_bytes, m_peak_bytes);
	T_EQ(rp->peak_count, m_peak_count);
	T_EQ(rp->peak_event, m_peak_event);
	rp_free(rp);
}

int main(void)
{
	/* room for every event: a ring file keeps the last 256 KiB of a thread's by default */
	setenv("RIP_EVENT_RING_SIZE", "4194304", 1);
	write_trace();
	check_leaks();
	check_report();
	return t_result();
}
