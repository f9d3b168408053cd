/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/through.c - does a backtrace pass through a function, a glob of
 * functions or a line (see through.h).
 *
 * The answer for each backtrace id is kept in a stk_map (a: 1 no, 2 yes),
 * so a stack is symbolized once however many events use it; the
 * symbolizer keeps its own lookups, so frames shared by many stacks are
 * cheap after the first.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/through.h"
#include "read/sym.h"

#define THR_SEEN THR_NAMES_MAX

struct thr_pat {
	const char *file; /* THR_LINE: the file part (not terminated: filelen) */
	size_t filelen;
	long line;
	uint64_t seen[THR_SEEN]; /* hashes of the names counted in nnames */
	size_t nseen;
};

struct thr {
	size_t n;
	struct thr_info info[THR_MAX];
	struct thr_pat pat[THR_MAX];
	struct stk_map cache; /* bt -> a: 1 does not pass, 2 passes */
	uint64_t stackless;
};

/* FILE:LINE when the part after the last ':' is a number and there is a FILE. */
static bool thr_is_line(const char *p, const char **colon)
{
	const char *c = strrchr(p, ':');

	if (!c || c == p || !c[1] || c[-1] == ':')
		return false;
	for (const char *q = c + 1; *q; q++)
		if (*q < '0' || *q > '9')
			return false;
	*colon = c;
	return true;
}

int thr_new(const char *const *pats, size_t n, struct thr **out, char *err, size_t errlen)
{
	struct thr *t;

	if (n > THR_MAX) {
		snprintf(err, errlen, "more than %d --through patterns", THR_MAX);
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	t->n = n;
	for (size_t i = 0; i < n; i++) {
		struct thr_info *f = &t->info[i];
		struct thr_pat *p = &t->pat[i];
		const char *colon;

		f->pat = pats[i];
		if (!*pats[i]) {
			snprintf(err, errlen,
				 "--through wants a function, a glob or FILE:LINE, not "
				 "an empty word");
			thr_free(t);
			return -EINVAL;
		}
		if (thr_is_line(pats[i], &colon)) {
			f->kind = THR_LINE;
			p->file = pats[i];
			p->filelen = (size_t)(colon - pats[i]);
			p->line = strtol(colon + 1, NULL, 10);
			if (p->line <= 0 || p->line > 100000000) {
				snprintf(err, errlen, "--through=%s: no such line number", pats[i]);
				thr_free(t);
				return -EINVAL;
			}
		} else if (strpbrk(pats[i], "*?[")) {
			f->kind = THR_GLOB;
		} else {
			f->kind = THR_NAME;
		}
	}
	*out = t;
	return 0;
}

void thr_free(struct thr *t)
{
	if (!t)
		return;
	stk_map_free(&t->cache);
	free(t);
}

size_t thr_count(const struct thr *t)
{
	return t->n;
}

const struct thr_info *thr_info(const struct thr *t, size_t i)
{
	return i < t->n ? &t->info[i] : NULL;
}

uint64_t thr_stackless(const struct thr *t)
{
	return t->stackless;
}

/* Is path FILE, or does it end in /FILE? */
static bool thr_file_is(const char *path, const char *file, size_t len)
{
	size_t pl = strlen(path);

	if (pl < len || memcmp(path + pl - len, file, len))
		return false;
	return pl == len || path[pl - len - 1] == '/' || file[0] == '/';
}

/* A function name without its parameters: the length up to a '(' outside any '<...>'. */
static size_t thr_bare_len(const char *name)
{
	int depth = 0;

	for (size_t i = 0; name[i]; i++) {
		if (name[i] == '<')
			depth++;
		else if (name[i] == '>' && depth)
			depth--;
		else if (name[i] == '(' && !depth && i)
			return i;
	}
	return strlen(name);
}

/* Does frame f match pattern i? */
static bool thr_match(const struct thr *t, size_t i, const struct rip_frame *f)
{
	const struct thr_info *in = &t->info[i];
	const struct thr_pat *p = &t->pat[i];
	char bare[256];
	size_t len;

	if (in->kind == THR_LINE)
		return f->file && f->line == p->line && thr_file_is(f->file, p->file, p->filelen);
	if (!f->func)
		return false;
	if (in->kind == THR_NAME) {
		len = thr_bare_len(f->func);
		return !strcmp(f->func, in->pat) ||
		       (strlen(in->pat) == len && !strncmp(f->func, in->pat, len));
	}
	if (!fnmatch(in->pat, f->func, 0))
		return true;
	len = thr_bare_len(f->func);
	if (len == strlen(f->func) || len >= sizeof(bare))
		return false;
	memcpy(bare, f->func, len);
	bare[len] = 0;
	return !fnmatch(in->pat, bare, 0);
}

static uint64_t thr_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h | 1;
}

