/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/funcs.c - function records paired into calls and summed up
 * (funcs.h).
 *
 * Each context (a thread's own code, or a coroutine: the coroutine an
 * event ran in is the source's e->coro) has a stack of open calls.  An
 * entry pushes; an exit pops the call of its function, ending first the
 * calls above it whose exits never came; an exit with no such call below
 * is counted and dropped, known so by the count of calls open per context
 * and function, without a search (a trace of calls that never end, whose
 * stack grows without bound, stays linear; the search for a call that is
 * open pops every frame it passes).  An exit of RIP_FN_ID_DEEP (levels past
 * the RIP_FN_DEPTH frames the hooks keep, dropped by a longjmp) ends every
 * call open past the RIP_FN_DEPTH outermost, each counted as an exit.  A
 * trace that misses its context's outermost entries (a ring that wrapped)
 * has fewer open: some calls past the levels kept may then stay open, and
 * an exit of a kept frame that follows ends them as before.  A call is shown or not when it ends (its
 * duration decides for min_ns); what a call does not show of its callees
 * stays in its self time, and a call that is not shown hands the time of
 * the shown calls under it to its caller, so no time is counted twice.
 * Recursion: a call's time goes into its function's total only when no
 * call of the same function is open below it in its context (a count per
 * context and function).  A rip:fn_open record pushes a call as an entry
 * does, marked as begun before the trace (a forked child's calls open at
 * the fork, which its trace starts after): it pairs with its exit as any
 * call, and is counted apart (before).  A rip:coro_end record (a coroutine
 * destroyed) ends the calls open in its coroutine, counted apart too
 * (coro_ended), and a later coroutine of the same number (its slot taken
 * again) is a context of its own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/funcs.h"
#include "analysis/hmap.h"
#include "rip/abi.h"

#define FA_MAX_ID (1u << 24) /* ids past this (a corrupt trace) count as id 0 */

struct fa_frame {
	uint32_t id;
	uint32_t node; /* its call path's node (its caller's when its function is turned down) */
	uint32_t depth;
	bool outer; /* no call of the same function below it in its context */
	bool keep;  /* its function is shown, and it is not too deep */
	bool before; /* it began before the trace (rip:fn_open) */
	int64_t start;
	int64_t child_ns; /* time of the shown calls under it */
};

/* A u64 key and an index. */
struct fa_idx {
	uint64_t key;
	uint8_t used;
	uint32_t v;
};
HMAP_SLOT_CHECK(struct fa_idx);

/* A context's stack of open calls, beside its public part (fa->pub, same index). */
struct fa_ctx_int {
	struct fa_frame *st;
	size_t n, cap;
	HMAP_OF(struct fa_idx) fnmap; /* id -> index in pub.fn (per_ctx) */
	size_t fncap;
};

struct fa {
	struct fa_opts o;
	uint32_t t_entry, t_exit, t_def, t_open, t_end; /* type ids, UINT32_MAX: absent */
	uint64_t *addr;			 /* by id */
	uint8_t *keepc;			 /* by id: 0 not asked yet, 1 shown, 2 not */
	struct fa_fn *fn;		 /* by id */
	size_t nid;			 /* entries of the three arrays above */
	struct fa_ctx *pub;		 /* the contexts as fa_ctxs hands them out */
	struct fa_ctx_int *ctx;
	size_t nctx, capctx;
	HMAP_OF(struct fa_idx) ctxmap;	/* tid or 1 << 32 | coro -> index in ctx */
	HMAP_OF(struct fa_idx) active;	/* ctx << 32 | id -> calls open */
	HMAP_OF(struct fa_idx) nodemap; /* parent << 32 | id -> index in nodes */
	struct fa_node *nodes;
	size_t nnodes, capnodes;
	struct fa_fn *out; /* fa_funcs' list */
	size_t nout;
	struct fa_totals tot;
};

static uint32_t fa_type(const struct ev_types *t, const char *name, uint32_t nfields)
{
	for (uint32_t i = 0; i < EV_MAX_TYPES; i++)
		if (t->t[i].valid && t->t[i].nfields == nfields && !t->t[i].string &&
		    !t->t[i].array && !strcmp(t->t[i].name, name))
			return i;
	return UINT32_MAX;
}

int fa_new(const struct ev_types *types, const struct fa_opts *opts, struct fa **out)
{
	struct fa *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return -ENOMEM;
	if (opts)
		p->o = *opts;
	p->t_entry = fa_type(types, "rip:fn_entry", 1);
	p->t_exit = fa_type(types, "rip:fn_exit", 1);
	p->t_def = fa_type(types, "rip:fn", 2);
	p->t_open = fa_type(types, "rip:fn_open", 1);
	p->t_end = fa_type(types, "rip:coro_end", 1);
	/* Node 0: the root of every call path. */
	p->nodes = calloc(64, sizeof(*p->nodes));
	if (!p->nodes) {
		free(p);
		return -ENOMEM;
	}
	p->capnodes = 64;
	p->nnodes = 1;
	*out = p;
	return 0;
}

bool fa_typed(const struct fa *p)
{
	return p->t_entry != UINT32_MAX && p->t_exit != UINT32_MAX;
}

/* Room for id in the per-id arrays.  0 or -ENOMEM. */
static int fa_grow_ids(struct fa *p, uint32_t id)
{
	size_t n = p->nid ? p->nid : 256;
	uint64_t *a;
	uint8_t *k;
	struct fa_fn *f;

	if (id < p->nid)
		return 0;
	while (n <= id)
		n *= 2;
	a = realloc(p->addr, n * sizeof(*a));
	if (!a)
		return -ENOMEM;
	p->addr = a;
	k = realloc(p->keepc, n);
	if (!k)
		return -ENOMEM;
	p->keepc = k;
	f = realloc(p->fn, n * sizeof(*f));
	if (!f)
		return -ENOMEM;
	p->fn = f;
	memset(a + p->nid, 0, (n - p->nid) * sizeof(*a));
	memset(k + p->nid, 0, n - p->nid);
	memset(f + p->nid, 0, (n - p->nid) * sizeof(*f));
	for (size_t i = p->nid; i < n; i++)
		f[i].id = (uint32_t)i;
	p->nid = n;
	return 0;
}

static int fa_define(struct fa *p, uint64_t id, uint64_t addr)
{
	int ret;

	if (!id || id >= FA_MAX_ID)
		return 0;
	ret = fa_grow_ids(p, (uint32_t)id);
	if (ret)
		return ret;
	p->addr[id] = addr;
	p->fn[id].addr = addr;
	return 0;
}

int fa_add_table(struct fa *p, const uint64_t *addrs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		int ret = addrs[i] ? fa_define(p, (uint64_t)i + 1, addrs[i]) : 0;

		if (ret)
			return ret;
	}
	return 0;
}

