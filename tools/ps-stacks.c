/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/ps-stacks.c - rip ps --stacks (ps-stacks.h): each group of
 * threads or coroutines with the same call path, its members summed up by
 * name ("worker-0..999"), what they wait in, and the path from the
 * outermost function to the innermost, each function with the file and
 * line where it starts.  The stacks are the ones the function-tracing
 * hooks keep in the ring file (lib/func.c): no unwinding, no stopping the
 * program, and the same after it died.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/fnstacks.h"
#include "analysis/waits.h"
#include "tools/format.h"
#include "tools/ps-stacks.h"
#include "tools/tool.h"

static const char *pst_kind(uint32_t kind, size_t n)
{
	if (kind == RIP_KIND_CORO)
		return n == 1 ? "coroutine" : "coroutines";
	return n == 1 ? "thread" : "threads";
}

/* A thread in a wrapped call (s->waiting) is blocked there, as rip ps's thread lines say. */
static const char *pst_state(const struct fsg_member *s)
{
	if (s->waiting)
		return "blocked";
	switch (s->state) {
	case RIP_SLOT_RUNNING:
		return "running";
	case RIP_SLOT_WAITING:
		return "parked";
	case RIP_SLOT_EXITED:
		return s->kind == RIP_KIND_CORO ? "destroyed" : "exited";
	default:
		return "free";
	}
}

/*
 * The members' names in a few words: "worker-0..999" for a run of numbered
 * names, the first ones and "+N more" else.
 */
static void pst_names(const struct fsg_member *m, size_t n, char *buf, size_t len)
{
	char prefix[RIP_NAME_MAX] = "";
	long long lo = 0, hi = 0;
	size_t plen = 0, off = 0, shown = 0;
	bool run = n > 1;

	/* One numbered run: the same prefix, a number after it. */
	for (size_t i = 0; i < n && run; i++) {
		const char *name = m[i].name;
		size_t l = strlen(name), p = l;
		long long v;

		while (p > 0 && name[p - 1] >= '0' && name[p - 1] <= '9' && l - p < 15)
			p--;
		if (p == l) {
			run = false;
			break;
		}
		v = strtoll(name + p, NULL, 10);
		if (!i) {
			memcpy(prefix, name, p);
			prefix[p] = 0;
			plen = p;
			lo = hi = v;
		} else if (p != plen || strncmp(prefix, name, p)) {
			run = false;
		} else {
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
	}
	if (run && lo == hi) {
		/* one name, many threads: "pool7 (x3)", not "some of pool7..7" */
		snprintf(buf, len, "%s%lld (x%zu)", prefix, lo, n);
		return;
	}
	if (run) {
		snprintf(buf, len, "%s%s%lld..%lld", (long long)n < hi - lo + 1 ? "some of " : "",
			 prefix, lo, hi);
		return;
	}
	buf[0] = 0;
	for (size_t i = 0; i < n && shown < 4 && off < len; i++, shown++) {
		const struct fsg_member *s = &m[i];
		int k;

		if (n == 1)
			k = snprintf(buf + off, len - off, "%s (tid %d)",
				     s->name[0] ? s->name : "-", s->tid);
		else
			k = snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
				     s->name[0] ? s->name : "-");
		if (k < 0)
			return;
		off += (size_t)k;
	}
	if (n > shown && off < len)
		snprintf(buf + off, len - off, ", +%zu more", n - shown);
}

/* What member s waits in, " in read (fd 3)", or "". */
static void pst_wait(const struct fsg_member *s, char *buf, size_t len)
{
	const char *k = s->waiting ? wa_kind_name(s->wait_kind) : NULL;

	buf[0] = 0;
	if (!k)
		return;
	if (wa_arg_kind(s->wait_kind) == WA_ARG_FD)
		snprintf(buf, len, ", in %s (fd %lld)", k, (long long)s->wait_arg);
	else
		snprintf(buf, len, ", in %s", k);
}

static void pst_frames(const struct pst_ctx *c, const struct rfn_stack *st, FILE *out)
{
	for (uint32_t k = 0; k < st->n; k++) {
		struct pw_site site = { 0 };
		char where[256], addr[32] = "";

		if (!c->site(c->arg, st->fn[k], &site) || !site.func) {
			snprintf(where, sizeof(where), "?");
			site.func = NULL;
		} else if (site.file && site.line) {
			snprintf(where, sizeof(where), "%s:%d", tool_base(site.file), site.line);
		} else {
			snprintf(where, sizeof(where), "%s", site.file ? tool_base(site.file) : "");
		}
		if (c->verbose)
			snprintf(addr, sizeof(addr), " [0x%llx]", (unsigned long long)st->fn[k]);
		if (site.func)
			fprintf(out, "      %-30s %s%s\n", site.func, where, addr);
		else
			fprintf(out, "      0x%-28llx %s%s\n", (unsigned long long)st->fn[k], where,
				addr);
	}
	if (st->depth > st->n)
		fprintf(out, "      ... %u deeper (only the outermost %u frames are kept)\n",
			st->depth - st->n, st->n);
}

