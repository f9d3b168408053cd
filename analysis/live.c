/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/live.c - the tables of what is live during a resource pass (see
 * live.h): entries of named tables made, and the tables freed.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/live.h"

struct live_ent *live_make_named(struct live *l, enum live_res r, uint64_t key, const char *name,
				 bool *fresh)
{
	struct live_named *n;
	char *copy = NULL;

	if (name && *name) {
		copy = strdup(name);
		if (!copy)
			return NULL;
	}
	n = (struct live_named *)live_make_sz(l, r, key, fresh, sizeof(*n));
	if (!n) {
		free(copy);
		return NULL;
	}
	free(n->name); /* NULL in a new entry */
	n->name = copy;
	return &n->e;
}

void live_free(struct live *l)
{
	for (int r = 0; r < LIVE_NRES; r++) {
		for (size_t i = 0; live_name_slots(l, (enum live_res)r) && i < l->t[r].cap; i++) {
			struct live_named *n = (struct live_named *)live_slot(l, (enum live_res)r, i);

			if (n->e.used) /* a free slot's name is stale: moved, or freed */
				free(n->name);
		}
		hmap_free(&l->t[r]);
	}
	stk_bts_free(&l->bts);
}
