// SPDX-License-Identifier: Apache-2.0
/*
 * tools/cmd-pagemap.c - `rip pagemap`: the traced program's writable memory
 * as the preload library saw it at exit (or on request), mapping by
 * mapping: pages present, swapped, present and all zero, and how much of
 * it the allocations live at that moment cover (sp-rtrace's pagemap view).
 *
 * One pass over the trace: the mem:alloc / mem:free / mem:realloc events
 * keep a table of live blocks; the events of a snapshot (mem:mapping,
 * mem:pagemap, then mem:pagemap_end, see rip/resource.h) are gathered,
 * and when its end arrives, complete, it is measured against the live
 * table of that moment and only its per-mapping counts are kept.  The last
 * complete snapshot is reported (or the one --snapshot names).  Memory
 * grows with the live blocks and with one snapshot's pages (2 bits each),
 * never with the length of the trace; everything read is checked, and a
 * snapshot that contradicts itself makes the trace corrupt, not a crash.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rip/resource.h>

#include "read/evsource.h"
#include "analysis/stacks.h"
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

struct pm_opts {
	bool json;
	uint64_t snapshot; /* 0: the last complete one */
	uint64_t min_pages;
	const char *target;
};

/* ---- live blocks: addr -> size ------------------------------------------------------- */

struct pm_live {
	struct stk_map m; /* block address -> a: its size */
	uint64_t bytes;
};

static void pm_live_del(struct pm_live *t, uint64_t addr)
{
	struct stk_ent *e = stk_map_find(&t->m, addr);

	if (!e)
		return; /* not live: freed before the trace began, or lost */
	t->bytes -= e->a;
	stk_map_del(&t->m, e);
}

static int pm_live_put(struct pm_live *t, uint64_t addr, uint64_t size)
{
	bool fresh;
	struct stk_ent *e = stk_map_get(&t->m, addr, &fresh);

	if (!e)
		return -ENOMEM;
	if (!fresh)
		t->bytes -= e->a; /* made again without a free we saw */
	e->a = size;
	t->bytes += size;
	return 0;
}

/* ---- one snapshot ---------------------------------------------------------------------- */

struct pm_chunk {
	uint64_t first; /* page index in the mapping */
	uint32_t npages;
	uint64_t *words; /* 2 bits per page */
};

struct pm_span {
	uint64_t lo, hi; /* page indexes [lo, hi) */
};

struct pm_count {
	uint64_t size, pages, present, swapped, zero, live_pages, live_bytes, live_blocks,
		unused;
};

struct pm_map {
	uint64_t start, end;
	uint32_t prot, flags, page_size;
	char *path;
	struct pm_chunk *chunks;
	size_t nchunks, chunkcap;
	struct pm_span *spans;
	size_t nspans, spancap;
	struct pm_count c;
};

struct pm_snap {
	uint32_t seq, reason, expect;
	int32_t error;
	bool started;
	int64_t ns;
	struct pm_map *maps;
	size_t n, cap;
	uint64_t live_blocks, live_bytes; /* all live blocks when it was measured */
};

static void pm_map_free(struct pm_map *m)
{
	for (size_t i = 0; i < m->nchunks; i++)
		free(m->chunks[i].words);
	free(m->chunks);
	free(m->spans);
	free(m->path);
	m->chunks = NULL;
	m->spans = NULL;
	m->path = NULL;
	m->nchunks = m->chunkcap = m->nspans = m->spancap = 0;
}

static void pm_snap_free(struct pm_snap *s)
{
	for (size_t i = 0; i < s->n; i++)
		pm_map_free(&s->maps[i]);
	free(s->maps);
	memset(s, 0, sizeof(*s));
}

/* ---- the pass ---------------------------------------------------------------------------- */

enum { PM_NONE, PM_ALLOC, PM_FREE, PM_REALLOC, PM_MAPPING, PM_PAGEMAP, PM_END, PM_NROLES };

