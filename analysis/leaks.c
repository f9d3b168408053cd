/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/leaks.c - what is still live at the end of a trace (see leaks.h).
 *
 * One pass over the events in time order (live_run of live.h), keeping what
 * is live in the tables of live.h: memory and shared-memory attachments by
 * address, descriptors by number, segments by id (shmget) or by name
 * (shm_open).  What the options filter out is still tracked, marked, so
 * that its release matches.  At the end, what is still live and wanted is
 * grouped by resource and backtrace.
 *
 * A release of something never seen made (inherited descriptors, memory
 * allocated before tracing started) is counted, not an error; so is a
 * resource made again while live (its release was not recorded).
 * Anonymous mappings are kept as ranges too (live_maps): a munmap of part
 * of one leaves the rest live, at its site, with the bytes still mapped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rip/resource.h>
#include <internal/grow.h>
#include <internal/hot.h>

#include "analysis/leaks.h"
#include "analysis/live.h"
#include "analysis/roles.h"
#include "analysis/stacks.h"
#include "analysis/through.h"

/* ---- kinds ------------------------------------------------------------------------- */

#define LK_MEM_NAME(suffix, name) [RIP_MEM_##suffix] = name,
#define LK_FD_NAME(suffix, name) [RIP_FD_##suffix] = name,
#define LK_SHM_NAME(suffix, name) [RIP_SHM_##suffix] = name,
static const char *const lk_mem_kinds[] = { RIP_MEM_KINDS(LK_MEM_NAME) };
static const char *const lk_fd_kinds[] = { RIP_FD_KINDS(LK_FD_NAME) };
static const char *const lk_shm_kinds[] = { RIP_SHM_KINDS(LK_SHM_NAME) };

#define LK_NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Every kind has its bit in lk_group.kinds, and its count in rip report (RP_KINDS). */
_Static_assert(LK_NELEM(lk_mem_kinds) <= LK_KINDS && LK_NELEM(lk_fd_kinds) <= LK_KINDS &&
		       LK_NELEM(lk_shm_kinds) <= LK_KINDS,
	       "a kind list outgrew lk_group.kinds");

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
	static const char *const names[] = { "mem", "fd", "shm", "shm-map", "res" };

	return r < LK_NRES ? names[r] : "?";
}

const struct ev_type *lk_kind(const struct lk *lk, uint32_t kind)
{
	return role_kind(lk->types, kind);
}

const char *lk_group_name(const struct lk *lk, const struct lk_group *g)
{
	const char *name;

	if (g->res != LK_RES)
		return lk_res_name(g->res);
	name = role_kind_name(lk->types, g->kind);
	return name ? name : "?";
}

/* ---- setup --------------------------------------------------------------------------- */

enum { LK_IN = 1, LK_OUT = 2 }; /* live_ent.used: wanted, or filtered out */

struct lk *lk_new(const struct lk_opts *opts)
{
	struct lk *lk = calloc(1, sizeof(*lk));

	if (!lk)
		return NULL;
	if (opts)
		lk->o = *opts;
	if (!lk->o.resources)
		lk->o.resources = LK_F_MEM | LK_F_FD | LK_F_SHM | LK_F_RES;
	lk->live.named = true; /* descriptors and segments keep their path or name */
	return lk;
}

void lk_free(struct lk *lk)
{
	if (!lk)
		return;
	for (size_t i = 0; i < lk->ngroups; i++) {
		free(lk->groups[i].sample);
		free(lk->groups[i].refs);
	}
	free(lk->groups);
	for (size_t i = 0; i < lk->nhist; i++)
		free(lk->hist[i].bt);
	free(lk->hist);
	stk_map_free(&lk->hidx);
	free(lk->cloexec);
	free(lk->own_types);
	live_free(&lk->live);
	free(lk);
}

const uint64_t *lk_bt(const struct lk *lk, uint32_t id, uint32_t *n)
{
	const uint64_t *f = stk_bt(&lk->live.bts, id, n);

	if (!f)
		*n = 0;
	return f;
}

