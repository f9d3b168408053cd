/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/report.c - the one pass of `rip report` (see report.h).
 *
 * One pass over the events in time order (live_run of live.h).  Live
 * blocks, descriptors, segments and mappings sit in the tables of live.h;
 * sites (backtrace ids) and threads are arrays found through a stk_map.
 *
 * The peak's make-up is kept without a copy at each new peak: new peaks are
 * counted, and every site remembers the count at its last change; a site
 * about to change whose count is not the current one has not changed since
 * the current peak, and still holds the bytes it had then, so they are
 * saved.  At the end, sites unchanged since the peak take their live
 * bytes.  O(1) per event.
 *
 * The series of heap in use over time is RP_SERIES buckets of a width that
 * starts at 1 us and doubles, merging adjacent pairs, whenever the trace
 * outgrows them: bounded, O(1) per event amortized.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rip/resource.h>
#include <internal/grow.h>
#include <internal/hot.h>

#include "analysis/live.h"
#include "analysis/report.h"
#include "analysis/roles.h"
#include "analysis/stacks.h"
#include "analysis/through.h"
#include "read/sym.h"

/* ---- state --------------------------------------------------------------------------- */

/* What a thread did, counted by its stream (struct rp_by_stream) until added to struct rp_thread. */
struct rp_tc {
	uint64_t allocs, bytes;	     /* allocations made by the thread */
	uint64_t frees, freed_bytes; /* blocks it freed (that were seen allocated) */
};

#define RP_NO_TID INT64_MIN /* a stream not bound to a thread yet: no tid is that */

struct rp_priv {
	struct live l;		 /* blocks (val: index of the site), descriptors, segments, maps */
	struct stk_map site_idx; /* backtrace id -> a: index of the site */
	struct stk_map thread_idx; /* tid -> a: index of the thread */
	struct stk_map msite_idx;  /* kind << 32 | bt -> a: index of the module site */
	struct stk_map mkind_idx;  /* kind -> a: index in mkinds */
	struct stk_map mrefs;	   /* refcounted module objects: key -> a: references held */
	struct ev_types *types;	   /* rp->types once the pass is done: its copy */
	size_t msitecap, mkindcap;
	uint32_t *site_fast;	 /* backtrace id -> site index + 1, for ids < RP_SITE_FAST_MAX */
	size_t site_fastcap;
	size_t sitecap, threadcap;
	/*
	 * The thread of each stream's last memory event, before the hash: a
	 * stream is one thread's ring, which another thread may take over.
	 * By stream, not by the last event, since with many threads the lead
	 * changes every few events, and a test of "same thread as the last
	 * event" was a branch mispredicted at each change (288,000 in 2M
	 * events at 1,000 threads).  The stream counts for its thread, and
	 * adds to it when another thread takes it over, or the pass ends
	 * (rp_tc_flush): one line an event (64 bytes, aligned), not the
	 * stream's and the thread's.  One for each of the source's streams
	 * (evs_nstreams: an event's stream is below it, so it is not tested).
	 */
	struct rp_by_stream {
		int64_t tid;  /* RP_NO_TID: none yet */
		uint32_t idx; /* index of the thread */
		struct rp_tc tc;
	} __attribute__((aligned(64))) * by_stream;
	size_t nstreams;
	uint64_t peak_gen; /* new peaks so far */
	/*
	 * The lifetime bucket of v by its highest bit j (rp_life_bucket):
	 * life_base[j], plus one above life_thr[j], the limit inside
	 * [2^j, 2^(j+1)) less one when there is one (UINT64_MAX when not:
	 * no v is above it, 2^64 - 1 either).
	 */
	uint64_t life_thr[64];
	uint8_t life_base[64];
	/*
	 * The series' last bucket takes every memory event (rp_point_slow);
	 * its counts of events, allocations and frees are worked out from
	 * the pass's totals when it stops being the last, or the pass ends
	 * (rp_series_flush): these are the totals when it was last flushed.
	 */
	uint64_t mem_events; /* memory events sampled */
	uint64_t sb_events, sb_allocs, sb_alloc_bytes, sb_frees;
	const struct evs_event *cut_e; /* the mem:unmap (or mapping) being counted, for rp_cut */
	struct rp_tc *cut_t;		 /* its thread's counts */
	/*
	 * The series bucket of the last sample, and its times [lo, hi) in ns
	 * (none: lo > hi); tlo, thi: ticks in it (none: tlo > thi), which
	 * rp_mem_turn tests as ts - tlo < tspan (thi - tlo, 0: none).
	 */
	struct rp_point *s_pt;
	int64_t s_lo, s_hi;
	uint64_t s_tlo, s_thi, s_tspan;
	/*
	 * The pass reads events without ns (live_run without ns) and converts
	 * the ticks of src's clock where ns are needed (rp_ns): blocks keep
	 * ns.  From lin_base up to lin_hi the clock is the line of
	 * evs_clock_line (rate lin_mult); lin_hi 0: nowhere.  lin_span:
	 * lin_hi - lin_base (0: nowhere), for rp_ns's one compare.
	 */
	const struct evs *src;
	uint64_t lin_base, lin_hi, lin_mult, lin_span;
	int64_t lin_ns;
	/* --through: only what stacks through its patterns made counts (rp_set_through) */
	struct thr *thr;
	struct rip_sym *sym;
};

/*
 * rp and its private part in one allocation (rp_new): the part is at a
 * fixed offset from rp, so the pass reaches it without loading rp->p (a
 * load it would repeat after every store through a char pointer, the
 * table's among them).
 */
struct rp_all {
	struct rp rp;
	struct rp_priv p;
};

static inline struct rp_priv *rp_p(const struct rp *rp)
{
	return &((struct rp_all *)(uintptr_t)rp)->p;
}

/* live_ent.val of a block that does not pass the --through filter: followed, not counted */
#define RP_OUT UINT32_MAX

/* The index of key in m, or (when new) next.  -ENOMEM. */
static long rp_index(struct stk_map *m, uint64_t key, size_t next)
{
	bool fresh;
	struct stk_ent *e = stk_map_get(m, key, &fresh);

	if (!e)
		return -ENOMEM;
	if (fresh)
		e->a = next;
	return (long)e->a;
}

/* rip_grow, with the new elements zeroed. */
static int rp_grow_array(void **a, size_t *cap, size_t need, size_t size)
{
	size_t old = *cap;
	int ret = rip_grow(a, cap, size, need, 64);

	if (!ret)
		memset((char *)*a + old * size, 0, (*cap - old) * size);
	return ret;
}


/* ---- sites, threads, backtraces ------------------------------------------------------- */

#define RP_SITE_FAST_MAX (1u << 20)

