/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/cmd-leaks.c - `rip leaks`: the resources a traced program made and
 * never released (memory, descriptors, shared memory), grouped by the
 * backtrace that made them, biggest first, with symbolized stacks; or the
 * same as one JSON document (its structure is in man/rip-leaks.1).
 *
 * The analysis is analysis/leaks.c; this file resolves the stacks (the
 * trace's module map, return addresses minus one) and prints.  A report
 * over a trace that lost events says so before anything else: a missing
 * free makes a false leak, a missing allocation hides a real one.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rip/resource.h>

#include "analysis/leakdiff.h"
#include "analysis/leaks.h"
#include "read/sym.h"
#include "analysis/stacks.h"
#include "tools/format.h"
#include "tools/opts.h"
#include "tools/tool.h"

static int cmd_leaks(int argc, char **argv);

static const struct rip_cmd cmd_leaks_def = {
	.name = "leaks",
	.run = cmd_leaks,
	.summary = "resources a traced program never released, by backtrace",
	.usage = "usage: rip leaks [options] TRACE-OR-TARGET\n"
		 "       rip leaks --diff [options] OLD NEW\n"
		 "\n"
		 "Read the resource events of a trace (rip run --mem/--fd/--shm/--module) and\n"
		 "report what was still live at its end: heap blocks and anonymous mappings,\n"
		 "file descriptors, shared memory segments and mappings, and the kinds of the\n"
		 "tracing modules (by the names the trace gives them; a refcounted kind's\n"
		 "object is live until its count reaches 0, and the references still held\n"
		 "are listed with the stacks that took them).  They are grouped by the\n"
		 "backtrace that made them, biggest first; each group gives the count, the\n"
		 "bytes, when the oldest and the newest were made (seconds from the first\n"
		 "event) and the stack, symbolized.  A trace that lost events is reported as\n"
		 "such at the top.  TRACE-OR-TARGET is a trace directory, a pid or a ring file.\n"
		 "With --diff, the groups of NEW (by symbolized stack) absent from OLD or grown,\n"
		 "with their count and bytes deltas, biggest growth in bytes first.\n"
		 "\n"
		 "  -j, --json            one JSON document (see rip-leaks(1))\n"
		 "  -s, --sort=KEY        bytes (default) or count\n"
		 "  -r, --resource=RES    only mem, fd, shm or one kind of a tracing module\n"
		 "                        (gobject...: rip run --module) (may be repeated)\n"
		 "  -m, --min-size=N      ignore blocks, segments, mappings under N bytes\n"
		 "                        (k, m, g suffixes)\n"
		 "  -n, --top=N           print the N biggest groups only (totals cover all)\n"
		 "  -t, --tid=TID         only what thread TID made\n"
		 "      --from=T          only what was made at T or later, and --to=T before T:\n"
		 "      --to=T            seconds from the first event, or with a unit (ns, us,\n"
		 "                        ms, s): 500ms, 2s; still live at the end of the trace\n"
		 "      --time-range=FROM,TO  the same as --from=FROM --to=TO\n"
		 "      --through=FUNC    only what stacks through FUNC made: a function, a\n"
		 "                        glob (parse_*) or FILE:LINE; repeatable (any of them)\n"
		 "      --diff            compare two traces: OLD NEW\n"
		 "  -a, --addresses       print the address of each frame too\n"
		 "      --sysroot=DIR     find the traced host's binaries under DIR\n"
		 "      --debug-dir=DIR   look for separate debug files in DIR first\n"
		 "  -h, --help            this text\n"
		 "\n"
		 "Exit status: 0 the report was printed (leaks or not), 1 failure (no such\n"
		 "trace, corrupt trace), 2 usage error.\n",
};

RIP_COMMAND(cmd_leaks_def);

struct leaks_opts {
	struct opts t; /* --json, --top, --sysroot, --debug-dir and the operand */
	struct lk_opts lk;
	bool addresses, diff;
	const char *old_target;
};

struct leaks_state {
	struct leaks_opts o;
	struct opts_src src;
	struct lk *lk;
	FILE *out;
};

/* ---- symbols ------------------------------------------------------------------------- */

/* Frames of the preload library itself (an unwinder that starts inside a hook). */
static bool leaks_internal(const struct rip_frame *f)
{
	const char *b = tool_base(f->module);

	return b && !strncmp(b, "librip-preload", 14);
}

/* ---- text ---------------------------------------------------------------------------- */

static void leaks_kinds(FILE *out, const struct lk_group *g)
{
	static const uint32_t cats[LK_NRES] = { RIP_CAT_MEM, RIP_CAT_FD, RIP_CAT_SHM,
						RIP_CAT_SHM };
	const char *sep = "";

	for (uint32_t k = 0; k < LK_KINDS; k++) {
		const char *name;

		if (!(g->kinds & (1ull << k)))
			continue;
		name = lk_kind_name(cats[g->res], k);
		if (name)
			fprintf(out, "%s%s", sep, name);
		else
			fprintf(out, "%skind %u", sep, k);
		sep = ", ";
	}
}

static void leaks_frame_text(struct leaks_state *st, uint64_t addr, const struct rip_frame *f,
			     bool inlined)
{
	FILE *out = st->out;

	fputs("      ", out);
	if (st->o.addresses)
		fprintf(out, "0x%016" PRIx64 " ", addr);
	if (inlined)
		fputs("(inlined) ", out);
	if (f->func) {
		fputs(f->func, out);
		if (f->file && f->line)
			fprintf(out, " (%s:%d)", f->file, f->line);
		else if (f->module && !f->sigframe)
			fprintf(out, "+0x%" PRIx64 " (%s)", f->offset, tool_base(f->module));
	} else if (f->module) {
		fprintf(out, "%s+0x%" PRIx64, tool_base(f->module), f->offset);
	} else {
		fprintf(out, "0x%" PRIx64 " (in no module)", addr);
	}
	fputc('\n', out);
}

static void leaks_bt_text(struct leaks_state *st, uint32_t bt)
{
	struct rip_frame fr[STK_MAX_INLINE];
	const uint64_t *pcs;
	uint32_t n, i = 0;

	if (!bt) {
		fputs("      (no backtrace recorded)\n", st->out);
		return;
	}
	pcs = lk_bt(st->lk, bt, &n);
	if (!pcs) {
		fprintf(st->out, "      (backtrace %" PRIu32 " is not defined in %s)\n", bt,
			evs_chunks_unread(st->src.s) ? "the chunks read" : "the trace");
		return;
	}
	if (!n)
		fputs("      (empty backtrace)\n", st->out);
	for (; i < n; i++) {
		int k = opts_resolve(&st->src, pcs[i], fr);

		if (i + 1 < n && leaks_internal(&fr[k - 1]))
			continue;
		for (int j = 0; j < k; j++)
			leaks_frame_text(st, pcs[i], &fr[j], fr[j].inlined);
	}
}

static void leaks_stack_text(struct leaks_state *st, const struct lk_group *g)
{
	leaks_bt_text(st, g->bt);
}

static double leaks_secs(const struct lk *lk, int64_t ns)
{
	return (double)(ns - lk->first_ns) / 1e9;
}


/* A module kind's group: what it is, and the references still held (refcounted kinds). */
static void leaks_module_text(struct leaks_state *st, const struct lk_group *g)
{
	const struct ev_type *t = lk_kind(st->lk, g->kind);
	const char *name = lk_group_name(st->lk, g);
	FILE *out = st->out;
	char b[48];

	fprintf(out, "%" PRIu64 " %s never released", g->count, name);
	if (g->bytes)
		fprintf(out, ", %s", fmt_bytes_exact(g->bytes, b, sizeof(b)));
	if (t && t->desc[0])
		fprintf(out, " (%s%s)", t->desc,
			t->flags & RIP_EVTYPE_REFCOUNT ? ", refcounted" : "");
	fprintf(out, ", made at %.6f", leaks_secs(st->lk, g->first_ns));
	if (g->last_ns != g->first_ns)
		fprintf(out, "..%.6f", leaks_secs(st->lk, g->last_ns));
	fprintf(out, " s\n");
	leaks_bt_text(st, g->bt);
	for (size_t i = 0; i < g->nrefs; i++) {
		fprintf(out, "    %" PRIu64 " reference%s still held, taken at:\n",
			g->refs[i].count, g->refs[i].count == 1 ? "" : "s");
		leaks_bt_text(st, g->refs[i].bt);
	}
}

static const char *leaks_noun(enum lk_res r, uint64_t n)
{
	switch (r) {
	case LK_MEM:
		return n == 1 ? "block" : "blocks";
	case LK_FD:
		return n == 1 ? "file descriptor" : "file descriptors";
	case LK_SHM:
		return n == 1 ? "shared memory segment" : "shared memory segments";
	case LK_RES:
		return n == 1 ? "resource" : "resources";
	default:
		return n == 1 ? "shared memory mapping" : "shared memory mappings";
	}
}


static void leaks_lossy_text(struct leaks_state *st)
{
	const struct evs_totals *t = &st->src.tot;

	if (!t->discarded && !t->lost_packets && !t->torn)
		return;
	fprintf(st->out,
		"WARNING: this trace is incomplete: %" PRIu64 " events discarded or overwritten, %" PRIu64
		" packets lost or unreadable%s.  A lost release shows as a false leak, a lost allocation hides "
		"a real one.\n\n",
		t->discarded, t->lost_packets + t->torn,
		t->torn ? " (some changed while rip read them, or damaged)" : "");
}

/*
 * Was resource r left untraced: its category off in the file's header at
 * the end, and nothing of it seen (left, or released unseen)?  Its totals
 * then say nothing: under rip run --mem alone, "0 file descriptors left
 * open" read as none leaked.
 */
static bool leaks_untraced(const struct leaks_state *st, enum lk_res r)
{
	const struct rip_file_hdr *h = evs_file_hdr(st->src.s);
	unsigned c = r == LK_MEM		    ? RIP_CAT_MEM :
		     r == LK_FD			    ? RIP_CAT_FD :
		     r == LK_SHM || r == LK_SHM_MAP ? RIP_CAT_SHM :
						      RIP_CATEGORIES;

	if (!tool_cat_off(h, c))
		return false;
	return !st->lk->total_count[r] && !st->lk->un.release[r];
}

static void leaks_print_text(struct leaks_state *st)
{
	const struct lk *lk = st->lk;
	const struct rip_file_hdr *h = evs_file_hdr(st->src.s);
	FILE *out = st->out;
	uint64_t shown = 0, sites[LK_NRES] = { 0 };
	char comm[sizeof(h->comm) + 1], b[48];

	memcpy(comm, h->comm, sizeof(h->comm));
	comm[sizeof(h->comm)] = 0;
	leaks_lossy_text(st);
	fprintf(out, "%s: pid %d (%s), %" PRIu64 " events over %.3f s, %" PRIu64
		     " of them resource events\n",
		evs_source(st->src.s), (int)h->pid, comm, lk->events,
		lk->any_event ? leaks_secs(lk, lk->last_ns) : 0.0, lk->res_events);
	opts_through_text(out, st->src.thr);
	if (st->src.thr && thr_stackless(st->src.thr))
		fprintf(out,
			"note: %" PRIu64 " groups without a stack (or with one the trace "
			"never defines) are left out\n",
			thr_stackless(st->src.thr));
	if (!lk->has_types)
		fprintf(out, "note: no resource events in this trace: record one with rip run "
			     "--mem (or --fd, --shm, --all)\n");
	for (size_t i = 0; i < lk->ngroups; i++) {
		const struct lk_group *g = &lk->groups[i];

		sites[g->res]++;
		if (st->o.t.top && shown >= st->o.t.top)
			continue;
		shown++;
		fputc('\n', out);
		if (g->res == LK_RES) {
			leaks_module_text(st, g);
			continue;
		}
		if (g->res == LK_FD)
			fprintf(out, "%" PRIu64 " %s left open", g->count, leaks_noun(g->res, g->count));
		else
			fprintf(out, "%s in %" PRIu64 " %s%s", fmt_bytes_exact(g->bytes, b, sizeof(b)),
				g->count, leaks_noun(g->res, g->count),
				g->res == LK_MEM	? " never freed"
				: g->res == LK_SHM	? " never removed"
							: " never detached");
		fputs(" (", out);
		leaks_kinds(out, g);
		if (g->sample) {
			fputs(": ", out);
			text_str(out, g->sample);
			fputs(g->count > 1 ? ", ..." : "", out);
		}
		fprintf(out, "), made at %.6f", leaks_secs(lk, g->first_ns));
		if (g->last_ns != g->first_ns)
			fprintf(out, "..%.6f", leaks_secs(lk, g->last_ns));
		fprintf(out, " s\n");
		leaks_stack_text(st, g);
	}
	if (st->o.t.top && shown < lk->ngroups)
		fprintf(out, "\n(%zu more groups: --top=%" PRIu64 " shows the biggest only)\n",
			lk->ngroups - (size_t)shown, st->o.t.top);
	fputs("\ntotal: ", out);
	if (leaks_untraced(st, LK_MEM))
		fputs("memory not traced (rip run --mem)", out);
	else
		fprintf(out, "%s in %" PRIu64 " %s never freed (%" PRIu64 " sites)",
			fmt_bytes_exact(lk->total_bytes[LK_MEM], b, sizeof(b)),
			lk->total_count[LK_MEM], leaks_noun(LK_MEM, lk->total_count[LK_MEM]),
			sites[LK_MEM]);
	if (leaks_untraced(st, LK_FD))
		fputs(", file descriptors not traced (rip run --fd)", out);
	else
		fprintf(out, ", %" PRIu64 " %s left open", lk->total_count[LK_FD],
			leaks_noun(LK_FD, lk->total_count[LK_FD]));
	if (leaks_untraced(st, LK_SHM) && leaks_untraced(st, LK_SHM_MAP))
		fputs(", shared memory not traced (rip run --shm)\n", out);
	else
		fprintf(out, ", %" PRIu64 " %s never removed (%s), %" PRIu64 " %s never detached\n",
			lk->total_count[LK_SHM], leaks_noun(LK_SHM, lk->total_count[LK_SHM]),
			fmt_bytes_exact(lk->total_bytes[LK_SHM], (char[48]){ 0 }, 48),
			lk->total_count[LK_SHM_MAP],
			leaks_noun(LK_SHM_MAP, lk->total_count[LK_SHM_MAP]));
	if (lk->reserved_bytes && (!st->o.lk.resources || (st->o.lk.resources & LK_F_MEM)))
		fprintf(out,
			"not counted: %s of address space still reserved (mmap with PROT_NONE) in %" PRIu64
			" range%s, not memory until made accessible%s\n",
			fmt_bytes_exact(lk->reserved_bytes, b, sizeof(b)), lk->reserved_ranges,
			lk->reserved_ranges == 1 ? "" : "s",
			st->o.lk.tid || st->o.lk.time_range || st->o.lk.min_size || st->src.thr ?
				" (by the whole process: the filters are not applied to it)" :
				"");
	if (lk->exec_closed)
		fprintf(out,
			"closed by the execve that replaced the program (opened with O_CLOEXEC): "
			"%" PRIu64 " %s\n",
			lk->exec_closed, leaks_noun(LK_FD, lk->exec_closed));
	if (lk->un.release[LK_MEM] || lk->un.release[LK_FD] || lk->un.release[LK_SHM] ||
	    lk->un.release[LK_SHM_MAP])
		fprintf(out,
			"released but not seen made (made before tracing started, inherited, or "
			"lost): %" PRIu64 " frees, %" PRIu64 " closes, %" PRIu64 " removes, %" PRIu64
			" detaches\n",
			lk->un.release[LK_MEM], lk->un.release[LK_FD], lk->un.release[LK_SHM],
			lk->un.release[LK_SHM_MAP]);
	if (lk->un.replaced[LK_MEM] || lk->un.replaced[LK_FD] || lk->un.replaced[LK_SHM] ||
	    lk->un.replaced[LK_SHM_MAP])
		fprintf(out,
			"made again while live (their release was not recorded): %" PRIu64
			" blocks, %" PRIu64 " descriptors, %" PRIu64 " segments, %" PRIu64
			" mappings\n",
			lk->un.replaced[LK_MEM], lk->un.replaced[LK_FD], lk->un.replaced[LK_SHM],
			lk->un.replaced[LK_SHM_MAP]);
	for (uint32_t k = 0; k < EV_MAX_TYPES; k++) {
		const struct ev_type *t = lk_kind(lk, k);

		if (!t || (t->flags & RIP_EVTYPE_BUILTIN))
			continue;
		if (t->flags & RIP_EVTYPE_COUNTER)
			fprintf(out,
				"%s: %" PRIu64 " transfers (counted, never live: rip report)\n",
				t->name + 5, lk->kind_transfers[k]);
		else
			fprintf(out, "%s: %" PRIu64 " never released (%s)\n", t->name + 5,
				lk->kind_count[k],
				fmt_bytes_exact(lk->kind_bytes[k], b, sizeof(b)));
	}
	if (lk->un.release[LK_RES] || lk->un.replaced[LK_RES])
		fprintf(out,
			"module resources released but not seen made: %" PRIu64
			", made again while live: %" PRIu64 "\n",
			lk->un.release[LK_RES], lk->un.replaced[LK_RES]);
	if (lk->failed_allocs)
		fprintf(out, "failed allocations (not leaks): %" PRIu64 "\n", lk->failed_allocs);
}

/* ---- JSON ---------------------------------------------------------------------------- */

static void leaks_json_opt(FILE *out, const char *s)
{
	if (s)
		json_str(out, s);
	else
		fputs("null", out);
}

static void leaks_bt_json(struct leaks_state *st, uint32_t bt)
{
	struct rip_frame fr[STK_MAX_INLINE];
	FILE *out = st->out;
	const uint64_t *pcs;
	const char *sep = "";
	uint32_t n;

	pcs = bt ? lk_bt(st->lk, bt, &n) : NULL;
	if (!pcs) {
		fputs("null", out);
		return;
	}
	fputc('[', out);
	for (uint32_t i = 0; i < n; i++) {
		int k = opts_resolve(&st->src, pcs[i], fr);

		if (i + 1 < n && leaks_internal(&fr[k - 1]))
			continue;
		for (int j = 0; j < k; j++) {
			fprintf(out, "%s{\"addr\":\"0x%" PRIx64 "\",\"function\":", sep, pcs[i]);
			leaks_json_opt(out, fr[j].func);
			fputs(",\"file\":", out);
			leaks_json_opt(out, fr[j].file);
			fprintf(out, ",\"line\":%d,\"module\":", fr[j].line);
			leaks_json_opt(out, fr[j].module);
			fprintf(out, ",\"offset\":%" PRIu64 ",\"inlined\":%s}", fr[j].offset,
				fr[j].inlined ? "true" : "false");
			sep = ",";
		}
	}
	fputc(']', out);
}

static void leaks_stack_json(struct leaks_state *st, const struct lk_group *g)
{
	leaks_bt_json(st, g->bt);
}

static void leaks_print_json(struct leaks_state *st)
{
	static const uint32_t cats[LK_NRES] = { RIP_CAT_MEM, RIP_CAT_FD, RIP_CAT_SHM,
						RIP_CAT_SHM };
	const struct lk *lk = st->lk;
	FILE *out = st->out;
	uint64_t shown = 0, sites[LK_NRES] = { 0 };
	unsigned nprob = 0;
	void *parg[2] = { out, &nprob };

	json_trace_head(out, st->src.s);
	fprintf(out,
		",\"events\":%" PRIu64 ",\"resource_events\":%" PRIu64
		",\"duration\":%.9f,\"complete\":%s,\"discarded\":%" PRIu64
		",\"lost_packets\":%" PRIu64,
		lk->events, lk->res_events, lk->any_event ? leaks_secs(lk, lk->last_ns) : 0.0,
		st->src.tot.discarded || st->src.tot.lost_packets || st->src.tot.torn ||
				st->src.tot.unfinished ?
			"false" :
			"true",
		st->src.tot.discarded, st->src.tot.lost_packets + st->src.tot.torn);
	opts_through_json(out, st->src.thr);
	if (st->src.thr)
		fprintf(out, ",\"through_stackless\":%" PRIu64, thr_stackless(st->src.thr));
	fputs(",\"leaks\":[", out);
	for (size_t i = 0; i < lk->ngroups; i++) {
		const struct lk_group *g = &lk->groups[i];
		const char *sep = "";

		sites[g->res]++;
		if (st->o.t.top && shown >= st->o.t.top)
			continue;
		fprintf(out, "%s{\"resource\":", shown ? "," : "");
		json_str(out, lk_group_name(lk, g));
		if (g->res == LK_RES) {
			const struct ev_type *t = lk_kind(lk, g->kind);

			fputs(",\"module\":true,\"description\":", out);
			json_str(out, t ? t->desc : "");
			fprintf(out, ",\"refcounted\":%s,\"references\":[",
				t && (t->flags & RIP_EVTYPE_REFCOUNT) ? "true" : "false");
			for (size_t k = 0; k < g->nrefs; k++) {
				fprintf(out,
					"%s{\"count\":%" PRIu64 ",\"bt\":%" PRIu32 ",\"stack\":",
					k ? "," : "", g->refs[k].count, g->refs[k].bt);
				leaks_bt_json(st, g->refs[k].bt);
				fputc('}', out);
			}
			fputc(']', out);
		}
		fprintf(out, ",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64
			     ",\"first\":%.9f,\"last\":%.9f,\"kinds\":[",
			g->count, g->bytes, leaks_secs(lk, g->first_ns),
			leaks_secs(lk, g->last_ns));
		shown++;
		for (uint32_t k = 0; k < LK_KINDS; k++) {
			const char *name = g->res < LK_RES ? lk_kind_name(cats[g->res], k) : NULL;

			if (!(g->kinds & (1ull << k)))
				continue;
			fputs(sep, out);
			if (name)
				json_str(out, name);
			else
				fprintf(out, "\"kind %u\"", k);
			sep = ",";
		}
		fputs("],\"sample\":", out);
		leaks_json_opt(out, g->sample);
		fprintf(out, ",\"bt\":%" PRIu32 ",\"stack\":", g->bt);
		leaks_stack_json(st, g);
		fputc('}', out);
	}
	fputs("],\"totals\":{", out);
	for (int r = 0; r < LK_NRES; r++)
		fprintf(out,
			"%s\"%s\":{\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"sites\":%" PRIu64
			",\"released_unseen\":%" PRIu64 ",\"made_again\":%" PRIu64
			",\"traced\":%s}",
			r ? "," : "", lk_res_name((enum lk_res)r), lk->total_count[r],
			lk->total_bytes[r], sites[r], lk->un.release[r], lk->un.replaced[r],
			leaks_untraced(st, (enum lk_res)r) ? "false" : "true");
	for (uint32_t k = 0; k < EV_MAX_TYPES; k++) {
		const struct ev_type *t = lk_kind(lk, k);

		if (!t || (t->flags & RIP_EVTYPE_BUILTIN))
			continue;
		fputc(',', out);
		json_str(out, t->name + 5);
		fprintf(out,
			":{\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"transfers\":%" PRIu64 "}",
			lk->kind_count[k], lk->kind_bytes[k], lk->kind_transfers[k]);
	}
	fprintf(out, "},\"reserved\":{\"bytes\":%" PRIu64 ",\"ranges\":%" PRIu64 "}",
		lk->reserved_bytes, lk->reserved_ranges);
	fprintf(out, ",\"exec_closed\":%" PRIu64, lk->exec_closed);
	fprintf(out,
		",\"failed_allocs\":%" PRIu64 ",\"backtraces\":{\"defined\":%" PRIu64
		",\"bad\":%" PRIu64 ",\"undefined\":%" PRIu64 "},\"symbol_problems\":[",
		lk->failed_allocs, lk->bt_defs, lk->bt_bad, lk->bt_unknown);
	if (st->src.sym)
		rip_sym_problems(st->src.sym, tool_sym_problem_json, parg);
	fputs("]}\n", out);
}

/* ---- the command --------------------------------------------------------------------- */

/*
 * A moment, from the first event: seconds ("1.5"), or with a unit ("500ms",
 * "2s", "250us", "10ns").  0, or -1 if s is not one.
 */
static int leaks_time(const char *s, int64_t *ns)
{
	static const struct {
		const char *unit;
		double mult;
	} units[] = { { "", 1e9 }, { "s", 1e9 }, { "ms", 1e6 }, { "us", 1e3 }, { "ns", 1 } };
	char *end;
	double v;

	if ((*s < '0' || *s > '9') && *s != '.')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		v *= units[i].mult;
		if (v >= 9e18)
			return -1;
		*ns = (int64_t)(v + 0.5);
		return 0;
	}
	return -1;
}

