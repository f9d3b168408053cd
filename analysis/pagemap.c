/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/pagemap.c - pagemap snapshots measured against the live blocks
 * of their moment (see pagemap.h).
 *
 * A snapshot's mappings arrive one after the other, each followed by the
 * chunks of its pages (2 bits a page).  At its end the mappings are sorted
 * by address, every live block is laid over the ones it touches (a binary
 * search for the first, then a walk) as a span of pages, the spans of a
 * mapping are merged, and each present page is looked up in them: on a
 * span it is live, else unused.  Then the pages are dropped and only the
 * counts stay.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rip/resource.h>
#include <internal/grow.h>

#include "analysis/live.h"
#include "analysis/pagemap.h"
#include "analysis/roles.h"
#include "analysis/stacks.h"

/* ---- live blocks: addr -> size ------------------------------------------------------- */

struct pm_live {
	struct stk_map m; /* block (or piece of a mapping) address -> a: its size */
	uint64_t bytes;
	struct live_maps maps; /* the pieces of the anonymous mappings */
	struct live_maps rsv;  /* address space reserved, not memory (live_is_reserve) */
};

static void pm_live_del(struct pm_live *t, uint64_t addr)
{
	struct stk_ent *e = stk_map_find(&t->m, addr);

	if (!e)
		return; /* not live: freed before the trace began, or lost */
	t->bytes -= e->a;
	stk_map_del(&t->m, e);
}

static int pm_live_put(struct pm_live *t, uint64_t addr, uint64_t size)
{
	bool fresh;
	struct stk_ent *e = stk_map_get(&t->m, addr, &fresh);

	if (!e)
		return -ENOMEM;
	if (!fresh)
		t->bytes -= e->a; /* made again without a free we saw */
	e->a = size;
	t->bytes += size;
	return 0;
}

/*
 * A piece of a mapping unmapped: pagemap keeps the pieces themselves as
 * blocks (what lies where is all it needs), so the piece goes and what
 * stays of it comes back as up to two.
 */
static int pm_cut(void *arg, const struct live_cut *c)
{
	struct pm_live *t = arg;

	pm_live_del(t, c->start);
	if (c->lo > c->start && pm_live_put(t, c->start, c->lo - c->start))
		return -ENOMEM;
	if (c->hi < c->end && pm_live_put(t, c->hi, c->end - c->hi))
		return -ENOMEM;
	return 0;
}

/* A mapping made at [addr, addr + size), over whatever was there. */
/* Range [addr, addr + size) unmapped: 0 or -ENOMEM. */
static int pm_unmap(struct pm_live *t, uint64_t addr, uint64_t size)
{
	int n = live_maps_unmap(&t->maps, addr, size, pm_cut, t);

	if (n >= 0)
		n = live_rsv_cut(&t->rsv, addr, size);
	return n < 0 ? n : 0;
}

static int pm_map_at(struct pm_live *t, uint64_t addr, uint64_t size)
{
	int ret = pm_unmap(t, addr, size);

	if (ret)
		return ret;
	if (live_maps_add(&t->maps, addr, size, addr))
		return -ENOMEM;
	return pm_live_put(t, addr, size);
}

/* A mapping, a reservation (not memory), or an mprotect: each reserved part it covers (as leaks.c). */
static int pm_map(struct pm_live *t, uint64_t kind, uint64_t addr, uint64_t size)
{
	struct live_piece *v;
	size_t n;
	int ret;

	if (live_is_reserve(kind)) {
		ret = pm_unmap(t, addr, size);
		return ret ? ret : live_rsv_add(&t->rsv, addr, size);
	}
	if (kind != RIP_MEM_MPROTECT)
		return pm_map_at(t, addr, size);
	ret = live_rsv_take(&t->rsv, addr, size, &v, &n);
	for (size_t i = 0; !ret && i < n; i++)
		ret = pm_map_at(t, v[i].start, v[i].end - v[i].start);
	free(v);
	return ret;
}

/* ---- one snapshot ---------------------------------------------------------------------- */

struct pm_chunk {
	uint64_t first; /* page index in the mapping */
	uint32_t npages;
	uint64_t *words; /* 2 bits per page */
};

struct pm_span {
	uint64_t lo, hi; /* page indexes [lo, hi) */
};

