/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/report.c - the one pass of `rip report` (see report.h).
 *
 * Live blocks, descriptors, segments and mappings sit in open addressing
 * tables keyed by address, number or id (linear probing, deletion by
 * backward shift: no tombstones).  Sites (backtrace ids) and threads are
 * arrays found through a small index table.
 *
 * The peak's make-up is kept without a copy at each new peak: every site
 * remembers the event number of its last change; a site about to change
 * whose last change is not after the current peak still holds the bytes it
 * had at the peak, so they are saved then.  At the end, sites unchanged
 * since the peak take their live bytes.  O(1) per event.
 *
 * The series of heap in use over time is RP_SERIES buckets of a width that
 * starts at 1 us and doubles, merging adjacent pairs, whenever the trace
 * outgrows them: bounded, O(1) per event amortized.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rip/resource.h>

#include "analysis/report.h"
#include "analysis/roles.h"
#include "analysis/stacks.h"

/* ---- tables --------------------------------------------------------------------------- */

struct rp_ent {
	uint64_t key;
	uint64_t size;
	int64_t ns;
	uint32_t val; /* site index (blocks), kind (descriptors) */
	uint32_t used;
};

struct rp_tab {
	struct rp_ent *v;
	size_t cap, n;
};

/* Index table: key -> index + 1 into an array (sites, threads, backtraces). */
struct rp_idx {
	uint64_t *keys;
	uint32_t *idx;
	size_t cap, n;
};

struct rp_btent {
	uint32_t n;
	uint64_t off; /* in frames */
};

struct rp_priv {
	struct role_map r; /* our types by id, and where their fields are */
	struct rp_tab blocks, fds, segs, maps;
	struct rp_idx site_idx, thread_idx, bt_idx;
	uint32_t *site_fast;	 /* backtrace id -> site index + 1, for ids < RP_SITE_FAST_MAX */
	size_t site_fastcap;
	size_t sitecap, threadcap;
	/* the thread of the last memory event (runs of events come from one thread) */
	int32_t last_tid;
	long last_thread; /* its index, -1: none yet */
	struct rp_btent *bts;
	size_t nbts, btcap;
	uint64_t *frames;
	size_t nframes, framecap;
	uint64_t peak_seq;
	struct rp_point *pt;	 /* the series point of the memory event being counted */
	uint64_t s_lo, s_hi;	 /* the series bucket of the last sample: [lo, hi) ns in */
	size_t s_i;
};

static inline size_t rp_hash(uint64_t key, size_t cap)
{
	key ^= key >> 29;
	key *= 0xbf58476d1ce4e5b9ull;
	key ^= key >> 32;
	return (size_t)key & (cap - 1);
}

static int rp_tab_grow(struct rp_tab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 256;
	struct rp_ent *nv = calloc(ncap, sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		size_t h;

		if (!t->v[i].used)
			continue;
		for (h = rp_hash(t->v[i].key, ncap); nv[h].used; h = (h + 1) & (ncap - 1))
			;
		nv[h] = t->v[i];
	}
	free(t->v);
	t->v = nv;
	t->cap = ncap;
	return 0;
}

static struct rp_ent *rp_tab_find(const struct rp_tab *t, uint64_t key)
{
	if (!t->cap)
		return NULL;
	for (size_t h = rp_hash(key, t->cap);; h = (h + 1) & (t->cap - 1)) {
		if (!t->v[h].used)
			return NULL;
		if (t->v[h].key == key)
			return &t->v[h];
	}
}

/* Remove e (from rp_tab_find), shifting back the entries of its cluster. */
static void rp_tab_del(struct rp_tab *t, struct rp_ent *e)
{
	size_t i = (size_t)(e - t->v), j = i, mask = t->cap - 1;

	t->v[i].used = 0;
	t->n--;
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!t->v[j].used)
			return;
		home = rp_hash(t->v[j].key, t->cap);
		/* leave j where it is if its home lies cyclically in (i, j] */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		t->v[i] = t->v[j];
		t->v[j].used = 0;
		i = j;
	}
}

/* Insert key (not present): the new entry, or NULL when out of memory. */
static struct rp_ent *rp_tab_add(struct rp_tab *t, uint64_t key)
{
	size_t h;

	if ((t->n + 1) * 2 > t->cap && rp_tab_grow(t))
		return NULL;
	for (h = rp_hash(key, t->cap); t->v[h].used; h = (h + 1) & (t->cap - 1))
		;
	t->n++;
	memset(&t->v[h], 0, sizeof(t->v[h]));
	t->v[h].key = key;
	t->v[h].used = 1;
	return &t->v[h];
}

