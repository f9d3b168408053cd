/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/cmd-calltree.c - `rip calltree`: the call graph that leads to the
 * heap blocks a traced program never freed (with --all: to every block it
 * allocated), as a Graphviz dot file, or SVG through `dot -Tsvg`.
 *
 * Nodes are functions: the frames of the rip:bt stacks, symbolized (inline
 * chains included) and merged by name.  A node carries the bytes and
 * blocks of every stack it is on (inclusive, counted once per stack however
 * often recursion repeats it) and of the stacks it ends (self); an edge
 * caller -> callee the bytes and blocks of the stacks that make that call.
 * To stay readable the graph keeps the functions that carry at least 1% of
 * the bytes (or --min-bytes, or the --top heaviest) and maps the others,
 * stack by stack, onto one "(others)" node, so every kept figure is exact.
 * Unreleased blocks come from analysis/leaks.c; --all makes its own pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rip/resource.h>

#include "analysis/leaks.h"
#include "read/consume.h"
#include "read/sym.h"
#include "analysis/stacks.h"
#include "tools/progress.h"
#include "tools/format.h"
#include "tools/tool.h"

static int cmd_calltree(int argc, char **argv);

static const struct rip_cmd cmd_calltree_def = {
	.name = "calltree",
	.run = cmd_calltree,
	.summary = "call graph of the unreleased (or all) allocations, as Graphviz dot",
	.usage = "usage: rip calltree [options] TRACE-OR-TARGET [-o FILE.dot]\n"
		 "\n"
		 "Read the memory events of a trace (rip run --mem) and write the call graph\n"
		 "that leads to the heap blocks never freed: one node per function of the\n"
		 "backtraces (symbolized, merged by function), an edge per caller -> callee,\n"
		 "with the bytes and blocks below each node (inclusive) and through each\n"
		 "edge.  Functions under 1% of the bytes are collapsed into one \"(others)\"\n"
		 "node; every figure stays exact.  TRACE-OR-TARGET is a trace directory, a\n"
		 "pid or a ring file.\n"
		 "\n"
		 "  -o, --output=FILE     write to FILE (default, or -: standard output)\n"
		 "  -a, --all             every allocation made, freed or not\n"
		 "  -n, --top=N           keep the N heaviest functions (instead of >= 1%)\n"
		 "  -m, --min-bytes=N     keep the functions with N bytes or more (instead of\n"
		 "                        >= 1%; k, m, g suffixes); with --top, both must hold\n"
		 "      --svg             write SVG: run Graphviz's dot -Tsvg on the graph\n"
		 "      --sysroot=DIR     find the traced host's binaries under DIR\n"
		 "      --debug-dir=DIR   look for separate debug files in DIR first\n"
		 "  -h, --help            this text\n"
		 "\n"
		 "Exit status: 0 the graph was written, 1 failure (no such trace, corrupt\n"
		 "trace, --svg without Graphviz), 2 usage error.\n",
};

RIP_COMMAND(cmd_calltree_def);

#define CT_MAX_FRAMES 8	     /* inline chain of one address */
#define CT_LABEL_MAX 60	     /* longer function names are cut in labels (full in tooltip) */
#define CT_NONE UINT32_MAX

struct ct_opts {
	bool all, svg, top_set, min_set;
	uint64_t top, min_bytes;
	const char *out, *sysroot, *debug_dir, *target;
};

/* A stack and what it allocated. */
struct ct_group {
	uint32_t bt;
	uint64_t count, bytes;
	size_t path, npath; /* node ids, outermost first, in ct.path */
};

struct ct_node {
	char *name;
	uint64_t bytes, count;	     /* inclusive */
	uint64_t self_bytes, self_count;
	uint32_t stamp;		     /* last group + 1 that counted it */
	uint32_t map;		     /* id in the pruned graph */
	bool kept;
};

struct ct_edge {
	uint32_t from, to;
	uint64_t bytes, count;
	uint32_t stamp;
};

/* Open addressing, u64 key -> u32 value (an index); cap a power of 2. */
struct ct_map {
	uint64_t *keys;
	uint32_t *vals; /* CT_NONE: empty */
	size_t cap, n;
};