/* ---- the pass ------------------------------------------------------------------------ */

/* What every event does is inline in the pass (live_run), the rest out of line. */
#define LK_HOT static inline RIP_HOT

/*
 * Is a resource made by event e (of tid, at ticks ts) one the options ask
 * for?  With a thread asked for, that it made one is noted (tid_made).
 */
LK_HOT bool lk_wanted(struct lk *lk, int32_t tid, uint64_t ts)
{
	int64_t rel;

	if (lk->o.tid) {
		if (tid != lk->o.tid)
			return false;
		lk->tid_made = true;
	}
	if (!lk->o.time_range)
		return true;
	rel = evs_ns(lk->src, ts) - lk->first_ns;
	return rel >= lk->o.from_ns && rel < lk->o.to_ns;
}

/*
 * d->key made live in table r by event e.  Its time is kept in ticks
 * (live_run without ns): lk_run converts those that are live at the end.
 */
LK_HOT int lk_make(struct lk *lk, enum lk_res r, const struct role_res *d,
		   const struct evs_event *e)
{
	bool fresh;
	struct live_ent *o;

	if (r == LK_MEM) { /* packed (live_mem_make) */
		struct live_ent old;
		int rep = live_mem_make(&lk->live, d->key,
					lk_wanted(lk, e->tid, e->ts) ? LK_IN : LK_OUT,
					(uint16_t)d->kind, d->bt, d->size, (int64_t)e->ts, &old);

		if (rep < 0)
			return rep;
		lk->un.replaced[r] += (unsigned)rep;
		return 0;
	}
	o = live_make(&lk->live, (enum live_res)r, d->key, d->name, &fresh);
	if (!o)
		return -ENOMEM;
	lk->un.replaced[r] += !fresh;
	o->used = lk_wanted(lk, e->tid, e->ts) ? LK_IN : LK_OUT;
	o->kind = (uint16_t)d->kind;
	o->val = d->bt;
	o->size = d->size;
	o->ns = (int64_t)e->ts;
	return 0;
}

/* What live_maps_unmap cuts into: the mappings (LIVE_MEM) or the attachments (LIVE_SHM_MAP). */
struct lk_cutter {
	struct lk *lk;
	enum live_res r;
};

/* A piece of mapping c->origin unmapped: it shrinks by what it lost, or goes. */
static int lk_cut(void *arg, const struct live_cut *c)
{
	const struct lk_cutter *k = arg;
	struct live_ent *o, m, old;

	if (k->r == LIVE_MEM) { /* packed (live_mem_make) */
		if (!live_mem_find(&k->lk->live, c->origin, &m))
			return 0;
		if (c->hi - c->lo >= m.size) {
			live_mem_release(&k->lk->live, c->origin, NULL);
			return 0;
		}
		m.size -= c->hi - c->lo;
		return live_mem_put(&k->lk->live, &m, &old) < 0 ? -ENOMEM : 0;
	}
	o = live_find(&k->lk->live, k->r, c->origin);
	if (!o)
		return 0;
	if (c->hi - c->lo < o->size)
		o->size -= c->hi - c->lo;
	else
		live_release(&k->lk->live, k->r, c->origin, NULL);
	return 0;
}

/* Range [addr, addr + size) unmapped; kind mmap: by a mapping placed over it. */
static int lk_unmap(struct lk *lk, uint64_t addr, uint64_t size, uint64_t kind)
{
	struct lk_cutter k = { lk, LIVE_MEM };
	int n = live_maps_unmap(&lk->live.maps, addr, size, lk_cut, &k), r;

	if (n < 0)
		return n;
	r = live_rsv_cut(&lk->live.rsv, addr, size);
	if (r < 0)
		return r;
	/*
	 * None of it was seen made (nor reserved: a reservation moves too): an
	 * unseen free only for mremap's old range.  munmap is also how a file
	 * mapping goes, which --mem does not record.
	 */
	lk->un.release[LK_MEM] += !n && !r && kind == RIP_MEM_MREMAP;
	return 0;
}

