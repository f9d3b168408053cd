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

/* The fields of rip/resource.h each role reads (see stk_roles_bind). */
static const struct stk_role xr_specs[XR_NROLES] = {
	[XR_BT] = { "rip:bt", { "id", "@frames" } },
	[XR_ALLOC] = { "mem:alloc", { "addr", "size", "bt", "kind" } },
	[XR_FREE] = { "mem:free", { "addr", "kind" } },
	[XR_REALLOC] = { "mem:realloc", { "old", "addr", "size", "bt" } },
	[XR_FD_OPEN] = { "fd:open", { "fd", "kind" } },
	[XR_FD_CLOSE] = { "fd:close", { "fd", "kind" } },
	[XR_SHM_CREATE] = { "shm:create", { "kind" } },
	[XR_SHM_ATTACH] = { "shm:attach", { "kind" } },
	[XR_SHM_DETACH] = { "shm:detach", { "kind" } },
	[XR_SHM_REMOVE] = { "shm:remove", { "kind" } },
};

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
	/* Find the types of rip/resource.h in the source and check their fields. */
	ret = stk_roles_bind(&x->r, types, xr_specs, XR_NROLES, err, errlen);
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
	stk_map_free(&x->fds);
	stk_map_free(&x->sites);
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

#define F(k) (e->v[x->r.fi[e->type->id][k]])

int xr_event(struct xr *x, const struct evs_event *e)
{
	int role = x->r.role[e->type->id];
	struct stk_ent *ent;
	bool fresh;
	int ret = 0;

	x->freed = 0;
	switch (role) {
	case XR_BT:
		if (x->fold)
			ret = stk_bt_define(&x->bts, (uint32_t)F(0), e);
		break;
	case XR_ALLOC:
		if (F(0))
			ret = xr_alloc(x, F(0), F(1), (uint32_t)F(2));
		break;
	case XR_FREE:
		xr_release(x, F(0));
		break;
	case XR_REALLOC:
		/* old 0: an allocation; size 0 and addr 0: a free of old */
		xr_release(x, F(0));
		if (F(1))
			ret = xr_alloc(x, F(1), F(2), (uint32_t)F(3));
		break;
	case XR_FD_OPEN:
		if ((int64_t)F(0) < 0)
			break;
		ent = stk_map_get(&x->fds, F(0), &fresh);
		if (!ent)
			return -ENOMEM;
		x->nfds += fresh;
		break;
	case XR_FD_CLOSE:
		ent = (int64_t)F(0) >= 0 ? stk_map_find(&x->fds, F(0)) : NULL;
		if (ent) {
			stk_map_del(&x->fds, ent);
			x->nfds--;
		}
		break;
	}
	return ret < 0 ? ret : role;
}

const char *xr_kind(const struct xr *x, const struct evs_event *e, int role)
{
	switch (role) {
	case XR_ALLOC:
		return lk_kind_name(RIP_CAT_MEM, F(3));
	case XR_FREE:
		return lk_kind_name(RIP_CAT_MEM, F(1));
	case XR_REALLOC:
		return "realloc";
	case XR_FD_OPEN:
	case XR_FD_CLOSE:
		return lk_kind_name(RIP_CAT_FD, F(1));
	case XR_SHM_CREATE:
	case XR_SHM_ATTACH:
	case XR_SHM_DETACH:
	case XR_SHM_REMOVE:
		return lk_kind_name(RIP_CAT_SHM, F(0));
	}
	return NULL;
}

#undef F

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
