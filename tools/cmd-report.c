/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/cmd-report.c - `rip report`: a summary of a resource trace, the
 * way heaptrack_print gives one: the top allocation sites by bytes, by
 * count and by their part of the peak; the peak of heap memory in use and
 * when; totals per thread; histograms of sizes and lifetimes; descriptors
 * and shared memory.  Text, or one JSON document (man/rip-report.1), or
 * an HTML page with charts and a flame graph (--html; report-html.c draws
 * what this file puts in its JSON: the report, the series, every site).
 *
 * The pass over the events is analysis/report.c; this file names the sites
 * (the first frame that is not the allocator's own: libc, libstdc++'s
 * operator new, the preload library; return addresses minus one) and
 * prints.  A trace that lost events says so first.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rip/resource.h>

#include "analysis/leaks.h"
#include "analysis/report.h"
#include "analysis/roles.h"
#include "read/sym.h"
#include "analysis/stacks.h"
#include "tools/format.h"
#include "tools/opts.h"
#include "tools/report-html.h"
#include "tools/report-funcs.h"
#include "tools/tool.h"

static int cmd_report(int argc, char **argv);

static const struct rip_cmd cmd_report_def = {
	.name = "report",
	.run = cmd_report,
	.summary = "top allocation sites, peak memory, histograms of a resource trace",
	.usage = "usage: rip report [options] TRACE-OR-TARGET\n"
		 "\n"
		 "Read the resource events of a trace (rip run --mem/--fd/--shm) once, in time\n"
		 "order, and summarize them: the top allocation sites by bytes allocated, by\n"
		 "number of allocations and by bytes live at the peak of heap memory in use;\n"
		 "that peak and when it was reached; allocations, bytes and frees per thread;\n"
		 "a histogram of allocation sizes (powers of two) and one of the lifetimes of\n"
		 "freed blocks; file descriptors and shared memory.  Sites are backtraces,\n"
		 "named by their first frame outside the allocator, as function (file:line).\n"
		 "TRACE-OR-TARGET is a trace directory, a pid or a ring file.\n"
		 "\n"
		 "      --functions       the function calls of a trace of a program built with\n"
		 "                        -finstrument-functions or patched entries (rip run\n"
		 "                        --functions, rip enable PID func): calls,\n"
		 "                        total, self and longest time of every function\n"
		 "  -j, --json            one JSON document (see rip-report(1))\n"
		 "      --html=FILE       write one self-contained HTML page to FILE (-: standard\n"
		 "                        output): memory in\n"
		 "                        use and allocation rate over time, histograms, a flame\n"
		 "                        graph of bytes by backtrace, the top sites\n"
		 "  -n, --top=N           sites in each top list (default 10; functions: all)\n"
		 "      --through=FUNC    only the memory that stacks through FUNC allocated: a\n"
		 "                        function, a glob (parse_*) or FILE:LINE; repeatable\n"
		 "                        (any of them); descriptors and shared memory are not\n"
		 "                        counted then\n"
		 "With --functions:\n"
		 "      --threads         a table for each thread and coroutine too\n"
		 "      --depth=N         only calls N deep or less (1: the outermost)\n"
		 "  -t, --min-time=DUR    only calls that took DUR or more (e.g. 10us, 2ms)\n"
		 "      --match=GLOB      only functions whose name matches GLOB; !GLOB leaves\n"
		 "                        them out (repeatable)\n"
		 "  -s, --sort=KEY        total (default), self, calls, max or name\n"
		 "      --sysroot=DIR     find the traced host's binaries under DIR\n"
		 "      --debug-dir=DIR   look for separate debug files in DIR first\n"
		 "  -h, --help            this text\n"
		 "\n"
		 "Exit status: 0 the report was printed, 1 failure (no such trace, corrupt\n"
		 "trace), 2 usage error.\n",
};

RIP_COMMAND(cmd_report_def);

#define RPT_MAX_STACK 16	  /* frames of a site's stack in the JSON report */
#define RPT_FLAME_SITES 10000 /* sites in the flame graph of --html; the rest lumped */
#define RPT_FLAME_DEPTH 128	  /* return addresses of a site in the flame graph */

struct report_opts {
	struct opts t; /* --json, --top, --sysroot, --debug-dir and the operand */
	const char *html;
	bool functions;	    /* --functions: tools/report-funcs.c reports */
	struct rpf_opts fn; /* its options */
	bool fn_only;	    /* an option of --functions was given */
};

struct report_state {
	struct report_opts o;
	struct opts_src src;
	struct rp *rp;
	FILE *out;
	size_t *by_bytes, *by_count, *by_peak; /* site indexes, sorted */
	size_t npeak;			       /* sites with bytes at the peak */
};

/* ---- sorting -------------------------------------------------------------------------- */

static const struct rp_site *report_sites; /* for the comparators */

#define REPORT_CMP(a, b)                                                                           \
	do {                                                                                       \
		if ((a) != (b))                                                                    \
			return (a) < (b) ? 1 : -1;                                                 \
	} while (0)

static int report_cmp_bytes(const void *a, const void *b)
{
	const struct rp_site *x = &report_sites[*(const size_t *)a];
	const struct rp_site *y = &report_sites[*(const size_t *)b];

	REPORT_CMP(x->bytes, y->bytes);
	REPORT_CMP(x->count, y->count);
	REPORT_CMP(y->bt, x->bt);
	return 0;
}

static int report_cmp_count(const void *a, const void *b)
{
	const struct rp_site *x = &report_sites[*(const size_t *)a];
	const struct rp_site *y = &report_sites[*(const size_t *)b];

	REPORT_CMP(x->count, y->count);
	REPORT_CMP(x->bytes, y->bytes);
	REPORT_CMP(y->bt, x->bt);
	return 0;
}

static int report_cmp_peak(const void *a, const void *b)
{
	const struct rp_site *x = &report_sites[*(const size_t *)a];
	const struct rp_site *y = &report_sites[*(const size_t *)b];

	REPORT_CMP(x->peak_bytes, y->peak_bytes);
	REPORT_CMP(x->peak_count, y->peak_count);
	REPORT_CMP(y->bt, x->bt);
	return 0;
}

static int report_cmp_thread(const void *a, const void *b)
{
	const struct rp_thread *x = a, *y = b;

	REPORT_CMP(x->bytes, y->bytes);
	REPORT_CMP(x->allocs, y->allocs);
	REPORT_CMP(y->tid, x->tid);
	return 0;
}

