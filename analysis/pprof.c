/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/pprof.c - pprof profiles of traces and ring files (see pprof.h):
 * the builder of a Profile message (profile.proto, as
 * github.com/google/pprof documents its fields, written with protobuf.h),
 * and the pass that fills it from a source.
 *
 * The builder keeps each string, function, mapping and location once, and
 * encodes each as it is made into the buffer of its field; pp_encode only
 * concatenates them, so a profile of a million samples costs their bytes
 * and nothing per sample besides.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rip/abi.h>
#include <internal/grow.h>

#include "analysis/cpu.h"
#include "analysis/live.h"
#include "analysis/pprof.h"
#include "analysis/roles.h"
#include "analysis/stacks.h"
#include "read/ringfile.h"
#include "read/sym.h"
#include "analysis/through.h"

/* ---- the profile builder -------------------------------------------------------------- */

/* profile.proto's field numbers */
enum {
	PF_SAMPLE_TYPE = 1,
	PF_SAMPLE = 2,
	PF_MAPPING = 3,
	PF_LOCATION = 4,
	PF_FUNCTION = 5,
	PF_STRING = 6,
	PF_TIME = 9,
	PF_DURATION = 10,
	PF_PERIOD_TYPE = 11,
	PF_PERIOD = 12,
	PF_COMMENT = 13,
	PF_DEFAULT_TYPE = 14,
};

struct pp_prof {
	char **strs;		/* the string table; strs[0] is "" */
	size_t nstrs, capstrs;
	uint32_t *sidx;		/* open addressing: index + 1 into strs, 0 empty */
	size_t scap;
	struct pb_buf types, samples, maps, locs, funcs, tmp, sub;
	struct stk_map locmap;	/* key -> a: location id */
	struct stk_map funcmap; /* name << 32 | file -> a: function id */
	uint64_t nlocs, nfuncs, nmaps, nsamples, ntypes;
	int64_t time_ns, duration_ns, period, period_type, period_unit, default_type;
	int64_t *comments;
	size_t ncomments;
};

int pp_new(struct pp_prof **out)
{
	struct pp_prof *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->strs = calloc(64, sizeof(*p->strs));
	p->sidx = calloc(128, sizeof(*p->sidx));
	if (!p->strs || !p->sidx || !(p->strs[0] = strdup(""))) {
		pp_free(p);
		return -ENOMEM;
	}
	p->capstrs = 64;
	p->scap = 128;
	p->nstrs = 1;
	*out = p;
	return 0;
}

void pp_free(struct pp_prof *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nstrs; i++)
		free(p->strs[i]);
	free(p->strs);
	free(p->sidx);
	pb_buf_free(&p->types);
	pb_buf_free(&p->samples);
	pb_buf_free(&p->maps);
	pb_buf_free(&p->locs);
	pb_buf_free(&p->funcs);
	pb_buf_free(&p->tmp);
	pb_buf_free(&p->sub);
	stk_map_free(&p->locmap);
	stk_map_free(&p->funcmap);
	free(p->comments);
	free(p);
}

static uint64_t pp_hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

static int pp_rehash(struct pp_prof *p)
{
	size_t cap = p->scap * 2;
	uint32_t *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 1; i < p->nstrs; i++) {
		size_t h = pp_hash_str(p->strs[i]) & (cap - 1);

		while (v[h])
			h = (h + 1) & (cap - 1);
		v[h] = (uint32_t)i + 1;
	}
	free(p->sidx);
	p->sidx = v;
	p->scap = cap;
	return 0;
}

int64_t pp_string(struct pp_prof *p, const char *s)
{
	size_t h;

	if (!s || !*s)
		return 0;
	if ((p->nstrs + 1) * 2 > p->scap && pp_rehash(p))
		return -ENOMEM;
	for (h = pp_hash_str(s) & (p->scap - 1); p->sidx[h]; h = (h + 1) & (p->scap - 1))
		if (!strcmp(p->strs[p->sidx[h] - 1], s))
			return p->sidx[h] - 1;
	if (p->nstrs >= UINT32_MAX - 1)
		return -ENOMEM;
	if (RIP_GROW(p->strs, p->capstrs, p->nstrs + 1, 64))
		return -ENOMEM;

	p->strs[p->nstrs] = strdup(s);
	if (!p->strs[p->nstrs])
		return -ENOMEM;
	p->sidx[h] = (uint32_t)p->nstrs + 1;
	return (int64_t)p->nstrs++;
}

/* A ValueType message (type, unit) into b as field. */
static int pp_value_type(struct pp_prof *p, struct pb_buf *b, uint32_t field, const char *type,
			 const char *unit)
{
	int64_t t = pp_string(p, type), u = pp_string(p, unit);

	if (t < 0 || u < 0)
		return -ENOMEM;
	p->sub.len = 0;
	pb_uint(&p->sub, 1, (uint64_t)t, false);
	pb_uint(&p->sub, 2, (uint64_t)u, false);
	pb_bytes(b, field, p->sub.p, p->sub.len);
	return b->oom || p->sub.oom ? -ENOMEM : 0;
}