struct ct {
	struct ct_opts o;
	struct evs *s;
	struct lk *lk;
	struct rip_sym *sym;
	struct evs_totals tot;
	uint64_t events;
	/* the groups */
	struct ct_group *g;
	size_t ng, gcap;
	struct ct_map gmap; /* --all: bt -> group */
	/* --all: backtraces read from the trace */
	struct ct_map btmap; /* id -> index in bts */
	struct { size_t off; uint32_t n; } *bts;
	size_t nbts, btcap;
	uint64_t *frames;
	size_t nframes, fcap;
	/* the graph */
	struct ct_node *nodes;
	size_t nn, ncap;
	struct ct_map names; /* hash of name -> node (collisions chained by probing) */
	uint32_t *path;
	size_t npath, pcap;
	struct ct_edge *edges;
	size_t ne, ecap;
	struct ct_map emap; /* from << 32 | to -> edge */
	uint64_t total_bytes, total_count;
};

/* ---- small containers ---------------------------------------------------------------- */

static int ct_grow(void *pp, size_t *cap, size_t need, size_t size)
{
	void **p = pp;
	size_t ncap = *cap ? *cap : 16;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*p, ncap * size);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = ncap;
	return 0;
}

static size_t ct_hash(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

static int ct_map_init(struct ct_map *m)
{
	m->cap = 64;
	m->n = 0;
	m->keys = malloc(m->cap * sizeof(*m->keys));
	m->vals = malloc(m->cap * sizeof(*m->vals));
	if (!m->keys || !m->vals)
		return -ENOMEM;
	memset(m->vals, 0xff, m->cap * sizeof(*m->vals));
	return 0;
}

static void ct_map_free(struct ct_map *m)
{
	free(m->keys);
	free(m->vals);
}

/* The slot of key, or of the empty slot where it would go. */
static size_t ct_map_slot(const struct ct_map *m, uint64_t key)
{
	size_t h = ct_hash(key, m->cap);

	while (m->vals[h] != CT_NONE && m->keys[h] != key)
		h = (h + 1) & (m->cap - 1);
	return h;
}

static uint32_t ct_map_get(const struct ct_map *m, uint64_t key)
{
	return m->vals[ct_map_slot(m, key)];
}

static int ct_map_put(struct ct_map *m, uint64_t key, uint32_t val)
{
	size_t h;

	if ((m->n + 1) * 2 > m->cap) {
		struct ct_map nm = { .cap = m->cap * 2 };

		nm.keys = malloc(nm.cap * sizeof(*nm.keys));
		nm.vals = malloc(nm.cap * sizeof(*nm.vals));
		if (!nm.keys || !nm.vals) {
			ct_map_free(&nm);
			return -ENOMEM;
		}
		memset(nm.vals, 0xff, nm.cap * sizeof(*nm.vals));
		for (size_t i = 0; i < m->cap; i++) {
			if (m->vals[i] == CT_NONE)
				continue;
			h = ct_map_slot(&nm, m->keys[i]);
			nm.keys[h] = m->keys[i];
			nm.vals[h] = m->vals[i];
		}
		nm.n = m->n;
		ct_map_free(m);
		*m = nm;
	}
	h = ct_map_slot(m, key);
	if (m->vals[h] == CT_NONE)
		m->n++;
	m->keys[h] = key;
	m->vals[h] = val;
	return 0;
}

static uint64_t ct_str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* ---- the groups ---------------------------------------------------------------------- */

static int ct_group_add(struct ct *ct, uint32_t bt, uint64_t count, uint64_t bytes)
{
	if (ct_grow(&ct->g, &ct->gcap, ct->ng + 1, sizeof(*ct->g)))
		return -ENOMEM;
	ct->g[ct->ng++] = (struct ct_group){ .bt = bt, .count = count, .bytes = bytes };
	ct->total_bytes += bytes;
	ct->total_count += count;
	return 0;
}

/* Unreleased blocks: analysis/leaks.c's groups. */
static int ct_leaks(struct ct *ct, char *err, size_t errlen)
{
	struct lk_opts lo = { .resources = LK_F_MEM };
	int ret;

	ct->lk = lk_new(&lo);
	if (!ct->lk)
		return -ENOMEM;
	ret = lk_run(ct->lk, ct->s, err, errlen);
	if (ret)
		return ret;
	ct->events = ct->lk->events;
	for (size_t i = 0; i < ct->lk->ngroups; i++) {
		const struct lk_group *g = &ct->lk->groups[i];

		if (g->res == LK_MEM && ct_group_add(ct, g->bt, g->count, g->bytes))
			return -ENOMEM;
	}
	return 0;
}

/* Field index of name in t, or -1. */
static int ct_field(const struct ev_type *t, const char *name)
{
	for (uint32_t i = 0; i < t->nfields; i++)
		if (!strcmp(t->fields[i].name, name))
			return (int)i;
	return -1;
}

enum { CT_T_NONE, CT_T_BT, CT_T_ALLOC, CT_T_REALLOC };

/* --all: every mem:alloc and every mem:realloc that made a block, by backtrace. */
static int ct_all(struct ct *ct, char *err, size_t errlen)
{
	const struct ev_types *types = evs_types(ct->s);
	static uint8_t role[EV_MAX_TYPES];
	static int fa[EV_MAX_TYPES][3]; /* addr, size, bt; for rip:bt: id */
	struct evs_event e;
	int ret;

	memset(role, 0, sizeof(role));
	for (uint32_t id = 0; id < EV_MAX_TYPES; id++) {
		const struct ev_type *t = &types->t[id];
		int r = CT_T_NONE;

		if (!t->valid)
			continue;
		if (!strcmp(t->name, "rip:bt"))
			r = CT_T_BT;
		else if (!strcmp(t->name, "mem:alloc"))
			r = CT_T_ALLOC;
		else if (!strcmp(t->name, "mem:realloc"))
			r = CT_T_REALLOC;
		if (r == CT_T_NONE)
			continue;
		if (r == CT_T_BT) {
			fa[id][0] = ct_field(t, "id");
			if (fa[id][0] < 0 || !t->array)
				goto bad;
		} else {
			fa[id][0] = ct_field(t, "addr");
			fa[id][1] = ct_field(t, "size");
			fa[id][2] = ct_field(t, "bt");
			if (fa[id][0] < 0 || fa[id][1] < 0 || fa[id][2] < 0)
				goto bad;
		}
		role[id] = (uint8_t)r;
		continue;
bad:
		snprintf(err, errlen,
			 "event type %s of this trace lacks the fields of rip/resource.h "
			 "(written by another version of the preload library?)",
			 t->name);
		return -EBADMSG;
	}
	if (ct_map_init(&ct->gmap) || ct_map_init(&ct->btmap))
		return -ENOMEM;
	while ((ret = evs_next(ct->s, &e, err, errlen)) == 1) {
		uint32_t id = e.type ? e.type->id : 0, bt, gi;
		int r = id < EV_MAX_TYPES ? role[id] : CT_T_NONE;

		ct->events++;
		if (r == CT_T_NONE)
			continue;
		if (r == CT_T_BT) {
			uint32_t bid = (uint32_t)e.v[fa[id][0]];

			if (!bid || ct_map_get(&ct->btmap, bid) != CT_NONE)
				continue; /* none, or defined already: the first one stands */
			if (ct_grow(&ct->bts, &ct->btcap, ct->nbts + 1, sizeof(*ct->bts)) ||
			    ct_grow(&ct->frames, &ct->fcap, ct->nframes + e.narr + 1,
				    sizeof(*ct->frames)) ||
			    ct_map_put(&ct->btmap, bid, (uint32_t)ct->nbts))
				return -ENOMEM;
			ct->bts[ct->nbts].off = ct->nframes;
			ct->bts[ct->nbts++].n = e.narr;
			for (uint32_t i = 0; i < e.narr; i++)
				ct->frames[ct->nframes++] = evs_arr(&e, i);
			continue;
		}
		if (!e.v[fa[id][0]])
			continue; /* a failed allocation, or realloc(p, 0) */
		bt = (uint32_t)e.v[fa[id][2]];
		gi = ct_map_get(&ct->gmap, bt);
		if (gi == CT_NONE) {
			if (ct_map_put(&ct->gmap, bt, (uint32_t)ct->ng) || ct_group_add(ct, bt, 0, 0))
				return -ENOMEM;
			gi = (uint32_t)ct->ng - 1;
		}
		ct->g[gi].count++;
		ct->g[gi].bytes += e.v[fa[id][1]];
		ct->total_count++;
		ct->total_bytes += e.v[fa[id][1]];
	}
	return ret;
}

static const uint64_t *ct_bt(const struct ct *ct, uint32_t id, uint32_t *n)
{
	uint32_t i;

	if (!id)
		return NULL;
	if (ct->lk)
		return lk_bt(ct->lk, id, n);
	i = ct_map_get(&ct->btmap, id);
	if (i == CT_NONE)
		return NULL;
	*n = ct->bts[i].n;
	return ct->frames + ct->bts[i].off;
}

/* ---- symbols ------------------------------------------------------------------------- */

static int ct_symbols(struct ct *ct)
{
	char err[RR_ERR_MAX];
	int ret = stk_sym_open(ct->s, ct->o.sysroot, ct->o.debug_dir, &ct->sym, err,
			       sizeof(err));

	if (ret)
		tool_err("%s", err);
	return ret;
}

/* ---- the graph ----------------------------------------------------------------------- */

/* The node of name, made when new; CT_NONE when out of memory. */
static uint32_t ct_node(struct ct *ct, const char *name)
{
	uint64_t h = ct_str_hash(name);
	uint32_t id;

	/* names with the same hash are chained on h + 1, h + 2... */
	for (;; h++) {
		id = ct_map_get(&ct->names, h);
		if (id == CT_NONE)
			break;
		if (!strcmp(ct->nodes[id].name, name))
			return id;
	}
	if (ct_grow(&ct->nodes, &ct->ncap, ct->nn + 1, sizeof(*ct->nodes)))
		return CT_NONE;
	id = (uint32_t)ct->nn;
	ct->nodes[id] = (struct ct_node){ .name = strdup(name) };
	if (!ct->nodes[id].name || ct_map_put(&ct->names, h, id)) {
		free(ct->nodes[id].name);
		return CT_NONE;
	}
	ct->nn++;
	return id;
}

static int ct_push(struct ct *ct, uint32_t id)
{
	if (id == CT_NONE || ct_grow(&ct->path, &ct->pcap, ct->npath + 1, sizeof(*ct->path)))
		return -ENOMEM;
	ct->path[ct->npath++] = id;
	return 0;
}

/* The node name of one resolved frame. */
static const char *ct_frame_name(const struct rip_frame *f, uint64_t addr, char *buf, size_t len)
{
	if (f->func)
		return f->func;
	if (f->module)
		snprintf(buf, len, "%s+0x%" PRIx64, tool_base(f->module), f->offset);
	else
		snprintf(buf, len, "0x%" PRIx64, addr);
	return buf;
}

/* Each group's path of nodes, outermost first (a return address resolves to addr - 1). */
static int ct_paths(struct ct *ct)
{
	struct rip_frame fr[CT_MAX_FRAMES];
	char buf[RIP_MODULE_PATH_MAX + 32];

	for (size_t gi = 0; gi < ct->ng; gi++) {
		struct ct_group *g = &ct->g[gi];
		const uint64_t *pcs;
		uint32_t n = 0;

		g->path = ct->npath;
		pcs = ct_bt(ct, g->bt, &n);
		for (uint32_t i = n; pcs && i-- > 0;) {
			int k = ct->sym && pcs[i] ? rip_sym_lookup(ct->sym, pcs[i] - 1, fr,
								   CT_MAX_FRAMES)
						  : -1;
			const char *b;

			if (k <= 0) {
				memset(fr, 0, sizeof(*fr));
				k = 1;
			}
			/* frames of the preload library itself (an unwinder started in a hook) */
			b = tool_base(fr[k - 1].module);
			if (i + 1 < n && b && !strncmp(b, "librip-preload", 14))
				continue;
			for (int j = k; j-- > 0;)
				if (ct_push(ct, ct_node(ct, ct_frame_name(&fr[j], pcs[i], buf,
									  sizeof(buf)))))
					return -ENOMEM;
		}
		if (ct->npath == g->path &&
		    ct_push(ct, ct_node(ct, !g->bt ? "(no backtrace)"
					: pcs	? "(empty backtrace)"
						: "(backtrace not in the trace)")))
			return -ENOMEM;
		g->npath = ct->npath - g->path;
	}
	return 0;
}

static int ct_node_cmp(const void *a, const void *b, void *arg)
{
	const struct ct_node *n = arg;
	const struct ct_node *x = &n[*(const uint32_t *)a], *y = &n[*(const uint32_t *)b];

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int ct_edge_cmp(const void *a, const void *b)
{
	const struct ct_edge *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

/*
 * Inclusive figures of every function, the choice of the kept ones, then
 * the pruned graph: nodes renumbered heaviest first (the last one
 * "(others)" when anything was collapsed), edges from the mapped paths.
 */
static int ct_build(struct ct *ct, struct ct_node **out, size_t *nout)
{
	struct ct_node *pn;
	uint32_t *order, others = CT_NONE, stamp = 0;
	size_t nk = 0;

	for (size_t gi = 0; gi < ct->ng; gi++) {
		const struct ct_group *g = &ct->g[gi];
		struct ct_node *leaf = &ct->nodes[ct->path[g->path + g->npath - 1]];

		for (size_t i = 0; i < g->npath; i++) {
			struct ct_node *x = &ct->nodes[ct->path[g->path + i]];

			if (x->stamp == gi + 1)
				continue;
			x->stamp = (uint32_t)gi + 1;
			x->bytes += g->bytes;
			x->count += g->count;
		}
		leaf->self_bytes += g->bytes;
		leaf->self_count += g->count;
	}
	order = malloc((ct->nn + 1) * sizeof(*order));
	pn = calloc(ct->nn + 1, sizeof(*pn));
	if (!order || !pn) {
		free(order);
		free(pn);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < ct->nn; i++)
		order[i] = i;
	qsort_r(order, ct->nn, sizeof(*order), ct_node_cmp, ct->nodes);
	for (size_t r = 0; r < ct->nn; r++) {
		struct ct_node *x = &ct->nodes[order[r]];
		bool keep;

		if (ct->o.min_set || ct->o.top_set)
			keep = (!ct->o.min_set || x->bytes >= ct->o.min_bytes) &&
			       (!ct->o.top_set || nk < ct->o.top);
		else
			keep = x->bytes * 100 >= ct->total_bytes;
		x->kept = keep;
		if (keep) {
			x->map = (uint32_t)nk;
			pn[nk++] = (struct ct_node){ .name = x->name, .bytes = x->bytes,
						     .count = x->count, .self_bytes = x->self_bytes,
						     .self_count = x->self_count };
		}
	}
	free(order);
	if (nk < ct->nn) {
		others = (uint32_t)nk;
		pn[nk++] = (struct ct_node){ .name = "(others)" };
	}
	for (size_t i = 0; i < ct->nn; i++)
		if (!ct->nodes[i].kept)
			ct->nodes[i].map = others;
	if (ct_map_init(&ct->emap)) {
		free(pn);
		return -ENOMEM;
	}
	/* the mapped paths: runs of collapsed functions become one "(others)" */
	for (size_t gi = 0; gi < ct->ng; gi++) {
		const struct ct_group *g = &ct->g[gi];
		uint32_t prev = CT_NONE;
		bool in_others = false;

		stamp++;
		for (size_t i = 0; i < g->npath; i++) {
			uint32_t m = ct->nodes[ct->path[g->path + i]].map, e;
			uint64_t key;

			if (m == others && prev == others)
				continue;
			if (m == others && !in_others) {
				in_others = true;
				pn[others].bytes += g->bytes;
				pn[others].count += g->count;
			}
			if (i + 1 == g->npath && m == others) {
				pn[others].self_bytes += g->bytes;
				pn[others].self_count += g->count;
			}
			if (prev != CT_NONE) {
				key = (uint64_t)prev << 32 | m;
				e = ct_map_get(&ct->emap, key);
				if (e == CT_NONE) {
					if (ct_grow(&ct->edges, &ct->ecap, ct->ne + 1,
						    sizeof(*ct->edges)) ||
					    ct_map_put(&ct->emap, key, (uint32_t)ct->ne)) {
						free(pn);
						return -ENOMEM;
					}
					e = (uint32_t)ct->ne++;
					ct->edges[e] = (struct ct_edge){ .from = prev, .to = m };
				}
				if (ct->edges[e].stamp != stamp) {
					ct->edges[e].stamp = stamp;
					ct->edges[e].bytes += g->bytes;
					ct->edges[e].count += g->count;
				}
			}
			prev = m;
		}
	}
	if (ct->ne)
		qsort(ct->edges, ct->ne, sizeof(*ct->edges), ct_edge_cmp);
	*out = pn;
	*nout = nk;
	return 0;
}

/* ---- dot ----------------------------------------------------------------------------- */

/* s as the inside of a dot string, cut to max bytes (0: whole) with "...". */
static void ct_dot_str(FILE *out, const char *s, size_t max)
{
	size_t len = strlen(s);
	bool cut = max && len > max;

	for (size_t i = 0; i < (cut ? max : len); i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fputc('\\', out);
		if (c < 0x20)
			c = ' ';
		fputc(c, out);
	}
	if (cut)
		fputs("...", out);
}

static double ct_share(const struct ct *ct, uint64_t bytes)
{
	return ct->total_bytes ? (double)bytes / (double)ct->total_bytes : 0.0;
}

static void ct_dot(struct ct *ct, const struct ct_node *pn, size_t nk, FILE *out)
{
	const struct rip_file_hdr *h = evs_file_hdr(ct->s);
	const char *what = ct->o.all ? "allocated" : "never freed";
	char comm[sizeof(h->comm) + 1], b[64];

	memcpy(comm, h->comm, sizeof(h->comm));
	comm[sizeof(h->comm)] = 0;
	fputs("digraph calltree {\n", out);
	fprintf(out, "\tgraph [label=\"rip calltree: %s in %" PRIu64 " block%s %s, pid %d (",
		fmt_bytes_exact(ct->total_bytes, b, sizeof(b)), ct->total_count,
		ct->total_count == 1 ? "" : "s", what, (int)h->pid);
	ct_dot_str(out, comm, 0);
	fprintf(out, ")\", labelloc=t, fontname=\"sans-serif\", total_bytes=%" PRIu64
		     ", total_count=%" PRIu64 ", mode=\"%s\"];\n",
		ct->total_bytes, ct->total_count, ct->o.all ? "all" : "unreleased");
	fputs("\tnode [shape=box, style=\"rounded,filled\", fontname=\"sans-serif\"];\n"
	      "\tedge [fontname=\"sans-serif\", fontsize=10];\n",
	      out);
	for (size_t i = 0; i < nk; i++) {
		const struct ct_node *x = &pn[i];
		double sh = ct_share(ct, x->bytes);

		fprintf(out, "\tn%zu [label=\"", i);
		ct_dot_str(out, x->name, CT_LABEL_MAX);
		fprintf(out, "\\n%s (%.1f%%)\\nin %" PRIu64 " block%s", fmt_bytes_exact(x->bytes, b, sizeof(b)),
			sh * 100, x->count, x->count == 1 ? "" : "s");
		if (x->self_count)
			fprintf(out, "\\nself: %s", fmt_bytes_exact(x->self_bytes, b, sizeof(b)));
		fputs("\", tooltip=\"", out);
		ct_dot_str(out, x->name, 0);
		fputs("\", func=\"", out);
		ct_dot_str(out, x->name, 0);
		fprintf(out,
			"\", bytes=%" PRIu64 ", count=%" PRIu64 ", self_bytes=%" PRIu64
			", self_count=%" PRIu64 ", fillcolor=\"0.000 %.3f 1.000\"%s];\n",
			x->bytes, x->count, x->self_bytes, x->self_count, 0.08 + 0.6 * sh,
			strcmp(x->name, "(others)") || i + 1 != nk ? "" : ", style=\"rounded,dashed\"");
	}
	for (size_t i = 0; i < ct->ne; i++) {
		const struct ct_edge *e = &ct->edges[i];

		fprintf(out,
			"\tn%" PRIu32 " -> n%" PRIu32 " [label=\"%s\\n%" PRIu64 " block%s\", bytes=%" PRIu64
			", count=%" PRIu64 ", penwidth=%.2f];\n",
			e->from, e->to, fmt_bytes_exact(e->bytes, b, sizeof(b)), e->count,
			e->count == 1 ? "" : "s", e->bytes, e->count, 1 + 4 * ct_share(ct, e->bytes));
	}
	if (!nk)
		fprintf(out, "\tempty [shape=plaintext, style=\"\", label=\"no %s\"];\n",
			ct->o.all ? "allocations" : "unreleased allocations");
	fputs("}\n", out);
}

/* ---- output -------------------------------------------------------------------------- */

/* Is dot in PATH? */
static bool ct_have_dot(void)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t len = end ? (size_t)(end - path) : strlen(path);

		if (len && len + 5 < sizeof(buf)) {
			memcpy(buf, path, len);
			memcpy(buf + len, "/dot", 5);
			if (!access(buf, X_OK))
				return true;
		}
		path += len + (end ? 1 : 0);
	}
	return false;
}

static int ct_write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Pipe the dot text through dot -Tsvg into out (NULL: standard output). */
static int ct_svg(const char *text, size_t len, const char *out)
{
	char *argv[] = { "dot", "-Tsvg", "-o", (char *)out, NULL };
	void (*old)(int);
	int fds[2], st, ret;
	pid_t pid;

	if (!out)
		argv[2] = NULL;
	fflush(stdout);
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(fds[0]);
		close(fds[1]);
		return ret;
	}
	if (!pid) {
		if (dup2(fds[0], 0) < 0)
			_exit(127);
		execvp("dot", argv);
		_exit(127);
	}
	close(fds[0]);
	old = signal(SIGPIPE, SIG_IGN);
	ret = ct_write_all(fds[1], text, len);
	close(fds[1]);
	signal(SIGPIPE, old);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		tool_err("dot -Tsvg failed (%s %d)%s", WIFEXITED(st) ? "exit" : "signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
			 ret ? ": it did not read the whole graph" : "");
		return -EIO;
	}
	return ret;
}

