/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/leaks.c - what is still live at the end of a trace (see leaks.h).
 *
 * One pass over the events in time order.  Live resources sit in open
 * addressing tables (linear probing, deletion by backward shift, so there
 * are no tombstones and a table of N live entries never grows past 2N
 * slots): memory and shared-memory attachments by address, descriptors by
 * number, segments by id (shmget) or by a hash of their name (shm_open).
 * An entry is 32 bytes: memory use follows what is live at the worst
 * moment, not the length of the trace.
 *
 * Backtrace definitions (rip:bt) are kept aside as they go by: a stack is
 * defined once per process, in the stream of whichever thread met it
 * first, so another thread's event may use it before the merge reaches its
 * definition.  Stacks are therefore looked up only after the pass.
 *
 * A release of something never seen made (inherited descriptors, memory
 * allocated before tracing started) is counted, not an error; so is a
 * resource made again while live (its release was not recorded).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rip/resource.h>

#include "analysis/leaks.h"
#include "analysis/roles.h"
#include "analysis/stacks.h"

/* ---- kinds ------------------------------------------------------------------------- */

static const char *const lk_mem_kinds[] = {
	[RIP_MEM_MALLOC] = "malloc",
	[RIP_MEM_CALLOC] = "calloc",
	[RIP_MEM_REALLOC] = "realloc",
	[RIP_MEM_REALLOCARRAY] = "reallocarray",
	[RIP_MEM_POSIX_MEMALIGN] = "posix_memalign",
	[RIP_MEM_ALIGNED_ALLOC] = "aligned_alloc",
	[RIP_MEM_MEMALIGN] = "memalign",
	[RIP_MEM_VALLOC] = "valloc",
	[RIP_MEM_PVALLOC] = "pvalloc",
	[RIP_MEM_NEW] = "new",
	[RIP_MEM_NEW_ARRAY] = "new[]",
	[RIP_MEM_MMAP] = "mmap",
	[RIP_MEM_MREMAP] = "mremap",
	[RIP_MEM_FREE] = "free",
	[RIP_MEM_DELETE] = "delete",
	[RIP_MEM_DELETE_ARRAY] = "delete[]",
	[RIP_MEM_MUNMAP] = "munmap",
};

static const char *const lk_fd_kinds[] = {
	[RIP_FD_OPEN] = "open",
	[RIP_FD_OPENAT] = "openat",
	[RIP_FD_CREAT] = "creat",
	[RIP_FD_DUP] = "dup",
	[RIP_FD_DUP2] = "dup2",
	[RIP_FD_DUP3] = "dup3",
	[RIP_FD_FCNTL_DUPFD] = "fcntl_dupfd",
	[RIP_FD_PIPE] = "pipe",
	[RIP_FD_SOCKET] = "socket",
	[RIP_FD_SOCKETPAIR] = "socketpair",
	[RIP_FD_ACCEPT] = "accept",
	[RIP_FD_EVENTFD] = "eventfd",
	[RIP_FD_TIMERFD] = "timerfd",
	[RIP_FD_SIGNALFD] = "signalfd",
	[RIP_FD_EPOLL] = "epoll",
	[RIP_FD_INOTIFY] = "inotify",
	[RIP_FD_MEMFD] = "memfd",
	[RIP_FD_SCM_RIGHTS] = "scm_rights",
	[RIP_FD_FOPEN] = "fopen",
	[RIP_FD_FDOPEN] = "fdopen",
	[RIP_FD_FREOPEN] = "freopen",
	[RIP_FD_OPENDIR] = "opendir",
	[RIP_FD_CLOSE] = "close",
	[RIP_FD_FCLOSE] = "fclose",
	[RIP_FD_CLOSEDIR] = "closedir",
	[RIP_FD_REPLACED] = "replaced",
};

static const char *const lk_shm_kinds[] = {
	[RIP_SHM_OPEN] = "shm_open",
	[RIP_SHM_GET] = "shmget",
	[RIP_SHM_MEMFD] = "memfd_create",
	[RIP_SHM_AT] = "shmat",
	[RIP_SHM_MMAP] = "mmap",
	[RIP_SHM_DT] = "shmdt",
	[RIP_SHM_MUNMAP] = "munmap",
	[RIP_SHM_UNLINK] = "shm_unlink",
	[RIP_SHM_RMID] = "IPC_RMID",
};

#define LK_NELEM(a) (sizeof(a) / sizeof((a)[0]))

