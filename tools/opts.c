/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/opts.c - the options, the operands and the opening of a trace that
 * rip leaks and rip report share (see opts.h).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "read/ringfile.h"
#include "tools/opts.h"
#include "tools/progress.h"

int opts_common(const struct rip_cmd *cmd, int c, char **argv, struct opts *o)
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
	}
	return tool_usage_error(cmd, "unknown option or missing value: '%s'", argv[optind - 1]);
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
	ret = evs_open(target, &src->s, err, sizeof(err));
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
	src->sym = stk_warm_stop(src->warm);
	src->warm = NULL;
	evs_totals(src->s, &src->tot);
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
	evs_close(src->s);
	*src = (struct opts_src){ 0 };
}