static int report_sort(struct report_state *st)
{
	struct rp *rp = st->rp;
	size_t n = rp->nsites;

	st->by_bytes = malloc((n + 1) * sizeof(size_t));
	st->by_count = malloc((n + 1) * sizeof(size_t));
	st->by_peak = malloc((n + 1) * sizeof(size_t));
	if (!st->by_bytes || !st->by_count || !st->by_peak)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		st->by_bytes[i] = st->by_count[i] = i;
		if (rp->sites[i].peak_bytes)
			st->by_peak[st->npeak++] = i;
	}
	report_sites = rp->sites;
	if (n) {
		qsort(st->by_bytes, n, sizeof(size_t), report_cmp_bytes);
		qsort(st->by_count, n, sizeof(size_t), report_cmp_count);
	}
	if (st->npeak)
		qsort(st->by_peak, st->npeak, sizeof(size_t), report_cmp_peak);
	if (rp->nthreads) /* qsort's array may not be NULL */
		qsort(rp->threads, rp->nthreads, sizeof(*rp->threads), report_cmp_thread);
	return 0;
}

/* ---- symbols -------------------------------------------------------------------------- */

/* The allocator's own frames: libc's malloc family, operator new, the preload library. */
static bool report_allocator(const struct rip_frame *f)
{
	const char *b = tool_base(f->module);

	return b && (!strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) ||
		     !strncmp(b, "libstdc++", 9) || !strncmp(b, "librip-preload", 14));
}

/*
 * The frames of site s from its first frame outside the allocator (frames[0]
 * when all are inside): *pcs and *n, the index of that frame returned; -1
 * when the site has no backtrace (0) or one the trace never defines.
 */
static int report_user_frame(struct report_state *st, const struct rp_site *s, const uint64_t **pcs,
			     uint32_t *n)
{
	struct rip_frame fr[STK_MAX_INLINE];

	*pcs = s->bt ? rp_bt(st->rp, s->bt, n) : NULL;
	if (!*pcs || !*n)
		return -1;
	for (uint32_t i = 0; i < *n; i++) {
		int k = opts_resolve(&st->src, (*pcs)[i], fr);

		if (!report_allocator(&fr[k - 1]))
			return (int)i;
	}
	return 0;
}

/* "func (file:line)", "func+0x12 (libx.so)", "libx.so+0x1234", "0x1234 (in no module)" */
static const char *report_frame_str(const struct rip_frame *f, uint64_t addr, char *buf, size_t len)
{
	if (f->func && f->file && f->line)
		snprintf(buf, len, "%s (%s:%d)", f->func, f->file, f->line);
	else if (f->func && f->sigframe)
		snprintf(buf, len, "%s", f->func);
	else if (f->func)
		snprintf(buf, len, "%s+0x%" PRIx64 " (%s)", f->func, f->offset,
			 f->module ? tool_base(f->module) : "?");
	else if (f->module)
		snprintf(buf, len, "%s+0x%" PRIx64, tool_base(f->module), f->offset);
	else
		snprintf(buf, len, "0x%" PRIx64 " (in no module)", addr);
	return buf;
}

/* ---- text ----------------------------------------------------------------------------- */

static double report_secs(const struct rp *rp, int64_t ns)
{
	return (double)(ns - rp->first_ns) / 1e9;
}

/* Frames of a site shown at most, from its first outside the allocator. */
#define REPORT_SHOW_MAX 24u

/* A hash (FNV-1a) of the frame at pc as report_frame_str prints it. */
static uint64_t report_frame_hash(struct report_state *st, uint64_t pc)
{
	struct rip_frame fr[STK_MAX_INLINE];
	char buf[1024];
	uint64_t h = 0xcbf29ce484222325ull;

	opts_resolve(&st->src, pc, fr);
	for (const char *c = report_frame_str(&fr[0], pc, buf, sizeof(buf)); *c; c++)
		h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
	return h;
}

/*
 * How many frames to show of each of the n sites of a table: the site's
 * function and its caller, and more where that is what another site of the
 * table shows too (deep stacks that part only further down: each site is
 * told from the others by the first frame in which it differs), up to
 * REPORT_SHOW_MAX.  depth[i] 0: the site has no backtrace to show.
 */
static void report_depths(struct report_state *st, const struct rp_site *const *sites, size_t n,
			  uint32_t *depth)
{
	uint64_t *h = calloc(n ? n : 1, REPORT_SHOW_MAX * sizeof(*h));
	uint32_t *len = calloc(n ? n : 1, sizeof(*len));

	for (size_t i = 0; i < n; i++) {
		const uint64_t *pcs;
		uint32_t np;
		int k = report_user_frame(st, sites[i], &pcs, &np);

		if (k < 0) {
			depth[i] = 0;
			continue;
		}
		depth[i] = np - (uint32_t)k < 2 ? np - (uint32_t)k : 2;
		if (!h || !len)
			continue; /* out of memory: two frames, as before */
		len[i] = np - (uint32_t)k < REPORT_SHOW_MAX ? np - (uint32_t)k : REPORT_SHOW_MAX;
		for (uint32_t j = 0; j < len[i]; j++)
			h[i * REPORT_SHOW_MAX + j] = report_frame_hash(st, pcs[k + j]);
	}
	for (size_t i = 0; h && len && i < n; i++)
		for (size_t o = 0; o < n; o++) {
			uint32_t c = 0;

			if (o == i || !len[o])
				continue;
			while (c < len[i] && c < len[o] &&
			       h[i * REPORT_SHOW_MAX + c] == h[o * REPORT_SHOW_MAX + c])
				c++;
			if (c == len[o] && c < len[i])
				c = len[o]; /* the other ends there: one frame more tells them apart */
			if (c + 1 > depth[i])
				depth[i] = c + 1 < len[i] ? c + 1 : len[i];
		}
	free(h);
	free(len);
}

/* The site's name and, on the next depth - 1 lines, its callers. */
static void report_site_text(struct report_state *st, const struct rp_site *s, uint32_t depth)
{
	struct rip_frame fr[STK_MAX_INLINE];
	const uint64_t *pcs;
	uint32_t n;
	int i = report_user_frame(st, s, &pcs, &n);
	char buf[1024];

	if (i < 0) {
		if (!s->bt)
			fputs("(no backtrace recorded)\n", st->out);
		else
			fprintf(st->out, "(backtrace %" PRIu32 " is not defined in %s)\n", s->bt,
				evs_chunks_unread(st->src.s) ? "the chunks read" : "the trace");
		return;
	}
	opts_resolve(&st->src, pcs[i], fr);
	fprintf(st->out, "%s\n", report_frame_str(&fr[0], pcs[i], buf, sizeof(buf)));
	for (uint32_t k = 1; k < depth && (uint32_t)i + k < n; k++) {
		opts_resolve(&st->src, pcs[i + k], fr);
		fprintf(st->out, "%28s from %s\n", "",
			report_frame_str(&fr[0], pcs[i + k], buf, sizeof(buf)));
	}
}

