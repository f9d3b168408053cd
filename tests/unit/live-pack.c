/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: LIVE_MEM's packed slots (live_mem_make, live_mem_release,
 * live_mem_find, live_mem_at of analysis/live.h) keep every entry whole:
 * an address that does not pack (not a multiple of 16, 2^48 or more, a
 * mapping's key), a size, val or kind past its packed bits, a time before
 * the first or 2^40 past it, a mark other than 1, each goes to the
 * overflow table and comes back exactly; keys that differ only in bits the
 * packed key leaves out stay apart; a key moves between the two tables
 * when its fields stop or start fitting (a stub in the packed table then
 * says where it is), never live in both.  Checked against a model, on
 * chosen cases and then on random ones across the tables' growth.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/live.h"
#include "helpers.h"

#define NKEYS 6000

/* The model: what each key of keys[] holds while live. */
static uint64_t keys[NKEYS];
static struct live_ent model[NKEYS];
static bool live[NKEYS];
static const int64_t t0 = 1000000007; /* the first block's time */

static bool same(const struct live_ent *a, const struct live_ent *b)
{
	return a->key == b->key && a->used == b->used && a->kind == b->kind && a->val == b->val &&
	       a->size == b->size && a->ns == b->ns;
}

static void show(const char *what, const struct live_ent *e)
{
	fprintf(stderr, "  %s: key %#llx used %u kind %u val %u size %llu ns %lld\n", what,
		(unsigned long long)e->key, e->used, e->kind, e->val, (unsigned long long)e->size,
		(long long)e->ns);
}

static void make(struct live *l, size_t k, struct live_ent n)
{
	struct live_ent old = { 0 };
	int rep;

	n.key = keys[k];
	rep = live_mem_put(l, &n, &old);
	T_EQ(rep, live[k]);
	if (rep == 1 && live[k] && !same(&old, &model[k])) {
		T_CHECK(!"the entry replaced is the one made");
		show("got", &old);
		show("want", &model[k]);
	}
	model[k] = n;
	live[k] = true;
}

static void release(struct live *l, size_t k)
{
	struct live_ent old = { 0 };
	bool was = live_mem_release(l, keys[k], &old);

	T_EQ(was, live[k]);
	if (was && live[k] && !same(&old, &model[k])) {
		T_CHECK(!"the entry released is the one made");
		show("got", &old);
		show("want", &model[k]);
	}
	live[k] = false;
}

static void find(const struct live *l, size_t k)
{
	struct live_ent e = { 0 };
	bool was = live_mem_find(l, keys[k], &e);

	T_EQ(was, live[k]);
	if (was && live[k] && !same(&e, &model[k])) {
		T_CHECK(!"the entry found is the one made");
		show("got", &e);
		show("want", &model[k]);
	}
}

/* Every entry of both tables is one of the model's, and every live one of the model is there. */
static void walk(const struct live *l)
{
	size_t n = 0;

	for (size_t i = 0; i < l->pk.cap + l->t[LIVE_MEM].cap; i++) {
		struct live_ent e;
		size_t k;

		if (i < l->pk.cap) {
			if (!live_mem_at(l, i, &e))
				continue;
		} else {
			e = *live_slot(l, LIVE_MEM, i - l->pk.cap);
			if (!e.used)
				continue;
		}
		for (k = 0; k < NKEYS && keys[k] != e.key; k++)
			;
		T_CHECK(k < NKEYS && live[k] && same(&e, &model[k]));
		n++;
	}
	for (size_t k = 0; k < NKEYS; k++)
		n -= live[k];
	T_EQ(n, 0);
}

static struct live_ent ent(uint8_t used, uint16_t kind, uint32_t val, uint64_t size, int64_t ns)
{
	return (struct live_ent){ .used = used, .kind = kind, .val = val, .size = size, .ns = ns };
}

enum {
	K_A,   /* a key that packs */
	K_A8,  /* K_A + 8: not a multiple of 16 */
	K_A48, /* K_A + 2^48: the same packed bits */
	K_A63, /* K_A + 2^63 */
	K_MAP, /* a mapping's key (LIVE_MAP_KEY) */
	K_B,   /* another that packs */
	K_TOP, /* the last address that packs: 2^48 - 16 */
	K_LOW, /* the first: 16 */
	K_ONE, /* 1: does not */
	K_CHOSEN,
};

static void chosen(struct live *l)
{
	const uint64_t a = 0x7f12345670;

	keys[K_A] = a;
	keys[K_A8] = a + 8;
	keys[K_A48] = a + (1ull << 48);
	keys[K_A63] = a | 1ull << 63;
	keys[K_MAP] = LIVE_MAP_KEY | 1;
	keys[K_B] = 0x5555000010;
	keys[K_TOP] = (1ull << 48) - 16;
	keys[K_LOW] = 16;
	keys[K_ONE] = 1;

	/* the first block sets the time the packed ones are kept from */
	make(l, K_A, ent(1, 0, 1, 100, t0));
	T_EQ(l->pk.n, 1);
	/* keys sharing K_A's packed bits, or none: apart, each whole */
	make(l, K_A8, ent(1, 1, 2, 200, t0 + 1));
	make(l, K_A48, ent(1, 2, 3, 300, t0 + 2));
	make(l, K_A63, ent(1, 3, 4, 400, t0 + 3));
	make(l, K_MAP, ent(1, RIP_MEM_MMAP, 5, 1ull << 40, t0 + 4));
	make(l, K_TOP, ent(1, 15, (1u << 20) - 2, (1u << 20) - 1, t0 + (1ll << 40) - 1));
	make(l, K_LOW, ent(1, 0, 0, 0, t0));
	make(l, K_ONE, ent(1, 0, 6, 1, t0));
	T_EQ(l->pk.n, 3); /* K_A, K_TOP (every field at its largest), K_LOW */
	T_EQ(l->t[LIVE_MEM].n, 5);
	for (size_t k = 0; k < K_CHOSEN; k++)
		find(l, k);
	walk(l);

	/* K_B through each field that does not fit, and back: replaced each time, never twice */
	make(l, K_B, ent(1, 0, 7, 10, t0 + 5));
	make(l, K_B, ent(1, 0, 7, 1u << 20, t0 + 5)); /* size past its bits */
	make(l, K_B, ent(1, 0, 7, 10, t0 + 5));
	make(l, K_B, ent(1, 0, 7, 10, t0 + (1ll << 40))); /* time past its bits */
	find(l, K_B);
	make(l, K_B, ent(1, 0, 7, 10, t0 - 1)); /* time before the first */
	make(l, K_B, ent(1, 0, 7, 10, INT64_MIN));
	make(l, K_B, ent(1, 0, 7, 10, INT64_MAX));
	make(l, K_B, ent(1, 0, 1u << 20, 10, t0 + 5));	   /* val past its bits */
	make(l, K_B, ent(1, 0, LIVE_PK_STUB, 10, t0 + 5)); /* what marks a stub */
	make(l, K_B, ent(1, 0, UINT32_MAX, 10, t0 + 5));
	make(l, K_B, ent(1, 16, 7, 10, t0 + 5)); /* kind past its bits */
	make(l, K_B, ent(2, 0, 7, 10, t0 + 5));	 /* another mark */
	make(l, K_B, ent(1, 0, 7, UINT64_MAX, t0 + 5));
	find(l, K_B);
	walk(l);
	T_EQ(l->t[LIVE_MEM].n, 6); /* K_B too */
	T_EQ(l->pk.n, 4);	   /* its stub */
	make(l, K_B, ent(1, 0, 7, 11, t0 + 6));
	T_EQ(l->t[LIVE_MEM].n, 5);
	release(l, K_B);
	release(l, K_B); /* not live: once only */
	make(l, K_B, ent(1, 0, 7, 1ull << 32, t0 + 7));
	release(l, K_B);
	release(l, K_B);
	T_EQ(l->t[LIVE_MEM].n, 5);
	T_EQ(l->pk.n, 3);

	/* what does not pack is released whole, and once */
	for (size_t k = 0; k < K_CHOSEN; k++) {
		release(l, k);
		find(l, k);
		release(l, k);
	}
	T_EQ(l->pk.n, 0);
	T_EQ(l->t[LIVE_MEM].n, 0);
}

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* A random entry: mostly fitting, each field past its bits now and then. */
static struct live_ent rnd_ent(void)
{
	uint64_t r = rnd();
	struct live_ent e = ent(1, (uint16_t)(r % 14), (uint32_t)(r >> 8 & 0xfff),
				(r >> 20) & 0xffff, t0 + (int64_t)(r >> 40));

	switch (rnd() % 16) {
	case 0:
		e.size = (1u << 20) + (r & 0xff);
		break;
	case 1:
		e.ns = t0 + (1ll << 40) + (int64_t)(r & 0xff);
		break;
	case 2:
		e.ns = t0 - 1 - (int64_t)(r & 0xff);
		break;
	case 3:
		e.val = (r & 4) ? LIVE_PK_STUB : UINT32_MAX - (uint32_t)(r & 1);
		break;
	case 4:
		e.used = 2;
		break;
	case 5:
		e.kind = 16 + (uint16_t)(r & 3);
		break;
	}
	return e;
}

static void random_ops(struct live *l)
{
	/* keys: most pack, some differ from another only in bits the packed key leaves out */
	for (size_t k = 0; k < NKEYS; k++) {
		uint64_t a = 0x10000000 + (rnd() % 0x1000000) * 16;

		switch (k % 10) {
		case 7:
			a = keys[k - 1] + 8;
			break;
		case 8:
			a = keys[k - 2] + (1ull << 48);
			break;
		case 9:
			a = LIVE_MAP_KEY | k;
			break;
		}
		for (size_t j = 0; j < k; j++)
			if (keys[j] == a) { /* the same key twice: another */
				a = 0x20000000 + k * 16;
				break;
			}
		keys[k] = a;
		live[k] = false;
	}
	for (int round = 0; round < 4; round++) {
		/* up to most keys live (the tables grow), then down */
		for (int i = 0; i < 40000; i++) {
			size_t k = rnd() % NKEYS;
			unsigned op = (unsigned)(rnd() % 8);

			if (op < (round % 2 ? 2u : 5u))
				make(l, k, rnd_ent());
			else if (op < 7)
				release(l, k);
			else
				find(l, k);
		}
		walk(l);
	}
}

int main(void)
{
	struct live l = { 0 };

	chosen(&l);
	walk(&l);
	live_free(&l);
	memset(&l, 0, sizeof(l));
	random_ops(&l);
	T_CHECK(l.pk.cap > LIVE_FIRST_CAP); /* the packed table grew */
	live_free(&l);
	return t_result();
}