int pp_sample_type(struct pp_prof *p, const char *type, const char *unit)
{
	int ret = pp_value_type(p, &p->types, PF_SAMPLE_TYPE, type, unit);

	p->ntypes += !ret;
	return ret;
}

int pp_default_type(struct pp_prof *p, const char *type)
{
	int64_t t = pp_string(p, type);

	if (t < 0)
		return -ENOMEM;
	p->default_type = t;
	return 0;
}

int pp_period(struct pp_prof *p, const char *type, const char *unit, int64_t period)
{
	int64_t t = pp_string(p, type), u = pp_string(p, unit);

	if (t < 0 || u < 0)
		return -ENOMEM;
	p->period_type = t;
	p->period_unit = u;
	p->period = period;
	return 0;
}

void pp_time(struct pp_prof *p, int64_t time_ns, int64_t duration_ns)
{
	p->time_ns = time_ns;
	p->duration_ns = duration_ns;
}

int pp_comment(struct pp_prof *p, const char *text)
{
	int64_t t = pp_string(p, text);
	int64_t *v;

	if (t < 0)
		return -ENOMEM;
	v = realloc(p->comments, (p->ncomments + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->comments = v;
	v[p->ncomments++] = t;
	return 0;
}

int64_t pp_mapping(struct pp_prof *p, uint64_t lo, uint64_t hi, uint64_t offset,
		   const char *file, const char *build_id, bool lines)
{
	int64_t f = pp_string(p, file), b = pp_string(p, build_id);
	struct pb_buf *m = &p->tmp;

	if (f < 0 || b < 0)
		return -ENOMEM;
	m->len = 0;
	pb_uint(m, 1, p->nmaps + 1, true);
	pb_uint(m, 2, lo, false);
	pb_uint(m, 3, hi, false);
	pb_uint(m, 4, offset, false);
	pb_uint(m, 5, (uint64_t)f, false);
	pb_uint(m, 6, (uint64_t)b, false);
	pb_uint(m, 7, lines, false);  /* has_functions */
	pb_uint(m, 8, lines, false);  /* has_filenames */
	pb_uint(m, 9, lines, false);  /* has_line_numbers */
	pb_uint(m, 10, lines, false); /* has_inline_frames */
	pb_bytes(&p->maps, PF_MAPPING, m->p, m->len);
	if (m->oom || p->maps.oom)
		return -ENOMEM;
	return (int64_t)++p->nmaps;
}

/* The id of the function (name, file), made when new; < 0: -ENOMEM. */
static int64_t pp_function(struct pp_prof *p, const char *name, const char *file)
{
	int64_t n = pp_string(p, name), f = pp_string(p, file);
	struct stk_ent *e;
	struct pb_buf *m = &p->sub;
	bool fresh;

	if (n < 0 || f < 0)
		return -ENOMEM;
	e = stk_map_get(&p->funcmap, (uint64_t)n << 32 | (uint64_t)f, &fresh);
	if (!e)
		return -ENOMEM;
	if (!fresh)
		return (int64_t)e->a;
	e->a = ++p->nfuncs;
	m->len = 0;
	pb_uint(m, 1, e->a, true);
	pb_uint(m, 2, (uint64_t)n, false); /* name */
	pb_uint(m, 3, (uint64_t)n, false); /* system_name */
	pb_uint(m, 4, (uint64_t)f, false); /* filename */
	pb_bytes(&p->funcs, PF_FUNCTION, m->p, m->len);
	return m->oom || p->funcs.oom ? -ENOMEM : (int64_t)e->a;
}

uint64_t pp_location_find(const struct pp_prof *p, uint64_t key)
{
	const struct stk_ent *e = stk_map_find(&p->locmap, key);

	return e ? e->a : 0;
}

int64_t pp_location(struct pp_prof *p, uint64_t key, uint64_t addr, uint64_t mapping,
		    const struct pp_line *lines, size_t n, bool *fresh)
{
	struct stk_ent *e = stk_map_get(&p->locmap, key, fresh);
	struct pb_buf *m = &p->tmp;
	uint64_t id;

	if (!e)
		return -ENOMEM;
	if (!*fresh)
		return (int64_t)e->a;
	id = p->nlocs + 1;
	m->len = 0;
	pb_uint(m, 1, id, true);
	pb_uint(m, 2, mapping, false);
	pb_uint(m, 3, addr, false);
	for (size_t i = 0; i < n; i++) {
		int64_t f = pp_function(p, lines[i].func, lines[i].file);

		if (f < 0) {
			stk_map_del(&p->locmap, stk_map_find(&p->locmap, key));
			return f;
		}
		p->sub.len = 0;
		pb_uint(&p->sub, 1, (uint64_t)f, false);
		pb_uint(&p->sub, 2, (uint64_t)lines[i].line, false);
		pb_bytes(m, 4, p->sub.p, p->sub.len);
	}
	pb_bytes(&p->locs, PF_LOCATION, m->p, m->len);
	if (m->oom || p->locs.oom || p->sub.oom)
		return -ENOMEM;
	/* pp_function may have grown funcmap only: e is still good (another table) */
	e->a = id;
	p->nlocs = id;
	return (int64_t)id;
}

int pp_sample(struct pp_prof *p, const uint64_t *locs, size_t nlocs, const int64_t *values,
	      const struct pp_label *labels, size_t nlabels)
{
	struct pb_buf *m = &p->tmp;

	m->len = 0;
	pb_packed(m, 1, locs, nlocs);
	pb_packed(m, 2, (const uint64_t *)values, p->ntypes);
	for (size_t i = 0; i < nlabels; i++) {
		int64_t k = pp_string(p, labels[i].key);
		int64_t s = labels[i].str ? pp_string(p, labels[i].str) : 0;

		if (k < 0 || s < 0)
			return -ENOMEM;
		p->sub.len = 0;
		pb_uint(&p->sub, 1, (uint64_t)k, false);
		if (labels[i].str)
			pb_uint(&p->sub, 2, (uint64_t)s, false);
		else
			pb_uint(&p->sub, 3, (uint64_t)labels[i].num, true);
		pb_bytes(m, 3, p->sub.p, p->sub.len);
	}
	pb_bytes(&p->samples, PF_SAMPLE, m->p, m->len);
	if (m->oom || p->sub.oom || p->samples.oom)
		return -ENOMEM;
	p->nsamples++;
	return 0;
}

uint64_t pp_nsamples(const struct pp_prof *p)
{
	return p->nsamples;
}

int pp_encode(struct pp_prof *p, struct pb_buf *out)
{
	pb_put(out, p->types.p, p->types.len);
	pb_put(out, p->samples.p, p->samples.len);
	pb_put(out, p->maps.p, p->maps.len);
	pb_put(out, p->locs.p, p->locs.len);
	pb_put(out, p->funcs.p, p->funcs.len);
	for (size_t i = 0; i < p->nstrs; i++)
		pb_bytes(out, PF_STRING, p->strs[i], strlen(p->strs[i]));
	pb_uint(out, PF_TIME, (uint64_t)p->time_ns, false);
	pb_uint(out, PF_DURATION, (uint64_t)p->duration_ns, false);
	if (p->period_type) {
		p->sub.len = 0;
		pb_uint(&p->sub, 1, (uint64_t)p->period_type, false);
		pb_uint(&p->sub, 2, (uint64_t)p->period_unit, false);
		pb_bytes(out, PF_PERIOD_TYPE, p->sub.p, p->sub.len);
		pb_uint(out, PF_PERIOD, (uint64_t)p->period, false);
	}
	pb_packed(out, PF_COMMENT, (const uint64_t *)p->comments, p->ncomments);
	pb_uint(out, PF_DEFAULT_TYPE, (uint64_t)p->default_type, false);
	return out->oom || p->sub.oom ? -ENOMEM : 0;
}

/* ---- the pass -------------------------------------------------------------------------- */

#define PP_MAX_INLINE 16
#define PP_MADE_UP (1ull << 63) /* keys of made-up frames: this bit | string index */
#define PP_EXACT (1ull << 62)	/* keys of a CPU sample's interrupted IP: this bit | address */

struct pp_pass {
	const struct pp_opts *o;
	struct evs *s;
	struct pp_prof *p;
	struct pp_result *res;
	struct rip_sym *sym;
	const struct rip_module *mods;
	size_t nmods;
	int64_t *mapid;		/* by module: its mapping, 0: none */
	struct stk_map skip;	/* addresses of librip-preload's own frames */
	bool snaps;		/* addresses are instruction pointers, not return addresses */
	bool cpu;		/* a CPU profile: librip-preload's frames are CPU spent too */
	uint64_t *stack;	/* location ids of one sample */
	size_t capstack;
};

static const char *pp_base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

/* The mapping of the module addr is in (mapped modules first), 0: none. */
static int64_t pp_map_of(struct pp_pass *ps, uint64_t addr)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < ps->nmods; i++) {
			const struct rip_module *m = &ps->mods[i];

			if (!ps->mapid[i] || (pass == 0) != (m->unload_ts == 0))
				continue;
			if (addr >= m->lo && addr < m->hi)
				return ps->mapid[i];
		}
	return 0;
}

