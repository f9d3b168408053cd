/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: mappings as ranges (live_maps of analysis/live.h) in the
 * leaks and report passes, on a trace this test writes itself: a munmap of
 * the head and the tail of a mapping and a hole punched in it leave the
 * rest live at its site; its first address mapped again is another
 * mapping; one munmap across two mappings; a mapping placed over part of
 * another (MAP_FIXED) replaces that part; the old range of an mremap of
 * nothing seen is counted, a munmap of nothing seen (a file mapping, which
 * --mem does not record) and the implicit unmap of a mapping placed over
 * nothing are not; a
 * mem:free of a mapping's start (traces from before mem:unmap) releases
 * it; the report counts a free only when the last byte goes.
 */
#include <stdio.h>
#include <string.h>

#include "analysis/leaks.h"
#include "analysis/live.h"
#include "analysis/report.h"
#include "helpers.h"
#include "restrace.h"

enum { BT_A = 1, BT_B, BT_C, BT_D, BT_E, BT_F, BT_G, BT_UN };

#define MIB 0x100000ull

static void write_trace(void)
{
	rt_open();
	for (uint64_t bt = BT_A; bt <= BT_UN; bt++) {
		const uint64_t f[1] = { 0x400000 + bt * 0x10 };

		rt_bt((uint32_t)bt, f, 1);
	}
	/* A: 3 MiB, head and tail unmapped, a hole: 1 MiB - 4 KiB left */
	rt_ev(ROLE_MEM_ALLOC, 0x10000000, 3 * MIB, BT_A, RIP_MEM_MMAP);
	rt_ev(ROLE_MEM_UNMAP, 0x10000000, MIB, BT_UN, RIP_MEM_MUNMAP);
	rt_ev(ROLE_MEM_UNMAP, 0x10000000 + 2 * MIB, MIB, BT_UN, RIP_MEM_MUNMAP);
	rt_ev(ROLE_MEM_UNMAP, 0x10000000 + MIB + 0x10000, 0x1000, BT_UN, RIP_MEM_MUNMAP);
	/* B: A's first address mapped again, while A lives on */
	rt_ev(ROLE_MEM_ALLOC, 0x10000000, 0x2000, BT_B, RIP_MEM_MMAP);
	/* C and D side by side, one munmap across both */
	rt_ev(ROLE_MEM_ALLOC, 0x20000000, 0x2000, BT_C, RIP_MEM_MMAP);
	rt_ev(ROLE_MEM_ALLOC, 0x20002000, 0x2000, BT_D, RIP_MEM_MMAP);
	rt_ev(ROLE_MEM_UNMAP, 0x20001000, 0x2000, BT_UN, RIP_MEM_MUNMAP);
	/* E, then F placed over its second page */
	rt_ev(ROLE_MEM_ALLOC, 0x30000000, 0x4000, BT_E, RIP_MEM_MMAP);
	rt_ev(ROLE_MEM_ALLOC, 0x30001000, 0x1000, BT_F, RIP_MEM_MMAP);
	/*
	 * nothing seen there: mremap's old range counted; a munmap (of a file
	 * mapping, say) and the implicit unmap of a mapping placed over it: not
	 */
	rt_ev(ROLE_MEM_UNMAP, 0x50000000, 0x1000, BT_UN, RIP_MEM_MREMAP);
	rt_ev(ROLE_MEM_UNMAP, 0x50000000, 0x1000, BT_UN, RIP_MEM_MUNMAP);
	rt_ev(ROLE_MEM_UNMAP, 0x50000000, 0x1000, BT_UN, RIP_MEM_MMAP);
	/* G freed the old way */
	rt_ev(ROLE_MEM_ALLOC, 0x60000000, 0x1000, BT_G, RIP_MEM_MMAP);
	rt_ev(ROLE_MEM_FREE, 0x60000000, BT_UN, RIP_MEM_MUNMAP);
	/* D's last page and the rest of C: both gone now */
	rt_ev(ROLE_MEM_UNMAP, 0x20000000, 0x4000, BT_UN, RIP_MEM_MUNMAP);
	rt_close();
}

