// SPDX-License-Identifier: Apache-2.0
/*
 * tools/cmd-pagemap.c - `rip pagemap`: the traced program's writable memory
 * as the preload library saw it at exit (or on request), mapping by
 * mapping: pages present, swapped, present and all zero, and how much of
 * it the allocations live at that moment cover (sp-rtrace's pagemap view).
 *
 * The pass (the live blocks, the snapshots and their counts) is
 * analysis/pagemap.c's; this file reads the options and prints the
 * snapshot it chose, as a table or as JSON.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rip/resource.h>

#include "analysis/pagemap.h"
#include "read/evsource.h"
#include "tools/progress.h"
#include "tools/tool.h"

static int cmd_pagemap(int argc, char **argv);

static const struct rip_cmd cmd_pagemap_def = {
	.name = "pagemap",
	.run = cmd_pagemap,
	.summary = "pages present, swapped and zero per writable mapping, and their use",
	.usage = "usage: rip pagemap [options] TRACE-OR-TARGET\n"
		 "\n"
		 "Show the traced program's private writable mappings (heap, stacks, anonymous\n"
		 "memory, the data of its libraries) as they were when the preload library took\n"
		 "a pagemap snapshot: at exit, and on the signal given to rip run\n"
		 "--pagemap-signal.  For each mapping: its size in pages, the pages present in\n"
		 "memory, swapped out, and present but all zero; the pages that live heap\n"
		 "allocations (and anonymous mmaps) touch, their bytes and count; and the\n"
		 "present pages no live allocation is on.  The trace must come from\n"
		 "rip run --mem.  TRACE-OR-TARGET is a trace directory, a pid or a ring file.\n"
		 "\n"
		 "  -j, --json            one JSON document (see rip-pagemap(1))\n"
		 "  -s, --snapshot=N      report snapshot N (1 is the first; default: the last\n"
		 "                        complete one)\n"
		 "  -m, --min-pages=N     list only mappings with at least N pages present or\n"
		 "                        swapped (the totals cover all)\n"
		 "  -h, --help            this text\n"
		 "\n"
		 "Exit status: 0 the report was printed, 1 failure (no such trace, a trace with\n"
		 "no complete snapshot, a corrupt trace), 2 usage error.\n",
};

RIP_COMMAND(cmd_pagemap_def);

struct pm_args {
	struct pm_opts an; /* which snapshot */
	bool json;
	uint64_t min_pages;
	const char *target;
};

/* The command: its options, the source and the pass. */
struct pm_cmd {
	struct pm_args o;
	struct evs *s;
	struct pm *pm;
	struct evs_totals tot;
};

/* ---- output ------------------------------------------------------------------------------ */

static const char *pm_name(const struct pm_map *m)
{
	if (*m->path)
		return m->path;
	return "[anon]";
}

static const char *pm_reason(uint32_t r)
{
	return r == RIP_PM_EXIT ? "exit" : r == RIP_PM_SIGNAL ? "signal" : "unknown";
}

/* 4096 -> "4.0K": a short size for the table. */
static const char *pm_human(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "BKMGTPE";
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 6) {
		v /= 1024;
		u++;
	}
	if (!u)
		snprintf(buf, len, "%" PRIu64, bytes);
	else
		snprintf(buf, len, v < 10 ? "%.1f%c" : "%.0f%c", v, units[u]);
	return buf;
}

static void pm_add(struct pm_count *t, const struct pm_count *c)
{
	t->size += c->size;
	t->pages += c->pages;
	t->present += c->present;
	t->swapped += c->swapped;
	t->zero += c->zero;
	t->live_pages += c->live_pages;
	t->live_bytes += c->live_bytes;
	t->live_blocks += c->live_blocks;
	t->unused += c->unused;
}

static bool pm_listed(const struct pm_cmd *st, const struct pm_map *m)
{
	return m->c.present + m->c.swapped >= st->o.min_pages;
}

static void pm_text_row(FILE *out, const char *range, const struct pm_count *c, bool zero_ok,
			const char *name)
{
	char size[16], live[16], zero[24];

	if (zero_ok)
		snprintf(zero, sizeof(zero), "%" PRIu64, c->zero);
	else
		snprintf(zero, sizeof(zero), "-");
	fprintf(out,
		"%-29s %6s %8" PRIu64 " %8" PRIu64 " %7" PRIu64 " %8s %8" PRIu64 " %6s %7" PRIu64
		" %8" PRIu64 "  %s\n",
		range, pm_human(c->size, size, sizeof(size)), c->pages, c->present, c->swapped,
		zero, c->live_pages, pm_human(c->live_bytes, live, sizeof(live)), c->live_blocks,
		c->unused, name);
}

