/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/live.h - what the resource passes (leaks.c, report.c) share: the
 * frame of one pass over a trace, and the tables of what is live at each
 * moment of it.
 *
 * The frame, live_run: the trace's types bound to roles.h's table, every
 * event counted, rip:bt definitions kept in a stk_bts (a stack is defined
 * once per process, in whichever thread's stream met it first, so uses may
 * come first: stacks are looked up after the pass), and each resource event
 * handed to the pass decoded (struct role_res).
 *
 * The tables, one per resource: heap blocks and anonymous mappings by
 * address, descriptors by number, shared memory segments by key
 * (role_seg_key), attachments of shared memory by address.  An entry is 32
 * bytes (40 with a name): memory follows what is live at the worst moment,
 * not the length of the trace.
 *
 *	struct live l = { .named = true };
 *	live_run(&l, s, &tr, my_event, me, err, len);
 *		my_event: e = live_make(&l, LIVE_MEM, d->key, NULL, &fresh)...
 *		          live_release(&l, LIVE_MEM, d->key, &old)...
 *	for (i = 0; i < l.t[r].cap; i++) e = live_slot(&l, r, i), if e->used ...
 *	live_free(&l);
 */
#ifndef RIP_ANALYSIS_LIVE_H
#define RIP_ANALYSIS_LIVE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <internal/hot.h>

#include "analysis/hmap.h"
#include "analysis/roles.h"
#include "analysis/stacks.h"
#include "read/evsource.h"

enum live_res {
	LIVE_MEM,     /* heap blocks and anonymous mappings, by address */
	LIVE_FD,      /* file descriptors, by number */
	LIVE_SHM,     /* shared memory segments (shm_open by name, shmget by id) */
	LIVE_SHM_MAP, /* attachments of shared memory (shmat, MAP_SHARED), by address */
	LIVE_RES,     /* the resources of tracing modules, by id and kind (role_res_key) */
	LIVE_NRES,
};

/* One live resource. */
struct live_ent {
	uint64_t key;
	uint8_t used;  /* hmap's mark: 1, or another non-zero mark of the pass's */
	uint16_t kind; /* enum rip_*_kind that made it; LIVE_RES: its kind's type id */
	uint32_t val;  /* the pass's: a backtrace id (leaks), a site (report) */
	uint64_t size;
	int64_t ns; /* when it was made: ns, or ticks in a pass without ns (live_run) */
};
HMAP_SLOT_CHECK(struct live_ent);

/* An entry of a named table: descriptors and segments with their path or name. */
struct live_named {
	struct live_ent e;
	char *name; /* NULL: none */
};

/*
 * The anonymous mappings as ranges.  A mapping (mem:alloc of kind mmap or
 * mremap) is live in LIVE_MEM under the address it was made at, its origin,
 * for as long as any byte of it is mapped; its pieces here say which bytes
 * those are.  A mem:unmap may cut any range out of them (trim the head or
 * the tail, punch a hole, span several mappings): live_maps_unmap tells the
 * pass what each piece lost, and the pass shrinks the mapping by that many
 * bytes, or releases it when nothing is left.  Sizes are the bytes asked
 * for, not rounded to pages (the reader does not know the page size): a
 * piece loses the bytes the unmapped range shares with it.
 */
struct live_piece {
	uint64_t start, end; /* [start, end), end > start */
	uint64_t origin;     /* the mapping it is part of: its key in LIVE_MEM (live_map_key) */
};

/* Pieces sorted by start, disjoint. */
struct live_maps {
	struct live_piece *v;
	size_t n, cap;
	uint64_t serial; /* of the last key live_map_key gave */
};

/*
 * The keys of mappings in LIVE_MEM: this bit and a serial number, not an
 * address, since a mapping whose head was unmapped lives on while its
 * first address is mapped again (blocks' addresses never have this bit).
 */
#define LIVE_MAP_KEY (1ull << 63)

/* A new key for a mapping (the origin of its pieces). */
static inline uint64_t live_map_key(struct live_maps *m)
{
	return LIVE_MAP_KEY | (++m->serial & ~LIVE_MAP_KEY);
}

/* What an unmap took from one piece: [lo, hi) of [start, end); [start, lo) and [hi, end) stay. */
struct live_cut {
	uint64_t origin, start, end, lo, hi;
};

/* Told each cut of live_maps_unmap (it must not change the pieces): 0, or -ENOMEM to stop. */
typedef int live_cut_fn(void *arg, const struct live_cut *c);

/*
 * Mapping origin made at [start, start + len) (len 0: nothing).  The caller
 * unmaps the range first: a mapping placed over others replaces them.  0 or
 * -ENOMEM.
 */
int live_maps_add(struct live_maps *m, uint64_t start, uint64_t len, uint64_t origin);
/*
 * The piece that starts at addr, NULL if none: a mem:free of a mapping's
 * start (traces from before mem:unmap) releases it.
 */