/* The fields each role needs (see stk_roles_bind). */
static const struct stk_role pm_specs[PM_NROLES] = {
	[PM_ALLOC] = { "mem:alloc", { "addr", "size" } },
	[PM_FREE] = { "mem:free", { "addr" } },
	[PM_REALLOC] = { "mem:realloc", { "old", "addr", "size" } },
	[PM_MAPPING] = { "mem:mapping",
			 { "start", "end", "seq", "prot", "flags", "page_size", "$path" } },
	[PM_PAGEMAP] = { "mem:pagemap", { "start", "seq", "npages", "@pages" } },
	[PM_END] = { "mem:pagemap_end", { "seq", "mappings", "reason", "error" } },
};

struct pm_state {
	struct pm_opts o;
	struct evs *s;
	struct stk_roles r; /* our types by id, and where their fields are */
	bool has_types;
	struct pm_live live;
	struct pm_snap cur;  /* being gathered */
	struct pm_snap best; /* measured: the one to report */
	bool have_best;
	uint64_t complete, incomplete, failed;
	uint64_t mem_events; /* mem:alloc, mem:free, mem:realloc */
	int32_t last_error;
	int64_t first_ns;
	bool any_event;
	struct evs_totals tot;
	char *err;
	size_t errlen;
};

static int pm_fail(struct pm_state *st, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int pm_fail(struct pm_state *st, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st->err, st->errlen, fmt, ap);
	va_end(ap);
	return code;
}

static int pm_bind(struct pm_state *st)
{
	int ret = stk_roles_bind(&st->r, evs_types(st->s), pm_specs, PM_NROLES, st->err,
				 st->errlen);

	for (uint32_t id = 0; id < EV_MAX_TYPES; id++)
		if (st->r.role[id] >= PM_MAPPING)
			st->has_types = true;
	return ret;
}

static void pm_cur_reset(struct pm_state *st, uint32_t seq, int64_t ns)
{
	if (st->cur.started)
		st->incomplete++; /* a snapshot without its end: the process died in it */
	pm_snap_free(&st->cur);
	st->cur.seq = seq;
	st->cur.started = true;
	st->cur.ns = ns;
}

