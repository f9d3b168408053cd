/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/hmap.c - the slow path of the hash table of hmap.h: growing it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hmap.h"

int hmap_reserve(struct hmap *m, size_t esz, size_t cap)
{
	size_t ncap = m->cap ? m->cap : 2;
	unsigned nshift;
	char *mem, *nv;

	while (ncap < cap)
		ncap *= 2;
	if (ncap == m->cap)
		return 0;
	/*
	 * On a cache line's start, so that no slot of 32 or 16 bytes spans two
	 * (HMAP_LINE): calloc's zeroed memory (a big table's pages come zeroed
	 * from the kernel, and are not written twice), cut at its first line.
	 */
	if (ncap > (SIZE_MAX - HMAP_LINE) / esz || !(mem = calloc(1, ncap * esz + HMAP_LINE - 1)))
		return -ENOMEM;
	nv = (char *)(((uintptr_t)mem + HMAP_LINE - 1) & ~(uintptr_t)(HMAP_LINE - 1));
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
	free(m->mem);
	m->mem = mem;
	m->v = nv;
	m->cap = ncap;
	m->shift = nshift;
	m->room = ncap < HMAP_SPARSE_CAP ? ncap / 4 : ncap / 2; /* see HMAP_SPARSE_CAP */
	return 0;
}

/*
 * hmap_reserve for 16-byte packed slots (hmap.h, struct hmap_pk): the same,
 * but that a slot's key and mark are its first word.
 */
int hmap_pk_reserve(struct hmap *m, size_t cap)
{
	const size_t esz = sizeof(struct hmap_pk);
	size_t ncap = m->cap ? m->cap : 2;
	struct hmap_pk *nv;
	unsigned nshift;
	char *mem;

	while (ncap < cap)
		ncap *= 2;
	if (ncap == m->cap)
		return 0;
	if (ncap > (SIZE_MAX - HMAP_LINE) / esz || !(mem = calloc(1, ncap * esz + HMAP_LINE - 1)))
		return -ENOMEM;
	nv = (struct hmap_pk *)(((uintptr_t)mem + HMAP_LINE - 1) & ~(uintptr_t)(HMAP_LINE - 1));
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
	free(m->mem);
	m->mem = mem;
	m->v = nv;
	m->cap = ncap;
	m->shift = nshift;
	m->room = ncap < HMAP_PK_SPARSE_CAP ? ncap / 4 : ncap / 2; /* see HMAP_SPARSE_CAP */
	return 0;
}

void hmap_free(struct hmap *m)
{
	free(m->mem);
	*m = (struct hmap){ 0 };
}
