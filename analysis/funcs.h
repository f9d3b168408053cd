/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/funcs.h - the function calls of a trace: its rip:fn_entry and
 * rip:fn_exit records (lib/func.c writes them) paired into calls, per
 * thread and per coroutine (a coroutine's calls make a stack of their own,
 * whichever thread ran it), and summed up by function, as uftrace report
 * does: calls, total time (the time inside the function, a recursion
 * counted once, at its outermost call), self time (the total less the
 * calls it made, as far as they are shown) and the longest call.  rip
 * report --functions prints the sums; rip export draws the calls (chrome)
 * and the time-weighted call paths (folded).
 *
 *	fa_new(evs_types(s), &opts, &p);   finds the types by name
 *	fa_add_table(p, addrs, n);         ids known from a ring file's table
 *	while (evs_next(s, &e, ...) > 0)
 *		fa_event(p, &e);           1: a function record, used; 0: another event
 *	fa_end(p, end_ns);                 calls still running end at end_ns
 *	fa_funcs(p, &n); fa_nodes(p, &n); fa_ctxs(p, &n);
 *	fa_free(p);
 *
 * Filters, as uftrace's: a call deeper than max_depth, or shorter than
 * min_ns, or of a function keep() turns down, is not shown: it is not
 * counted, draws no span, and its time stays with the call that made it
 * (that call's self time); a function turned down is left out of the call
 * paths too.
 *
 * Records that do not pair are counted, never guessed at: an exit whose
 * entry is not in the trace (a flight recorder keeps the last calls, a
 * recorder attached late), and calls whose exit never came (a longjmp or
 * an exception over them; they end when the call below them ends).  A
 * trace may say which calls were open when it began (rip:fn_open, outermost
 * first: a forked child's first records name the calls it inherited from
 * its parent's stack): those are calls that began before the trace, and
 * their time counts from their record on.
 * Never prints.
 */
#ifndef RIP_ANALYSIS_FUNCS_H
#define RIP_ANALYSIS_FUNCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/evsource.h"

struct fa_span;

struct fa_opts {
	uint32_t max_depth; /* calls at this depth or shallower (1: the outermost); 0: all */
	int64_t min_ns;	    /* calls at least this long; 0: all */
	/* is the function at addr (id) shown?  NULL: every one */
	bool (*keep)(void *arg, uint32_t id, uint64_t addr);
	void *arg;
	bool per_ctx; /* sums per thread and coroutine too (fa_ctx_funcs) */
	/* each call shown, when it ends (or at fa_end); NULL: none */
	void (*span)(void *arg, const struct fa_span *s);
	void *span_arg;
};

/* The sums of one function (over the whole trace, or in one context). */
struct fa_fn {
	uint32_t id;
	uint64_t addr;	  /* 0: the trace never said */
	uint64_t calls;	  /* calls shown */
	int64_t total_ns; /* their time, a recursion counted once */
	int64_t self_ns;  /* less the calls they made that are shown */
	int64_t max_ns;	  /* the longest call */
	uint64_t running; /* calls that had not ended at the end of the trace */
	uint64_t before;  /* calls that began before the trace (rip:fn_open): timed from there */
};

/* A thread or a coroutine: a stack of calls of its own. */
struct fa_ctx {
	int32_t tid;	  /* the thread (for a coroutine, the one it ran on last) */
	uint32_t coro;	  /* slot index + 1 of the coroutine, 0: the thread itself */
	const char *name; /* its name (the source's), "" when unknown */
	uint64_t calls;	  /* calls shown */
	struct fa_fn *fn; /* with per_ctx: its sums, nfn of them */
	size_t nfn;
};

/* One call, for the span callback. */
struct fa_span {
	const struct fa_ctx *ctx;
	uint32_t id;
	uint64_t addr;
	int64_t start_ns, end_ns;
	uint32_t depth; /* 1: the outermost call of its context */
	bool running;	/* it had not ended when the trace did (end_ns: the end) */
	bool before;	/* it began before the trace did (start_ns: its rip:fn_open) */
};

/* A call path: node parent's path, then the function id; self time spent right there. */
struct fa_node {
	uint32_t parent; /* index of the parent node, 0: the root (node 0 has none) */
	uint32_t id;
	uint64_t addr;
	int64_t self_ns;
	uint64_t calls;
};

struct fa_totals {
	uint64_t entries, exits; /* records read */
	uint64_t no_entry;	 /* exits whose entry was not in the trace */
	uint64_t no_exit;	 /* calls that ended with no exit record: a call below them ended */
	uint64_t running;	 /* calls still running at the end */
	uint64_t before;	 /* calls open when the trace began (rip:fn_open records) */
	uint64_t coro_ended; /* calls open in a coroutine when it was destroyed (rip:coro_end) */
	uint64_t ids_unknown;	 /* records of an id no definition named */
	uint64_t id0;		 /* records of functions the writer had no id for */
};

struct fa;

/* A pass over a source with these types; opts may be NULL.  0 or -ENOMEM. */
int fa_new(const struct ev_types *types, const struct fa_opts *opts, struct fa **out);
/* Does the source have function records at all? */
bool fa_typed(const struct fa *p);
/* The addresses of ids 1..n (addrs[id - 1], 0: unknown), e.g. a ring file's table.  0 or -ENOMEM. */
int fa_add_table(struct fa *p, const uint64_t *addrs, uint32_t n);
/* Take e: 1 if it was a function record (or definition), 0 if not, -ENOMEM. */
int fa_event(struct fa *p, const struct evs_event *e);
/* The trace ended at end_ns: calls still running are counted up to it.  0 or -ENOMEM. */
int fa_end(struct fa *p, int64_t end_ns);

/* The functions with calls, in id order (p's, good until fa_free; NULL when none). */
const struct fa_fn *fa_funcs(const struct fa *p, size_t *n);
/* The call paths, node 0 the root (the same). */
const struct fa_node *fa_nodes(const struct fa *p, size_t *n);
/* The threads and coroutines, in the order first seen (the same). */
const struct fa_ctx *fa_ctxs(const struct fa *p, size_t *n);
/* The address of id (0: unknown). */
uint64_t fa_addr(const struct fa *p, uint32_t id);
void fa_totals(const struct fa *p, struct fa_totals *t);

void fa_free(struct fa *p);

#endif /* RIP_ANALYSIS_FUNCS_H */
