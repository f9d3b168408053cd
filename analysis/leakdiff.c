/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/leakdiff.c - rip leaks --diff (see leakdiff.h): each report's
 * groups named by key, sorted by key and merged when they share one; then
 * one walk over both sorted lists matches NEW's groups to OLD's, keeps the
 * ones that are new or grew, and sorts those by growth.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/leakdiff.h"
#include "analysis/stacks.h"
#include "read/sym.h"

/* A frame of the preload library itself (an unwinder that starts inside a hook). */
static bool ld_internal(const struct rip_frame *f)
{
	const char *b = f->module ? strrchr(f->module, '/') : NULL;

	b = b ? b + 1 : f->module;
	return b && !strncmp(b, "librip-preload", 14);
}

/* The key of group g of lk: its symbolized stack; NULL when out of memory. */
static char *ld_key(const struct lk *lk, struct rip_sym *sym, const struct lk_group *g)
{
	struct rip_frame fr[STK_MAX_INLINE];
	const uint64_t *pcs;
	const char *sep = "";
	char *buf = NULL;
	size_t len = 0;
	uint32_t n = 0;
	FILE *f;

	pcs = g->bt ? lk_bt(lk, g->bt, &n) : NULL;
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	/* a module's kind by name: its id is the trace's own */
	if (g->res == LK_RES)
		fprintf(f, "[%s] ", lk_group_name(lk, g));
	if (!g->bt)
		fputs("(no backtrace)", f);
	else if (!pcs)
		fputs("(undefined backtrace)", f);
	for (uint32_t i = 0; pcs && i < n; i++) {
		int k = sym && pcs[i] ? rip_sym_lookup(sym, pcs[i] - 1, fr, STK_MAX_INLINE) : -1;

		if (k <= 0) {
			memset(fr, 0, sizeof(*fr));
			k = 1;
		}
		if (i + 1 < n && ld_internal(&fr[k - 1]))
			continue;
		for (int j = 0; j < k; j++, sep = ";") {
			const char *mod = fr[j].module ? strrchr(fr[j].module, '/') : NULL;

			mod = mod ? mod + 1 : fr[j].module;
			if (fr[j].func && fr[j].line)
				fprintf(f, "%s%s:%d", sep, fr[j].func, fr[j].line);
			else if (fr[j].func && fr[j].sigframe)
				fprintf(f, "%s%s", sep, fr[j].func);
			else if (fr[j].func)
				fprintf(f, "%s%s+0x%" PRIx64, sep, fr[j].func, fr[j].offset);
			else if (mod)
				fprintf(f, "%s%s+0x%" PRIx64, sep, mod, fr[j].offset);
			else
				fprintf(f, "%s?", sep);
		}
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int ld_cmp_key(const void *a, const void *b)
{
	const struct ld_group *x = a, *y = b;

	if (x->res != y->res)
		return x->res < y->res ? -1 : 1;
	return strcmp(x->key, y->key);
}

static int ld_cmp_growth(const void *a, const void *b)
{
	const struct ld_group *x = a, *y = b;
	int64_t xb = (int64_t)(x->bytes - x->obytes), yb = (int64_t)(y->bytes - y->obytes);
	int64_t xc = (int64_t)(x->count - x->ocount), yc = (int64_t)(y->count - y->ocount);

	if (xb != yb)
		return xb > yb ? -1 : 1;
	if (xc != yc)
		return xc > yc ? -1 : 1;
	return ld_cmp_key(a, b);
}

static void ld_groups_free(struct ld_group *d, size_t n)
{
	for (size_t i = 0; d && i < n; i++)
		free(d[i].key);
	free(d);
}

/* The groups of lk by (resource, key), sorted by key, those with one key merged. */
static int ld_groups(const struct lk *lk, struct rip_sym *sym, struct ld_group **out,
		     size_t *nout)
{
	struct ld_group *d = calloc(lk->ngroups ? lk->ngroups : 1, sizeof(*d));
	size_t n = 0;

	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < lk->ngroups; i++) {
		d[i].res = lk->groups[i].res;
		d[i].count = lk->groups[i].count;
		d[i].bytes = lk->groups[i].bytes;
		d[i].g = &lk->groups[i];
		d[i].key = ld_key(lk, sym, &lk->groups[i]);
		if (!d[i].key) {
			ld_groups_free(d, i);
			return -ENOMEM;
		}
	}
	/* stable enough: groups are in report order, the first of equal keys is kept */
	qsort(d, lk->ngroups, sizeof(*d), ld_cmp_key);
	for (size_t i = 0; i < lk->ngroups; i++) {
		if (n && !ld_cmp_key(&d[n - 1], &d[i])) {
			d[n - 1].count += d[i].count;
			d[n - 1].bytes += d[i].bytes;
			if (d[i].g < d[n - 1].g)
				d[n - 1].g = d[i].g;
			free(d[i].key);
			continue;
		}
		d[n++] = d[i];
	}
	*out = d;
	*nout = n;
	return 0;
}

int ld_run(const struct lk *old, struct rip_sym *osym, const struct lk *nw, struct rip_sym *nsym,
	   struct ld_diff *out)
{
	struct ld_group *od = NULL, *nd = NULL;
	size_t on = 0, nn = 0, n = 0, nnew = 0, j = 0;
	int ret;

	*out = (struct ld_diff){ 0 };
	ret = ld_groups(old, osym, &od, &on);
	if (!ret)
		ret = ld_groups(nw, nsym, &nd, &nn);
	if (ret) {
		ld_groups_free(od, on);
		return ret;
	}
	for (size_t i = 0; i < nn; i++) {
		struct ld_group *e = &nd[i];
		int c = 1;

		while (j < on && (c = ld_cmp_key(&od[j], e)) < 0)
			j++;
		if (j < on && !c) {
			e->ocount = od[j].count;
			e->obytes = od[j].bytes;
		}
		if (e->ocount && e->count <= e->ocount && e->bytes <= e->obytes) {
			free(e->key);
			continue;
		}
		nnew += !e->ocount;
		nd[n++] = *e;
	}
	qsort(nd, n, sizeof(*nd), ld_cmp_growth);
	ld_groups_free(od, on);
	*out = (struct ld_diff){ .v = nd, .n = n, .nnew = nnew };
	return 0;
}

void ld_free(struct ld_diff *d)
{
	ld_groups_free(d->v, d->n);
	*d = (struct ld_diff){ 0 };
}
