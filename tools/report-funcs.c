/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/report-funcs.c - rip report --functions (report-funcs.h): one
 * pass of analysis/funcs.c over the trace, then a table per scope (the
 * whole program, then, with --threads, each thread and coroutine), each
 * function with its calls, total time, self time and longest call, as
 * uftrace report prints them.  Functions are named by the symbols of the
 * traced binaries; globs pick them (--match).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/funcs.h"
#include "read/evsource.h"
#include "tools/format.h"
#include "tools/funcs.h"
#include "tools/progress.h"
#include "tools/report-funcs.h"
#include "tools/tool.h"

struct rpf_state {
	const struct rpf_opts *o;
	struct evs *s;
	struct tfn *names;
	struct fa *fa;
	struct evs_totals tot;
	int64_t first_ns, last_ns;
	bool any;
	bool unmatched; /* a function the globs left out */
};

int rpf_sort_key(const char *s, enum rpf_sort *out)
{
	static const char *const keys[] = { "total", "self", "calls", "max", "name" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!strcmp(s, keys[i])) {
			*out = (enum rpf_sort)i;
			return 0;
		}
	}
	return -1;
}

static bool rpf_keep(void *arg, uint32_t id, uint64_t addr)
{
	struct rpf_state *st = arg;
	bool hit = tfn_match(st->names, st->o->globs, st->o->nglobs, id, addr);

	st->unmatched |= !hit;
	return hit;
}

/* ---- sorting ---- */

static struct rpf_state *rpf_sort_st;
static enum rpf_sort rpf_sort_by;

#define RPF_CMP(a, b)                                                                              \
	do {                                                                                       \
		if ((a) != (b))                                                                    \
			return (a) < (b) ? 1 : -1;                                                 \
	} while (0)

static int rpf_cmp(const void *pa, const void *pb)
{
	const struct fa_fn *a = pa, *b = pb;
	int c;

	switch (rpf_sort_by) {
	case RPF_SELF:
		RPF_CMP(a->self_ns, b->self_ns);
		break;
	case RPF_CALLS:
		RPF_CMP(a->calls, b->calls);
		break;
	case RPF_MAX:
		RPF_CMP(a->max_ns, b->max_ns);
		break;
	case RPF_NAME:
		c = strcmp(tfn_name(rpf_sort_st->names, a->id, a->addr)->func,
			   tfn_name(rpf_sort_st->names, b->id, b->addr)->func);
		if (c)
			return c;
		break;
	case RPF_TOTAL:
		break;
	}
	RPF_CMP(a->total_ns, b->total_ns);
	RPF_CMP(a->calls, b->calls);
	return a->id < b->id ? -1 : a->id > b->id;
}

/* A sorted copy of n sums (NULL when out of memory, or n is 0). */
static struct fa_fn *rpf_sorted(struct rpf_state *st, const struct fa_fn *v, size_t n)
{
	struct fa_fn *c = n ? malloc(n * sizeof(*c)) : NULL;

	if (!c)
		return NULL;
	memcpy(c, v, n * sizeof(*c));
	rpf_sort_st = st;
	rpf_sort_by = st->o->sort;
	qsort(c, n, sizeof(*c), rpf_cmp);
	return c;
}

/* ---- text ---- */

/* "12.345 ms" in 10 columns, as uftrace prints times. */
static const char *rpf_time(int64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%6" PRId64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%6.3f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%6.3f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%6.3f  s", (double)ns / 1e9);
	return buf;
}

static void rpf_table(struct rpf_state *st, const struct fa_fn *v, size_t n, FILE *out)
{
	struct fa_fn *c = rpf_sorted(st, v, n);
	char a[32], b[32], m[32];
	size_t rows = st->o->top && st->o->top < n ? st->o->top : n;

	fprintf(out, "  %10s  %10s  %10s  %10s  %s\n", "Total time", "Self time", "Max time",
		"Calls", "Function");
	fprintf(out, "  %10s  %10s  %10s  %10s  %s\n",
		"==========", "==========", "==========", "==========", "====================");
	for (size_t i = 0; c && i < rows; i++) {
		const struct fa_fn *f = &c[i];
		const struct tfn_name *nm = tfn_name(st->names, f->id, f->addr);

		fprintf(out, "  %10s  %10s  %10s  %10" PRIu64 "  %s",
			rpf_time(f->total_ns, a, sizeof(a)), rpf_time(f->self_ns, b, sizeof(b)),
			rpf_time(f->max_ns, m, sizeof(m)), f->calls, nm->func);
		if (nm->file && nm->line)
			fprintf(out, "  (%s:%d)", tool_base(nm->file), nm->line);
		if (f->before)
			fprintf(out, "  [%" PRIu64 " began before the trace]", f->before);
		if (f->running)
			fprintf(out, "  [%" PRIu64 " still running]", f->running);
		fputc('\n', out);
	}
	if (rows < n)
		fprintf(out, "  ... %zu more functions (--top)\n", n - rows);
	if (!c && n)
		fprintf(out, "  (out of memory)\n");
	free(c);
}