uint64_t fa_addr(const struct fa *p, uint32_t id)
{
	return id < p->nid ? p->addr[id] : 0;
}

/* Is function id shown (the caller's keep, asked once per id)? */
static bool fa_keep(struct fa *p, uint32_t id)
{
	if (!p->o.keep)
		return true;
	if (!p->keepc[id])
		p->keepc[id] = p->o.keep(p->o.arg, id, p->addr[id]) ? 1 : 2;
	return p->keepc[id] == 1;
}

/* The index of the context of e, or -ENOMEM. */
static long fa_ctx_of(struct fa *p, const struct evs_event *e)
{
	uint64_t key = e->coro ? 1ull << 32 | e->coro : (uint32_t)e->tid;
	struct fa_idx *x;
	bool fresh;
	char *name;

	x = hmap_get(&p->ctxmap.h, sizeof(*x), key, &fresh);
	if (!x)
		return -ENOMEM;
	if (!fresh) {
		p->pub[x->v].tid = e->tid; /* a coroutine: where it ran last */
		return x->v;
	}
	if (p->nctx == p->capctx) {
		size_t nc = p->capctx ? p->capctx * 2 : 64;
		struct fa_ctx *np = realloc(p->pub, nc * sizeof(*np));
		struct fa_ctx_int *ni;

		if (np)
			p->pub = np;
		ni = np ? realloc(p->ctx, nc * sizeof(*ni)) : NULL;
		if (!ni) {
			hmap_del(&p->ctxmap.h, sizeof(*x), x);
			return -ENOMEM;
		}
		p->ctx = ni;
		p->capctx = nc;
	}
	name = strdup(e->coro ? (e->coro_name ? e->coro_name : "") : (e->thread ? e->thread : ""));
	if (!name) {
		hmap_del(&p->ctxmap.h, sizeof(*x), x);
		return -ENOMEM;
	}
	x->v = (uint32_t)p->nctx;
	memset(&p->ctx[p->nctx], 0, sizeof(p->ctx[0]));
	memset(&p->pub[p->nctx], 0, sizeof(p->pub[0]));
	p->pub[p->nctx].tid = e->tid;
	p->pub[p->nctx].coro = e->coro;
	p->pub[p->nctx].name = name;
	return (long)p->nctx++;
}

