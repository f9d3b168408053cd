/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/stacks.c - hash table, backtrace definitions and frame names for
 * the commands that fold stacks (see stacks.h).
 *
 * The table keeps no tombstones: a removal shifts back the entries that
 * probed past the freed slot, so N live entries never need more than 2N
 * slots however many come and go.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"
#include "tool.h"
#include "sym.h"

/* ---- the table ----------------------------------------------------------------------- */

static inline size_t stk_hash(uint64_t key, size_t cap)
{
	key ^= key >> 31;
	key *= 0x9e3779b97f4a7c15ull;
	return (size_t)(key >> 17) & (cap - 1);
}

struct stk_ent *stk_map_find(const struct stk_map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t h = stk_hash(key, m->cap);; h = (h + 1) & (m->cap - 1)) {
		if (!m->v[h].used)
			return NULL;
		if (m->v[h].key == key)
			return &m->v[h];
	}
}

static int stk_map_grow(struct stk_map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 256;
	struct stk_ent *nv = calloc(ncap, sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		size_t h;

		if (!m->v[i].used)
			continue;
		for (h = stk_hash(m->v[i].key, ncap); nv[h].used; h = (h + 1) & (ncap - 1))
			;
		nv[h] = m->v[i];
	}
	free(m->v);
	m->v = nv;
	m->cap = ncap;
	return 0;
}

struct stk_ent *stk_map_get(struct stk_map *m, uint64_t key, bool *fresh)
{
	struct stk_ent *e = stk_map_find(m, key);
	size_t h;

	*fresh = false;
	if (e)
		return e;
	if ((m->n + 1) * 2 > m->cap && stk_map_grow(m))
		return NULL;
	for (h = stk_hash(key, m->cap); m->v[h].used; h = (h + 1) & (m->cap - 1))
		;
	m->v[h] = (struct stk_ent){ .key = key, .used = true };
	m->n++;
	*fresh = true;
	return &m->v[h];
}

void stk_map_del(struct stk_map *m, struct stk_ent *e)
{
	size_t mask = m->cap - 1, i = (size_t)(e - m->v), j = i;

	for (;;) {
		size_t home;

		m->v[i].used = false;
		for (;;) {
			j = (j + 1) & mask;
			if (!m->v[j].used)
				goto done;
			home = stk_hash(m->v[j].key, m->cap);
			/* j may move to i if its home is not in (i, j] cyclically */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		m->v[i] = m->v[j];
		i = j;
	}
done:
	m->n--;
}

void stk_map_free(struct stk_map *m)
{
	free(m->v);
	*m = (struct stk_map){ 0 };
}

/* ---- backtraces ---------------------------------------------------------------------- */

int stk_bt_define(struct stk_bts *b, uint32_t id, const struct evs_event *e)
{
	struct stk_ent *ent;
	bool fresh;

	if (!id) {
		b->bad++;
		return 0;
	}
	ent = stk_map_get(&b->ids, id, &fresh);
	if (!ent)
		return -ENOMEM;
	if (!fresh) {
		/* The same stack defined again (another process image, a re-intern): fine. */
		if (ent->b != e->narr)
			b->bad++;
		else
			for (uint32_t i = 0; i < e->narr; i++)
				if (b->frames[ent->a + i] != evs_arr(e, i)) {
					b->bad++;
					break;
				}
		return 0;
	}
	if (b->nframes + e->narr > b->capframes) {
		size_t cap = b->capframes ? b->capframes : 1024;
		uint64_t *v;

		while (cap < b->nframes + e->narr)
			cap *= 2;
		v = realloc(b->frames, cap * sizeof(*v));
		if (!v) {
			stk_map_del(&b->ids, ent);
			return -ENOMEM;
		}
		b->frames = v;
		b->capframes = cap;
	}
	ent->a = b->nframes;
	ent->b = e->narr;
	for (uint32_t i = 0; i < e->narr; i++)
		b->frames[b->nframes++] = evs_arr(e, i);
	return 0;
}

const uint64_t *stk_bt(const struct stk_bts *b, uint32_t id, uint32_t *n)
{
	static const uint64_t none[1];
	const struct stk_ent *e = id ? stk_map_find(&b->ids, id) : NULL;

	if (!e)
		return NULL;
	*n = (uint32_t)e->b;
	return b->frames ? b->frames + e->a : none;
}

void stk_bts_free(struct stk_bts *b)
{
	stk_map_free(&b->ids);
	free(b->frames);
	*b = (struct stk_bts){ 0 };
}

/* ---- symbols ------------------------------------------------------------------------- */

int stk_sym_open(struct evs *s, const char *sysroot, const char *debug_dir,
		 struct rip_sym **out, char *err, size_t errlen)
{
	struct rip_sym_opts so = { .sysroot = sysroot, .debug_dir = debug_dir };
	const struct rip_module *mods;
	struct rip_sym *sym;
	size_t n;
	int ret;

	ret = rip_sym_new(&so, &sym);
	if (ret) {
		snprintf(err, errlen, "cannot start the symbolizer: %s", strerror(-ret));
		return ret;
	}
	ret = evs_modules(s, &mods, &n, err, errlen);
	if (ret) {
		rip_sym_free(sym);
		return ret;
	}
	rip_sym_add_modules(sym, mods, n);
	*out = sym;
	return 0;
}

int stk_frame_names(struct rip_sym *sym, uint64_t ra, char names[][256], int max)
{
	struct rip_frame fr[STK_MAX_INLINE];
	int n = sym && ra ? rip_sym_lookup(sym, ra - 1, fr, STK_MAX_INLINE) : -1;

	if (n <= 0) {
		memset(fr, 0, sizeof(*fr));
		n = 1;
	}
	if (fr[n - 1].module && !strncmp(tool_base(fr[n - 1].module), "librip-preload", 14))
		return 0;
	if (n > max)
		n = max;
	/* fr[] is innermost first: the real function is the last one, and comes first here. */
	for (int i = 0; i < n; i++) {
		const struct rip_frame *f = &fr[n - 1 - i];
		char *p;

		if (f->func)
			snprintf(names[i], 256, "%s", f->func);
		else if (f->module)
			snprintf(names[i], 256, "%s+0x%" PRIx64, tool_base(f->module), f->offset);
		else
			snprintf(names[i], 256, "0x%" PRIx64, ra);
		for (p = names[i]; *p; p++)
			if (*p == ';' || *p == '\n')
				*p = ':';
	}
	return n;
}

void stk_json_head(FILE *out, struct evs *s)
{
	const struct rip_file_hdr *h = evs_file_hdr(s);
	char comm[sizeof(h->comm) + 1], exe[sizeof(h->exe) + 1];

	/* NUL-terminated copies: the header is the trace's, not to be trusted */
	memcpy(comm, h->comm, sizeof(h->comm));
	comm[sizeof(h->comm)] = 0;
	memcpy(exe, h->exe, sizeof(h->exe));
	exe[sizeof(h->exe)] = 0;
	fputs("{\"version\":1,\"source\":", out);
	json_str(out, evs_source(s));
	fprintf(out, ",\"pid\":%d,\"comm\":", (int)h->pid);
	json_str(out, comm);
	fputs(",\"exe\":", out);
	json_str(out, exe);
}
