/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/through.h - the filter of `--through=FUNC` (rip leaks, rip
 * report, rip calltree, rip export): does a backtrace pass through one of
 * the functions or lines asked for?  sp-rtrace's rtrace-from-function and
 * its post-processor's --call-address, by name.
 *
 * A pattern is a function name (parse_a; a C++ name matches with or
 * without its parameters), a glob of fnmatch(3) (parse_*, anything with
 * '*', '?' or '['), or FILE:LINE (parse.c:42: a frame at that line of a
 * file whose path is FILE or ends in /FILE).  Each frame of a stack is a
 * return address, looked up as address - 1 with its inline chain, so a
 * function inlined into its caller counts as on the stack, and FILE:LINE
 * is the line of the call made there.  A stack passes when any of its
 * frames matches any pattern (the union of the patterns).
 *
 *	thr_new(pats, n, &t, err, len);
 *	thr_want(t, sym, bt, frames, nframes)	per use: cached by backtrace id
 *	thr_scan(t, sym, bts);			patterns that matched none of those
 *						stacks: are they on any stack at all?
 *	thr_info(t, i)				what pattern i matched
 *	thr_free(t);
 *
 * Each distinct backtrace is symbolized once (the answer is kept by id),
 * never per event.  One thr per trace: ids are a trace's own.
 */
#ifndef RIP_ANALYSIS_THROUGH_H
#define RIP_ANALYSIS_THROUGH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/stacks.h"

struct rip_sym;
struct thr;

#define THR_MAX 64   /* patterns at most */
#define THR_NAMES 4  /* names kept of what a pattern matched */
#define THR_NAMES_MAX 64 /* distinct names counted */

enum thr_kind { THR_NAME, THR_GLOB, THR_LINE };

/* What pattern i matched. */
struct thr_info {
	const char *pat;	    /* as given */
	enum thr_kind kind;
	uint64_t stacks;	    /* stacks asked about (thr_want) that it is on */
	size_t nnames;		    /* distinct functions (or lines) of theirs it matched
				       (THR_NAMES_MAX: that many or more) */
	char names[THR_NAMES][256]; /* the first THR_NAMES of them */
	bool anywhere;		    /* on a stack of the trace: stacks > 0, or found by thr_scan */
};

/*
 * A filter of the n patterns pats (kept by pointer: they must outlive it).
 * 0, -EINVAL for a pattern that is empty or a bad FILE:LINE, more than
 * THR_MAX, -ENOMEM; a message in err.
 */
int thr_new(const char *const *pats, size_t n, struct thr **out, char *err, size_t errlen);
void thr_free(struct thr *t);

/*
 * Does backtrace bt (frames[0..n), return addresses innermost first) pass
 * through a pattern?  1 yes, 0 no, -ENOMEM.  The answer is kept by bt and
 * frames are looked at only the first time (sym NULL: no names, nothing
 * matches).  bt 0 (no stack) and frames NULL (not defined, not yet or
 * never) are 0, counted in thr_stackless, and not kept.
 */
int thr_want(struct thr *t, struct rip_sym *sym, uint32_t bt, const uint64_t *frames, uint32_t n);

/*
 * For the patterns no stack asked about was on: look at every stack of bts
 * and set their anywhere.  0 or -ENOMEM.
 */
int thr_scan(struct thr *t, struct rip_sym *sym, const struct stk_bts *bts);

size_t thr_count(const struct thr *t);
const struct thr_info *thr_info(const struct thr *t, size_t i);
/* Uses asked about with no stack, or one not defined when asked: left out. */
uint64_t thr_stackless(const struct thr *t);

#endif /* RIP_ANALYSIS_THROUGH_H */