static int leaks_parse(int argc, char **argv, struct leaks_opts *o)
{
	enum { OPT_FROM = 256, OPT_TO, OPT_RANGE, OPT_DIFF };
	static const struct option longopts[] = {
		OPTS_LONG,
		{ "sort", required_argument, NULL, 's' },
		{ "resource", required_argument, NULL, 'r' },
		{ "min-size", required_argument, NULL, 'm' },
		{ "addresses", no_argument, NULL, 'a' },
		{ "tid", required_argument, NULL, 't' },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "to", required_argument, NULL, OPT_TO },
		{ "time-range", required_argument, NULL, OPT_RANGE },
		{ "diff", no_argument, NULL, OPT_DIFF },
		{ 0 },
	};
	bool from = false, to = false;
	uint64_t tid;
	char *comma;
	int c, ret;

	optind = 1;
	opterr = 0;
	o->lk.to_ns = INT64_MAX;
	while ((c = getopt_long(argc, argv, OPTS_SHORT "s:r:m:at:", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (!strcmp(optarg, "bytes"))
				o->lk.sort = LK_SORT_BYTES;
			else if (!strcmp(optarg, "count"))
				o->lk.sort = LK_SORT_COUNT;
			else
				return tool_usage_error(&cmd_leaks_def,
							"--sort is bytes or count, not '%s'", optarg);
			break;
		case 'r':
			if (!strcmp(optarg, "mem"))
				o->lk.resources |= LK_F_MEM;
			else if (!strcmp(optarg, "fd"))
				o->lk.resources |= LK_F_FD;
			else if (!strcmp(optarg, "shm"))
				o->lk.resources |= LK_F_SHM;
			else if (optarg[0] && !o->lk.kind &&
				 strspn(optarg, "abcdefghijklmnopqrstuvwxyz"
						"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") ==
					 strlen(optarg)) {
				/* a module's kind (one): the trace names its kinds */
				o->lk.resources |= LK_F_RES;
				o->lk.kind = optarg;
			} else
				return tool_usage_error(&cmd_leaks_def,
							"--resource is mem, fd, shm or the name of "
							"one module kind, not '%s'",
							optarg);
			break;
		case 'm':
			if (tool_parse_size(optarg, &o->lk.min_size))
				return tool_usage_error(&cmd_leaks_def,
							"--min-size wants a size like 4096 or 1m, "
							"not '%s'",
							optarg);
			break;
		case 'a':
			o->addresses = true;
			break;
		case 't':
			if (tool_parse_size(optarg, &tid) || !tid || tid > INT32_MAX ||
			    strspn(optarg, "0123456789") != strlen(optarg))
				return tool_usage_error(&cmd_leaks_def,
							"--tid wants a thread id > 0, not '%s'",
							optarg);
			o->lk.tid = (int32_t)tid;
			break;
		case OPT_FROM:
			if (leaks_time(optarg, &o->lk.from_ns))
				return tool_usage_error(&cmd_leaks_def,
							"--from wants a time like 1.5, 500ms or 2s, "
							"not '%s'",
							optarg);
			from = true;
			break;
		case OPT_TO:
			if (leaks_time(optarg, &o->lk.to_ns))
				return tool_usage_error(&cmd_leaks_def,
							"--to wants a time like 1.5, 500ms or 2s, "
							"not '%s'",
							optarg);
			to = true;
			break;
		case OPT_RANGE:
			comma = strchr(optarg, ',');
			if (comma)
				*comma = 0;
			if (!comma || leaks_time(optarg, &o->lk.from_ns) ||
			    leaks_time(comma + 1, &o->lk.to_ns)) {
				if (comma)
					*comma = ',';
				return tool_usage_error(&cmd_leaks_def,
							"--time-range wants FROM,TO like 0.5,2 or "
							"500ms,2s, not '%s'",
							optarg);
			}
			*comma = ',';
			from = to = true;
			break;
		case OPT_DIFF:
			o->diff = true;
			break;
		default:
			ret = opts_common(&cmd_leaks_def, c, argv, longopts, &o->t);
			if (ret)
				return ret;
		}
	}
	if (from || to) {
		o->lk.time_range = true;
		if (o->lk.from_ns >= o->lk.to_ns)
			return tool_usage_error(&cmd_leaks_def,
						"the time range is empty: FROM must be before TO");
	}
	if (o->diff) {
		if (optind + 2 != argc)
			return tool_usage_error(&cmd_leaks_def,
						"--diff compares two traces: give OLD and NEW");
		o->old_target = argv[optind];
		o->t.target = argv[optind + 1];
		return 0;
	}
	return opts_operand(&cmd_leaks_def, argc, argv, &o->t, " (two with --diff)");
}