/* The n sites, each with the frames that tell it from the others (report_depths). */
static void report_sites_text(struct report_state *st, const struct rp_site *const *sites,
			      const uint64_t (*cols)[2], size_t n)
{
	uint32_t *depth = calloc(n ? n : 1, sizeof(*depth));

	if (depth)
		report_depths(st, sites, n, depth);
	for (size_t i = 0; i < n; i++) {
		fprintf(st->out, "  %14" PRIu64 " %10" PRIu64 "  ", cols[i][0], cols[i][1]);
		report_site_text(st, sites[i], depth ? depth[i] : 2);
	}
	free(depth);
}

static void report_top_text(struct report_state *st, const char *title, const char *c2,
			    const size_t *idx, size_t n, int what)
{
	FILE *out = st->out;
	size_t shown = n < st->o.t.top ? n : (size_t)st->o.t.top;
	const struct rp_site **sites;
	uint64_t(*cols)[2];

	fprintf(out, "\n%s\n", title);
	if (!n) {
		fputs("  (none)\n", out);
		return;
	}
	fprintf(out, "  %14s %10s  site\n", "bytes", c2);
	sites = calloc(shown, sizeof(*sites));
	cols = calloc(shown, sizeof(*cols));
	if (!sites || !cols) {
		fputs("  (out of memory)\n", out);
		goto free_arrays;
	}
	for (size_t i = 0; i < shown; i++) {
		const struct rp_site *s = &st->rp->sites[idx[i]];

		sites[i] = s;
		cols[i][0] = what ? s->peak_bytes : s->bytes;
		cols[i][1] = what ? s->peak_count : s->count;
	}
	report_sites_text(st, sites, cols, shown);
	if (shown < n)
		fprintf(out, "  (%zu more sites)\n", n - shown);
free_arrays:
	free(cols);
	free(sites);
}

static const char *report_life_name(unsigned k, char *buf, size_t len)
{
	static const char *const names[] = { "< 1 us",	 "< 10 us", "< 100 us", "< 1 ms", "< 10 ms",
					     "< 100 ms", "< 1 s",   "< 10 s",	">= 10 s" };

	snprintf(buf, len, "%s", k < RP_LIFE ? names[k] : "?");
	return buf;
}

/* ---- the kinds of tracing modules ---- */

static void report_site_json(struct report_state *st, const struct rp_site *s);

static const struct rp_msite *report_msites; /* for the comparator */

static int report_cmp_msite(const void *a, const void *b)
{
	const struct rp_msite *x = &report_msites[*(const size_t *)a],
			      *y = &report_msites[*(const size_t *)b];

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->bt < y->bt ? -1 : x->bt > y->bt;
}

/* The sites of kind k, biggest first: a new array of indexes in rp->msites, their number. */
static size_t report_kind_sites(const struct rp *rp, uint32_t k, size_t **out)
{
	size_t n = 0, *idx = malloc((rp->nmsites ? rp->nmsites : 1) * sizeof(*idx));

	*out = idx;
	if (!idx)
		return 0;
	for (size_t i = 0; i < rp->nmsites; i++)
		if (rp->msites[i].kind == k)
			idx[n++] = i;
	report_msites = rp->msites;
	if (n)
		qsort(idx, n, sizeof(*idx), report_cmp_msite);
	return n;
}

/* A module site as an allocation site (report_site_*: its backtrace, its counts). */
static struct rp_site report_msite_site(const struct rp_msite *m)
{
	return (struct rp_site){ .bt = m->bt, .count = m->count, .bytes = m->bytes,
				 .live_count = m->live_count, .live_bytes = m->live_bytes };
}

/* The module sites idx[0 .. n) of a kind, as report_top_text's. */
static void report_msites_text(struct report_state *st, const size_t *idx, size_t n)
{
	struct rp_site *site = calloc(n ? n : 1, sizeof(*site));
	const struct rp_site **sites = calloc(n ? n : 1, sizeof(*sites));
	uint64_t(*cols)[2] = calloc(n ? n : 1, sizeof(*cols));

	if (!site || !sites || !cols) {
		fputs("  (out of memory)\n", st->out);
		goto free_arrays;
	}
	for (size_t j = 0; j < n; j++) {
		const struct rp_msite *m = &st->rp->msites[idx[j]];

		site[j] = report_msite_site(m);
		sites[j] = &site[j];
		cols[j][0] = m->bytes;
		cols[j][1] = m->count;
	}
	report_sites_text(st, sites, cols, n);
free_arrays:
	free(cols);
	free(sites);
	free(site);
}

static void report_modules_text(struct report_state *st)
{
	const struct rp *rp = st->rp;
	FILE *out = st->out;
	char b[48], b2[48];

	for (size_t i = 0; i < rp->nmkinds; i++) {
		const struct rp_mkind *k = &rp->mkinds[i];
		const struct ev_type *t = role_kind(rp->types, k->kind);
		bool counter = t && (t->flags & RIP_EVTYPE_COUNTER);
		size_t *idx, n = report_kind_sites(rp, k->kind, &idx), shown;

		if (!t)
			continue;
		fprintf(out, "\nMODULE KIND %s (%s)\n", t->name + 5, t->desc);
		if (counter)
			fprintf(out, "  %" PRIu64 " transfers, %s moved\n", k->count,
				fmt_bytes_exact(k->bytes, b, sizeof(b)));
		else
			fprintf(out,
				"  %" PRIu64 " acquired (%s), %" PRIu64 " released, %" PRIu64
				" left (%s)\n",
				k->count, fmt_bytes_exact(k->bytes, b, sizeof(b)), k->releases,
				k->live_count, fmt_bytes_exact(k->live_bytes, b2, sizeof(b2)));
		fprintf(out, "  top sites, by bytes:\n  %14s %10s  site\n", "bytes",
			counter ? "transfers" : "acquired");
		shown = n < st->o.t.top ? n : (size_t)st->o.t.top;
		report_msites_text(st, idx, shown);
		if (shown < n)
			fprintf(out, "  (%zu more sites)\n", n - shown);
		free(idx);
	}
}

