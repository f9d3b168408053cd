/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/leakdiff.h - the comparison behind `rip leaks --diff OLD NEW`:
 * the groups of NEW's leak report (leaks.h) that OLD's has not, or has
 * smaller.  Backtrace ids differ from one trace to another, and so do
 * addresses, so a group is known across traces by its resource and its
 * symbolized stack, its key: "function:line" per frame (module+offset
 * without symbols), joined by ";", the frames of librip-preload left out.
 * Groups of one report with the same key are one group.
 *
 *	struct ld_diff d;
 *	ld_run(old_lk, old_sym, new_lk, new_sym, &d);	both lk_run already
 *	for (i = 0; i < d.n; i++)			the biggest growth first
 *		d.v[i].count - d.v[i].ocount ...
 *	ld_free(&d);
 */
#ifndef RIP_ANALYSIS_LEAKDIFF_H
#define RIP_ANALYSIS_LEAKDIFF_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/leaks.h"

struct rip_sym;

/* A group of NEW absent from OLD (ocount 0) or grown in count or bytes. */
struct ld_group {
	enum lk_res res;
	char *key;		  /* the symbolized stack */
	uint64_t count, bytes;	  /* in NEW */
	uint64_t ocount, obytes;  /* in OLD; 0 when it is new */
	const struct lk_group *g; /* the first group of NEW with this key: its stack, its sample */
};

struct ld_diff {
	struct ld_group *v; /* by growth in bytes, then in count, then by key */
	size_t n;
	size_t nnew;	    /* of them, absent from OLD */
};

/*
 * Compare the groups of the report nw (symbols nsym) with those of old
 * (osym); a NULL symbol table names frames by module and offset.  0, or
 * -ENOMEM with *out empty.
 */
int ld_run(const struct lk *old, struct rip_sym *osym, const struct lk *nw, struct rip_sym *nsym,
	   struct ld_diff *out);
void ld_free(struct ld_diff *d);

#endif /* RIP_ANALYSIS_LEAKDIFF_H */