/* A mapping for every module of the source, those still mapped first. */
static int pp_mappings(struct pp_pass *ps)
{
	ps->mapid = calloc(ps->nmods ? ps->nmods : 1, sizeof(*ps->mapid));
	if (!ps->mapid)
		return -ENOMEM;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < ps->nmods; i++) {
			const struct rip_module *m = &ps->mods[i];
			char path[RIP_MODULE_PATH_MAX + 1], bid[2 * RIP_BUILD_ID_MAX + 1];
			int64_t id;

			if ((pass == 0) != (m->unload_ts == 0) || m->lo >= m->hi || m->bias > m->lo)
				continue;
			memcpy(path, m->path, RIP_MODULE_PATH_MAX);
			path[RIP_MODULE_PATH_MAX] = 0;
			bid[0] = 0;
			for (uint32_t k = 0; k < m->build_id_len && k < RIP_BUILD_ID_MAX; k++)
				snprintf(bid + 2 * k, 3, "%02x", m->build_id[k]);
			/*
			 * lo is where the first PT_LOAD segment starts, and that segment
			 * starts the file (p_offset 0) in executables and libraries
			 * linked the usual way, PIE or not.
			 */
			id = pp_mapping(ps->p, m->lo, m->hi, 0, path, bid, ps->sym != NULL);
			if (id < 0)
				return (int)id;
			ps->mapid[i] = id;
		}
	return 0;
}

