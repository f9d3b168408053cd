/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/calltree.c - the call graph of the allocations of a trace (see
 * calltree.h).
 *
 * Three steps.  The pass gathers groups: a backtrace and the bytes and
 * blocks it allocated (the unreleased ones from analysis/leaks.c's groups;
 * with all, every mem:alloc and mem:realloc that made a block, by
 * backtrace, with the rip:bt definitions kept aside since a stack may be
 * defined after its first use).  Then each group becomes a path of
 * functions, outermost first, each function a node found by its name.
 * Last, the figures: inclusive and self per function, the choice of the
 * kept ones, and the edges of the paths with the others mapped onto one
 * "(others)" node.  A stamp per function and per edge (the last group that
 * counted it) makes recursion count once per stack.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <internal/grow.h>

#include "analysis/calltree.h"
#include "analysis/leaks.h"
#include "analysis/roles.h"
#include "analysis/stacks.h"
#include "analysis/through.h"
#include "read/sym.h"

#define CT_MAX_FRAMES 8 /* inline chain of one address */
#define CT_NONE UINT32_MAX

/* A stack and what it allocated. */
struct ct_group {
	uint32_t bt;
	uint64_t count, bytes;
	size_t path, npath; /* function ids, outermost first, in path */
};

/* A function met on the stacks, before the graph keeps it or not. */
struct ct_fn {
	char *name;
	uint64_t bytes, count; /* inclusive */
	uint64_t self_bytes, self_count;
	uint32_t stamp; /* last group + 1 that counted it */
	uint32_t map;	/* its node in the graph */
	bool kept;
};

struct ct_priv {
	struct lk *lk;	     /* unreleased: the groups and their backtraces */
	struct role_map r;   /* all: the types of rip/resource.h by id, and their fields */
	struct stk_bts bts;  /* all: the backtraces read from the trace */
	struct stk_map gmap; /* all: bt -> a: group */
	struct live_maps rsv; /* all: address space reserved, what an mprotect makes memory of */
	/* the groups */
	struct ct_group *g;
	size_t ng, gcap;
	/* the functions, and the groups' paths through them */
	struct ct_fn *fns;
	size_t nfns, fcap;
	struct stk_map names; /* hash of a name -> a: function (collisions on hash + 1...) */
	uint32_t *path;
	size_t npath, pcap;
	/* the edges (in ct->edges) */
	struct stk_map emap; /* from << 32 | to -> a: edge */
	uint32_t *estamp;    /* by edge: last group + 1 that counted it */
	size_t ecap, scap;
};

/* ---- small containers ---------------------------------------------------------------- */

static int ct_grow(void *pp, size_t *cap, size_t need, size_t size)
{
	return rip_grow(pp, cap, size, need, 16);
}


