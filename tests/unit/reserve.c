/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: address space reserved (mem:alloc of kind reserve) and made
 * memory by mprotect (kind mprotect) in the leaks and report passes, on a
 * trace this test writes itself, with the values a program or a corrupt
 * trace may give: an mprotect of length 0 inside a reservation (it made a
 * block of 0 bytes, one more "never freed"), and ranges that wrap past
 * 2^64 (cut at 2^64 - 1).
 */
#include <stdio.h>
#include <string.h>

#include "analysis/leaks.h"
#include "analysis/live.h"
#include "analysis/report.h"
#include "helpers.h"
#include "restrace.h"

enum {
	BT_R = 1,
	BT_Z,
	BT_M,
	BT_H,
	BT_W
};

#define MIB 0x100000ull
#define R 0x10000000ull
#define H 0xfffffffffff00000ull /* 1 MiB under 2^64 */

static void write_trace(void)
{
	rt_open();
	for (uint64_t bt = BT_R; bt <= BT_W; bt++) {
		const uint64_t f[1] = { 0x400000 + bt * 0x10 };

		rt_bt((uint32_t)bt, f, 1);
	}
	rt_ev(ROLE_MEM_ALLOC, R, 16 * MIB, BT_R, RIP_MEM_RESERVE);
	/* mprotect(p, 0, ...) succeeds and makes nothing */
	rt_ev(ROLE_MEM_ALLOC, R + MIB, 0, BT_Z, RIP_MEM_MPROTECT);
	rt_ev(ROLE_MEM_ALLOC, R, 0x2000, BT_M, RIP_MEM_MPROTECT);
	/* a reservation and an mprotect that wrap past 2^64 */
	rt_ev(ROLE_MEM_ALLOC, H, UINT64_MAX, BT_H, RIP_MEM_RESERVE);
	rt_ev(ROLE_MEM_ALLOC, UINT64_MAX - 0xffff, 0x100000, BT_W, RIP_MEM_MPROTECT);
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
	T_CHECK(!group(lk, BT_Z));
	T_CHECK(!group(lk, BT_R) && !group(lk, BT_H));
	g = group(lk, BT_M);
	T_CHECK(g && g->count == 1 && g->bytes == 0x2000);
	g = group(lk, BT_W);
	T_CHECK(g && g->count == 1 && g->bytes == 0xffff);
	T_EQ(lk->ngroups, 2);
	T_EQ(lk->reserved_bytes, 16 * MIB - 0x2000 + (UINT64_MAX - 0xffff - H));
	T_EQ(lk->reserved_ranges, 2);
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
	T_EQ(rp->live_count, 2);
	T_EQ(rp->live_bytes, 0x2000 + 0xffff);
	T_EQ(rp->allocs, 2);
	rp_free(rp);
}

int main(void)
{
	write_trace();
	check_leaks();
	check_report();
	return t_result();
}