static int ct_output(struct ct *ct, const char *text, size_t len)
{
	const char *path = ct->o.out && strcmp(ct->o.out, "-") ? ct->o.out : NULL;
	FILE *f;

	if (ct->o.svg)
		return ct_svg(text, len, path);
	if (!path) {
		if (fwrite(text, 1, len, stdout) != len || fflush(stdout)) {
			tool_err("write error: %s", strerror(errno));
			return -EIO;
		}
		return 0;
	}
	f = fopen(path, "w");
	if (!f) {
		tool_err("cannot create %s: %s", path, strerror(errno));
		return -errno;
	}
	if (fwrite(text, 1, len, f) != len || fflush(f) || ferror(f)) {
		tool_err("cannot write %s: %s", path, strerror(errno));
		fclose(f);
		return -EIO;
	}
	if (fclose(f)) {
		tool_err("cannot write %s: %s", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* ---- the command --------------------------------------------------------------------- */

enum { CT_OPT_SVG = 0x100, CT_OPT_SYSROOT, CT_OPT_DEBUG_DIR };

static int ct_parse(int argc, char **argv, struct ct_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "all", no_argument, NULL, 'a' },
		{ "top", required_argument, NULL, 'n' },
		{ "min-bytes", required_argument, NULL, 'm' },
		{ "svg", no_argument, NULL, CT_OPT_SVG },
		{ "sysroot", required_argument, NULL, CT_OPT_SYSROOT },
		{ "debug-dir", required_argument, NULL, CT_OPT_DEBUG_DIR },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:an:m:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case 'a':
			o->all = true;
			break;
		case 'n':
			if (tool_parse_size(optarg, &o->top) || !o->top)
				return tool_usage_error(&cmd_calltree_def,
							"--top wants a number > 0, not '%s'", optarg);
			o->top_set = true;
			break;
		case 'm':
			if (tool_parse_size(optarg, &o->min_bytes))
				return tool_usage_error(&cmd_calltree_def,
							"--min-bytes wants a size like 4096 or 1m, "
							"not '%s'",
							optarg);
			o->min_set = true;
			break;
		case CT_OPT_SVG:
			o->svg = true;
			break;
		case CT_OPT_SYSROOT:
			o->sysroot = optarg;
			break;
		case CT_OPT_DEBUG_DIR:
			o->debug_dir = optarg;
			break;
		case 'h':
			tool_help(&cmd_calltree_def);
			return -1;
		default:
			return tool_usage_error(&cmd_calltree_def, "unknown option '%s'",
						argv[optind - 1]);
		}
	}
	if (optind + 1 != argc)
		return tool_usage_error(&cmd_calltree_def,
					optind == argc ? "which trace? give a trace directory (rip "
							 "run --mem -o DIR), a pid or a ring file"
						       : "one TRACE-OR-TARGET only");
	o->target = argv[optind];
	return 0;
}