/* Does the trace declare a module kind of that name? */
static bool leaks_has_kind(const struct lk *lk, const char *name)
{
	for (uint32_t k = 0; k < EV_MAX_TYPES; k++) {
		const struct ev_type *t = lk_kind(lk, k);

		if (t && !(t->flags & RIP_EVTYPE_BUILTIN) && !strcmp(t->name + 5, name))
			return true;
	}
	return false;
}

/*
 * Open target and run the analysis; symbols too when there is something to show.
 * -2: a usage error found in the trace (a kind it does not have).
 */
static int leaks_load(struct leaks_state *st, const char *target)
{
	char err[RR_ERR_MAX + PATH_MAX];
	int ret;

	if (opts_open(&st->src, &st->o.t, target, "rip leaks"))
		return -1;
	st->lk = lk_new(&st->o.lk);
	if (!st->lk) {
		tool_err("out of memory");
		return -1;
	}
	ret = lk_run(st->lk, st->src.s, err, sizeof(err));
	opts_ran(&st->src);
	if (ret) {
		tool_err("%s", err);
		return -1;
	}
	if (st->o.lk.kind && !leaks_has_kind(st->lk, st->o.lk.kind)) {
		tool_usage_error(&cmd_leaks_def,
				 "--resource is mem, fd, shm or a kind %s names (rip run "
				 "--module), not '%s'",
				 evs_source(st->src.s), st->o.lk.kind);
		return -2;
	}
	if (st->o.t.nthrough) {
		/* only the groups whose stack passes through: symbols first, whatever is left */
		if (opts_through_new(st->o.t.through, st->o.t.nthrough, &st->src.thr))
			return -1;
		if (opts_symbols(&st->src))
			return -1;
		if (lk_through(st->lk, st->src.thr, st->src.sym)) {
			tool_err("out of memory");
			return -1;
		}
		return opts_through_check(st->src.thr, st->src.sym, &st->lk->live.bts,
					  evs_source(st->src.s));
	}
	return st->lk->ngroups ? opts_symbols(&st->src) : 0;
}

