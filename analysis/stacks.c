/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/stacks.c - backtrace definitions, symbols and frame names for
 * the commands that fold stacks (see stacks.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <internal/grow.h>

#include "analysis/stacks.h"
#include "read/sym.h"

/* ---- backtraces ---------------------------------------------------------------------- */

int stk_bt_define(struct stk_bts *b, uint32_t id, const struct evs_event *e)
{
	struct stk_ent *ent;
	bool fresh;

	if (!id) {
		b->bad++;
		return 0;
	}
	ent = stk_map_get(&b->ids, id, &fresh);
	if (!ent)
		return -ENOMEM;
	if (!fresh) {
		/* The same stack defined again (another process image, a re-intern): fine. */
		if (ent->b != e->narr)
			b->bad++;
		else
			for (uint32_t i = 0; i < e->narr; i++)
				if (b->frames[ent->a + i] != evs_arr(e, i)) {
					b->bad++;
					break;
				}
		return 0;
	}
	if (RIP_GROW(b->frames, b->capframes, b->nframes + e->narr, 1024)) {
		stk_map_del(&b->ids, ent);
		return -ENOMEM;
	}
	ent->a = b->nframes;
	ent->b = e->narr;
	for (uint32_t i = 0; i < e->narr; i++)
		b->frames[b->nframes++] = evs_arr(e, i);
	return 0;
}

const uint64_t *stk_bt(const struct stk_bts *b, uint32_t id, uint32_t *n)
{
	static const uint64_t none[1];
	const struct stk_ent *e = id ? stk_map_find(&b->ids, id) : NULL;

	if (!e)
		return NULL;
	*n = (uint32_t)e->b;
	return b->frames ? b->frames + e->a : none;
}

void stk_bts_free(struct stk_bts *b)
{
	stk_map_free(&b->ids);
	free(b->frames);
	*b = (struct stk_bts){ 0 };
}

/* ---- symbols ------------------------------------------------------------------------- */

int stk_sym_open(struct evs *s, const char *sysroot, const char *debug_dir,
		 struct rip_sym **out, char *err, size_t errlen)
{
	struct rip_sym_opts so = { .sysroot = sysroot, .debug_dir = debug_dir };
	const struct rip_module *mods;
	struct rip_sym *sym;
	size_t n;
	int ret;

	ret = rip_sym_new(&so, &sym);
	if (ret) {
		snprintf(err, errlen, "cannot start the symbolizer: %s", strerror(-ret));
		return ret;
	}
	ret = evs_modules(s, &mods, &n, err, errlen);
	if (ret) {
		rip_sym_free(sym);
		return ret;
	}
	rip_sym_add_modules(sym, mods, n);
	/* a JIT's functions (its perf map), where it wrote one: the caller's only */
	if (evs_file_hdr(s))
		rip_sym_add_perfmap(sym, evs_file_hdr(s)->pid, evs_file_hdr(s)->start_ticks,
				    geteuid());
	*out = sym;
	return 0;
}

/* ---- symbols in the background -------------------------------------------------------- */

struct stk_warm {
	struct evs *s;
	struct rip_sym *sym;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* under lock: addresses given and not yet taken, and the stop request */
	uint64_t *q;
	size_t nq, capq;
	bool stop;
	/* the caller's thread only: addresses already given */
	struct stk_map seen;
};

static void *stk_warm_main(void *arg)
{
	struct stk_warm *w = arg;
	uint64_t *mine = NULL;
	size_t nmine = 0, capmine = 0;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		uint64_t *t;
		size_t c;

		while (!w->nq && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stop)
			break;
		/* take the whole queue: swap buffers, look up outside the lock */
		t = mine;
		mine = w->q;
		w->q = t;
		nmine = w->nq;
		c = capmine;
		capmine = w->capq;
		w->capq = c;
		w->nq = 0;
		pthread_mutex_unlock(&w->lock);
		for (size_t i = 0; i < nmine; i++) {
			struct rip_frame fr[STK_MAX_INLINE];

			/* relaxed: a hint only; the lock taken below orders the rest (pairs with stk_warm_stop) */
			if (__atomic_load_n(&w->stop, __ATOMIC_RELAXED))
				break;
			rip_sym_lookup(w->sym, mine[i] - 1, fr, STK_MAX_INLINE);
		}
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	free(mine);
	return NULL;
}

/* The bt hook: queue the addresses not queued before (the caller's thread). */
static void stk_warm_bt(void *arg, const uint8_t *frames, uint32_t n)
{
	struct stk_warm *w = arg;
	uint64_t fresh[RIP_ARRAY_MAX];
	uint32_t k = 0;

	for (uint32_t i = 0; i < n && i < RIP_ARRAY_MAX; i++) {
		uint64_t a;
		bool isnew = false;

		memcpy(&a, frames + (size_t)i * 8, 8);
		if (!a || !stk_map_get(&w->seen, a, &isnew) || !isnew)
			continue;
		fresh[k++] = a;
	}
	if (!k)
		return;
	pthread_mutex_lock(&w->lock);
	if (RIP_GROW(w->q, w->capq, w->nq + k, 1024)) {
		pthread_mutex_unlock(&w->lock);
		return; /* only a head start lost: the lookups happen later anyway */
	}

	memcpy(w->q + w->nq, fresh, k * sizeof(*fresh));
	w->nq += k;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

struct stk_warm *stk_warm_start(struct evs *s, const char *sysroot, const char *debug_dir)
{
	struct stk_warm *w = calloc(1, sizeof(*w));
	char err[256];

	if (!w)
		return NULL;
	w->s = s;
	if (stk_sym_open(s, sysroot, debug_dir, &w->sym, err, sizeof(err)))
		goto free_w;
	rip_sym_set_quiet(w->sym, true); /* what it resolves ahead is not asked for yet */
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	if (pthread_create(&w->thread, NULL, stk_warm_main, w))
		goto free_sym;
	evs_set_bt_hook(s, stk_warm_bt, w);
	return w;

free_sym:
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	rip_sym_free(w->sym);
free_w:
	free(w);
	return NULL;
}

struct rip_sym *stk_warm_stop(struct stk_warm *w)
{
	struct rip_sym *sym;

	if (!w)
		return NULL;
	evs_set_bt_hook(w->s, NULL, NULL);
	pthread_mutex_lock(&w->lock);
	/* atomic: the thread peeks at it between lookups without the lock (stk_warm_main) */
	__atomic_store_n(&w->stop, true, __ATOMIC_RELAXED);
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL); /* the symbolizer is ours again after this */
	sym = w->sym;
	rip_sym_set_quiet(sym, false);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w->q);
	stk_map_free(&w->seen);
	free(w);
	return sym;
}