static void rpf_ctx_title(const struct fa_ctx *x, FILE *out)
{
	if (x->coro)
		fprintf(out, "\ncoroutine %s (last on tid %" PRId32 "): %" PRIu64 " calls\n",
			x->name[0] ? x->name : "-", x->tid, x->calls);
	else
		fprintf(out, "\nthread %s (tid %" PRId32 "): %" PRIu64 " calls\n",
			x->name[0] ? x->name : "-", x->tid, x->calls);
}

static void rpf_text(struct rpf_state *st, FILE *out)
{
	const struct rip_file_hdr *h = evs_file_hdr(st->s);
	char comm[sizeof(h->comm) + 1];
	struct fa_totals t;
	const struct fa_fn *v;
	const struct fa_ctx *x;
	size_t n, nx, threads = 0, coros = 0;
	uint64_t calls = 0;

	memcpy(comm, h->comm, sizeof(h->comm));
	comm[sizeof(h->comm)] = 0;
	fa_totals(st->fa, &t);
	v = fa_funcs(st->fa, &n);
	x = fa_ctxs(st->fa, &nx);
	for (size_t i = 0; i < nx; i++) {
		calls += x[i].calls;
		threads += !x[i].coro;
		coros += !!x[i].coro;
	}
	if (st->tot.discarded || st->tot.lost_packets || st->tot.torn)
		fprintf(out,
			"WARNING: this trace is incomplete: %" PRIu64
			" events discarded or overwritten, %" PRIu64
			" packets lost or unreadable: the counts are those of the records that "
			"remain.\n\n",
			st->tot.discarded, st->tot.lost_packets + st->tot.torn);
	fprintf(out,
		"%s: pid %d (%s), %" PRIu64 " call%s of %zu function%s in %zu thread%s and %zu "
		"coroutine%s over %.3f s\n",
		evs_source(st->s), (int)h->pid, comm, calls, calls == 1 ? "" : "s", n,
		n == 1 ? "" : "s", threads, threads == 1 ? "" : "s", coros, coros == 1 ? "" : "s",
		st->any ? (double)(st->last_ns - st->first_ns) / 1e9 : 0.0);
	if (!fa_typed(st->fa))
		fputs("note: no function records in this trace: build the program with "
		      "-finstrument-functions, link it with librip (-lrip), and record with rip run "
		      "--functions (or read its ring file)\n",
		      out);
	else if (!t.entries && !t.exits)
		/* rip run preloads librip, which declares the types: typed, yet no call */
		fputs("note: no function calls in this trace: record with rip run --functions a "
		      "program built with -finstrument-functions (or patch entries: rip enable PID "
		      "func)\n",
		      out);
	if (!n && st->unmatched)
		fputs("note: no function recorded matches the --match globs (a glob matches the "
		      "whole name: 'foo*' for a prefix)\n",
		      out);
	if (t.no_entry || t.no_exit || t.running || t.ids_unknown || t.id0)
		fprintf(out,
			"note: %" PRIu64 " exits without their entry in the trace, %" PRIu64
			" calls left without their exit (longjmp, exceptions), %" PRIu64
			" still running at the end, %" PRIu64 " records of unnamed ids, %" PRIu64
			" of functions without an id\n",
			t.no_entry, t.no_exit, t.running, t.ids_unknown, t.id0);
	if (t.coro_ended)
		fprintf(out,
			"note: %" PRIu64
			" call%s ended with %s coroutine (destroyed while they ran)\n",
			t.coro_ended, t.coro_ended == 1 ? "" : "s",
			t.coro_ended == 1 ? "its" : "their");
	if (t.before)
		fprintf(out,
			"note: %" PRIu64
			" calls began before the trace (a forked child's calls open "
			"at the fork): their time counts from its start\n",
			t.before);
	fputc('\n', out);
	rpf_table(st, v, n, out);
	if (!st->o->threads)
		return;
	for (size_t i = 0; i < nx; i++) {
		if (!x[i].nfn)
			continue;
		rpf_ctx_title(&x[i], out);
		rpf_table(st, x[i].fn, x[i].nfn, out);
	}
}

/* ---- JSON ---- */