const struct live_piece *live_maps_at(const struct live_maps *m, uint64_t addr);
/*
 * Range [start, start + len) unmapped: each piece it touches is trimmed,
 * split or dropped, and fn(arg, cut) told of it, in address order.  The
 * number of pieces touched (0: nothing of ours was there), or -ENOMEM.
 */
int live_maps_unmap(struct live_maps *m, uint64_t start, uint64_t len, live_cut_fn *fn, void *arg);
void live_maps_free(struct live_maps *m);

/* Is a mem:alloc of kind a mapping (one live_maps holds)? */
static inline bool live_is_mapping(uint64_t kind)
{
	return kind == RIP_MEM_MMAP || kind == RIP_MEM_MREMAP || kind == RIP_MEM_MPROTECT;
}

/*
 * Address space reserved (a mem:alloc of kind reserve: mmap with PROT_NONE)
 * is not memory: no pass counts it, each keeps its ranges in a live_maps of
 * their own.  A reservation replaces what it is placed over (the pass
 * unmaps the range first: a MAP_FIXED mapping with PROT_NONE is how memory
 * is given back); a mapping placed over part of one, or an unmap, takes
 * that part out (live_rsv_cut); a mem:alloc of kind mprotect makes memory of
 * what it covers of the reservations, at its own stack, and of nothing
 * else (live_rsv_take: a change of protection of memory is no allocation).
 */
static inline bool live_is_reserve(uint64_t kind)
{
	return kind == RIP_MEM_RESERVE;
}

/* [start, start + len) reserved, over what was reserved there.  0 or -ENOMEM. */
int live_rsv_add(struct live_maps *r, uint64_t start, uint64_t len);
/*
 * [start, start + len) reserved no more: how many reserved pieces it cut
 * into (0: none was reserved), or -ENOMEM.
 */
int live_rsv_cut(struct live_maps *r, uint64_t start, uint64_t len);
/*
 * The reserved parts of [start, start + len), taken out of r, into *out in
 * address order (*n of them; free *out).  0 or -ENOMEM (r unchanged).
 */
int live_rsv_take(struct live_maps *r, uint64_t start, uint64_t len, struct live_piece **out,
		  size_t *n);
/* The bytes reserved now, and in how many ranges (of addresses that follow each other). */
uint64_t live_rsv_bytes(const struct live_maps *r, uint64_t *ranges);

struct live {
	bool named;		  /* descriptors and segments keep their path or name */
	struct live_maps maps;	  /* the pieces of the anonymous mappings in LIVE_MEM */
	struct live_maps smaps;	  /* the pieces of the attachments in LIVE_SHM_MAP (leaks, report) */
	struct live_maps rsv;	  /* address space reserved (live_is_reserve), not memory */
	struct role_map r;	  /* the trace's types by role */
	struct stk_bts bts;	  /* its rip:bt definitions */
	struct hmap t[LIVE_NRES]; /* what is live now, by resource (LIVE_MEM: what does not pack) */
	struct hmap pk;		  /* LIVE_MEM's blocks that pack (live_mem_make), hmap_pk slots */
	uint64_t pk_t0;		  /* the time the packed blocks' times are kept from */
	uint16_t pf_off[EV_MAX_TYPES]; /* live_prefetch_next's: where the address is, by type */
	bool quick[EV_MAX_TYPES]; /* a mem:alloc or mem:free of the standard layout (live_quick) */
};

#define LIVE_PF_NONE 0xffffu
#define LIVE_PREFETCH_CAP 8192 /* slots of l->pk from which the passes prefetch them */

/* What every resource pass tells of the trace it read. */
#define LIVE_TRACE_FIELDS                                                                          \
	uint64_t events;	   /* events read */                                               \
	uint64_t res_events;	   /* resource events among them */                                \
	uint64_t bt_defs;	   /* rip:bt definitions */                                        \
	uint64_t bt_bad;	   /* rip:bt definitions skipped (id 0, redefined differently) */  \
	int64_t first_ns, last_ns; /* the first and the last event's time */                       \
	uint64_t last_ts;	   /* the last event's, in ticks (last_ns at the end) */           \
	bool any_event;                                                                            \
	bool has_types; /* the trace has resource event types at all */

struct live_trace {
	LIVE_TRACE_FIELDS
};

/* A member of a pass's results: tr for live_run, and the same fields by name (lk->events). */
#define LIVE_TRACE_OF                                                                              \
	union {                                                                                    \
		struct live_trace tr;                                                              \
		struct {                                                                           \
			LIVE_TRACE_FIELDS                                                          \
		};                                                                                 \
	}

#define LIVE_FIRST_CAP 1024 /* slots of a table at its first entry */

static inline size_t live_esz(const struct live *l, enum live_res r)
{
	return l->named && (r == LIVE_FD || r == LIVE_SHM) ? sizeof(struct live_named)
							    : sizeof(struct live_ent);
}

/* Do the entries of table r have names (struct live_named)? */
static inline bool live_name_slots(const struct live *l, enum live_res r)
{
	return live_esz(l, r) == sizeof(struct live_named);
}

