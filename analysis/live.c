/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/live.c - the tables of what is live during a resource pass (see
 * live.h): entries of named tables made, the pieces of the mappings, and
 * the tables freed; and the reader thread of a pass on two threads.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <internal/relax.h>
#include <rip/abi.h>

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

int live_keys_in(const struct hmap *t, size_t esz, uint64_t lo, uint64_t hi, uint64_t **keys,
		 size_t *n)
{
	size_t k = 0;

	*keys = NULL;
	*n = 0;
	for (size_t i = 0; i < t->cap; i++) {
		const void *slot = hmap_slot(t, esz, i);
		uint64_t key = hmap_key(slot);

		if (!hmap_used(slot) || key < lo || key > hi)
			continue;
		if (!*keys) {
			*keys = malloc(t->n * sizeof(**keys));
			if (!*keys)
				return -ENOMEM;
		}
		if (k < t->n)
			(*keys)[k++] = key;
	}
	*n = k;
	return 0;
}

/* ---- the pieces of the mappings ---- */

static int live_maps_grow(struct live_maps *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct live_piece *v;

	if (m->n < m->cap)
		return 0;
	v = realloc(m->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	m->v = v;
	m->cap = cap;
	return 0;
}

/* The index of the first piece that ends after addr (m->n: none). */
static size_t live_maps_after(const struct live_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].end > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* The end of [start, start + len), at most 2^64 - 1. */
static uint64_t live_range_end(uint64_t start, uint64_t len)
{
	return start + len < start ? UINT64_MAX : start + len;
}

int live_maps_add(struct live_maps *m, uint64_t start, uint64_t len, uint64_t origin)
{
	uint64_t end = live_range_end(start, len);
	size_t i;

	if (end == start)
		return 0;
	if (live_maps_grow(m))
		return -ENOMEM;
	i = live_maps_after(m, start);
	/* the caller unmapped [start, end): whatever follows starts at end or later */
	memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof(m->v[0]));
	m->v[i] = (struct live_piece){ .start = start, .end = end, .origin = origin };
	m->n++;
	return 0;
}

const struct live_piece *live_maps_at(const struct live_maps *m, uint64_t addr)
{
	size_t i = live_maps_after(m, addr);

	return i < m->n && m->v[i].start == addr ? &m->v[i] : NULL;
}

int live_maps_unmap(struct live_maps *m, uint64_t start, uint64_t len, live_cut_fn *fn, void *arg)
{
	uint64_t end = live_range_end(start, len);
	size_t f = live_maps_after(m, start), l = f, w;
	struct live_piece head, tail;
	bool keep_head, keep_tail;
	int ret;

	while (l < m->n && m->v[l].start < end)
		l++;
	if (f == l || end == start)
		return 0;
	head = m->v[f];
	tail = m->v[l - 1];
	keep_head = head.start < start;
	keep_tail = tail.end > end;
	/* a hole in one piece makes it two: room first, so that a failure changes nothing */
	if (keep_head && keep_tail && f == l - 1 && live_maps_grow(m))
		return -ENOMEM;
	for (size_t i = f; i < l; i++) {
		const struct live_piece *p = &m->v[i];
		struct live_cut c = {
			.origin = p->origin,
			.start = p->start,
			.end = p->end,
			.lo = p->start > start ? p->start : start,
			.hi = p->end < end ? p->end : end,
		};

		ret = fn(arg, &c);
		if (ret)
			return ret;
	}
	ret = (int)(l - f);
	if (keep_head && keep_tail && f == l - 1) {
		memmove(&m->v[l + 1], &m->v[l], (m->n - l) * sizeof(m->v[0]));
		m->n++;
		l++;
	}
	/* the pieces [f, l) become [f, w): what stays of the first and of the last */
	w = f;
	if (keep_head) {
		m->v[w] = head;
		m->v[w++].end = start;
	}
	if (keep_tail) {
		m->v[w] = tail;
		m->v[w++].start = end;
	}
	memmove(&m->v[w], &m->v[l], (m->n - l) * sizeof(m->v[0]));
	m->n -= l - w;
	return ret;
}

void live_maps_free(struct live_maps *m)
{
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
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
	live_maps_free(&l->maps);
	live_maps_free(&l->smaps);
	stk_bts_free(&l->bts);
}

/* ---- the pass on two threads (live_run) ---------------------------------------------- */

#define LIVE_PIPE_NB 4		  /* batches: one being filled, one being handed on, two ahead */
#define LIVE_PIPE_SPIN_NS 200000 /* how long a side polls before it sleeps: a few batches */

/*
 * The batches are a ring: head counts those filled, tail those handed on,
 * batch i is b[i % LIVE_PIPE_NB].  Each side polls the other's counter for
 * a while before it sleeps: a wake-up through the kernel takes longer than
 * a batch does, and a pass that slept at every batch ran no faster than on
 * one thread.
 */
enum { LIVE_PIPE_PASS, LIVE_PIPE_READER }; /* who sleeps (waiting[], cond[]) */