/* The node of path parent > id.  0 or -ENOMEM. */
static int fa_node(struct fa *p, uint32_t parent, uint32_t id, uint32_t *out)
{
	struct fa_idx *x;
	bool fresh;

	x = hmap_get(&p->nodemap.h, sizeof(*x), (uint64_t)parent << 32 | id, &fresh);
	if (!x)
		return -ENOMEM;
	if (fresh) {
		if (p->nnodes == p->capnodes || p->nnodes >= UINT32_MAX) {
			size_t nc = p->capnodes * 2;
			struct fa_node *nv =
				p->nnodes < UINT32_MAX ? realloc(p->nodes, nc * sizeof(*nv)) : NULL;

			if (!nv) {
				hmap_del(&p->nodemap.h, sizeof(*x), x);
				return -ENOMEM;
			}
			p->nodes = nv;
			p->capnodes = nc;
		}
		x->v = (uint32_t)p->nnodes;
		memset(&p->nodes[p->nnodes], 0, sizeof(p->nodes[0]));
		p->nodes[p->nnodes].parent = parent;
		p->nodes[p->nnodes].id = id;
		p->nnodes++;
	}
	*out = x->v;
	return 0;
}

/* Calls of id open in context c: add delta, the count before.  -ENOMEM as UINT32_MAX. */
static uint32_t fa_active(struct fa *p, size_t c, uint32_t id, int delta)
{
	struct fa_idx *x;
	uint32_t before;
	bool fresh;

	x = hmap_get(&p->active.h, sizeof(*x), (uint64_t)c << 32 | id, &fresh);
	if (!x)
		return UINT32_MAX;
	before = x->v;
	x->v += (uint32_t)delta;
	if (!x->v)
		hmap_del(&p->active.h, sizeof(*x), x);
	return before;
}

/* The per-context sums of id in context ci (per_ctx). */
static struct fa_fn *fa_ctx_fn(struct fa *p, size_t ci, uint32_t id, uint64_t addr)
{
	struct fa_ctx_int *c = &p->ctx[ci];
	struct fa_ctx *pc = &p->pub[ci];
	struct fa_idx *x;
	bool fresh;

	x = hmap_get(&c->fnmap.h, sizeof(*x), id, &fresh);
	if (!x)
		return NULL;
	if (fresh) {
		if (pc->nfn == c->fncap) {
			size_t nc = c->fncap ? c->fncap * 2 : 16;
			struct fa_fn *nv = realloc(pc->fn, nc * sizeof(*nv));

			if (!nv) {
				hmap_del(&c->fnmap.h, sizeof(*x), x);
				return NULL;
			}
			pc->fn = nv;
			c->fncap = nc;
		}
		x->v = (uint32_t)pc->nfn;
		memset(&pc->fn[pc->nfn], 0, sizeof(pc->fn[0]));
		pc->fn[pc->nfn].id = id;
		pc->nfn++;
	}
	pc->fn[x->v].addr = addr;
	return &pc->fn[x->v];
}

static void fa_sum(struct fa_fn *f, const struct fa_frame *fr, int64_t dur, int64_t self,
		   bool running)
{
	f->calls++;
	if (fr->outer)
		f->total_ns += dur;
	f->self_ns += self;
	if (dur > f->max_ns)
		f->max_ns = dur;
	f->running += running;
	f->before += fr->before;
}

