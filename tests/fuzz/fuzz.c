/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz.c - the harnesses' shared part (fuzz.h): their private
 * directory and the walk of a source through every reader and pass, as the
 * commands drive them, rip dump's writer (analysis/dump.c) included.
 * Results are only looked at enough that nothing is optimised away and
 * every string and array a reader hands out is read to its end (so a bad
 * length or a missing NUL shows under ASan).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/calltree.h"
#include "analysis/cpu.h"
#include "analysis/fnstacks.h"
#include "analysis/follow.h"
#include "analysis/leakdiff.h"
#include "analysis/funcs.h"
#include "analysis/leaks.h"
#include "analysis/pagemap.h"
#include "analysis/report.h"
#include "analysis/top.h"
#include "read/evread.h"
#include "read/evsource.h"
#include "read/funcs.h"
#include "read/ringfile.h"
#include "read/trace.h"
#include "read/watch.h"
#include "record/tracew.h"
#include "analysis/dump.h"
#include "fuzz.h"

static char fz_dir[PATH_MAX];
/* what the walks computed: kept so that the reads cannot be dropped */
volatile uint64_t fz_sink;

/* The directory rip export --format=ctf writes a trace's copy into, beside fz_dir. */
static void fz_copy_dir(char *path, size_t len)
{
	snprintf(path, len, "%s.ctf", fz_dir);
}

static void fz_cleanup(void)
{
	char copy[PATH_MAX + 8];

	if (!fz_dir[0])
		return;
	fz_copy_dir(copy, sizeof(copy));
	fz_clear(copy);
	rmdir(copy);
	fz_clear(fz_dir);
	rmdir(fz_dir);
}

const char *fz_path(const char *name)
{
	static char path[PATH_MAX];

	if (!fz_dir[0]) {
		const char *t = getenv("TMPDIR");

		if (!t || !*t)
			t = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";
		snprintf(fz_dir, sizeof(fz_dir), "%s/rip-fuzz.XXXXXX", t);
		if (!mkdtemp(fz_dir))
			abort(); /* the harness cannot run at all: say so loudly */
		atexit(fz_cleanup);
	}
	snprintf(path, sizeof(path), "%s/%s", fz_dir, name);
	return path;
}

int fz_write(const char *path, const uint8_t *d, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	int ret = 0;

	if (fd < 0)
		return -errno;
	while (n) {
		ssize_t w = write(fd, d, n);

		if (w <= 0) {
			ret = w < 0 ? -errno : -EIO;
			break;
		}
		d += w;
		n -= (size_t)w;
	}
	close(fd);
	return ret;
}

void fz_clear(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
}

static int fz_packet(const struct ev_packet *p, void *arg)
{
	*(uint64_t *)arg += p->len + p->hdr.events;
	return 0;
}