/* A made-up frame named name (no address): its location id, or -ENOMEM. */
static int64_t pp_made_up(struct pp_pass *ps, const char *name)
{
	struct pp_line l = { .func = name };
	int64_t k = pp_string(ps->p, name);
	bool fresh;

	if (k < 0)
		return k;
	return pp_location(ps->p, PP_MADE_UP | (uint64_t)k, 0, 0, &l, 1, &fresh);
}

/*
 * The location of a frame: id, 0 for a frame of librip-preload's own, or
 * -ENOMEM.  a is a return address (looked up at a - 1), unless the pass
 * reads snaps or ip says it is a CPU sample's interrupted instruction.
 */
static int64_t pp_frame(struct pp_pass *ps, uint64_t a, bool ip)
{
	struct rip_frame fr[PP_MAX_INLINE];
	struct pp_line lines[PP_MAX_INLINE];
	char names[PP_MAX_INLINE][128];
	bool exact = ps->snaps || ip;
	uint64_t key = ip && !ps->snaps ? a | PP_EXACT : a, pc = exact || !a ? a : a - 1;
	uint64_t id = pp_location_find(ps->p, key);
	const char *mod;
	int n, k = 0;
	size_t nl = 0;
	bool fresh;

	if (id)
		return (int64_t)id;
	if (!exact && stk_map_find(&ps->skip, a))
		return 0;
	n = ps->sym && a ? rip_sym_lookup(ps->sym, pc, fr, PP_MAX_INLINE) : -1;
	if (n <= 0) {
		memset(fr, 0, sizeof(*fr));
		n = 1;
	}
	mod = fr[n - 1].module;
	if (!exact && !ps->cpu && mod && !strncmp(pp_base(mod), "librip-preload", 14)) {
		bool f;

		return stk_map_get(&ps->skip, a, &f) ? 0 : -ENOMEM; /* the unwinder's own */
	}
	if (ps->snaps) {
		while (k < n - 1 && rip_sym_frame_internal(&fr[k]))
			k++;
	}
	for (int i = k; i < n; i++, nl++) {
		const struct rip_frame *f = &fr[i];

		lines[nl] = (struct pp_line){ .func = f->func, .file = f->file, .line = f->line };
		/* pprof's viewers drop what is inside <> (C++ template arguments) */
		if (f->sigframe)
			lines[nl].func = "[signal handler]";
		if (f->func)
			continue;
		if (f->module)
			snprintf(names[nl], sizeof(names[nl]), "%s+0x%" PRIx64, pp_base(f->module),
				 f->offset);
		else
			snprintf(names[nl], sizeof(names[nl]), "0x%" PRIx64, a);
		lines[nl].func = names[nl];
	}
	return pp_location(ps->p, key, pc, (uint64_t)pp_map_of(ps, pc), lines, nl, &fresh);
}

static int pp_push(struct pp_pass *ps, size_t *n, uint64_t id)
{
	if (RIP_GROW(ps->stack, ps->capstack, *n + 1, 64))
		return -ENOMEM;

	ps->stack[(*n)++] = id;
	return 0;
}

/* The locations of backtrace bt, leaf first, into ps->stack; their count or -ENOMEM. */
static long pp_bt_stack(struct pp_pass *ps, const struct stk_bts *bts, uint32_t bt)
{
	const uint64_t *pcs;
	uint32_t n = 0;
	size_t k = 0;
	char tmp[64];
	int64_t id;

	pcs = bt ? stk_bt(bts, bt, &n) : NULL;
	for (uint32_t i = 0; pcs && i < n; i++) {
		id = pp_frame(ps, pcs[i], false);
		if (id < 0)
			return id;
		if (id && pp_push(ps, &k, (uint64_t)id))
			return -ENOMEM;
	}
	if (k)
		return (long)k;
	if (!bt)
		snprintf(tmp, sizeof(tmp), "[no backtrace]");
	else if (!pcs)
		snprintf(tmp, sizeof(tmp), "[backtrace %" PRIu32 " not defined]", bt);
	else if (!n)
		snprintf(tmp, sizeof(tmp), "[empty backtrace]");
	else
		snprintf(tmp, sizeof(tmp), "[librip-preload]");
	id = pp_made_up(ps, tmp);
	if (id < 0 || pp_push(ps, &k, (uint64_t)id))
		return -ENOMEM;
	return 1;
}