/*
 * The entry of key, or a new zeroed one (*fresh true) in a single probe;
 * NULL when out of memory.
 */
static struct rp_ent *rp_tab_get(struct rp_tab *t, uint64_t key, bool *fresh)
{
	size_t h;

	if ((t->n + 1) * 2 > t->cap && rp_tab_grow(t))
		return NULL;
	for (h = rp_hash(key, t->cap); t->v[h].used; h = (h + 1) & (t->cap - 1))
		if (t->v[h].key == key) {
			*fresh = false;
			return &t->v[h];
		}
	*fresh = true;
	t->n++;
	memset(&t->v[h], 0, sizeof(t->v[h]));
	t->v[h].key = key;
	t->v[h].used = 1;
	return &t->v[h];
}

/* Index of key, or (when add) a new index n; -1 when absent, -ENOMEM. */
static long rp_idx_get(struct rp_idx *x, uint64_t key, bool add)
{
	size_t h;

	if (add && (x->n + 1) * 2 > x->cap) {
		size_t ncap = x->cap ? x->cap * 2 : 64;
		uint64_t *nk = calloc(ncap, sizeof(*nk));
		uint32_t *ni = calloc(ncap, sizeof(*ni));

		if (!nk || !ni) {
			free(nk);
			free(ni);
			return -ENOMEM;
		}
		for (size_t i = 0; i < x->cap; i++) {
			if (!x->idx[i])
				continue;
			for (h = rp_hash(x->keys[i], ncap); ni[h]; h = (h + 1) & (ncap - 1))
				;
			nk[h] = x->keys[i];
			ni[h] = x->idx[i];
		}
		free(x->keys);
		free(x->idx);
		x->keys = nk;
		x->idx = ni;
		x->cap = ncap;
	}
	if (!x->cap)
		return -1;
	for (h = rp_hash(key, x->cap); x->idx[h]; h = (h + 1) & (x->cap - 1))
		if (x->keys[h] == key)
			return (long)x->idx[h] - 1;
	if (!add)
		return -1;
	x->keys[h] = key;
	x->idx[h] = (uint32_t)++x->n;
	return (long)x->n - 1;
}

static int rp_grow_array(void **a, size_t *cap, size_t need, size_t size)
{
	size_t ncap;
	void *na;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	na = realloc(*a, ncap * size);
	if (!na)
		return -ENOMEM;
	memset((char *)na + *cap * size, 0, (ncap - *cap) * size);
	*a = na;
	*cap = ncap;
	return 0;
}

/* ---- sites, threads, backtraces ------------------------------------------------------- */

#define RP_SITE_FAST_MAX (1u << 20)

static struct rp_site *rp_site(struct rp *rp, uint32_t bt)
{
	struct rp_priv *p = rp->p;
	long i;

	/* ids are handed out from 1 up: small ones index an array, no hashing */
	if (bt < p->site_fastcap && p->site_fast[bt])
		return &rp->sites[p->site_fast[bt] - 1];
	i = rp_idx_get(&p->site_idx, bt, true);
	if (i < 0)
		return NULL;
	if (bt < RP_SITE_FAST_MAX && i < UINT32_MAX - 1 &&
	    !rp_grow_array((void **)&p->site_fast, &p->site_fastcap, (size_t)bt + 1,
			   sizeof(*p->site_fast)))
		p->site_fast[bt] = (uint32_t)i + 1;
	if ((size_t)i == rp->nsites) {
		if (rp_grow_array((void **)&rp->sites, &p->sitecap, rp->nsites + 1,
				  sizeof(*rp->sites)))
			return NULL;
		rp->sites[rp->nsites++].bt = bt;
	}
	return &rp->sites[i];
}

static inline struct rp_thread *rp_thread(struct rp *rp, int32_t tid)
{
	struct rp_priv *p = rp->p;
	long i;

	if (p->last_thread >= 0 && p->last_tid == tid)
		return &rp->threads[p->last_thread];
	i = rp_idx_get(&p->thread_idx, (uint32_t)tid, true);
	if (i < 0)
		return NULL;
	p->last_tid = tid;
	p->last_thread = i;
	if ((size_t)i == rp->nthreads) {
		if (rp_grow_array((void **)&rp->threads, &p->threadcap, rp->nthreads + 1,
				  sizeof(*rp->threads)))
			return NULL;
		rp->threads[rp->nthreads++].tid = tid;
	}
	return &rp->threads[i];
}

