/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/hmap.c - the slow paths of the hash table of hmap.h: growing,
 * and removing with the backward shift that keeps the table free of
 * tombstones.
 */
#include <errno.h>
#include <stdlib.h>

#include "analysis/hmap.h"

int hmap_reserve(struct hmap *m, size_t esz, size_t cap)
{
	size_t ncap = m->cap ? m->cap : 1;
	char *nv;

	while (ncap < cap)
		ncap *= 2;
	if (ncap == m->cap)
		return 0;
	nv = calloc(ncap, esz);
	if (!nv)
		return -ENOMEM;
	/* the used slots in slot order: where each lands depends on the ones before */
	for (size_t i = 0; i < m->cap; i++) {
		const void *s = hmap_slot(m, esz, i);
		size_t h;

		if (!hmap_used(s))
			continue;
		for (h = hmap_hash(hmap_key(s), ncap); hmap_used(nv + h * esz); h = (h + 1) & (ncap - 1))
			;
		memcpy(nv + h * esz, s, esz);
	}
	free(m->v);
	m->v = nv;
	m->cap = ncap;
	return 0;
}

void hmap_del(struct hmap *m, size_t esz, void *s)
{
	size_t mask = m->cap - 1, i = (size_t)((char *)s - (char *)m->v) / esz, j = i;

	for (;;) {
		size_t home;

		((unsigned char *)hmap_slot(m, esz, i))[8] = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (!hmap_used(hmap_slot(m, esz, j)))
				goto done;
			home = hmap_hash(hmap_key(hmap_slot(m, esz, j)), m->cap);
			/* j may move to i if its home is not in (i, j] cyclically */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		memcpy(hmap_slot(m, esz, i), hmap_slot(m, esz, j), esz);
		i = j;
	}
done:
	m->n--;
}

void hmap_free(struct hmap *m)
{
	free(m->v);
	*m = (struct hmap){ 0 };
}