/* Slot i (< l->t[r].cap) of table r, used or not. */
static inline struct live_ent *live_slot(const struct live *l, enum live_res r, size_t i)
{
	return hmap_slot(&l->t[r], live_esz(l, r), i);
}

/* The path or name of e (of table r), NULL when it has none. */
static inline const char *live_name(const struct live *l, enum live_res r,
				    const struct live_ent *e)
{
	return live_name_slots(l, r) ? ((const struct live_named *)e)->name : NULL;
}

/* The slot of key in table r, new or not (live_make): unnamed tables, inline. */
static inline RIP_HOT struct live_ent *live_make_sz(struct live *l, enum live_res r, uint64_t key,
					     bool *fresh, size_t esz)
{
	struct hmap *t = &l->t[r];

	/* grow before looking: the slots of a table then lie as they always did */
	if (!hmap_has_room(t) && hmap_reserve(t, esz, t->cap ? t->cap * 2 : LIVE_FIRST_CAP))
		return NULL;
	return hmap_get_room(t, esz, key, fresh);
}

struct live_ent *live_make_named(struct live *l, enum live_res r, uint64_t key, const char *name,
				 bool *fresh);

/*
 * Key made live in table r: a new entry (*fresh true), zeroed but for key
 * and used; or the live entry of key (its release was not seen), its fields
 * as they were for the caller to read before it overwrites them.  In a
 * named table the entry takes a copy of name (NULL or "": none).  NULL when
 * out of memory.
 */
static inline struct live_ent *live_make(struct live *l, enum live_res r, uint64_t key,
					 const char *name, bool *fresh)
{
	if (live_name_slots(l, r))
		return live_make_named(l, r, key, name, fresh);
	return live_make_sz(l, r, key, fresh, sizeof(struct live_ent));
}

/* live_release with the slot size of table r as a constant. */
static inline RIP_HOT bool live_release_sz(struct live *l, enum live_res r, uint64_t key,
				    struct live_ent *old, size_t esz)
{
	struct live_ent *e = hmap_find(&l->t[r], esz, key);

	if (!e)
		return false;
	if (old)
		*old = *e;
	if (esz == sizeof(struct live_named))
		free(((struct live_named *)e)->name);
	hmap_del(&l->t[r], esz, e);
	return true;
}

/* The live entry of key in table r, NULL if none. */
static inline struct live_ent *live_find(const struct live *l, enum live_res r, uint64_t key)
{
	return hmap_find(&l->t[r], live_esz(l, r), key);
}

/* Key released from table r: true and its entry in *old (NULL: not wanted), false if not live. */
static inline bool live_release(struct live *l, enum live_res r, uint64_t key,
				struct live_ent *old)
{
	if (live_name_slots(l, r))
		return live_release_sz(l, r, key, old, sizeof(struct live_named));
	return live_release_sz(l, r, key, old, sizeof(struct live_ent));
}

void live_free(struct live *l);

/*
 * LIVE_MEM, packed.  The heap blocks of a trace are most of what is live,
 * and finding a block's slot was the largest single cost of the passes at
 * 1,000 threads (doc/design.md, "A third look"): a block that fits lives
 * in a 16-byte slot of l->pk (hmap.h's struct hmap_pk) instead of a 32-byte
 * struct live_ent of l->t[LIVE_MEM], so that the table is half the size
 * and a lookup touches one slot.  Its fields, in two words:
 *
 *	w0: the address / 16 (44 bits: below 2^48, a multiple of 16, not 0),
 *	    then val (20 bits, below LIVE_PK_STUB)
 *	w1: the time less pk_t0 (40 bits), kind (4 bits), size (20 bits)
 *
 * pk_t0 is the time of the first block made (live_pk_grow).  An entry
 * that does not fit, in any field (an address that does not pack, as the
 * keys of mappings, LIVE_MAP_KEY, never do; a size, val or kind past its
 * bits; a time before pk_t0 or 2^40 after it; used other than 1), lives in
 * l->t[LIVE_MEM] as before, whole: nothing is cut or aliased.  When its
 * address packs, a stub in l->pk says so (val LIVE_PK_STUB), so that a key
 * that packs is looked up in l->pk first and only there unless it finds a
 * stub; a key is in one of the two tables at most.  The passes reach
 * LIVE_MEM through live_mem_make, live_mem_release and live_mem_find, with
 * entries as struct live_ent, and walk both tables at the end (live_mem_at
 * and live_slot).
 */
#define LIVE_PK_ALIGN 4	     /* the low bits of a packed address, 0 */
#define LIVE_PK_ADDR_BITS 48 /* a packed address is below 2^48 */
#define LIVE_PK_VAL_BITS HMAP_PK_LOW
#define LIVE_PK_STUB ((1u << LIVE_PK_VAL_BITS) - 1) /* val of a stub: the entry is in t[LIVE_MEM] */
#define LIVE_PK_SIZE_BITS 20
#define LIVE_PK_KIND_BITS 4
#define LIVE_PK_T_SHIFT (LIVE_PK_SIZE_BITS + LIVE_PK_KIND_BITS)
#define LIVE_PK_T_BITS (64 - LIVE_PK_T_SHIFT) /* 40 */