static void pm_map_free(struct pm_map *m)
{
	for (size_t i = 0; i < m->nchunks; i++)
		free(m->chunks[i].words);
	free(m->chunks);
	free(m->spans);
	free(m->path);
	m->chunks = NULL;
	m->spans = NULL;
	m->path = NULL;
	m->nchunks = m->chunkcap = m->nspans = m->spancap = 0;
}

static void pm_snap_free(struct pm_snap *s)
{
	for (size_t i = 0; i < s->n; i++)
		pm_map_free(&s->maps[i]);
	free(s->maps);
	memset(s, 0, sizeof(*s));
}

/* What a pass keeps besides its results. */
struct pm_priv {
	struct role_map r;  /* the types of rip/resource.h by id, and their fields */
	struct pm_live live;
	struct pm_snap cur; /* being gathered */
	char *err;	    /* pm_run's */
	size_t errlen;
};

/* ---- setup --------------------------------------------------------------------------- */

struct pm *pm_new(const struct pm_opts *opts)
{
	struct pm *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	pm->p = calloc(1, sizeof(*pm->p));
	if (!pm->p) {
		free(pm);
		return NULL;
	}
	if (opts)
		pm->o = *opts;
	return pm;
}

void pm_free(struct pm *pm)
{
	if (!pm)
		return;
	if (pm->p) {
		pm_snap_free(&pm->p->cur);
		stk_map_free(&pm->p->live.m);
		live_maps_free(&pm->p->live.maps);
		live_maps_free(&pm->p->live.rsv);
		free(pm->p);
	}
	pm_snap_free(&pm->best);
	free(pm);
}

/* ---- the pass ---------------------------------------------------------------------------- */

static int pm_fail(struct pm *pm, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int pm_fail(struct pm *pm, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pm->p->err, pm->p->errlen, fmt, ap);
	va_end(ap);
	return code;
}

static int pm_bind(struct pm *pm, const struct ev_types *types)
{
	int ret = role_bind(&pm->p->r, types, pm->p->err, pm->p->errlen);

	for (uint32_t id = 0; id < EV_MAX_TYPES; id++)
		if (pm->p->r.role[id] >= ROLE_MEM_MAPPING)
			pm->has_types = true;
	return ret;
}

static void pm_cur_reset(struct pm *pm, uint32_t seq, int64_t ns)
{
	if (pm->p->cur.started)
		pm->incomplete++; /* a snapshot without its end: the process died in it */
	pm_snap_free(&pm->p->cur);
	pm->p->cur.seq = seq;
	pm->p->cur.started = true;
	pm->p->cur.ns = ns;
}

/* Field k (ROLE_MAPPING_START...) of event e. */
#define V(k) role_val(&pm->p->r, e, k)

static int pm_on_mapping(struct pm *pm, const struct evs_event *e)
{
	uint64_t start = V(ROLE_MAPPING_START), end = V(ROLE_MAPPING_END);
	uint64_t ps = V(ROLE_MAPPING_PAGE_SIZE);
	uint32_t seq = (uint32_t)V(ROLE_MAPPING_SEQ);
	struct pm_map *m;

	if (!pm->p->cur.started || pm->p->cur.seq != seq)
		pm_cur_reset(pm, seq, e->ns);
	if (ps < 4096 || ps > (1u << 30) || (ps & (ps - 1)) || start >= end ||
	    (start | end) & (ps - 1))
		return pm_fail(pm, -EBADMSG,
			       "mem:mapping of snapshot %u: bad range 0x%" PRIx64 "-0x%" PRIx64
			       " or page size %" PRIu64,
			       seq, start, end, ps);
	if (RIP_GROW(pm->p->cur.maps, pm->p->cur.cap, pm->p->cur.n + 1, 64))
		return -ENOMEM;
	m = &pm->p->cur.maps[pm->p->cur.n];
	memset(m, 0, sizeof(*m));
	m->path = strdup(e->str ? e->str : "");
	if (!m->path)
		return -ENOMEM;
	pm->p->cur.n++;
	m->start = start;
	m->end = end;
	m->prot = (uint32_t)V(ROLE_MAPPING_PROT);
	m->flags = (uint32_t)V(ROLE_MAPPING_FLAGS);
	m->page_size = (uint32_t)ps;
	return 0;
}