/* Pattern i matched frame f: count what it matched, once per distinct name. */
static void thr_note(struct thr *t, size_t i, const struct rip_frame *f)
{
	struct thr_info *in = &t->info[i];
	struct thr_pat *p = &t->pat[i];
	char name[256];
	uint64_t h;

	if (in->kind == THR_LINE)
		snprintf(name, sizeof(name), "%s at %s:%d", f->func ? f->func : "?", f->file,
			 f->line);
	else
		snprintf(name, sizeof(name), "%s", f->func);
	h = thr_hash(name);
	for (size_t k = 0; k < p->nseen; k++)
		if (p->seen[k] == h)
			return;
	if (p->nseen == THR_SEEN)
		return; /* nnames stays at THR_SEEN: "that many or more" */
	p->seen[p->nseen++] = h;
	if (in->nnames < THR_NAMES)
		memcpy(in->names[in->nnames], name, sizeof(name));
	in->nnames++;
}

/* The patterns frames[0..n) match, as bits; with note, their names counted. */
static uint64_t thr_eval(struct thr *t, struct rip_sym *sym, const uint64_t *frames, uint32_t n,
			 bool note)
{
	uint64_t hit = 0;

	if (!sym)
		return 0;
	for (uint32_t k = 0; k < n; k++) {
		struct rip_frame fr[STK_MAX_INLINE];
		int nf;

		if (!frames[k])
			continue;
		nf = rip_sym_lookup(sym, frames[k] - 1, fr, STK_MAX_INLINE);
		for (int j = 0; j < nf; j++)
			for (size_t i = 0; i < t->n; i++)
				if (thr_match(t, i, &fr[j])) {
					hit |= 1ull << i;
					if (note)
						thr_note(t, i, &fr[j]);
				}
	}
	return hit;
}

int thr_want(struct thr *t, struct rip_sym *sym, uint32_t bt, const uint64_t *frames, uint32_t n)
{
	struct stk_ent *e;
	uint64_t hit;
	bool fresh;

	if (!bt || !frames) {
		t->stackless++;
		return 0;
	}
	e = stk_map_get(&t->cache, bt, &fresh);
	if (!e)
		return -ENOMEM;
	if (!fresh)
		return e->a == 2;
	hit = thr_eval(t, sym, frames, n, true);
	for (size_t i = 0; i < t->n; i++)
		if (hit & (1ull << i)) {
			t->info[i].stacks++;
			t->info[i].anywhere = true;
		}
	e->a = hit ? 2 : 1;
	return hit != 0;
}

int thr_scan(struct thr *t, struct rip_sym *sym, const struct stk_bts *bts)
{
	uint64_t want = 0;

	for (size_t i = 0; i < t->n; i++)
		if (!t->info[i].anywhere)
			want |= 1ull << i;
	for (size_t k = 0; want && bts->frames && k < bts->ids.cap; k++) {
		const struct stk_ent *e = &bts->ids.v[k];
		uint64_t hit;

		if (!e->used)
			continue;
		hit = thr_eval(t, sym, bts->frames + e->a, (uint32_t)e->b, false) & want;
		for (size_t i = 0; i < t->n; i++)
			if (hit & (1ull << i))
				t->info[i].anywhere = true;
		want &= ~hit;
	}
	return 0;
}