static void pst_json_frames(const struct pst_ctx *c, const struct rfn_stack *st, FILE *out)
{
	fprintf(out, "\"depth\":%u,\"frames\":[", st->depth);
	for (uint32_t k = 0; k < st->n; k++) {
		struct pw_site site = { 0 };

		if (!c->site(c->arg, st->fn[k], &site))
			memset(&site, 0, sizeof(site));
		fprintf(out, "%s{\"function\":", k ? "," : "");
		json_str(out, site.func);
		fprintf(out, ",\"file\":");
		json_str(out, site.file);
		fprintf(out, ",\"line\":%d,\"address\":\"0x%llx\"}", site.line,
			(unsigned long long)st->fn[k]);
	}
	fputc(']', out);
}

static void pst_json_member(const struct fsg_member *s, FILE *out)
{
	const char *k = s->waiting ? wa_kind_name(s->wait_kind) : NULL;

	fprintf(out, "{\"slot\":%u,\"tid\":%d,\"kind\":\"%s\",\"state\":\"%s\",\"name\":", s->index,
		s->tid, s->kind == RIP_KIND_CORO ? "coroutine" : "thread", pst_state(s));
	json_str(out, s->name);
	if (k) {
		fprintf(out, ",\"wait\":");
		json_str(out, k);
	}
	fputc('}', out);
}

void pst_grouped(struct pst_ctx *c, const struct fsg_groups *g, FILE *out)
{
	char names[200], wait[64];

	if (c->json) {
		fprintf(out, ",\"stacks\":[");
		for (size_t i = 0; i < g->n; i++) {
			const struct fsg_group *gr = &g->v[i];

			fprintf(out, "%s{\"count\":%zu,\"kind\":\"%s\",", i ? "," : "", gr->n,
				gr->kind == RIP_KIND_CORO ? "coroutine" : "thread");
			pst_json_frames(c, &gr->st, out);
			fprintf(out, ",\"members\":[");
			for (size_t m = 0; m < gr->n; m++) {
				if (m)
					fputc(',', out);
				pst_json_member(&gr->members[m], out);
			}
			fprintf(out, "]}");
		}
		fprintf(out, "],\"without_stack\":%zu,\"torn\":%zu", g->nostack, g->torn);
		return;
	}
	fprintf(out, "\nCALL STACKS (outermost function first)\n");
	for (size_t i = 0; i < g->n; i++) {
		const struct fsg_group *gr = &g->v[i];
		const struct fsg_member *first = &gr->members[0];

		pst_names(gr->members, gr->n, names, sizeof(names));
		pst_wait(first, wait, sizeof(wait));
		fprintf(out, "\n%zu %s %s%s%s, %u frame%s%s:\n", gr->n, pst_kind(gr->kind, gr->n),
			names, gr->state ? ", " : "", gr->state ? pst_state(first) : "",
			gr->st.depth, gr->st.depth == 1 ? "" : "s", wait);
		pst_frames(c, &gr->st, out);
		if (gr->torn)
			fprintf(out,
				"      (%zu of them moved while read: their path is a best guess)\n",
				gr->torn);
	}
	if (!g->n)
		fprintf(out,
			"\nno thread or coroutine is inside a function built for tracing "
			"(-finstrument-functions, or -fpatchable-function-entry and rip enable)%s\n",
			c->f->hdr.fn_off ? "" : ": this ring file has no stacks (RIP_FUNCTIONS=0)");
	else if (g->nostack)
		fprintf(out, "\n%zu other threads and coroutines are in no traced function\n",
			g->nostack);
}

void pst_begin(struct pst_ctx *c, FILE *out)
{
	c->first = true;
	if (c->json)
		fprintf(out, ",\"stacks\":[");
	else
		fprintf(out, "\nCALL STACKS (outermost function first)\n");
}

void pst_thread(struct pst_ctx *c, const struct rr_slot *sl, const struct rfn_stack *st,
		FILE *out)
{
	struct fsg_member m;
	const struct fsg_member *s = &m;
	char wait[64];

	if (!c->all && sl->state == RIP_SLOT_EXITED)
		return;
	fsg_member_of(sl, &m);
	if (c->json) {
		fprintf(out, "%s{\"member\":", c->first ? "" : ",");
		pst_json_member(s, out);
		fputc(',', out);
		pst_json_frames(c, st, out);
		fprintf(out, ",\"torn\":%s,\"resync\":%u}", st->torn ? "true" : "false",
			st->resync);
		c->first = false;
		return;
	}
	pst_wait(s, wait, sizeof(wait));
	fprintf(out, "\n%s %s (tid %d), %s, %u frame%s%s%s", pst_kind(s->kind, 1),
		s->name[0] ? s->name : "-", s->tid, pst_state(s), st->depth,
		st->depth == 1 ? "" : "s", wait, st->torn ? " (moved while read)" : "");
	if (c->verbose && st->resync)
		fprintf(out, ", %u frames dropped by longjmp or exceptions", st->resync);
	fprintf(out, st->depth ? ":\n" : "\n");
	pst_frames(c, st, out);
	c->first = false;
}

void pst_end(struct pst_ctx *c, FILE *out)
{
	if (c->json)
		fputc(']', out);
}