void fz_ring(const char *path, void (*step)(void *arg), void *arg)
{
	char err[RR_ERR_MAX];
	struct rip_module *mods;
	struct rr_slots slots;
	struct ev_types *types;
	struct rr_file f;
	uint64_t h = 0;
	size_t n;

#define STEP()                  \
	do {                    \
		if (step)       \
			step(arg); \
	} while (0)
	if (rr_open(path, &f, err, sizeof(err)))
		return;
	STEP();
	if (!rr_read_slots(&f, &slots, err, sizeof(err))) {
		struct wt_unwinder *u = NULL;

		/* No modules: the watcher's records and copies are read, no file is opened. */
		wt_unwinder_new(NULL, 0, NULL, &u);
		for (size_t i = 0; i < slots.n; i++) {
			struct wt_thread t;
			uint64_t pcs[8];

			h += strlen(slots.v[i].name) + slots.v[i].n + slots.v[i].nsamp;
			if (wt_read(&f, slots.v[i].index, slots.v[i].tid, &t, err, sizeof(err)) > 0) {
				if (u)
					h += (uint64_t)wt_unwind(u, &t, pcs, 8);
				wt_thread_free(&t);
			}
		}
		wt_unwinder_free(u);
		/* rip ps --stacks: the shadow call stacks, grouped; the function table */
		{
			struct rfn_stack *st;
			struct fsg_groups g;
			uint64_t *tab;
			uint32_t ntab;

			struct rfn_reader rd;

			if (!rfn_read_stacks(&f, &slots, &st, err, sizeof(err))) {
				if (!fsg_group(&slots, st, true, &g)) {
					for (size_t i = 0; i < g.n; i++)
						h += g.v[i].n + g.v[i].st.depth + g.v[i].st.fn[0];
					fsg_groups_free(&g);
				}
				free(st);
			}
			/* as rip ps --stacks --threads reads them: one at a time, here backwards */
			if (!rfn_reader_open(&f, &rd, err, sizeof(err))) {
				struct rfn_stack one;

				for (size_t i = slots.n; i-- > 0;)
					if (!rfn_reader_get(&rd, &slots.v[i], &one, err, sizeof(err)))
						h += one.depth;
				rfn_reader_close(&rd);
			}
			if (!rfn_read_table(&f, &tab, &ntab, err, sizeof(err))) {
				for (uint32_t i = 0; i < ntab; i++)
					h ^= tab[i];
				free(tab);
			}
		}
		rr_slots_free(&slots);
	}
	STEP();
	{
		/* rip ps's stream: a change in the middle of it; coroutines read by their links. */
		struct rr_slot s, o;
		struct rr_cursor c;

		if (!rr_cursor_open(&f, &c, err, sizeof(err))) {
			for (uint32_t k = 0; rr_cursor_next(&c, &s, err, sizeof(err)) == 1; k++) {
				if (s.coro && rr_cursor_get(&c, s.coro - 1, &o, err, sizeof(err)) == 1)
					h += strlen(o.name);
				if (k == 1)
					STEP();
			}
			h += c.corrupt + c.changing;
			rr_cursor_close(&c);
		}
	}
	STEP();
	{
		/* rip top's pass, without symbols (module paths are the input's). */
		struct top_opts o = { .nosym = true };
		struct top *t;

		if (!f.legacy_raw && !top_new(&f, &o, &t, err, sizeof(err))) {
			for (int r = 0; r < 2 && !top_refresh(t, err, sizeof(err)); r++) {
				const struct top_view *v = top_view(t);

				top_sort(t, (enum top_sort)r);
				for (size_t i = 0; i < v->ngroups; i++) {
					const char *fn = v->groups[i].func;

					h += v->groups[i].threads + (fn ? strlen(fn) : 0);
				}
				STEP();
			}
			top_free(t);
		}
	}
	STEP();
	if (!rr_read_modules(&f, &mods, &n, err, sizeof(err))) {
		for (size_t i = 0; i < n; i++)
			h += strlen(mods[i].path);
		free(mods);
	}
	STEP();
	types = calloc(1, sizeof(*types));
	if (types && !ev_read_types(&f, types, err, sizeof(err))) {
		for (uint32_t r = 0; r < f.hdr.ev_rings && r < 64; r++) {
			struct ev_packet *pk;
			size_t npk, torn;

			if (ev_copy_ring(&f, types, r, &pk, &npk, &torn, err, sizeof(err)))
				continue;
			for (size_t i = 0; i < npk; i++)
				h += pk[i].len;
			ev_packets_free(pk, npk);
			STEP();
		}
		if (!ev_consumer_open(&f, err, sizeof(err)))
			for (uint32_t r = 0; r < f.hdr.ev_rings && r < 64; r++) {
				uint64_t lost = 0;

				ev_consume(&f, types, r, r & 1, fz_packet, &h, &lost, err,
					   sizeof(err));
				STEP();
			}
	}
#undef STEP
	free(types);
	rr_close(&f);
	fz_sink += h;
}

/* Read what an event points to, to its end. */
static uint64_t fz_event(const struct evs_event *e)
{
	uint64_t h = (uint64_t)e->ns ^ (uint64_t)e->wall_ns ^ e->ts;

	if (e->thread)
		h += strlen(e->thread);
	if (e->coro_name)
		h += strlen(e->coro_name);
	if (e->str)
		h += strlen(e->str);
	for (uint32_t i = 0; i < e->narr; i++)
		h ^= evs_arr(e, i);
	if (e->type)
		h += strlen(e->type->name);
	return h;
}

static void fz_bt_hook(void *arg, const uint8_t *frames, uint32_t n)
{
	uint64_t *h = arg;

	for (uint32_t i = 0; i < n; i++)
		*h += frames[i * 8] + frames[i * 8 + 7];
}

