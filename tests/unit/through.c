/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the --through filter (analysis/through.c) and the passes
 * that take it, on events this test writes itself (mem:alloc, mem:free and
 * rip:bt stacks of its own functions) into its own ring file: rip leaks'
 * groups (lk_through) and rip report's figures (rp_set_through) are
 * exactly those of the stacks through a name, two names, a glob and a
 * FILE:LINE; a block made by a stack left out and freed is no free of the
 * subset and no free of a block never seen; a stack defined after its use
 * is found by leaks (grouped after the pass) and left out, counted, by the
 * report (asked as the events go by); what each pattern matched is told,
 * thr_scan finds a pattern only on a stack no result used, and not one on
 * none; bad patterns are refused.
 *
 * The stacks (outermost first) and what they allocate:
 *	t_main t_parse_a t_leaf            3 x 100 never freed, 1 x 50 freed
 *	t_main t_parse_a t_parse_b t_leaf  2 x 20 never freed
 *	t_main t_parse_b t_leaf            2 x 20 never freed
 *	t_main t_other                     5 x 64, 1 of them freed
 *	t_main t_parse_a t_late            1 x 1000 never freed, defined after its use
 *	no backtrace                       1 x 7 never freed
 *	t_main t_free                      the frees
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rip.h>
#include <rip/resource.h>

#include "analysis/leaks.h"
#include "analysis/report.h"
#include "analysis/stacks.h"
#include "analysis/through.h"
#include "helpers.h"
#include "resevents.h"
#include "read/evsource.h"
#include "read/sym.h"

/* Real functions, so that their addresses symbolize to these names; L_*: their lines. */
/* clang-format off */
NOINLINE void t_main(void) { __asm__ volatile(""); }
NOINLINE void t_parse_a(void) { __asm__ volatile(""); } static const int L_PARSE_A = __LINE__;
NOINLINE void t_parse_b(void) { __asm__ volatile(""); }
NOINLINE void t_leaf(void) { __asm__ volatile(""); }
NOINLINE void t_other(void) { __asm__ volatile(""); }
NOINLINE void t_late(void) { __asm__ volatile(""); }
NOINLINE void t_free(void) { __asm__ volatile(""); }
/* clang-format on */

enum { BT_A = 1, BT_AB, BT_B, BT_OTHER, BT_LATE, BT_FREE };

static void write_events(void)
{
	BT(BT_A, t_leaf, t_parse_a, t_main);
	BT(BT_AB, t_leaf, t_parse_b, t_parse_a, t_main);
	BT(BT_B, t_leaf, t_parse_b, t_main);
	BT(BT_OTHER, t_other, t_main);
	BT(BT_FREE, t_free, t_main);
	for (uint64_t i = 0; i < 3; i++)
		alloc(0x1000 + i * 0x100, 100, BT_A);
	alloc(0x1800, 50, BT_A);
	rip_event3(&ev_free, 0x1800, BT_FREE, RIP_MEM_FREE);
	for (uint64_t i = 0; i < 2; i++) {
		alloc(0x2000 + i * 0x100, 20, BT_AB);
		alloc(0x3000 + i * 0x100, 20, BT_B);
	}
	for (uint64_t i = 0; i < 5; i++)
		alloc(0x4000 + i * 0x100, 64, BT_OTHER);
	rip_event3(&ev_free, 0x4000, BT_FREE, RIP_MEM_FREE);
	alloc(0x6000, 1000, BT_LATE);
	alloc(0x7000, 7, 0);
	BT(BT_LATE, t_late, t_parse_a, t_main);
}

/* The source at path, its symbols, the filter of pats[n]. */
struct run {
	struct evs *s;
	struct rip_sym *sym;
	struct thr *t;
};

