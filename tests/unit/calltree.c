/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the calltree pass (analysis/calltree.c) on events this test
 * writes itself: mem:alloc, mem:free, mem:realloc and rip:bt stacks made of
 * its own functions' addresses, emitted through rip.h into its own ring
 * file, then read back through the event source, once from the ring file
 * and once from a trace directory the consumer (record/consume.c) writes.
 * Every node and edge has exact bytes and blocks: for the unreleased
 * blocks, for every block allocated (all), and with top and min_bytes;
 * recursion counts once per stack, the functions under 1% (and the stacks
 * with no backtrace, or one the trace never defines) share "(others)", a
 * stack defined after its first use is found.
 *
 * The stacks (outermost first) and what they allocate:
 *	t_main t_parse t_leaf_a            3 x 100 never freed, 1 x 50 freed
 *	t_main t_parse t_leaf_b            1 x 4096 never freed
 *	t_main t_load t_leaf_a             2 x 1000 never freed
 *	t_main t_load t_rec t_rec t_rec    1 x 200 grown by realloc to 600, never freed
 *	t_main t_tiny                      1 x 10 never freed (under 1%)
 *	t_main t_load t_leaf_b             1 x 5000, freed by realloc(p, 0)
 *	t_main t_late                      1 x 1000 never freed, defined after its use
 *	no backtrace                       1 x 7 never freed
 *	backtrace 99, never defined        1 x 3 never freed
 * Unreleased: 8016 bytes in 11 blocks; all: 13266 bytes in 14 blocks.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rip.h>
#include <rip/resource.h>

#include "analysis/calltree.h"
#include "analysis/stacks.h"
#include "helpers.h"
#include "resevents.h"
#include "read/evsource.h"
#include "read/sym.h"
#include "record/consume.h"