_Static_assert(LIVE_PK_ADDR_BITS - LIVE_PK_ALIGN + LIVE_PK_VAL_BITS == 64,
	       "w0: the packed address and val");

/* The key in l->pk of address key: true when it packs (*hk), false when not. */
static inline bool live_pk_key(uint64_t key, uint64_t *hk)
{
	const uint64_t out = ~((1ull << LIVE_PK_ADDR_BITS) - 1) | ((1ull << LIVE_PK_ALIGN) - 1);

	*hk = key >> LIVE_PK_ALIGN;
	return !((key & out) | (uint64_t)(key == 0)); /* no branch: computed, not tested */
}

/*
 * Does an entry of these fields, but for its key, fit a packed slot?  Then
 * its w1 in *w1.
 */
static inline RIP_HOT bool live_pk_fits(const struct live *l, uint8_t used, uint16_t kind, uint32_t val,
				 uint64_t size, int64_t ns, uint64_t *w1)
{
	uint64_t dt = (uint64_t)ns - l->pk_t0; /* a time before pk_t0: 2^63 or more */

	*w1 = dt << LIVE_PK_T_SHIFT | (uint64_t)kind << LIVE_PK_SIZE_BITS | size;
	/* val + 1: LIVE_PK_STUB does not fit either */
	return !((uint64_t)(used ^ 1) | ((uint64_t)val + 1) >> LIVE_PK_VAL_BITS |
		 (uint64_t)(kind >> LIVE_PK_KIND_BITS) | size >> LIVE_PK_SIZE_BITS |
		 dt >> LIVE_PK_T_BITS);
}

/* Is used slot s of l->pk a stub (its entry in t[LIVE_MEM])? */
static inline bool live_pk_stub(const struct hmap_pk *s)
{
	return (s->w0 & LIVE_PK_STUB) == LIVE_PK_STUB;
}

/* The entry packed in used slot s of l->pk (not a stub). */
static inline RIP_HOT void live_pk_unpack(const struct live *l, const struct hmap_pk *s,
				   struct live_ent *e)
{
	e->key = hmap_pk_key(s) << LIVE_PK_ALIGN;
	e->used = 1;
	e->kind = (uint16_t)(s->w1 >> LIVE_PK_SIZE_BITS & ((1u << LIVE_PK_KIND_BITS) - 1));
	e->val = (uint32_t)(s->w0 & LIVE_PK_STUB);
	e->size = s->w1 & ((1u << LIVE_PK_SIZE_BITS) - 1);
	e->ns = (int64_t)(l->pk_t0 + (s->w1 >> LIVE_PK_T_SHIFT));
}

/* live_mem_make's and live_mem_release's slow paths (live.c) */
int live_pk_grow(struct live *l, int64_t ns);
int live_mem_make_ovf(struct live *l, const struct live_ent *n, struct live_ent *old);
int live_mem_make_stub(struct live *l, struct hmap_pk *s, bool fresh, bool fits, uint64_t w1,
		       const struct live_ent *n, struct live_ent *old);
bool live_mem_release_ovf(struct live *l, uint64_t key, struct live_ent *old);
bool live_mem_release_stub(struct live *l, struct hmap_pk *s, uint64_t key, struct live_ent *old);

/* A struct live_ent of these fields, for the slow paths of live_mem_make */
#define LIVE_ENT(k, u, kd, v, sz, t)                                                               \
	(struct live_ent)                                                                          \
	{                                                                                          \
		.key = (k), .used = (u), .kind = (kd), .val = (v), .size = (sz), .ns = (t)         \
	}

/*
 * Block key made live in LIVE_MEM (its address or a mapping's key) with
 * these fields (used not 0): 0 when key was not live, 1 when it was (its
 * release was not seen: what was live is in *old, and the new entry
 * replaces it), -ENOMEM.  The fields one by one, not a struct live_ent:
 * only the slow paths build one.
 */
static inline RIP_HOT int live_mem_make(struct live *l, uint64_t key, uint8_t used, uint16_t kind,
				 uint32_t val, uint64_t size, int64_t ns, struct live_ent *old)
{
	struct hmap_pk *s;
	uint64_t hk, w1;
	bool fresh, fits;

	/* grow before looking: the slots of a table then lie as they always did */
	if (__builtin_expect(!hmap_has_room(&l->pk), 0) && live_pk_grow(l, ns))
		return -ENOMEM;
	if (__builtin_expect(!live_pk_key(key, &hk), 0))
		return live_mem_make_ovf(l, &LIVE_ENT(key, used, kind, val, size, ns), old);
	fits = live_pk_fits(l, used, kind, val, size, ns, &w1);
	s = hmap_pk_get_room(&l->pk, hk, &fresh);
	if (__builtin_expect(!fits || (!fresh && live_pk_stub(s)), 0))
		return live_mem_make_stub(l, s, fresh, fits, w1,
					  &LIVE_ENT(key, used, kind, val, size, ns), old);
	if (!fresh)
		live_pk_unpack(l, s, old);
	s->w0 = hk << LIVE_PK_VAL_BITS | val;
	s->w1 = w1;
	return !fresh;
}

