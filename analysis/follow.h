/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/follow.h - what is live at each moment of a trace, followed event
 * by event, for `rip export`: the heap in use and the open descriptors
 * after each event (the counter tracks of chrome), the size a free
 * released, and, when asked to fold, the bytes and allocations of each
 * backtrace and the rip:bt definitions (the values of folded).
 *
 *	xr_new(evs_types(s), fold, &x, err, len);
 *	while (evs_next(s, &e, ...) > 0)
 *		role = xr_event(x, &e);		x->mem, x->nfds, x->freed now
 *	xr_leaked(x, &by_bt);			what is still live, by backtrace
 *	xr_free(x);
 *
 * Live blocks sit in one table (address -> size, backtrace), descriptors in
 * another; a block made again while live (its free was not recorded)
 * replaces the old one, and a release of something never seen made (made
 * before tracing started) changes nothing.
 */
#ifndef RIP_ANALYSIS_FOLLOW_H
#define RIP_ANALYSIS_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/live.h"
#include "analysis/roles.h"
#include "analysis/stacks.h"
#include "read/evsource.h"

struct xr {
	struct role_map r;    /* the types of rip/resource.h by id, and where their fields are */
	const struct ev_types *types; /* the source's (the names of module kinds) */
	bool fold;	      /* keep backtraces and per-backtrace totals */
	struct stk_map live;  /* heap block address (mapping: key) -> a: size, b: backtrace */
	struct live_maps maps; /* the pieces of the anonymous mappings */
	struct live_maps rsv;  /* address space reserved, not memory (live_is_reserve) */
	struct stk_map fds;   /* open descriptors */
	struct stk_map sites; /* fold: backtrace -> a: bytes allocated, b: allocations */
	struct stk_bts bts;   /* fold: the rip:bt definitions */
	uint64_t mem, nfds;   /* heap bytes in use and descriptors open, now */
	uint64_t freed;	      /* size released by the last event (0: none known) */
	/*
	 * Set by the caller before the events: follow this kind of a tracing
	 * module (rip/module.h) instead of heap memory: its acquires and
	 * transfers make the sites, what is live is its resources.
	 */
	const char *kind;
	struct stk_map refs; /* kind refcounted: key -> a: references held */
};

/*
 * Start following the resources of a source with event types types (fold:
 * also the backtraces and per-backtrace totals).  0, or -errno with a
 * message in err (out of memory; a type of ours without the fields of
 * rip/resource.h).
 */
int xr_new(const struct ev_types *types, bool fold, struct xr **out, char *err, size_t errlen);
/*
 * Follow event e.  Its role (enum role of analysis/roles.h: ROLE_NONE for
 * other events), or -ENOMEM.
 */
int xr_event(struct xr *x, const struct evs_event *e);
/* The name of the kind of resource event e ("malloc", "openat"...) of role, or NULL. */
const char *xr_kind(const struct xr *x, const struct evs_event *e, int role);
/* Add what is live now into by_bt: backtrace -> a: bytes.  0 or -ENOMEM. */
int xr_leaked(const struct xr *x, struct stk_map *by_bt);
void xr_free(struct xr *x);

#endif /* RIP_ANALYSIS_FOLLOW_H */