static void report_modules_json(struct report_state *st)
{
	const struct rp *rp = st->rp;
	FILE *out = st->out;
	size_t nk = 0;

	fputs(",\"modules\":[", out);
	for (size_t i = 0; i < rp->nmkinds; i++) {
		const struct rp_mkind *k = &rp->mkinds[i];
		const struct ev_type *t = role_kind(rp->types, k->kind);
		size_t *idx, n = report_kind_sites(rp, k->kind, &idx), shown;

		if (!t) {
			free(idx);
			continue;
		}
		fputs(nk++ ? ",{\"kind\":" : "{\"kind\":", out);
		json_str(out, t->name + 5);
		fputs(",\"description\":", out);
		json_str(out, t->desc);
		fprintf(out,
			",\"counter\":%s,\"refcounted\":%s,\"count\":%" PRIu64 ",\"bytes\":%" PRIu64
			",\"released\":%" PRIu64 ",\"released_unseen\":%" PRIu64
			",\"live_count\":%" PRIu64 ",\"live_bytes\":%" PRIu64 ",\"sites\":[",
			t->flags & RIP_EVTYPE_COUNTER ? "true" : "false",
			t->flags & RIP_EVTYPE_REFCOUNT ? "true" : "false", k->count, k->bytes,
			k->releases, k->releases_unseen, k->live_count, k->live_bytes);
		shown = n < st->o.t.top ? n : (size_t)st->o.t.top;
		for (size_t j = 0; j < shown; j++) {
			struct rp_site site = report_msite_site(&rp->msites[idx[j]]);

			fputs(j ? "," : "", out);
			report_site_json(st, &site);
		}
		fputs("]}", out);
		free(idx);
	}
	fputc(']', out);
}

/*
 * The failed calls of each allocating function: fmt (separator, name,
 * count) for each, by kind, then those of kinds with no name as "other".
 * Names are the fixed ones of rip/resource.h: nothing to escape.
 */
static void report_failed(FILE *out, const struct rp *rp, const char *fmt, const char *sep)
{
	uint64_t other = rp->failed_kind[0];
	const char *s = "";

	for (unsigned k = 1; k < RP_KINDS; k++) {
		const char *name = lk_kind_name(RIP_CAT_MEM, k);

		if (!name)
			other += rp->failed_kind[k];
		else if (rp->failed_kind[k]) {
			fprintf(out, fmt, s, name, rp->failed_kind[k]);
			s = sep;
		}
	}
	if (other)
		fprintf(out, fmt, s, "other", other);
}

/*
 * Was category cat (mem, fd, shm) left untraced: off in the file's header
 * at the end, and no event of it counted?  Its section then says so: under
 * rip run --mem, "FILE DESCRIPTORS opened: 0" read as none opened.
 */
static bool report_untraced(const struct report_state *st, unsigned cat)
{
	const struct rp *rp = st->rp;

	if (!tool_cat_off(evs_file_hdr(st->src.s), cat))
		return false;
	if (cat == RIP_CAT_MEM)
		return !rp->allocs && !rp->frees && !rp->frees_unseen && !rp->failed;
	if (cat == RIP_CAT_FD)
		return !rp->fd.opened && !rp->fd.closed && !rp->fd.closed_unseen;
	return !rp->shm.created && !rp->shm.removed_unseen && !rp->shm.attached &&
	       !rp->shm.detached_unseen && !rp->shm.opened && !rp->shm.memfd;
}