/* The warnings of a loaded trace, after the report. */
static void leaks_warnings(struct leaks_state *st)
{
	if (st->o.lk.tid && !st->lk->tid_made)
		tool_err("warning: %s: thread %" PRId32 " made nothing traced: no allocation, "
			 "open or other resource of it (not a thread of the program, or one that "
			 "made none; rip report %s lists the threads that did)",
			 evs_source(st->src.s), st->o.lk.tid, evs_source(st->src.s));
	if (st->lk->bt_bad)
		tool_err("warning: %s: %" PRIu64 " bad backtrace definitions (id 0, or an id "
			 "defined twice with different frames) were ignored",
			 evs_source(st->src.s), st->lk->bt_bad);
	if (st->lk->bt_unknown && evs_chunks_unread(st->src.s))
		tool_err("warning: %s: %" PRIu64 " groups use a backtrace defined in a chunk "
			 "that is not read (dropped by --max-size, handed on by --on-rotate, or "
			 "before the chunk read alone), or before the recorder attached: their "
			 "stacks are unknown",
			 evs_source(st->src.s), st->lk->bt_unknown);
	else if (st->lk->bt_unknown)
		tool_err("warning: %s: %" PRIu64 " groups use a backtrace id the trace never "
			 "defines (defined before the recorder attached or in a packet lost, a "
			 "forked child's stack defined in its parent's trace, or a corrupt trace)",
			 evs_source(st->src.s), st->lk->bt_unknown);
}