/* The site is about to change at event seq: keep what it held at the peak. */
static void rp_touch(struct rp *rp, struct rp_site *s)
{
	if (s->mod_seq <= rp->p->peak_seq) {
		s->peak_bytes = s->live_bytes;
		s->peak_count = s->live_count;
	}
	s->mod_seq = rp->events;
}

static int rp_bt_define(struct rp *rp, const struct evs_event *e, uint32_t id)
{
	struct rp_priv *p = rp->p;
	long i;

	rp->bt_defs++;
	if (!id || !e->arr) {
		rp->bt_bad++;
		return 0;
	}
	i = rp_idx_get(&p->bt_idx, id, true);
	if (i < 0)
		return -ENOMEM;
	if ((size_t)i < p->nbts) {
		const struct rp_btent *b = &p->bts[i];
		bool same = b->n == e->narr;

		for (uint32_t k = 0; same && k < e->narr; k++)
			same = p->frames[b->off + k] == evs_arr(e, k);
		rp->bt_bad += !same;
		return 0;
	}
	if (rp_grow_array((void **)&p->bts, &p->btcap, p->nbts + 1, sizeof(*p->bts)) ||
	    rp_grow_array((void **)&p->frames, &p->framecap, p->nframes + e->narr,
			  sizeof(*p->frames)))
		return -ENOMEM;
	p->bts[p->nbts].n = e->narr;
	p->bts[p->nbts].off = p->nframes;
	p->nbts++;
	for (uint32_t k = 0; k < e->narr; k++)
		p->frames[p->nframes++] = evs_arr(e, k);
	return 0;
}

const uint64_t *rp_bt(const struct rp *rp, uint32_t id, uint32_t *n)
{
	long i = id ? rp_idx_get(&rp->p->bt_idx, id, false) : -1;

	if (i < 0)
		return NULL;
	*n = rp->p->bts[i].n;
	return rp->p->frames + rp->p->bts[i].off;
}

/* ---- memory --------------------------------------------------------------------------- */

static unsigned rp_size_bucket(uint64_t size)
{
	return size ? 64u - (unsigned)__builtin_clzll(size) : 0;
}

/* The upper limit of each lifetime bucket but the last: 1 us, 10 us, ... 10 s. */
static const uint64_t rp_life_lim[RP_LIFE - 1] = {
	1000ull, 10000ull, 100000ull, 1000000ull,
	10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
};
_Static_assert(RP_LIFE == 9, "one limit per bucket but the last");

uint64_t rp_life_limit(unsigned k)
{
	return k < RP_LIFE - 1 ? rp_life_lim[k] : 0;
}

static unsigned rp_life_bucket(int64_t ns)
{
	uint64_t v = (uint64_t)(ns < 0 ? 0 : ns);
	unsigned k = 0;

	while (k < RP_LIFE - 1 && v >= rp_life_lim[k])
		k++;
	return k;
}

/* Release block e (live) at time ns, by thread tid (NULL: not a free, a loss). */
/* Block e (live) stops counting as live, at its site and in all. */
static void rp_unlive(struct rp *rp, const struct rp_ent *e)
{
	struct rp_site *s = &rp->sites[e->val];

	rp_touch(rp, s);
	s->live_count--;
	s->live_bytes -= e->size;
	rp->live_count--;
	rp->live_bytes -= e->size;
}

static void rp_release(struct rp *rp, struct rp_ent *e, int64_t ns, struct rp_thread *t)
{
	rp_unlive(rp, e);
	if (t) {
		struct rp_bucket *b = &rp->life[rp_life_bucket(ns - e->ns)];

		b->count++;
		b->bytes += e->size;
		rp->frees++;
		rp->p->pt->frees++;
		rp->freed_bytes += e->size;
		t->frees++;
		t->freed_bytes += e->size;
	}
	rp_tab_del(&rp->p->blocks, e);
}

