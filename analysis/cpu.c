// SPDX-License-Identifier: Apache-2.0
/*
 * analysis/cpu.c - CPU samples counted by stack and by thread (cpu.h).
 *
 * Stacks are interned in a table keyed by a hash of their frames; the
 * frames live in one growing array.  A key whose entry holds other frames
 * (a hash collision) is tried again one higher, so that no two stacks are
 * ever counted as one.  Threads are a table by tid.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <internal/grow.h>

#include "analysis/cpu.h"
#include "analysis/hmap.h"
#include "read/trace.h"

struct cpu_key {
	uint64_t key; /* hash of the frames (+ tries) */
	uint8_t used;
	size_t idx; /* in stacks[] */
};
HMAP_SLOT_CHECK(struct cpu_key);

struct cpu_tkey {
	uint64_t key; /* tid */
	uint8_t used;
	struct cpu_thread t;
};
HMAP_SLOT_CHECK(struct cpu_tkey);

/* A stack as kept: its frames by offset (the array moves as it grows). */
struct cpu_ent {
	size_t off;
	uint32_t n;
	uint64_t count;
};

struct cpu_prof {
	uint32_t id; /* the rip:sample type's id; UINT32_MAX: none */
	HMAP_OF(struct cpu_key) keys;
	HMAP_OF(struct cpu_tkey) tids;
	struct cpu_ent *ents;
	size_t nents, capents;
	uint64_t *frames; /* every stack's frames, one after the other */
	size_t nframes, capframes;
	struct cpu_stack *stacks;   /* cpu_stacks' array */
	struct cpu_thread *threads; /* cpu_threads' array */
	uint64_t samples;
	uint64_t lost; /* cpu_read: what the recorder counted lost */
	uint32_t damaged;	 /* cpu_read: damaged blocks skipped (cpu_damage) */
	char damage[RR_ERR_MAX]; /* what the first one said */
};

int cpu_new(const struct ev_types *types, struct cpu_prof **out)
{
	struct cpu_prof *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->id = UINT32_MAX;
	for (uint32_t id = 0; types && id < EV_MAX_TYPES; id++) {
		const struct ev_type *t = &types->t[id];

		if (t->valid && t->array && t->nfields == 1 && !strcmp(t->name, TRACE_SAMPLE_NAME))
			p->id = id;
	}
	*out = p;
	return 0;
}

bool cpu_typed(const struct cpu_prof *p)
{
	return p->id != UINT32_MAX;
}

