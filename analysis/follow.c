/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/follow.c - the heap in use, the open descriptors and the
 * allocations by backtrace, event by event (see follow.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rip/resource.h>

#include "analysis/leaks.h"
#include "analysis/follow.h"
#include "analysis/live.h"

int xr_new(const struct ev_types *types, bool fold, struct xr **out, char *err, size_t errlen)
{
	struct xr *x = calloc(1, sizeof(*x));
	int ret;

	*out = NULL;
	if (!x) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	x->fold = fold;
	x->types = types;
	/* Find the types of rip/resource.h in the source and check their fields. */
	ret = role_bind(&x->r, types, err, errlen);
	if (ret) {
		free(x);
		return ret;
	}
	*out = x;
	return 0;
}

void xr_free(struct xr *x)
{
	if (!x)
		return;
	stk_map_free(&x->live);
	live_maps_free(&x->maps);
	live_maps_free(&x->rsv);
	stk_map_free(&x->fds);
	stk_map_free(&x->sites);
	stk_map_free(&x->refs);
	stk_bts_free(&x->bts);
	free(x);
}

static int xr_alloc(struct xr *x, uint64_t addr, uint64_t size, uint32_t bt)
{
	struct stk_ent *e;
	bool fresh;

	if (x->fold) {
		e = stk_map_get(&x->sites, bt, &fresh);
		if (!e)
			return -ENOMEM;
		e->a += size;
		e->b++;
	}
	e = stk_map_get(&x->live, addr, &fresh);
	if (!e)
		return -ENOMEM;
	if (!fresh)
		x->mem -= e->a; /* made again while live: its free was not recorded */
	e->a = size;
	e->b = bt;
	x->mem += size;
	return 0;
}

static void xr_release(struct xr *x, uint64_t addr)
{
	struct stk_ent *e = addr ? stk_map_find(&x->live, addr) : NULL;

	if (!e)
		return; /* free(NULL), or made before tracing started */
	x->freed = e->a;
	x->mem -= e->a;
	stk_map_del(&x->live, e);
}

/* A piece of mapping c->origin unmapped: it shrinks by what it lost, or goes. */
static int xr_cut(void *arg, const struct live_cut *c)
{
	struct xr *x = arg;
	struct stk_ent *e = stk_map_find(&x->live, c->origin);
	uint64_t gone = c->hi - c->lo;

	if (!e)
		return 0;
	if (gone > e->a)
		gone = e->a;
	x->freed += gone;
	x->mem -= gone;
	e->a -= gone;
	if (!e->a)
		stk_map_del(&x->live, e);
	return 0;
}

/* A mapping made at [addr, addr + size), over whatever was there. */
/* Range [addr, addr + size) unmapped: 0 or -ENOMEM. */
static int xr_unmap(struct xr *x, uint64_t addr, uint64_t size)
{
	int ret = live_maps_unmap(&x->maps, addr, size, xr_cut, x);

	if (ret >= 0)
		ret = live_rsv_cut(&x->rsv, addr, size);
	return ret < 0 ? ret : 0;
}

static int xr_map_at(struct xr *x, uint64_t addr, uint64_t size, uint32_t bt)
{
	uint64_t key;
	int ret = xr_unmap(x, addr, size);

	if (ret < 0)
		return ret;
	x->freed = 0; /* this event makes, it frees nothing */
	key = live_map_key(&x->maps);
	if (live_maps_add(&x->maps, addr, size, key))
		return -ENOMEM;
	return xr_alloc(x, key, size, bt);
}

/* A mapping, a reservation (not memory), or an mprotect: each reserved part it covers (as leaks.c). */
static int xr_map(struct xr *x, uint64_t kind, uint64_t addr, uint64_t size, uint32_t bt)
{
	struct live_piece *v;
	size_t n;
	int ret;

	if (live_is_reserve(kind)) {
		ret = xr_unmap(x, addr, size);
		return ret ? ret : live_rsv_add(&x->rsv, addr, size);
	}
	if (kind != RIP_MEM_MPROTECT)
		return xr_map_at(x, addr, size, bt);
	ret = live_rsv_take(&x->rsv, addr, size, &v, &n);
	for (size_t i = 0; !ret && i < n; i++)
		ret = xr_map_at(x, v[i].start, v[i].end - v[i].start, bt);
	free(v);
	return ret;
}

#define V(k) role_val(&x->r, e, k)

/* A res:* event of x->kind (a tracing module's), in place of heap memory. */
static int xr_module(struct xr *x, const struct evs_event *e, int role)
{
	bool acq = role == ROLE_RES_ACQUIRE || role == ROLE_RES_TRANSFER;
	uint64_t kind = V(acq ? ROLE_RACQ_KIND : ROLE_RREL_KIND);
	uint64_t key = role_res_key(V(acq ? ROLE_RACQ_ID : ROLE_RREL_ID), kind);
	const struct ev_type *t = role_kind(x->types, kind);
	struct stk_ent *ent;
	bool fresh;

	if (!t || strcmp(t->name + 5, x->kind))
		return 0; /* another kind, or none */
	switch (role) {
	case ROLE_RES_TRANSFER:
		/* moved, never live: the sites only */
		ent = stk_map_get(&x->sites, (uint32_t)V(ROLE_RACQ_BT), &fresh);
		if (!ent)
			return -ENOMEM;
		ent->a += V(ROLE_RACQ_SIZE);
		ent->b++;
		return 0;
	case ROLE_RES_ACQUIRE:
		if (t->flags & RIP_EVTYPE_REFCOUNT) {
			ent = stk_map_get(&x->refs, key, &fresh);
			if (!ent)
				return -ENOMEM;
			ent->a = 1;
		}
		return xr_alloc(x, key, V(ROLE_RACQ_SIZE), (uint32_t)V(ROLE_RACQ_BT));
	case ROLE_RES_REF:
	case ROLE_RES_UNREF:
		ent = stk_map_find(&x->refs, key);
		if (!ent || !stk_map_find(&x->live, key))
			return 0;
		if (role == ROLE_RES_REF || --ent->a) {
			ent->a += role == ROLE_RES_REF;
			return 0;
		}
		stk_map_del(&x->refs, ent);
		xr_release(x, key);
		return 0;
	case ROLE_RES_RELEASE:
		ent = stk_map_find(&x->refs, key);
		if (ent)
			stk_map_del(&x->refs, ent);
		xr_release(x, key);
		return 0;
	}
	return 0;
}

int xr_event(struct xr *x, const struct evs_event *e)
{
	int role = role_of(&x->r, e);
	struct stk_ent *ent;
	bool fresh;
	int ret = 0;

	x->freed = 0;
	if (x->kind && role != ROLE_BT) {
		/* a module's kind instead of memory: the others are not followed */
		ret = role_is_module(role) ? xr_module(x, e, role) : 0;
		return ret < 0 ? ret : role;
	}
	switch (role) {
	case ROLE_BT:
		if (x->fold)
			ret = stk_bt_define(&x->bts, (uint32_t)V(ROLE_BT_ID), e);
		break;
	case ROLE_MEM_ALLOC:
		if (!V(ROLE_ALLOC_ADDR))
			break;
		if (live_is_mapping(V(ROLE_ALLOC_KIND)) || live_is_reserve(V(ROLE_ALLOC_KIND)))
			ret = xr_map(x, V(ROLE_ALLOC_KIND), V(ROLE_ALLOC_ADDR), V(ROLE_ALLOC_SIZE),
				     (uint32_t)V(ROLE_ALLOC_BT));
		else
			ret = xr_alloc(x, V(ROLE_ALLOC_ADDR), V(ROLE_ALLOC_SIZE),
				       (uint32_t)V(ROLE_ALLOC_BT));
		break;
	case ROLE_MEM_UNMAP:
		ret = xr_unmap(x, V(ROLE_UNMAP_ADDR), V(ROLE_UNMAP_SIZE));
		break;
	case ROLE_MEM_FREE: {
		const struct live_piece *p;

		if (stk_map_find(&x->live, V(ROLE_FREE_ADDR)))
			xr_release(x, V(ROLE_FREE_ADDR));
		else if ((p = live_maps_at(&x->maps, V(ROLE_FREE_ADDR)))) /* from before mem:unmap */
			ret = live_maps_unmap(&x->maps, p->start, p->end - p->start, xr_cut, x);
		break;
	}
	case ROLE_MEM_REALLOC:
		/* old 0: an allocation; size 0 and addr 0: a free of old */
		xr_release(x, V(ROLE_REALLOC_OLD));
		if (V(ROLE_REALLOC_ADDR))
			ret = xr_alloc(x, V(ROLE_REALLOC_ADDR), V(ROLE_REALLOC_SIZE),
				       (uint32_t)V(ROLE_REALLOC_BT));
		break;
	case ROLE_FD_OPEN:
		if ((int64_t)V(ROLE_OPEN_FD) < 0)
			break;
		ent = stk_map_get(&x->fds, V(ROLE_OPEN_FD), &fresh);
		if (!ent)
			return -ENOMEM;
		x->nfds += fresh;
		break;
	case ROLE_FD_CLOSE:
		ent = (int64_t)V(ROLE_CLOSE_FD) >= 0 ? stk_map_find(&x->fds, V(ROLE_CLOSE_FD)) : NULL;
		if (ent) {
			stk_map_del(&x->fds, ent);
			x->nfds--;
		}
		break;
	case ROLE_FD_CLOSE_RANGE: {
		uint64_t *keys;
		size_t n;

		/* the descriptors of [first, last] that are open */
		if (live_keys_in(&x->fds.h, sizeof(struct stk_ent), V(ROLE_CRANGE_FIRST),
				 V(ROLE_CRANGE_LAST), &keys, &n))
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			ent = stk_map_find(&x->fds, keys[i]);
			if (ent) {
				stk_map_del(&x->fds, ent);
				x->nfds--;
			}
		}
		free(keys);
		break;
	}
	}
	return ret < 0 ? ret : role;
}

