/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/fnstacks.h - the shadow call stacks of a ring file's slots
 * (read/funcs.h) grouped for rip ps --stacks: slots of the same kind whose
 * paths are the same, frame for frame, and that wait in the same kind of
 * call (or in none) form one group, biggest groups first, so that ten
 * thousand threads in a handful of places fit on a screen.
 *
 * Driven as: rr_read_slots, rfn_read_stacks, fsg_group; the front-end
 * symbolizes each group's frames and prints; fsg_groups_free.  No printing
 * here.
 */
#ifndef RIP_ANALYSIS_FNSTACKS_H
#define RIP_ANALYSIS_FNSTACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/funcs.h"
#include "read/ringfile.h"

struct fsg_group {
	const struct rfn_stack *st; /* the path of the group (its first member's stack) */
	uint32_t kind;		    /* RIP_KIND_THREAD or RIP_KIND_CORO */
	uint32_t state;		    /* the members' state when they all share it, else 0 */
	uint32_t wait;		    /* the wait kind every member is in (rip_wait_kind), 0: none */
	size_t *members;	    /* indices into the slots */
	size_t n, cap;
	size_t torn; /* members whose stack kept changing while read */
};

struct fsg_groups {
	struct fsg_group *v;
	size_t n, cap;
	size_t nostack; /* slots shown with no stack: no instrumented code running */
	size_t torn;	/* stacks read while they moved (best effort) */
};

/*
 * Group slots s->v[i] by their stacks st[i] (rfn_read_stacks), leaving out
 * exited slots unless all; slots with an empty stack are only counted.
 * 0 or -ENOMEM.
 */
int fsg_group(const struct rr_slots *s, const struct rfn_stack *st, bool all,
	      struct fsg_groups *out);
void fsg_groups_free(struct fsg_groups *g);

#endif /* RIP_ANALYSIS_FNSTACKS_H */
