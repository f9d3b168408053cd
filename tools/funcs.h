/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/funcs.h - what the front-ends of function tracing share (rip
 * report --functions, rip export of function records): the names of the
 * functions, symbolized once per function; the globs that pick functions
 * by name; and the pass of analysis/funcs.h set up over a source, with the
 * ids its ring file's table knows.
 */
#ifndef RIP_TOOLS_FUNCS_H
#define RIP_TOOLS_FUNCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/funcs.h"
#include "read/evsource.h"

/* Where a function is: its name ("fn#ID" or "0xADDR" when unknown), file and line. */
struct tfn_name {
	const char *func;
	const char *file; /* NULL when unknown */
	int line;
	const char *module; /* NULL when unknown */
};

struct tfn;

/* Names for the functions of source s.  0, or -1 with the message printed. */
int tfn_open(struct evs *s, const char *sysroot, const char *debug_dir, struct tfn **out);
/* The name of function id at addr (cached; good until tfn_free). */
const struct tfn_name *tfn_name(struct tfn *t, uint32_t id, uint64_t addr);
/*
 * Globs (fnmatch) that pick functions by name: shown when it matches one of
 * the n globs that do not start with '!' (or there are none) and none of
 * those that do.
 */
bool tfn_match(struct tfn *t, const char *const *globs, size_t n, uint32_t id, uint64_t addr);
/* Problems of the symbolizer, printed as rip ps does (tool_sym_problem). */
void tfn_problems(struct tfn *t);
void tfn_free(struct tfn *t);

/*
 * The pass over s with opts, its ids seeded from the table of the source's
 * ring file (when there is one): 0, or -1 with the message printed.
 */
int tfn_pass(struct evs *s, const struct fa_opts *opts, struct fa **out);

#endif /* RIP_TOOLS_FUNCS_H */
