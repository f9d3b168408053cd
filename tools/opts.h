/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/opts.h - what the commands that report on a resource trace (rip
 * leaks, rip report) share: the options they all take (--json, --top,
 * --sysroot, --debug-dir, --help) and their operand, and the trace they
 * open: its event source, the symbols warmed up beside the pass, the losses
 * it reports.
 *
 *	static const struct option longopts[] = { OPTS_LONG, { "sort", ... }, { 0 } };
 *	while ((c = getopt_long(argc, argv, OPTS_SHORT "s:", longopts, NULL)) != -1)
 *		switch (c) {
 *		case 's': ...
 *		default: ret = opts_common(&cmd_def, c, argv, longopts, &o); if (ret) return ret;
 *		}
 *	opts_operand(&cmd_def, argc, argv, &o, NULL);
 *	opts_open(&src, &o, "rip leaks");  the pass: lk_run(lk, src.s, ...)  opts_ran(&src);
 *	opts_symbols(&src);  opts_resolve(&src, ra, frames);  opts_close(&src);
 */
#ifndef RIP_TOOLS_OPTS_H
#define RIP_TOOLS_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "analysis/stacks.h"
#include "analysis/through.h"
#include "read/evsource.h"
#include "read/sym.h"
#include "tools/tool.h"

struct opts {
	bool json;		 /* -j, --json */
	uint64_t top;		 /* -n, --top=N (k, m, g suffixes); the caller's default */
	const char *sysroot;	 /* --sysroot=DIR */
	const char *debug_dir;	 /* --debug-dir=DIR */
	const char *target;	 /* the operand */
	const char *through[THR_MAX]; /* --through=FUNC, repeatable */
	size_t nthrough;
};

#define OPTS_SHORT "jn:h"
#define OPTS_THROUGH 1000 /* getopt's value of --through */
#define OPTS_LONG                                                                                  \
	{ "json", no_argument, NULL, 'j' }, { "top", required_argument, NULL, 'n' },               \
		{ "sysroot", required_argument, NULL, 'R' },                                       \
		{ "debug-dir", required_argument, NULL, 'D' }, { "help", no_argument, NULL, 'h' }, \
		{ "through", required_argument, NULL, OPTS_THROUGH }

/*
 * Option c of getopt_long (opterr 0, given longopts), when the command's own
 * switch does not take it: 0 when it is one of OPTS_LONG, taken into o; -1
 * after --help (the command then exits 0); else the exit status of a usage
 * error (a bad value, an unknown option, a missing value), the message
 * printed.
 */
struct option;
int opts_common(const struct rip_cmd *cmd, int c, char **argv, const struct option *longopts,
		struct opts *o);

/*
 * The one operand after the options: 0 with o->target set, or the exit
 * status of a usage error when there is none or more; more, if not NULL,
 * ends the message of the latter (" (two with --diff)").
 */
int opts_operand(const struct rip_cmd *cmd, int argc, char **argv, struct opts *o,
		 const char *more);

/* An opened trace. */
struct opts_src {
	struct evs *s;
	struct rip_sym *sym;	/* NULL until there are stacks to show */
	struct evs_totals tot;	/* its losses: after opts_ran */
	const char *sysroot, *debug_dir;
	struct stk_warm *warm;
	struct thr *thr;	/* --through: after opts_through */
};

/*
 * Open target (a trace directory, a pid or a ring file) with o's symbol
 * options, its progress bar named label, symbols warming up for the pass
 * the caller runs next.  0, or -1 with the message printed.
 */
int opts_open(struct opts_src *src, const struct opts *o, const char *target, const char *label);
/* The pass is over: its symbols and the trace's losses are taken. */
void opts_ran(struct opts_src *src);
/* Symbols for the stacks to show, if the warm-up had none: 0, or -1 with the message printed. */
int opts_symbols(struct opts_src *src);
/*
 * Symbols before the pass (for a filter that names frames as the events go
 * by): the warm-up stops and its symbolizer is src->sym.  0, or -1 with
 * the message printed.
 */
int opts_symbols_now(struct opts_src *src);
/*
 * Resolve return address ra (ra - 1 is looked up) into fr (STK_MAX_INLINE
 * frames, the inline chain, innermost first): their count, at least 1 (an
 * empty frame when nothing is known).
 */
int opts_resolve(const struct opts_src *src, uint64_t ra, struct rip_frame *fr);
void opts_close(struct opts_src *src);

/*
 * --through=FUNC (repeatable) into pats[*n] (THR_MAX at most): 0, or the
 * exit status of a usage error (printed).  rip calltree and rip export
 * parse it themselves with this.
 */
int opts_through_arg(const struct rip_cmd *cmd, const char *arg, const char **pats, size_t *n);
/*
 * The filter of patterns pats[n] (one per trace: it keeps answers by
 * backtrace id): 0 with *out set (NULL when n is 0), or -1 with the
 * message printed.
 */
int opts_through_new(const char *const *pats, size_t n, struct thr **out);
/*
 * After the filter was asked about every stack of the result: the patterns
 * that matched none of them are looked for on every stack of bts; -1 (the
 * error printed, naming source) when one is on none, else 0.
 */
int opts_through_check(struct thr *t, struct rip_sym *sym, const struct stk_bts *bts,
		       const char *source);
/* The same once thr_scan was done (nosym: there were no symbols): 0 or -1. */
int opts_through_unmatched(const struct thr *t, const char *source, bool nosym);
/* "filter: --through=parse_a (matched parse_a, 2 stacks)" and a newline. */
void opts_through_text(FILE *out, const struct thr *t);
/* ,"through":[{"pattern":...,"kind":...,"stacks":N,"matched":[...]}] (nothing for NULL). */
void opts_through_json(FILE *out, const struct thr *t);

#endif /* RIP_TOOLS_OPTS_H */