/* End the top call of context ci at time t.  0 or -ENOMEM. */
static int fa_pop(struct fa *p, size_t ci, int64_t t, bool running)
{
	struct fa_ctx_int *c = &p->ctx[ci];
	struct fa_frame fr = c->st[--c->n];
	struct fa_frame *up = c->n ? &c->st[c->n - 1] : NULL;
	int64_t dur = t > fr.start ? t - fr.start : 0, self;
	bool shown = fr.keep && (!p->o.min_ns || dur >= p->o.min_ns);

	if (fa_active(p, ci, fr.id, -1) == UINT32_MAX)
		return -ENOMEM;
	if (!shown) {
		/* Its shown callees' time goes up: its caller's self time keeps the rest. */
		if (up)
			up->child_ns += fr.child_ns;
		return 0;
	}
	self = dur > fr.child_ns ? dur - fr.child_ns : 0;
	if (up)
		up->child_ns += dur;
	fa_sum(&p->fn[fr.id], &fr, dur, self, running);
	p->nodes[fr.node].self_ns += self;
	p->nodes[fr.node].calls++;
	p->pub[ci].calls++;
	if (p->o.per_ctx) {
		struct fa_fn *f = fa_ctx_fn(p, ci, fr.id, p->addr[fr.id]);

		if (!f)
			return -ENOMEM;
		fa_sum(f, &fr, dur, self, running);
	}
	if (p->o.span) {
		struct fa_span s = { .ctx = &p->pub[ci],
				     .id = fr.id,
				     .addr = p->addr[fr.id],
				     .start_ns = fr.start,
				     .end_ns = fr.start + dur,
				     .depth = fr.depth,
				     .running = running,
				     .before = fr.before };

		p->o.span(p->o.span_arg, &s);
	}
	return 0;
}

static int fa_push(struct fa *p, size_t ci, uint32_t id, int64_t t, bool early)
{
	struct fa_ctx_int *c = &p->ctx[ci];
	struct fa_frame *fr, *up;
	uint32_t before;
	int ret;

	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 32;
		struct fa_frame *nv = realloc(c->st, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		c->st = nv;
		c->cap = nc;
	}
	up = c->n ? &c->st[c->n - 1] : NULL;
	before = fa_active(p, ci, id, 1);
	if (before == UINT32_MAX)
		return -ENOMEM;
	fr = &c->st[c->n];
	memset(fr, 0, sizeof(*fr));
	fr->id = id;
	fr->depth = (uint32_t)(c->n + 1);
	fr->outer = before == 0;
	fr->start = t;
	fr->before = early;
	fr->keep = (!p->o.max_depth || fr->depth <= p->o.max_depth) && fa_keep(p, id);
	fr->node = up ? up->node : 0;
	if (fr->keep) {
		ret = fa_node(p, fr->node, id, &fr->node);
		if (ret)
			return ret;
		p->nodes[fr->node].addr = p->addr[id];
	}
	c->n++;
	return 0;
}

/*
 * Coroutine coro was destroyed at t (rip:coro_end): the calls open in it
 * end there, and its number names a new context from now on (a coroutine
 * given its slot).  1, or -ENOMEM.
 */
static int fa_coro_end(struct fa *p, uint32_t coro, int64_t t)
{
	struct fa_idx *x = hmap_find(&p->ctxmap.h, sizeof(*x), 1ull << 32 | coro);
	size_t ci;
	int ret;

	if (!coro || !x)
		return 1;
	ci = x->v;
	hmap_del(&p->ctxmap.h, sizeof(*x), x);
	while (p->ctx[ci].n) {
		p->tot.coro_ended++;
		ret = fa_pop(p, ci, t, false);
		if (ret)
			return ret;
	}
	return 1;
}