/* live_mem_make of entry n. */
static inline int live_mem_put(struct live *l, const struct live_ent *n, struct live_ent *old)
{
	return live_mem_make(l, n->key, n->used, n->kind, n->val, n->size, n->ns, old);
}

/* key released from LIVE_MEM: true and its entry in *old (NULL: not wanted), false if not live. */
static inline RIP_HOT bool live_mem_release(struct live *l, uint64_t key, struct live_ent *old)
{
	struct hmap_pk *s;
	uint64_t hk;

	if (__builtin_expect(!live_pk_key(key, &hk), 0))
		return live_mem_release_ovf(l, key, old);
	s = hmap_pk_find(&l->pk, hk);
	if (!s)
		return false;
	if (__builtin_expect(live_pk_stub(s), 0))
		return live_mem_release_stub(l, s, key, old);
	if (old)
		live_pk_unpack(l, s, old);
	hmap_pk_del(&l->pk, s);
	return true;
}

/* The live entry of key in LIVE_MEM, a copy in *e: true, or false if none. */
static inline bool live_mem_find(const struct live *l, uint64_t key, struct live_ent *e)
{
	const struct live_ent *o;
	uint64_t hk;

	if (live_pk_key(key, &hk)) {
		const struct hmap_pk *s = hmap_pk_find(&l->pk, hk);

		if (!s)
			return false;
		if (!live_pk_stub(s)) {
			live_pk_unpack(l, s, e);
			return true;
		}
	}
	o = hmap_find(&l->t[LIVE_MEM], sizeof(*o), key);
	if (o)
		*e = *o;
	return o != NULL;
}

/*
 * Slot i (< l->pk.cap) of the packed blocks: true and its entry in *e when
 * used (and not a stub).  The rest of LIVE_MEM is l->t[LIVE_MEM]'s slots
 * (live_slot).
 */
static inline bool live_mem_at(const struct live *l, size_t i, struct live_ent *e)
{
	const struct hmap_pk *s = hmap_pk_at(&l->pk, i);

	if (!s->w0 || live_pk_stub(s))
		return false;
	live_pk_unpack(l, s, e);
	return true;
}

/*
 * The keys in [lo, hi] of hash table t (slots of esz bytes), for a release
 * of a range (fd:close_range) that cannot delete while it walks the table:
 * a new array in *keys (NULL when none), their number in *n.  0 or -ENOMEM.
 */
int live_keys_in(const struct hmap *t, size_t esz, uint64_t lo, uint64_t hi, uint64_t **keys,
		 size_t *n);

/*
 * A resource event of the pass: 0, or -ENOMEM.  d is e decoded; e's fields
 * are still to be read with evs_val (the source is lazy).
 */
typedef int live_fn(void *arg, const struct evs_event *e, const struct role_res *d);

/*
 * The event after this one (when the source knows it yet) makes or releases
 * a heap block: bring its slot in LIVE_MEM towards the cache while this one
 * is handled.  With thousands of live blocks the table outgrows the caches,
 * and that miss was the largest single cost of rip leaks at 1,000 threads
 * (two thirds of the samples of its insertions); below LIVE_PREFETCH_CAP
 * slots the table stays in the caches, and nothing is done.
 */
static inline RIP_HOT void live_prefetch_next(const struct live *l, const struct evs *s)
{
	const struct hmap *t = &l->pk;
	const uint8_t *raw;
	uint64_t key;
	uint32_t id;

	if (t->cap < LIVE_PREFETCH_CAP || !(raw = evs_peek_fast(s, &id)) ||
	    l->pf_off[id] == LIVE_PF_NONE)
		return;
	__builtin_memcpy(&key, raw + l->pf_off[id], 8);
	/* a key that does not pack: a slot of no use, and no harm */
	__builtin_prefetch(hmap_pk_at(t, hmap_home(t, key >> LIVE_PK_ALIGN)), 1);
}

/* For live_prefetch_next: where the address of a block is in each type's fields. */
static inline void live_prefetch_plan(struct live *l, const struct evs *s)
{
	for (uint32_t id = 0; id < EV_MAX_TYPES; id++) {
		const struct evs_plan *pl = evs_plan_of(s, id);
		int role = l->r.role[id];
		/* the address: field 0 of mem:alloc and mem:free, 1 of mem:realloc */
		uint8_t fi = l->r.fi[id][role == ROLE_MEM_REALLOC];

		l->pf_off[id] = LIVE_PF_NONE;
		l->quick[id] = pl->valid && l->r.std[id] &&
			       (role == ROLE_MEM_ALLOC || role == ROLE_MEM_FREE);
		if (pl->valid && (role == ROLE_MEM_ALLOC || role == ROLE_MEM_FREE ||
				  role == ROLE_MEM_REALLOC) &&
		    fi < pl->nfix && pl->size[fi] == 8)
			l->pf_off[id] = pl->off[fi];
	}
}