static void fz_span(void *arg, const struct fa_span *sp)
{
	uint64_t *h = arg;

	*h += (uint64_t)(sp->end_ns - sp->start_ns) + sp->depth + sp->id + strlen(sp->ctx->name);
}

/* rip dump and rip export: every event in order, its strings, the resources followed. */
static void fz_walk(const char *target)
{
	char err[RR_ERR_MAX];
	const struct rip_module *mods;
	struct stk_map leaked = { 0 };
	struct evs_totals tot;
	struct evs_event e;
	struct evs *s;
	struct xr *x = NULL;
	uint64_t h = 0;
	size_t nmods;
	struct fa *fa = NULL;
	struct fa_opts fao = { .max_depth = 4, .min_ns = 10, .per_ctx = true, .span = fz_span };
	int64_t last = 0;

	if (evs_open(target, &s, err, sizeof(err)))
		return;
	evs_set_bt_hook(s, fz_bt_hook, &h);
	if (xr_new(evs_types(s), true, &x, err, sizeof(err)))
		x = NULL;
	/* rip report --functions and rip export's spans: calls paired, per thread, filtered */
	fao.span_arg = &h;
	if (fa_new(evs_types(s), &fao, &fa))
		fa = NULL;
	{
		uint64_t *tab;
		uint32_t ntab;

		if (fa && !rfn_source_table(evs_source(s), &tab, &ntab, err, sizeof(err))) {
			fa_add_table(fa, tab, ntab);
			free(tab);
		}
	}
	while (evs_next(s, &e, err, sizeof(err)) > 0) {
		h += fz_event(&e);
		if (x && xr_event(x, &e) < 0)
			break;
		if (fa && fa_event(fa, &e) < 0)
			break;
		last = e.ns;
	}
	if (fa && !fa_end(fa, last)) {
		const struct fa_fn *fn;
		const struct fa_node *nodes;
		const struct fa_ctx *cx;
		size_t nfn, nn, nc;

		fn = fa_funcs(fa, &nfn);
		for (size_t i = 0; i < nfn; i++)
			h += fn[i].calls + (uint64_t)fn[i].total_ns + (uint64_t)fn[i].self_ns;
		nodes = fa_nodes(fa, &nn);
		for (size_t i = 0; i < nn; i++)
			h += nodes[i].parent + (uint64_t)nodes[i].self_ns;
		cx = fa_ctxs(fa, &nc);
		for (size_t i = 0; i < nc; i++)
			for (size_t k = 0; k < cx[i].nfn; k++)
				h += cx[i].fn[k].calls + strlen(cx[i].name);
	}
	fa_free(fa);
	if (x && !xr_leaked(x, &leaked))
		h += leaked.n;
	stk_map_free(&leaked);
	xr_free(x);
	evs_totals(s, &tot);
	h += tot.events + tot.discarded + tot.lost_packets + evs_nstreams(s);
	if (!evs_modules(s, &mods, &nmods, err, sizeof(err)))
		for (size_t i = 0; i < nmods; i++)
			h += strlen(mods[i].path);
	h += strlen(evs_file_hdr(s)->comm) + strlen(evs_source(s)) + evs_is_trace(s);
	evs_close(s);
	fz_sink += h;
}

/* The lazy fast path, as the passes read it: every field through evs_val. */
static void fz_walk_lazy(const char *target)
{
	char err[RR_ERR_MAX];
	struct evs_event e;
	struct evs *s;
	uint64_t h = 0;

	if (evs_open(target, &s, err, sizeof(err)))
		return;
	evs_set_lazy(s, true);
	while (evs_next_fast(s, &e, err, sizeof(err)) > 0) {
		h += (uint64_t)e.ns + (uint64_t)e.tid;
		for (uint32_t i = 0; i < e.plan->nfix; i++)
			h ^= evs_val(&e, i);
		if (e.str)
			h += strlen(e.str);
		for (uint32_t i = 0; i < e.narr; i++)
			h ^= evs_arr(&e, i);
	}
	evs_close(s);
	fz_sink += h;
}

