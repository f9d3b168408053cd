/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/fnstacks.h - the shadow call stacks of a ring file's slots
 * (read/funcs.h) grouped for rip ps --stacks: slots of the same kind whose
 * paths are the same, frame for frame, and that wait in the same kind of
 * call (or in none) form one group, biggest groups first, so that ten
 * thousand threads in a handful of places fit on a screen.
 *
 * Driven as a pass over the slots: fsg_init, then for each slot its stack
 * (rfn_reader_get) and fsg_add; fsg_finish sorts the groups; the front-end
 * symbolizes each group's frames and prints; fsg_groups_free.  Nothing per
 * slot is kept but what a member shows (struct fsg_member): the stacks are
 * kept once per group.  (fsg_group does it all over arrays of slots and
 * stacks.)  No printing here.
 */
#ifndef RIP_ANALYSIS_FNSTACKS_H
#define RIP_ANALYSIS_FNSTACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/funcs.h"
#include "read/ringfile.h"

/* What a group keeps of each member slot. */
struct fsg_member {
	uint32_t index; /* the slot's */
	int32_t tid;
	uint32_t kind, state;
	bool waiting;	    /* in a wrapped call (wa_waiting): of wait_kind, on wait_arg */
	uint32_t wait_kind;
	uint64_t wait_arg;
	char name[RIP_NAME_MAX];
};

struct fsg_group {
	struct rfn_stack st; /* the path of the group (its first member's stack) */
	uint32_t kind;	     /* RIP_KIND_THREAD or RIP_KIND_CORO */
	uint32_t state;	     /* the members' state when they all share it, else 0 */
	uint32_t wait;	     /* the wait kind every member is in (rip_wait_kind), 0: none */
	struct fsg_member *members; /* in the order they came */
	size_t n, cap;
	size_t torn; /* members whose stack kept changing while read */
};

struct fsg_groups {
	struct fsg_group *v;
	size_t n, cap;
	size_t nostack; /* slots shown with no stack: no instrumented code running */
	size_t torn;	/* stacks read while they moved (best effort) */
	bool all;	/* exited slots too */
	void *keys;	/* the table of paths, until fsg_finish */
};

/* Start an empty grouping (exited slots left out unless all).  0 or -ENOMEM. */
int fsg_init(struct fsg_groups *g, bool all);

/*
 * Slot sl with its stack st (rfn_reader_get) joins its group, or starts
 * one; a slot with an empty stack is only counted.  0 or -ENOMEM.
 */
int fsg_add(struct fsg_groups *g, const struct rr_slot *sl, const struct rfn_stack *st);

/* The groups in order: biggest first, then deepest, threads first, then slot order. */
void fsg_finish(struct fsg_groups *g);

/*
 * All of it over arrays: slots s->v[i] with their stacks st[i]
 * (rfn_read_stacks).  0 or -ENOMEM.
 */
int fsg_group(const struct rr_slots *s, const struct rfn_stack *st, bool all,
	      struct fsg_groups *out);
void fsg_groups_free(struct fsg_groups *g);

#endif /* RIP_ANALYSIS_FNSTACKS_H */