/*
 * Before a pass: the types of s bound to the roles (tr says whether there
 * are resource types at all), s made lazy (every field is read with
 * evs_val).  0, or -EBADMSG with a message in err (role_bind).
 */
static inline int live_begin(struct live *l, struct evs *s, struct live_trace *tr, char *err,
			     size_t errlen)
{
	int ret = role_bind(&l->r, evs_types(s), err, errlen);

	tr->has_types = role_has_resources(&l->r);
	if (!ret)
		evs_set_lazy(s, true);
	return ret;
}

/*
 * One event of a pass, as read: counted in tr, a rip:bt definition kept in l->bts, a
 * resource event decoded into *d.  Its role, and 0 or -ENOMEM in *fail.  The
 * first event's time is tr->first_ns at once; the last's is in tr->last_ts
 * (live_run makes it last_ns at the end).
 */
static inline RIP_HOT void live_count(const struct evs *s, const struct evs_event *e,
			       struct live_trace *tr)
{
	if (__builtin_expect(!tr->any_event, 0)) {
		tr->first_ns = evs_ns(s, e->ts);
		tr->any_event = true;
	}
	tr->last_ts = e->ts;
	tr->events++;
}

/* A rip:bt definition (e, counted) kept in l->bts: 0 or -ENOMEM. */
static inline int live_bt(struct live *l, const struct evs_event *e, struct live_trace *tr)
{
	tr->bt_defs++;
	return stk_bt_define(&l->bts, (uint32_t)role_val(&l->r, e, ROLE_BT_ID), e);
}

static inline RIP_HOT int live_take(struct live *l, const struct evs *s, const struct evs_event *e,
			     struct live_trace *tr, struct role_res *d, int *fail)
{
	int role = role_of(&l->r, e);

	live_count(s, e, tr);
	if (role == ROLE_BT) {
		*fail = live_bt(l, e, tr);
	} else if (role_is_resource(role)) {
		tr->res_events++;
		role_decode(&l->r, e, role, d);
	}
	return role;
}

/*
 * Heap events held back, so that their slots in LIVE_MEM are fetched
 * towards the cache LIVE_DELAY events before they are used.  Once the table
 * outgrows the caches (1,000 threads' 256,000 live blocks: 8 MiB of packed
 * slots, 16 MiB of struct live_ent before)
 * each malloc or free misses, and the prefetch of the next event's slot
 * (live_prefetch_next) hides little of it: an event takes less time than a
 * miss.  An event held keeps its fields where they are, in its packet, which
 * does not move while the source is steady (evs_fast_steady); it keeps
 * tr->events as it was when read, for a pass that reads it (report.c); and
 * the pass sees every event in the order read: any other resource event,
 * and any call of the source that may load a packet, lets the held ones go
 * first.  Only from LIVE_HOLD_CAP slots on: below, the table stays in the
 * caches enough that holding costs more than it saves.
 */
#define LIVE_DELAY 8	     /* heap events held at most (a power of two) */
#define LIVE_HOLD_CAP 131072 /* slots of l->pk (2 MiB) from which heap events are held */

struct live_held {
	struct evs_event e; /* what the passes read: ts, ns, stream, tid, type, plan, raw... */
	struct role_res d;
	uint64_t events; /* tr->events when it was read (when the pass reads it: live_give) */
};

/* LIVE_DELAY held, and room for the one being read */
#define LIVE_QLEN (2 * LIVE_DELAY)

struct live_delay {
	struct live_held q[LIVE_QLEN];
};

/* Is role a heap event whose slots live_hold fetches? */
static inline bool live_holdable(int role)
{
	return role == ROLE_MEM_ALLOC || role == ROLE_MEM_FREE || role == ROLE_MEM_REALLOC;
}

/*
 * Bring the slot of key in t towards the cache, and the line after its
 * line: a probe or a deletion (which looks on to the end of the run) may go
 * on there.  (The next slot instead, as before, was the same line for half
 * the slots, and the deletion's scan then missed on the line after it.)
 */
static inline RIP_HOT void live_fetch(const struct hmap *t, uint64_t key)
{
	const char *slot = (const char *)hmap_pk_at(t, hmap_home(t, key >> LIVE_PK_ALIGN));

	__builtin_prefetch(slot, 1);
	__builtin_prefetch((const char *)(((uintptr_t)slot | (HMAP_LINE - 1)) + 1), 1);
}

/* Fetch the slots of heap event d (held) towards the cache. */
static inline RIP_HOT void live_hold(const struct live *l, const struct role_res *d)
{
	const struct hmap *t = &l->pk;

	live_fetch(t, d->key);
	if (d->role == ROLE_MEM_REALLOC)
		live_fetch(t, d->old);
}

