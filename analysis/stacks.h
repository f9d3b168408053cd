/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/stacks.h - small pieces the commands that fold backtraces share:
 * a u64-keyed table of two values on the hash table of hmap.h (live blocks
 * by address, descriptors by number, totals by backtrace id), the rip:bt
 * definitions of a trace kept by id, and a symbolizer loaded with the
 * source's module map that names one return address as a flame-graph frame
 * ("func", "module+0xoff", "0xaddr").
 *
 * rip:bt definitions are collected as the events go by and looked up only
 * at the end: a stack is defined once per process, in whichever thread's
 * stream met it first, so a use may come before its definition in the
 * merged order.
 */
#ifndef RIP_ANALYSIS_STACKS_H
#define RIP_ANALYSIS_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/hmap.h"
#include "read/evsource.h"

struct rip_sym;

/* An entry of a stk_map: key, two values of the user's. */
struct stk_ent {
	uint64_t key;
	bool used;
	uint64_t a, b;
};
HMAP_SLOT_CHECK(struct stk_ent);

/* A hmap (analysis/hmap.h) of stk_ent: m.v[i] for i < m.cap walks every slot. */
struct stk_map {
	HMAP_OF(struct stk_ent);
};

/* The entry of key, or NULL. */
static inline struct stk_ent *stk_map_find(const struct stk_map *m, uint64_t key)
{
	return hmap_find(&m->h, sizeof(struct stk_ent), key);
}

/* The entry of key, made (values 0, *fresh true) when new; NULL when out of memory. */
static inline struct stk_ent *stk_map_get(struct stk_map *m, uint64_t key, bool *fresh)
{
	return hmap_get(&m->h, sizeof(struct stk_ent), key, fresh);
}

/* Remove e (from stk_map_find or stk_map_get). */
static inline void stk_map_del(struct stk_map *m, struct stk_ent *e)
{
	hmap_del(&m->h, sizeof(*e), e);
}

static inline void stk_map_free(struct stk_map *m)
{
	hmap_free(&m->h);
}

/* Backtrace definitions by id. */
struct stk_bts {
	struct stk_map ids; /* id -> a: first frame in frames, b: count */
	uint64_t *frames;
	size_t nframes, capframes;
	uint64_t bad;	    /* definitions skipped: id 0, or redefined differently */
};

/* Keep rip:bt event e (fields: id then the frames array).  0 or -ENOMEM. */
int stk_bt_define(struct stk_bts *b, uint32_t id, const struct evs_event *e);
/* Frames of id (return addresses, innermost first) and their count; NULL if undefined. */
const uint64_t *stk_bt(const struct stk_bts *b, uint32_t id, uint32_t *n);
void stk_bts_free(struct stk_bts *b);

/*
 * A symbolizer with the module map of s (mapped modules first).  0, or
 * -errno with a message in err.
 */
int stk_sym_open(struct evs *s, const char *sysroot, const char *debug_dir,
		 struct rip_sym **out, char *err, size_t errlen);

/*
 * Symbols in the background, while the events are read: stk_warm_start
 * opens a symbolizer as stk_sym_open does and a thread that looks up every
 * new return address of the rip:bt events evs_next hands out (an evs bt
 * hook), so that the expensive part (opening modules, inflating compressed
 * debug sections) overlaps the pass.  Only that thread uses the symbolizer
 * until stk_warm_stop, which stops it after the lookup under way, joins it
 * and hands the symbolizer over (already cached lookups are then free).
 * NULL from stk_warm_start: no background work (out of memory, no thread,
 * no module map); the caller opens its symbolizer later as before.
 */
struct stk_warm;
struct stk_warm *stk_warm_start(struct evs *s, const char *sysroot, const char *debug_dir);
/* Stop w (NULL: nothing) and return its symbolizer (NULL when there was none). */
struct rip_sym *stk_warm_stop(struct stk_warm *w);


#define STK_MAX_INLINE 8

/*
 * Names of the frames of return address ra (ra - 1 is looked up), outermost
 * first (the real function, then what was inlined into it): at most
 * STK_MAX_INLINE names, each written into names[i] (len bytes), with ';'
 * replaced so a folded line stays parseable.  Returns the count (>= 1), 0
 * when the address is in librip-preload itself (the unwinder's own frame).
 */
int stk_frame_names(struct rip_sym *sym, uint64_t ra, char names[][256], int max);
/*
 * The same for a frame of a CPU sample (analysis/cpu.h): pc is looked up as
 * it is when ip (the interrupted instruction), else as a return address
 * (pc - 1); a frame of librip-preload is named too (the CPU went there).
 * The count (>= 1).
 */
int stk_sample_names(struct rip_sym *sym, uint64_t pc, bool ip, char names[][256], int max);

#endif /* RIP_ANALYSIS_STACKS_H */