static void report_print_text(struct report_state *st)
{
	const struct rp *rp = st->rp;
	const struct rip_file_hdr *h = evs_file_hdr(st->src.s);
	const struct evs_totals *t = &st->src.tot;
	FILE *out = st->out;
	char comm[sizeof(h->comm) + 1], b[64], b2[64];

	memcpy(comm, h->comm, sizeof(h->comm));
	comm[sizeof(h->comm)] = 0;
	if (t->discarded || t->lost_packets || t->torn)
		fprintf(out,
			"WARNING: this trace is incomplete: %" PRIu64
			" events discarded or overwritten, %" PRIu64
			" packets lost or unreadable.  Totals, peak and lifetimes are those of the "
			"events that remain.\n\n",
			t->discarded, t->lost_packets + t->torn);
	fprintf(out,
		"%s: pid %d (%s), %" PRIu64 " events over %.3f s, %" PRIu64
		" of them resource events\n",
		evs_source(st->src.s), (int)h->pid, comm, rp->events,
		rp->any_event ? report_secs(rp, rp->last_ns) : 0.0, rp->res_events);
	opts_through_text(out, st->src.thr);
	if (st->src.thr && thr_stackless(st->src.thr))
		fprintf(out, "note: %" PRIu64 " allocations without a stack (or made before their "
			     "stack's definition was read) are left out\n",
			thr_stackless(st->src.thr));
	if (!rp->has_types)
		fputs("note: no resource events in this trace: record one with rip run --mem "
		      "(or --fd, --shm, --all)\n",
		      out);

	fputs("\nMEMORY\n", out);
	if (report_untraced(st, RIP_CAT_MEM)) {
		fputs("  not traced (rip run --mem)\n", out);
		goto fd;
	}
	fprintf(out, "  allocations: %" PRIu64 " (%s), %" PRIu64 " of them reallocs\n", rp->allocs,
		fmt_bytes_exact(rp->alloc_bytes, b, sizeof(b)), rp->reallocs);
	fprintf(out, "  frees: %" PRIu64 " (%s)\n", rp->frees,
		fmt_bytes_exact(rp->freed_bytes, b, sizeof(b)));
	if (rp->peak_bytes)
		fprintf(out, "  peak: %s in %" PRIu64 " block%s at %.6f s (event %" PRIu64 ")\n",
			fmt_bytes_exact(rp->peak_bytes, b, sizeof(b)), rp->peak_count,
			rp->peak_count == 1 ? "" : "s", report_secs(rp, rp->peak_ns),
			rp->peak_event);
	else
		fputs("  peak: 0 bytes\n", out);
	fprintf(out, "  live at the end: %s in %" PRIu64 " block%s\n",
		fmt_bytes_exact(rp->live_bytes, b, sizeof(b)), rp->live_count,
		rp->live_count == 1 ? "" : "s");
	if (rp->reserved_bytes)
		fprintf(out,
			"  not counted: %s of address space still reserved (mmap with PROT_NONE) "
			"in %" PRIu64 " range%s%s\n",
			fmt_bytes_exact(rp->reserved_bytes, b, sizeof(b)), rp->reserved_ranges,
			rp->reserved_ranges == 1 ? "" : "s",
			st->src.thr ? " (by the whole process: --through is not applied to it)" :
				      "");
	if (rp->failed || rp->frees_unseen || rp->replaced)
		fprintf(out,
			"  failed allocations: %" PRIu64 ", frees of blocks never seen allocated: "
			"%" PRIu64 ", allocated again while live: %" PRIu64 "\n",
			rp->failed, rp->frees_unseen, rp->replaced);
	if (rp->failed) {
		fputs("  failed calls by function: ", out);
		report_failed(out, rp, "%s%s %" PRIu64, ", ");
		fputc('\n', out);
	}

	report_top_text(st, "TOP SITES BY BYTES ALLOCATED", "allocs", st->by_bytes, rp->nsites, 0);
	report_top_text(st, "TOP SITES BY NUMBER OF ALLOCATIONS", "allocs", st->by_count,
			rp->nsites, 0);
	report_top_text(st, "TOP SITES AT THE PEAK (bytes live then)", "blocks", st->by_peak,
			st->npeak, 1);

	fputs("\nTHREADS\n", out);
	fprintf(out, "  %8s %-16s %10s %14s %10s %14s\n", "tid", "name", "allocs", "bytes", "frees",
		"freed bytes");
	for (size_t i = 0; i < rp->nthreads; i++) {
		const struct rp_thread *th = &rp->threads[i];
		const char *name = evs_thread_name(st->src.s, th->tid);

		if (rp->through && !th->allocs && !th->frees)
			continue; /* nothing of the filter's */
		fprintf(out,
			"  %8d %-16s %10" PRIu64 " %14" PRIu64 " %10" PRIu64 " %14" PRIu64 "\n",
			(int)th->tid, name && *name ? name : "-", th->allocs, th->bytes, th->frees,
			th->freed_bytes);
	}

	fputs("\nALLOCATION SIZES\n", out);
	fprintf(out, "  %-24s %10s %14s\n", "size", "allocs", "bytes");
	for (unsigned k = 0; k < RP_HIST; k++) {
		if (!rp->hist[k].count)
			continue;
		if (!k)
			snprintf(b, sizeof(b), "0");
		else if (k == 64)
			snprintf(b, sizeof(b), "%" PRIu64 "..", (uint64_t)1 << 63);
		else
			snprintf(b, sizeof(b), "%" PRIu64 "..%" PRIu64, (uint64_t)1 << (k - 1),
				 ((uint64_t)1 << k) - 1);
		fprintf(out, "  %-24s %10" PRIu64 " %14" PRIu64 "\n", b, rp->hist[k].count,
			rp->hist[k].bytes);
	}

	fputs("\nLIFETIMES OF FREED BLOCKS\n", out);
	fprintf(out, "  %-12s %10s %14s\n", "lifetime", "blocks", "bytes");
	for (unsigned k = 0; k < RP_LIFE; k++)
		fprintf(out, "  %-12s %10" PRIu64 " %14" PRIu64 "\n",
			report_life_name(k, b, sizeof(b)), rp->life[k].count, rp->life[k].bytes);
	fprintf(out, "  %-12s %10" PRIu64 " %14" PRIu64 "\n", "never freed", rp->live_count,
		rp->live_bytes);

	if (rp->through) {
		fputs("\n(descriptors, shared memory and the kinds of tracing modules are not "
		      "counted with --through)\n",
		      out);
		return;
	}
fd:
	fputs("\nFILE DESCRIPTORS\n", out);
	if (report_untraced(st, RIP_CAT_FD)) {
		fputs("  not traced (rip run --fd)\n", out);
		goto shm;
	}
	fprintf(out,
		"  opened: %" PRIu64 ", closed: %" PRIu64 ", open at the end: %" PRIu64
		", most open at once: %" PRIu64 "\n",
		rp->fd.opened, rp->fd.closed, rp->fd.open_at_end, rp->fd.peak_open);
	if (rp->fd.closed_unseen || rp->fd.reopened)
		fprintf(out,
			"  closes of descriptors never seen opened: %" PRIu64
			", opened again while open: %" PRIu64 "\n",
			rp->fd.closed_unseen, rp->fd.reopened);
	if (rp->fd.exec_closed)
		fprintf(out,
			"  of the closed, by the execve that replaced the program (O_CLOEXEC): %" PRIu64
			"\n",
			rp->fd.exec_closed);
	if (rp->fd.opened)
		fprintf(out, "  %-14s %10s %10s %10s\n", "kind", "opened", "closed", "open");
	for (unsigned k = 0; k < RP_KINDS; k++) {
		const char *name = k ? lk_kind_name(RIP_CAT_FD, k) : NULL;

		if (!rp->fd.kind[k].opened && !rp->fd.kind[k].open_at_end)
			continue;
		fprintf(out, "  %-14s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
			name ? name : "other", rp->fd.kind[k].opened, rp->fd.kind[k].closed,
			rp->fd.kind[k].open_at_end);
	}

shm:
	fputs("\nSHARED MEMORY\n", out);
	if (report_untraced(st, RIP_CAT_SHM)) {
		fputs("  not traced (rip run --shm)\n", out);
		goto modules;
	}
	fprintf(out,
		"  segments: %" PRIu64 " created (%s), %" PRIu64 " removed, %" PRIu64
		" left (%s), %" PRIu64 " opened that existed; memfds: %" PRIu64 "\n",
		rp->shm.created, fmt_bytes_exact(rp->shm.created_bytes, b, sizeof(b)), rp->shm.removed,
		rp->shm.live, fmt_bytes_exact(rp->shm.live_bytes, b2, sizeof(b2)), rp->shm.opened,
		rp->shm.memfd);
	fprintf(out,
		"  mappings: %" PRIu64 " attached (%s), %" PRIu64 " detached, %" PRIu64
		" left (%s)\n",
		rp->shm.attached, fmt_bytes_exact(rp->shm.attached_bytes, b, sizeof(b)),
		rp->shm.detached, rp->shm.mapped,
		fmt_bytes_exact(rp->shm.mapped_bytes, b2, sizeof(b2)));
modules:
	report_modules_text(st);
}

/* ---- JSON ----------------------------------------------------------------------------- */

static void report_json_opt(FILE *out, const char *s)
{
	if (s)
		json_str(out, s);
	else
		fputs("null", out);
}

static void report_frame_json(FILE *out, uint64_t addr, const struct rip_frame *f)
{
	fprintf(out, "{\"addr\":\"0x%" PRIx64 "\",\"function\":", addr);
	report_json_opt(out, f->func);
	fputs(",\"file\":", out);
	report_json_opt(out, f->file);
	fprintf(out, ",\"line\":%d,\"module\":", f->line);
	report_json_opt(out, f->module);
	fprintf(out, ",\"inlined\":%s}", f->inlined ? "true" : "false");
}