RIP_EVENT_TYPE(ev_realloc, "mem:realloc", RIP_CAT_MEM, RIP_FIELD(HEX64, "old"),
	       RIP_FIELD(HEX64, "addr"), RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"));

/* Real functions, so that their addresses symbolize to these names. */
/* clang-format off */
NOINLINE void t_main(void) { __asm__ volatile(""); }
NOINLINE void t_parse(void) { __asm__ volatile(""); }
NOINLINE void t_load(void) { __asm__ volatile(""); }
NOINLINE void t_leaf_a(void) { __asm__ volatile(""); }
NOINLINE void t_leaf_b(void) { __asm__ volatile(""); }
NOINLINE void t_rec(void) { __asm__ volatile(""); }
NOINLINE void t_tiny(void) { __asm__ volatile(""); }
NOINLINE void t_late(void) { __asm__ volatile(""); }
NOINLINE void t_free(void) { __asm__ volatile(""); }
/* clang-format on */

enum {
	BT_PARSE_A = 1,
	BT_PARSE_B,
	BT_LOAD_A,
	BT_REC,
	BT_TINY,
	BT_LOAD_B,
	BT_LATE,
	BT_FREE
};

static void write_events(void)
{
	BT(BT_PARSE_A, t_leaf_a, t_parse, t_main);
	BT(BT_PARSE_B, t_leaf_b, t_parse, t_main);
	BT(BT_LOAD_A, t_leaf_a, t_load, t_main);
	BT(BT_REC, t_rec, t_rec, t_rec, t_load, t_main);
	BT(BT_TINY, t_tiny, t_main);
	BT(BT_LOAD_B, t_leaf_b, t_load, t_main);
	BT(BT_FREE, t_free, t_main);
	for (uint64_t i = 0; i < 3; i++)
		alloc(0x1000 + i * 0x100, 100, BT_PARSE_A);
	alloc(0x1800, 50, BT_PARSE_A);
	rip_event3(&ev_free, 0x1800, BT_FREE, RIP_MEM_FREE);
	alloc(0x10000, 4096, BT_PARSE_B);
	alloc(0x20000, 1000, BT_LOAD_A);
	alloc(0x21000, 1000, BT_LOAD_A);
	alloc(0x30000, 200, BT_REC);
	rip_event4(&ev_realloc, 0x30000, 0x31000, 600, BT_REC);
	alloc(0x40000, 10, BT_TINY);
	alloc(0x50000, 5000, BT_LOAD_B);
	rip_event4(&ev_realloc, 0x50000, 0, 0, BT_FREE); /* realloc(p, 0): a free */
	alloc(0x60000, 1000, BT_LATE);
	alloc(0x70000, 7, 0);
	alloc(0x80000, 3, 99);
	alloc(0, 1u << 20, BT_LOAD_B); /* a failed malloc: nothing */
	BT(BT_LATE, t_late, t_main);
}

/* ---- checks -------------------------------------------------------------------------- */

/* Index of the node of name, or -1. */
static int node(const struct ct *ct, const char *name)
{
	for (size_t i = 0; i < ct->nnodes; i++)
		if (!strcmp(ct->nodes[i].name, name))
			return (int)i;
	return -1;
}

/*
 * The graph has exactly the nodes of want ("name bytes count self_bytes
 * self_count", one per line; without the self figures, they are not
 * checked) and the edges of edges ("from>to bytes count").
 */
static void check_graph(const char *what, const struct ct *ct, const char *const *want,
			const char *const *edges)
{
	size_t n = 0, ne = 0;
	char buf[512];

	for (; want[n]; n++) {
		char name[128];
		unsigned long long b, c, sb, sc;
		int i, k = sscanf(want[n], "%127s %llu %llu %llu %llu", name, &b, &c, &sb, &sc);

		T_CHECK(k == 3 || k == 5);
		i = node(ct, name);
		if (i < 0) {
			fprintf(stderr, "%s: no node %s\n", what, name);
			t_failures++;
			continue;
		}
		if (k == 5)
			snprintf(buf, sizeof(buf), "%s %llu %llu %llu %llu", name,
				 (unsigned long long)ct->nodes[i].bytes,
				 (unsigned long long)ct->nodes[i].count,
				 (unsigned long long)ct->nodes[i].self_bytes,
				 (unsigned long long)ct->nodes[i].self_count);
		else
			snprintf(buf, sizeof(buf), "%s %llu %llu", name,
				 (unsigned long long)ct->nodes[i].bytes,
				 (unsigned long long)ct->nodes[i].count);
		T_STREQ(buf, want[n]);
	}
	T_EQ(ct->nnodes, n);
	for (; edges[ne]; ne++) {
		bool found = false;

		for (size_t i = 0; i < ct->nedges && !found; i++) {
			const struct ct_edge *e = &ct->edges[i];

			snprintf(buf, sizeof(buf), "%s>%s %llu %llu", ct->nodes[e->from].name,
				 ct->nodes[e->to].name, (unsigned long long)e->bytes,
				 (unsigned long long)e->count);
			found = !strcmp(buf, edges[ne]);
		}
		if (!found) {
			fprintf(stderr, "%s: no edge %s\n", what, edges[ne]);
			t_failures++;
		}
	}
	T_EQ(ct->nedges, ne);
	/* heaviest first, "(others)" last */
	for (size_t i = 1; i < ct->nnodes; i++)
		T_CHECK(ct->nodes[i - 1].bytes >= ct->nodes[i].bytes ||
			!strcmp(ct->nodes[i].name, "(others)"));
	for (size_t i = 1; i < ct->nedges; i++)
		T_CHECK(ct->edges[i - 1].bytes >= ct->edges[i].bytes);
	if (ct->nnodes)
		T_STREQ(ct->nodes[0].name, "t_main");
}

static const char *const unrel_nodes[] = {
	"t_main 8006 9 0 0", "t_parse 4396 4 0 0",     "t_leaf_b 4096 1 4096 1",
	"t_load 2600 3 0 0", "t_leaf_a 2300 5 2300 5", "t_late 1000 1 1000 1",
	"t_rec 600 1 600 1", "(others) 20 3 20 3",     NULL,
};
static const char *const unrel_edges[] = {
	"t_main>t_parse 4396 4",   "t_parse>t_leaf_a 300 3",
	"t_parse>t_leaf_b 4096 1", "t_main>t_load 2600 3",
	"t_load>t_leaf_a 2000 2",  "t_load>t_rec 600 1",
	"t_rec>t_rec 600 1",	   "t_main>(others) 10 1",
	"t_main>t_late 1000 1",	   NULL,
};

static const char *const all_nodes[] = {
	"t_main 13256 12 0 0", "t_leaf_b 9096 2 9096 2", "t_load 7800 5 0 0",
	"t_parse 4446 5 0 0",  "t_leaf_a 2350 6 2350 6", "t_late 1000 1 1000 1",
	"t_rec 800 2 800 2",   "(others) 20 3 20 3",	 NULL,
};
static const char *const all_edges[] = {
	"t_main>t_parse 4446 5",
	"t_parse>t_leaf_a 350 4",
	"t_parse>t_leaf_b 4096 1",
	"t_main>t_load 7800 5",
	"t_load>t_leaf_a 2000 2",
	"t_load>t_leaf_b 5000 1",
	"t_load>t_rec 800 2",
	"t_rec>t_rec 800 2",
	"t_main>(others) 10 1",
	"t_main>t_late 1000 1",
	NULL,
};

/*
 * top 3: every stack off t_main, t_parse, t_leaf_b goes through (others),
 * and ends there (t_load > t_leaf_a: a run of two collapsed functions).
 */
static const char *const top_nodes[] = {
	"t_main 8006 9 0 0",
	"t_parse 4396 4 0 0",
	"t_leaf_b 4096 1 4096 1",
	"(others) 3920 10 3920 10",
	NULL,
};
static const char *const top_edges[] = {
	"t_main>t_parse 4396 4",
	"t_parse>t_leaf_b 4096 1",
	"t_parse>(others) 300 3",
	"t_main>(others) 3610 5",
	NULL,
};

/* min_bytes 2500: t_load stays too; t_rec's recursion collapses into one (others) */
static const char *const min_nodes[] = {
	"t_main 8006 9 0 0", "t_parse 4396 4 0 0", "t_leaf_b 4096 1 4096 1",
	"t_load 2600 3 0 0", "(others) 3920 10 3920 10", NULL,
};
static const char *const min_edges[] = {
	"t_main>t_parse 4396 4",
	"t_parse>t_leaf_b 4096 1",
	"t_parse>(others) 300 3",
	"t_main>t_load 2600 3",
	"t_load>(others) 2600 3",
	"t_main>(others) 1010 2",
	NULL,
};

/* Run the pass on source path with opts and check the graph against want and edges. */
static void run(const char *path, const struct ct_opts *opts, uint64_t bytes, uint64_t count,
		size_t stacks, const char *const *want, const char *const *edges)
{
	char err[512], what[600];
	struct rip_sym *sym = NULL;
	struct evs *s;
	struct ct *ct;
	int ret;

	snprintf(what, sizeof(what), "%s%s%s%s", path, opts->all ? " all" : "",
		 opts->top_set ? " top" : "", opts->min_set ? " min_bytes" : "");
	ret = evs_open(path, &s, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s: evs_open: %s\n", what, err);
		t_failures++;
		return;
	}
	ct = ct_new(opts);
	T_CHECK(ct != NULL);
	if (!ct)
		goto close_s;
	ret = ct_run(ct, s, err, sizeof(err));
	if (ret)
		fprintf(stderr, "%s: ct_run: %s\n", what, err);
	T_EQ(ret, 0);
	T_EQ(ct->total_bytes, bytes);
	T_EQ(ct->total_count, count);
	T_EQ(ct->nstacks, stacks);
	T_EQ(ct->events, 25);
	ret = stk_sym_open(s, NULL, NULL, &sym, err, sizeof(err));
	if (ret)
		fprintf(stderr, "%s: stk_sym_open: %s\n", what, err);
	T_EQ(ret, 0);
	ret = ct_graph(ct, sym, err, sizeof(err));
	T_EQ(ret, 0);
	fprintf(stderr, "%s: %zu nodes, %zu edges\n", what, ct->nnodes, ct->nedges);
	check_graph(what, ct, want, edges);
	if (sym)
		rip_sym_free(sym);
	ct_free(ct);
close_s:
	evs_close(s);
}

static void run_all_cases(const char *path)
{
	struct ct_opts unrel = { 0 }, all = { .all = true };
	struct ct_opts top = { .top_set = true, .top = 3 };
	struct ct_opts min = { .min_set = true, .min_bytes = 2500 };

	run(path, &unrel, 8016, 11, 8, unrel_nodes, unrel_edges);
	run(path, &all, 13266, 14, 9, all_nodes, all_edges);
	run(path, &top, 8016, 11, 8, top_nodes, top_edges);
	run(path, &min, 8016, 11, 8, min_nodes, min_edges);
}

/* Copy the ring file's events into trace directory dir, as rip record does. */
static int record(const char *ring, const char *dir)
{
	char err[512];
	struct rec r;
	int ret;

	rec_init(&r);
	ret = rec_attach(&r, ring, err, sizeof(err));
	if (!ret)
		ret = rec_open_trace(&r, dir, err, sizeof(err));
	if (!ret)
		ret = rec_finish(&r, err, sizeof(err));
	if (ret)
		fprintf(stderr, "recording %s: %s\n", dir, err);
	rec_close(&r);
	return ret;
}

int main(void)
{
	RIP_OPTS(rip_ring_opts, o, .slots = 8);
	const char *tmp = getenv("TEST_TMP");
	char ring[4096], dir[4096];
	int ret;

	ret = rip_ring_open(&o);
	T_SKIP_IF(ret == -ENOSPC || ret == -EROFS, "no room for a ring file");
	T_EQ(ret, 0);
	if (ret || rip_ring_path(ring, sizeof(ring)))
		return T_FAIL;
	write_events();
	run_all_cases(ring);

	snprintf(dir, sizeof(dir), "%s/trace", tmp ? tmp : "/tmp");
	T_EQ(record(ring, dir), 0);
	run_all_cases(dir);
	if (!tmp)
		fprintf(stderr, "left %s (no TEST_TMP)\n", dir);
	return t_result();
}