const char *lk_kind_name(uint32_t cat, uint64_t kind)
{
	switch (cat) {
	case RIP_CAT_MEM:
		return kind < LK_NELEM(lk_mem_kinds) ? lk_mem_kinds[kind] : NULL;
	case RIP_CAT_FD:
		return kind < LK_NELEM(lk_fd_kinds) ? lk_fd_kinds[kind] : NULL;
	case RIP_CAT_SHM:
		return kind < LK_NELEM(lk_shm_kinds) ? lk_shm_kinds[kind] : NULL;
	}
	return NULL;
}

const char *lk_res_name(enum lk_res r)
{
	static const char *const names[] = { "mem", "fd", "shm", "shm-map" };

	return r < LK_NRES ? names[r] : "?";
}

/* ---- tables of live things ----------------------------------------------------------- */

struct lk_obj {
	uint64_t key;
	uint64_t size;
	int64_t ns;
	uint32_t bt;
	uint16_t kind;
	uint16_t used; /* 0: empty slot, LK_IN: live, LK_OUT: live but filtered out */
};

enum { LK_IN = 1, LK_OUT = 2 };

struct lk_tab {
	struct lk_obj *v;
	char **names; /* parallel to v when the table keeps names, else NULL */
	size_t cap, n;
	bool named;
};

static inline size_t lk_hash(uint64_t key, size_t cap)
{
	key ^= key >> 31;
	key *= 0x9e3779b97f4a7c15ull;
	return (size_t)(key >> 17) & (cap - 1);
}

static int lk_tab_grow(struct lk_tab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 1024;
	struct lk_obj *nv = calloc(ncap, sizeof(*nv));
	char **nn = t->named ? calloc(ncap, sizeof(*nn)) : NULL;

	if (!nv || (t->named && !nn)) {
		free(nv);
		free(nn);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->cap; i++) {
		size_t h;

		if (!t->v[i].used)
			continue;
		for (h = lk_hash(t->v[i].key, ncap); nv[h].used; h = (h + 1) & (ncap - 1))
			;
		nv[h] = t->v[i];
		if (nn)
			nn[h] = t->names[i];
	}
	free(t->v);
	free(t->names);
	t->v = nv;
	t->names = nn;
	t->cap = ncap;
	return 0;
}

static struct lk_obj *lk_tab_find(const struct lk_tab *t, uint64_t key, size_t *slot)
{
	if (!t->cap)
		return NULL;
	for (size_t h = lk_hash(key, t->cap);; h = (h + 1) & (t->cap - 1)) {
		if (!t->v[h].used)
			return NULL;
		if (t->v[h].key == key) {
			*slot = h;
			return &t->v[h];
		}
	}
}

/* Remove slot i and shift the entries after it back (no tombstones). */
static void lk_tab_del(struct lk_tab *t, size_t i)
{
	size_t mask = t->cap - 1, j = i;

	if (t->named) {
		free(t->names[i]);
		t->names[i] = NULL;
	}
	for (;;) {
		size_t home;

		t->v[i].used = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (!t->v[j].used)
				goto done;
			home = lk_hash(t->v[j].key, t->cap);
			/* j may move to i if its home is not in (i, j] cyclically */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		t->v[i] = t->v[j];
		if (t->named) {
			t->names[i] = t->names[j];
			t->names[j] = NULL;
		}
		i = j;
	}
done:
	t->n--;
}

/*
 * Insert (or replace) key.  Returns 1 if it replaced a live entry, 0 if new,
 * -ENOMEM.  name (may be NULL) is copied for named tables.
 */
static int lk_tab_put(struct lk_tab *t, const struct lk_obj *o, const char *name)
{
	size_t h;
	int replaced = 0;
	char *copy = NULL;

	if (t->named && name && *name) {
		copy = strdup(name);
		if (!copy)
			return -ENOMEM;
	}
	if ((t->n + 1) * 2 > t->cap && lk_tab_grow(t)) {
		free(copy);
		return -ENOMEM;
	}
	for (h = lk_hash(o->key, t->cap); t->v[h].used; h = (h + 1) & (t->cap - 1))
		if (t->v[h].key == o->key) {
			replaced = 1;
			break;
		}
	t->v[h] = *o;
	if (!t->v[h].used)
		t->v[h].used = LK_IN;
	if (t->named) {
		free(t->names[h]);
		t->names[h] = copy;
	}
	if (!replaced)
		t->n++;
	return replaced;
}