/*
 * The per-event work of the pass is inline (RP_HOT) down to the counters,
 * with what is rare (a new site or thread, a new series bucket) out of line.
 */
#define RP_HOT static inline RIP_HOT

static __attribute__((noinline)) long rp_site_slow(struct rp *rp, uint32_t bt)
{
	struct rp_priv *p = rp_p(rp);
	long i = rp_index(&p->site_idx, bt, rp->nsites);

	if (i < 0 || i >= RP_OUT)
		return -ENOMEM;
	if (bt < RP_SITE_FAST_MAX && i < UINT32_MAX - 1 &&
	    !rp_grow_array((void **)&p->site_fast, &p->site_fastcap, (size_t)bt + 1,
			   sizeof(*p->site_fast)))
		p->site_fast[bt] = (uint32_t)i + 1;
	if ((size_t)i == rp->nsites) {
		if (rp_grow_array((void **)&rp->sites, &p->sitecap, rp->nsites + 1,
				  sizeof(*rp->sites)))
			return -ENOMEM;
		rp->sites[rp->nsites++].bt = bt;
	}
	return i;
}

/*
 * The index of the site of backtrace bt (what blocks keep in val, not
 * worked out from a pointer), or -ENOMEM.
 */
RP_HOT long rp_site(struct rp *rp, uint32_t bt)
{
	struct rp_priv *p = rp_p(rp);

	/* ids are handed out from 1 up: small ones index an array, no hashing */
	if (bt < p->site_fastcap && p->site_fast[bt])
		return (long)p->site_fast[bt] - 1;
	return rp_site_slow(rp, bt);
}

/* What stream entry c counted, added to its thread. */
static void rp_tc_flush(struct rp *rp, struct rp_by_stream *c)
{
	struct rp_thread *t;

	if (c->tid == RP_NO_TID)
		return;
	t = &rp->threads[c->idx];
	t->allocs += c->tc.allocs;
	t->bytes += c->tc.bytes;
	t->frees += c->tc.frees;
	t->freed_bytes += c->tc.freed_bytes;
	c->tc = (struct rp_tc){ 0 };
}

/* Stream taken by thread tid (found, or added: threads are in order of first use). */
static __attribute__((noinline)) struct rp_tc *rp_thread_slow(struct rp *rp,
							       struct rp_by_stream *c, int32_t tid)
{
	struct rp_priv *p = rp_p(rp);
	long i = rp_index(&p->thread_idx, (uint32_t)tid, rp->nthreads);

	if (i < 0 || (size_t)i > UINT32_MAX)
		return NULL;
	if ((size_t)i == rp->nthreads) {
		if (rp_grow_array((void **)&rp->threads, &p->threadcap, rp->nthreads + 1,
				  sizeof(*rp->threads)))
			return NULL;
		rp->threads[rp->nthreads++].tid = tid;
	}
	rp_tc_flush(rp, c);
	c->tid = tid;
	c->idx = (uint32_t)i;
	return &c->tc;
}

/*
 * The counts of the thread of an event of stream (e->stream) by tid: the
 * stream's, when its last thread is this one (the usual case: a compare).
 */
RP_HOT struct rp_tc *rp_thread(struct rp *rp, uint32_t stream, int32_t tid)
{
	struct rp_by_stream *c = &rp_p(rp)->by_stream[stream]; /* stream < nstreams */

	if (__builtin_expect(c->tid == tid, 1))
		return &c->tc;
	return rp_thread_slow(rp, c, tid);
}

/*
 * During the pass a site's live_count and live_bytes hold what left it
 * (blocks freed or replaced, bytes unmapped), so that an allocation adds
 * to two counters, not four: what is live is count and bytes less those
 * (modulo 2^64, as the counts were), made so by rp_finish.
 */
static void rp_site_live(struct rp_site *s, uint64_t *count, uint64_t *bytes)
{
	*count = s->count - s->live_count;
	*bytes = s->bytes - s->live_bytes;
}

/*
 * The site is about to change: keep what it held at the peak, when it did
 * not change since (a store only then, not every event).
 */
static __attribute__((noinline)) void rp_touch_slow(struct rp *rp, struct rp_site *s)
{
	rp_site_live(s, &s->peak_count, &s->peak_bytes);
	s->mod_gen = rp_p(rp)->peak_gen;
}

RP_HOT void rp_touch(struct rp *rp, struct rp_site *s)
{
	if (__builtin_expect(s->mod_gen != rp_p(rp)->peak_gen, 0))
		rp_touch_slow(rp, s); /* out of line: its loads are not hoisted into every event */
}

const uint64_t *rp_bt(const struct rp *rp, uint32_t id, uint32_t *n)
{
	return stk_bt(&rp_p(rp)->l.bts, id, n);
}

/* ---- --through ------------------------------------------------------------------------- */

void rp_set_through(struct rp *rp, struct thr *t, struct rip_sym *sym)
{
	rp_p(rp)->thr = t;
	rp_p(rp)->sym = sym;
	rp->through = t != NULL;
}

const struct stk_bts *rp_bts(const struct rp *rp)
{
	return &rp_p(rp)->l.bts;
}

/*
 * Does a resource made by stack bt count?  Always without a filter; else
 * the filter's answer, kept by bt (a stack not defined yet does not: a
 * race of two threads, counted in thr_stackless).  -ENOMEM.
 */
static __attribute__((noinline)) int rp_through_slow(struct rp *rp, uint32_t bt)
{
	uint32_t n = 0;
	const uint64_t *f = bt ? stk_bt(&rp_p(rp)->l.bts, bt, &n) : NULL;

	return thr_want(rp_p(rp)->thr, rp_p(rp)->sym, bt, f, n);
}

/*
 * The same, in a pass with (thr) or without the filter: a constant where
 * the pass is inlined, which has one copy of each (rp_event_all,
 * rp_event_thr), so that without it the tests fold away.
 */
RP_HOT int rp_through(struct rp *rp, uint32_t bt, bool thr)
{
	return thr ? rp_through_slow(rp, bt) : 1;
}

/* ---- memory --------------------------------------------------------------------------- */

RP_HOT unsigned rp_size_bucket(uint64_t size)
{
	return size ? 64u - (unsigned)__builtin_clzll(size) : 0;
}

/* 10^k; the lifetime buckets are bounded by 10^3 ns (1 us) ... 10^10 ns (10 s). */
static const uint64_t rp_pow10[20] = {
	1ull,
	10ull,
	100ull,
	1000ull,
	10000ull,
	100000ull,
	1000000ull,
	10000000ull,
	100000000ull,
	1000000000ull,
	10000000000ull,
	100000000000ull,
	1000000000000ull,
	10000000000000ull,
	100000000000000ull,
	1000000000000000ull,
	10000000000000000ull,
	100000000000000000ull,
	1000000000000000000ull,
	10000000000000000000ull,
};
#define RP_LIFE_FIRST 3 /* the first limit is 10^3 ns */
_Static_assert(RP_LIFE == 9 && RP_LIFE_FIRST + RP_LIFE - 1 < 20,
	       "one limit per bucket but the last: 10^3 ... 10^10 ns");