static int run_open(struct run *r, const char *path, const char *const *pats, size_t n)
{
	char err[512];

	*r = (struct run){ 0 };
	if (evs_open(path, &r->s, err, sizeof(err)) ||
	    stk_sym_open(r->s, NULL, NULL, &r->sym, err, sizeof(err)) ||
	    thr_new(pats, n, &r->t, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", path, err);
		t_failures++;
		return -1;
	}
	return 0;
}

static void run_close(struct run *r)
{
	thr_free(r->t);
	if (r->sym)
		rip_sym_free(r->sym);
	evs_close(r->s);
}

/*
 * rip leaks' groups through pats: want is "count:bytes ..." in the groups'
 * order (biggest first), with the totals count and bytes.
 */
static struct thr *leaks(struct run *r, const char *path, const char *const *pats, size_t n,
			 const char *want, uint64_t count, uint64_t bytes)
{
	char err[512], got[512] = "";
	struct lk *lk;

	if (run_open(r, path, pats, n))
		return NULL;
	lk = lk_new(NULL);
	T_CHECK(lk != NULL);
	if (!lk)
		return NULL;
	T_EQ(lk_run(lk, r->s, err, sizeof(err)), 0);
	T_EQ(lk_through(lk, r->t, r->sym), 0);
	for (size_t i = 0; i < lk->ngroups; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%llu:%llu", i ? " " : "",
			 (unsigned long long)lk->groups[i].count,
			 (unsigned long long)lk->groups[i].bytes);
	fprintf(stderr, "leaks through %s%s: %s\n", pats[0], n > 1 ? "..." : "", got);
	T_STREQ(got, want);
	T_EQ(lk->total_count[LK_MEM], count);
	T_EQ(lk->total_bytes[LK_MEM], bytes);
	T_EQ(thr_scan(r->t, r->sym, &lk->live.bts), 0);
	lk_free(lk);
	return r->t;
}

int main(void)
{
	RIP_OPTS(rip_ring_opts, o, .slots = 8);
	static const char *const a[] = { "t_parse_a" };
	static const char *const ab[] = { "t_parse_a", "t_parse_b" };
	static const char *const glob[] = { "t_parse_?" };
	static const char *const scan[] = { "t_leaf", "t_free", "t_nothing" };
	char ring[4096], err[512], line[64];
	const char *const by_line[] = { line };
	const struct thr_info *f;
	struct thr *t;
	struct run r;
	int ret;

	ret = rip_ring_open(&o);
	T_SKIP_IF(ret == -ENOSPC || ret == -EROFS, "no room for a ring file");
	T_EQ(ret, 0);
	if (ret || rip_ring_path(ring, sizeof(ring)))
		return T_FAIL;
	write_events();

	/* leaks: the late stack is found, as every stack is looked up after the pass */
	t = leaks(&r, ring, a, 1, "1:1000 3:300 2:40", 6, 1340);
	if (t) {
		f = thr_info(t, 0);
		T_EQ(f->kind, THR_NAME);
		T_EQ(f->stacks, 3);
		T_EQ(f->nnames, 1);
		T_STREQ(f->names[0], "t_parse_a");
		T_EQ(thr_stackless(t), 1); /* the block without a stack */
	}
	run_close(&r);
	leaks(&r, ring, ab, 2, "1:1000 3:300 2:40 2:40", 8, 1380);
	run_close(&r);
	t = leaks(&r, ring, glob, 1, "1:1000 3:300 2:40 2:40", 8, 1380);
	if (t) {
		f = thr_info(t, 0);
		T_EQ(f->kind, THR_GLOB);
		T_EQ(f->stacks, 4);
		T_EQ(f->nnames, 2);
	}
	run_close(&r);
	snprintf(line, sizeof(line), "through.c:%d", L_PARSE_A);
	t = leaks(&r, ring, by_line, 1, "1:1000 3:300 2:40", 6, 1340);
	if (t) {
		f = thr_info(t, 0);
		T_EQ(f->kind, THR_LINE);
		snprintf(line, sizeof(line), "t_parse_a at tests/unit/through.c:%d", L_PARSE_A);
		T_STREQ(f->names[0], line);
	}
	run_close(&r);
	/* t_free is on a stack no group has: found by thr_scan only; t_nothing on none */
	t = leaks(&r, ring, scan, 3, "3:300 2:40 2:40", 7, 380);
	if (t) {
		T_CHECK(thr_info(t, 0)->anywhere && thr_info(t, 0)->stacks == 3);
		T_CHECK(thr_info(t, 1)->anywhere && thr_info(t, 1)->stacks == 0);
		T_CHECK(!thr_info(t, 2)->anywhere);
	}
	run_close(&r);

	/* report: event by event, so the stack defined after its use is left out, counted */
	if (!run_open(&r, ring, a, 1)) {
		struct rp *rp = rp_new();

		T_CHECK(rp != NULL);
		rp_set_through(rp, r.t, r.sym);
		T_EQ(rp_run(rp, r.s, err, sizeof(err)), 0);
		T_EQ(rp->allocs, 6);
		T_EQ(rp->alloc_bytes, 390);
		T_EQ(rp->frees, 1);
		T_EQ(rp->freed_bytes, 50);
		T_EQ(rp->frees_unseen, 0); /* t_other's freed block was followed */
		T_EQ(rp->live_count, 5);
		T_EQ(rp->live_bytes, 340);
		T_EQ(rp->peak_bytes, 350);
		T_EQ(rp->peak_count, 4);
		T_EQ(rp->nsites, 2);
		T_EQ(rp->nthreads, 1);
		T_EQ(rp->threads[0].allocs, 6);
		T_EQ(thr_stackless(r.t), 2); /* no stack; defined after its use */
		rp_free(rp);
		run_close(&r);
	}

	/* bad patterns */
	{
		static const char *const empty[] = { "" }, *const zero[] = { "x.c:0" };
		static const char *const kinds[] = { "ns::f", "a:b:12", "f[12]" };
		const char *many[THR_MAX + 1];

		for (size_t i = 0; i <= THR_MAX; i++)
			many[i] = "f";
		T_EQ(thr_new(empty, 1, &t, err, sizeof(err)), -EINVAL);
		T_EQ(thr_new(zero, 1, &t, err, sizeof(err)), -EINVAL);
		T_EQ(thr_new(many, THR_MAX + 1, &t, err, sizeof(err)), -EINVAL);
		T_EQ(thr_new(kinds, 3, &t, err, sizeof(err)), 0);
		T_EQ(thr_info(t, 0)->kind, THR_NAME);
		T_EQ(thr_info(t, 1)->kind, THR_LINE);
		T_EQ(thr_info(t, 2)->kind, THR_GLOB);
		thr_free(t);
	}
	return t_result();
}
