/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/ps-stacks.h - rip ps --stacks: the shadow call stacks of the
 * threads and coroutines of a program built for function tracing, grouped
 * by path (analysis/fnstacks.h) or one by one (--threads), as text or
 * JSON.  cmd-ps.c owns the file, the pass over the slots and the symbols,
 * and passes them in a pst_ctx.
 */
#ifndef RIP_TOOLS_PS_STACKS_H
#define RIP_TOOLS_PS_STACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/fnstacks.h"
#include "read/funcs.h"
#include "read/ringfile.h"
#include "tools/ps-waits.h"

struct pst_ctx {
	const struct rr_file *f;
	bool threads, all, verbose, json;
	/* where the function at address fn is (an entry address) */
	bool (*site)(void *arg, uint64_t fn, struct pw_site *out);
	void *arg;
	bool first; /* --threads: no slot printed yet (the JSON's commas) */
};

/*
 * --threads, as a pass over the slots goes (nothing kept per slot): the
 * start, after cmd-ps.c's header line (text) or its JSON head; each slot
 * in use with its stack (rfn_reader_get); the end (the JSON's bracket).
 */
void pst_begin(struct pst_ctx *c, FILE *out);
void pst_thread(struct pst_ctx *c, const struct rr_slot *s, const struct rfn_stack *st,
		FILE *out);
void pst_end(struct pst_ctx *c, FILE *out);

/* The groups (fsg_finish'ed), after the header line or the JSON head. */
void pst_grouped(struct pst_ctx *c, const struct fsg_groups *g, FILE *out);

#endif /* RIP_TOOLS_PS_STACKS_H */