static void leaks_unload(struct leaks_state *st)
{
	lk_free(st->lk);
	st->lk = NULL;
	opts_close(&st->src);
}

/* ---- --diff -------------------------------------------------------------------------- */

static const char *leaks_unit(enum lk_res r, uint64_t n)
{
	return r == LK_FD ? (n == 1 ? "descriptor" : "descriptors") : leaks_noun(r, n);
}

static void leaks_diff_text(struct leaks_state *old, struct leaks_state *st,
			    const struct ld_diff *d)
{
	FILE *out = st->out;
	char b[48];

	for (int k = 0; k < 2; k++) {
		struct leaks_state *x = k ? st : old;
		const struct rip_file_hdr *h = evs_file_hdr(x->src.s);
		char comm[sizeof(h->comm) + 1];

		memcpy(comm, h->comm, sizeof(h->comm));
		comm[sizeof(h->comm)] = 0;
		if (x->src.tot.discarded || x->src.tot.lost_packets || x->src.tot.torn)
			fprintf(out, "WARNING: %s is incomplete: a lost release shows as a false "
				     "leak, a lost allocation hides a real one\n",
				evs_source(x->src.s));
		fprintf(out, "%s %s: pid %d (%s), %" PRIu64 " events over %.3f s\n",
			k ? "new" : "old", evs_source(x->src.s), (int)h->pid, comm, x->lk->events,
			x->lk->any_event ? leaks_secs(x->lk, x->lk->last_ns) : 0.0);
	}
	opts_through_text(out, st->src.thr);
	for (size_t i = 0; i < d->n && (!st->o.t.top || i < st->o.t.top); i++) {
		const struct ld_group *e = &d->v[i];

		fprintf(out, "\n%+" PRId64 " %s", (int64_t)(e->count - e->ocount),
			leaks_unit(e->res, 2));
		if (e->res != LK_FD)
			fprintf(out, ", %+" PRId64 " bytes", (int64_t)(e->bytes - e->obytes));
		fprintf(out, " (%s, %s: %" PRIu64 " %s", lk_group_name(st->lk, e->g),
			e->ocount ? "grown" : "new", e->count, leaks_unit(e->res, e->count));
		if (e->res != LK_FD)
			fprintf(out, ", %s", fmt_bytes_exact(e->bytes, b, sizeof(b)));
		if (e->ocount) {
			fprintf(out, "; was %" PRIu64 " %s", e->ocount,
				leaks_unit(e->res, e->ocount));
			if (e->res != LK_FD)
				fprintf(out, ", %s", fmt_bytes_exact(e->obytes, b, sizeof(b)));
		}
		fputs(")\n", out);
		leaks_stack_text(st, e->g);
	}
	if (st->o.t.top && d->n > st->o.t.top)
		fprintf(out, "\n(%zu more groups: --top=%" PRIu64 " shows the biggest only)\n",
			d->n - (size_t)st->o.t.top, st->o.t.top);
	fprintf(out, "\n%zu groups new, %zu grown; total:", d->nnew, d->n - d->nnew);
	for (int r = 0; r < LK_NRES; r++) {
		fprintf(out, "%s %s %+" PRId64, r ? "," : "", lk_res_name((enum lk_res)r),
			(int64_t)(st->lk->total_count[r] - old->lk->total_count[r]));
		if (r != LK_FD) /* a descriptor has no size */
			fprintf(out, " (%+" PRId64 " bytes)",
				(int64_t)(st->lk->total_bytes[r] - old->lk->total_bytes[r]));
	}
	fputc('\n', out);
}