static int pm_on_pagemap(struct pm *pm, const struct evs_event *e)
{
	uint64_t start = V(ROLE_PAGEMAP_START), npages = V(ROLE_PAGEMAP_NPAGES), pages, first;
	uint32_t seq = (uint32_t)V(ROLE_PAGEMAP_SEQ), nwords;
	struct pm_map *m;
	struct pm_chunk *c;

	if (!pm->p->cur.started || pm->p->cur.seq != seq || !pm->p->cur.n)
		return pm_fail(pm, -EBADMSG,
			       "mem:pagemap of snapshot %u at 0x%" PRIx64
			       " without its mem:mapping",
			       seq, start);
	/* The preload library writes a mapping's chunks right after it. */
	m = &pm->p->cur.maps[pm->p->cur.n - 1];
	pages = (m->end - m->start) / m->page_size;
	nwords = (uint32_t)((npages + 31) / 32);
	if (start < m->start || start >= m->end || (start - m->start) % m->page_size || !npages ||
	    npages > RIP_PM_CHUNK_PAGES || e->narr < nwords)
		return pm_fail(pm, -EBADMSG,
			       "mem:pagemap of snapshot %u: chunk at 0x%" PRIx64 " of %" PRIu64
			       " pages (%u values) does not fit mapping 0x%" PRIx64 "-0x%" PRIx64,
			       seq, start, npages, e->narr, m->start, m->end);
	first = (start - m->start) / m->page_size;
	if (npages > pages - first)
		return pm_fail(pm, -EBADMSG,
			       "mem:pagemap of snapshot %u: %" PRIu64 " pages at 0x%" PRIx64
			       " run past the end of mapping 0x%" PRIx64 "-0x%" PRIx64,
			       seq, npages, start, m->start, m->end);
	if (RIP_GROW(m->chunks, m->chunkcap, m->nchunks + 1, 8))
		return -ENOMEM;
	c = &m->chunks[m->nchunks];
	c->words = malloc((size_t)nwords * 8);
	if (!c->words)
		return -ENOMEM;
	for (uint32_t i = 0; i < nwords; i++)
		c->words[i] = evs_arr(e, i);
	c->first = first;
	c->npages = (uint32_t)npages;
	m->nchunks++;
	return 0;
}

