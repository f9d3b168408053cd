// SPDX-License-Identifier: Apache-2.0
/*
 * Description: rip top's pass on CPU samples written by hand into this
 * thread's snap ring, as the preload library's handler writes them
 * (tagged entries, one publication per sample): the reader keeps them
 * apart from rip_snap() positions, the pass puts the thread in the group
 * of its newest sample's function, counts the samples of the first look
 * exactly, and after 20 more samples (more than the ring keeps) estimates
 * exactly 20 from how far the ring moved.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rip.h>

#include "analysis/top.h"
#include "read/ringfile.h"
#include "helpers.h"

__attribute__((noinline)) void unit_busy_a(void);
__attribute__((noinline)) void unit_busy_b(void);

__attribute__((noinline)) void unit_busy_a(void)
{
	__asm__ volatile("nop; nop; nop; nop" ::: "memory");
}

__attribute__((noinline)) void unit_busy_b(void)
{
	__asm__ volatile("nop; nop; nop; nop" ::: "memory");
}

/* One sample of two entries (an IP and a return address), as sample.c stores it. */
static void put_sample(struct rip_slot *s, uintptr_t ip, uintptr_t ret)
{
	uint32_t i = s->snap_seq;

	s->snap[i & (RIP_SNAP_DEPTH - 1)] = RIP_SAMPLE_ENTRY(0, ip);
	s->snap[(i + 1) & (RIP_SNAP_DEPTH - 1)] = RIP_SAMPLE_ENTRY(1, ret);
	__atomic_store_n(&s->snap_seq, i + 2, __ATOMIC_RELEASE);
}

static const struct top_group *group_of(const struct top_view *v, int32_t tid)
{
	for (size_t i = 0; i < v->nthreads; i++)
		if (v->threads[i].tid == tid)
			return &v->groups[v->threads[i].group];
	return NULL;
}

int main(void)
{
	const char *dir = getenv("TEST_TMP");
	char path[4096], err[RR_ERR_MAX];
	RIP_OPTS(rip_ring_opts, o, .slots = 64);
	const struct top_group *g;
	const struct top_view *v;
	struct rr_slots sl;
	struct rr_file f;
	struct rip_slot *s;
	struct top *t;
	uintptr_t a = (uintptr_t)&unit_busy_a + 2, b = (uintptr_t)&unit_busy_b + 2;
	uintptr_t ret = (uintptr_t)&main + 1;
	int32_t tid = 0;
	int found;

	snprintf(path, sizeof(path), "%s/top-unit.ring", dir ? dir : "/tmp");
	unlink(path);
	o.path = path;
	T_EQ(rip_ring_open(&o), 0);
	T_EQ(rip_thread_attach(), 0);
	s = __rip_self.thread;
	T_CHECK(s != NULL); /* attached: the thread has a slot */
	if (!s)
		return T_FAIL;
	tid = s->tid;

	/* The reader: three samples, no snap. */
	for (int i = 0; i < 3; i++)
		put_sample(s, a, ret);
	T_EQ(rr_open(path, &f, err, sizeof(err)), 0);
	T_EQ(rr_read_slots(&f, &sl, err, sizeof(err)), 0);
	found = 0;
	for (size_t i = 0; i < sl.n; i++) {
		if (sl.v[i].tid != tid)
			continue;
		found++;
		T_EQ(sl.v[i].n, 0);
		T_EQ(sl.v[i].nsamp, 6);
		T_EQ(sl.v[i].samp[0], RIP_SAMPLE_ENTRY(0, a));
		T_EQ(sl.v[i].samp_pos[5], 5);
	}
	T_EQ(found, 1); /* the checks above ran, once */
	rr_slots_free(&sl);

	/* The first look counts every sample in the ring. */
	T_EQ(top_new(&f, NULL, &t, err, sizeof(err)), 0);
	T_EQ(top_refresh(t, err, sizeof(err)), 0);
	top_sort(t, TOP_SORT_CPU);
	v = top_view(t);
	T_CHECK(v->alive && v->first);
	g = group_of(v, tid);
	T_CHECK(g != NULL);
	if (g) {
		T_EQ(g->kind, TOP_RUN);
		T_STREQ(g->func, "unit_busy_a");
		T_EQ((long long)(g->samples + 0.5), 3);
		T_EQ(g->addr, a);
	}

	/* 20 more in b: the ring keeps 15 of them, the count is estimated. */
	for (int i = 0; i < 20; i++)
		put_sample(s, b, ret);
	T_EQ(top_refresh(t, err, sizeof(err)), 0);
	top_sort(t, TOP_SORT_COUNT);
	v = top_view(t);
	T_CHECK(!v->first);
	g = group_of(v, tid);
	T_CHECK(g != NULL);
	if (g) {
		T_STREQ(g->func, "unit_busy_b");
		T_EQ((long long)(g->samples + 0.5), 20);
	}
	found = 0;
	for (size_t i = 0; i < v->nthreads; i++)
		if (v->threads[i].tid == tid) {
			found++;
			T_EQ(v->threads[i].samples, 20);
		}
	T_EQ(found, 1);

	/* A snap of the program's own stays a snap. */
	__rip_snap_store(s, a);
	T_EQ(rr_read_slots(&f, &sl, err, sizeof(err)), 0);
	found = 0;
	for (size_t i = 0; i < sl.n; i++)
		if (sl.v[i].tid == tid) {
			found++;
			T_EQ(sl.v[i].n, 1);
			T_EQ(sl.v[i].ip[0], a);
		}
	T_EQ(found, 1);
	rr_slots_free(&sl);
	top_free(t);
	rr_close(&f);
	unlink(path);
	return t_result();
}