static int rp_alloc(struct rp *rp, const struct evs_event *e, uint64_t addr, uint64_t size,
		    uint32_t bt, struct rp_thread *t)
{
	struct rp_site *s = rp_site(rp, bt);
	struct rp_ent *b;
	bool fresh;

	if (!s)
		return -ENOMEM;
	b = rp_tab_get(&rp->p->blocks, addr, &fresh);
	if (!b)
		return -ENOMEM;
	if (!fresh) {
		/* made again while live: its free was not seen; the old block goes */
		rp->replaced++;
		rp_unlive(rp, b);
	}
	b->size = size;
	b->ns = e->ns;
	b->val = (uint32_t)(s - rp->sites);
	rp_touch(rp, s);
	s->count++;
	s->bytes += size;
	s->live_count++;
	s->live_bytes += size;
	rp->allocs++;
	rp->alloc_bytes += size;
	rp->p->pt->allocs++;
	rp->p->pt->alloc_bytes += size;
	rp->live_count++;
	rp->live_bytes += size;
	rp->hist[rp_size_bucket(size)].count++;
	rp->hist[rp_size_bucket(size)].bytes += size;
	t->allocs++;
	t->bytes += size;
	if (rp->live_bytes > rp->peak_bytes) {
		rp->peak_bytes = rp->live_bytes;
		rp->peak_count = rp->live_count;
		rp->peak_ns = e->ns;
		rp->peak_event = rp->events;
		rp->p->peak_seq = rp->events;
	}
	return 0;
}

static void rp_free_addr(struct rp *rp, const struct evs_event *e, uint64_t addr,
			 struct rp_thread *t)
{
	struct rp_ent *b;

	if (!addr)
		return;
	b = rp_tab_find(&rp->p->blocks, addr);
	if (b)
		rp_release(rp, b, e->ns, t);
	else
		rp->frees_unseen++;
}

/* Halve the resolution of the series: bucket i takes buckets 2i and 2i + 1. */
static void rp_series_merge(struct rp *rp)
{
	size_t n = (rp->nseries + 1) / 2;

	for (size_t i = 0; i < n; i++) {
		struct rp_point a = rp->series[2 * i], b = { 0 };

		if (2 * i + 1 < rp->nseries)
			b = rp->series[2 * i + 1];
		if (b.events) {
			if (!a.events) {
				a.min_bytes = b.min_bytes;
				a.max_bytes = b.max_bytes;
			}
			a.min_bytes = b.min_bytes < a.min_bytes ? b.min_bytes : a.min_bytes;
			a.max_bytes = b.max_bytes > a.max_bytes ? b.max_bytes : a.max_bytes;
			a.last_bytes = b.last_bytes;
			a.events += b.events;
			a.allocs += b.allocs;
			a.alloc_bytes += b.alloc_bytes;
			a.frees += b.frees;
		}
		rp->series[i] = a;
	}
	memset(&rp->series[n], 0, (rp->nseries - n) * sizeof(rp->series[0]));
	rp->nseries = n;
	rp->series_ns *= 2;
	rp->p->s_lo = rp->p->s_hi = 0; /* buckets changed: forget the last one */
}

/*
 * The series point of a memory event at ns, before the event is counted:
 * rp_alloc and rp_release add what it makes and frees to it (p->pt), and
 * rp_sample notes the bytes in use after it.
 */
static struct rp_point *rp_point_at(struct rp *rp, int64_t ns)
{
	struct rp_priv *p = rp->p;
	uint64_t d = ns > rp->first_ns ? (uint64_t)(ns - rp->first_ns) : 0;
	size_t i;

	if (d >= p->s_lo && d < p->s_hi)
		return &rp->series[p->s_i]; /* the last event's bucket, the last one: no division */
	while ((i = (size_t)(d / rp->series_ns)) >= RP_SERIES)
		rp_series_merge(rp);
	p->s_lo = p->s_hi = 0;
	if (i < rp->nseries - (rp->nseries > 0)) {
		i = rp->nseries - 1; /* time went back (threads' clocks): the last bucket */
	} else {
		/* remember the bucket: it is the last one, and holds this event */
		p->s_i = i;
		p->s_lo = (uint64_t)i * rp->series_ns;
		p->s_hi = p->s_lo + rp->series_ns;
	}
	if (i >= rp->nseries)
		rp->nseries = i + 1;
	return &rp->series[i];
}

/* After a memory event counted in pt: the bytes in use now. */
static void rp_sample(struct rp *rp, struct rp_point *pt)
{
	if (!pt->events || rp->live_bytes < pt->min_bytes)
		pt->min_bytes = rp->live_bytes;
	if (!pt->events || rp->live_bytes > pt->max_bytes)
		pt->max_bytes = rp->live_bytes;
	pt->last_bytes = rp->live_bytes;
	pt->events++;
}

/* ---- descriptors and shared memory ---------------------------------------------------- */

static unsigned rp_kind(uint64_t k)
{
	return k < RP_KINDS ? (unsigned)k : 0;
}