static void ct_free(struct ct *ct)
{
	for (size_t i = 0; i < ct->nn; i++)
		free(ct->nodes[i].name);
	free(ct->nodes);
	free(ct->g);
	free(ct->bts);
	free(ct->frames);
	free(ct->path);
	free(ct->edges);
	ct_map_free(&ct->gmap);
	ct_map_free(&ct->btmap);
	ct_map_free(&ct->names);
	ct_map_free(&ct->emap);
	if (ct->sym)
		rip_sym_free(ct->sym);
	lk_free(ct->lk);
	evs_close(ct->s);
}

static int cmd_calltree(int argc, char **argv)
{
	char err[RR_ERR_MAX + PATH_MAX];
	struct ct_node *pn = NULL;
	char *text = NULL;
	size_t nk = 0, tlen = 0;
	FILE *mem = NULL;
	struct ct ct;
	int ret, status = EXIT_FAIL;

	memset(&ct, 0, sizeof(ct));
	ret = ct_parse(argc, argv, &ct.o);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (ct.o.svg && !ct_have_dot()) {
		tool_err("--svg needs Graphviz's dot, which is not in PATH: install it (apt-get "
			 "install graphviz), or write the .dot file and render it elsewhere");
		return EXIT_FAIL;
	}
	ret = evs_open(ct.o.target, &ct.s, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		return EXIT_FAIL;
	}
	if (ct_map_init(&ct.names))
		goto nomem;
	progress_bar(ct.s, "rip calltree");
	ret = ct.o.all ? ct_all(&ct, err, sizeof(err)) : ct_leaks(&ct, err, sizeof(err));
	if (ret == -ENOMEM)
		goto nomem;
	if (ret) {
		tool_err("%s", err);
		goto out;
	}
	evs_totals(ct.s, &ct.tot);
	if (ct.tot.discarded || ct.tot.lost_packets || ct.tot.torn)
		tool_err("warning: this trace is incomplete (%" PRIu64 " events discarded, %" PRIu64
			 " packets lost): the graph may miss allocations%s",
			 ct.tot.discarded, ct.tot.lost_packets + ct.tot.torn,
			 ct.o.all ? "" : " or show freed ones");
	if (ct.ng && ct_symbols(&ct))
		goto out;
	if (ct_paths(&ct) || ct_build(&ct, &pn, &nk))
		goto nomem;
	mem = open_memstream(&text, &tlen);
	if (!mem)
		goto nomem;
	ct_dot(&ct, pn, nk, mem);
	if (fclose(mem))
		goto nomem;
	if (ct_output(&ct, text, tlen))
		goto out;
	status = EXIT_OK;
	goto out;
nomem:
	tool_err("out of memory");
out:
	free(text);
	free(pn);
	ct_free(&ct);
	return status;
}