/*
 * Attachments are ranges too: a munmap of part of a shared mapping records
 * a shm:detach of that part only (a hole, a trimmed end).  size 0 (shmdt):
 * the whole attachment at addr.  placed: by an attachment made over it.
 */
static int lk_detach(struct lk *lk, uint64_t addr, uint64_t size, bool placed)
{
	struct lk_cutter k = { lk, LIVE_SHM_MAP };
	const struct live_piece *p;
	int n;

	if (!size) {
		p = live_maps_at(&lk->live.smaps, addr);
		if (!p) {
			lk->un.release[LK_SHM_MAP]++;
			return 0;
		}
		size = p->end - p->start;
	}
	n = live_maps_unmap(&lk->live.smaps, addr, size, lk_cut, &k);
	if (n < 0)
		return n;
	lk->un.release[LK_SHM_MAP] += !n && !placed; /* none of it was seen attached */
	return 0;
}

/* An attachment made at [d->key, d->key + d->size), over whatever was there. */
static int lk_attach(struct lk *lk, const struct role_res *d, const struct evs_event *e)
{
	struct role_res m = *d;
	int ret = lk_detach(lk, d->key, d->size, true);

	if (ret)
		return ret;
	m.key = live_map_key(&lk->live.smaps);
	if (live_maps_add(&lk->live.smaps, d->key, d->size, m.key))
		return -ENOMEM;
	return lk_make(lk, LK_SHM_MAP, &m, e);
}

/* key was not live in table r when released: a mapping's start, or unseen. */
static __attribute__((noinline)) void lk_release_unseen(struct lk *lk, enum lk_res r,
							uint64_t key)
{
	const struct live_piece *p;

	/* a trace from before mem:unmap: munmap was a mem:free of the start */
	if (r == LK_MEM && (p = live_maps_at(&lk->live.maps, key)) &&
	    lk_unmap(lk, p->start, p->end - p->start, RIP_MEM_MUNMAP) == 0)
		return;
	lk->un.release[r]++;
}

LK_HOT void lk_release(struct lk *lk, enum lk_res r, uint64_t key)
{
	if (r == LK_MEM ? !live_mem_release(&lk->live, key, NULL) :
			  !live_release(&lk->live, (enum live_res)r, key, NULL))
		lk_release_unseen(lk, r, key);
}

/* A mapping made at [d->key, d->key + d->size), over whatever was there. */
static int lk_map_at(struct lk *lk, const struct role_res *d, const struct evs_event *e)
{
	struct role_res m = *d;
	int ret = lk_unmap(lk, d->key, d->size, RIP_MEM_MMAP);

	if (ret)
		return ret;
	m.key = live_map_key(&lk->live.maps);
	if (live_maps_add(&lk->live.maps, d->key, d->size, m.key))
		return -ENOMEM;
	return lk_make(lk, LK_MEM, &m, e);
}

/*
 * A mapping, a reservation (address space only: kept apart, lk->reserved)
 * or an mprotect, which makes a mapping of each reserved part it covers.
 */
static int lk_map(struct lk *lk, const struct role_res *d, const struct evs_event *e)
{
	struct live_piece *v;
	size_t n;
	int ret;

	if (live_is_reserve(d->kind)) {
		ret = lk_unmap(lk, d->key, d->size, RIP_MEM_MMAP);
		return ret ? ret : live_rsv_add(&lk->live.rsv, d->key, d->size);
	}
	if (d->kind != RIP_MEM_MPROTECT)
		return lk_map_at(lk, d, e);
	ret = live_rsv_take(&lk->live.rsv, d->key, d->size, &v, &n);
	for (size_t i = 0; !ret && i < n; i++) {
		struct role_res m = *d;

		m.key = v[i].start;
		m.size = v[i].end - v[i].start;
		ret = lk_map_at(lk, &m, e);
	}
	free(v);
	return ret;
}