/* rip dump's text (with wall-clock times) and JSON Lines, to /dev/null: the escapes */
static void fz_dump(const char *target)
{
	static FILE *null;
	char err[RR_ERR_MAX];
	struct evs *s;

	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	if (!evs_open(target, &s, err, sizeof(err))) {
		dump_write(s, null, DUMP_WALL, err, sizeof(err));
		evs_close(s);
	}
	if (!evs_open(target, &s, err, sizeof(err))) {
		dump_write(s, null, DUMP_JSON | DUMP_WALL, err, sizeof(err));
		evs_close(s);
	}
}

/*
 * rip export --format=ctf: a trace (or a chunk read alone) written again as
 * CTF, every packet checked as it is read (trace_w_copy), into a directory
 * removed after.
 */
static void fz_copy(const char *target)
{
	const struct trace_w_opts o = { .ctf = true };
	char err[RR_ERR_MAX], copy[PATH_MAX + 8];
	struct trace_r r;

	if (!trace_is_dir(target) || trace_r_open(target, &r, err, sizeof(err)))
		return;
	fz_copy_dir(copy, sizeof(copy));
	if (!trace_w_copy(&r, copy, &o, NULL, NULL, err, sizeof(err))) {
		fz_sink += 1;
		fz_clear(copy);
		rmdir(copy);
	}
	trace_r_close(&r);
}

void fz_passes(const char *target)
{
	char err[RR_ERR_MAX];
	struct evs *s;

	fz_copy(target);

	fz_walk(target);
	fz_walk_lazy(target);
	fz_dump(target);
	if (!evs_open(target, &s, err, sizeof(err))) {
		struct lk_opts o = { .to_ns = INT64_MAX };
		struct lk_opts o2 = { .sort = LK_SORT_COUNT, .time_range = true, .from_ns = 1,
				      .to_ns = INT64_MAX, .min_size = 16 };
		struct lk *lk = lk_new(&o), *lk2 = lk_new(&o2);
		struct ld_diff d;
		struct evs *s2;
		bool ran = lk && !lk_run(lk, s, err, sizeof(err));

		if (ran)
			fz_sink += lk->ngroups;
		if (lk2 && !evs_open(target, &s2, err, sizeof(err))) {
			if (!lk_run(lk2, s2, err, sizeof(err))) {
				fz_sink += lk2->ngroups;
				/* rip leaks --diff, without symbols: the second report against the first */
				if (ran && !ld_run(lk2, NULL, lk, NULL, &d)) {
					fz_sink += d.n + d.nnew;
					ld_free(&d);
				}
			}
			evs_close(s2);
		}
		lk_free(lk);
		lk_free(lk2);
		evs_close(s);
	}

	if (!evs_open(target, &s, err, sizeof(err))) {
		struct rp *rp = rp_new();

		if (rp && !rp_run(rp, s, err, sizeof(err)))
			fz_sink += rp->nthreads;
		rp_free(rp);
		evs_close(s);
	}
	if (!evs_open(target, &s, err, sizeof(err))) {
		struct ct_opts o = { 0 };
		struct ct *ct = ct_new(&o);

		if (ct && !ct_run(ct, s, err, sizeof(err)) && !ct_graph(ct, NULL, err, sizeof(err)))
			fz_sink += ct->nnodes + ct->nedges;
		ct_free(ct);
		evs_close(s);
	}
	if (!evs_open(target, &s, err, sizeof(err))) {
		struct pm_opts o = { 0 };
		struct pm *pm = pm_new(&o);

		if (pm && !pm_run(pm, s, err, sizeof(err)))
			fz_sink += 1;
		pm_free(pm);
		evs_close(s);
	}
	{
		/* rip top and rip export's CPU profile of a trace: the rip:sample events */
		struct cpu_prof *p;

		if (!cpu_read(target, &p, err, sizeof(err))) {
			const struct cpu_stack *st;
			const struct cpu_thread *th;
			size_t n;

			st = cpu_stacks(p, &n);
			for (size_t i = 0; st && i < n; i++)
				for (uint32_t k = 0; k < st[i].n; k++)
					fz_sink += st[i].pcs[k] ^ st[i].count;
			th = cpu_threads(p, &n);
			for (size_t i = 0; th && i < n; i++)
				fz_sink += th[i].ip + th[i].samples;
			cpu_free(p);
		}
	}
}
