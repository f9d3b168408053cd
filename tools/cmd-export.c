/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/cmd-export.c - `rip export`: a trace or a ring file in another
 * format.
 *
 *   chrome  the Chrome trace event format (JSON) that the Perfetto UI and
 *           chrome://tracing open: every event an instant event on its
 *           thread with its fields as args, a thread_name metadata event
 *           per thread, and each run of a coroutine a B/E duration slice on
 *           the thread that ran it, named after the coroutine; resource
 *           events (rip/resource.h) also get the name of their kind (and a
 *           free the size it released), and the process gets two counter
 *           tracks: heap memory in use and open descriptors
 *           function calls (rip:fn_entry, rip:fn_exit) are complete "X"
 *           spans, on the thread's track or a coroutine's own
 *           (tools/export-funcs.c)
 *   folded  one line per distinct stack, "outermost;...;leaf VALUE", for
 *           flamegraph.pl and speedscope: bytes allocated (or allocations,
 *           or bytes never freed) by the stacks of rip:bt, or CPU samples
 *           by the stacks of rip:sample (analysis/cpu.h), or the self time
 *           (or calls) of the call paths of function records, symbolized
 *   pprof   a gzipped profile.proto for go tool pprof, Pyroscope, Parca:
 *           a heap profile of the memory events (allocated and in use by
 *           stack, or only what leaked), a CPU profile of the samples,
 *           where the threads of a ring file were, or events by stack and
 *           type (analysis/pprof.c)
 *   text    exactly what `rip dump` prints
 *
 * Both chrome and folded follow memory and descriptors through
 * analysis/follow.c; folded has it keep per-backtrace totals and the rip:bt
 * definitions, and symbolizes only at the end, once per distinct backtrace
 * (a stack may be defined after its first use, in another thread's stream).
 *
 * OUT is created exclusively (never overwritten without --force) and
 * removed again when the export fails half-way (a regular file whose name
 * still leads to it: never the device --force wrote to).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <internal/grow.h>

#include "analysis/cpu.h"
#include "analysis/follow.h"
#include "analysis/pprof.h"
#include "analysis/stacks.h"
#include "read/evsource.h"
#include "read/sym.h"
#include "read/trace.h"
#include "record/tracew.h"
#include "tools/export-funcs.h"
#include "tools/funcs.h"
#include "tools/opts.h"
#include "tools/progress.h"
#include "analysis/dump.h"
#include "tools/tool.h"

static int cmd_export(int argc, char **argv);

static const struct rip_cmd cmd_export_def = {
	.name = "export",
	.run = cmd_export,
	.summary = "convert a trace or a ring file to another format",
	.usage = "usage: rip export --format=FORMAT [options] TRACE-OR-TARGET -o OUT\n"
		 "\n"
		 "Write the events of a recorded trace directory, a pid or a ring file in\n"
		 "another format.  Formats:\n"
		 "  chrome  Chrome trace JSON for the Perfetto UI (ui.perfetto.dev) and\n"
		 "          chrome://tracing: events as instants on their thread, coroutine\n"
		 "          runs as slices named after the coroutine, resource events with\n"
		 "          their kind, counter tracks of memory in use and open descriptors,\n"
		 "          function calls (rip run --functions) as spans\n"
		 "  folded  folded stacks for flamegraph.pl and speedscope: one line\n"
		 "          'outermost;...;leaf VALUE' per distinct allocation stack, or\n"
		 "          per CPU sample stack of a trace of rip run --sample, or per\n"
		 "          call path of a trace of rip run --functions\n"
		 "  pprof   a gzipped pprof profile (go tool pprof, Grafana Pyroscope, Parca):\n"
		 "          a heap profile when the trace has memory events (rip run --mem):\n"
		 "          alloc_objects, alloc_space, inuse_objects, inuse_space by stack;\n"
		 "          else a CPU profile when it has CPU samples (rip run --sample):\n"
		 "          samples and cpu (nanoseconds) by stack;\n"
		 "          of a ring file without them, where its threads were (one sample\n"
		 "          per thread, its recent path as the stack); else events counted\n"
		 "          by stack and type\n"
		 "  text    what 'rip dump' prints\n"
		 "  ctf     a recorded trace (packed, as rip run and rip record write them)\n"
		 "          as a CTF 1.8 directory that babeltrace2 reads: OUT is a new\n"
		 "          directory; every packet is checked on the way, the trace's\n"
		 "          index (and losses) and its copy of the ring file come along,\n"
		 "          so every rip command reads OUT as well\n"
		 "\n"
		 "  -f, --format=FORMAT      chrome, folded, pprof, text or ctf (required)\n"
		 "  -o, --output=OUT         the file (ctf: the directory) to write; - for\n"
		 "                           standard output\n"
		 "      --value=WHAT         folded: bytes allocated (the default when there\n"
		 "                           are allocations), count of allocations,\n"
		 "                           leaked: bytes never freed, or samples: CPU\n"
		 "                           samples (the default for a trace of them),\n"
		 "                           time: the self time of each call path in ns\n"
		 "                           (the default for function records), calls:\n"
		 "                           the calls of each path\n"
		 "      --leaks              pprof: only what was never freed (inuse_objects\n"
		 "                           and inuse_space of the stacks that leaked)\n"
		 "      --profile=KIND       pprof: heap, cpu, threads or events instead of\n"
		 "                           the one the source suggests\n"
		 "      --through=FUNC       pprof (heap) and folded (bytes, count, leaked):\n"
		 "                           only the stacks that pass through FUNC: a\n"
		 "                           function, a glob (parse_*) or FILE:LINE;\n"
		 "                           repeatable (any of them)\n"
		 "      --kind=NAME          folded: the resources of a tracing module's kind\n"
		 "                           (rip run --module: gobject, memtransfer...)\n"
		 "                           instead of heap memory: bytes made or moved,\n"
		 "                           count, or leaked: bytes never released\n"
		 "      --counter-interval=US  chrome: at most one counter sample per US\n"
		 "                           microseconds (default 0: at every change)\n"
		 "      --sysroot=DIR        find the traced host's binaries under DIR\n"
		 "      --debug-dir=DIR      look for separate debug files in DIR first\n"
		 "      --force              overwrite OUT if it exists\n"
		 "  -h, --help               this text\n"
		 "\n"
		 "Exit status: 0 success, 1 failure (corrupt trace, OUT exists), 2 usage.\n",
};

RIP_COMMAND(cmd_export_def);

static const char *const formats[] = { "chrome", "folded", "pprof", "text", "ctf" };

/* ---- chrome ------------------------------------------------------------------------- */

/* Per stream: the thread it was last written by and the coroutine slice open on it. */
struct ch_stream {
	int32_t tid;
	uint32_t open;	  /* coroutine (slot index + 1) of the open slice, 0: none */
	int64_t last_ns;
	bool named;
};

/* A counter track: sampled when it changed, at most once per interval. */
struct ch_counter {
	const char *name, *arg;
	uint64_t shown;	  /* the value last written */
	int64_t last_ns;  /* when */
	bool any;
};

struct ch_state {
	FILE *out;
	struct evs *s;
	struct xr *x;
	int64_t interval; /* ns between counter samples at least */
	struct ch_counter mem, fds;
	int pid;
	int64_t first;
	bool any, comma;
	struct ch_stream *st;
	int32_t *named; /* tids whose thread_name is out, sorted */
	size_t nnamed, capnamed;
};

/* Microseconds with the nanoseconds as a fraction: 12.345 */
static void ch_ts(FILE *out, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	fprintf(out, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", a / 1000, a % 1000);
}

static void ch_sep(struct ch_state *c)
{
	fputs(c->comma ? ",\n" : "\n", c->out);
	c->comma = true;
}

static int ch_thread_name(struct ch_state *c, int32_t tid, const char *name)
{
	size_t lo = 0, hi = c->nnamed;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->named[mid] == tid)
			return 0;
		if (c->named[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (RIP_GROW(c->named, c->capnamed, c->nnamed + 1, 64))
		return -ENOMEM;
	memmove(c->named + lo + 1, c->named + lo, (c->nnamed - lo) * sizeof(*c->named));
	c->named[lo] = tid;
	c->nnamed++;
	ch_sep(c);
	fprintf(c->out, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%" PRId32
		",\"args\":{\"name\":", c->pid, tid);
	if (name && name[0]) {
		json_str(c->out, name);
	} else {
		fprintf(c->out, "\"%" PRId32 "\"", tid);
	}
	fputs("}}", c->out);
	return 0;
}

static void ch_slice(struct ch_state *c, bool begin, int32_t tid, uint32_t coro, int64_t ns)
{
	ch_sep(c);
	fputs("{\"name\":", c->out);
	json_str(c->out, evs_coro_name(c->s, coro));
	fprintf(c->out, ",\"cat\":\"coroutine\",\"ph\":\"%s\",\"ts\":", begin ? "B" : "E");
	ch_ts(c->out, ns - c->first);
	fprintf(c->out, ",\"pid\":%d,\"tid\":%" PRId32 ",\"args\":{\"coro\":%" PRIu32 "}}", c->pid,
		tid, coro);
}

static void ch_args(struct ch_state *c, const struct evs_event *e, int role)
{
	const struct ev_type *t = e->type;

	fputs(",\"args\":{", c->out);
	for (uint32_t i = 0; i < t->nfields; i++) {
		const struct rip_evfield *f = &t->fields[i];
		uint64_t v = e->v[i];

		if (i)
			fputc(',', c->out);
		json_str(c->out, f->name);
		fputc(':', c->out);
		switch (f->type) {
		case RIP_FT_STRING:
			json_str(c->out, e->str ? e->str : "");
			break;
		case RIP_FT_HEX64:
			fprintf(c->out, "\"0x%" PRIx64 "\"", v);
			break;
		case RIP_FT_S8:
		case RIP_FT_S16:
		case RIP_FT_S32:
		case RIP_FT_S64:
			fprintf(c->out, "%" PRId64, (int64_t)v);
			break;
		default:
			fprintf(c->out, "%" PRIu64, v);
		}
	}
	if (e->is_switch) {
		for (int i = 0; i < 2; i++) {
			if (!e->v[i])
				continue;
			fputs(i ? ",\"from_name\":" : ",\"to_name\":", c->out);
			json_str(c->out, evs_coro_name(c->s, (uint32_t)e->v[i]));
		}
	}
	if (role_is_resource(role)) {
		const char *kind = xr_kind(c->x, e, role);

		if (kind) {
			fputs(",\"kind_name\":", c->out);
			json_str(c->out, kind);
		}
		if (c->x->freed)
			fprintf(c->out, ",\"freed\":%" PRIu64, c->x->freed);
	}
	fputc('}', c->out);
}

static void ch_counter(struct ch_state *c, struct ch_counter *k, uint64_t v, int64_t ns,
		       bool force)
{
	if (v == k->shown || (!force && k->any && ns - k->last_ns < c->interval))
		return;
	ch_sep(c);
	fprintf(c->out, "{\"name\":\"%s\",\"ph\":\"C\",\"ts\":", k->name);
	ch_ts(c->out, ns - c->first);
	fprintf(c->out, ",\"pid\":%d,\"args\":{\"%s\":%" PRIu64 "}}", c->pid, k->arg, v);
	k->shown = v;
	k->last_ns = ns;
	k->any = true;
}

static int ch_event(struct ch_state *c, const struct evs_event *e)
{
	struct ch_stream *st = &c->st[e->stream];
	const struct ev_types *types = evs_types(c->s);
	const char *cat;
	int ret, role;

	role = xr_event(c->x, e);
	if (role < 0)
		return role;
	if (!c->any) {
		c->first = e->ns;
		c->any = true;
	}
	/* The ring went to another thread: the old one's slice ends with its last event. */
	if (st->named && st->tid != e->tid && st->open) {
		ch_slice(c, false, st->tid, st->open, st->last_ns);
		st->open = 0;
	}
	st->tid = e->tid;
	st->named = true;
	ret = ch_thread_name(c, e->tid, e->thread);
	if (ret)
		return ret;
	/* What runs now differs from what we tracked (a packet began, switches were lost). */
	if (st->open != e->coro) {
		if (st->open)
			ch_slice(c, false, e->tid, st->open, e->ns);
		if (e->coro)
			ch_slice(c, true, e->tid, e->coro, e->ns);
		st->open = e->coro;
	}
	cat = types->cats[e->type->category];
	ch_sep(c);
	fputs("{\"name\":", c->out);
	json_str(c->out, e->type->name);
	fputs(",\"cat\":", c->out);
	if (cat[0])
		json_str(c->out, cat);
	else
		fprintf(c->out, "\"cat%" PRIu32 "\"", e->type->category);
	fputs(",\"ph\":\"i\",\"s\":\"t\",\"ts\":", c->out);
	ch_ts(c->out, e->ns - c->first);
	fprintf(c->out, ",\"pid\":%d,\"tid\":%" PRId32, c->pid, e->tid);
	ch_args(c, e, role);
	fputc('}', c->out);
	ch_counter(c, &c->mem, c->x->mem, e->ns, false);
	ch_counter(c, &c->fds, c->x->nfds, e->ns, false);
	if (e->is_switch) {
		uint32_t to = (uint32_t)e->v[0];

		if (st->open)
			ch_slice(c, false, e->tid, st->open, e->ns);
		if (to)
			ch_slice(c, true, e->tid, to, e->ns);
		st->open = to;
	}
	st->last_ns = e->ns;
	return 0;
}

static int export_chrome(struct evs *s, FILE *out, int64_t interval, const char *sysroot,
			 const char *debug_dir, char *err, size_t errlen)
{
	struct xf_chrome *fx = NULL;
	struct ch_state c = {
		.out = out,
		.s = s,
		.interval = interval,
		.mem = { .name = "heap in use", .arg = "bytes" },
		.fds = { .name = "open descriptors", .arg = "fds" },
		.pid = evs_file_hdr(s)->pid,
	};
	uint32_t n = evs_nstreams(s);
	struct evs_totals tot;
	struct evs_event e;
	int64_t last = 0;
	int ret;

	c.st = calloc(n ? n : 1, sizeof(*c.st));
	if (!c.st) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = xr_new(evs_types(s), false, &c.x, err, errlen);
	if (ret)
		goto out;
	if (xf_chrome_new(s, out, c.pid, &c.first, &c.comma, sysroot, debug_dir, &fx)) {
		snprintf(err, errlen, "cannot draw the function calls");
		ret = -EIO;
		goto out;
	}
	fputs("{\"traceEvents\":[", out);
	ch_sep(&c);
	fprintf(out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":",
		c.pid);
	json_str(out, evs_file_hdr(s)->comm);
	fputs("}}", out);
	while ((ret = evs_next(s, &e, err, errlen)) > 0) {
		if (!c.any) {
			c.first = e.ns;
			c.any = true;
		}
		/* Function records are spans (drawn when they end), not instants. */
		ret = fx ? xf_chrome_event(fx, &e) : 0;
		if (ret > 0)
			ret = ch_thread_name(&c, e.tid, e.thread);
		else if (!ret)
			ret = ch_event(&c, &e);
		if (ret) {
			snprintf(err, errlen, "out of memory");
			break;
		}
		last = e.ns;
	}
	if (ret < 0)
		goto out;
	if (fx && xf_chrome_end(fx, last)) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	/* The last values, whatever the interval held back. */
	ch_counter(&c, &c.mem, c.x->mem, last, true);
	ch_counter(&c, &c.fds, c.x->nfds, last, true);
	/* Slices still open end with the last event of their stream. */
	for (uint32_t i = 0; i < n; i++)
		if (c.st[i].open)
			ch_slice(&c, false, c.st[i].tid, c.st[i].open, c.st[i].last_ns);
	evs_totals(s, &tot);
	fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"command\":", out);
	json_str(out, evs_file_hdr(s)->comm);
	fprintf(out,
		",\"pid\":\"%d\",\"events\":\"%" PRIu64 "\",\"streams\":\"%" PRIu64
		"\",\"discarded\":\"%" PRIu64 "\",\"lost_packets\":\"%" PRIu64 "\"}}\n",
		c.pid, tot.events, tot.streams, tot.discarded + tot.samples_lost, tot.lost_packets);
	ret = 0;
out:
	xf_chrome_free(fx);
	xr_free(c.x);
	free(c.st);
	free(c.named);
	return ret;
}

/* ---- folded --------------------------------------------------------------------------- */

enum fo_value { FO_AUTO, FO_BYTES, FO_COUNT, FO_LEAKED, FO_SAMPLES, FO_TIME, FO_CALLS };

struct fo_line {
	char *stack;
	uint64_t value;
};

static int fo_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fo_line *)a)->stack, ((const struct fo_line *)b)->stack);
}