/*
 * role_decode of a mem:alloc or a mem:free of the standard layout (quick:
 * role_std_types), without a branch on which: at 1,000 threads the two
 * come in an order no predictor foresees, and the delay line already
 * branches on the role once, when it hands the event to the pass
 * (live_give).  A free's size, bt and kind are 0; its loads stay within
 * the 16 bytes readable at its fields (evs_next_fast: fixed + 8).
 */
static inline RIP_HOT void live_quick(const struct evs_event *e, int role, struct role_res *d)
{
	const uint8_t *raw = e->raw;
	const bool alloc = role == ROLE_MEM_ALLOC;
	const uint64_t m = 0 - (uint64_t)alloc;
	const uint8_t *q = raw + ((size_t)alloc << 4); /* alloc: bt, kind at 16; free: any */

	*d = (struct role_res){ .role = role,
				.key = role_ld64(raw),
				.size = role_ld64(raw + 8) & m,
				.kind = role_ld32(q + 4) & m,
				.bt = role_ld32(q) & (uint32_t)m };
}

/*
 * Hand held event h to fn, with tr->events as when it was read when fn
 * reads it (events: rip report's peaks), as it is otherwise.  fn's result.
 */
static inline RIP_HOT int live_give(struct live_trace *tr, live_fn *fn, void *arg,
			     const struct live_held *h, bool events)
{
	uint64_t now = tr->events;
	int fail;

	if (events)
		tr->events = h->events;
	/* a case each, so that fn's own switch on d->role, inlined after it, folds */
	switch (h->d.role) {
	case ROLE_MEM_ALLOC:
		fail = fn(arg, &h->e, &h->d);
		break;
	case ROLE_MEM_FREE:
		fail = fn(arg, &h->e, &h->d);
		break;
	default:
		fail = fn(arg, &h->e, &h->d);
		break;
	}
	if (events)
		tr->events = now;
	return fail;
}

/*
 * live_run from the moment LIVE_MEM is big (see struct live_held) to the
 * end: e, decoded in d, is the resource event just read.  A delay line:
 * each event is read into the next free entry of q, in place (no copy), and
 * a heap event stays there, its slots fetched, until another comes while
 * LIVE_DELAY are held (the oldest goes), another resource event comes (all
 * go, then it), or the source is about to load a packet (all go) or ends
 * (all go).  with_ns: as live_run's.  events: fn reads tr->events, which
 * is then as it was when the event was read (live_give).
 */
static inline RIP_HOT int live_run_held(struct live *l, struct evs *s, struct live_trace *tr, live_fn *fn,
				 void *arg, struct evs_event *e, struct role_res *d, int role,
				 int *failp, char *err, size_t errlen, bool with_ns, bool events)
{
	struct live_delay *q = calloc(1, sizeof(*q));
	unsigned head = 0, n = 0; /* the oldest held, and how many */
	int ret = 1, fail = 0;

	*failp = 0;
	if (!q) {
		*failp = -ENOMEM;
		return 0;
	}
	if (live_holdable(role)) {
		struct live_held *h = &q->q[0];

		h->e = *e;
		h->d = *d;
		h->events = tr->events;
		live_hold(l, d);
		n = 1;
	} else {
		fail = fn(arg, e, d);
	}
	while (!fail) {
		struct live_held *h;

		/* no packet loaded under what is held: it goes first */
		for (; n && !fail && !evs_fast_steady(s); n--) {
			fail = live_give(tr, fn, arg, &q->q[head], events);
			head = (head + 1) & (LIVE_QLEN - 1);
		}
		if (fail)
			break;
		h = &q->q[(head + n) & (LIVE_QLEN - 1)]; /* n <= LIVE_DELAY: free */
		ret = evs_next_fast_as(s, &h->e, err, errlen, with_ns);
		if (ret <= 0)
			break; /* what is held was read before: it goes below */
		role = role_of(&l->r, &h->e);
		live_count(s, &h->e, tr);
		if (__builtin_expect(l->quick[h->e.type->id], 1)) {
			tr->res_events++;
			live_quick(&h->e, role, &h->d);
			goto hold;
		}
		/* one dispatch: the heap events' cases decode with the role a constant */
		switch (role) {
		case ROLE_MEM_ALLOC:
			tr->res_events++;
			role_decode(&l->r, &h->e, ROLE_MEM_ALLOC, &h->d);
			break;
		case ROLE_MEM_FREE:
			tr->res_events++;
			role_decode(&l->r, &h->e, ROLE_MEM_FREE, &h->d);
			break;
		case ROLE_BT:
			fail = live_bt(l, &h->e, tr);
			continue;
		default:
			if (!role_is_resource(role))
				continue;
			tr->res_events++;
			role_decode(&l->r, &h->e, role, &h->d);
			break;
		}
		if (live_holdable(role)) {
hold:
			if (events)
				h->events = tr->events;
			live_hold(l, &h->d);
			if (n == LIVE_DELAY) { /* the oldest goes to make room */
				fail = live_give(tr, fn, arg, &q->q[head], events);
				head = (head + 1) & (LIVE_QLEN - 1);
				n--;
			}
			n++;
			continue;
		}
		/* another resource event: what is held goes first (h's entry is not reused) */
		for (; n && !fail; n--) {
			fail = live_give(tr, fn, arg, &q->q[head], events);
			head = (head + 1) & (LIVE_QLEN - 1);
		}
		if (!fail)
			fail = fn(arg, &h->e, &h->d);
	}
	for (; n && !fail; n--) {
		fail = live_give(tr, fn, arg, &q->q[head], events);
		head = (head + 1) & (LIVE_QLEN - 1);
	}
	free(q);
	*failp = fail;
	return ret;
}