/* The last component of a path. */
static const char *stk_base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * The names of the frames at pc (looked up as it is), outermost first;
 * shown names an address without a module.  0 for a frame of
 * librip-preload when skip_preload.
 */
static int stk_names(struct rip_sym *sym, uint64_t pc, uint64_t shown, bool skip_preload,
		     char names[][256], int max)
{
	struct rip_frame fr[STK_MAX_INLINE];
	int n = sym && shown ? rip_sym_lookup(sym, pc, fr, STK_MAX_INLINE) : -1;

	if (n <= 0) {
		memset(fr, 0, sizeof(*fr));
		n = 1;
	}
	if (skip_preload && fr[n - 1].module &&
	    !strncmp(stk_base(fr[n - 1].module), "librip-preload", 14))
		return 0;
	if (n > max)
		n = max;
	/* fr[] is innermost first: the real function is the last one, and comes first here. */
	for (int i = 0; i < n; i++) {
		const struct rip_frame *f = &fr[n - 1 - i];
		char *p;

		if (f->func)
			snprintf(names[i], 256, "%s", f->func);
		else if (f->module)
			snprintf(names[i], 256, "%s+0x%" PRIx64, stk_base(f->module), f->offset);
		else
			snprintf(names[i], 256, "0x%" PRIx64, shown);
		for (p = names[i]; *p; p++)
			if (*p == ';' || *p == '\n')
				*p = ':';
	}
	return n;
}

int stk_frame_names(struct rip_sym *sym, uint64_t ra, char names[][256], int max)
{
	return stk_names(sym, ra - 1, ra, true, names, max);
}

int stk_sample_names(struct rip_sym *sym, uint64_t pc, bool ip, char names[][256], int max)
{
	return stk_names(sym, ip || !pc ? pc : pc - 1, pc, false, names, max);
}