/* Append s to the growing buffer *buf (*len used, *cap allocated).  0 or -ENOMEM. */
static int fo_append(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s);

	if (RIP_GROW(*buf, *cap, *len + n + 1, 256))
		return -ENOMEM;

	memcpy(*buf + *len, s, n + 1);
	*len += n;
	return 0;
}

/* The folded stack of backtrace bt, outermost frame first; NULL when out of memory. */
static char *fo_stack(const struct xr *x, struct rip_sym *sym, uint32_t bt)
{
	char names[STK_MAX_INLINE][256], tmp[64], *buf = NULL;
	size_t len = 0, cap = 0;
	const uint64_t *pcs;
	uint32_t n = 0;
	int ret = 0;

	pcs = stk_bt(&x->bts, bt, &n);
	if (!bt || !pcs || !n) {
		if (!bt)
			snprintf(tmp, sizeof(tmp), "[no backtrace]");
		else if (!pcs)
			snprintf(tmp, sizeof(tmp), "[backtrace %" PRIu32 " not defined]", bt);
		else
			snprintf(tmp, sizeof(tmp), "[empty backtrace]");
		return strdup(tmp);
	}
	/* pcs[0] is the innermost frame (the caller of the hooked function). */
	for (uint32_t i = n; i-- > 0 && !ret;) {
		int k = stk_frame_names(sym, pcs[i], names, STK_MAX_INLINE);

		for (int j = 0; j < k && !ret; j++) {
			if (len)
				ret = fo_append(&buf, &len, &cap, ";");
			if (!ret)
				ret = fo_append(&buf, &len, &cap, names[j]);
		}
	}
	if (!ret && !len)
		ret = fo_append(&buf, &len, &cap, "[librip-preload]");
	if (ret) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The folded stack of a CPU sample, outermost frame first; NULL when out of memory. */
static char *fo_sample_stack(struct rip_sym *sym, const struct cpu_stack *st)
{
	char names[STK_MAX_INLINE][256], *buf = NULL;
	size_t len = 0, cap = 0;
	int ret = 0;

	/* pcs[0] is where the thread was interrupted, the rest return addresses */
	for (uint32_t i = st->n; i-- > 0 && !ret;) {
		int k = stk_sample_names(sym, st->pcs[i], i == 0, names, STK_MAX_INLINE);

		for (int j = 0; j < k && !ret; j++) {
			if (len)
				ret = fo_append(&buf, &len, &cap, ";");
			if (!ret)
				ret = fo_append(&buf, &len, &cap, names[j]);
		}
	}
	if (!ret && !len)
		ret = fo_append(&buf, &len, &cap, "[empty sample]");
	if (ret) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The call paths of the function records of fa with their self time (or calls) into lines. */
static int fo_funcs(struct evs *s, struct fa *fa, bool calls, const char *sysroot,
		    const char *debug_dir, struct fo_line **lines, size_t *nlines)
{
	const struct fa_node *nodes;
	struct tfn *names;
	size_t n;

	nodes = fa_nodes(fa, &n);
	*lines = calloc(n ? n : 1, sizeof(**lines));
	if (!*lines)
		return -ENOMEM;
	if (tfn_open(s, sysroot, debug_dir, &names))
		return -EIO;
	for (uint32_t i = 1; i < n; i++) {
		uint64_t v = calls ? nodes[i].calls : (uint64_t)nodes[i].self_ns;

		if (!v)
			continue;
		(*lines)[*nlines].stack = xf_path(names, nodes, n, i);
		if (!(*lines)[*nlines].stack) {
			tfn_free(names);
			return -ENOMEM;
		}
		(*lines)[(*nlines)++].value = v;
	}
	tfn_problems(names);
	tfn_free(names);
	return 0;
}

/* Does the trace declare a module kind of that name? */
static bool export_has_kind(const struct ev_types *types, const char *name)
{
	for (uint32_t k = 0; k < EV_MAX_TYPES; k++) {
		const char *n = role_kind_name(types, k);

		if (n && !strcmp(n, name))
			return true;
	}
	return false;
}

static int export_folded(struct evs *s, FILE *out, enum fo_value what, struct thr *thr,
			 const char *kind, const char *sysroot, const char *debug_dir, char *err,
			 size_t errlen)
{
	struct stk_map leaked = { 0 };
	struct fo_line *lines = NULL;
	struct cpu_prof *cpu = NULL;
	struct rip_sym *sym = NULL;
	struct fa *fa = NULL;
	int64_t last = 0;
	struct evs_totals tot;
	struct evs_event e;
	size_t nlines = 0;
	struct xr *x;
	int ret;

	ret = xr_new(evs_types(s), true, &x, err, errlen);
	if (ret)
		return ret;
	x->kind = kind;
	if (kind && !export_has_kind(evs_types(s), kind)) {
		snprintf(err, errlen, "--kind=%s: %s declares no such kind (rip run --module)",
			 kind, evs_source(s));
		ret = -EINVAL;
		goto out;
	}
	if (kind && what != FO_AUTO && what != FO_BYTES && what != FO_COUNT && what != FO_LEAKED) {
		snprintf(err, errlen, "--kind is for --value=bytes, count or leaked");
		ret = -EINVAL;
		goto out;
	}
	if (cpu_new(evs_types(s), &cpu)) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	if (tfn_pass(s, NULL, &fa)) {
		snprintf(err, errlen, "cannot read the function records");
		ret = -EIO;
		goto out;
	}
	while ((ret = evs_next(s, &e, err, errlen)) > 0) {
		ret = xr_event(x, &e);
		if (ret >= 0)
			ret = cpu_event(cpu, &e);
		if (ret >= 0)
			ret = fa_event(fa, &e);
		if (ret < 0) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		last = e.ns;
	}
	if (ret < 0)
		goto out;
	if (fa_end(fa, last)) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	/*
	 * Unasked, a trace of CPU samples and no allocations folds its samples,
	 * one of function records and neither its call paths by self time.
	 */
	if (what == FO_AUTO) {
		size_t nfn;

		fa_funcs(fa, &nfn);
		what = x->sites.n	 ? FO_BYTES
		       : cpu_samples(cpu) ? FO_SAMPLES
		       : nfn		 ? FO_TIME
					 : FO_BYTES;
	}
	if (thr && what != FO_BYTES && what != FO_COUNT && what != FO_LEAKED) {
		snprintf(err, errlen, "--through is for the values of memory (--value=bytes, count "
			 "or leaked) of a trace of rip run --mem");
		ret = -EINVAL;
		goto out;
	}
	ret = -ENOMEM;
	snprintf(err, errlen, "out of memory");
	/* What is live at the end, by backtrace. */
	if (what == FO_LEAKED && xr_leaked(x, &leaked))
		goto out;
	if (what == FO_SAMPLES) {
		char serr[RR_ERR_MAX];
		const struct cpu_stack *st;
		size_t n;

		st = cpu_stacks(cpu, &n);
		lines = calloc(n ? n : 1, sizeof(*lines));
		if (!st || !lines)
			goto out;
		if (n && stk_sym_open(s, sysroot, debug_dir, &sym, serr, sizeof(serr)))
			tool_err("warning: no symbols, frames are addresses: %s", serr);
		for (size_t i = 0; i < n; i++) {
			lines[nlines].stack = fo_sample_stack(sym, &st[i]);
			if (!lines[nlines].stack)
				goto out;
			lines[nlines++].value = st[i].count;
		}
		if (!n)
			tool_err("warning: no CPU samples in %s (record with rip run --sample)",
				 evs_source(s));
	} else if (what == FO_TIME || what == FO_CALLS) {
		ret = fo_funcs(s, fa, what == FO_CALLS, sysroot, debug_dir, &lines, &nlines);
		if (ret == -EIO)
			snprintf(err, errlen, "no symbols for the functions");
		if (ret)
			goto out;
		ret = -ENOMEM;
		if (!nlines)
			tool_err("warning: no function calls in %s (record with rip run "
				 "--functions a program built with -finstrument-functions)",
				 evs_source(s));
	} else {
		const struct stk_map *m = what == FO_LEAKED ? &leaked : &x->sites;
		char serr[RR_ERR_MAX];

		lines = calloc(m->n ? m->n : 1, sizeof(*lines));
		if (!lines)
			goto out;
		if ((m->n || thr) && stk_sym_open(s, sysroot, debug_dir, &sym, serr, sizeof(serr)))
			tool_err("warning: no symbols, frames are addresses: %s", serr);
		for (size_t i = 0; i < m->cap; i++) {
			const struct stk_ent *g = &m->v[i];
			uint64_t v = what == FO_COUNT ? g->b : g->a;

			if (!g->used || !v)
				continue;
			if (thr) {
				uint32_t nf = 0, bt = (uint32_t)g->key;
				const uint64_t *f = bt ? stk_bt(&x->bts, bt, &nf) : NULL;
				int in = thr_want(thr, sym, bt, f, nf);

				if (in < 0)
					goto out;
				if (!in)
					continue;
			}
			lines[nlines].stack = fo_stack(x, sym, (uint32_t)g->key);
			if (!lines[nlines].stack)
				goto out;
			lines[nlines++].value = v;
		}
	}
	if (thr) {
		thr_scan(thr, sym, &x->bts);
		if (opts_through_unmatched(thr, evs_source(s), !sym)) {
			*err = 0; /* said */
			ret = -ENOENT;
			goto out;
		}
	}
	/* Distinct backtraces may fold to one stack (two call sites in one function). */
	qsort(lines, nlines, sizeof(*lines), fo_cmp);
	for (size_t i = 0; i < nlines; i++) {
		uint64_t v = lines[i].value;

		while (i + 1 < nlines && !strcmp(lines[i].stack, lines[i + 1].stack))
			v += lines[++i].value;
		fprintf(out, "%s %" PRIu64 "\n", lines[i].stack, v);
	}
	evs_totals(s, &tot);
	if (what != FO_SAMPLES)
		tot.samples_lost = 0; /* not these values */
	if (tot.discarded || tot.samples_lost || tot.lost_packets || tot.torn)
		tool_err("warning: this trace is incomplete (%" PRIu64 " events discarded or "
			 "overwritten, %" PRIu64 " packets lost): the values are too",
			 tot.discarded + tot.samples_lost, tot.lost_packets + tot.torn);
	ret = 0;
out:
	for (size_t i = 0; i < nlines; i++)
		free(lines[i].stack);
	free(lines);
	if (sym)
		rip_sym_free(sym);
	stk_map_free(&leaked);
	cpu_free(cpu);
	fa_free(fa);
	xr_free(x);
	return ret;
}

/* ---- pprof ---------------------------------------------------------------------------- */

static int export_pprof(struct evs *s, FILE *out, const struct pp_opts *o, char *err,
			size_t errlen)
{
	struct pb_buf buf = { 0 };
	struct pp_result res;
	int ret;

	ret = pp_export(s, o, &buf, &res, err, errlen);
	if (ret)
		goto out;
	if (res.no_symbols)
		tool_err("warning: no symbols, frames are addresses: %s", res.sym_err);
	if (fwrite(buf.p, 1, buf.len, out) != buf.len) {
		snprintf(err, errlen, "write error: %s", strerror(errno));
		ret = -EIO;
		goto out;
	}
	if (res.kind != PP_CPU)
		res.tot.samples_lost = 0; /* not this profile's values */
	if (res.tot.discarded || res.tot.samples_lost || res.tot.lost_packets || res.tot.torn)
		tool_err("warning: this trace is incomplete (%" PRIu64 " events discarded or "
			 "overwritten, %" PRIu64 " packets lost): the values are too",
			 res.tot.discarded + res.tot.samples_lost,
			 res.tot.lost_packets + res.tot.torn);
	if (!res.samples)
		tool_err("warning: the %s profile has no samples", pp_kind_name(res.kind));
out:
	pb_buf_free(&buf);
	return ret;
}

/* ---- ctf ---------------------------------------------------------------------------- */

/* A recorded trace as a CTF directory (record/tracew.h's copy). */
static int export_ctf(const char *src, const char *dst, bool force)
{
	const struct trace_w_opts o = { .ctf = true };
	char err[RR_ERR_MAX + PATH_MAX];
	struct trace_r r;
	char why[RR_ERR_MAX];
	uint64_t gone_p, gone_e, skipped;
	uint32_t gone_c, damaged;
	int ret;

	if (force)
		return tool_usage_error(&cmd_export_def, "--force is not for --format=ctf: OUT is a "
					"new directory");
	if (!strcmp(dst, "-"))
		return tool_usage_error(&cmd_export_def, "--format=ctf writes a directory, not "
					"standard output");
	if (!trace_is_dir(src)) {
		tool_err("%s: not a recorded trace directory (--format=ctf converts a trace; "
			 "record a process with rip record)",
			 src);
		return EXIT_FAIL;
	}
	ret = trace_r_open(src, &r, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		return EXIT_FAIL;
	}
	if (r.info.idx.flags & TRACE_F_LIVE)
		tool_err("warning: %s was read while its recording went on (or its recorder was "
			 "killed, or stopped on an error such as a full disk): %s holds what was "
			 "written so far, up to its last whole record",
			 src, dst);
	/* a damaged block's packets left out: CTF readers see the gap in their sequence */
	r.skip_damaged = true;
	progress_begin("rip export");
	ret = trace_w_copy(&r, dst, &o, progress_step, NULL, err, sizeof(err));
	progress_end();
	trace_r_gone(&r, &gone_p, &gone_e, &gone_c);
	damaged = trace_r_damaged(&r, why, sizeof(why));
	skipped = r.skipped;
	trace_r_close(&r);
	if (ret) {
		tool_err("%s", err);
		return EXIT_FAIL;
	}
	if (damaged)
		tool_err("warning: %s: %u damaged block%s skipped, %" PRIu64 " packets lost (the "
			 "first: %s); %s is without them: a CTF reader counts them as discarded "
			 "packets, but for those before a stream's first",
			 src, damaged, damaged == 1 ? "" : "s", skipped, why, dst);
	/* CTF counts losses between packets: what went before the first kept, it cannot say */
	if (gone_c)
		tool_err("warning: %s: the %" PRIu64 " events of the %" PRIu32 " chunks gone "
			 "(removed by --max-size, handed on, missing) are counted in %s's index "
			 "only: a CTF reader does not see them (rip dump %s says them)",
			 src, gone_e, gone_c, dst, dst);
	return EXIT_OK;
}

/* ---- the command -------------------------------------------------------------------- */

static int export_usage_formats(const char *fmt)
{
	fprintf(stderr, "%s export: unknown format '%s'; formats:", rip_prog, fmt);
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		fprintf(stderr, " %s", formats[i]);
	fprintf(stderr, "\nTry '%s export --help'.\n", rip_prog);
	return EXIT_USAGE;
}

static int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'F' },
		{ "value", required_argument, NULL, 'V' },
		{ "counter-interval", required_argument, NULL, 'I' },
		{ "leaks", no_argument, NULL, 'L' },
		{ "profile", required_argument, NULL, 'P' },
		{ "sysroot", required_argument, NULL, 'S' },
		{ "debug-dir", required_argument, NULL, 'D' },
		{ "through", required_argument, NULL, 'T' },
		{ "kind", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static char obuf[1 << 16];
	const char *through[THR_MAX];
	size_t nthrough = 0;
	struct thr *thr = NULL;
	char err[RR_ERR_MAX + PATH_MAX];
	const char *fmt = NULL, *outpath = NULL, *value = NULL, *sysroot = NULL, *debug_dir = NULL;
	const char *kind = NULL;
	enum fo_value what = FO_AUTO;
	struct pp_opts po = { 0 };
	bool pprof_opt = false;
	int64_t interval = 0;
	bool force = false, created = false;
	struct stat ost; /* what out is, for the removal after a failure */
	struct evs *s = NULL;
	FILE *out;
	int c, ret, status = EXIT_FAIL;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fmt = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'F':
			force = true;
			break;
		case 'K':
			kind = optarg;
			break;
		case 'V':
			value = optarg;
			if (!strcmp(optarg, "bytes"))
				what = FO_BYTES;
			else if (!strcmp(optarg, "count"))
				what = FO_COUNT;
			else if (!strcmp(optarg, "leaked"))
				what = FO_LEAKED;
			else if (!strcmp(optarg, "samples"))
				what = FO_SAMPLES;
			else if (!strcmp(optarg, "time"))
				what = FO_TIME;
			else if (!strcmp(optarg, "calls"))
				what = FO_CALLS;
			else
				return tool_usage_error(&cmd_export_def,
							"--value=%s: bytes, count, leaked, samples, "
							"time or calls",
							optarg);
			break;
		case 'I': {
			char *end;
			unsigned long long us;

			errno = 0;
			us = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' ||
			    us > INT64_MAX / 1000)
				return tool_usage_error(&cmd_export_def,
							"--counter-interval=%s: a number of "
							"microseconds", optarg);
			interval = (int64_t)us * 1000;
			break;
		}
		case 'L':
			po.leaks = pprof_opt = true;
			break;
		case 'P':
			pprof_opt = true;
			if (pp_kind_parse(optarg, &po.kind))
				return tool_usage_error(&cmd_export_def,
							"--profile=%s: heap, cpu, threads or events",
							optarg);
			break;
		case 'S':
			sysroot = optarg;
			break;
		case 'D':
			debug_dir = optarg;
			break;
		case 'T':
			ret = opts_through_arg(&cmd_export_def, optarg, through, &nthrough);
			if (ret)
				return ret;
			break;
		case 'h':
			tool_help(&cmd_export_def);
			return EXIT_OK;
		default:
			return tool_bad_option(&cmd_export_def, argv, longopts);
		}
	}
	if (!fmt)
		return tool_usage_error(&cmd_export_def,
					"which format? --format=chrome, folded, pprof, text or ctf");
	if (strcmp(fmt, "chrome") && strcmp(fmt, "folded") && strcmp(fmt, "pprof") &&
	    strcmp(fmt, "text") && strcmp(fmt, "ctf"))
		return export_usage_formats(fmt);
	if (pprof_opt && strcmp(fmt, "pprof"))
		return tool_usage_error(&cmd_export_def, "--leaks and --profile are for "
					"--format=pprof");
	if (po.leaks && po.kind != PP_AUTO && po.kind != PP_HEAP)
		return tool_usage_error(&cmd_export_def, "--leaks is for heap profiles");
	if (kind && strcmp(fmt, "folded"))
		return tool_usage_error(&cmd_export_def, "--kind is for --format=folded");
	if (value && strcmp(fmt, "folded"))
		return tool_usage_error(&cmd_export_def, "--value is for --format=folded");
	if (nthrough && strcmp(fmt, "pprof") && strcmp(fmt, "folded"))
		return tool_usage_error(&cmd_export_def, "--through is for --format=pprof and "
					"--format=folded");
	if (optind + 1 != argc)
		return tool_usage_error(&cmd_export_def,
					optind == argc ? "what to export? give a trace directory, "
							 "a pid or a ring file"
						       : "one TRACE-OR-TARGET only");
	if (!outpath)
		return tool_usage_error(&cmd_export_def, "where to? give -o OUT (- for stdout)");
	if (!strcmp(fmt, "ctf"))
		return export_ctf(argv[optind], outpath, force);
	if (!strcmp(fmt, "pprof") && !strcmp(outpath, "-") && isatty(STDOUT_FILENO))
		return tool_usage_error(&cmd_export_def, "a pprof profile is binary: give -o "
					"FILE.pb.gz, or redirect standard output");
	po.sysroot = sysroot;
	po.debug_dir = debug_dir;
	if (opts_through_new(through, nthrough, &thr))
		return EXIT_FAIL;
	po.through = thr;

	tool_heap_big();
	ret = tool_evs_open(argv[optind], &s, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		return EXIT_FAIL;
	}
	if (strcmp(outpath, "-") || !isatty(STDOUT_FILENO))
		progress_bar(s, "rip export");
	if (!strcmp(outpath, "-")) {
		out = stdout;
	} else {
		out = tool_create(outpath, force);
		if (!out) {
			if (errno == EEXIST)
				tool_err("%s exists; use --force to overwrite it", outpath);
			else
				tool_err("%s: %s", outpath, tool_create_why(errno));
			goto out;
		}
		created = !fstat(fileno(out), &ost);
	}
	setvbuf(out, obuf, _IOFBF, sizeof(obuf));
	if (!strcmp(fmt, "text"))
		ret = dump_write(s, out, 0, err, sizeof(err));
	else if (!strcmp(fmt, "pprof"))
		ret = export_pprof(s, out, &po, err, sizeof(err));
	else if (!strcmp(fmt, "folded"))
		ret = export_folded(s, out, what, thr, kind, sysroot, debug_dir, err, sizeof(err));
	else
		ret = export_chrome(s, out, interval, sysroot, debug_dir, err, sizeof(err));
	if (!ret && (fflush(out) || ferror(out))) {
		snprintf(err, sizeof(err), "%s: write error: %s", outpath, strerror(errno));
		ret = -EIO;
	}
	if (created && fclose(out) && !ret) {
		snprintf(err, sizeof(err), "%s: %s", outpath, strerror(errno));
		ret = -EIO;
	}
	if (!ret && thr && !strcmp(fmt, "pprof") &&
	    opts_through_unmatched(thr, evs_source(s), false)) {
		*err = 0; /* said */
		ret = -ENOENT;
	}
	if (ret) {
		if (*err)
			tool_err("%s", err);
		goto out;
	}
	/* on standard error: the output may be standard output */
	opts_through_text(stderr, thr);
	status = EXIT_OK;
	tool_exit_unfreed(status);
out:
	/*
	 * The partial file, if the name still leads to it and it is a file:
	 * never a device --force wrote to (/dev/null), nor what the name was
	 * swapped for meanwhile.
	 */
	if (status != EXIT_OK && created)
		tool_unlink_same(outpath, &ost);
	thr_free(thr);
	tool_evs_close(s);
	return status;
}