static int pp_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The keys of the used entries of m, sorted (*n of them); NULL when out of memory. */
static uint64_t *pp_keys(const struct stk_map *m, size_t *n)
{
	uint64_t *v = malloc((m->n ? m->n : 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < m->cap; i++)
		if (m->v[i].used)
			v[(*n)++] = m->v[i].key;
	qsort(v, *n, sizeof(*v), pp_u64_cmp);
	return v;
}

/* What one pass over the events keeps. */
struct pp_heap {
	struct role_map r;
	struct stk_bts bts;
	struct stk_map live;   /* block address (mapping: live_map_key) -> a: size, b: backtrace */
	struct live_maps maps; /* the pieces of the anonymous mappings in live */
	struct live_maps rsv;  /* address space reserved, not memory (live_is_reserve) */
	struct stk_map sites;  /* backtrace -> a: bytes allocated, b: allocations */
	struct stk_map events; /* type id << 32 | backtrace -> a: events */
	struct cpu_prof *cpu;  /* the CPU samples */
	uint64_t mem_events;
	int64_t first_ns, last_ns;
	bool any;
};

static int pp_make(struct pp_heap *h, const struct role_res *d)
{
	struct stk_ent *e;
	bool fresh;

	e = stk_map_get(&h->sites, d->bt, &fresh);
	if (!e)
		return -ENOMEM;
	e->a += d->size;
	e->b++;
	e = stk_map_get(&h->live, d->key, &fresh);
	if (!e)
		return -ENOMEM;
	e->a = d->size; /* made again while live: its release was not seen, as leaks.c */
	e->b = d->bt;
	return 0;
}

/* A piece of mapping c->origin unmapped: it shrinks by what it lost, or goes (as leaks.c). */
static int pp_cut(void *arg, const struct live_cut *c)
{
	struct pp_heap *h = arg;
	struct stk_ent *e = stk_map_find(&h->live, c->origin);

	if (!e)
		return 0;
	if (c->hi - c->lo < e->a)
		e->a -= c->hi - c->lo;
	else
		stk_map_del(&h->live, e);
	return 0;
}

static int pp_unmap(struct pp_heap *h, uint64_t addr, uint64_t size)
{
	int n = live_maps_unmap(&h->maps, addr, size, pp_cut, h);

	if (n >= 0)
		n = live_rsv_cut(&h->rsv, addr, size);
	return n < 0 ? n : 0;
}

/* A mapping made at [d->key, d->key + d->size), over whatever was there. */
static int pp_map_at(struct pp_heap *h, const struct role_res *d)
{
	struct role_res m = *d;
	int ret = pp_unmap(h, d->key, d->size);

	if (ret)
		return ret;
	m.key = live_map_key(&h->maps);
	if (live_maps_add(&h->maps, d->key, d->size, m.key))
		return -ENOMEM;
	return pp_make(h, &m);
}

/* A mapping, a reservation (not memory), or an mprotect: each reserved part it covers (as leaks.c). */
static int pp_map(struct pp_heap *h, const struct role_res *d)
{
	struct live_piece *v;
	size_t n;
	int ret;

	if (live_is_reserve(d->kind)) {
		ret = pp_unmap(h, d->key, d->size);
		return ret ? ret : live_rsv_add(&h->rsv, d->key, d->size);
	}
	if (d->kind != RIP_MEM_MPROTECT)
		return pp_map_at(h, d);
	ret = live_rsv_take(&h->rsv, d->key, d->size, &v, &n);
	for (size_t i = 0; !ret && i < n; i++) {
		struct role_res m = *d;

		m.key = v[i].start;
		m.size = v[i].end - v[i].start;
		ret = pp_map_at(h, &m);
	}
	free(v);
	return ret;
}

static int pp_release(struct pp_heap *h, uint64_t addr)
{
	struct stk_ent *e = stk_map_find(&h->live, addr);
	const struct live_piece *p;

	if (e) {
		stk_map_del(&h->live, e);
		return 0;
	}
	/* a trace from before mem:unmap: munmap was a mem:free of the start */
	p = live_maps_at(&h->maps, addr);
	return p ? pp_unmap(h, p->start, p->end - p->start) : 0;
}

/* Memory made and released as leaks.c follows it (LK_MEM). */
static int pp_mem(struct pp_heap *h, const struct role_res *d)
{
	switch (d->role) {
	case ROLE_MEM_ALLOC:
		h->mem_events++;
		if (!d->key)
			return 0;
		return live_is_mapping(d->kind) || live_is_reserve(d->kind) ? pp_map(h, d) :
									      pp_make(h, d);
	case ROLE_MEM_UNMAP:
		h->mem_events++;
		return pp_unmap(h, d->key, d->size);
	case ROLE_MEM_FREE:
		h->mem_events++;
		return d->key ? pp_release(h, d->key) : 0;
	case ROLE_MEM_REALLOC:
		h->mem_events++;
		if (d->old) {
			int ret = pp_release(h, d->old);

			if (ret)
				return ret;
		}
		return d->key ? pp_make(h, d) : 0;
	}
	return 0;
}

static int pp_read(struct pp_heap *h, struct evs *s, char *err, size_t errlen)
{
	struct evs_event e;
	struct role_res d;
	int ret;

	ret = role_bind(&h->r, evs_types(s), err, errlen);
	if (ret)
		return ret;
	if (cpu_new(evs_types(s), &h->cpu)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	evs_set_lazy(s, true);
	while ((ret = evs_next_fast(s, &e, err, errlen)) > 0) {
		int role = role_of(&h->r, &e), fail = 0;
		uint32_t bt = 0;
		struct stk_ent *c;
		bool fresh;

		if (!h->any)
			h->first_ns = e.ns;
		h->any = true;
		h->last_ns = e.ns;
		fail = cpu_event(h->cpu, &e);
		if (fail > 0) {
			fail = 0; /* a sample: counted there, and as an event below */
		} else if (fail) {
			snprintf(err, errlen, "out of memory");
			return fail;
		}
		if (role == ROLE_BT) {
			fail = stk_bt_define(&h->bts, (uint32_t)role_val(&h->r, &e, ROLE_BT_ID), &e);
		} else {
			if (role_is_resource(role)) {
				role_decode(&h->r, &e, role, &d);
				bt = d.bt;
				fail = pp_mem(h, &d);
			}
			c = stk_map_get(&h->events, (uint64_t)e.type->id << 32 | bt, &fresh);
			if (c)
				c->a++;
			else
				fail = -ENOMEM;
		}
		if (fail) {
			snprintf(err, errlen, "out of memory");
			return fail;
		}
	}
	return ret;
}

static int pp_heap_profile(struct pp_pass *ps, struct pp_heap *h)
{
	struct stk_map inuse = { 0 }; /* backtrace -> a: bytes, b: blocks */
	const struct stk_map *which;
	uint64_t *keys = NULL;
	size_t n;
	int ret = -ENOMEM;

	for (size_t i = 0; i < h->live.cap; i++) {
		const struct stk_ent *l = &h->live.v[i];
		struct stk_ent *g;
		bool fresh;

		if (!l->used)
			continue;
		g = stk_map_get(&inuse, l->b, &fresh);
		if (!g)
			goto out;
		g->a += l->a;
		g->b++;
	}
	if (!ps->o->leaks &&
	    (pp_sample_type(ps->p, "alloc_objects", "count") ||
	     pp_sample_type(ps->p, "alloc_space", "bytes")))
		goto out;
	if (pp_sample_type(ps->p, "inuse_objects", "count") ||
	    pp_sample_type(ps->p, "inuse_space", "bytes") ||
	    pp_default_type(ps->p, "inuse_space") || pp_period(ps->p, "space", "bytes", 0))
		goto out;
	which = ps->o->leaks ? &inuse : &h->sites;
	keys = pp_keys(which, &n);
	if (!keys)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct stk_ent *a = stk_map_find(&h->sites, keys[i]);
		const struct stk_ent *u = stk_map_find(&inuse, keys[i]);
		int64_t v[4], *vp = v;
		long k;

		if (ps->o->through) {
			uint32_t bt = (uint32_t)keys[i], nf = 0;
			const uint64_t *f = bt ? stk_bt(&h->bts, bt, &nf) : NULL;
			int in = thr_want(ps->o->through, ps->sym, bt, f, nf);

			if (in < 0)
				goto out;
			if (!in)
				continue;
		}
		if (!ps->o->leaks) {
			*vp++ = a ? (int64_t)a->b : 0;
			*vp++ = a ? (int64_t)a->a : 0;
		}
		*vp++ = u ? (int64_t)u->b : 0;
		*vp++ = u ? (int64_t)u->a : 0;
		k = pp_bt_stack(ps, &h->bts, (uint32_t)keys[i]);
		if (k < 0)
			goto out;
		if (pp_sample(ps->p, ps->stack, (size_t)k, v, NULL, 0))
			goto out;
	}
	ret = 0;
out:
	free(keys);
	stk_map_free(&inuse);
	return ret;
}

static int pp_events_profile(struct pp_pass *ps, struct pp_heap *h)
{
	const struct ev_types *types = evs_types(ps->s);
	uint64_t *keys;
	size_t n;
	int ret = -ENOMEM;

	if (pp_sample_type(ps->p, "events", "count") || pp_period(ps->p, "events", "count", 1))
		return -ENOMEM;
	keys = pp_keys(&h->events, &n);
	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct stk_ent *c = stk_map_find(&h->events, keys[i]);
		uint32_t id = (uint32_t)(keys[i] >> 32), bt = (uint32_t)keys[i];
		const char *name = id < EV_MAX_TYPES ? types->t[id].name : "?";
		struct pp_label l = { .key = "event", .str = name };
		int64_t v = (int64_t)c->a;
		long k;

		if (bt) {
			k = pp_bt_stack(ps, &h->bts, bt);
		} else {
			int64_t loc = pp_made_up(ps, name);

			k = loc < 0 ? -ENOMEM : 1;
			if (k > 0) {
				size_t one = 0;

				if (pp_push(ps, &one, (uint64_t)loc))
					k = -ENOMEM;
			}
		}
		if (k < 0 || pp_sample(ps->p, ps->stack, (size_t)k, &v, &l, 1))
			goto out;
	}
	ret = 0;
out:
	free(keys);
	return ret;
}