static void rpf_json_fns(struct rpf_state *st, const struct fa_fn *v, size_t n, FILE *out)
{
	struct fa_fn *c = rpf_sorted(st, v, n);
	size_t rows = st->o->top && st->o->top < n ? st->o->top : n;

	fputc('[', out);
	for (size_t i = 0; c && i < rows; i++) {
		const struct fa_fn *f = &c[i];
		const struct tfn_name *nm = tfn_name(st->names, f->id, f->addr);

		fprintf(out, "%s{\"function\":", i ? "," : "");
		json_str(out, nm->func);
		fputs(",\"file\":", out);
		json_str(out, nm->file);
		fprintf(out,
			",\"line\":%d,\"address\":\"0x%" PRIx64 "\",\"id\":%" PRIu32
			",\"calls\":%" PRIu64 ",\"total_ns\":%" PRId64 ",\"self_ns\":%" PRId64
			",\"max_ns\":%" PRId64 ",\"running\":%" PRIu64 ",\"before\":%" PRIu64 "}",
			nm->line, f->addr, f->id, f->calls, f->total_ns, f->self_ns, f->max_ns,
			f->running, f->before);
	}
	fputc(']', out);
	free(c);
}

static void rpf_json(struct rpf_state *st, FILE *out)
{
	struct fa_totals t;
	const struct fa_fn *v;
	const struct fa_ctx *x;
	size_t n, nx;

	fa_totals(st->fa, &t);
	v = fa_funcs(st->fa, &n);
	x = fa_ctxs(st->fa, &nx);
	json_trace_head(out, st->s);
	fprintf(out,
		",\"discarded\":%" PRIu64 ",\"lost_packets\":%" PRIu64 ",\"entries\":%" PRIu64
		",\"exits\":%" PRIu64 ",\"no_entry\":%" PRIu64 ",\"no_exit\":%" PRIu64
		",\"running\":%" PRIu64 ",\"before\":%" PRIu64 ",\"coro_ended\":%" PRIu64
		",\"ids_unknown\":%" PRIu64 ",\"id0\":%" PRIu64 ",\"functions\":",
		st->tot.discarded, st->tot.lost_packets + st->tot.torn, t.entries, t.exits,
		t.no_entry, t.no_exit, t.running, t.before, t.coro_ended, t.ids_unknown, t.id0);
	rpf_json_fns(st, v, n, out);
	if (st->o->threads) {
		bool first = true;

		fputs(",\"threads\":[", out);
		for (size_t i = 0; i < nx; i++) {
			if (!x[i].nfn)
				continue;
			fprintf(out, "%s{\"kind\":\"%s\",\"tid\":%" PRId32 ",\"name\":",
				first ? "" : ",", x[i].coro ? "coroutine" : "thread", x[i].tid);
			json_str(out, x[i].name);
			fprintf(out, ",\"calls\":%" PRIu64 ",\"functions\":", x[i].calls);
			rpf_json_fns(st, x[i].fn, x[i].nfn, out);
			fputc('}', out);
			first = false;
		}
		fputc(']', out);
	}
	fputs("}\n", out);
}

/* ---- the command ---- */

int rpf_run(const struct rpf_opts *o)
{
	struct rpf_state st = { .o = o };
	struct fa_opts fo = { .max_depth = o->depth, .min_ns = o->min_ns, .per_ctx = o->threads };
	char err[RR_ERR_MAX + PATH_MAX];
	struct evs_event e;
	int ret, status = EXIT_FAIL;

	tool_heap_big();
	ret = tool_evs_open(o->target, &st.s, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		return EXIT_FAIL;
	}
	if (tfn_open(st.s, o->sysroot, o->debug_dir, &st.names))
		goto out;
	if (o->nglobs) {
		fo.keep = rpf_keep;
		fo.arg = &st;
	}
	if (tfn_pass(st.s, &fo, &st.fa))
		goto out;
	progress_bar(st.s, "rip report");
	while ((ret = evs_next(st.s, &e, err, sizeof(err))) > 0) {
		if (!st.any)
			st.first_ns = e.ns;
		st.any = true;
		st.last_ns = e.ns;
		if (fa_event(st.fa, &e) < 0) {
			tool_err("out of memory");
			goto out;
		}
	}
	if (ret < 0) {
		tool_err("%s", err);
		goto out;
	}
	if (fa_end(st.fa, st.last_ns)) {
		tool_err("out of memory");
		goto out;
	}
	evs_totals(st.s, &st.tot);
	if (o->json)
		rpf_json(&st, stdout);
	else
		rpf_text(&st, stdout);
	if (tool_flush(stdout))
		goto out;
	if (!o->json)
		tfn_problems(st.names);
	status = EXIT_OK;
out:
	fa_free(st.fa);
	tfn_free(st.names);
	tool_evs_close(st.s);
	return status;
}