/* Descriptors first..last closed: the ones held open (no count of others: no one knows them). */
/* Descriptors past this are not followed for O_CLOEXEC (a corrupt trace's, a huge limit's). */
#define LK_CLOEXEC_MAX (1u << 24)

/* Descriptor fd opened with flags: is it closed by an execve (lk->cloexec)?  0 or -ENOMEM. */
static int lk_fd_flags(struct lk *lk, uint64_t fd, uint64_t flags)
{
	bool on = flags & O_CLOEXEC;

	if (fd >= LK_CLOEXEC_MAX || (!on && fd / 8 >= lk->cloexec_len))
		return 0;
	if (fd / 8 >= lk->cloexec_len) {
		size_t n = fd / 8 + 1 > 4096 ? (fd / 8 + 1) * 2 : 4096;
		uint8_t *v = realloc(lk->cloexec, n);

		if (!v)
			return -ENOMEM;
		memset(v + lk->cloexec_len, 0, n - lk->cloexec_len);
		lk->cloexec = v;
		lk->cloexec_len = n;
	}
	if (on)
		lk->cloexec[fd / 8] |= (uint8_t)(1u << (fd % 8));
	else
		lk->cloexec[fd / 8] &= (uint8_t) ~(1u << (fd % 8));
	return 0;
}

/*
 * The process went on to execve (the file's header says so): the
 * descriptors still open whose last open had O_CLOEXEC were closed by it.
 * (One marked so later, with fcntl, is not seen: it stays counted.)
 */
static int lk_exec_close(struct lk *lk, const struct evs *s)
{
	const struct rip_file_hdr *h = evs_file_hdr(s);
	uint64_t *keys;
	size_t n;

	if (!h || !(h->proc_flags & RIP_P_EXECED) || !lk->cloexec_len)
		return 0;
	if (live_keys_in(&lk->live.t[LIVE_FD], live_esz(&lk->live, LIVE_FD), 0,
			 lk->cloexec_len * 8 - 1, &keys, &n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!(lk->cloexec[keys[i] / 8] & (1u << (keys[i] % 8))))
			continue;
		live_release(&lk->live, LIVE_FD, keys[i], NULL);
		lk->exec_closed++;
	}
	free(keys);
	return 0;
}

