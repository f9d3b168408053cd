/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/funcs.h - what function tracing leaves in a ring file (rip/abi.h,
 * lib/func.c): the shadow call stack of each slot, read live or after a
 * crash with the writer's protocol, and the function table that maps the
 * ids of rip:fn_entry and rip:fn_exit records back to addresses.
 */
#ifndef RIP_READ_FUNCS_H
#define RIP_READ_FUNCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rip/abi.h>

#include "read/ringfile.h"

/* A frame's fn word: the entry address in the low 48 bits (the top ones are the writer's). */
#define RFN_ADDR_MASK ((1ull << 48) - 1)

/* One slot's shadow call stack as read. */
struct rfn_stack {
	bool valid;	 /* the slot ran instrumented code under its present owner */
	bool torn;	 /* it kept changing while read: a best-effort copy */
	uint32_t depth;	 /* levels entered and not left, those deeper than kept included */
	uint32_t n;	 /* frames in fn[]: depth, at most RIP_FN_DEPTH */
	uint32_t resync; /* frames dropped without their exit, exits without a frame */
	uint64_t fn[RIP_FN_DEPTH]; /* entry addresses, outermost first */
};

/* A data range of the file: [lo, hi). */
struct rfn_range {
	uint64_t lo, hi;
};

/*
 * The stacks of a file's slots read one at a time, as a pass over its slots
 * goes (rip ps --stacks keeps no stack per slot): the pages of the stack
 * area that hold data are found once at open (SEEK_DATA), so that a hole is
 * never read.
 */
struct rfn_reader {
	struct rr_file *f;
	bool area; /* the file has a stack area */
	struct rfn_range *r;
	size_t nr, k; /* ranges with data; the one the last slot was in */
};

/* 0, or -errno with a message in err.  Close it with rfn_reader_close. */
int rfn_reader_open(struct rr_file *f, struct rfn_reader *rd, char *err, size_t errlen);

/*
 * The stack of slot sl (read from the same file; any order, index order the
 * fastest) into *out: valid false when it is another owner's (rip/abi.h),
 * lies in a part of the file never written, or the file has no stack area.
 * 0, or -EIO with a message when the file shrank.
 */
int rfn_reader_get(struct rfn_reader *rd, const struct rr_slot *sl, struct rfn_stack *out,
		   char *err, size_t errlen);
void rfn_reader_close(struct rfn_reader *rd);

/*
 * The stacks of the slots s->v[0 .. s->n) (rr_read_slots of the same f)
 * into a calloc'd array *out of s->n entries (free it).  A slot whose stack
 * is another owner's (rip/abi.h), or lies in a part of the file never written (a hole,
 * which is never read: reading it would back it), or a file without a
 * stack area, gets valid false.  0, or -errno with a message in err.
 */
int rfn_read_stacks(struct rr_file *f, const struct rr_slots *s, struct rfn_stack **out, char *err,
		    size_t errlen);

/*
 * One slot's stack src (in the area at hdr->fn_off, checked) into *d, when
 * it is the stack of owner (the low 32 bits of the slot's attach_ts).  The read side of the
 * protocol of rip/abi.h: a few tries, then a torn copy.  Reads the mapping:
 * call it under rr_guard_enter, only for a stack whose page is backed.
 */
void rfn_copy_stack(const struct rip_fn_stack *src, uint32_t owner, struct rfn_stack *d);

/*
 * The function table as it is now: *n ids, the address of id i at
 * (*out)[i - 1] (0: not defined yet, or lost), in a malloc'd array (NULL
 * when n is 0).  0, or -errno with a message in err.
 */
int rfn_read_table(struct rr_file *f, uint64_t **out, uint32_t *n, char *err, size_t errlen);

/*
 * The function table of the ring file behind an event source: source is
 * a ring file, or a trace directory whose copy of its ring file
 * (.rip-ring) has one.  0 with *n 0 when there is none; -errno with a
 * message in err when the file is there and cannot be read.
 */
int rfn_source_table(const char *source, uint64_t **out, uint32_t *n, char *err, size_t errlen);

#endif /* RIP_READ_FUNCS_H */
