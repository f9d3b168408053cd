/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/calltree.h - the analysis behind `rip calltree`: the call graph
 * that leads to the heap blocks a trace leaves unreleased (with all: to
 * every block it allocated), folded by function.
 *
 *	struct ct *ct = ct_new(&opts);
 *	ct_run(ct, evs, err, len);	the stacks and what each allocated
 *	ct_graph(ct, sym, err, len);	the functions on them, and the graph
 *	ct->nodes[0..nnodes)		heaviest first, "(others)" last if any
 *	ct->edges[0..nedges)		heaviest first
 *	ct_free(ct);
 *
 * Nodes are functions: the frames of the rip:bt stacks, symbolized (inline
 * chains included) and merged by name.  A node carries the bytes and
 * blocks of every stack it is on (inclusive, counted once per stack however
 * often recursion repeats it) and of the stacks it ends (self); an edge
 * caller -> callee the bytes and blocks of the stacks that make that call.
 * To stay readable the graph keeps the functions that carry at least 1% of
 * the bytes (or min_bytes, or the top heaviest) and maps the others, stack
 * by stack, onto one "(others)" node, so every kept figure is exact.
 * Unreleased blocks come from analysis/leaks.c; all makes its own pass.
 */
#ifndef RIP_ANALYSIS_CALLTREE_H
#define RIP_ANALYSIS_CALLTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/evsource.h"

struct rip_sym;
struct stk_bts;
struct thr;

struct ct_opts {
	bool all;		 /* every block allocated, freed or not */
	bool top_set;		 /* keep the top heaviest functions (instead of >= 1%) */
	bool min_set;		 /* keep the functions of min_bytes or more (instead of >= 1%) */
	uint64_t top, min_bytes; /* with both set, both must hold */
	const char *kind;	 /* a module's kind instead of heap memory (rip/module.h) */
};

/* A function of the graph (or "(others)"). */
struct ct_node {
	const char *name;
	uint64_t bytes, count;		 /* of the stacks it is on */
	uint64_t self_bytes, self_count; /* of the stacks it ends */
};

/* A call: the stacks on which from calls to. */
struct ct_edge {
	uint32_t from, to; /* indexes in nodes */
	uint64_t bytes, count;
};

struct ct {
	struct ct_opts o;
	uint64_t events;		   /* events read */
	size_t nstacks;			   /* distinct backtraces that allocated */
	uint64_t total_bytes, total_count; /* what they allocated */
	/* the graph, after ct_graph */
	struct ct_node *nodes; /* heaviest first (bytes, blocks, then name) */
	size_t nnodes;
	struct ct_edge *edges; /* heaviest first (bytes, then from, to) */
	size_t nedges;
	struct ct_priv *p;
};

/* Returns NULL when out of memory. */
struct ct *ct_new(const struct ct_opts *opts);
/*
 * Read every event of s and gather the stacks and what they allocated.  0,
 * or -errno with a message in err (a corrupt source: what evs_next said; an
 * event type of ours without the fields of rip/resource.h; out of memory).
 */
int ct_run(struct ct *ct, struct evs *s, char *err, size_t errlen);
/*
 * Name the frames of every stack with sym (NULL: addresses only) and build
 * the graph: nodes, edges.  0, or -ENOMEM with a message in err.
 */
int ct_graph(struct ct *ct, struct rip_sym *sym, char *err, size_t errlen);
/*
 * Between ct_run and ct_graph: keep only the stacks that pass through t's
 * patterns (analysis/through.h, with sym), total_*, nstacks theirs.  0, or
 * -ENOMEM with a message in err.
 */
int ct_through(struct ct *ct, struct thr *t, struct rip_sym *sym, char *err, size_t errlen);
/* The rip:bt definitions the pass read (for thr_scan). */
const struct stk_bts *ct_bts(const struct ct *ct);
void ct_free(struct ct *ct);

#endif /* RIP_ANALYSIS_CALLTREE_H */
