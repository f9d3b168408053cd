/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/fnstacks.c - shadow call stacks grouped by path (fnstacks.h).
 *
 * A hash of each stack (its depth, kind, wait kind and every frame) keys a
 * table of groups; members whose hash matches are compared frame by frame
 * before they join, so two paths never merge by a collision.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/fnstacks.h"
#include "analysis/hmap.h"

/* A slot of the table: the hash of a path, the group of the first such path. */
struct fsg_slot {
	uint64_t key;
	uint8_t used;
	size_t group;
};
HMAP_SLOT_CHECK(struct fsg_slot);

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

static bool fsg_same(const struct fsg_group *g, const struct rr_slots *s, const struct rr_slot *sl,
		     const struct rfn_stack *st)
{
	const struct rr_slot *first = &s->v[g->members[0]];

	return first->kind == sl->kind && first->wait.kind == sl->wait.kind &&
	       g->st->depth == st->depth && g->st->n == st->n &&
	       !memcmp(g->st->fn, st->fn, st->n * sizeof(st->fn[0]));
}

static int fsg_add(struct fsg_group *g, size_t i)
{
	if (g->n == g->cap) {
		size_t nc = g->cap ? g->cap * 2 : 4;
		size_t *nm = realloc(g->members, nc * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		g->members = nm;
		g->cap = nc;
	}
	g->members[g->n++] = i;
	return 0;
}

static int fsg_new(struct fsg_groups *out, const struct rr_slot *sl, const struct rfn_stack *st,
		   size_t i, size_t *gi)
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
	g->st = st;
	g->kind = sl->kind;
	g->state = sl->state;
	g->wait = sl->wait.kind;
	return fsg_add(g, i);
}

static int fsg_cmp(const void *pa, const void *pb)
{
	const struct fsg_group *a = pa, *b = pb;

	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	if (a->st->depth != b->st->depth)
		return a->st->depth > b->st->depth ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->members[0] < b->members[0] ? -1 : a->members[0] > b->members[0];
}

int fsg_group(const struct rr_slots *s, const struct rfn_stack *st, bool all,
	      struct fsg_groups *out)
{
	HMAP_OF(struct fsg_slot) m = { 0 };
	int ret = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < s->n; i++) {
		const struct rr_slot *sl = &s->v[i];
		const struct rfn_stack *k = &st[i];
		struct fsg_slot *e;
		uint64_t h;
		bool fresh;

		if (!all && sl->state == RIP_SLOT_EXITED)
			continue;
		if (!k->valid || !k->depth) {
			out->nostack++;
			continue;
		}
		out->torn += k->torn;
		/* Collisions: probe on with the next key until the path matches or is new. */
		for (h = fsg_hash(sl, k);; h = h + 1 ? h + 1 : 1) {
			e = hmap_get(&m.h, sizeof(*e), h, &fresh);
			if (!e) {
				ret = -ENOMEM;
				goto out;
			}
			if (fresh) {
				size_t gi;

				ret = fsg_new(out, sl, k, i, &gi);
				if (ret)
					goto out;
				e->group = gi;
				break;
			}
			if (fsg_same(&out->v[e->group], s, sl, k)) {
				struct fsg_group *g = &out->v[e->group];

				ret = fsg_add(g, i);
				if (ret)
					goto out;
				if (g->state != sl->state)
					g->state = 0;
				break;
			}
		}
		out->v[e->group].torn += k->torn;
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), fsg_cmp);
out:
	hmap_free(&m.h);
	if (ret)
		fsg_groups_free(out);
	return ret;
}

void fsg_groups_free(struct fsg_groups *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->v[i].members);
	free(g->v);
	memset(g, 0, sizeof(*g));
}