struct live_pipe {
	struct live *l;
	struct evs *s;
	bool threaded; /* false: on the pass's thread, one batch at a time */
	pthread_t thread;
	/* atomics (see live_pipe_ready) */
	uint64_t head, tail;
	bool stop;	 /* the pass gave up: the reader stops at its next batch */
	bool end;	 /* the reader is done: ret and err say how */
	bool waiting[2]; /* a side is about to sleep, or sleeps, on cond[side] */
	pthread_mutex_t lock; /* what a sleeper and its waker agree on */
	pthread_cond_t cond[2];
	int ret;
	/* the reader's own until it is joined */
	struct live_trace tr;
	char err[512];
	struct live_batch b[]; /* LIVE_PIPE_NB, or 1 when not threaded */
};

/*
 * Can side who go on: the pass, a batch is filled or the reader ended; the
 * reader, a batch is free or the pass stopped.  seq_cst: the load of the
 * counter after the store of waiting[who] (live_pipe_wait) against the
 * store of the counter before the load of waiting[who] (live_pipe_wake):
 * one of the two sees the other's; and acquire, pairing with the release
 * of the counter, so that a batch's records are seen whole.
 */
static bool live_pipe_ready(struct live_pipe *p, int who)
{
	uint64_t head = __atomic_load_n(&p->head, __ATOMIC_SEQ_CST);
	uint64_t tail = __atomic_load_n(&p->tail, __ATOMIC_SEQ_CST);

	if (who == LIVE_PIPE_PASS)
		return head != tail || __atomic_load_n(&p->end, __ATOMIC_SEQ_CST);
	return head - tail < LIVE_PIPE_NB || __atomic_load_n(&p->stop, __ATOMIC_SEQ_CST);
}

/*
 * Side who waits until it can go on: polls for LIVE_PIPE_SPIN_NS, then
 * sleeps.  By time, not by count: a pause instruction takes from a few
 * cycles to over a hundred depending on the processor, and a side that
 * slept while the other was about to hand a batch over slept at most
 * batches (a wake-up through the kernel takes longer than a batch).
 */
static void live_pipe_wait(struct live_pipe *p, int who)
{
	int64_t end = 0;

	for (unsigned i = 0;; i++) {
		if (live_pipe_ready(p, who))
			return;
		rip_cpu_relax();
		if (i % 64 == 0) {
			int64_t now = rr_mono_ns();

			if (!end)
				end = now + LIVE_PIPE_SPIN_NS;
			else if (now > end)
				break;
		}
	}
	pthread_mutex_lock(&p->lock);
	__atomic_store_n(&p->waiting[who], true, __ATOMIC_SEQ_CST);
	while (!live_pipe_ready(p, who))
		pthread_cond_wait(&p->cond[who], &p->lock);
	__atomic_store_n(&p->waiting[who], false, __ATOMIC_RELAXED); /* only a hint to the waker */
	pthread_mutex_unlock(&p->lock);
}

/* Side who may go on now (a counter or flag was just stored, seq_cst): wake it if it sleeps. */
static void live_pipe_wake(struct live_pipe *p, int who)
{
	if (!__atomic_load_n(&p->waiting[who], __ATOMIC_SEQ_CST))
		return;
	/* under the lock: the sleeper either has not checked yet, or is inside pthread_cond_wait */
	pthread_mutex_lock(&p->lock);
	pthread_cond_signal(&p->cond[who]);
	pthread_mutex_unlock(&p->lock);
}

/* A batch to fill, NULL when the pass stopped (the reader's thread). */
static struct live_batch *live_pipe_claim(struct live_pipe *p)
{
	live_pipe_wait(p, LIVE_PIPE_READER);
	if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE))
		return NULL;
	return &p->b[p->head % LIVE_PIPE_NB]; /* head: only this thread stores it */
}

/* Hand the batch claimed on. */
static void live_pipe_publish(struct live_pipe *p)
{
	/* seq_cst (release at least): pairs with live_pipe_ready's loads */
	__atomic_store_n(&p->head, p->head + 1, __ATOMIC_SEQ_CST);
	live_pipe_wake(p, LIVE_PIPE_PASS);
}

/* Keep name in b (it has room: the caller checked), NULL stays NULL. */
static const char *live_pipe_name(struct live_batch *b, const char *name)
{
	size_t n;
	char *c;

	if (!name)
		return NULL;
	n = strnlen(name, RIP_STRING_MAX - 1);
	c = b->names + b->names_used;
	memcpy(c, name, n);
	c[n] = 0;
	b->names_used += n + 1;
	return c;
}

/*
 * Fill b with the next resource events of the trace: 1 when it is full,
 * 0 when the events ended (p->ret: 0, or what evs_next said, with p->err).
 */