static void report_site_json(struct report_state *st, const struct rp_site *s)
{
	struct rip_frame fr[STK_MAX_INLINE];
	FILE *out = st->out;
	const uint64_t *pcs;
	uint32_t n;
	int i = report_user_frame(st, s, &pcs, &n);
	const char *sep = "";

	fprintf(out,
		"{\"bt\":%" PRIu32 ",\"allocations\":%" PRIu64 ",\"bytes\":%" PRIu64
		",\"peak_blocks\":%" PRIu64 ",\"peak_bytes\":%" PRIu64 ",\"live_blocks\":%" PRIu64
		",\"live_bytes\":%" PRIu64 ",\"site\":",
		s->bt, s->count, s->bytes, s->peak_count, s->peak_bytes, s->live_count,
		s->live_bytes);
	if (i < 0) {
		fputs("null,\"stack\":null}", out);
		return;
	}
	opts_resolve(&st->src, pcs[i], fr);
	report_frame_json(out, pcs[i], &fr[0]);
	fputs(",\"stack\":[", out);
	for (uint32_t j = (uint32_t)i; j < n && j < (uint32_t)i + RPT_MAX_STACK; j++) {
		int k = opts_resolve(&st->src, pcs[j], fr);

		for (int m = 0; m < k; m++) {
			fputs(sep, out);
			report_frame_json(out, pcs[j], &fr[m]);
			sep = ",";
		}
	}
	fputs("]}", out);
}

static void report_top_json(struct report_state *st, const char *key, const size_t *idx, size_t n)
{
	size_t shown = n < st->o.t.top ? n : (size_t)st->o.t.top;

	fprintf(st->out, ",\"%s\":[", key);
	for (size_t i = 0; i < shown; i++) {
		fputs(i ? "," : "", st->out);
		report_site_json(st, &st->rp->sites[idx[i]]);
	}
	fputc(']', st->out);
}

static void report_print_json(struct report_state *st)
{
	const struct rp *rp = st->rp;
	const struct evs_totals *t = &st->src.tot;
	FILE *out = st->out;
	unsigned nprob = 0;
	void *parg[2] = { out, &nprob };
	const char *sep = "";

	json_trace_head(out, st->src.s);
	fprintf(out,
		",\"events\":%" PRIu64 ",\"resource_events\":%" PRIu64 ",\"duration\":%.9f"
		",\"complete\":%s,\"discarded\":%" PRIu64 ",\"lost_packets\":%" PRIu64,
		rp->events, rp->res_events, rp->any_event ? report_secs(rp, rp->last_ns) : 0.0,
		t->discarded || t->lost_packets || t->torn || t->unfinished ? "false" : "true",
		t->discarded, t->lost_packets + t->torn);
	opts_through_json(out, st->src.thr);
	if (st->src.thr)
		fprintf(out, ",\"through_stackless\":%" PRIu64, thr_stackless(st->src.thr));
	fprintf(out,
		",\"memory\":{\"allocations\":%" PRIu64 ",\"bytes\":%" PRIu64
		",\"reallocs\":%" PRIu64 ",\"frees\":%" PRIu64 ",\"freed_bytes\":%" PRIu64
		",\"failed\":%" PRIu64 ",\"frees_unseen\":%" PRIu64 ",\"allocated_again\":%" PRIu64
		",\"live_blocks\":%" PRIu64 ",\"live_bytes\":%" PRIu64 ",\"sites\":%zu"
		",\"reserved\":{\"bytes\":%" PRIu64 ",\"ranges\":%" PRIu64 "}"
		",\"peak\":{\"bytes\":%" PRIu64 ",\"blocks\":%" PRIu64 ",\"time\":%.9f"
		",\"event\":%" PRIu64 "},\"traced\":%s,\"failed_by_function\":{",
		rp->allocs, rp->alloc_bytes, rp->reallocs, rp->frees, rp->freed_bytes, rp->failed,
		rp->frees_unseen, rp->replaced, rp->live_count, rp->live_bytes, rp->nsites,
		rp->reserved_bytes, rp->reserved_ranges, rp->peak_bytes, rp->peak_count,
		rp->peak_bytes ? report_secs(rp, rp->peak_ns) : 0.0, rp->peak_event,
		report_untraced(st, RIP_CAT_MEM) ? "false" : "true");
	report_failed(out, rp, "%s\"%s\":%" PRIu64, ",");
	fputs("}}", out);
	report_top_json(st, "top_bytes", st->by_bytes, rp->nsites);
	report_top_json(st, "top_count", st->by_count, rp->nsites);
	report_top_json(st, "top_peak", st->by_peak, st->npeak);

	fputs(",\"threads\":[", out);
	sep = "";
	for (size_t i = 0; i < rp->nthreads; i++) {
		const struct rp_thread *th = &rp->threads[i];

		if (rp->through && !th->allocs && !th->frees)
			continue; /* nothing of the filter's */
		fprintf(out, "%s{\"tid\":%d,\"name\":", sep, (int)th->tid);
		sep = ",";
		json_str(out, evs_thread_name(st->src.s, th->tid));
		fprintf(out,
			",\"allocations\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"frees\":%" PRIu64
			",\"freed_bytes\":%" PRIu64 "}",
			th->allocs, th->bytes, th->frees, th->freed_bytes);
	}
	fputs("],\"sizes\":[", out);
	sep = "";
	for (unsigned k = 0; k < RP_HIST; k++) {
		if (!rp->hist[k].count)
			continue;
		fprintf(out,
			"%s{\"min\":%" PRIu64 ",\"max\":%" PRIu64 ",\"count\":%" PRIu64
			",\"bytes\":%" PRIu64 "}",
			sep, k ? (uint64_t)1 << (k - 1) : 0,
			k == 64 ? UINT64_MAX :
			k	? ((uint64_t)1 << k) - 1 :
				  0,
			rp->hist[k].count, rp->hist[k].bytes);
		sep = ",";
	}
	fputs("],\"lifetimes\":[", out);
	for (unsigned k = 0; k < RP_LIFE; k++) {
		fprintf(out, "%s{\"below_ns\":", k ? "," : "");
		if (rp_life_limit(k))
			fprintf(out, "%" PRIu64, rp_life_limit(k));
		else
			fputs("null", out);
		fprintf(out, ",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", rp->life[k].count,
			rp->life[k].bytes);
	}
	fprintf(out, "],\"never_freed\":{\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
		rp->live_count, rp->live_bytes);
	if (rp->through) {
		/* not counted with --through */
		fputs(",\"fd\":null,\"shm\":null,\"modules\":null", out);
		goto tail;
	}

	fprintf(out,
		",\"fd\":{\"opened\":%" PRIu64 ",\"closed\":%" PRIu64 ",\"open_at_end\":%" PRIu64
		",\"peak_open\":%" PRIu64 ",\"closed_unseen\":%" PRIu64 ",\"reopened\":%" PRIu64
		",\"exec_closed\":%" PRIu64 ",\"traced\":%s,\"kinds\":[",
		rp->fd.opened, rp->fd.closed, rp->fd.open_at_end, rp->fd.peak_open,
		rp->fd.closed_unseen, rp->fd.reopened, rp->fd.exec_closed,
		report_untraced(st, RIP_CAT_FD) ? "false" : "true");
	sep = "";
	for (unsigned k = 0; k < RP_KINDS; k++) {
		const char *name = k ? lk_kind_name(RIP_CAT_FD, k) : NULL;

		if (!rp->fd.kind[k].opened && !rp->fd.kind[k].open_at_end)
			continue;
		fprintf(out, "%s{\"kind\":", sep);
		json_str(out, name ? name : "other");
		fprintf(out,
			",\"opened\":%" PRIu64 ",\"closed\":%" PRIu64 ",\"open_at_end\":%" PRIu64
			"}",
			rp->fd.kind[k].opened, rp->fd.kind[k].closed, rp->fd.kind[k].open_at_end);
		sep = ",";
	}
	fprintf(out,
		"]},\"shm\":{\"traced\":%s,\"segments\":{\"created\":%" PRIu64
		",\"created_bytes\":%" PRIu64 ",\"removed\":%" PRIu64 ",\"removed_unseen\":%" PRIu64
		",\"live\":%" PRIu64 ",\"live_bytes\":%" PRIu64 ",\"memfd\":%" PRIu64
		",\"opened\":%" PRIu64 "},\"mappings\":{\"attached\":%" PRIu64
		",\"attached_bytes\":%" PRIu64 ",\"detached\":%" PRIu64
		",\"detached_unseen\":%" PRIu64 ",\"live\":%" PRIu64 ",\"live_bytes\":%" PRIu64
		",\"peak_bytes\":%" PRIu64 "}}",
		report_untraced(st, RIP_CAT_SHM) ? "false" : "true", rp->shm.created,
		rp->shm.created_bytes, rp->shm.removed, rp->shm.removed_unseen, rp->shm.live,
		rp->shm.live_bytes, rp->shm.memfd, rp->shm.opened, rp->shm.attached,
		rp->shm.attached_bytes, rp->shm.detached, rp->shm.detached_unseen, rp->shm.mapped,
		rp->shm.mapped_bytes, rp->shm.peak_mapped_bytes);
	report_modules_json(st);
tail:
	fprintf(out,
		",\"backtraces\":{\"defined\":%" PRIu64 ",\"bad\":%" PRIu64
		"},\"symbol_problems\":[",
		rp->bt_defs, rp->bt_bad);
	if (st->src.sym)
		rip_sym_problems(st->src.sym, tool_sym_problem_json, parg);
	fputs("]}\n", out);
}