/* The upper limit of each lifetime bucket but the last: 1 us, 10 us, ... 10 s. */
uint64_t rp_life_limit(unsigned k)
{
	return k < RP_LIFE - 1 ? rp_pow10[RP_LIFE_FIRST + k] : 0;
}

/*
 * The tables of rp_life_bucket: a binary octave [2^j, 2^(j+1)) holds at
 * most one limit (they are powers of ten), so the bucket of v in it is the
 * number of limits up to 2^j, plus one if v reaches the limit inside.
 */
static void rp_life_init(struct rp_priv *p)
{
	for (unsigned j = 0; j < 64; j++) {
		uint64_t lo = 1ull << j, hi = j < 63 ? (1ull << (j + 1)) - 1 : UINT64_MAX;

		p->life_base[j] = 0;
		p->life_thr[j] = UINT64_MAX;
		for (unsigned k = 0; k < RP_LIFE - 1; k++) {
			uint64_t lim = rp_life_limit(k);

			if (lim <= lo)
				p->life_base[j]++;
			else if (lim <= hi)
				p->life_thr[j] = lim - 1;
		}
	}
}

/*
 * The bucket of a lifetime: how many limits it reaches, without a branch,
 * since lifetimes come in no order a predictor could follow (a loop that
 * stopped at the first limit above it mispredicted on a third of the frees
 * at 1,000 threads; counting all eight limits cost 40 instructions a
 * free).  From its highest bit and one compare (rp_life_init): floor(log10)
 * from log2 (bits * 1233 >> 12, one too many below that power of ten, then
 * clamped to the buckets) took 6 more instructions a free.
 */
RP_HOT unsigned rp_life_bucket(const struct rp_priv *p, uint64_t life)
{
	uint64_t v = life | 1; /* 0 and 1 share bucket 0 */
	unsigned j = 63u - (unsigned)__builtin_clzll(v);

	return p->life_base[j] + (v > p->life_thr[j]);
}

/*
 * The blocks live now: each allocation counted made one, each free and
 * each block made again while live (replaced) took one; kept as those
 * counts, not one more counter an event.
 */
static uint64_t rp_live_count(const struct rp *rp)
{
	return rp->allocs - rp->frees - rp->replaced;
}

/* A block of site val and size bytes (live) stops counting as live, at its site and in all. */
RP_HOT void rp_unlive(struct rp *rp, uint32_t val, uint64_t size)
{
	struct rp_site *s = &rp->sites[val];

	rp_touch(rp, s);
	s->live_count++; /* gone (rp_site_live) */
	s->live_bytes += size;
	rp->live_bytes -= size;
}

/* evs_ns(ts) off the clock's line (rp_ns) */
static __attribute__((noinline)) int64_t rp_ns_slow(const struct rp_priv *p, uint64_t ts)
{
	return evs_ns(p->src, ts);
}

/*
 * evs_ns(ts): on the clock's line (p->lin_*: from lin_base up to where it
 * saturates) lin_ns + ((ts - lin_base) * lin_mult >> 32), which neither
 * overflows nor saturates there, so with no test of either.
 */
RP_HOT int64_t rp_ns(const struct rp_priv *p, uint64_t ts)
{
	uint64_t x = ts - p->lin_base;

	/* lin_base <= ts < lin_hi, one compare */
	if (__builtin_expect(x < p->lin_span, 1))
		return p->lin_ns + (int64_t)(((unsigned __int128)x * p->lin_mult) >> 32);
	return rp_ns_slow(p, ts);
}

/*
 * rp_ns(ts) for the time of an event that rp_mem_turn's test found in the
 * series' last bucket (line): in ticks that bucket lies on the clock's
 * line (rp_point_ticks), so its test is not made again.
 */
RP_HOT int64_t rp_ns_at(const struct rp_priv *p, uint64_t ts, bool line)
{
	if (line)
		return p->lin_ns +
		       (int64_t)(((unsigned __int128)(ts - p->lin_base) * p->lin_mult) >> 32);
	return rp_ns(p, ts);
}

/*
 * The lifetime of a block made at ns made and released at ns gone, 0 when
 * gone is before made: exact, as an unsigned difference (the buckets end
 * at 10 s, so one of 2^63 ns or more is in the last, as a saturated one
 * was), with no test of overflow.
 */
RP_HOT uint64_t rp_life(int64_t made, int64_t gone)
{
	return gone > made ? (uint64_t)gone - (uint64_t)made : 0;
}

/* A block of site val and size bytes made at ns made, released at time ns by thread t. */
RP_HOT void rp_release(struct rp *rp, uint32_t val, uint64_t size, int64_t made, int64_t ns,
		       struct rp_tc *t, bool thr)
{
	struct rp_bucket *b = &rp->life[rp_life_bucket(rp_p(rp), rp_life(made, ns))];

	if (thr && __builtin_expect(val == RP_OUT, 0))
		return; /* left out by --through */
	rp_unlive(rp, val, size);
	b->count++;
	b->bytes += size;
	rp->frees++;
	rp->freed_bytes += size;
	t->frees++;
	t->freed_bytes += size;
}

/* A block made by a stack the --through filter leaves out: followed so its free matches. */
static __attribute__((noinline)) int rp_alloc_out(struct rp *rp, const struct evs_event *e,
						  uint64_t addr, uint64_t size)
{
	struct live_ent old;
	int rep =
		live_mem_make(&rp_p(rp)->l, addr, 1, 0, RP_OUT, size, rp_ns(rp_p(rp), e->ts), &old);

	if (rep < 0)
		return rep;
	if (rep && old.val != RP_OUT) {
		rp->replaced++;
		rp_unlive(rp, old.val, old.size);
	}
	return 0;
}