static uint64_t ct_str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static int ct_nomem(char *err, size_t errlen)
{
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

/* ---- setup --------------------------------------------------------------------------- */

struct ct *ct_new(const struct ct_opts *opts)
{
	struct ct *ct = calloc(1, sizeof(*ct));

	if (!ct)
		return NULL;
	ct->p = calloc(1, sizeof(*ct->p));
	if (!ct->p) {
		free(ct);
		return NULL;
	}
	if (opts)
		ct->o = *opts;
	return ct;
}

void ct_free(struct ct *ct)
{
	struct ct_priv *p;

	if (!ct)
		return;
	p = ct->p;
	if (p) {
		for (size_t i = 0; i < p->nfns; i++)
			free(p->fns[i].name);
		free(p->fns);
		free(p->g);
		free(p->path);
		free(p->estamp);
		stk_map_free(&p->gmap);
		live_maps_free(&p->rsv);
		stk_map_free(&p->names);
		stk_map_free(&p->emap);
		stk_bts_free(&p->bts);
		lk_free(p->lk);
		free(p);
	}
	free(ct->nodes);
	free(ct->edges);
	free(ct);
}

/* ---- the groups ---------------------------------------------------------------------- */

static int ct_group_add(struct ct *ct, uint32_t bt, uint64_t count, uint64_t bytes)
{
	struct ct_priv *p = ct->p;

	if (ct_grow(&p->g, &p->gcap, p->ng + 1, sizeof(*p->g)))
		return -ENOMEM;
	p->g[p->ng++] = (struct ct_group){ .bt = bt, .count = count, .bytes = bytes };
	ct->total_bytes += bytes;
	ct->total_count += count;
	return 0;
}

/* Unreleased blocks: analysis/leaks.c's groups. */
static int ct_leaks(struct ct *ct, struct evs *s, char *err, size_t errlen)
{
	struct lk_opts lo = { .resources = ct->o.kind ? LK_F_RES : LK_F_MEM, .kind = ct->o.kind };
	struct lk *lk;
	int ret;

	lk = ct->p->lk = lk_new(&lo);
	if (!lk)
		return ct_nomem(err, errlen);
	ret = lk_run(lk, s, err, errlen);
	if (ret)
		return ret;
	ct->events = lk->events;
	for (size_t i = 0; i < lk->ngroups; i++) {
		const struct lk_group *g = &lk->groups[i];

		if ((g->res == LK_MEM || g->res == LK_RES) &&
		    ct_group_add(ct, g->bt, g->count, g->bytes))
			return ct_nomem(err, errlen);
	}
	return 0;
}

/* all: n blocks of bytes made at backtrace bt. */
static int ct_all_add(struct ct *ct, uint32_t bt, uint64_t n, uint64_t bytes)
{
	struct ct_priv *p = ct->p;
	bool fresh;
	struct stk_ent *g = stk_map_get(&p->gmap, bt, &fresh);

	if (!g)
		return -ENOMEM;
	if (fresh) {
		g->a = p->ng;
		if (ct_group_add(ct, bt, 0, 0))
			return -ENOMEM;
	}
	p->g[g->a].count += n;
	p->g[g->a].bytes += bytes;
	ct->total_count += n;
	ct->total_bytes += bytes;
	return 0;
}

/*
 * all: a reservation (address space: nothing made), a mapping or an unmap
 * (either takes its range out of the reservations), an mprotect (what it
 * makes memory of: the reserved parts it covers, a block each, as the
 * other passes count them).  1: counted as any allocation.
 */
static int ct_all_range(struct ct *ct, int r, const struct role_res *d)
{
	struct live_maps *rsv = &ct->p->rsv;
	struct live_piece *v;
	size_t n;
	int ret;

	if (r == ROLE_MEM_UNMAP ||
	    (r == ROLE_MEM_ALLOC && live_is_mapping(d->kind) && d->kind != RIP_MEM_MPROTECT)) {
		ret = live_rsv_cut(rsv, d->key, d->size);
		return ret < 0 ? ret : r == ROLE_MEM_ALLOC;
	}
	if (live_is_reserve(d->kind))
		return live_rsv_add(rsv, d->key, d->size);
	ret = live_rsv_take(rsv, d->key, d->size, &v, &n);
	for (size_t i = 0; !ret && i < n; i++)
		ret = ct_all_add(ct, d->bt, 1, v[i].end - v[i].start);
	free(v);
	return ret;
}

/* all: every mem:alloc and every mem:realloc that made a block, by backtrace. */
static int ct_all(struct ct *ct, struct evs *s, char *err, size_t errlen)
{
	struct ct_priv *p = ct->p;
	struct evs_event e;
	int ret;

	ret = role_bind(&p->r, evs_types(s), err, errlen);
	if (ret)
		return ret;
	while ((ret = evs_next(s, &e, err, errlen)) == 1) {
		int r = role_of(&p->r, &e);
		struct role_res d = { 0 };

		ct->events++;
		if (r == ROLE_BT) {
			/* none, or defined already: the first one stands */
			if (stk_bt_define(&p->bts, (uint32_t)role_val(&p->r, &e, ROLE_BT_ID), &e))
				return ct_nomem(err, errlen);
			continue;
		}
		if (ct->o.kind ?
			    r != ROLE_RES_ACQUIRE && r != ROLE_RES_TRANSFER :
			    r != ROLE_MEM_ALLOC && r != ROLE_MEM_REALLOC && r != ROLE_MEM_UNMAP)
			continue;
		role_decode(&p->r, &e, r, &d); /* key: the block made, or 0 */
		if (ct->o.kind) {
			const char *name = role_kind_name(evs_types(s), d.kind);

			if (!name || strcmp(name, ct->o.kind))
				continue; /* another kind */
		} else if (!d.key) {
			continue; /* a failed allocation, or realloc(p, 0) */
		} else if (r == ROLE_MEM_UNMAP ||
			   (r == ROLE_MEM_ALLOC &&
			    (live_is_mapping(d.kind) || live_is_reserve(d.kind)))) {
			ret = ct_all_range(ct, r, &d);
			if (ret < 0)
				return ct_nomem(err, errlen);
			if (!ret)
				continue; /* none, or what an mprotect made: counted */
		}
		if (ct_all_add(ct, d.bt, 1, d.size))
			return ct_nomem(err, errlen);
	}
	return ret;
}

int ct_run(struct ct *ct, struct evs *s, char *err, size_t errlen)
{
	int ret = ct->o.all ? ct_all(ct, s, err, errlen) : ct_leaks(ct, s, err, errlen);

	ct->nstacks = ct->p->ng;
	return ret;
}

static const uint64_t *ct_bt(const struct ct *ct, uint32_t id, uint32_t *n)
{
	if (!id)
		return NULL;
	if (ct->p->lk)
		return lk_bt(ct->p->lk, id, n);
	return stk_bt(&ct->p->bts, id, n);
}

int ct_through(struct ct *ct, struct thr *t, struct rip_sym *sym, char *err, size_t errlen)
{
	struct ct_priv *p = ct->p;
	size_t k = 0;

	ct->total_bytes = ct->total_count = 0;
	for (size_t i = 0; i < p->ng; i++) {
		uint32_t n = 0;
		const uint64_t *f = ct_bt(ct, p->g[i].bt, &n);
		int in = thr_want(t, sym, p->g[i].bt, f, n);

		if (in < 0) {
			p->ng = k; /* what is left is not to be drawn: the caller gives up */
			return ct_nomem(err, errlen);
		}
		if (!in)
			continue;
		ct->total_bytes += p->g[i].bytes;
		ct->total_count += p->g[i].count;
		p->g[k++] = p->g[i];
	}
	p->ng = k;
	ct->nstacks = k;
	stk_map_free(&p->gmap); /* its indexes are stale; the pass is over */
	return 0;
}

const struct stk_bts *ct_bts(const struct ct *ct)
{
	return ct->p->lk ? &ct->p->lk->live.bts : &ct->p->bts;
}

/* ---- the functions on the stacks ----------------------------------------------------- */

/* The function of name, made when new; CT_NONE when out of memory. */
static uint32_t ct_fn(struct ct_priv *p, const char *name)
{
	uint64_t h = ct_str_hash(name);
	struct stk_ent *e;
	uint32_t id;
	bool fresh;

	/* names with the same hash are chained on h + 1, h + 2... */
	for (;; h++) {
		e = stk_map_find(&p->names, h);
		if (!e)
			break;
		if (!strcmp(p->fns[e->a].name, name))
			return (uint32_t)e->a;
	}
	if (ct_grow(&p->fns, &p->fcap, p->nfns + 1, sizeof(*p->fns)))
		return CT_NONE;
	id = (uint32_t)p->nfns;
	p->fns[id] = (struct ct_fn){ .name = strdup(name) };
	if (!p->fns[id].name)
		return CT_NONE;
	e = stk_map_get(&p->names, h, &fresh);
	if (!e) {
		free(p->fns[id].name);
		return CT_NONE;
	}
	e->a = id;
	p->nfns++;
	return id;
}

static int ct_push(struct ct_priv *p, uint32_t id)
{
	if (id == CT_NONE || ct_grow(&p->path, &p->pcap, p->npath + 1, sizeof(*p->path)))
		return -ENOMEM;
	p->path[p->npath++] = id;
	return 0;
}

/* The last component of a path (NULL: NULL). */
static const char *ct_base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

/* The function name of one resolved frame. */
static const char *ct_frame_name(const struct rip_frame *f, uint64_t addr, char *buf, size_t len)
{
	if (f->func)
		return f->func;
	if (f->module)
		snprintf(buf, len, "%s+0x%" PRIx64, ct_base(f->module), f->offset);
	else
		snprintf(buf, len, "0x%" PRIx64, addr);
	return buf;
}

/* Each group's path of functions, outermost first (a return address resolves to addr - 1). */
static int ct_paths(struct ct *ct, struct rip_sym *sym)
{
	struct ct_priv *p = ct->p;
	struct rip_frame fr[CT_MAX_FRAMES];
	char buf[RIP_MODULE_PATH_MAX + 32];

	for (size_t gi = 0; gi < p->ng; gi++) {
		struct ct_group *g = &p->g[gi];
		const uint64_t *pcs;
		uint32_t n = 0;

		g->path = p->npath;
		pcs = ct_bt(ct, g->bt, &n);
		for (uint32_t i = n; pcs && i-- > 0;) {
			int k = sym && pcs[i] ? rip_sym_lookup(sym, pcs[i] - 1, fr, CT_MAX_FRAMES) :
						-1;
			const char *b;

			if (k <= 0) {
				memset(fr, 0, sizeof(*fr));
				k = 1;
			}
			/* frames of the preload library itself (an unwinder started in a hook) */
			b = ct_base(fr[k - 1].module);
			if (i + 1 < n && b && !strncmp(b, "librip-preload", 14))
				continue;
			for (int j = k; j-- > 0;)
				if (ct_push(p, ct_fn(p, ct_frame_name(&fr[j], pcs[i], buf,
								      sizeof(buf)))))
					return -ENOMEM;
		}
		if (p->npath == g->path &&
		    ct_push(p, ct_fn(p, !g->bt ? "(no backtrace)" :
					pcs    ? "(empty backtrace)" :
						 "(backtrace not in the trace)")))
			return -ENOMEM;
		g->npath = p->npath - g->path;
	}
	return 0;
}

/* ---- the graph ----------------------------------------------------------------------- */

static int ct_fn_cmp(const void *a, const void *b, void *arg)
{
	const struct ct_fn *f = arg;
	const struct ct_fn *x = &f[*(const uint32_t *)a], *y = &f[*(const uint32_t *)b];

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int ct_edge_cmp(const void *a, const void *b)
{
	const struct ct_edge *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

/* Inclusive and self figures of every function. */
static void ct_figures(struct ct_priv *p)
{
	for (size_t gi = 0; gi < p->ng; gi++) {
		const struct ct_group *g = &p->g[gi];
		struct ct_fn *leaf = &p->fns[p->path[g->path + g->npath - 1]];

		for (size_t i = 0; i < g->npath; i++) {
			struct ct_fn *x = &p->fns[p->path[g->path + i]];

			if (x->stamp == gi + 1)
				continue;
			x->stamp = (uint32_t)gi + 1;
			x->bytes += g->bytes;
			x->count += g->count;
		}
		leaf->self_bytes += g->bytes;
		leaf->self_count += g->count;
	}
}

/*
 * The kept functions become the nodes, heaviest first, the others map
 * onto "(others)" (the last node, when anything was collapsed); returns
 * that node, or CT_NONE when everything was kept.
 */
static uint32_t ct_keep(struct ct *ct, const uint32_t *order)
{
	struct ct_priv *p = ct->p;
	uint32_t others = CT_NONE;
	size_t nk = 0;

	for (size_t r = 0; r < p->nfns; r++) {
		struct ct_fn *x = &p->fns[order[r]];
		bool keep;

		if (ct->o.min_set || ct->o.top_set)
			keep = (!ct->o.min_set || x->bytes >= ct->o.min_bytes) &&
			       (!ct->o.top_set || nk < ct->o.top);
		else
			keep = x->bytes * 100 >= ct->total_bytes;
		x->kept = keep;
		if (keep) {
			x->map = (uint32_t)nk;
			ct->nodes[nk++] = (struct ct_node){ .name = x->name,
							    .bytes = x->bytes,
							    .count = x->count,
							    .self_bytes = x->self_bytes,
							    .self_count = x->self_count };
		}
	}
	if (nk < p->nfns) {
		others = (uint32_t)nk;
		ct->nodes[nk++] = (struct ct_node){ .name = "(others)" };
	}
	for (size_t i = 0; i < p->nfns; i++)
		if (!p->fns[i].kept)
			p->fns[i].map = others;
	ct->nnodes = nk;
	return others;
}

/* Count group gi on the edge prev -> m (once per group). */
static int ct_edge_add(struct ct *ct, uint32_t prev, uint32_t m, const struct ct_group *g,
		       uint32_t stamp)
{
	struct ct_priv *p = ct->p;
	struct stk_ent *ent;
	struct ct_edge *e;
	bool fresh;

	ent = stk_map_get(&p->emap, (uint64_t)prev << 32 | m, &fresh);
	if (!ent)
		return -ENOMEM;
	if (fresh) {
		if (ct_grow(&ct->edges, &p->ecap, ct->nedges + 1, sizeof(*ct->edges)) ||
		    ct_grow(&p->estamp, &p->scap, ct->nedges + 1, sizeof(*p->estamp))) {
			stk_map_del(&p->emap, ent);
			return -ENOMEM;
		}
		ent->a = ct->nedges++;
		ct->edges[ent->a] = (struct ct_edge){ .from = prev, .to = m };
		p->estamp[ent->a] = 0;
	}
	e = &ct->edges[ent->a];
	if (p->estamp[ent->a] != stamp) {
		p->estamp[ent->a] = stamp;
		e->bytes += g->bytes;
		e->count += g->count;
	}
	return 0;
}

/*
 * Inclusive figures of every function, the choice of the kept ones, then
 * the pruned graph: nodes renumbered heaviest first (the last one
 * "(others)" when anything was collapsed), edges from the mapped paths.
 */
static int ct_build(struct ct *ct)
{
	struct ct_priv *p = ct->p;
	uint32_t *order, others, stamp = 0;

	ct_figures(p);
	order = malloc((p->nfns + 1) * sizeof(*order));
	ct->nodes = calloc(p->nfns + 1, sizeof(*ct->nodes));
	if (!order || !ct->nodes) {
		free(order);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < p->nfns; i++)
		order[i] = i;
	qsort_r(order, p->nfns, sizeof(*order), ct_fn_cmp, p->fns);
	others = ct_keep(ct, order);
	free(order);
	/* the mapped paths: runs of collapsed functions become one "(others)" */
	for (size_t gi = 0; gi < p->ng; gi++) {
		const struct ct_group *g = &p->g[gi];
		uint32_t prev = CT_NONE;
		bool in_others = false;

		stamp++;
		for (size_t i = 0; i < g->npath; i++) {
			uint32_t m = p->fns[p->path[g->path + i]].map;

			/* the leaf: also when it ends a run of collapsed functions */
			if (i + 1 == g->npath && m == others) {
				ct->nodes[others].self_bytes += g->bytes;
				ct->nodes[others].self_count += g->count;
			}
			if (m == others && prev == others)
				continue;
			if (m == others && !in_others) {
				in_others = true;
				ct->nodes[others].bytes += g->bytes;
				ct->nodes[others].count += g->count;
			}
			if (prev != CT_NONE && ct_edge_add(ct, prev, m, g, stamp))
				return -ENOMEM;
			prev = m;
		}
	}
	if (ct->nedges)
		qsort(ct->edges, ct->nedges, sizeof(*ct->edges), ct_edge_cmp);
	return 0;
}

int ct_graph(struct ct *ct, struct rip_sym *sym, char *err, size_t errlen)
{
	if (ct_paths(ct, sym) || ct_build(ct))
		return ct_nomem(err, errlen);
	return 0;
}
