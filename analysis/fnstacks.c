/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/fnstacks.c - shadow call stacks grouped by path (fnstacks.h).
 *
 * A hash of each stack (its depth, kind, wait kind and every frame) keys a
 * table of groups; members whose hash matches are compared frame by frame
 * before they join, so two paths never merge by a collision.  A group
 * keeps its path once, and of each member only what is shown of it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/fnstacks.h"
#include "analysis/hmap.h"
#include "analysis/waits.h"

/* A slot of the table: the hash of a path, the group of the first such path. */
struct fsg_slot {
	uint64_t key;
	uint8_t used;
	size_t group;
};
HMAP_SLOT_CHECK(struct fsg_slot);

typedef HMAP_OF(struct fsg_slot) fsg_map;

static uint64_t fsg_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static uint64_t fsg_hash(const struct rr_slot *s, const struct rfn_stack *st)
{
	uint64_t h = fsg_mix(s->kind, st->depth);

	h = fsg_mix(h, s->wait.kind);
	for (uint32_t k = 0; k < st->n; k++)
		h = fsg_mix(h, st->fn[k]);
	return h ? h : 1;
}

static bool fsg_same(const struct fsg_group *g, const struct rr_slot *sl,
		     const struct rfn_stack *st)
{
	return g->kind == sl->kind && g->wait == sl->wait.kind && g->st.depth == st->depth &&
	       g->st.n == st->n && !memcmp(g->st.fn, st->fn, st->n * sizeof(st->fn[0]));
}

static int fsg_join(struct fsg_group *g, const struct rr_slot *sl)
{
	struct fsg_member *m;

	if (g->n == g->cap) {
		size_t nc = g->cap ? g->cap * 2 : 4;
		struct fsg_member *nm = realloc(g->members, nc * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		g->members = nm;
		g->cap = nc;
	}
	m = &g->members[g->n++];
	m->index = sl->index;
	m->tid = sl->tid;
	m->kind = sl->kind;
	m->state = sl->state;
	m->waiting = wa_waiting(sl);
	m->wait_kind = sl->wait.kind;
	m->wait_arg = sl->wait.arg;
	memcpy(m->name, sl->name, sizeof(m->name));
	m->name[sizeof(m->name) - 1] = 0;
	return 0;
}

static int fsg_new(struct fsg_groups *out, const struct rr_slot *sl, const struct rfn_stack *st,
		   size_t *gi)
{
	struct fsg_group *g;

	if (out->n == out->cap) {
		size_t nc = out->cap ? out->cap * 2 : 16;
		struct fsg_group *nv = realloc(out->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		out->v = nv;
		out->cap = nc;
	}
	*gi = out->n;
	g = &out->v[out->n++];
	memset(g, 0, sizeof(*g));
	g->st = *st;
	g->kind = sl->kind;
	g->state = sl->state;
	g->wait = sl->wait.kind;
	return fsg_join(g, sl);
}

static int fsg_cmp(const void *pa, const void *pb)
{
	const struct fsg_group *a = pa, *b = pb;

	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	if (a->st.depth != b->st.depth)
		return a->st.depth > b->st.depth ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->members[0].index < b->members[0].index ? -1 :
							    a->members[0].index > b->members[0].index;
}

int fsg_init(struct fsg_groups *g, bool all)
{
	memset(g, 0, sizeof(*g));
	g->all = all;
	g->keys = calloc(1, sizeof(fsg_map));
	return g->keys ? 0 : -ENOMEM;
}

int fsg_add(struct fsg_groups *g, const struct rr_slot *sl, const struct rfn_stack *st)
{
	fsg_map *m = g->keys;
	struct fsg_slot *e;
	uint64_t h;
	bool fresh;
	int ret;

	if (!g->all && sl->state == RIP_SLOT_EXITED)
		return 0;
	if (!st->valid || !st->depth) {
		g->nostack++;
		return 0;
	}
	g->torn += st->torn;
	/* Collisions: probe on with the next key until the path matches or is new. */
	for (h = fsg_hash(sl, st);; h = h + 1 ? h + 1 : 1) {
		e = hmap_get(&m->h, sizeof(*e), h, &fresh);
		if (!e)
			return -ENOMEM;
		if (fresh) {
			size_t gi;

			ret = fsg_new(g, sl, st, &gi);
			if (ret)
				return ret;
			e->group = gi;
			break;
		}
		if (fsg_same(&g->v[e->group], sl, st)) {
			struct fsg_group *gr = &g->v[e->group];

			ret = fsg_join(gr, sl);
			if (ret)
				return ret;
			if (gr->state != sl->state)
				gr->state = 0;
			break;
		}
	}
	g->v[e->group].torn += st->torn;
	return 0;
}

static void fsg_keys_free(struct fsg_groups *g)
{
	fsg_map *m = g->keys;

	if (m) {
		hmap_free(&m->h);
		free(m);
		g->keys = NULL;
	}
}

void fsg_finish(struct fsg_groups *g)
{
	fsg_keys_free(g);
	if (g->n)
		qsort(g->v, g->n, sizeof(*g->v), fsg_cmp);
}

int fsg_group(const struct rr_slots *s, const struct rfn_stack *st, bool all,
	      struct fsg_groups *out)
{
	int ret = fsg_init(out, all);

	for (size_t i = 0; !ret && i < s->n; i++)
		ret = fsg_add(out, &s->v[i], &st[i]);
	if (ret) {
		fsg_groups_free(out);
		return ret;
	}
	fsg_finish(out);
	return 0;
}

void fsg_groups_free(struct fsg_groups *g)
{
	fsg_keys_free(g);
	for (size_t i = 0; i < g->n; i++)
		free(g->v[i].members);
	free(g->v);
	memset(g, 0, sizeof(*g));
}