RP_HOT int rp_alloc(struct rp *rp, const struct evs_event *e, uint64_t addr, uint64_t size,
		    uint32_t bt, struct rp_tc *t, bool thr, bool line)
{
	struct rp_site *s;
	struct live_ent old;
	int rep, in = rp_through(rp, bt, thr);
	long i;

	if (in <= 0)
		return in < 0 ? in : rp_alloc_out(rp, e, addr, size);
	i = rp_site(rp, bt);
	if (i < 0)
		return -ENOMEM;
	s = &rp->sites[i];
	rep = live_mem_make(&rp_p(rp)->l, addr, 1, 0, (uint32_t)i, size,
			    rp_ns_at(rp_p(rp), e->ts, line), &old);
	if (rep < 0)
		return rep;
	if (rep && old.val != RP_OUT) {
		/* made again while live: its free was not seen; the old block goes */
		rp->replaced++;
		rp_unlive(rp, old.val, old.size);
	}
	rp_touch(rp, s);
	s->count++; /* and live (rp_site_live) */
	s->bytes += size;
	rp->allocs++;
	rp->alloc_bytes += size;
	rp->live_bytes += size;
	rp->hist[rp_size_bucket(size)].count++;
	rp->hist[rp_size_bucket(size)].bytes += size;
	t->allocs++;
	t->bytes += size;
	return 0;
}

/*
 * A piece of mapping c->origin unmapped: the bytes it lost are no longer
 * live (freed bytes, not a free), or, when none is left, the mapping is
 * released (a free).
 */
static int rp_cut(void *arg, const struct live_cut *c)
{
	struct rp *rp = arg;
	struct live_ent b, old;
	uint64_t gone = c->hi - c->lo;
	struct rp_site *s;

	if (!live_mem_find(&rp_p(rp)->l, c->origin, &b))
		return 0;
	if (gone >= b.size) {
		live_mem_release(&rp_p(rp)->l, c->origin, NULL);
		rp_release(rp, b.val, b.size, b.ns, rp_ns(rp_p(rp), rp_p(rp)->cut_e->ts),
			   rp_p(rp)->cut_t, true);
		return 0;
	}
	b.size -= gone;
	if (live_mem_put(&rp_p(rp)->l, &b, &old) < 0)
		return -ENOMEM;
	if (b.val == RP_OUT)
		return 0;
	s = &rp->sites[b.val];
	rp_touch(rp, s);
	s->live_bytes += gone; /* gone (rp_site_live) */
	rp->live_bytes -= gone;
	rp->freed_bytes += gone;
	rp_p(rp)->cut_t->freed_bytes += gone;
	return 0;
}

/* Range [addr, addr + size) unmapped; kind mmap: by a mapping placed over it. */
static int rp_unmap(struct rp *rp, const struct evs_event *e, uint64_t addr, uint64_t size,
		    uint64_t kind, struct rp_tc *t)
{
	int n, r;

	rp_p(rp)->cut_e = e;
	rp_p(rp)->cut_t = t;
	n = live_maps_unmap(&rp_p(rp)->l.maps, addr, size, rp_cut, rp);
	if (n < 0)
		return n;
	r = live_rsv_cut(&rp_p(rp)->l.rsv, addr, size);
	if (r < 0)
		return r;
	/* none of it was seen made nor reserved: as rip leaks (lk_unmap), munmap may be of a file */
	rp->frees_unseen += !n && !r && kind == RIP_MEM_MREMAP;
	return 0;
}

RP_HOT void rp_free_addr(struct rp *rp, const struct evs_event *e, uint64_t addr, struct rp_tc *t,
			 bool thr, bool line)
{
	const struct live_piece *p;
	struct live_ent b;

	if (!addr)
		return;
	if (live_mem_release(&rp_p(rp)->l, addr, &b))
		rp_release(rp, b.val, b.size, b.ns, rp_ns_at(rp_p(rp), e->ts, line), t, thr);
	else if ((p = live_maps_at(&rp_p(rp)->l.maps, addr))) /* a trace from before mem:unmap */
		rp_unmap(rp, e, p->start, p->end - p->start, RIP_MEM_MUNMAP, t);
	else
		rp->frees_unseen++;
}

/* A mapping made at [addr, addr + size), over whatever was there. */
static int rp_map_at(struct rp *rp, const struct evs_event *e, uint64_t addr, uint64_t size,
		     uint32_t bt, struct rp_tc *t)
{
	uint64_t key;
	int ret = rp_unmap(rp, e, addr, size, RIP_MEM_MMAP, t);

	if (ret)
		return ret;
	key = live_map_key(&rp_p(rp)->l.maps);
	if (live_maps_add(&rp_p(rp)->l.maps, addr, size, key))
		return -ENOMEM;
	return rp_alloc(rp, e, key, size, bt, t, rp->through, false);
}

/*
 * A mapping; a reservation, address space only (not counted: it unmaps
 * what it is placed over); an mprotect: a mapping of each reserved part it
 * covers.
 */
static int rp_map(struct rp *rp, const struct evs_event *e, const struct role_res *d,
		  struct rp_tc *t)
{
	struct live_piece *v;
	size_t n;
	int ret;

	if (live_is_reserve(d->kind)) {
		ret = rp_unmap(rp, e, d->key, d->size, RIP_MEM_MMAP, t);
		return ret ? ret : live_rsv_add(&rp_p(rp)->l.rsv, d->key, d->size);
	}
	if (d->kind != RIP_MEM_MPROTECT)
		return rp_map_at(rp, e, d->key, d->size, d->bt, t);
	ret = live_rsv_take(&rp_p(rp)->l.rsv, d->key, d->size, &v, &n);
	for (size_t i = 0; !ret && i < n; i++)
		ret = rp_map_at(rp, e, v[i].start, v[i].end - v[i].start, d->bt, t);
	free(v);
	return ret;
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
	rp_p(rp)->s_lo = INT64_MAX; /* buckets changed: forget the last one */
	rp_p(rp)->s_hi = INT64_MIN;
	rp_p(rp)->s_tlo = UINT64_MAX;
	rp_p(rp)->s_thi = 0;
	rp_p(rp)->s_tspan = 0;
}

/*
 * The ticks from ts on that rp_mem_turn may take for the bucket of ns
 * [s_lo, s_hi) that holds the event at ts: up to the first tick of s_hi,
 * where the clock is its line (rp_ns): there evs_ns(t) >= s_hi when
 * (t - lin_base) * lin_mult >= (s_hi - lin_ns) << 32.  None elsewhere.
 */
static void rp_point_ticks(struct rp_priv *p, uint64_t ts, int64_t ns)
{
	unsigned __int128 need, x;
	uint64_t hi = p->lin_hi;

	p->s_tlo = UINT64_MAX;
	p->s_thi = 0;
	p->s_tspan = 0;
	if (p->s_lo > p->s_hi || ns < p->s_lo || ns >= p->s_hi || ts < p->lin_base || ts >= hi)
		return;
	/* s_hi > ns >= lin_ns: the difference fits 64 bits */
	need = (unsigned __int128)((uint64_t)p->s_hi - (uint64_t)p->lin_ns) << 32;
	x = (need + p->lin_mult - 1) / p->lin_mult;
	if (x < hi - p->lin_base)
		hi = p->lin_base + (uint64_t)x;
	/* what the line says, checked against the clock itself */
	if (hi <= ts || evs_ns(p->src, hi - 1) >= p->s_hi)
		return;
	p->s_tlo = ts;
	p->s_thi = hi;
	p->s_tspan = hi - ts; /* hi > ts */
}