/* By role: the category of its kind and the field that holds it (cat 0: no kind field). */
static const struct {
	uint8_t cat, field;
} xr_kinds[ROLE_N] = {
	[ROLE_MEM_ALLOC] = { RIP_CAT_MEM, ROLE_ALLOC_KIND },
	[ROLE_MEM_FREE] = { RIP_CAT_MEM, ROLE_FREE_KIND },
	[ROLE_MEM_UNMAP] = { RIP_CAT_MEM, ROLE_UNMAP_KIND },
	[ROLE_FD_OPEN] = { RIP_CAT_FD, ROLE_OPEN_KIND },
	[ROLE_FD_CLOSE] = { RIP_CAT_FD, ROLE_CLOSE_KIND },
	[ROLE_FD_CLOSE_RANGE] = { RIP_CAT_FD, ROLE_CRANGE_KIND },
	[ROLE_SHM_CREATE] = { RIP_CAT_SHM, ROLE_CREATE_KIND },
	[ROLE_SHM_ATTACH] = { RIP_CAT_SHM, ROLE_ATTACH_KIND },
	[ROLE_SHM_DETACH] = { RIP_CAT_SHM, ROLE_DETACH_KIND },
	[ROLE_SHM_REMOVE] = { RIP_CAT_SHM, ROLE_REMOVE_KIND },
	[ROLE_SHM_RESIZE] = { RIP_CAT_SHM, ROLE_RESIZE_KIND },
};

const char *xr_kind(const struct xr *x, const struct evs_event *e, int role)
{
	if (role == ROLE_MEM_REALLOC)
		return "realloc";
	if (role_is_module(role))
		return role_kind_name(x->types,
				      V(role == ROLE_RES_ACQUIRE || role == ROLE_RES_TRANSFER
						? ROLE_RACQ_KIND
						: ROLE_RREL_KIND));
	if (role <= ROLE_NONE || role >= ROLE_N || !xr_kinds[role].cat)
		return NULL;
	return lk_kind_name(xr_kinds[role].cat, V(xr_kinds[role].field));
}

#undef V

int xr_leaked(const struct xr *x, struct stk_map *by_bt)
{
	for (size_t i = 0; i < x->live.cap; i++) {
		const struct stk_ent *l = &x->live.v[i];
		struct stk_ent *g;
		bool fresh;

		if (!l->used)
			continue;
		g = stk_map_get(by_bt, l->b, &fresh);
		if (!g)
			return -ENOMEM;
		g->a += l->a;
	}
	return 0;
}
