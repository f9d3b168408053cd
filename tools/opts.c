/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/opts.c - the options, the operands and the opening of a trace that
 * rip leaks and rip report share (see opts.h).
 */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "read/ringfile.h"
#include "tools/format.h"
#include "tools/opts.h"
#include "tools/progress.h"

int opts_common(const struct rip_cmd *cmd, int c, char **argv, const struct option *longopts,
		struct opts *o)
{
	switch (c) {
	case 'j':
		o->json = true;
		return 0;
	case 'n':
		if (tool_parse_size(optarg, &o->top) || !o->top)
			return tool_usage_error(cmd, "--top wants a number > 0, not '%s'", optarg);
		return 0;
	case 'R':
		o->sysroot = optarg;
		return 0;
	case 'D':
		o->debug_dir = optarg;
		return 0;
	case 'h':
		tool_help(cmd);
		return -1;
	case OPTS_THROUGH:
		return opts_through_arg(cmd, optarg, o->through, &o->nthrough);
	}
	return tool_bad_option(cmd, argv, longopts);
}

int opts_operand(const struct rip_cmd *cmd, int argc, char **argv, struct opts *o,
		 const char *more)
{
	if (optind == argc)
		return tool_usage_error(cmd, "which trace? give a trace directory (rip run --mem -o "
					     "DIR), a pid or a ring file");
	if (optind + 1 != argc)
		return tool_usage_error(cmd, "one TRACE-OR-TARGET only%s", more ? more : "");
	o->target = argv[optind];
	return 0;
}

int opts_open(struct opts_src *src, const struct opts *o, const char *target, const char *label)
{
	char err[RR_ERR_MAX + PATH_MAX];
	int ret;

	tool_heap_big();
	ret = tool_evs_open(target, &src->s, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		return -1;
	}
	src->sysroot = o->sysroot;
	src->debug_dir = o->debug_dir;
	progress_bar(src->s, label);
	src->warm = stk_warm_start(src->s, src->sysroot, src->debug_dir);
	return 0;
}

void opts_ran(struct opts_src *src)
{
	if (src->warm)
		src->sym = stk_warm_stop(src->warm);
	src->warm = NULL;
	evs_totals(src->s, &src->tot);
}

int opts_symbols_now(struct opts_src *src)
{
	if (src->warm)
		src->sym = stk_warm_stop(src->warm);
	src->warm = NULL;
	return opts_symbols(src);
}

int opts_symbols(struct opts_src *src)
{
	char err[RR_ERR_MAX];
	int ret;

	if (src->sym)
		return 0;
	ret = stk_sym_open(src->s, src->sysroot, src->debug_dir, &src->sym, err, sizeof(err));
	if (ret)
		tool_err("%s", err);
	return ret ? -1 : 0;
}

int opts_resolve(const struct opts_src *src, uint64_t ra, struct rip_frame *fr)
{
	int n = src->sym && ra ? rip_sym_lookup(src->sym, ra - 1, fr, STK_MAX_INLINE) : -1;

	if (n <= 0) {
		memset(fr, 0, sizeof(*fr));
		n = 1;
	}
	return n;
}

void opts_close(struct opts_src *src)
{
	struct rip_sym *sym = stk_warm_stop(src->warm);

	if (sym)
		rip_sym_free(sym);
	if (src->sym)
		rip_sym_free(src->sym);
	thr_free(src->thr);
	tool_evs_close(src->s);
	*src = (struct opts_src){ 0 };
}

/* ---- --through ------------------------------------------------------------------------ */

int opts_through_arg(const struct rip_cmd *cmd, const char *arg, const char **pats, size_t *n)
{
	if (!*arg)
		return tool_usage_error(cmd, "--through wants a function, a glob or FILE:LINE");
	if (*n == THR_MAX)
		return tool_usage_error(cmd, "--through at most %d times", THR_MAX);
	pats[(*n)++] = arg;
	return 0;
}

int opts_through_new(const char *const *pats, size_t n, struct thr **out)
{
	char err[256];

	*out = NULL;
	if (!n)
		return 0;
	if (thr_new(pats, n, out, err, sizeof(err))) {
		tool_err("%s", err);
		return -1;
	}
	return 0;
}

int opts_through_check(struct thr *t, struct rip_sym *sym, const struct stk_bts *bts,
		       const char *source)
{
	if (!t)
		return 0;
	thr_scan(t, sym, bts);
	return opts_through_unmatched(t, source, !sym);
}

int opts_through_unmatched(const struct thr *t, const char *source, bool nosym)
{
	int ret = 0;

	for (size_t i = 0; i < thr_count(t); i++) {
		const struct thr_info *f = thr_info(t, i);

		if (f->anywhere)
			continue;
		tool_err("--through=%s: no %s on the stacks of %s%s", f->pat,
			 f->kind == THR_LINE ? "frame at that line" : "function of that name",
			 source, nosym ? " (no symbols)" : "");
		ret = -1;
	}
	return ret;
}

void opts_through_text(FILE *out, const struct thr *t)
{
	if (!t)
		return;
	fputs("filter: only what was made through", out);
	for (size_t i = 0; i < thr_count(t); i++) {
		const struct thr_info *f = thr_info(t, i);

		fprintf(out, "%s --through=%s (", i ? "; or" : "", f->pat);
		if (!f->stacks) {
			fputs("on none of these stacks)", out);
			continue;
		}
		fputs("matched ", out);
		for (size_t k = 0; k < f->nnames && k < THR_NAMES; k++)
			fprintf(out, "%s%s", k ? ", " : "", f->names[k]);
		if (f->nnames > THR_NAMES)
			fprintf(out, " and %s%zu more",
				f->nnames >= THR_NAMES_MAX ? "at least " : "",
				f->nnames - THR_NAMES);
		fprintf(out, "; on %" PRIu64 " stack%s)", f->stacks, f->stacks == 1 ? "" : "s");
	}
	fputc('\n', out);
}

void opts_through_json(FILE *out, const struct thr *t)
{
	static const char *const kinds[] = { "name", "glob", "line" };

	if (!t)
		return;
	fputs(",\"through\":[", out);
	for (size_t i = 0; i < thr_count(t); i++) {
		const struct thr_info *f = thr_info(t, i);

		fputs(i ? ",{\"pattern\":" : "{\"pattern\":", out);
		json_str(out, f->pat);
		fprintf(out,
			",\"kind\":\"%s\",\"stacks\":%" PRIu64
			",\"functions\":%zu,\"matched\":[",
			kinds[f->kind], f->stacks, f->nnames);
		for (size_t k = 0; k < f->nnames && k < THR_NAMES; k++) {
			if (k)
				fputc(',', out);
			json_str(out, f->names[k]);
		}
		fputs("]}", out);
	}
	fputc(']', out);
}
