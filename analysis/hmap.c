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
	char *nv;

	while (ncap < cap)
		ncap *= 2;
	if (ncap == m->cap)
		return 0;
	/* on a cache line's start: no slot of 32 or 16 bytes spans two (HMAP_LINE) */
	if (ncap > SIZE_MAX / esz || posix_memalign((void **)&nv, HMAP_LINE, ncap * esz))
		return -ENOMEM;
	memset(nv, 0, ncap * esz);
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
	free(m->v);
	m->v = nv;
	m->cap = ncap;
	m->shift = nshift;
	m->room = ncap < HMAP_SPARSE_CAP ? ncap / 4 : ncap / 2; /* see HMAP_SPARSE_CAP */
	return 0;
}

void hmap_free(struct hmap *m)
{
	free(m->v);
	*m = (struct hmap){ 0 };
}