int fa_event(struct fa *p, const struct evs_event *e)
{
	uint32_t tid = e->type ? e->type->id : UINT32_MAX;
	struct fa_ctx_int *c;
	uint64_t id;
	long ci;
	size_t k;
	int ret;

	if (tid == p->t_def && tid != UINT32_MAX)
		return fa_define(p, evs_val(e, 0), evs_val(e, 1)) ? -ENOMEM : 1;
	if (tid == p->t_end && tid != UINT32_MAX)
		return fa_coro_end(p, (uint32_t)evs_val(e, 0), e->ns);
	if (tid == UINT32_MAX || (tid != p->t_entry && tid != p->t_exit && tid != p->t_open))
		return 0;
	id = evs_val(e, 0);
	if (id == RIP_FN_ID_DEEP && tid == p->t_exit) {
		/* The calls past the frames the hooks keep, dropped by a jump: each ends here. */
		ci = fa_ctx_of(p, e);
		if (ci < 0)
			return (int)ci;
		while (p->ctx[ci].n > RIP_FN_DEPTH) {
			p->tot.exits++;
			ret = fa_pop(p, (size_t)ci, e->ns, false);
			if (ret)
				return ret;
		}
		return 1;
	}
	if (id >= FA_MAX_ID)
		id = 0;
	if (!id)
		p->tot.id0++;
	if (fa_grow_ids(p, (uint32_t)id))
		return -ENOMEM;
	if (id && !p->addr[id])
		p->tot.ids_unknown++;
	ci = fa_ctx_of(p, e);
	if (ci < 0)
		return (int)ci;
	c = &p->ctx[ci];
	if (tid == p->t_entry || tid == p->t_open) {
		if (tid == p->t_entry)
			p->tot.entries++;
		else
			p->tot.before++;
		ret = fa_push(p, (size_t)ci, (uint32_t)id, e->ns, tid == p->t_open);
		return ret ? ret : 1;
	}
	p->tot.exits++;
	/*
	 * The call of this function nearest the top; the ones above it never
	 * saw their exit.  None open in the context (the count of fa_active):
	 * no search, so that exits without entries cost nothing however deep
	 * the stack of calls without exits has grown; else every frame the
	 * search passes is popped: each frame is searched past at most once.
	 */
	if (!hmap_find(&p->active.h, sizeof(struct fa_idx), (uint64_t)ci << 32 | (uint32_t)id)) {
		p->tot.no_entry++;
		return 1;
	}
	for (k = c->n; k > 0 && c->st[k - 1].id != id; k--)
		;
	if (!k) {
		p->tot.no_entry++; /* not reached: the count says it is open */
		return 1;
	}
	while (c->n > k) {
		p->tot.no_exit++;
		ret = fa_pop(p, (size_t)ci, e->ns, false);
		if (ret)
			return ret;
	}
	ret = fa_pop(p, (size_t)ci, e->ns, false);
	return ret ? ret : 1;
}

int fa_end(struct fa *p, int64_t end_ns)
{
	for (size_t i = 0; i < p->nctx; i++) {
		while (p->ctx[i].n) {
			int ret;

			p->tot.running++;
			ret = fa_pop(p, i, end_ns, true);
			if (ret)
				return ret;
		}
	}
	return 0;
}

const struct fa_fn *fa_funcs(const struct fa *p, size_t *n)
{
	struct fa *w = (struct fa *)p;

	*n = 0;
	free(w->out);
	w->out = NULL;
	w->nout = 0;
	for (size_t i = 0; i < p->nid; i++)
		w->nout += p->fn[i].calls > 0;
	if (!w->nout)
		return NULL;
	w->out = malloc(w->nout * sizeof(*w->out));
	if (!w->out) {
		w->nout = 0;
		return NULL;
	}
	w->nout = 0;
	for (size_t i = 0; i < p->nid; i++)
		if (p->fn[i].calls)
			w->out[w->nout++] = p->fn[i];
	*n = w->nout;
	return w->out;
}

const struct fa_node *fa_nodes(const struct fa *p, size_t *n)
{
	*n = p->nnodes;
	return p->nodes;
}

const struct fa_ctx *fa_ctxs(const struct fa *p, size_t *n)
{
	*n = p->nctx;
	return p->pub;
}

void fa_totals(const struct fa *p, struct fa_totals *t)
{
	*t = p->tot;
}

void fa_free(struct fa *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nctx; i++) {
		free((char *)p->pub[i].name);
		free(p->pub[i].fn);
		free(p->ctx[i].st);
		hmap_free(&p->ctx[i].fnmap.h);
	}
	free(p->pub);
	free(p->ctx);
	hmap_free(&p->ctxmap.h);
	hmap_free(&p->active.h);
	hmap_free(&p->nodemap.h);
	free(p->nodes);
	free(p->addr);
	free(p->keepc);
	free(p->fn);
	free(p->out);
	free(p);
}