/*
 * A pass's live_run_held with its own fn, out of line (so that live_run's
 * loop keeps its registers), the with_ns of its live_run, and whether fn
 * reads tr->events:
 *	static __attribute__((noinline)) int my_held(void *arg, struct evs *s,
 *		struct evs_event *e, struct role_res *d, int role, int *fail, char *err,
 *		size_t errlen)
 *	{ return live_run_held(&me->l, s, &me->tr, my_event, arg, e, d, role, fail, err, errlen,
 *			       true, false); }
 */
typedef int live_held_fn(void *arg, struct evs *s, struct evs_event *e, struct role_res *d,
			 int role, int *fail, char *err, size_t errlen);

/*
 * Resource event e of role role (counted), decoded into d and handed to fn,
 * or to held with the rest of the source once LIVE_MEM is big: then *ret is
 * held's, and true when the pass is over (held read to the end or failed:
 * *fail says).
 */
static inline RIP_HOT bool live_res(struct live *l, struct evs *s, struct live_trace *tr, live_fn *fn,
			     live_held_fn *held, void *arg, struct evs_event *e, struct role_res *d,
			     int role, int *fail, int *ret, char *err, size_t errlen)
{
	tr->res_events++;
	role_decode(&l->r, e, role, d);
	if (__builtin_expect(l->pk.cap >= LIVE_HOLD_CAP, 0)) {
		*ret = held(arg, s, e, d, role, fail, err, errlen);
		return !*fail;
	}
	live_prefetch_next(l, s);
	*fail = fn(arg, e, d);
	return false;
}

/*
 * Bind the types of s, then read every event of s, counting them in tr,
 * keeping rip:bt definitions in l->bts and handing each resource event to
 * fn(arg, ...).  0, or -errno with a message in err (what evs_next said of
 * a corrupt source; a type of rip/resource.h with other fields; out of
 * memory).  Inline, so that fn is a direct call in each pass.  Once LIVE_MEM
 * is big, held (the pass's live_run_held) reads the rest: heap events then
 * reach fn a few events late, in order.  with_ns false: fn gets events
 * without e->ns (evs_next_fast_ts), and converts what times it needs with
 * evs_ns.
 */
static inline RIP_HOT int live_run(struct live *l, struct evs *s, struct live_trace *tr, live_fn *fn,
			    live_held_fn *held, void *arg, char *err, size_t errlen, bool with_ns)
{
	struct evs_event e = { 0 };
	struct role_res d;
	int ret;

	ret = live_begin(l, s, tr, err, errlen);
	if (ret)
		return ret;
	live_prefetch_plan(l, s);
	while ((ret = evs_next_fast_as(s, &e, err, errlen, with_ns)) > 0) {
		int fail = 0, role = role_of(&l->r, &e);
		bool done = false;

		live_count(s, &e, tr);
		/*
		 * One dispatch on the role: the heap events' cases pass it on as a
		 * constant, so that role_decode and fn's own switch on d->role fold
		 * away.
		 */
		switch (role) {
		case ROLE_MEM_ALLOC:
			done = live_res(l, s, tr, fn, held, arg, &e, &d, ROLE_MEM_ALLOC, &fail,
					&ret, err, errlen);
			break;
		case ROLE_MEM_FREE:
			done = live_res(l, s, tr, fn, held, arg, &e, &d, ROLE_MEM_FREE, &fail, &ret,
					err, errlen);
			break;
		case ROLE_MEM_REALLOC:
			done = live_res(l, s, tr, fn, held, arg, &e, &d, ROLE_MEM_REALLOC, &fail,
					&ret, err, errlen);
			break;
		case ROLE_BT:
			fail = live_bt(l, &e, tr);
			break;
		default:
			if (role_is_resource(role))
				done = live_res(l, s, tr, fn, held, arg, &e, &d, role, &fail, &ret,
						err, errlen);
			break;
		}
		if (done)
			break;
		if (fail) {
			snprintf(err, errlen, "out of memory");
			return fail;
		}
	}
	tr->bt_bad = l->bts.bad;
	if (tr->any_event)
		tr->last_ns = evs_ns(s, tr->last_ts);
	return ret;
}

#endif /* RIP_ANALYSIS_LIVE_H */