/* CPU samples by stack: samples and CPU time (a sample stands for 1/rate s of CPU). */
static int pp_cpu_profile(struct pp_pass *ps, struct pp_heap *h)
{
	uint32_t hz = evs_file_hdr(ps->s)->sample_hz;
	int64_t period = 1000000000 / (hz ? hz : 100);
	const struct cpu_stack *st;
	size_t n;

	if (pp_sample_type(ps->p, "samples", "count") ||
	    pp_sample_type(ps->p, "cpu", "nanoseconds") || pp_default_type(ps->p, "cpu") ||
	    pp_period(ps->p, "cpu", "nanoseconds", period))
		return -ENOMEM;
	st = cpu_stacks(h->cpu, &n);
	if (!st)
		return -ENOMEM;
	ps->cpu = true;
	for (size_t i = 0; i < n; i++) {
		int64_t v[2] = { (int64_t)st[i].count, (int64_t)st[i].count * period };
		size_t k = 0;

		/* leaf first: the interrupted IP, then the return addresses */
		for (uint32_t j = 0; j < st[i].n; j++) {
			int64_t id = pp_frame(ps, st[i].pcs[j], j == 0);

			if (id < 0 || (id && pp_push(ps, &k, (uint64_t)id)))
				return -ENOMEM;
		}
		if (!k) {
			int64_t id = pp_made_up(ps, "[empty sample]");

			if (id < 0 || pp_push(ps, &k, (uint64_t)id))
				return -ENOMEM;
		}
		if (pp_sample(ps->p, ps->stack, k, v, NULL, 0))
			return -ENOMEM;
	}
	return 0;
}