static int rp_fd_open(struct rp *rp, int64_t fd, uint64_t kind)
{
	struct rp_fd *f = &rp->fd;
	struct rp_ent *o;

	if (fd < 0)
		return 0;
	f->opened++;
	f->kind[rp_kind(kind)].opened++;
	o = rp_tab_find(&rp->p->fds, (uint64_t)fd);
	if (o) {
		f->reopened++; /* its close was not recorded */
		o->val = rp_kind(kind);
		return 0;
	}
	o = rp_tab_add(&rp->p->fds, (uint64_t)fd);
	if (!o)
		return -ENOMEM;
	o->val = rp_kind(kind);
	if (rp->p->fds.n > f->peak_open)
		f->peak_open = rp->p->fds.n;
	return 0;
}

static void rp_fd_close(struct rp *rp, int64_t fd)
{
	struct rp_ent *o = fd >= 0 ? rp_tab_find(&rp->p->fds, (uint64_t)fd) : NULL;

	if (!o) {
		rp->fd.closed_unseen++;
		return;
	}
	rp->fd.closed++;
	rp->fd.kind[o->val].closed++;
	rp_tab_del(&rp->p->fds, o);
}

static int rp_shm_create(struct rp *rp, uint64_t key, uint64_t size, uint64_t kind)
{
	struct rp_shm *m = &rp->shm;
	struct rp_ent *o;

	if (kind == RIP_SHM_MEMFD) {
		m->memfd++; /* lives as long as its descriptor and mappings */
		return 0;
	}
	m->created++;
	m->created_bytes += size;
	o = rp_tab_find(&rp->p->segs, key);
	if (!o) {
		o = rp_tab_add(&rp->p->segs, key);
		if (!o)
			return -ENOMEM;
	}
	o->size = size; /* shm_open of an existing name: the same segment */
	return 0;
}

static void rp_shm_remove(struct rp *rp, uint64_t key)
{
	struct rp_ent *o = rp_tab_find(&rp->p->segs, key);

	if (!o) {
		rp->shm.removed_unseen++;
		return;
	}
	rp->shm.removed++;
	rp_tab_del(&rp->p->segs, o);
}

static int rp_shm_attach(struct rp *rp, uint64_t addr, uint64_t size)
{
	struct rp_shm *m = &rp->shm;
	struct rp_ent *o = rp_tab_find(&rp->p->maps, addr);

	m->attached++;
	m->attached_bytes += size;
	if (o) {
		m->mapped_bytes -= o->size;
	} else {
		o = rp_tab_add(&rp->p->maps, addr);
		if (!o)
			return -ENOMEM;
	}
	o->size = size;
	m->mapped_bytes += size;
	if (m->mapped_bytes > m->peak_mapped_bytes)
		m->peak_mapped_bytes = m->mapped_bytes;
	return 0;
}

static void rp_shm_detach(struct rp *rp, uint64_t addr)
{
	struct rp_ent *o = rp_tab_find(&rp->p->maps, addr);

	if (!o) {
		rp->shm.detached_unseen++;
		return;
	}
	rp->shm.detached++;
	rp->shm.mapped_bytes -= o->size;
	rp_tab_del(&rp->p->maps, o);
}

/* ---- the pass ------------------------------------------------------------------------- */