static void leaks_diff_json_side(FILE *out, struct leaks_state *x)
{
	const struct rip_file_hdr *h = evs_file_hdr(x->src.s);
	char comm[sizeof(h->comm) + 1];

	memcpy(comm, h->comm, sizeof(h->comm));
	comm[sizeof(h->comm)] = 0;
	fputs("{\"source\":", out);
	json_str(out, evs_source(x->src.s));
	fprintf(out, ",\"pid\":%d,\"comm\":", (int)h->pid);
	json_str(out, comm);
	fprintf(out,
		",\"events\":%" PRIu64 ",\"duration\":%.9f,\"complete\":%s,\"discarded\":%" PRIu64
		",\"lost_packets\":%" PRIu64 "}",
		x->lk->events, x->lk->any_event ? leaks_secs(x->lk, x->lk->last_ns) : 0.0,
		x->src.tot.discarded || x->src.tot.lost_packets || x->src.tot.torn ||
				x->src.tot.unfinished ?
			"false" :
			"true",
		x->src.tot.discarded, x->src.tot.lost_packets + x->src.tot.torn);
}

static void leaks_diff_json(struct leaks_state *old, struct leaks_state *st,
			    const struct ld_diff *d)
{
	FILE *out = st->out;

	fputs("{\"version\":1,\"diff\":true,\"old\":", out);
	leaks_diff_json_side(out, old);
	fputs(",\"new\":", out);
	leaks_diff_json_side(out, st);
	opts_through_json(out, st->src.thr);
	fputs(",\"groups\":[", out);
	for (size_t i = 0; i < d->n && (!st->o.t.top || i < st->o.t.top); i++) {
		const struct ld_group *e = &d->v[i];

		fprintf(out, "%s{\"resource\":\"%s\",\"status\":\"%s\",\"count\":%" PRIu64
			     ",\"bytes\":%" PRIu64 ",\"old_count\":%" PRIu64
			     ",\"old_bytes\":%" PRIu64
			     ",\"count_delta\":%" PRId64 ",\"bytes_delta\":%" PRId64 ",\"key\":",
			i ? "," : "", lk_group_name(st->lk, e->g), e->ocount ? "grown" : "new",
			e->count,
			e->bytes, e->ocount, e->obytes, (int64_t)(e->count - e->ocount),
			(int64_t)(e->bytes - e->obytes));
		json_str(out, e->key);
		fputs(",\"sample\":", out);
		leaks_json_opt(out, e->g->sample);
		fputs(",\"stack\":", out);
		leaks_stack_json(st, e->g);
		fputc('}', out);
	}
	fprintf(out, "],\"new_groups\":%zu,\"grown_groups\":%zu,\"totals\":{", d->nnew,
		d->n - d->nnew);
	for (int r = 0; r < LK_NRES; r++)
		fprintf(out, "%s\"%s\":{\"count\":%" PRIu64 ",\"bytes\":%" PRIu64
			     ",\"old_count\":%" PRIu64 ",\"old_bytes\":%" PRIu64
			     ",\"count_delta\":%" PRId64 ",\"bytes_delta\":%" PRId64 "}",
			r ? "," : "", lk_res_name((enum lk_res)r), st->lk->total_count[r],
			st->lk->total_bytes[r], old->lk->total_count[r], old->lk->total_bytes[r],
			(int64_t)(st->lk->total_count[r] - old->lk->total_count[r]),
			(int64_t)(st->lk->total_bytes[r] - old->lk->total_bytes[r]));
	fputs("}}\n", out);
}