/* ---- HTML ----------------------------------------------------------------------------- */

/* ["label", "where"] of a frame: function or module+offset, file:line or module. */
static void report_flame_frame(FILE *out, uint64_t addr, const struct rip_frame *f)
{
	char buf[512];

	if (f->func)
		snprintf(buf, sizeof(buf), "%s", f->func);
	else if (f->module)
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, tool_base(f->module), f->offset);
	else
		snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
	json_str(out, buf);
	fputc(',', out);
	if (f->file && f->line)
		snprintf(buf, sizeof(buf), "%s:%d", f->file, f->line);
	else
		snprintf(buf, sizeof(buf), "%s", f->module ? tool_base(f->module) : "");
	json_str(out, buf);
}

/* After the JSON report: the series, the sizes freed or not, every site's stack. */
static void report_html_data(struct report_state *st)
{
	const struct rp *rp = st->rp;
	struct rip_frame fr[STK_MAX_INLINE];
	FILE *out = st->out;
	const char *sep = "";
	uint64_t ob = 0, oc = 0;
	size_t shown = rp->nsites < RPT_FLAME_SITES ? rp->nsites : RPT_FLAME_SITES;

	fprintf(out, ",\"top\":%" PRIu64 ",\"series\":{\"bucket_ns\":%" PRIu64 ",\"points\":[",
		st->o.t.top, rp->series_ns);
	for (size_t i = 0; i < rp->nseries; i++) {
		const struct rp_point *p = &rp->series[i];

		fprintf(out,
			"%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 "]",
			i ? "," : "", p->events, p->min_bytes, p->max_bytes, p->last_bytes,
			p->allocs, p->alloc_bytes, p->frees);
	}
	fputs("]},\"sizes\":[", out);
	for (unsigned k = 0; k < RP_HIST; k++) {
		if (!rp->hist[k].count)
			continue;
		fprintf(out,
			"%s{\"min\":%" PRIu64 ",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64
			",\"live_count\":%" PRIu64 ",\"live_bytes\":%" PRIu64 "}",
			sep, k ? (uint64_t)1 << (k - 1) : 0, rp->hist[k].count, rp->hist[k].bytes,
			rp->hist_live[k].count, rp->hist_live[k].bytes);
		sep = ",";
	}
	fputs("],\"flame\":{\"sites\":[", out);
	for (size_t i = 0; i < shown; i++) {
		const struct rp_site *s = &rp->sites[st->by_bytes[i]];
		const uint64_t *pcs;
		uint32_t n;
		int u = report_user_frame(st, s, &pcs, &n);

		fprintf(out, "%s{\"b\":%" PRIu64 ",\"c\":%" PRIu64 ",\"l\":%" PRIu64 ",\"f\":[",
			i ? "," : "", s->bytes, s->count, s->live_bytes);
		sep = "";
		for (uint32_t j = u < 0 ? n : (uint32_t)u; u >= 0 && j < n &&
							   j < (uint32_t)u + RPT_FLAME_DEPTH;
		     j++) {
			int k = opts_resolve(&st->src, pcs[j], fr);

			for (int m = 0; m < k; m++) {
				fprintf(out, "%s[", sep);
				report_flame_frame(out, pcs[j], &fr[m]);
				fputc(']', out);
				sep = ",";
			}
		}
		fputs("]}", out);
	}
	for (size_t i = shown; i < rp->nsites; i++) {
		ob += rp->sites[st->by_bytes[i]].bytes;
		oc++;
	}
	fprintf(out, "],\"other\":{\"b\":%" PRIu64 ",\"sites\":%" PRIu64 "}}", ob, oc);
}