static void pm_print_text(struct pm_cmd *st, FILE *out)
{
	const struct rip_file_hdr *h = evs_file_hdr(st->s);
	const struct pm_snap *s = &st->pm->best;
	struct pm_count total = { 0 };
	char comm[sizeof(h->comm) + 1];
	uint64_t hidden = 0;
	bool zero_all = true;

	memcpy(comm, h->comm, sizeof(h->comm));
	comm[sizeof(h->comm)] = 0;
	fprintf(out, "%s (pid %d, %s): snapshot %u of %" PRIu64 " complete, at %s, %.3f s\n",
		evs_source(st->s), (int)h->pid, comm, s->seq, st->pm->complete, pm_reason(s->reason),
		(double)(s->ns - st->pm->first_ns) / 1e9);
	fprintf(out,
		"Private writable mappings, pages of %u bytes.  present: in memory; zero: present\n"
		"and all zero; live: pages live allocations touch, their bytes and count;\n"
		"unused: present pages no live allocation is on.\n\n",
		s->n ? s->maps[0].page_size : 4096u);
	fprintf(out, "%-29s %6s %8s %8s %7s %8s %8s %6s %7s %8s  %s\n", "range", "size", "pages",
		"present", "swapped", "zero", "live", "bytes", "blocks", "unused", "mapping");
	for (size_t i = 0; i < s->n; i++) {
		const struct pm_map *m = &s->maps[i];
		char range[40];

		pm_add(&total, &m->c);
		zero_all &= (m->flags & RIP_PM_ZERO_TESTED) != 0;
		if (!pm_listed(st, m)) {
			hidden++;
			continue;
		}
		snprintf(range, sizeof(range), "%" PRIx64 "-%" PRIx64, m->start, m->end);
		pm_text_row(out, range, &m->c, m->flags & RIP_PM_ZERO_TESTED, pm_name(m));
	}
	{
		char name[64];

		snprintf(name, sizeof(name), "%zu mappings%s", s->n,
			 hidden ? ", some not listed (--min-pages)" : "");
		pm_text_row(out, "total", &total, zero_all || total.zero, name);
	}
	fprintf(out, "\nlive allocations at the snapshot: %" PRIu64 " blocks, %" PRIu64
		     " bytes (%" PRIu64 " bytes outside these mappings)\n",
		s->live_blocks, s->live_bytes,
		s->live_bytes > total.live_bytes ? s->live_bytes - total.live_bytes : 0);
}

static void pm_json_count(FILE *out, const struct pm_count *c)
{
	fprintf(out,
		"\"size\":%" PRIu64 ",\"pages\":%" PRIu64 ",\"present\":%" PRIu64
		",\"swapped\":%" PRIu64 ",\"zero\":%" PRIu64 ",\"live_pages\":%" PRIu64
		",\"live_bytes\":%" PRIu64 ",\"live_blocks\":%" PRIu64 ",\"unused\":%" PRIu64,
		c->size, c->pages, c->present, c->swapped, c->zero, c->live_pages, c->live_bytes,
		c->live_blocks, c->unused);
}

static void pm_print_json(struct pm_cmd *st, FILE *out)
{
	const struct pm_snap *s = &st->pm->best;
	struct pm_count total = { 0 };
	const char *sep = "";

	json_trace_head(out, st->s);
	fprintf(out,
		",\"complete\":%s,\"discarded\":%" PRIu64 ",\"lost_packets\":%" PRIu64
		",\"snapshots\":%" PRIu64 ",\"incomplete_snapshots\":%" PRIu64
		",\"failed_snapshots\":%" PRIu64 ",\"snapshot\":{\"seq\":%u,\"reason\":\"%s\","
		"\"time\":%.9f,\"page_size\":%u,\"live_blocks\":%" PRIu64 ",\"live_bytes\":%" PRIu64
		"},\"mappings\":[",
		st->tot.discarded || st->tot.lost_packets || st->tot.torn || st->tot.unfinished ?
			"false" :
			"true",
		st->tot.discarded, st->tot.lost_packets + st->tot.torn, st->pm->complete,
		st->pm->incomplete, st->pm->failed, s->seq, pm_reason(s->reason),
		(double)(s->ns - st->pm->first_ns) / 1e9, s->n ? s->maps[0].page_size : 4096u,
		s->live_blocks, s->live_bytes);
	for (size_t i = 0; i < s->n; i++) {
		const struct pm_map *m = &s->maps[i];

		pm_add(&total, &m->c);
		if (!pm_listed(st, m))
			continue;
		fprintf(out,
			"%s{\"start\":\"0x%" PRIx64 "\",\"end\":\"0x%" PRIx64
			"\",\"perms\":\"%c%c%cp\",\"path\":",
			sep, m->start, m->end, m->prot & PROT_READ ? 'r' : '-',
			m->prot & PROT_WRITE ? 'w' : '-', m->prot & PROT_EXEC ? 'x' : '-');
		json_str(out, m->path);
		fputs(",\"name\":", out);
		json_str(out, pm_name(m));
		fputc(',', out);
		pm_json_count(out, &m->c);
		fprintf(out, ",\"zero_tested\":%s,\"truncated\":%s}",
			m->flags & RIP_PM_ZERO_TESTED ? "true" : "false",
			m->flags & RIP_PM_TRUNCATED ? "true" : "false");
		sep = ",";
	}
	fprintf(out, "],\"total\":{\"mappings\":%zu,", s->n);
	pm_json_count(out, &total);
	fputs("}}\n", out);
}

