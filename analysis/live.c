/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/live.c - the tables of what is live during a resource pass (see
 * live.h): entries of named tables made, the pieces of the mappings, and
 * the tables freed.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <internal/grow.h>

#include "analysis/live.h"

struct live_ent *live_make_named(struct live *l, enum live_res r, uint64_t key, const char *name,
				 bool *fresh)
{
	struct live_named *n;
	char *copy = NULL;

	if (name && *name) {
		copy = strdup(name);
		if (!copy)
			return NULL;
	}
	n = (struct live_named *)live_make_sz(l, r, key, fresh, sizeof(*n));
	if (!n) {
		free(copy);
		return NULL;
	}
	free(n->name); /* NULL in a new entry */
	n->name = copy;
	return &n->e;
}

int live_pk_grow(struct live *l, int64_t ns)
{
	if (!l->pk.cap)
		l->pk_t0 = (uint64_t)ns; /* the first block's time: live_pk_fits */
	return hmap_pk_reserve(&l->pk, l->pk.cap ? l->pk.cap * 2 : LIVE_FIRST_CAP);
}

/* n's key does not pack: n lives in l->t[LIVE_MEM]. */
int live_mem_make_ovf(struct live *l, const struct live_ent *n, struct live_ent *old)
{
	bool fresh;
	struct live_ent *e = live_make_sz(l, LIVE_MEM, n->key, &fresh, sizeof(*e));

	if (!e)
		return -ENOMEM;
	if (!fresh)
		*old = *e;
	*e = *n;
	e->used = n->used ? n->used : 1; /* hmap's mark */
	return !fresh;
}

/*
 * n's key packs, and s is its slot in l->pk (fresh: new), but n does not
 * fit (!fits), or s is a stub: the entry moves to or from t[LIVE_MEM].
 */
int live_mem_make_stub(struct live *l, struct hmap_pk *s, bool fresh, bool fits, uint64_t w1,
		       const struct live_ent *n, struct live_ent *old)
{
	const uint64_t k = s->w0 & ~(uint64_t)LIVE_PK_STUB;
	int rep = 0, ret;

	if (!fresh && !live_pk_stub(s)) {
		live_pk_unpack(l, s, old);
		rep = 1;
	}
	if (fits) { /* s was a stub: what t[LIVE_MEM] holds goes */
		live_release_sz(l, LIVE_MEM, n->key, old, sizeof(*old));
		s->w0 = k | n->val;
		s->w1 = w1;
		return 1;
	}
	s->w0 = k | LIVE_PK_STUB;
	s->w1 = 0;
	/* l->pk does not move; a stub had its entry there (ret 1), else rep says */
	ret = live_mem_make_ovf(l, n, old);
	return ret < 0 ? ret : ret | rep;
}

bool live_mem_release_ovf(struct live *l, uint64_t key, struct live_ent *old)
{
	return live_release_sz(l, LIVE_MEM, key, old, sizeof(*old));
}

/* s, the slot of key in l->pk, is a stub: the entry in t[LIVE_MEM] goes with it. */
bool live_mem_release_stub(struct live *l, struct hmap_pk *s, uint64_t key, struct live_ent *old)
{
	hmap_pk_del(&l->pk, s);
	return live_release_sz(l, LIVE_MEM, key, old, sizeof(*old));
}

int live_keys_in(const struct hmap *t, size_t esz, uint64_t lo, uint64_t hi, uint64_t **keys,
		 size_t *n)
{
	size_t k = 0;

	*keys = NULL;
	*n = 0;
	for (size_t i = 0; i < t->cap; i++) {
		const void *slot = hmap_slot(t, esz, i);
		uint64_t key = hmap_key(slot);

		if (!hmap_used(slot) || key < lo || key > hi)
			continue;
		if (!*keys) {
			*keys = malloc(t->n * sizeof(**keys));
			if (!*keys)
				return -ENOMEM;
		}
		if (k < t->n)
			(*keys)[k++] = key;
	}
	*n = k;
	return 0;
}

/* ---- the pieces of the mappings ---- */

static int live_maps_grow(struct live_maps *m)
{
	return RIP_GROW(m->v, m->cap, m->n + 1, 64);
}


/* The index of the first piece that ends after addr (m->n: none). */
static size_t live_maps_after(const struct live_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].end > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* The end of [start, start + len), at most 2^64 - 1. */
static uint64_t live_range_end(uint64_t start, uint64_t len)
{
	return start + len < start ? UINT64_MAX : start + len;
}

int live_maps_add(struct live_maps *m, uint64_t start, uint64_t len, uint64_t origin)
{
	uint64_t end = live_range_end(start, len);
	size_t i;

	if (end == start)
		return 0;
	if (live_maps_grow(m))
		return -ENOMEM;
	i = live_maps_after(m, start);
	/* the caller unmapped [start, end): whatever follows starts at end or later */
	memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof(m->v[0]));
	m->v[i] = (struct live_piece){ .start = start, .end = end, .origin = origin };
	m->n++;
	return 0;
}