/* The page: the JSON report and report_html_data in memory, then the page around them. */
static int report_print_html(struct report_state *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *ms = open_memstream(&buf, &len), *f;
	int ret = -1;

	if (!ms) {
		tool_err("out of memory");
		return -1;
	}
	st->out = ms;
	fputs("{\"report\":", ms);
	report_print_json(st);
	report_html_data(st);
	fputs("}\n", ms);
	st->out = stdout;
	if (fclose(ms)) {
		tool_err("out of memory");
		free(buf);
		return -1;
	}
	/* "-": standard output, as rip export -o - and rip calltree -o - (it made a file "-") */
	f = strcmp(st->o.html, "-") ? tool_create(st->o.html, true) : stdout;
	if (!f) {
		tool_err("cannot create %s: %s", st->o.html, tool_create_why(errno));
		free(buf);
		return -1;
	}
	ret = rh_page(f, buf, len);
	if ((f == stdout ? fflush(f) || ferror(f) : fclose(f)) || ret) {
		tool_err("write error on %s: %s", f == stdout ? "standard output" : st->o.html,
			 strerror(errno));
		ret = -1;
	}
	free(buf);
	return ret;
}

/* ---- the command ---------------------------------------------------------------------- */

static int report_parse(int argc, char **argv, struct report_opts *o)
{
	static const struct option longopts[] = {
		OPTS_LONG,
		{ "html", required_argument, NULL, 'H' },
		{ "functions", no_argument, NULL, 'F' },
		{ "threads", no_argument, NULL, 'T' },
		{ "depth", required_argument, NULL, 'd' },
		{ "min-time", required_argument, NULL, 't' },
		{ "match", required_argument, NULL, 'm' },
		{ "sort", required_argument, NULL, 's' },
		{ 0 },
	};
	uint64_t depth;
	int c, ret;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, OPTS_SHORT "t:s:", longopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			if (!*optarg)
				return tool_usage_error(&cmd_report_def, "--html wants a file name");
			o->html = optarg;
			break;
		case 'F':
			o->functions = true;
			break;
		case 'T':
			o->fn.threads = o->fn_only = true;
			break;
		case 'd':
			if (tool_parse_size(optarg, &depth) || !depth || depth > UINT32_MAX)
				return tool_usage_error(&cmd_report_def,
							"--depth wants a number > 0, not '%s'", optarg);
			o->fn.depth = (uint32_t)depth;
			o->fn_only = true;
			break;
		case 't':
			/*
			 * A unit, as the page says: a bare number would be seconds
			 * here and nanoseconds in uftrace's -t (0 is 0 either way).
			 */
			if (rr_parse_duration(optarg, &o->fn.min_ns) || o->fn.min_ns < 0 ||
			    (o->fn.min_ns && optarg[strspn(optarg, "0123456789.")] == 0))
				return tool_usage_error(
					&cmd_report_def,
					"--min-time wants a number and a unit, like "
					"10us or 2ms, not '%s'",
					optarg);
			o->fn_only = true;
			break;
		case 'm':
			if (o->fn.nglobs == RPF_MAX_GLOBS)
				return tool_usage_error(&cmd_report_def, "at most %d --match",
							RPF_MAX_GLOBS);
			o->fn.globs[o->fn.nglobs++] = optarg;
			o->fn_only = true;
			break;
		case 's':
			if (rpf_sort_key(optarg, &o->fn.sort))
				return tool_usage_error(&cmd_report_def,
							"--sort wants total, self, calls, max or "
							"name, not '%s'",
							optarg);
			o->fn_only = true;
			break;
		default:
			ret = opts_common(&cmd_report_def, c, argv, longopts, &o->t);
			if (ret)
				return ret;
		}
	}
	ret = opts_operand(&cmd_report_def, argc, argv, &o->t, NULL);
	if (ret)
		return ret;
	if (o->t.json && o->html)
		return tool_usage_error(&cmd_report_def, "--json or --html, not both");
	if (o->fn_only && !o->functions)
		return tool_usage_error(&cmd_report_def,
					"--threads, --depth, --min-time, --match and --sort go with "
					"--functions");
	if (o->functions && o->html)
		return tool_usage_error(&cmd_report_def, "--functions has no --html page");
	if (o->t.nthrough && (o->functions || o->html))
		return tool_usage_error(&cmd_report_def,
					"--through is for the text and JSON reports of memory, "
					"not %s",
					o->functions ? "--functions" : "--html");
	o->fn.target = o->t.target;
	o->fn.sysroot = o->t.sysroot;
	o->fn.debug_dir = o->t.debug_dir;
	o->fn.json = o->t.json;
	o->fn.top = o->t.top; /* 0: every function */
	if (!o->t.top)
		o->t.top = 10;
	return 0;
}

static int cmd_report(int argc, char **argv)
{
	static char obuf[1 << 16];
	char err[RR_ERR_MAX + PATH_MAX];
	struct report_state st;
	unsigned problems = 0;
	int ret, status = EXIT_FAIL;

	memset(&st, 0, sizeof(st));
	ret = report_parse(argc, argv, &st.o);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (st.o.functions)
		return rpf_run(&st.o.fn);
	st.out = stdout;
	if (opts_open(&st.src, &st.o.t, st.o.t.target, "rip report"))
		return EXIT_FAIL;
	st.rp = rp_new();
	if (!st.rp) {
		tool_err("out of memory");
		goto out;
	}
	if (st.o.t.nthrough) {
		/* the filter names the frames of each new stack during the pass */
		if (opts_through_new(st.o.t.through, st.o.t.nthrough, &st.src.thr) ||
		    opts_symbols_now(&st.src))
			goto out;
		rp_set_through(st.rp, st.src.thr, st.src.sym);
	}
	ret = rp_run(st.rp, st.src.s, err, sizeof(err));
	opts_ran(&st.src);
	if (ret) {
		tool_err("%s", err);
		goto out;
	}
	if (opts_through_check(st.src.thr, st.src.sym, rp_bts(st.rp), evs_source(st.src.s)))
		goto out;
	if (report_sort(&st)) {
		tool_err("out of memory");
		goto out;
	}
	if (st.rp->nsites && opts_symbols(&st.src))
		goto out;
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	if (st.o.html) {
		if (report_print_html(&st))
			goto out;
	} else if (st.o.t.json) {
		report_print_json(&st);
	} else {
		report_print_text(&st);
	}
	if (tool_flush(stdout))
		goto out;
	if (st.rp->bt_bad)
		tool_err("warning: %" PRIu64 " bad backtrace definitions (id 0, or an id defined "
			 "twice with different frames) were ignored",
			 st.rp->bt_bad);
	if (!st.o.t.json && st.src.sym)
		rip_sym_problems(st.src.sym, tool_sym_problem, &problems);
	status = EXIT_OK;
	tool_exit_unfreed(status);
out:
	free(st.by_bytes);
	free(st.by_count);
	free(st.by_peak);
	rp_free(st.rp);
	opts_close(&st.src);
	return status;
}