static int rp_fail(char *err, size_t len, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int rp_fail(char *err, size_t len, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return code;
}

static int rp_types(struct rp *rp, const struct ev_types *types, char *err, size_t errlen)
{
	struct rp_priv *p = rp->p;
	int ret = role_bind(&p->r, types, err, errlen);

	rp->has_types = role_has_resources(&p->r);
	return ret;
}

static int rp_mem_event(struct rp *rp, const struct evs_event *e, const struct role_res *d)
{
	struct rp_thread *t;

	if (d->role == ROLE_MEM_ALLOC && !d->key) {
		rp->failed++;
		return 0;
	}
	t = rp_thread(rp, e->tid);
	if (!t)
		return -ENOMEM;
	switch (d->role) {
	case ROLE_MEM_ALLOC:
		return rp_alloc(rp, e, d->key, d->size, d->bt, t);
	case ROLE_MEM_FREE:
		rp_free_addr(rp, e, d->key, t);
		return 0;
	case ROLE_MEM_REALLOC:
		/* old 0: an allocation; addr 0 and size 0: a free of old; addr 0: failed */
		if (!d->key && d->size) {
			rp->failed++;
			return 0;
		}
		rp_free_addr(rp, e, d->old, t);
		if (!d->key)
			return 0;
		rp->reallocs++;
		return rp_alloc(rp, e, d->key, d->size, d->bt, t);
	}
	return 0;
}

static int rp_event(struct rp *rp, const struct evs_event *e)
{
	int role = role_of(&rp->p->r, e), ret;
	struct role_res d;

	if (role == ROLE_BT)
		return rp_bt_define(rp, e, (uint32_t)role_val(&rp->p->r, e, ROLE_BT_ID));
	if (!role_is_resource(role))
		return 0;
	rp->res_events++;
	role_decode(&rp->p->r, e, role, &d);
	switch (role) {
	case ROLE_MEM_ALLOC:
	case ROLE_MEM_FREE:
	case ROLE_MEM_REALLOC:
		rp->p->pt = rp_point_at(rp, e->ns);
		ret = rp_mem_event(rp, e, &d);
		if (!ret)
			rp_sample(rp, rp->p->pt);
		return ret;
	case ROLE_FD_OPEN:
		return rp_fd_open(rp, (int64_t)d.key, d.kind);
	case ROLE_FD_CLOSE:
		rp_fd_close(rp, (int64_t)d.key);
		return 0;
	case ROLE_SHM_CREATE:
		return rp_shm_create(rp, d.key, d.size, d.kind);
	case ROLE_SHM_REMOVE:
		rp_shm_remove(rp, d.key);
		return 0;
	case ROLE_SHM_ATTACH:
		return rp_shm_attach(rp, d.key, d.size);
	case ROLE_SHM_DETACH:
		rp_shm_detach(rp, d.key);
		return 0;
	}
	return 0;
}

static void rp_finish(struct rp *rp)
{
	struct rp_priv *p = rp->p;

	for (size_t i = 0; i < rp->nsites; i++) {
		struct rp_site *s = &rp->sites[i];

		if (s->mod_seq <= p->peak_seq) {
			s->peak_bytes = s->live_bytes;
			s->peak_count = s->live_count;
		}
	}
	for (size_t i = 0; i < p->fds.cap; i++) {
		if (!p->fds.v[i].used)
			continue;
		rp->fd.open_at_end++;
		rp->fd.kind[p->fds.v[i].val].open_at_end++;
	}
	rp->shm.live = p->segs.n;
	for (size_t i = 0; i < p->segs.cap; i++)
		if (p->segs.v[i].used)
			rp->shm.live_bytes += p->segs.v[i].size;
	rp->shm.mapped = p->maps.n;
	for (size_t i = 0; i < p->blocks.cap; i++) {
		struct rp_bucket *b;

		if (!p->blocks.v[i].used)
			continue;
		b = &rp->hist_live[rp_size_bucket(p->blocks.v[i].size)];
		b->count++;
		b->bytes += p->blocks.v[i].size;
	}
}

int rp_run(struct rp *rp, struct evs *s, char *err, size_t errlen)
{
	struct evs_event e;
	int ret;

	ret = rp_types(rp, evs_types(s), err, errlen);
	if (ret)
		return ret;
	evs_set_lazy(s, true); /* every field is read with evs_val (F) */
	while ((ret = evs_next_fast(s, &e, err, errlen)) > 0) {
		if (!rp->any_event) {
			rp->first_ns = e.ns;
			rp->any_event = true;
		}
		rp->last_ns = e.ns;
		rp->events++;
		ret = rp_event(rp, &e);
		if (ret)
			return rp_fail(err, errlen, ret, "out of memory");
	}
	if (ret < 0)
		return ret;
	rp_finish(rp);
	return 0;
}

struct rp *rp_new(void)
{
	struct rp *rp = calloc(1, sizeof(*rp));

	if (!rp)
		return NULL;
	rp->p = calloc(1, sizeof(*rp->p));
	if (!rp->p) {
		free(rp);
		return NULL;
	}
	rp->series_ns = 1000;
	rp->p->last_thread = -1;
	return rp;
}

void rp_free(struct rp *rp)
{
	struct rp_priv *p;

	if (!rp)
		return;
	p = rp->p;
	free(p->blocks.v);
	free(p->fds.v);
	free(p->segs.v);
	free(p->maps.v);
	free(p->site_fast);
	free(p->site_idx.keys);
	free(p->site_idx.idx);
	free(p->thread_idx.keys);
	free(p->thread_idx.idx);
	free(p->bt_idx.keys);
	free(p->bt_idx.idx);
	free(p->bts);
	free(p->frames);
	free(p);
	free(rp->sites);
	free(rp->threads);
	free(rp);
}