static const struct lk_group *group(const struct lk *lk, uint32_t bt)
{
	for (size_t i = 0; i < lk->ngroups; i++)
		if (lk->groups[i].res == LK_MEM && lk->groups[i].bt == bt)
			return &lk->groups[i];
	return NULL;
}

static void check_leaks(void)
{
	struct evs *s = rt_source();
	struct lk *lk = lk_new(NULL);
	const struct lk_group *g;
	char err[512];

	if (!lk || lk_run(lk, s, err, sizeof(err))) {
		fprintf(stderr, "lk_run: %s\n", lk ? err : "out of memory");
		exit(1);
	}
	evs_close(s);
	T_EQ(lk->ngroups, 4);
	g = group(lk, BT_A);
	T_CHECK(g && g->count == 1 && g->bytes == MIB - 0x1000);
	g = group(lk, BT_B);
	T_CHECK(g && g->count == 1 && g->bytes == 0x2000);
	g = group(lk, BT_E);
	T_CHECK(g && g->count == 1 && g->bytes == 0x3000);
	g = group(lk, BT_F);
	T_CHECK(g && g->count == 1 && g->bytes == 0x1000);
	T_CHECK(!group(lk, BT_C) && !group(lk, BT_D) && !group(lk, BT_G));
	T_EQ(lk->un.release[LK_MEM], 1);
	T_EQ(lk->un.replaced[LK_MEM], 0);
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
	T_EQ(rp->allocs, 7);
	T_EQ(rp->frees, 3); /* C, D, G; A and E only shrank */
	T_EQ(rp->frees_unseen, 1);
	T_EQ(rp->replaced, 0);
	T_EQ(rp->live_count, 4);
	T_EQ(rp->live_bytes, (MIB - 0x1000) + 0x2000 + 0x3000 + 0x1000);
	T_EQ(rp->alloc_bytes - rp->freed_bytes, rp->live_bytes);
	rp_free(rp);
}

/* The pieces themselves: a hole splits one, a range across several trims and drops. */
static int count_cut(void *arg, const struct live_cut *c)
{
	*(uint64_t *)arg += c->hi - c->lo;
	return 0;
}

static void check_pieces(void)
{
	struct live_maps m = { 0 };
	uint64_t gone = 0;

	T_EQ(live_maps_add(&m, 0x1000, 0x9000, 1), 0); /* [0x1000, 0xa000) */
	T_EQ(live_maps_add(&m, 0xa000, 0x1000, 2), 0); /* [0xa000, 0xb000) */
	T_EQ(live_maps_unmap(&m, 0x3000, 0x1000, count_cut, &gone), 1);
	T_EQ(m.n, 3);
	T_EQ(gone, 0x1000);
	T_EQ(live_maps_unmap(&m, 0x2000, 0x8800, count_cut, &gone), 3);
	T_EQ(gone, 0x1000 + 0x1000 + 0x6000 + 0x800);
	T_EQ(m.n, 2);
	T_CHECK(m.n == 2 && m.v[0].start == 0x1000 && m.v[0].end == 0x2000 && m.v[0].origin == 1);
	T_CHECK(m.n == 2 && m.v[1].start == 0xa800 && m.v[1].end == 0xb000 && m.v[1].origin == 2);
	T_EQ(live_maps_unmap(&m, 0x5000, 0x1000, count_cut, &gone), 0);
	T_CHECK(live_maps_at(&m, 0xa800) && !live_maps_at(&m, 0xa000));
	T_EQ(live_maps_unmap(&m, 0, UINT64_MAX, count_cut, &gone), 2);
	T_EQ(m.n, 0);
	live_maps_free(&m);
}

int main(void)
{
	write_trace();
	check_pieces();
	check_leaks();
	check_report();
	return t_result();
}