/* As rip ps names them. */
static const char *pp_state_name(uint32_t state, uint32_t kind)
{
	switch (state) {
	case RIP_SLOT_RUNNING:
		return "running";
	case RIP_SLOT_WAITING:
		return "waiting";
	case RIP_SLOT_EXITED:
		return kind == RIP_KIND_CORO ? "destroyed" : "exited";
	}
	return "free";
}

static int pp_threads_profile(struct pp_pass *ps, char *err, size_t errlen)
{
	struct rr_file f = { .fd = -1 };
	struct rr_slots sl = { 0 };
	struct timespec now;
	int ret;

	ret = rr_open_target(evs_source(ps->s), &f, err, errlen);
	if (ret)
		return ret;
	ret = rr_read_slots(&f, &sl, err, errlen);
	if (ret)
		goto close;
	ret = -ENOMEM;
	snprintf(err, errlen, "out of memory");
	if (pp_sample_type(ps->p, "threads", "count") || pp_period(ps->p, "threads", "count", 1))
		goto free_slots;
	ps->snaps = true;
	for (size_t i = 0; i < sl.n; i++) {
		const struct rr_slot *t = &sl.v[i];
		const char *kind = t->kind == RIP_KIND_CORO ? "coroutine" : "thread";
		char name[RIP_NAME_MAX + 1];
		struct pp_label l[4] = {
			{ .key = "thread", .str = name },
			{ .key = "tid", .num = t->tid },
			{ .key = "kind", .str = kind },
			{ .key = "state", .str = pp_state_name(t->state, t->kind) },
		};
		int64_t one = 1, id;
		size_t k = 0;

		if (t->state == RIP_SLOT_EXITED && !ps->o->all)
			continue;
		memcpy(name, t->name, RIP_NAME_MAX);
		name[RIP_NAME_MAX] = 0;
		if (!name[0])
			snprintf(name, sizeof(name), "%s %" PRIu32, kind, t->index);
		/* newest first; a position repeated in a row counts once, as rip ps shows it */
		for (uint32_t j = t->n; j-- > 0;) {
			if (j + 1 < t->n && t->ip[j] == t->ip[j + 1])
				continue;
			id = pp_frame(ps, t->ip[j], false);
			if (id < 0 || (id && pp_push(ps, &k, (uint64_t)id)))
				goto free_slots;
		}
		if (!k) {
			id = pp_made_up(ps, "[no snaps]");
			if (id < 0 || pp_push(ps, &k, (uint64_t)id))
				goto free_slots;
		}
		if (pp_sample(ps->p, ps->stack, k, &one, l, 4))
			goto free_slots;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	ps->res->start_ns = ps->res->end_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	pp_time(ps->p, ps->res->start_ns, 0);
	ret = 0;
	err[0] = 0;
free_slots:
	rr_slots_free(&sl);
close:
	rr_close(&f);
	return ret;
}

const char *pp_kind_name(enum pp_kind k)
{
	static const char *const names[] = { "auto", "heap", "threads", "events", "cpu" };

	return k <= PP_CPU ? names[k] : "?";
}

int pp_export(struct evs *s, const struct pp_opts *o, struct pb_buf *out, struct pp_result *res,
	      char *err, size_t errlen)
{
	struct pp_pass ps = { .o = o, .s = s, .res = res };
	struct pp_heap h = { 0 };
	struct pb_buf raw = { 0 };
	enum pp_kind kind = o->kind;
	int ret;

	*res = (struct pp_result){ 0 };
	ret = pp_new(&ps.p);
	if (ret) {
		snprintf(err, errlen, "out of memory");
		return ret;
	}
	if (kind == PP_THREADS && evs_is_trace(s)) {
		snprintf(err, errlen, "%s: a recorded trace has no threads' positions: a threads "
			 "profile is of a ring file or a pid", evs_source(s));
		ret = -EINVAL;
		goto out;
	}
	if (kind != PP_THREADS) {
		ret = pp_read(&h, s, err, errlen);
		if (ret)
			goto out;
	}
	if (kind == PP_AUTO)
		kind = h.mem_events		? PP_HEAP
		       : cpu_samples(h.cpu) ? PP_CPU
		       : evs_is_trace(s)    ? PP_EVENTS
					    : PP_THREADS;
	res->kind = kind;
	if (o->through && kind != PP_HEAP) {
		snprintf(err, errlen, "--through is for heap profiles (of rip run --mem), not for "
			 "a profile of %s", pp_kind_name(kind));
		ret = -EINVAL;
		goto out;
	}
	if (o->leaks && kind != PP_HEAP) {
		/* the source chose another profile: --leaks would be dropped unsaid */
		snprintf(err, errlen,
			 "--leaks is for heap profiles (of rip run --mem), not for a "
			 "profile of %s",
			 pp_kind_name(kind));
		ret = -EINVAL;
		goto out;
	}
	if (stk_sym_open(s, o->sysroot, o->debug_dir, &ps.sym, res->sym_err,
			 sizeof(res->sym_err))) {
		res->no_symbols = true;
		ps.sym = NULL;
	}
	ret = evs_modules(s, &ps.mods, &ps.nmods, err, errlen);
	if (ret) {
		ps.mods = NULL;
		ps.nmods = 0;
	}
	ret = pp_mappings(&ps);
	if (ret)
		goto nomem;
	if (kind != PP_THREADS) {
		int64_t off = evs_file_hdr(s)->realtime_offset;

		res->start_ns = h.first_ns + off;
		res->end_ns = h.last_ns + off;
		pp_time(ps.p, res->start_ns, h.last_ns - h.first_ns);
	}
	if (kind == PP_HEAP)
		ret = pp_heap_profile(&ps, &h);
	else if (kind == PP_CPU)
		ret = pp_cpu_profile(&ps, &h);
	else if (kind == PP_EVENTS)
		ret = pp_events_profile(&ps, &h);
	else
		ret = pp_threads_profile(&ps, err, errlen);
	if (!ret && o->through) {
		ret = thr_scan(o->through, ps.sym, &h.bts); /* patterns on no stack at all */
		for (size_t i = 0; !ret && i < thr_count(o->through); i++) {
			char c[300];

			snprintf(c, sizeof(c), "only the stacks through --through=%s",
				 thr_info(o->through, i)->pat);
			ret = pp_comment(ps.p, c);
		}
	}
	if (ret == -ENOMEM)
		goto nomem;
	if (ret)
		goto out;
	if (pp_comment(ps.p, "made by rip export --format=pprof") || pp_encode(ps.p, &raw) ||
	    pb_gzip(raw.p, raw.len, out))
		goto nomem;
	res->samples = pp_nsamples(ps.p);
	res->locations = ps.p->nlocs;
	evs_totals(s, &res->tot);
	ret = 0;
	goto out;
nomem:
	ret = -ENOMEM;
	snprintf(err, errlen, "out of memory");
out:
	pb_buf_free(&raw);
	if (ps.sym)
		rip_sym_free(ps.sym);
	free(ps.mapid);
	free(ps.stack);
	stk_map_free(&ps.skip);
	stk_map_free(&h.live);
	live_maps_free(&h.maps);
	live_maps_free(&h.rsv);
	stk_map_free(&h.sites);
	stk_map_free(&h.events);
	stk_bts_free(&h.bts);
	cpu_free(h.cpu);
	pp_free(ps.p);
	return ret;
}

int pp_kind_parse(const char *word, enum pp_kind *kind)
{
	static const char *const words[] = { [PP_HEAP] = "heap",
					     [PP_THREADS] = "threads",
					     [PP_EVENTS] = "events",
					     [PP_CPU] = "cpu" };

	for (int k = PP_HEAP; k <= PP_CPU; k++) {
		if (!strcmp(word, words[k])) {
			*kind = (enum pp_kind)k;
			return 0;
		}
	}
	return -EINVAL;
}