/* ---- the command ------------------------------------------------------------------------- */

static int pm_parse(int argc, char **argv, struct pm_args *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "snapshot", required_argument, NULL, 's' },
		{ "min-pages", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "js:m:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->json = true;
			break;
		case 's':
			if (tool_parse_size(optarg, &o->an.snapshot) || !o->an.snapshot ||
			    o->an.snapshot > UINT32_MAX ||
			    strspn(optarg, "0123456789") != strlen(optarg))
				return tool_usage_error(&cmd_pagemap_def,
							"--snapshot wants a number >= 1, not '%s'",
							optarg);
			break;
		case 'm':
			if (tool_parse_size(optarg, &o->min_pages) ||
			    strspn(optarg, "0123456789") != strlen(optarg))
				return tool_usage_error(&cmd_pagemap_def,
							"--min-pages wants a number, not '%s'",
							optarg);
			break;
		case 'h':
			tool_help(&cmd_pagemap_def);
			return -1;
		default:
			return tool_bad_option(&cmd_pagemap_def, argv, longopts);
		}
	}
	if (optind + 1 != argc)
		return tool_usage_error(&cmd_pagemap_def,
					optind == argc ? "which trace? give a trace directory (rip "
							 "run --mem -o DIR), a pid or a ring file"
						       : "one TRACE-OR-TARGET only");
	o->target = argv[optind];
	return 0;
}

/* No snapshot to show: say why, and how to get one. */
static void pm_none(struct pm_cmd *st)
{
	const char *src = evs_source(st->s);

	if (st->o.an.snapshot && st->pm->complete)
		tool_err("%s: no complete snapshot %" PRIu64 " (the trace has %" PRIu64
			 " complete snapshots; see rip dump %s | grep mem:pagemap_end)",
			 src, st->o.an.snapshot, st->pm->complete, src);
	else if (st->pm->failed && !st->pm->incomplete)
		tool_err("%s: the pagemap snapshot failed in the traced process: %s", src,
			 strerror(-st->pm->last_error));
	else if (st->pm->incomplete)
		tool_err("%s: no complete pagemap snapshot, %" PRIu64 " cut short (the process "
			 "was killed while it was taken, or events were lost)",
			 src, st->pm->incomplete);
	else if (!st->pm->has_types || !st->pm->mem_events)
		tool_err("%s: no pagemap snapshot, no memory events: record with rip run --mem, "
			 "which takes one when the program exits (and on the signal of "
			 "--pagemap-signal)",
			 src);
	else
		tool_err("%s: no pagemap snapshot: the program did not exit normally (killed, "
			 "_exit, exec) and none was asked for with rip run --pagemap-signal",
			 src);
}

static int cmd_pagemap(int argc, char **argv)
{
	static char obuf[1 << 16];
	char err[RR_ERR_MAX + 256];
	struct pm_cmd c = { 0 }, *st = &c;
	int ret, status = EXIT_FAIL;

	ret = pm_parse(argc, argv, &st->o);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	ret = tool_evs_open(st->o.target, &st->s, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		return EXIT_FAIL;
	}
	st->pm = pm_new(&st->o.an);
	if (!st->pm) {
		tool_err("out of memory");
		goto out;
	}
	progress_bar(st->s, "rip pagemap");
	ret = pm_run(st->pm, st->s, err, sizeof(err));
	if (ret) {
		tool_err("%s: %s", evs_source(st->s), err);
		goto out;
	}
	evs_totals(st->s, &st->tot);
	if (!st->pm->have_best) {
		pm_none(st);
		goto out;
	}
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	if (st->o.json)
		pm_print_json(st, stdout);
	else
		pm_print_text(st, stdout);
	if (fflush(stdout) || ferror(stdout)) {
		tool_err("write error: %s", strerror(errno));
		goto out;
	}
	if (st->tot.discarded || st->tot.lost_packets || st->tot.torn)
		tool_err("warning: %s lost events (%" PRIu64 " discarded, %" PRIu64
			 " packets): the live allocations may be wrong",
			 evs_source(st->s), st->tot.discarded, st->tot.lost_packets + st->tot.torn);
	status = EXIT_OK;
out:
	pm_free(st->pm);
	tool_evs_close(st->s);
	return status;
}
