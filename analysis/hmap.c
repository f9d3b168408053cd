/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/hmap.c - the slow path of the hash table of hmap.h: growing it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hmap.h"

/*
 * The capacity m grows to for cap entries (m->cap: no growth), and its new
 * slots, zeroed, in *nv (*mem: what to free): 0 or -ENOMEM.  On a cache
 * line's start, so that no slot of 32 or 16 bytes spans two (HMAP_LINE):
 * calloc's zeroed memory (a big table's pages come zeroed from the kernel,
 * and are not written twice), cut at its first line.
 */
static int hmap_grow_alloc(const struct hmap *m, size_t esz, size_t cap, size_t *ncap, char **mem,
			   char **nv)
{
	size_t n = m->cap ? m->cap : 2;

	while (n < cap)
		n *= 2;
	*ncap = n;
	if (n == m->cap)
		return 0;
	if (n > (SIZE_MAX - HMAP_LINE) / esz || !(*mem = calloc(1, n * esz + HMAP_LINE - 1)))
		return -ENOMEM;
	*nv = (char *)(((uintptr_t)*mem + HMAP_LINE - 1) & ~(uintptr_t)(HMAP_LINE - 1));
	return 0;
}

/* m's slots now nv (ncap of them, in mem), the old ones freed; sparse: HMAP_SPARSE_CAP's. */
static void hmap_grow_set(struct hmap *m, char *mem, void *nv, size_t ncap, size_t sparse)
{
	free(m->mem);
	m->mem = mem;
	m->v = nv;
	m->cap = ncap;
	m->shift = 64u - (unsigned)__builtin_ctzll(ncap);
	m->room = ncap < sparse ? ncap / 4 : ncap / 2; /* see HMAP_SPARSE_CAP */
}

int hmap_reserve(struct hmap *m, size_t esz, size_t cap)
{
	size_t ncap;
	unsigned nshift;
	char *mem, *nv;

	if (hmap_grow_alloc(m, esz, cap, &ncap, &mem, &nv))
		return -ENOMEM;
	if (ncap == m->cap)
		return 0;
	nshift = 64u - (unsigned)__builtin_ctzll(ncap);
	/* the used slots in slot order: where each lands depends on the ones before */
	for (size_t i = 0; i < m->cap; i++) {
		const void *s = hmap_slot(m, esz, i);
		size_t h;

		if (!hmap_used(s))
			continue;
		for (h = hmap_hash(hmap_key(s), nshift); hmap_used(nv + h * esz); h = (h + 1) & (ncap - 1))
			;
		memcpy(nv + h * esz, s, esz);
	}
	hmap_grow_set(m, mem, nv, ncap, HMAP_SPARSE_CAP);
	return 0;
}

/*
 * hmap_reserve for 16-byte packed slots (hmap.h, struct hmap_pk): the same,
 * but that a slot's key and mark are its first word.
 */
int hmap_pk_reserve(struct hmap *m, size_t cap)
{
	size_t ncap;
	struct hmap_pk *nv;
	unsigned nshift;
	char *mem, *v;

	if (hmap_grow_alloc(m, sizeof(*nv), cap, &ncap, &mem, &v))
		return -ENOMEM;
	if (ncap == m->cap)
		return 0;
	nv = (struct hmap_pk *)(void *)v;
	nshift = 64u - (unsigned)__builtin_ctzll(ncap);
	for (size_t i = 0; i < m->cap; i++) {
		const struct hmap_pk *s = hmap_pk_at(m, i);
		size_t h;

		if (!s->w0)
			continue;
		for (h = hmap_hash(hmap_pk_key(s), nshift); nv[h].w0; h = (h + 1) & (ncap - 1))
			;
		nv[h] = *s;
	}
	hmap_grow_set(m, mem, nv, ncap, HMAP_PK_SPARSE_CAP);
	return 0;
}

void hmap_free(struct hmap *m)
{
	free(m->mem);
	*m = (struct hmap){ 0 };
}