/*
 * What the memory events since the last flush added to the series' last
 * bucket (they all go there): their number, allocations and frees from the
 * pass's totals, and the bytes in use after the last of them.
 */
static void rp_series_flush(struct rp *rp)
{
	struct rp_priv *p = rp_p(rp);
	struct rp_point *pt;

	if (rp->nseries) {
		pt = &rp->series[rp->nseries - 1];
		if (p->mem_events != p->sb_events) {
			pt->events += p->mem_events - p->sb_events;
			pt->last_bytes = rp->live_bytes;
		}
		pt->allocs += rp->allocs - p->sb_allocs;
		pt->alloc_bytes += rp->alloc_bytes - p->sb_alloc_bytes;
		pt->frees += rp->frees - p->sb_frees;
	}
	p->sb_events = p->mem_events;
	p->sb_allocs = rp->allocs;
	p->sb_alloc_bytes = rp->alloc_bytes;
	p->sb_frees = rp->frees;
}

/*
 * The series point of a memory event at ticks ts, before the event is
 * counted: always the last bucket, a new one or the one before (time went
 * back); rp_sample notes the bytes in use after the event, and
 * rp_series_flush the rest when the bucket stops being the last.
 */
static __attribute__((noinline)) struct rp_point *rp_point_slow(struct rp *rp, uint64_t ts)
{
	struct rp_priv *p = rp_p(rp);
	int64_t ns = evs_ns(p->src, ts);
	uint64_t d = ns > rp->first_ns ? (uint64_t)(ns - rp->first_ns) : 0;
	size_t i;

	rp_series_flush(rp);
	while ((i = (size_t)(d / rp->series_ns)) >= RP_SERIES)
		rp_series_merge(rp);
	p->s_lo = INT64_MAX;
	p->s_hi = INT64_MIN;
	if (i < rp->nseries - (rp->nseries > 0)) {
		i = rp->nseries - 1; /* time went back (threads' clocks): the last bucket */
	} else {
		/*
		 * Remember the bucket: it is the last one, and holds this event.
		 * In event times, so that the next event tests its own time
		 * (when they fit: not in a trace whose times are near the ends).
		 */
		uint64_t lo = (uint64_t)i * rp->series_ns; /* no more than d */
		uint64_t room = rp->first_ns >= 0 ? (uint64_t)(INT64_MAX - rp->first_ns) : 0;

		if (lo <= room && rp->series_ns <= room - lo) {
			p->s_pt = &rp->series[i];
			p->s_lo = rp->first_ns + (int64_t)lo;
			p->s_hi = p->s_lo + (int64_t)rp->series_ns;
		}
	}
	rp_point_ticks(p, ts, ns);
	if (i >= rp->nseries)
		rp->nseries = i + 1;
	/* rp_sample's first test takes the first sample of an empty bucket */
	if (!rp->series[i].events)
		rp->series[i].min_bytes = UINT64_MAX;
	return &rp->series[i];
}

/*
 * Memory event e made a new peak of heap bytes in use.  Only allocations
 * raise the bytes, each the last thing its event does (a realloc frees
 * first, a mapping unmaps what was there first), so the end of the event
 * is where the pass looked after each allocation; and every bucket's
 * maximum is at most the peak, so a new peak is a new maximum of its
 * bucket (rp_sample).  (Should the bytes in use wrap 64 bits, sizes no
 * program has, the peak is the largest of the bytes after each event, a
 * free's too.)
 */
static __attribute__((noinline)) void rp_peak(struct rp *rp, const struct evs_event *e)
{
	rp->peak_bytes = rp->live_bytes;
	rp->peak_count = rp_live_count(rp);
	rp->peak_ns = rp_ns(rp_p(rp), e->ts);
	rp->peak_event = rp->events;
	rp_p(rp)->peak_gen++; /* after this event's touches */
}

/*
 * After a memory event counted in pt: the bytes in use now.  pt came from
 * rp_point_slow, which gave a bucket without events a minimum above any, and
 * its maximum is 0 (zeroed): the first sample is both, with no test of
 * pt->events.
 */
RP_HOT void rp_sample(struct rp *rp, struct rp_point *pt, const struct evs_event *e)
{
	if (rp->live_bytes < pt->min_bytes)
		pt->min_bytes = rp->live_bytes;
	if (rp->live_bytes > pt->max_bytes) {
		pt->max_bytes = rp->live_bytes;
		/* a new peak is a new maximum of its bucket: no test of the peak otherwise */
		if (rp->live_bytes > rp->peak_bytes)
			rp_peak(rp, e);
	}
	rp_p(rp)->mem_events++; /* the rest of pt: rp_series_flush */
}

/* ---- descriptors and shared memory ---------------------------------------------------- */

/* Each kind counted by itself (a kind past RP_KINDS would count as "other"). */
#define RP_FD_KIND_N(suffix, name) +1
_Static_assert(RP_KINDS > 0 RIP_FD_KINDS(RP_FD_KIND_N), "RP_KINDS is too small for enum rip_fd_kind");

static unsigned rp_kind(uint64_t k)
{
	return k < RP_KINDS ? (unsigned)k : 0;
}

static int rp_fd_open(struct rp *rp, int64_t fd, uint64_t kind, uint64_t flags)
{
	struct rp_fd *f = &rp->fd;
	struct live_ent *o;
	bool fresh;

	if (fd < 0)
		return 0;
	f->opened++;
	f->kind[rp_kind(kind)].opened++;
	o = live_make(&rp_p(rp)->l, LIVE_FD, (uint64_t)fd, NULL, &fresh);
	if (!o)
		return -ENOMEM;
	f->reopened += !fresh; /* its close was not recorded */
	o->kind = (uint16_t)rp_kind(kind);
	o->size = (flags & O_CLOEXEC) != 0; /* a descriptor has no size: closed by an execve? */
	if (rp_p(rp)->l.t[LIVE_FD].n > f->peak_open)
		f->peak_open = rp_p(rp)->l.t[LIVE_FD].n;
	return 0;
}

static void rp_fd_close(struct rp *rp, int64_t fd)
{
	struct live_ent o;

	if (fd < 0 || !live_release(&rp_p(rp)->l, LIVE_FD, (uint64_t)fd, &o)) {
		rp->fd.closed_unseen++;
		return;
	}
	rp->fd.closed++;
	rp->fd.kind[o.kind].closed++;
}