static int live_pipe_fill(struct live_pipe *p, struct live_batch *b)
{
	struct live_trace *tr = &p->tr;
	struct evs_event e;
	int ret;

	b->n = 0;
	b->names_used = 0;
	b->seq0 = tr->events;
	while ((ret = evs_next_fast(p->s, &e, p->err, sizeof(p->err))) > 0) {
		struct live_rec *r = &b->r[b->n];
		int fail = 0, role = live_take(p->l, &e, tr, &r->d, &fail);

		if (fail) {
			ret = fail;
			snprintf(p->err, sizeof(p->err), "out of memory");
			break;
		}
		if (!role_is_resource(role)) {
			/* a record's seq counts from seq0 in 32 bits: only events without one can push it */
			if (tr->events - b->seq0 >= UINT32_MAX / 2) {
				if (b->n)
					goto full;
				b->seq0 = tr->events;
			}
			continue;
		}
		r->ns = e.ns;
		r->seq = (uint32_t)(tr->events - b->seq0);
		r->tid = e.tid;
		if (r->d.name) {
			r->d.name = live_pipe_name(b, r->d.name);
			if (b->names_used + RIP_STRING_MAX > LIVE_PIPE_NAMES) {
				b->n++;
				goto full;
			}
		}
		if (++b->n == LIVE_PIPE_RECS)
			goto full;
	}
	p->ret = ret;
	b->first_ns = tr->first_ns;
	b->any_event = tr->any_event;
	return 0;

full:
	b->first_ns = tr->first_ns;
	b->any_event = tr->any_event;
	return 1;
}

/* The reader's thread: fills batches until the events end or the pass stops. */
static void *live_pipe_main(void *arg)
{
	struct live_pipe *p = arg;
	struct live_batch *b;

	while ((b = live_pipe_claim(p)) && live_pipe_fill(p, b))
		live_pipe_publish(p);
	if (b && b->n)
		live_pipe_publish(p);
	/* seq_cst (release at least): ret, err and tr are read after live_pipe_ready sees it */
	__atomic_store_n(&p->end, true, __ATOMIC_SEQ_CST);
	live_pipe_wake(p, LIVE_PIPE_PASS);
	return NULL;
}

/* Can a second thread run beside this one? */
static bool live_two_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return false;
	return CPU_COUNT(&set) >= 2;
}

int live_pipe_start(struct live_pipe **out, struct live *l, struct evs *s,
		    const struct live_trace *tr)
{
	bool two = evs_size(s) >= LIVE_PIPE_MIN && live_two_cpus();
	/* one batch, filled in turn, when on one thread */
	size_t size = offsetof(struct live_pipe, b) + (two ? LIVE_PIPE_NB : 1) * sizeof(struct live_batch);
	struct live_pipe *p;
	void *mem;

	if (posix_memalign(&mem, _Alignof(struct live_pipe), size)) /* records: a cache line each */
		return -ENOMEM;
	p = memset(mem, 0, size);
	p->l = l;
	p->s = s;
	p->tr = *tr;
	if (!two)
		goto out;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond[LIVE_PIPE_PASS], NULL);
	pthread_cond_init(&p->cond[LIVE_PIPE_READER], NULL);
	if (pthread_create(&p->thread, NULL, live_pipe_main, p)) {
		pthread_cond_destroy(&p->cond[LIVE_PIPE_READER]);
		pthread_cond_destroy(&p->cond[LIVE_PIPE_PASS]);
		pthread_mutex_destroy(&p->lock);
		goto out; /* on one thread, then */
	}
	p->threaded = true;
out:
	*out = p;
	return 0;
}

struct live_batch *live_pipe_next(struct live_pipe *p)
{
	if (!p->threaded) {
		if (p->end)
			return NULL;
		p->end = !live_pipe_fill(p, &p->b[0]);
		return p->b[0].n ? &p->b[0] : NULL;
	}
	live_pipe_wait(p, LIVE_PIPE_PASS);
	/* acquire: pairs with the release of head in live_pipe_publish */
	if (__atomic_load_n(&p->head, __ATOMIC_ACQUIRE) == p->tail)
		return NULL; /* the end, and nothing left */
	return &p->b[p->tail % LIVE_PIPE_NB]; /* tail: only this thread stores it */
}

void live_pipe_done(struct live_pipe *p)
{
	if (!p->threaded)
		return;
	/* seq_cst (release at least): the reader refills the batch only after we are done with it */
	__atomic_store_n(&p->tail, p->tail + 1, __ATOMIC_SEQ_CST);
	live_pipe_wake(p, LIVE_PIPE_READER);
}

int live_pipe_end(struct live_pipe *p, bool stop, struct live_trace *tr, char *err,
		  size_t errlen)
{
	int ret;

	if (p->threaded) {
		if (stop) {
			/* seq_cst: pairs with live_pipe_ready */
			__atomic_store_n(&p->stop, true, __ATOMIC_SEQ_CST);
			live_pipe_wake(p, LIVE_PIPE_READER);
		}
		pthread_join(p->thread, NULL); /* what it wrote is ours after this */
		pthread_cond_destroy(&p->cond[LIVE_PIPE_READER]);
		pthread_cond_destroy(&p->cond[LIVE_PIPE_PASS]);
		pthread_mutex_destroy(&p->lock);
	}
	ret = stop ? 0 : p->ret;
	if (ret < 0)
		snprintf(err, errlen, "%s", p->err);
	*tr = p->tr;
	tr->bt_bad = p->l->bts.bad;
	free(p);
	return ret;
}
