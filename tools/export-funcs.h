/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/export-funcs.h - rip export of function records (analysis/funcs.h):
 * every call a span on its thread's track of a Chrome trace (a coroutine's
 * calls on a track of the coroutine's own, since a coroutine switched out
 * mid-call leaves its thread to run other code), and the call paths with
 * their self time (or calls) as folded stacks.  cmd-export.c drives both.
 */
#ifndef RIP_TOOLS_EXPORT_FUNCS_H
#define RIP_TOOLS_EXPORT_FUNCS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/funcs.h"
#include "read/evsource.h"
#include "tools/funcs.h"

/* The track of coroutine coro's calls: a tid no thread has (Linux pids stay below 2^22). */
#define XF_CORO_TID(coro) ((int32_t)((1u << 30) + (coro)))

struct xf_chrome;

/*
 * Spans for the Chrome trace being written to out (pid, times relative to
 * *first, a ",\n" before each object when *comma): *x NULL when the source
 * has no function records.  0, or -1 with the message printed.
 */
int xf_chrome_new(struct evs *s, FILE *out, int pid, const int64_t *first, bool *comma,
		  const char *sysroot, const char *debug_dir, struct xf_chrome **x);
/* Take e: 1 when it is a function record (drawn as spans, not as an instant), 0 if not, -ENOMEM. */
int xf_chrome_event(struct xf_chrome *x, const struct evs_event *e);
/* The source ended at last_ns: calls still running are drawn up to it.  0 or -ENOMEM. */
int xf_chrome_end(struct xf_chrome *x, int64_t last_ns);
void xf_chrome_free(struct xf_chrome *x);

/*
 * The path of node i of nodes, "outer;...;inner", names from t, in a
 * malloc'd string (NULL when out of memory).
 */
char *xf_path(struct tfn *t, const struct fa_node *nodes, size_t n, uint32_t i);

#endif /* RIP_TOOLS_EXPORT_FUNCS_H */