/* Descriptors first..last closed: each one held open is a close of its own. */
static int rp_fd_close_range(struct rp *rp, uint64_t first, uint64_t last)
{
	uint64_t *keys;
	size_t n;

	if (live_keys_in(&rp_p(rp)->l.t[LIVE_FD], live_esz(&rp_p(rp)->l, LIVE_FD), first, last,
			 &keys, &n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		rp_fd_close(rp, (int64_t)keys[i]);
	free(keys);
	return 0;
}

/* Segment key resized (ftruncate): its bytes are size now. */
static void rp_shm_resize(struct rp *rp, uint64_t key, uint64_t size)
{
	struct live_ent *o = live_find(&rp_p(rp)->l, LIVE_SHM, key);

	if (!o)
		return;
	if (size > o->size)
		rp->shm.created_bytes += size - o->size;
	o->size = size;
}

static int rp_shm_create(struct rp *rp, uint64_t key, uint64_t size, uint64_t kind)
{
	struct rp_shm *m = &rp->shm;
	struct live_ent *o;
	bool fresh;

	if (kind == RIP_SHM_MEMFD) {
		m->memfd++; /* lives as long as its descriptor and mappings */
		return 0;
	}
	if (kind == RIP_SHM_OPEN_EXISTING || kind == RIP_SHM_GET_EXISTING) {
		m->opened++; /* made by another process (or before): not this one's to remove */
		return 0;
	}
	m->created++;
	m->created_bytes += size;
	o = live_make(&rp_p(rp)->l, LIVE_SHM, key, NULL, &fresh);
	if (!o)
		return -ENOMEM;
	o->size = size; /* shm_open of an existing name: the same segment */
	return 0;
}

static void rp_shm_remove(struct rp *rp, uint64_t key)
{
	if (live_release(&rp_p(rp)->l, LIVE_SHM, key, NULL))
		rp->shm.removed++;
	else
		rp->shm.removed_unseen++;
}

/* A piece of attachment c->origin detached: it maps less, or nothing and is detached. */
static int rp_shm_cut(void *arg, const struct live_cut *c)
{
	struct rp *rp = arg;
	struct live_ent *o = live_find(&rp_p(rp)->l, LIVE_SHM_MAP, c->origin);
	uint64_t cut = c->hi - c->lo;

	if (!o)
		return 0;
	if (cut > o->size)
		cut = o->size;
	rp->shm.mapped_bytes -= cut;
	o->size -= cut;
	if (!o->size) {
		live_release(&rp_p(rp)->l, LIVE_SHM_MAP, c->origin, NULL);
		rp->shm.detached++;
	}
	return 0;
}

/*
 * [addr, addr + size) detached: a munmap of part of a shared mapping
 * records just that part (a hole, a trimmed end), so attachments are kept
 * as pieces (live.smaps) and one is detached when its last byte goes.
 * size 0 (shmdt): the whole attachment at addr.  placed: by an attachment
 * made over it (nothing unseen then).
 */
static int rp_shm_detach(struct rp *rp, uint64_t addr, uint64_t size, bool placed)
{
	const struct live_piece *p;
	int n;

	if (!size) {
		p = live_maps_at(&rp_p(rp)->l.smaps, addr);
		if (!p) {
			rp->shm.detached_unseen++;
			return 0;
		}
		size = p->end - p->start;
	}
	n = live_maps_unmap(&rp_p(rp)->l.smaps, addr, size, rp_shm_cut, rp);
	if (n < 0)
		return n;
	rp->shm.detached_unseen += !n && !placed;
	return 0;
}

static int rp_shm_attach(struct rp *rp, uint64_t addr, uint64_t size)
{
	struct rp_shm *m = &rp->shm;
	struct live_ent *o;
	uint64_t key;
	bool fresh;
	int ret = rp_shm_detach(rp, addr, size, true);

	if (ret)
		return ret;
	m->attached++;
	m->attached_bytes += size;
	key = live_map_key(&rp_p(rp)->l.smaps);
	if (live_maps_add(&rp_p(rp)->l.smaps, addr, size, key))
		return -ENOMEM;
	o = live_make(&rp_p(rp)->l, LIVE_SHM_MAP, key, NULL, &fresh);
	if (!o)
		return -ENOMEM;
	o->size = size;
	m->mapped_bytes += size;
	if (m->mapped_bytes > m->peak_mapped_bytes)
		m->peak_mapped_bytes = m->mapped_bytes;
	return 0;
}

/* ---- the pass ------------------------------------------------------------------------- */

/*
 * A memory event of role role (d->role, a constant where this is inlined);
 * line: its time is on the clock's line (rp_ns_at).
 */
RP_HOT int rp_mem_event(struct rp *rp, const struct evs_event *e, const struct role_res *d,
			int role, bool thr, bool line)
{
	struct rp_tc *t;

	if (role == ROLE_MEM_ALLOC && !d->key) {
		if (rp_through(rp, d->bt, thr) > 0) {
			rp->failed++;
			rp->failed_kind[d->kind < RP_KINDS ? d->kind : 0]++;
		}
		return 0;
	}
	t = rp_thread(rp, e->stream, e->tid);
	if (!t)
		return -ENOMEM;
	switch (role) {
	case ROLE_MEM_ALLOC:
		if (live_is_mapping(d->kind) || live_is_reserve(d->kind))
			return rp_map(rp, e, d, t);
		return rp_alloc(rp, e, d->key, d->size, d->bt, t, thr, line);
	case ROLE_MEM_UNMAP:
		return rp_unmap(rp, e, d->key, d->size, d->kind, t);
	case ROLE_MEM_FREE:
		rp_free_addr(rp, e, d->key, t, thr, line);
		return 0;
	case ROLE_MEM_REALLOC:
		/*
		 * old 0: an allocation, counted as malloc's are (the compiler makes
		 * realloc(NULL, n) a call of malloc); addr 0 and size 0: a free of
		 * old; addr 0 (a writer that recorded failures so): failed
		 */
		if (!d->key && d->size) {
			if (rp_through(rp, d->bt, thr) > 0) {
				rp->failed++;
				rp->failed_kind[RIP_MEM_REALLOC]++;
			}
			return 0;
		}
		rp_free_addr(rp, e, d->old, t, thr, line);
		if (!d->key)
			return 0;
		if (d->old) /* kept: asked again in rp_alloc */
			rp->reallocs += rp_through(rp, d->bt, thr) > 0;
		return rp_alloc(rp, e, d->key, d->size, d->bt, t, thr, line);
	}
	return 0;
}

/*
 * A memory event, counted in its series point: the last event's bucket,
 * when its time falls there (ts - s_tlo < s_tspan, one compare: no
 * division, and the time is on the clock's line), else rp_point_slow's.
 * Two copies of the event, so that in the first rp_ns_at has no test.
 */
RP_HOT int rp_mem_turn(struct rp *rp, const struct evs_event *e, const struct role_res *d,
		       int role, bool thr)
{
	struct rp_priv *p = rp_p(rp);
	struct rp_point *pt;
	int ret;

	if (__builtin_expect(e->ts - p->s_tlo < p->s_tspan, 1)) {
		pt = p->s_pt;
		ret = rp_mem_event(rp, e, d, role, thr, true);
	} else {
		pt = rp_point_slow(rp, e->ts);
		ret = rp_mem_event(rp, e, d, role, thr, false);
	}
	if (!ret)
		rp_sample(rp, pt, e);
	return ret;
}

/* ---- the kinds of tracing modules ---- */

static struct rp_mkind *rp_mkind_of(struct rp *rp, uint32_t kind)
{
	long i = rp_index(&rp_p(rp)->mkind_idx, kind, rp->nmkinds);

	if (i < 0)
		return NULL;
	if ((size_t)i == rp->nmkinds) {
		if (RIP_GROW(rp->mkinds, rp_p(rp)->mkindcap, rp->nmkinds + 1, 8))
			return NULL;
		rp->mkinds[rp->nmkinds++] = (struct rp_mkind){ .kind = kind };
	}
	return &rp->mkinds[i];
}

static long rp_msite_of(struct rp *rp, uint32_t kind, uint32_t bt)
{
	long i = rp_index(&rp_p(rp)->msite_idx, (uint64_t)kind << 32 | bt, rp->nmsites);

	if (i < 0)
		return i;
	if ((size_t)i == rp->nmsites) {
		if (RIP_GROW(rp->msites, rp_p(rp)->msitecap, rp->nmsites + 1, 64))
			return -ENOMEM;
		rp->msites[rp->nmsites++] = (struct rp_msite){ .kind = kind, .bt = bt };
	}
	return i;
}

/* A res:* event of a kind the trace declares (others are not counted). */
static __attribute__((noinline)) int rp_module(struct rp *rp, const struct evs_event *e,
					       const struct role_res *d)
{
	const struct ev_type *t = role_kind(rp->types, d->kind);
	struct rp_mkind *k;
	struct live_ent *o;
	struct stk_ent *x;
	bool fresh;
	long i;

	if (!t)
		return 0;
	k = rp_mkind_of(rp, (uint32_t)d->kind);
	if (!k)
		return -ENOMEM;
	switch (d->role) {
	case ROLE_RES_ACQUIRE:
	case ROLE_RES_TRANSFER:
		i = rp_msite_of(rp, (uint32_t)d->kind, d->bt);
		if (i < 0)
			return -ENOMEM;
		rp->msites[i].count++;
		rp->msites[i].bytes += d->size;
		k->count++;
		k->bytes += d->size;
		if (d->role == ROLE_RES_TRANSFER)
			return 0;
		o = live_make(&rp_p(rp)->l, LIVE_RES, d->key, NULL, &fresh);
		if (!o)
			return -ENOMEM;
		o->used = 1;
		o->kind = (uint16_t)d->kind;
		o->val = (uint32_t)i;
		o->size = d->size;
		o->ns = rp_ns(rp_p(rp), e->ts);
		if (t->flags & RIP_EVTYPE_REFCOUNT) {
			x = stk_map_get(&rp_p(rp)->mrefs, d->key, &fresh);
			if (!x)
				return -ENOMEM;
			x->a = 1;
		}
		return 0;
	case ROLE_RES_REF:
	case ROLE_RES_UNREF:
		x = stk_map_find(&rp_p(rp)->mrefs, d->key);
		if (!x || !live_find(&rp_p(rp)->l, LIVE_RES, d->key))
			return 0;
		if (d->role == ROLE_RES_REF) {
			x->a++;
			return 0;
		}
		if (--x->a)
			return 0;
		stk_map_del(&rp_p(rp)->mrefs, x);
		/* the last reference: released */
		break;
	case ROLE_RES_RELEASE:
		x = stk_map_find(&rp_p(rp)->mrefs, d->key);
		if (x)
			stk_map_del(&rp_p(rp)->mrefs, x);
		break;
	default:
		return 0;
	}
	if (live_release(&rp_p(rp)->l, LIVE_RES, d->key, NULL))
		k->releases++;
	else
		k->releases_unseen++;
	return 0;
}

/* always_inline: live_run and live_run_held call it, each as fast as one; thr: rp->through */
RP_HOT int rp_event(void *arg, const struct evs_event *e, const struct role_res *d, bool thr)
{
	struct rp *rp = arg;

	/* one dispatch on the role: each case passes it on as a constant */
	switch (d->role) {
	case ROLE_MEM_ALLOC:
		return rp_mem_turn(rp, e, d, ROLE_MEM_ALLOC, thr);
	case ROLE_MEM_FREE:
		return rp_mem_turn(rp, e, d, ROLE_MEM_FREE, thr);
	case ROLE_MEM_REALLOC:
		return rp_mem_turn(rp, e, d, ROLE_MEM_REALLOC, thr);
	case ROLE_MEM_UNMAP:
		return rp_mem_turn(rp, e, d, ROLE_MEM_UNMAP, thr);
	}
	if (thr)
		return 0; /* --through: memory only (descriptors and shared memory not counted) */
	switch (d->role) {
	case ROLE_FD_OPEN:
		return rp_fd_open(rp, (int64_t)d->key, d->kind, d->old);
	case ROLE_FD_CLOSE:
		rp_fd_close(rp, (int64_t)d->key);
		return 0;
	case ROLE_FD_CLOSE_RANGE:
		return rp_fd_close_range(rp, d->key, d->size);
	case ROLE_SHM_RESIZE:
		rp_shm_resize(rp, d->key, d->size);
		return 0;
	case ROLE_SHM_CREATE:
		return rp_shm_create(rp, d->key, d->size, d->kind);
	case ROLE_SHM_REMOVE:
		rp_shm_remove(rp, d->key);
		return 0;
	case ROLE_SHM_ATTACH:
		return rp_shm_attach(rp, d->key, d->size);
	case ROLE_SHM_DETACH:
		return rp_shm_detach(rp, d->key, d->size, false);
	case ROLE_RES_ACQUIRE:
	case ROLE_RES_RELEASE:
	case ROLE_RES_REF:
	case ROLE_RES_UNREF:
	case ROLE_RES_TRANSFER:
		return rp_module(rp, e, d);
	}
	return 0;
}

/* The pass without --through, and with it (rp_set_through): each its own copy. */
static inline RIP_HOT int rp_event_all(void *arg, const struct evs_event *e, const struct role_res *d)
{
	return rp_event(arg, e, d, false);
}

static inline RIP_HOT int rp_event_thr(void *arg, const struct evs_event *e, const struct role_res *d)
{
	return rp_event(arg, e, d, true);
}

/* The rest of the pass once the table of blocks is big (live_run_held), out of line. */
static __attribute__((noinline)) int rp_held_all(void *arg, struct evs *s, struct evs_event *e,
						 struct role_res *d, int role, int *fail, char *err,
						 size_t errlen)
{
	struct rp *rp = arg;

	return live_run_held(&rp_p(rp)->l, s, &rp->tr, rp_event_all, rp, e, d, role, fail, err,
			     errlen, false, true);
}

static __attribute__((noinline)) int rp_held_thr(void *arg, struct evs *s, struct evs_event *e,
						 struct role_res *d, int role, int *fail, char *err,
						 size_t errlen)
{
	struct rp *rp = arg;

	return live_run_held(&rp_p(rp)->l, s, &rp->tr, rp_event_thr, rp, e, d, role, fail, err,
			     errlen, false, true);
}

/* A block of size bytes live at the end, counted in the histogram of what is left. */
static void rp_live_block(struct rp *rp, uint64_t size)
{
	struct rp_bucket *b = &rp->hist_live[rp_size_bucket(size)];

	b->count++;
	b->bytes += size;
}

static void rp_finish(struct rp *rp, bool execed)
{
	struct rp_priv *p = rp_p(rp);

	rp_series_flush(rp);
	rp->live_count = rp_live_count(rp);
	rp->reserved_bytes = live_rsv_bytes(&p->l.rsv, &rp->reserved_ranges);
	for (size_t i = 0; i < p->nstreams; i++)
		rp_tc_flush(rp, &p->by_stream[i]);
	for (size_t i = 0; i < rp->nsites; i++) {
		struct rp_site *s = &rp->sites[i];

		rp_site_live(s, &s->live_count, &s->live_bytes);
		if (s->mod_gen != p->peak_gen) {
			s->peak_bytes = s->live_bytes;
			s->peak_count = s->live_count;
		}
	}
	for (size_t i = 0; i < p->l.pk.cap; i++) {
		struct live_ent o;

		if (live_mem_at(&p->l, i, &o) && o.val != RP_OUT)
			rp_live_block(rp, o.size);
	}
	for (int r = 0; r < LIVE_NRES; r++) {
		for (size_t i = 0; i < p->l.t[r].cap; i++) {
			const struct live_ent *o = live_slot(&p->l, (enum live_res)r, i);

			if (!o->used)
				continue;
			switch (r) {
			case LIVE_MEM:
				if (o->val != RP_OUT)
					rp_live_block(rp, o->size);
				break;
			case LIVE_FD:
				/* the process exec'd: those opened with O_CLOEXEC closed then */
				if (execed && o->size) {
					rp->fd.closed++;
					rp->fd.kind[o->kind].closed++;
					rp->fd.exec_closed++;
					break;
				}
				rp->fd.open_at_end++;
				rp->fd.kind[o->kind].open_at_end++;
				break;
			case LIVE_SHM:
				rp->shm.live_bytes += o->size;
				break;
			case LIVE_RES: {
				struct rp_mkind *k;

				if (o->val >= rp->nmsites)
					break;
				rp->msites[o->val].live_count++;
				rp->msites[o->val].live_bytes += o->size;
				k = rp_mkind_of(rp, o->kind); /* seen: no allocation */
				if (k) {
					k->live_count++;
					k->live_bytes += o->size;
				}
				break;
			}
			}
		}
	}
	rp->shm.live = p->l.t[LIVE_SHM].n;
	rp->shm.mapped = p->l.t[LIVE_SHM_MAP].n;
}

/* The pass keeps ticks: where s's clock is its line (evs_clock_line), up to where it saturates. */
static void rp_clock(struct rp_priv *p, const struct evs *s)
{
	p->src = s;
	if (!evs_clock_line(s, &p->lin_base, &p->lin_ns, &p->lin_mult, &p->lin_hi))
		p->lin_hi = 0;
	p->lin_span = p->lin_hi > p->lin_base ? p->lin_hi - p->lin_base : 0;
}

int rp_run(struct rp *rp, struct evs *s, char *err, size_t errlen)
{
	struct rp_priv *p = rp_p(rp);
	int ret;

	free(p->by_stream);
	p->nstreams = evs_nstreams(s); /* every event's stream is below (evsource.h) */
	p->by_stream = aligned_alloc(64, (p->nstreams + 1) * sizeof(*p->by_stream)); /* not 0 */
	if (!p->by_stream) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nstreams; i++)
		p->by_stream[i] = (struct rp_by_stream){ .tid = RP_NO_TID };
	rp->types = evs_types(s);
	rp_clock(rp_p(rp), s);
	if (rp->through)
		ret = live_run(&rp_p(rp)->l, s, &rp->tr, rp_event_thr, rp_held_thr, rp, err, errlen,
			       false);
	else
		ret = live_run(&rp_p(rp)->l, s, &rp->tr, rp_event_all, rp_held_all, rp, err, errlen,
			       false);
	if (!ret)
		rp_finish(rp, evs_file_hdr(s) && (evs_file_hdr(s)->proc_flags & RIP_P_EXECED));
	/* the kinds' names outlive the source */
	if (!ret && !(rp_p(rp)->types = malloc(sizeof(*rp_p(rp)->types)))) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
	}
	if (!ret)
		memcpy(rp_p(rp)->types, rp->types, sizeof(*rp_p(rp)->types));
	rp->types = ret ? NULL : rp_p(rp)->types;
	return ret;
}

struct rp *rp_new(void)
{
	struct rp_all *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->rp.p = &m->p; /* freed with rp */
	m->rp.series_ns = 1000;
	m->p.s_lo = INT64_MAX; /* no bucket yet */
	m->p.s_hi = INT64_MIN;
	m->p.s_tlo = UINT64_MAX;
	m->p.s_thi = 0;
	rp_life_init(&m->p);
	return &m->rp;
}

void rp_free(struct rp *rp)
{
	struct rp_priv *p;

	if (!rp)
		return;
	p = rp_p(rp);
	live_free(&p->l);
	stk_map_free(&p->site_idx);
	stk_map_free(&p->thread_idx);
	stk_map_free(&p->msite_idx);
	stk_map_free(&p->mkind_idx);
	stk_map_free(&p->mrefs);
	free(p->types);
	free(rp->msites);
	free(rp->mkinds);
	free(p->site_fast);
	free(p->by_stream);
	free(rp->sites);
	free(rp->threads);
	free(rp);
}