/* Print the groups of NEW absent from OLD or grown, by growth in bytes (leakdiff.h). */
static int leaks_diff(struct leaks_state *old, struct leaks_state *st)
{
	struct ld_diff d;

	if (ld_run(old->lk, old->src.sym, st->lk, st->src.sym, &d)) {
		tool_err("out of memory");
		return -ENOMEM;
	}
	if (st->o.t.json)
		leaks_diff_json(old, st, &d);
	else
		leaks_diff_text(old, st, &d);
	ld_free(&d);
	return 0;
}

static int cmd_leaks(int argc, char **argv)
{
	static char obuf[1 << 16];
	struct leaks_state st, old;
	unsigned problems = 0;
	int ret, status = EXIT_FAIL;

	memset(&st, 0, sizeof(st));
	memset(&old, 0, sizeof(old));
	ret = leaks_parse(argc, argv, &st.o);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	st.out = stdout;
	old.o = st.o;
	old.out = stdout;
	if (st.o.diff && (ret = leaks_load(&old, st.o.old_target)))
		goto out_load;
	if ((ret = leaks_load(&st, st.o.t.target)))
		goto out_load;
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	if (st.o.diff) {
		if (leaks_diff(&old, &st))
			goto out;
	} else if (st.o.t.json) {
		leaks_print_json(&st);
	} else {
		leaks_print_text(&st);
	}
	if (tool_flush(stdout))
		goto out;
	if (st.o.diff)
		leaks_warnings(&old);
	leaks_warnings(&st);
	if (!st.o.t.json) {
		if (old.src.sym)
			rip_sym_problems(old.src.sym, tool_sym_problem, &problems);
		if (st.src.sym)
			rip_sym_problems(st.src.sym, tool_sym_problem, &problems);
	}
	status = EXIT_OK;
	tool_exit_unfreed(status);
	goto out;
out_load:
	if (ret == -2)
		status = EXIT_USAGE;
out:
	leaks_unload(&old);
	leaks_unload(&st);
	return status;
}