static void lk_tab_free(struct lk_tab *t)
{
	for (size_t i = 0; t->names && i < t->cap; i++)
		free(t->names[i]);
	free(t->names);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* ---- backtraces ---------------------------------------------------------------------- */

struct lk_btent {
	uint32_t id; /* 0: empty slot */
	uint32_t n;
	uint64_t off; /* in frames */
};

struct lk_priv {
	struct role_map r; /* our types by id, and where their fields are */
	struct lk_tab tab[LK_NRES];
	struct lk_btent *bts;
	size_t btcap, nbts;
	uint64_t *frames;
	size_t nframes, framecap;
};

static struct lk_btent *lk_bt_slot(const struct lk_priv *p, uint32_t id)
{
	if (!p->btcap)
		return NULL;
	for (size_t h = lk_hash(id, p->btcap);; h = (h + 1) & (p->btcap - 1))
		if (p->bts[h].id == id || !p->bts[h].id)
			return &p->bts[h];
}

static int lk_bt_grow(struct lk_priv *p)
{
	size_t ncap = p->btcap ? p->btcap * 2 : 1024;
	struct lk_btent *nv = calloc(ncap, sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	for (size_t i = 0; i < p->btcap; i++) {
		size_t h;

		if (!p->bts[i].id)
			continue;
		for (h = lk_hash(p->bts[i].id, ncap); nv[h].id; h = (h + 1) & (ncap - 1))
			;
		nv[h] = p->bts[i];
	}
	free(p->bts);
	p->bts = nv;
	p->btcap = ncap;
	return 0;
}

static int lk_bt_define(struct lk *lk, const struct evs_event *e)
{
	struct lk_priv *p = lk->p;
	uint32_t id = (uint32_t)role_val(&p->r, e, ROLE_BT_ID), n = e->narr;
	struct lk_btent *b;

	lk->bt_defs++;
	if (!id || !e->arr) {
		lk->bt_bad++;
		return 0;
	}
	if ((p->nbts + 1) * 2 > p->btcap && lk_bt_grow(p))
		return -ENOMEM;
	b = lk_bt_slot(p, id);
	if (b->id) {
		/* Defined again (a reader may meet a stack twice): same frames or it is bad. */
		bool same = b->n == n;

		for (uint32_t i = 0; same && i < n; i++)
			same = p->frames[b->off + i] == evs_arr(e, i);
		if (!same)
			lk->bt_bad++;
		return 0;
	}
	if (p->nframes + n > p->framecap) {
		size_t cap = p->framecap ? p->framecap : 4096;
		uint64_t *nf;

		while (cap < p->nframes + n)
			cap *= 2;
		nf = realloc(p->frames, cap * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		p->frames = nf;
		p->framecap = cap;
	}
	for (uint32_t i = 0; i < n; i++)
		p->frames[p->nframes + i] = evs_arr(e, i);
	b->id = id;
	b->n = n;
	b->off = p->nframes;
	p->nframes += n;
	p->nbts++;
	return 0;
}

const uint64_t *lk_bt(const struct lk *lk, uint32_t id, uint32_t *n)
{
	const struct lk_btent *b = id ? lk_bt_slot(lk->p, id) : NULL;

	*n = 0;
	if (!b || !b->id)
		return NULL;
	*n = b->n;
	return lk->p->frames + b->off;
}

/* ---- setup --------------------------------------------------------------------------- */

struct lk *lk_new(const struct lk_opts *opts)
{
	struct lk *lk = calloc(1, sizeof(*lk));

	if (!lk)
		return NULL;
	lk->p = calloc(1, sizeof(*lk->p));
	if (!lk->p) {
		free(lk);
		return NULL;
	}
	if (opts)
		lk->o = *opts;
	if (!lk->o.resources)
		lk->o.resources = LK_F_MEM | LK_F_FD | LK_F_SHM;
	lk->p->tab[LK_FD].named = true;
	lk->p->tab[LK_SHM].named = true;
	return lk;
}

void lk_free(struct lk *lk)
{
	if (!lk)
		return;
	for (size_t i = 0; i < lk->ngroups; i++)
		free(lk->groups[i].sample);
	free(lk->groups);
	if (lk->p) {
		for (int r = 0; r < LK_NRES; r++)
			lk_tab_free(&lk->p->tab[r]);
		free(lk->p->bts);
		free(lk->p->frames);
		free(lk->p);
	}
	free(lk);
}

static int lk_fail(char *err, size_t len, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int lk_fail(char *err, size_t len, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return code;
}

/* Find our types in the source's table and check their fields. */
static int lk_types(struct lk *lk, const struct ev_types *types, char *err, size_t errlen)
{
	struct lk_priv *p = lk->p;
	int ret = role_bind(&p->r, types, err, errlen);

	lk->has_types = role_has_resources(&p->r);
	return ret;
}

/* ---- the pass ------------------------------------------------------------------------ */

/* Is a resource made by tid at ns one the options ask for? */
static bool lk_wanted(const struct lk *lk, int32_t tid, int64_t ns)
{
	int64_t rel = ns - lk->first_ns;

	if (lk->o.tid && tid != lk->o.tid)
		return false;
	return !lk->o.time_range || (rel >= lk->o.from_ns && rel < lk->o.to_ns);
}

static int lk_make(struct lk *lk, enum lk_res r, const struct role_res *d,
		   const struct evs_event *e, const char *name)
{
	struct lk_obj o = {
		.key = d->key, .size = d->size, .ns = e->ns, .bt = d->bt, .kind = (uint16_t)d->kind,
		.used = lk_wanted(lk, e->tid, e->ns) ? LK_IN : LK_OUT,
	};
	int ret = lk_tab_put(&lk->p->tab[r], &o, name);

	if (ret < 0)
		return ret;
	lk->un.replaced[r] += (uint64_t)ret;
	return 0;
}

static void lk_release(struct lk *lk, enum lk_res r, uint64_t key)
{
	size_t slot;

	if (lk_tab_find(&lk->p->tab[r], key, &slot))
		lk_tab_del(&lk->p->tab[r], slot);
	else
		lk->un.release[r]++;
}

static int lk_event(struct lk *lk, const struct evs_event *e)
{
	int role = role_of(&lk->p->r, e);
	struct role_res d;

	if (role == ROLE_BT)
		return lk_bt_define(lk, e);
	if (!role_is_resource(role))
		return 0;
	lk->res_events++;
	role_decode(&lk->p->r, e, role, &d);
	switch (role) {
	case ROLE_MEM_ALLOC:
		if (!d.key) {
			lk->failed_allocs++;
			return 0;
		}
		return lk_make(lk, LK_MEM, &d, e, NULL);
	case ROLE_MEM_FREE:
		if (d.key)
			lk_release(lk, LK_MEM, d.key);
		return 0;
	case ROLE_MEM_REALLOC:
		/* old 0: an allocation; size 0 and addr 0: a free of old */
		if (d.old)
			lk_release(lk, LK_MEM, d.old);
		if (!d.key) {
			if (d.size)
				lk->failed_allocs++;
			return 0;
		}
		return lk_make(lk, LK_MEM, &d, e, NULL);
	case ROLE_FD_OPEN:
		if ((int64_t)d.key < 0) {
			lk->bad_events++;
			return 0;
		}
		return lk_make(lk, LK_FD, &d, e, d.name);
	case ROLE_FD_CLOSE:
		if ((int64_t)d.key >= 0)
			lk_release(lk, LK_FD, d.key);
		else
			lk->bad_events++;
		return 0;
	case ROLE_SHM_CREATE:
		if (d.kind == RIP_SHM_MEMFD)
			return 0; /* lives as long as its descriptor and mappings: tracked there */
		return lk_make(lk, LK_SHM, &d, e, d.name && *d.name ? d.name : NULL);
	case ROLE_SHM_REMOVE:
		lk_release(lk, LK_SHM, d.key);
		return 0;
	case ROLE_SHM_ATTACH:
		if (!d.key) {
			lk->bad_events++;
			return 0;
		}
		return lk_make(lk, LK_SHM_MAP, &d, e, NULL);
	case ROLE_SHM_DETACH:
		lk_release(lk, LK_SHM_MAP, d.key);
		return 0;
	}
	return 0;
}

/* ---- grouping ------------------------------------------------------------------------ */

static int lk_group_cmp_bytes(const void *a, const void *b)
{
	const struct lk_group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->res != y->res)
		return x->res < y->res ? -1 : 1;
	return x->bt < y->bt ? -1 : x->bt > y->bt;
}

static int lk_group_cmp_count(const void *a, const void *b)
{
	const struct lk_group *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return lk_group_cmp_bytes(a, b);
}

static int lk_group(struct lk *lk)
{
	size_t cap = 64, n = 0, *idx;
	struct lk_group *g = NULL;

	/* An index of (res, bt) -> group, rebuilt as it grows. */
	idx = malloc(cap * 2 * sizeof(*idx));
	g = malloc(cap * sizeof(*g));
	if (!idx || !g)
		goto nomem;
	memset(idx, 0xff, cap * 2 * sizeof(*idx));
	for (int r = 0; r < LK_NRES; r++) {
		const struct lk_tab *t = &lk->p->tab[r];

		if (!(lk->o.resources & (1u << r)))
			continue;
		for (size_t i = 0; i < t->cap; i++) {
			const struct lk_obj *o = &t->v[i];
			uint64_t key;
			size_t h;
			struct lk_group *x;

			if (o->used != LK_IN || (r != LK_FD && o->size < lk->o.min_size))
				continue;
			key = ((uint64_t)r << 32) | o->bt;
			for (h = lk_hash(key, cap * 2); idx[h] != (size_t)-1;
			     h = (h + 1) & (cap * 2 - 1))
				if (((uint64_t)g[idx[h]].res << 32 | g[idx[h]].bt) == key)
					break;
			if (idx[h] == (size_t)-1) {
				if (n == cap) {
					size_t ncap = cap * 2, *ni = malloc(ncap * 2 * sizeof(*ni));
					struct lk_group *ng = realloc(g, ncap * sizeof(*ng));

					if (ng)
						g = ng;
					if (!ni || !ng) {
						free(ni);
						goto nomem;
					}
					memset(ni, 0xff, ncap * 2 * sizeof(*ni));
					for (size_t k = 0; k < n; k++) {
						uint64_t kk = (uint64_t)g[k].res << 32 | g[k].bt;
						size_t hh;

						for (hh = lk_hash(kk, ncap * 2); ni[hh] != (size_t)-1;
						     hh = (hh + 1) & (ncap * 2 - 1))
							;
						ni[hh] = k;
					}
					free(idx);
					idx = ni;
					cap = ncap;
					for (h = lk_hash(key, cap * 2); idx[h] != (size_t)-1;
					     h = (h + 1) & (cap * 2 - 1))
						;
				}
				idx[h] = n;
				g[n] = (struct lk_group){
					.res = (enum lk_res)r,
					.bt = o->bt,
					.first_ns = o->ns,
					.last_ns = o->ns,
				};
				n++;
			}
			x = &g[idx[h]];
			x->count++;
			x->bytes += o->size;
			if (o->ns <= x->first_ns) {
				/* the oldest one's name stands for the group */
				if (t->named && t->names[i] &&
				    (o->ns < x->first_ns || !x->sample)) {
					char *s = strdup(t->names[i]);

					if (s) {
						free(x->sample);
						x->sample = s;
					}
				}
				x->first_ns = o->ns;
			}
			if (o->ns > x->last_ns)
				x->last_ns = o->ns;
			if (o->kind < 32)
				x->kinds |= 1u << o->kind;
			lk->total_count[r]++;
			lk->total_bytes[r] += o->size;
		}
	}
	free(idx);
	qsort(g, n, sizeof(*g), lk->o.sort == LK_SORT_COUNT ? lk_group_cmp_count
							     : lk_group_cmp_bytes);
	for (size_t i = 0; i < n; i++) {
		uint32_t nf;

		if (g[i].bt && !lk_bt(lk, g[i].bt, &nf))
			lk->bt_unknown++;
	}
	lk->groups = g;
	lk->ngroups = n;
	return 0;

nomem:
	for (size_t k = 0; g && k < n; k++)
		free(g[k].sample);
	free(idx);
	free(g);
	return -ENOMEM;
}

int lk_run(struct lk *lk, struct evs *s, char *err, size_t errlen)
{
	struct evs_event e;
	int ret;

	ret = lk_types(lk, evs_types(s), err, errlen);
	if (ret)
		return ret;
	evs_set_lazy(s, true); /* every field is read with evs_val (F) */
	while ((ret = evs_next_fast(s, &e, err, errlen)) > 0) {
		if (!lk->any_event) {
			lk->first_ns = e.ns;
			lk->any_event = true;
		}
		lk->last_ns = e.ns;
		lk->events++;
		ret = lk_event(lk, &e);
		if (ret)
			return lk_fail(err, errlen, ret, "out of memory");
	}
	if (ret < 0)
		return ret;
	ret = lk_group(lk);
	if (ret)
		return lk_fail(err, errlen, ret, "out of memory");
	return 0;
}
