/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/export-funcs.c - function calls as Chrome spans and folded call
 * paths (export-funcs.h).  A span is one "X" (complete) event, written
 * when its call ends: the calls of one track nest, so Perfetto and
 * chrome://tracing draw them as a flame chart of the thread (or
 * coroutine) over time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tools/export-funcs.h"
#include "tools/format.h"
#include "tools/tool.h"

struct xf_chrome {
	FILE *out;
	int pid;
	const int64_t *first;
	bool *comma;
	struct tfn *names;
	struct fa *fa;
	uint32_t *coros; /* coroutines whose track is named, sorted */
	size_t ncoros, capcoros;
	bool nomem;
};

static void xf_sep(struct xf_chrome *x)
{
	fputs(*x->comma ? ",\n" : "\n", x->out);
	*x->comma = true;
}

static void xf_ts(FILE *out, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	fprintf(out, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", a / 1000, a % 1000);
}

/* Name the track of coroutine coro, once. */
static void xf_coro_track(struct xf_chrome *x, const struct fa_ctx *c)
{
	size_t lo = 0, hi = x->ncoros;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (x->coros[mid] == c->coro)
			return;
		if (x->coros[mid] < c->coro)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (x->ncoros == x->capcoros) {
		size_t cap = x->capcoros ? x->capcoros * 2 : 16;
		uint32_t *v = realloc(x->coros, cap * sizeof(*v));

		if (!v) {
			x->nomem = true;
			return;
		}
		x->coros = v;
		x->capcoros = cap;
	}
	memmove(x->coros + lo + 1, x->coros + lo, (x->ncoros - lo) * sizeof(*x->coros));
	x->coros[lo] = c->coro;
	x->ncoros++;
	xf_sep(x);
	fprintf(x->out,
		"{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%" PRId32
		",\"args\":{\"name\":",
		x->pid, XF_CORO_TID(c->coro));
	if (c->name[0]) {
		char buf[96];

		snprintf(buf, sizeof(buf), "coroutine %s", c->name);
		json_str(x->out, buf);
	} else {
		fprintf(x->out, "\"coroutine %" PRIu32 "\"", c->coro);
	}
	fputs("}}", x->out);
}

static void xf_span(void *arg, const struct fa_span *s)
{
	struct xf_chrome *x = arg;
	const struct tfn_name *nm = tfn_name(x->names, s->id, s->addr);

	if (s->ctx->coro)
		xf_coro_track(x, s->ctx);
	xf_sep(x);
	fputs("{\"name\":", x->out);
	json_str(x->out, nm->func);
	fputs(",\"cat\":\"function\",\"ph\":\"X\",\"ts\":", x->out);
	xf_ts(x->out, s->start_ns - *x->first);
	fputs(",\"dur\":", x->out);
	xf_ts(x->out, s->end_ns - s->start_ns);
	fprintf(x->out, ",\"pid\":%d,\"tid\":%" PRId32 ",\"args\":{", x->pid,
		s->ctx->coro ? XF_CORO_TID(s->ctx->coro) : s->ctx->tid);
	if (nm->file) {
		fputs("\"file\":", x->out);
		json_str(x->out, tool_base(nm->file));
		fprintf(x->out, ",\"line\":%d,", nm->line);
	}
	fprintf(x->out, "\"address\":\"0x%" PRIx64 "\",\"depth\":%" PRIu32 "%s%s}}", s->addr,
		s->depth, s->before ? ",\"before\":true" : "",
		s->running ? ",\"running\":true" : "");
}

int xf_chrome_new(struct evs *s, FILE *out, int pid, const int64_t *first, bool *comma,
		  const char *sysroot, const char *debug_dir, struct xf_chrome **xp)
{
	struct xf_chrome *x;
	struct fa_opts fo = { 0 };
	struct fa *probe;

	*xp = NULL;
	if (fa_new(evs_types(s), NULL, &probe)) {
		tool_err("out of memory");
		return -1;
	}
	if (!fa_typed(probe)) {
		fa_free(probe);
		return 0; /* no function records: nothing to draw */
	}
	fa_free(probe);
	x = calloc(1, sizeof(*x));
	if (!x) {
		tool_err("out of memory");
		return -1;
	}
	x->out = out;
	x->pid = pid;
	x->first = first;
	x->comma = comma;
	fo.span = xf_span;
	fo.span_arg = x;
	if (tfn_open(s, sysroot, debug_dir, &x->names) || tfn_pass(s, &fo, &x->fa)) {
		xf_chrome_free(x);
		return -1;
	}
	*xp = x;
	return 0;
}

int xf_chrome_event(struct xf_chrome *x, const struct evs_event *e)
{
	int ret = fa_event(x->fa, e);

	return x->nomem ? -ENOMEM : ret;
}

int xf_chrome_end(struct xf_chrome *x, int64_t last_ns)
{
	int ret = fa_end(x->fa, last_ns);

	return ret ? ret : x->nomem ? -ENOMEM : 0;
}

void xf_chrome_free(struct xf_chrome *x)
{
	if (!x)
		return;
	fa_free(x->fa);
	tfn_free(x->names);
	free(x->coros);
	free(x);
}

char *xf_path(struct tfn *t, const struct fa_node *nodes, size_t n, uint32_t i)
{
	size_t len = 0, depth = 0;
	char *buf, *p;

	for (uint32_t k = i; k && k < n && depth < n; k = nodes[k].parent, depth++)
		len += strlen(tfn_name(t, nodes[k].id, nodes[k].addr)->func) + 1;
	buf = malloc(len ? len : 1);
	if (!buf)
		return NULL;
	p = buf + (len ? len - 1 : 0);
	*p = 0;
	/* Inner to outer, written from the end. */
	depth = 0;
	for (uint32_t k = i; k && k < n && depth < n; k = nodes[k].parent, depth++) {
		const char *f = tfn_name(t, nodes[k].id, nodes[k].addr)->func;
		size_t l = strlen(f);

		if (p != buf + len - 1)
			*--p = ';';
		p -= l;
		memcpy(p, f, l);
	}
	return buf;
}