const struct live_piece *live_maps_at(const struct live_maps *m, uint64_t addr)
{
	size_t i = live_maps_after(m, addr);

	return i < m->n && m->v[i].start == addr ? &m->v[i] : NULL;
}

int live_maps_unmap(struct live_maps *m, uint64_t start, uint64_t len, live_cut_fn *fn, void *arg)
{
	uint64_t end = live_range_end(start, len);
	size_t f = live_maps_after(m, start), l = f, w;
	struct live_piece head, tail;
	bool keep_head, keep_tail;
	int ret;

	while (l < m->n && m->v[l].start < end)
		l++;
	if (f == l || end == start)
		return 0;
	head = m->v[f];
	tail = m->v[l - 1];
	keep_head = head.start < start;
	keep_tail = tail.end > end;
	/* a hole in one piece makes it two: room first, so that a failure changes nothing */
	if (keep_head && keep_tail && f == l - 1 && live_maps_grow(m))
		return -ENOMEM;
	for (size_t i = f; i < l; i++) {
		const struct live_piece *p = &m->v[i];
		struct live_cut c = {
			.origin = p->origin,
			.start = p->start,
			.end = p->end,
			.lo = p->start > start ? p->start : start,
			.hi = p->end < end ? p->end : end,
		};

		ret = fn(arg, &c);
		if (ret)
			return ret;
	}
	ret = (int)(l - f);
	if (keep_head && keep_tail && f == l - 1) {
		memmove(&m->v[l + 1], &m->v[l], (m->n - l) * sizeof(m->v[0]));
		m->n++;
		l++;
	}
	/* the pieces [f, l) become [f, w): what stays of the first and of the last */
	w = f;
	if (keep_head) {
		m->v[w] = head;
		m->v[w++].end = start;
	}
	if (keep_tail) {
		m->v[w] = tail;
		m->v[w++].start = end;
	}
	memmove(&m->v[w], &m->v[l], (m->n - l) * sizeof(m->v[0]));
	m->n -= l - w;
	return ret;
}

/* ---- address space reserved ---- */

static int live_rsv_none(void *arg, const struct live_cut *c)
{
	(void)arg;
	(void)c;
	return 0;
}

int live_rsv_cut(struct live_maps *r, uint64_t start, uint64_t len)
{
	return live_maps_unmap(r, start, len, live_rsv_none, NULL);
}

int live_rsv_add(struct live_maps *r, uint64_t start, uint64_t len)
{
	int ret = live_rsv_cut(r, start, len);

	return ret < 0 ? ret : live_maps_add(r, start, len, live_map_key(r));
}

int live_rsv_take(struct live_maps *r, uint64_t start, uint64_t len, struct live_piece **out,
		  size_t *n)
{
	uint64_t end = live_range_end(start, len);
	struct live_piece *v = NULL;
	size_t k = 0, cap = 0;

	*out = NULL;
	*n = 0;
	if (end == start)
		return 0; /* mprotect(p, 0, ...): not even the piece that holds p */
	for (size_t i = live_maps_after(r, start); i < r->n && r->v[i].start < end; i++) {
		const struct live_piece *p = &r->v[i];

		if (RIP_GROW(v, cap, k + 1, 8))
			goto err_free;
		v[k++] = (struct live_piece){ .start = p->start > start ? p->start : start,
					      .end = p->end < end ? p->end : end,
					      .origin = p->origin };
	}
	if (k && live_rsv_cut(r, start, len) < 0)
		goto err_free;
	*out = v;
	*n = k;
	return 0;
err_free:
	free(v);
	return -ENOMEM;
}

uint64_t live_rsv_bytes(const struct live_maps *r, uint64_t *ranges)
{
	uint64_t bytes = 0;

	*ranges = 0;
	for (size_t i = 0; i < r->n; i++) {
		bytes += r->v[i].end - r->v[i].start;
		/* pieces side by side are one range (a reservation given back next to another) */
		*ranges += !i || r->v[i - 1].end != r->v[i].start;
	}
	return bytes;
}

void live_maps_free(struct live_maps *m)
{
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}

void live_free(struct live *l)
{
	for (int r = 0; r < LIVE_NRES; r++) {
		for (size_t i = 0; live_name_slots(l, (enum live_res)r) && i < l->t[r].cap; i++) {
			struct live_named *n = (struct live_named *)live_slot(l, (enum live_res)r, i);

			if (n->e.used) /* a free slot's name is stale: moved, or freed */
				free(n->name);
		}
		hmap_free(&l->t[r]);
	}
	hmap_free(&l->pk);
	live_maps_free(&l->maps);
	live_maps_free(&l->smaps);
	live_maps_free(&l->rsv);
	stk_bts_free(&l->bts);
}