static int pm_by_start(const void *a, const void *b)
{
	const struct pm_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int pm_by_first(const void *a, const void *b)
{
	const struct pm_chunk *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

static int pm_by_lo(const void *a, const void *b)
{
	const struct pm_span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int pm_span_add(struct pm_map *m, uint64_t lo, uint64_t hi)
{
	struct pm_span *last = m->nspans ? &m->spans[m->nspans - 1] : NULL;

	/* The common case: a block next to or over the last one, merged now. */
	if (last && last->hi >= lo && last->lo <= lo) {
		if (hi > last->hi)
			last->hi = hi;
		return 0;
	}
	if (RIP_GROW(m->spans, m->spancap, m->nspans + 1, 16))
		return -ENOMEM;

	m->spans[m->nspans++] = (struct pm_span){ lo, hi };
	return 0;
}

/* Lay the live blocks over the mappings: bytes, counts, and the pages they touch. */
static int pm_lay_blocks(struct pm *pm, struct pm_snap *s)
{
	for (size_t i = 0; i < pm->p->live.m.cap; i++) {
		const struct stk_ent *b = &pm->p->live.m.v[i];
		uint64_t lo, hi;
		size_t a = 0, z = s->n;
		bool first = true;

		if (!b->used)
			continue;
		lo = b->key;
		/* A block of 0 bytes still sits on its page. */
		hi = b->a > UINT64_MAX - lo ? UINT64_MAX : lo + (b->a ? b->a : 1);
		/* The first mapping that ends after lo. */
		while (a < z) {
			size_t mid = a + (z - a) / 2;

			if (s->maps[mid].end <= lo)
				a = mid + 1;
			else
				z = mid;
		}
		for (size_t k = a; k < s->n && s->maps[k].start < hi; k++) {
			struct pm_map *m = &s->maps[k];
			uint64_t from = lo > m->start ? lo : m->start;
			uint64_t to = hi < m->end ? hi : m->end;

			m->c.live_bytes += b->a ? to - from : 0;
			if (first)
				m->c.live_blocks++;
			first = false;
			if (pm_span_add(m, (from - m->start) / m->page_size,
					(to - m->start + m->page_size - 1) / m->page_size))
				return -ENOMEM;
		}
	}
	return 0;
}

/* Count one mapping's pages: its chunks against its merged spans. */
static int pm_count_map(struct pm *pm, struct pm_snap *s, struct pm_map *m)
{
	size_t n = 0, k = 0;
	uint64_t end = 0;

	m->c.size = m->end - m->start;
	m->c.pages = m->c.size / m->page_size;
	if (m->nspans) {
		qsort(m->spans, m->nspans, sizeof(*m->spans), pm_by_lo);
		for (size_t i = 1; i < m->nspans; i++) {
			if (m->spans[i].lo <= m->spans[n].hi) {
				if (m->spans[i].hi > m->spans[n].hi)
					m->spans[n].hi = m->spans[i].hi;
			} else {
				m->spans[++n] = m->spans[i];
			}
		}
		m->nspans = n + 1;
		for (size_t i = 0; i < m->nspans; i++)
			m->c.live_pages += m->spans[i].hi - m->spans[i].lo;
	}
	if (m->nchunks) /* qsort's array may not be NULL: a mapping with no pages described */
		qsort(m->chunks, m->nchunks, sizeof(*m->chunks), pm_by_first);
	for (size_t i = 0; i < m->nchunks; i++) {
		const struct pm_chunk *c = &m->chunks[i];

		if (c->first < end)
			return pm_fail(pm, -EBADMSG,
				       "snapshot %u describes the page at 0x%" PRIx64 " twice",
				       s->seq, m->start + c->first * m->page_size);
		end = c->first + c->npages;
		for (uint32_t p = 0; p < c->npages; p++) {
			uint64_t page = c->first + p;
			unsigned code = (unsigned)(c->words[p / 32] >> (p % 32 * 2)) & 3;

			if (code == RIP_PM_SWAPPED)
				m->c.swapped++;
			if (code != RIP_PM_PRESENT && code != RIP_PM_ZERO)
				continue;
			m->c.present++;
			if (code == RIP_PM_ZERO)
				m->c.zero++;
			while (k < m->nspans && m->spans[k].hi <= page)
				k++;
			if (k == m->nspans || m->spans[k].lo > page)
				m->c.unused++;
		}
	}
	return 0;
}

/* Snapshot cur is complete: measure it against the live blocks of now and keep its counts. */
static int pm_measure(struct pm *pm)
{
	struct pm_snap *s = &pm->p->cur;
	int ret;

	if (s->n) /* qsort's array may not be NULL: a snapshot of no mappings */
		qsort(s->maps, s->n, sizeof(*s->maps), pm_by_start);
	for (size_t i = 1; i < s->n; i++)
		if (s->maps[i].start < s->maps[i - 1].end)
			return pm_fail(pm, -EBADMSG,
				       "snapshot %u has overlapping mappings at 0x%" PRIx64, s->seq,
				       s->maps[i].start);
	ret = pm_lay_blocks(pm, s);
	if (ret)
		return ret;
	for (size_t i = 0; i < s->n; i++) {
		ret = pm_count_map(pm, s, &s->maps[i]);
		if (ret)
			return ret;
		/* Only the counts are kept. */
		for (size_t k = 0; k < s->maps[i].nchunks; k++)
			free(s->maps[i].chunks[k].words);
		free(s->maps[i].chunks);
		free(s->maps[i].spans);
		s->maps[i].chunks = NULL;
		s->maps[i].spans = NULL;
		s->maps[i].nchunks = s->maps[i].nspans = 0;
	}
	s->live_blocks = pm->p->live.m.n;
	s->live_bytes = pm->p->live.bytes;
	pm_snap_free(&pm->best);
	pm->best = *s;
	pm->have_best = true;
	memset(s, 0, sizeof(*s));
	return 0;
}

static int pm_on_end(struct pm *pm, const struct evs_event *e)
{
	uint32_t seq = (uint32_t)V(ROLE_END_SEQ);
	uint64_t expect = V(ROLE_END_MAPPINGS);
	int32_t error = (int32_t)V(ROLE_END_ERROR);

	if (!pm->p->cur.started || pm->p->cur.seq != seq)
		pm_cur_reset(pm, seq, e->ns); /* a snapshot of no mapping */
	pm->p->cur.started = false;
	pm->p->cur.reason = (uint32_t)V(ROLE_END_REASON);
	pm->p->cur.error = error;
	pm->p->cur.ns = e->ns;
	if (error) {
		pm->failed++;
		pm->last_error = error;
		pm_snap_free(&pm->p->cur);
		return 0;
	}
	if (expect != pm->p->cur.n) {
		pm->incomplete++; /* events lost in the middle of it */
		pm_snap_free(&pm->p->cur);
		return 0;
	}
	pm->complete++;
	if (pm->o.snapshot && pm->o.snapshot != seq) {
		pm_snap_free(&pm->p->cur);
		return 0;
	}
	return pm_measure(pm);
}

static int pm_event(struct pm *pm, const struct evs_event *e, int role)
{
	switch (role) {
	case ROLE_MEM_ALLOC:
		if (!V(ROLE_ALLOC_ADDR))
			return 0;
		if (live_is_mapping(V(ROLE_ALLOC_KIND)) || live_is_reserve(V(ROLE_ALLOC_KIND)))
			return pm_map(&pm->p->live, V(ROLE_ALLOC_KIND), V(ROLE_ALLOC_ADDR),
				      V(ROLE_ALLOC_SIZE));
		return pm_live_put(&pm->p->live, V(ROLE_ALLOC_ADDR), V(ROLE_ALLOC_SIZE));
	case ROLE_MEM_UNMAP:
		return pm_unmap(&pm->p->live, V(ROLE_UNMAP_ADDR), V(ROLE_UNMAP_SIZE));
	case ROLE_MEM_FREE: {
		struct pm_live *t = &pm->p->live;
		const struct live_piece *p = stk_map_find(&t->m, V(ROLE_FREE_ADDR))
						     ? NULL
						     : live_maps_at(&t->maps, V(ROLE_FREE_ADDR));
		int n;

		if (!p) {
			pm_live_del(t, V(ROLE_FREE_ADDR));
			return 0;
		}
		/* a mapping's start, in a trace from before mem:unmap */
		n = live_maps_unmap(&t->maps, p->start, p->end - p->start, pm_cut, t);
		return n < 0 ? n : 0;
	}
	case ROLE_MEM_REALLOC:
		/* old 0: an allocation; addr 0 and size 0: a free of old */
		if (V(ROLE_REALLOC_OLD))
			pm_live_del(&pm->p->live, V(ROLE_REALLOC_OLD));
		return V(ROLE_REALLOC_ADDR) ? pm_live_put(&pm->p->live, V(ROLE_REALLOC_ADDR),
							  V(ROLE_REALLOC_SIZE))
					    : 0;
	case ROLE_MEM_MAPPING:
		return pm_on_mapping(pm, e);
	case ROLE_MEM_PAGEMAP:
		return pm_on_pagemap(pm, e);
	case ROLE_MEM_PAGEMAP_END:
		return pm_on_end(pm, e);
	}
	return 0;
}

#undef V

int pm_run(struct pm *pm, struct evs *s, char *err, size_t errlen)
{
	struct evs_event e;
	int ret, role;

	pm->p->err = err;
	pm->p->errlen = errlen;
	ret = pm_bind(pm, evs_types(s));
	if (ret)
		return ret;
	while ((ret = evs_next(s, &e, pm->p->err, pm->p->errlen)) > 0) {
		if (!pm->any_event) {
			pm->first_ns = e.ns;
			pm->any_event = true;
		}
		role = role_of(&pm->p->r, &e);
		if (role == ROLE_NONE)
			continue;
		if (role >= ROLE_MEM_ALLOC && role <= ROLE_MEM_UNMAP)
			pm->mem_events++;
		ret = pm_event(pm, &e, role);
		if (ret == -ENOMEM)
			return pm_fail(pm, ret, "out of memory");
		if (ret)
			return ret;
	}
	if (ret < 0)
		return ret;
	if (pm->p->cur.started)
		pm->incomplete++;
	pm_snap_free(&pm->p->cur);
	return 0;
}