static int lk_close_range(struct lk *lk, uint64_t first, uint64_t last)
{
	uint64_t *keys;
	size_t n;

	if (live_keys_in(&lk->live.t[LIVE_FD], live_esz(&lk->live, LIVE_FD), first, last, &keys,
			 &n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		live_release(&lk->live, LIVE_FD, keys[i], NULL);
	free(keys);
	return 0;
}

/* ---- the resources of tracing modules ------------------------------------------------ */

/* Is kind (a type id) a refcounted kind of the trace's? */
static bool lk_refcounted(const struct lk *lk, uint64_t kind)
{
	const struct ev_type *t = role_kind(lk->types, kind);

	return t && (t->flags & RIP_EVTYPE_REFCOUNT);
}

/* The references of the refcounted object of key, none when reset; NULL when out of memory. */
static struct lk_hist *lk_hist_of(struct lk *lk, uint64_t key, bool reset)
{
	bool fresh;
	struct stk_ent *x = stk_map_get(&lk->hidx, key, &fresh);
	struct lk_hist *h;

	if (!x)
		return NULL;
	if (fresh) {
		if (RIP_GROW(lk->hist, lk->caphist, lk->nhist + 1, 64)) {
			stk_map_del(&lk->hidx, x);
			return NULL;
		}
		x->a = lk->nhist;
		lk->hist[lk->nhist++] = (struct lk_hist){ 0 };
	}
	h = &lk->hist[x->a];
	if (reset || fresh) {
		h->n = 0;
		h->acq = true;
	}
	return h;
}

static int lk_ref(struct lk_hist *h, uint32_t bt)
{
	if (h->n == h->cap) {
		uint32_t cap = h->cap ? h->cap * 2 : 4;
		uint32_t *v = cap > h->cap ? realloc(h->bt, cap * sizeof(*v)) : NULL;

		if (!v)
			return -ENOMEM;
		h->bt = v;
		h->cap = cap;
	}
	h->bt[h->n++] = bt;
	return 0;
}

/* How alike two stacks are: the callers they share (frame 0, the call site itself, aside). */
static unsigned lk_bt_alike(const struct lk *lk, uint32_t a, uint32_t b)
{
	const uint64_t *fa, *fb;
	uint32_t na, nb, i;

	if (a == b)
		return RIP_BT_MAX_DEPTH + 1;
	fa = lk_bt(lk, a, &na);
	fb = lk_bt(lk, b, &nb);
	if (!fa || !fb)
		return 0;
	for (i = 1; i < na && i < nb && fa[i] == fb[i]; i++)
		;
	return i - 1;
}

#define LK_UNREF_SCAN 256 /* the newest references an unref is matched against */

/*
 * An unref of stack bt drops a reference.  Which one is not recorded: the
 * held reference whose stack shares the most callers with bt (a function
 * that refs and unrefs), the newest of those; one that shares none with any
 * drops the acquire's own (the owner's last unref), if still held, else the
 * newest.  Stacks defined later in the trace than their use (another
 * thread's first) compare as sharing none.
 */
static void lk_unref(const struct lk *lk, struct lk_hist *h, uint32_t bt)
{
	uint32_t best = UINT32_MAX, lo = h->n > LK_UNREF_SCAN ? h->n - LK_UNREF_SCAN : 0;
	unsigned score = 0;

	for (uint32_t k = lo; k < h->n; k++) {
		unsigned a = lk_bt_alike(lk, h->bt[k], bt);

		if (best == UINT32_MAX || a >= score) {
			best = k;
			score = a;
		}
	}
	if (h->acq && (best == UINT32_MAX || !score)) {
		h->acq = false;
		return;
	}
	if (best == UINT32_MAX)
		return;
	memmove(&h->bt[best], &h->bt[best + 1], (h->n - best - 1) * sizeof(*h->bt));
	h->n--;
}

/* A res:* event (the kind is checked: a kind the trace does not declare is a bad event). */
static __attribute__((noinline)) int lk_module(struct lk *lk, const struct role_res *d,
					       const struct evs_event *e)
{
	struct live_ent *o;
	struct lk_hist *h;

	if (!role_kind(lk->types, d->kind)) {
		lk->bad_events++;
		return 0;
	}
	switch (d->role) {
	case ROLE_RES_ACQUIRE:
		if (lk_refcounted(lk, d->kind) && !lk_hist_of(lk, d->key, true))
			return -ENOMEM;
		return lk_make(lk, LK_RES, d, e);
	case ROLE_RES_RELEASE:
		lk_release(lk, LK_RES, d->key);
		return 0;
	case ROLE_RES_REF:
	case ROLE_RES_UNREF:
		o = live_find(&lk->live, LIVE_RES, d->key);
		if (!o || !lk_refcounted(lk, d->kind)) {
			/* a reference to something never seen made (or of a kind not counted) */
			lk->un.release[LK_RES] += d->role == ROLE_RES_UNREF;
			return 0;
		}
		h = lk_hist_of(lk, d->key, false);
		if (!h)
			return -ENOMEM;
		if (d->role == ROLE_RES_REF)
			return lk_ref(h, d->bt);
		lk_unref(lk, h, d->bt);
		if (!h->acq && !h->n)
			live_release(&lk->live, LIVE_RES, d->key, NULL);
		return 0;
	case ROLE_RES_TRANSFER:
		/* a counter: nothing stays live (rip report sums them) */
		lk->kind_transfers[d->kind]++;
		return 0;
	}
	return 0;
}

/* always_inline: live_run and live_run_held call it, each as fast as one */
static inline RIP_HOT int lk_event(void *arg, const struct evs_event *e, const struct role_res *d)
{
	struct lk *lk = arg;

	switch (d->role) {
	case ROLE_MEM_ALLOC:
		if (!d->key) {
			lk->failed_allocs++;
			return 0;
		}
		if (live_is_mapping(d->kind) || live_is_reserve(d->kind))
			return lk_map(lk, d, e);
		return lk_make(lk, LK_MEM, d, e);
	case ROLE_MEM_UNMAP:
		return lk_unmap(lk, d->key, d->size, d->kind);
	case ROLE_MEM_FREE:
		if (d->key)
			lk_release(lk, LK_MEM, d->key);
		return 0;
	case ROLE_MEM_REALLOC:
		/* old 0: an allocation; size 0 and addr 0: a free of old */
		if (d->old)
			lk_release(lk, LK_MEM, d->old);
		if (!d->key) {
			lk->failed_allocs += d->size != 0;
			return 0;
		}
		return lk_make(lk, LK_MEM, d, e);
	case ROLE_FD_OPEN:
		if ((int64_t)d->key < 0) {
			lk->bad_events++;
			return 0;
		}
		if (lk_fd_flags(lk, d->key, d->old))
			return -ENOMEM;
		return lk_make(lk, LK_FD, d, e);
	case ROLE_FD_CLOSE:
		if ((int64_t)d->key >= 0)
			lk_release(lk, LK_FD, d->key);
		else
			lk->bad_events++;
		return 0;
	case ROLE_FD_CLOSE_RANGE:
		return lk_close_range(lk, d->key, d->size);
	case ROLE_SHM_RESIZE: {
		struct live_ent *o = live_find(&lk->live, LIVE_SHM, d->key);

		if (o)
			o->size = d->size;
		return 0;
	}
	case ROLE_SHM_CREATE:
		if (d->kind == RIP_SHM_MEMFD)
			return 0; /* lives as long as its descriptor and mappings: tracked there */
		/* made by another process (or before): not this one's to remove */
		if (d->kind == RIP_SHM_OPEN_EXISTING || d->kind == RIP_SHM_GET_EXISTING)
			return 0;
		return lk_make(lk, LK_SHM, d, e);
	case ROLE_SHM_REMOVE:
		lk_release(lk, LK_SHM, d->key);
		return 0;
	case ROLE_SHM_ATTACH:
		if (!d->key) {
			lk->bad_events++;
			return 0;
		}
		return lk_attach(lk, d, e);
	case ROLE_SHM_DETACH:
		return lk_detach(lk, d->key, d->size, false);
	case ROLE_RES_ACQUIRE:
	case ROLE_RES_RELEASE:
	case ROLE_RES_REF:
	case ROLE_RES_UNREF:
	case ROLE_RES_TRANSFER:
		return lk_module(lk, d, e);
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

/* Count live entry o (of table r, wanted) into its group x. */
static void lk_group_add(struct lk *lk, struct lk_group *x, enum lk_res r,
			 const struct live_ent *o, const char *name)
{
	x->count++;
	x->bytes += o->size;
	if (o->ns <= x->first_ns) {
		/* the oldest one's name stands for the group */
		if (name && (o->ns < x->first_ns || !x->sample)) {
			char *s = strdup(name);

			if (s) {
				free(x->sample);
				x->sample = s;
			}
		}
		x->first_ns = o->ns;
	}
	if (o->ns > x->last_ns)
		x->last_ns = o->ns;
	if (o->kind < LK_KINDS && r != LK_RES)
		x->kinds |= 1ull << o->kind;
	lk->total_count[r]++;
	lk->total_bytes[r] += o->size;
}

/* The references still held on leaked object o (of a refcounted kind), added to its group g. */
static int lk_held_refs(struct lk *lk, const struct live_ent *o, struct lk_group *g)
{
	const struct stk_ent *x = stk_map_find(&lk->hidx, o->key);
	const struct lk_hist *h;

	if (!x)
		return 0;
	h = &lk->hist[x->a];
	for (uint32_t k = 0; k < h->n; k++) {
		size_t j;

		for (j = 0; j < g->nrefs && g->refs[j].bt != h->bt[k]; j++)
			;
		if (j == g->nrefs) {
			struct lk_ref *v = realloc(g->refs, (g->nrefs + 1) * sizeof(*v));

			if (!v)
				return -ENOMEM;
			g->refs = v;
			g->refs[g->nrefs++] = (struct lk_ref){ h->bt[k], 0 };
		}
		g->refs[j].count++;
	}
	return 0;
}

static int lk_ref_cmp(const void *a, const void *b)
{
	const struct lk_ref *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->bt < y->bt ? -1 : x->bt > y->bt;
}

/* Is live entry o of table r wanted by the kind filter (module kinds only)? */
static bool lk_kind_wanted(const struct lk *lk, enum lk_res r, const struct live_ent *o)
{
	const char *name;

	if (r != LK_RES || !lk->o.kind)
		return true;
	name = role_kind_name(lk->types, o->kind);
	return name && !strcmp(name, lk->o.kind);
}

/*
 * Entry i of table r for lk_group, if used: LIVE_MEM's packed blocks after
 * its other slots, their times from ticks to ns (lk_times did the others).
 */
static const struct live_ent *lk_entry(const struct lk *lk, const struct evs *s, int r, size_t i,
				       struct live_ent *tmp)
{
	const struct live_ent *o;

	if (i < lk->live.t[r].cap) {
		o = live_slot(&lk->live, (enum live_res)r, i);
		return o->used ? o : NULL;
	}
	if (!live_mem_at(&lk->live, i - lk->live.t[r].cap, tmp))
		return NULL;
	tmp->ns = evs_ns(s, (uint64_t)tmp->ns);
	return tmp;
}

static int lk_group(struct lk *lk, const struct evs *s)
{
	struct stk_map idx = { 0 }; /* (res or kind, bt) -> a: index in g */
	unsigned gk;
	struct lk_group *g = NULL;
	size_t n = 0, cap = 0;

	for (int r = 0; r < LK_NRES; r++) {
		if (!(lk->o.resources & (1u << r)))
			continue;
		size_t end = lk->live.t[r].cap + (r == LK_MEM ? lk->live.pk.cap : 0);

		for (size_t i = 0; i < end; i++) {
			struct live_ent tmp;
			const struct live_ent *o = lk_entry(lk, s, r, i, &tmp);
			struct stk_ent *x;
			bool fresh;

			if (!o || o->used != LK_IN || (r != LK_FD && o->size < lk->o.min_size) ||
			    !lk_kind_wanted(lk, (enum lk_res)r, o))
				continue;
			/* module kinds: a group per kind and stack */
			gk = r == LK_RES ? LK_NRES * (1u + o->kind) : (unsigned)r;
			x = stk_map_get(&idx, (uint64_t)gk << 32 | o->val, &fresh);
			if (!x)
				goto nomem;
			if (fresh) {
				if (RIP_GROW(g, cap, n + 1, 64))
					goto nomem;

				x->a = n;
				g[n++] = (struct lk_group){
					.res = (enum lk_res)r,
					.bt = o->val,
					.first_ns = o->ns,
					.last_ns = o->ns,
					.kind = r == LK_RES ? o->kind : 0,
				};
			}
			lk_group_add(lk, &g[x->a], (enum lk_res)r, o,
				     live_name(&lk->live, (enum live_res)r, o));
			if (r == LK_RES) {
				lk->kind_count[o->kind]++;
				lk->kind_bytes[o->kind] += o->size;
				if (lk_refcounted(lk, o->kind) && lk_held_refs(lk, o, &g[x->a]))
					goto nomem;
			}
		}
	}
	stk_map_free(&idx);
	if (n) /* qsort's array may not be NULL */
		qsort(g, n, sizeof(*g), lk->o.sort == LK_SORT_COUNT ? lk_group_cmp_count
								    : lk_group_cmp_bytes);
	for (size_t i = 0; i < n; i++) {
		uint32_t nf;

		if (g[i].bt && !lk_bt(lk, g[i].bt, &nf))
			lk->bt_unknown++;
		if (g[i].nrefs > 1)
			qsort(g[i].refs, g[i].nrefs, sizeof(g[i].refs[0]), lk_ref_cmp);
	}
	lk->groups = g;
	lk->ngroups = n;
	return 0;

nomem:
	for (size_t k = 0; k < n; k++) {
		free(g[k].sample);
		free(g[k].refs);
	}
	free(g);
	stk_map_free(&idx);
	return -ENOMEM;
}

/* The rest of the pass once the table of blocks is big (live_run_held), out of line. */
static __attribute__((noinline)) int lk_held(void *arg, struct evs *s, struct evs_event *e,
					     struct role_res *d, int role, int *fail, char *err,
					     size_t errlen)
{
	struct lk *lk = arg;

	return live_run_held(&lk->live, s, &lk->tr, lk_event, lk, e, d, role, fail, err, errlen,
			     false, false);
}

/* The times of what is live at the end, from ticks (lk_make) to ns. */
static void lk_times(struct lk *lk, const struct evs *s)
{
	for (int r = 0; r < LIVE_NRES; r++)
		for (size_t i = 0; i < lk->live.t[r].cap; i++) {
			struct live_ent *o = live_slot(&lk->live, (enum live_res)r, i);

			if (o->used)
				o->ns = evs_ns(s, (uint64_t)o->ns);
		}
}

int lk_run(struct lk *lk, struct evs *s, char *err, size_t errlen)
{
	int ret;

	lk->types = evs_types(s);
	lk->src = s;
	ret = live_run(&lk->live, s, &lk->tr, lk_event, lk_held, lk, err, errlen, false);
	lk->src = NULL;
	if (!ret && lk_exec_close(lk, s))
		ret = rr_fail(err, errlen, -ENOMEM, "out of memory");
	if (!ret) {
		lk_times(lk, s);
		ret = lk_group(lk, s);
		lk->reserved_bytes = live_rsv_bytes(&lk->live.rsv, &lk->reserved_ranges);
	}
	/* the kinds' names outlive the source (rip leaks --diff closes one) */
	if (!ret && !(lk->own_types = malloc(sizeof(*lk->own_types))))
		ret = -ENOMEM;
	if (!ret) {
		memcpy(lk->own_types, lk->types, sizeof(*lk->own_types));
		lk->types = lk->own_types;
	} else {
		lk->types = NULL;
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return ret;
}

int lk_through(struct lk *lk, struct thr *t, struct rip_sym *sym)
{
	size_t k = 0;

	memset(lk->total_count, 0, sizeof(lk->total_count));
	memset(lk->total_bytes, 0, sizeof(lk->total_bytes));
	lk->bt_unknown = 0;
	for (size_t i = 0; i < lk->ngroups; i++) {
		struct lk_group *g = &lk->groups[i];
		uint32_t nf = 0;
		const uint64_t *f = g->bt ? lk_bt(lk, g->bt, &nf) : NULL;
		int in = thr_want(t, sym, g->bt, f, nf);

		if (in < 0) {
			/* the rest stays, as it was: the caller gives up */
			memmove(&lk->groups[k], g, (lk->ngroups - i) * sizeof(*g));
			lk->ngroups = k + lk->ngroups - i;
			return in;
		}
		if (!in) {
			free(g->sample);
			continue;
		}
		lk->total_count[g->res] += g->count;
		lk->total_bytes[g->res] += g->bytes;
		lk->groups[k++] = *g;
	}
	lk->ngroups = k;
	return 0;
}
