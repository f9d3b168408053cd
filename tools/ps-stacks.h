/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/ps-stacks.h - rip ps --stacks: the shadow call stacks of the
 * threads and coroutines of a program built for function tracing, grouped
 * by path (analysis/fnstacks.h) or one by one (--threads), as text or
 * JSON.  cmd-ps.c owns the file, the slots and the symbols, and passes them
 * in a pst_ctx.
 */
#ifndef RIP_TOOLS_PS_STACKS_H
#define RIP_TOOLS_PS_STACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "read/funcs.h"
#include "read/ringfile.h"
#include "tools/ps-waits.h"

struct pst_ctx {
	const struct rr_file *f;
	const struct rr_slots *s;
	const struct rfn_stack *st; /* per slot of s (rfn_read_stacks) */
	bool threads, all, verbose, json, alive;
	uint64_t now_ticks;
	/* where the function at address fn is (an entry address) */
	bool (*site)(void *arg, uint64_t fn, struct pw_site *out);
	void *arg;
};

/*
 * The stacks, after cmd-ps.c's header line (text), or the whole JSON
 * document but its closing brace.  0 or -ENOMEM.
 */
int pst_print(const struct pst_ctx *c, FILE *out);

#endif /* RIP_TOOLS_PS_STACKS_H */