static uint64_t cpu_hash(const uint8_t *a, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ n;

	for (size_t i = 0; i < (size_t)n * 8; i++) {
		h ^= a[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Frames (n little-endian u64 at a, unaligned) into the table: the stack's index, or -ENOMEM. */
static long cpu_intern(struct cpu_prof *p, const uint8_t *a, uint32_t n)
{
	uint64_t key = cpu_hash(a, n);

	for (;; key++) {
		bool fresh;
		struct cpu_key *k = hmap_get(&p->keys.h, sizeof(*k), key, &fresh);
		struct cpu_ent *en;

		if (!k)
			return -ENOMEM;
		if (!fresh) {
			en = &p->ents[k->idx];
			if (en->n == n && (!n || !memcmp(p->frames + en->off, a, (size_t)n * 8)))
				return (long)k->idx;
			continue; /* another stack with this hash */
		}
		if (RIP_GROW(p->ents, p->capents, p->nents + 1, 256) ||
		    RIP_GROW(p->frames, p->capframes, p->nframes + n, 4096))
			goto nomem;

		if (n)
			memcpy(p->frames + p->nframes, a, (size_t)n * 8);
		en = &p->ents[p->nents];
		en->off = p->nframes;
		en->n = n;
		en->count = 0;
		p->nframes += n;
		k->idx = p->nents++;
		return (long)k->idx;
nomem:
		hmap_del(&p->keys.h, sizeof(*k), k);
		return -ENOMEM;
	}
}

int cpu_event(struct cpu_prof *p, const struct evs_event *e)
{
	struct cpu_tkey *t;
	bool fresh;
	long i;

	if (!e->type || e->type->id != p->id)
		return 0;
	i = cpu_intern(p, e->arr, e->narr);
	if (i < 0)
		return (int)i;
	p->ents[i].count++;
	p->samples++;
	t = hmap_get(&p->tids.h, sizeof(*t), (uint32_t)e->tid, &fresh);
	if (!t)
		return -ENOMEM;
	t->t.tid = e->tid;
	t->t.samples++;
	if (e->narr && e->ns >= t->t.last_ns) {
		memcpy(&t->t.ip, e->arr, 8);
		t->t.last_ns = e->ns;
	}
	return 1;
}

int cpu_read(const char *trace, struct cpu_prof **out, char *err, size_t errlen)
{
	struct evs_event e;
	struct evs *s;
	int ret;

	*out = NULL;
	ret = evs_open(trace, &s, err, errlen);
	if (ret)
		return ret;
	ret = cpu_new(evs_types(s), out);
	if (ret) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (!cpu_typed(*out))
		goto out; /* no sample in it: nothing to read */
	evs_set_lazy(s, true);
	while ((ret = evs_next_fast(s, &e, err, errlen)) > 0) {
		ret = cpu_event(*out, &e);
		if (ret < 0) {
			snprintf(err, errlen, "out of memory");
			break;
		}
	}
	/*
	 * The recorder's count of lost samples: the discarded events of their
	 * stream at its end, the one after the event rings' (rec_smp_packet).
	 * Lazy: e->stream is not filled, so the stream is found by its number.
	 */
	if (!ret && evs_file_hdr(s))
		(*out)->lost = evs_stream_discarded(s, evs_file_hdr(s)->ev_rings);
	if (!ret) {
		const char *why = evs_damage(s, &(*out)->damaged);

		snprintf((*out)->damage, sizeof((*out)->damage), "%s", why ? why : "");
	}
out:
	evs_close(s);
	if (ret < 0) {
		cpu_free(*out);
		*out = NULL;
		return ret;
	}
	return 0;
}

uint64_t cpu_samples(const struct cpu_prof *p)
{
	return p->samples;
}

const char *cpu_damage(const struct cpu_prof *p, uint32_t *blocks)
{
	*blocks = p->damaged;
	return p->damaged ? p->damage : NULL;
}

uint64_t cpu_lost(const struct cpu_prof *p)
{
	return p->lost;
}

const struct cpu_stack *cpu_stacks(struct cpu_prof *p, size_t *n)
{
	free(p->stacks);
	*n = 0;
	p->stacks = malloc((p->nents ? p->nents : 1) * sizeof(*p->stacks));
	if (!p->stacks)
		return NULL;
	for (size_t i = 0; i < p->nents; i++)
		p->stacks[i] = (struct cpu_stack){ .pcs = p->frames + p->ents[i].off,
						   .n = p->ents[i].n,
						   .count = p->ents[i].count };
	*n = p->nents;
	return p->stacks;
}

static int cpu_tid_cmp(const void *a, const void *b)
{
	const struct cpu_thread *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

const struct cpu_thread *cpu_threads(struct cpu_prof *p, size_t *n)
{
	size_t k = 0;

	free(p->threads);
	*n = 0;
	p->threads = malloc((p->tids.n ? p->tids.n : 1) * sizeof(*p->threads));
	if (!p->threads)
		return NULL;
	for (size_t i = 0; i < p->tids.cap; i++)
		if (p->tids.v[i].used)
			p->threads[k++] = p->tids.v[i].t;
	qsort(p->threads, k, sizeof(*p->threads), cpu_tid_cmp);
	*n = k;
	return p->threads;
}

void cpu_free(struct cpu_prof *p)
{
	if (!p)
		return;
	hmap_free(&p->keys.h);
	hmap_free(&p->tids.h);
	free(p->ents);
	free(p->frames);
	free(p->stacks);
	free(p->threads);
	free(p);
}