static int pm_on_mapping(struct pm_state *st, const struct evs_event *e, const uint8_t *fi)
{
	uint64_t start = e->v[fi[0]], end = e->v[fi[1]], ps = e->v[fi[5]];
	uint32_t seq = (uint32_t)e->v[fi[2]];
	struct pm_map *m;

	if (!st->cur.started || st->cur.seq != seq)
		pm_cur_reset(st, seq, e->ns);
	if (ps < 4096 || ps > (1u << 30) || (ps & (ps - 1)) || start >= end ||
	    (start | end) & (ps - 1))
		return pm_fail(st, -EBADMSG,
			       "mem:mapping of snapshot %u: bad range 0x%" PRIx64 "-0x%" PRIx64
			       " or page size %" PRIu64,
			       seq, start, end, ps);
	if (st->cur.n == st->cur.cap) {
		size_t ncap = st->cur.cap ? st->cur.cap * 2 : 64;
		struct pm_map *nm = realloc(st->cur.maps, ncap * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		st->cur.maps = nm;
		st->cur.cap = ncap;
	}
	m = &st->cur.maps[st->cur.n];
	memset(m, 0, sizeof(*m));
	m->path = strdup(e->str ? e->str : "");
	if (!m->path)
		return -ENOMEM;
	st->cur.n++;
	m->start = start;
	m->end = end;
	m->prot = (uint32_t)e->v[fi[3]];
	m->flags = (uint32_t)e->v[fi[4]];
	m->page_size = (uint32_t)ps;
	return 0;
}

static int pm_on_pagemap(struct pm_state *st, const struct evs_event *e, const uint8_t *fi)
{
	uint64_t start = e->v[fi[0]], npages = e->v[fi[2]], pages, first;
	uint32_t seq = (uint32_t)e->v[fi[1]], nwords;
	struct pm_map *m;
	struct pm_chunk *c;

	if (!st->cur.started || st->cur.seq != seq || !st->cur.n)
		return pm_fail(st, -EBADMSG,
			       "mem:pagemap of snapshot %u at 0x%" PRIx64
			       " without its mem:mapping",
			       seq, start);
	/* The preload library writes a mapping's chunks right after it. */
	m = &st->cur.maps[st->cur.n - 1];
	pages = (m->end - m->start) / m->page_size;
	nwords = (uint32_t)((npages + 31) / 32);
	if (start < m->start || start >= m->end || (start - m->start) % m->page_size || !npages ||
	    npages > RIP_PM_CHUNK_PAGES || e->narr < nwords)
		return pm_fail(st, -EBADMSG,
			       "mem:pagemap of snapshot %u: chunk at 0x%" PRIx64 " of %" PRIu64
			       " pages (%u values) does not fit mapping 0x%" PRIx64 "-0x%" PRIx64,
			       seq, start, npages, e->narr, m->start, m->end);
	first = (start - m->start) / m->page_size;
	if (npages > pages - first)
		return pm_fail(st, -EBADMSG,
			       "mem:pagemap of snapshot %u: %" PRIu64 " pages at 0x%" PRIx64
			       " run past the end of mapping 0x%" PRIx64 "-0x%" PRIx64,
			       seq, npages, start, m->start, m->end);
	if (m->nchunks == m->chunkcap) {
		size_t ncap = m->chunkcap ? m->chunkcap * 2 : 8;
		struct pm_chunk *nc = realloc(m->chunks, ncap * sizeof(*nc));

		if (!nc)
			return -ENOMEM;
		m->chunks = nc;
		m->chunkcap = ncap;
	}
	c = &m->chunks[m->nchunks];
	c->words = malloc((size_t)nwords * 8);
	if (!c->words)
		return -ENOMEM;
	for (uint32_t i = 0; i < nwords; i++)
		c->words[i] = evs_arr(e, i);
	c->first = first;
	c->npages = (uint32_t)npages;
	m->nchunks++;
	return 0;
}

static int pm_by_start(const void *a, const void *b)
{
	const struct pm_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int pm_by_first(const void *a, const void *b)
{
	const struct pm_chunk *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

static int pm_by_lo(const void *a, const void *b)
{
	const struct pm_span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int pm_span_add(struct pm_map *m, uint64_t lo, uint64_t hi)
{
	struct pm_span *last = m->nspans ? &m->spans[m->nspans - 1] : NULL;

	/* The common case: a block next to or over the last one, merged now. */
	if (last && last->hi >= lo && last->lo <= lo) {
		if (hi > last->hi)
			last->hi = hi;
		return 0;
	}
	if (m->nspans == m->spancap) {
		size_t ncap = m->spancap ? m->spancap * 2 : 16;
		struct pm_span *ns = realloc(m->spans, ncap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		m->spans = ns;
		m->spancap = ncap;
	}
	m->spans[m->nspans++] = (struct pm_span){ lo, hi };
	return 0;
}

/* Lay the live blocks over the mappings: bytes, counts, and the pages they touch. */
static int pm_lay_blocks(struct pm_state *st, struct pm_snap *s)
{
	for (size_t i = 0; i < st->live.m.cap; i++) {
		const struct stk_ent *b = &st->live.m.v[i];
		uint64_t lo, hi;
		size_t a = 0, z = s->n;
		bool first = true;

		if (!b->used)
			continue;
		lo = b->key;
		/* A block of 0 bytes still sits on its page. */
		hi = b->a > UINT64_MAX - lo ? UINT64_MAX : lo + (b->a ? b->a : 1);
		/* The first mapping that ends after lo. */
		while (a < z) {
			size_t mid = a + (z - a) / 2;

			if (s->maps[mid].end <= lo)
				a = mid + 1;
			else
				z = mid;
		}
		for (size_t k = a; k < s->n && s->maps[k].start < hi; k++) {
			struct pm_map *m = &s->maps[k];
			uint64_t from = lo > m->start ? lo : m->start;
			uint64_t to = hi < m->end ? hi : m->end;

			m->c.live_bytes += b->a ? to - from : 0;
			if (first)
				m->c.live_blocks++;
			first = false;
			if (pm_span_add(m, (from - m->start) / m->page_size,
					(to - m->start + m->page_size - 1) / m->page_size))
				return -ENOMEM;
		}
	}
	return 0;
}

/* Count one mapping's pages: its chunks against its merged spans. */
static int pm_count_map(struct pm_state *st, struct pm_snap *s, struct pm_map *m)
{
	size_t n = 0, k = 0;
	uint64_t end = 0;

	m->c.size = m->end - m->start;
	m->c.pages = m->c.size / m->page_size;
	if (m->nspans) {
		qsort(m->spans, m->nspans, sizeof(*m->spans), pm_by_lo);
		for (size_t i = 1; i < m->nspans; i++) {
			if (m->spans[i].lo <= m->spans[n].hi) {
				if (m->spans[i].hi > m->spans[n].hi)
					m->spans[n].hi = m->spans[i].hi;
			} else {
				m->spans[++n] = m->spans[i];
			}
		}
		m->nspans = n + 1;
		for (size_t i = 0; i < m->nspans; i++)
			m->c.live_pages += m->spans[i].hi - m->spans[i].lo;
	}
	qsort(m->chunks, m->nchunks, sizeof(*m->chunks), pm_by_first);
	for (size_t i = 0; i < m->nchunks; i++) {
		const struct pm_chunk *c = &m->chunks[i];

		if (c->first < end)
			return pm_fail(st, -EBADMSG,
				       "snapshot %u describes the page at 0x%" PRIx64 " twice",
				       s->seq, m->start + c->first * m->page_size);
		end = c->first + c->npages;
		for (uint32_t p = 0; p < c->npages; p++) {
			uint64_t page = c->first + p;
			unsigned code = (unsigned)(c->words[p / 32] >> (p % 32 * 2)) & 3;

			if (code == RIP_PM_SWAPPED)
				m->c.swapped++;
			if (code != RIP_PM_PRESENT && code != RIP_PM_ZERO)
				continue;
			m->c.present++;
			if (code == RIP_PM_ZERO)
				m->c.zero++;
			while (k < m->nspans && m->spans[k].hi <= page)
				k++;
			if (k == m->nspans || m->spans[k].lo > page)
				m->c.unused++;
		}
	}
	return 0;
}

/* Snapshot cur is complete: measure it against the live blocks of now and keep its counts. */
static int pm_measure(struct pm_state *st)
{
	struct pm_snap *s = &st->cur;
	int ret;

	qsort(s->maps, s->n, sizeof(*s->maps), pm_by_start);
	for (size_t i = 1; i < s->n; i++)
		if (s->maps[i].start < s->maps[i - 1].end)
			return pm_fail(st, -EBADMSG,
				       "snapshot %u has overlapping mappings at 0x%" PRIx64, s->seq,
				       s->maps[i].start);
	ret = pm_lay_blocks(st, s);
	if (ret)
		return ret;
	for (size_t i = 0; i < s->n; i++) {
		ret = pm_count_map(st, s, &s->maps[i]);
		if (ret)
			return ret;
		/* Only the counts are kept. */
		for (size_t k = 0; k < s->maps[i].nchunks; k++)
			free(s->maps[i].chunks[k].words);
		free(s->maps[i].chunks);
		free(s->maps[i].spans);
		s->maps[i].chunks = NULL;
		s->maps[i].spans = NULL;
		s->maps[i].nchunks = s->maps[i].nspans = 0;
	}
	s->live_blocks = st->live.m.n;
	s->live_bytes = st->live.bytes;
	pm_snap_free(&st->best);
	st->best = *s;
	st->have_best = true;
	memset(s, 0, sizeof(*s));
	return 0;
}

static int pm_on_end(struct pm_state *st, const struct evs_event *e, const uint8_t *fi)
{
	uint32_t seq = (uint32_t)e->v[fi[0]];
	uint64_t expect = e->v[fi[1]];
	int32_t error = (int32_t)e->v[fi[3]];

	if (!st->cur.started || st->cur.seq != seq)
		pm_cur_reset(st, seq, e->ns); /* a snapshot of no mapping */
	st->cur.started = false;
	st->cur.reason = (uint32_t)e->v[fi[2]];
	st->cur.error = error;
	st->cur.ns = e->ns;
	if (error) {
		st->failed++;
		st->last_error = error;
		pm_snap_free(&st->cur);
		return 0;
	}
	if (expect != st->cur.n) {
		st->incomplete++; /* events lost in the middle of it */
		pm_snap_free(&st->cur);
		return 0;
	}
	st->complete++;
	if (st->o.snapshot && st->o.snapshot != seq) {
		pm_snap_free(&st->cur);
		return 0;
	}
	return pm_measure(st);
}

static int pm_event(struct pm_state *st, const struct evs_event *e)
{
	const uint8_t *fi = st->r.fi[e->type->id];

	switch (st->r.role[e->type->id]) {
	case PM_ALLOC:
		return e->v[fi[0]] ? pm_live_put(&st->live, e->v[fi[0]], e->v[fi[1]]) : 0;
	case PM_FREE:
		pm_live_del(&st->live, e->v[fi[0]]);
		return 0;
	case PM_REALLOC:
		/* old 0: an allocation; addr 0 and size 0: a free of old */
		if (e->v[fi[0]])
			pm_live_del(&st->live, e->v[fi[0]]);
		return e->v[fi[1]] ? pm_live_put(&st->live, e->v[fi[1]], e->v[fi[2]]) : 0;
	case PM_MAPPING:
		return pm_on_mapping(st, e, fi);
	case PM_PAGEMAP:
		return pm_on_pagemap(st, e, fi);
	case PM_END:
		return pm_on_end(st, e, fi);
	}
	return 0;
}

static int pm_run(struct pm_state *st)
{
	struct evs_event e;
	int ret;

	ret = pm_bind(st);
	if (ret)
		return ret;
	while ((ret = evs_next(st->s, &e, st->err, st->errlen)) > 0) {
		if (!st->any_event) {
			st->first_ns = e.ns;
			st->any_event = true;
		}
		if (!st->r.role[e.type->id])
			continue;
		if (st->r.role[e.type->id] <= PM_REALLOC)
			st->mem_events++;
		ret = pm_event(st, &e);
		if (ret == -ENOMEM)
			return pm_fail(st, ret, "out of memory");
		if (ret)
			return ret;
	}
	if (ret < 0)
		return ret;
	if (st->cur.started)
		st->incomplete++;
	pm_snap_free(&st->cur);
	evs_totals(st->s, &st->tot);
	return 0;
}

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

static bool pm_listed(const struct pm_state *st, const struct pm_map *m)
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

static void pm_print_text(struct pm_state *st, FILE *out)
{
	const struct rip_file_hdr *h = evs_file_hdr(st->s);
	const struct pm_snap *s = &st->best;
	struct pm_count total = { 0 };
	char comm[sizeof(h->comm) + 1];
	uint64_t hidden = 0;
	bool zero_all = true;

	memcpy(comm, h->comm, sizeof(h->comm));
	comm[sizeof(h->comm)] = 0;
	fprintf(out, "%s (pid %d, %s): snapshot %u of %" PRIu64 " complete, at %s, %.3f s\n",
		evs_source(st->s), (int)h->pid, comm, s->seq, st->complete, pm_reason(s->reason),
		(double)(s->ns - st->first_ns) / 1e9);
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

static void pm_print_json(struct pm_state *st, FILE *out)
{
	const struct pm_snap *s = &st->best;
	struct pm_count total = { 0 };
	const char *sep = "";

	json_trace_head(out, st->s);
	fprintf(out,
		",\"complete\":%s,\"discarded\":%" PRIu64 ",\"lost_packets\":%" PRIu64
		",\"snapshots\":%" PRIu64 ",\"incomplete_snapshots\":%" PRIu64
		",\"failed_snapshots\":%" PRIu64 ",\"snapshot\":{\"seq\":%u,\"reason\":\"%s\","
		"\"time\":%.9f,\"page_size\":%u,\"live_blocks\":%" PRIu64 ",\"live_bytes\":%" PRIu64
		"},\"mappings\":[",
		st->tot.discarded || st->tot.lost_packets || st->tot.torn ? "false" : "true",
		st->tot.discarded, st->tot.lost_packets + st->tot.torn, st->complete,
		st->incomplete, st->failed, s->seq, pm_reason(s->reason),
		(double)(s->ns - st->first_ns) / 1e9, s->n ? s->maps[0].page_size : 4096u,
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

static int pm_parse(int argc, char **argv, struct pm_opts *o)
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
			if (tool_parse_size(optarg, &o->snapshot) || !o->snapshot ||
			    o->snapshot > UINT32_MAX ||
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
			return tool_usage_error(&cmd_pagemap_def, "unknown option '%s'",
						argv[optind - 1]);
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
static void pm_none(struct pm_state *st)
{
	const char *src = evs_source(st->s);

	if (st->o.snapshot && st->complete)
		tool_err("%s: no complete snapshot %" PRIu64 " (the trace has %" PRIu64
			 " complete snapshots; see rip dump %s | grep mem:pagemap_end)",
			 src, st->o.snapshot, st->complete, src);
	else if (st->failed && !st->incomplete)
		tool_err("%s: the pagemap snapshot failed in the traced process: %s", src,
			 strerror(-st->last_error));
	else if (st->incomplete)
		tool_err("%s: no complete pagemap snapshot, %" PRIu64 " cut short (the process "
			 "was killed while it was taken, or events were lost)",
			 src, st->incomplete);
	else if (!st->has_types || !st->mem_events)
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
	struct pm_state *st;
	int ret, status = EXIT_FAIL;

	st = calloc(1, sizeof(*st));
	if (!st) {
		tool_err("out of memory");
		return EXIT_FAIL;
	}
	ret = pm_parse(argc, argv, &st->o);
	if (ret) {
		free(st);
		return ret < 0 ? EXIT_OK : ret;
	}
	st->err = err;
	st->errlen = sizeof(err);
	ret = evs_open(st->o.target, &st->s, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		goto out_free;
	}
	progress_bar(st->s, "rip pagemap");
	ret = pm_run(st);
	if (ret) {
		tool_err("%s: %s", evs_source(st->s), err);
		goto out_close;
	}
	if (!st->have_best) {
		pm_none(st);
		goto out_close;
	}
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	if (st->o.json)
		pm_print_json(st, stdout);
	else
		pm_print_text(st, stdout);
	if (fflush(stdout) || ferror(stdout)) {
		tool_err("write error: %s", strerror(errno));
		goto out_close;
	}
	if (st->tot.discarded || st->tot.lost_packets || st->tot.torn)
		tool_err("warning: %s lost events (%" PRIu64 " discarded, %" PRIu64
			 " packets): the live allocations may be wrong",
			 evs_source(st->s), st->tot.discarded, st->tot.lost_packets + st->tot.torn);
	status = EXIT_OK;
out_close:
	evs_close(st->s);
out_free:
	pm_snap_free(&st->cur);
	pm_snap_free(&st->best);
	stk_map_free(&st->live.m);
	free(st);
	return status;
}
