/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/hmap.h - the one hash table of the passes: u64 keys, slots of a
 * size each table chooses, open addressing with linear probing, and
 * deletion by backward shift, so there are no tombstones and a table of N
 * live entries never needs more than 4N slots (2N once it is big: see
 * hmap_has_room) however many come and go.
 *
 * A slot is the user's struct, which starts with the key and has a one-byte
 * mark at offset 8 (HMAP_SLOT_CHECK says so at compile time):
 *
 *	struct blk { uint64_t key; uint8_t used; uint32_t bt; uint64_t size; };
 *	HMAP_SLOT_CHECK(struct blk);
 *	struct hmap m = { 0 };
 *	struct blk *b = hmap_get(&m, sizeof(*b), addr, &fresh);	new: zeroed, used 1
 *	b = hmap_find(&m, sizeof(*b), addr);
 *	hmap_del(&m, sizeof(*b), b);
 *	hmap_free(&m);
 *
 * The calls are inline, so that a constant slot size folds into them (one
 * call of the slow path, hmap_reserve, grows the table).
 *
 * used is 0 in an empty slot; hmap_get sets 1, and the user may change it to
 * any other non-zero value of its own.  Every slot size of one table must be
 * the same in every call.  A pointer to a slot is good until the next
 * hmap_get or hmap_del on the table.  HMAP_OF gives a table a typed view of
 * its slots, m.v[i] for i < m.cap, for walking them all.
 */
#ifndef RIP_ANALYSIS_HMAP_H
#define RIP_ANALYSIS_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct hmap {
	void *v;	/* cap slots */
	size_t cap, n;	/* cap: 0 or a power of two, 2 or more; n: slots in use */
	size_t room;	/* n below room: no need to grow yet (hmap_has_room) */
	unsigned shift; /* 64 - log2(cap): what hmap_hash keeps of a key's hash */
	void *mem;	/* the allocation v lies in, on its first cache line (hmap_reserve) */
};

#define HMAP_FIRST_CAP 256 /* slots at the first insertion, unless hmap_reserve said more */

/* A table of slots of type T, seen as m.h (for the hmap_* calls) or as m.v, m.cap, m.n. */
#define HMAP_OF(T)                                                                                 \
	union {                                                                                    \
		struct hmap h;                                                                     \
		struct {                                                                           \
			T *v;                                                                      \
			size_t cap, n;                                                             \
		};                                                                                 \
	}

#define HMAP_SLOT_CHECK(T)                                                                         \
	_Static_assert(offsetof(T, key) == 0 && sizeof(((T *)0)->key) == 8 &&                      \
			       offsetof(T, used) == 8 && sizeof(((T *)0)->used) == 1,              \
		       #T ": a slot of a hmap starts with uint64_t key, then a one-byte used")

/*
 * The home slot of key in a table whose shift is shift (2^(64 - shift)
 * slots): the one hash function of analysis/.
 */
static inline size_t hmap_hash(uint64_t key, unsigned shift)
{
	/*
	 * Fibonacci hashing: the top bits of the product depend on every bit
	 * of the key.  (Middle bits do not: heap blocks at the same offset in
	 * the 64 MiB-aligned arenas of different threads crowded into a few
	 * runs of slots, and 1,000 threads' live blocks took 3x longer to find.)
	 */
	key ^= key >> 31;
	key *= 0x9e3779b97f4a7c15ull;
	return (size_t)(key >> shift); /* shift < 64: a table has 2 slots or more */
}

/*
 * A table's slots start at the start of a cache line (hmap_reserve): where a
 * table of 32-byte slots lay 16 bytes off one, as the heap placed it in some
 * runs, every other slot spanned two lines.
 */
#define HMAP_LINE 64

/* The home slot of key in m (m->cap > 0). */
static inline size_t hmap_home(const struct hmap *m, uint64_t key)
{
	return hmap_hash(key, m->shift);
}

/* Slot i (< m->cap), used or not. */
static inline void *hmap_slot(const struct hmap *m, size_t esz, size_t i)
{
	return (char *)m->v + i * esz;
}

static inline uint64_t hmap_key(const void *slot)
{
	return *(const uint64_t *)slot;
}

static inline unsigned char hmap_used(const void *slot)
{
	return ((const unsigned char *)slot)[8];
}

/* The slot of key, or NULL. */
static inline void *hmap_find(const struct hmap *m, size_t esz, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t h = hmap_home(m, key);; h = (h + 1) & (m->cap - 1)) {
		void *s = hmap_slot(m, esz, h);

		if (!hmap_used(s))
			return NULL;
		if (hmap_key(s) == key)
			return s;
	}
}

/* Room for cap slots (rounded up to a power of two) or more.  0 or -ENOMEM. */
int hmap_reserve(struct hmap *m, size_t esz, size_t cap);

/*
 * How full a table gets before it doubles: a quarter while it is small
 * (under HMAP_SPARSE_CAP slots, 4 MiB of 32-byte slots), half past that.
 * A quarter keeps the runs of used slots short, and each probe or shift
 * along a run is a branch that depends on a load; a table that has
 * outgrown the caches pays for its size instead, so past HMAP_SPARSE_CAP
 * half full is the cheaper (doc/design.md, "Reading a trace fast", has
 * the figures at 16,000 and 120,000 live blocks).
 */
#define HMAP_SPARSE_CAP 131072

/* Is there room for one more entry without passing the table's load? */
static inline bool hmap_has_room(const struct hmap *m)
{
	return m->n < m->room; /* room: a quarter of cap, or half (hmap_reserve) */
}

/*
 * Room for one more slot: the table doubles when one more would pass its
 * load (hmap_has_room).  hmap_get does it when it inserts; a caller that
 * wants the table to grow at the same moments whether or not the key is
 * new calls it first.  0 or -ENOMEM.
 */
static inline int hmap_room(struct hmap *m, size_t esz)
{
	if (hmap_has_room(m))
		return 0;
	return hmap_reserve(m, esz, m->cap ? m->cap * 2 : HMAP_FIRST_CAP);
}

/*
 * The slot of key; when there is none, a new one (*fresh true), zeroed but
 * for its key and used = 1.  NULL when out of memory.
 */
static inline void *hmap_get(struct hmap *m, size_t esz, uint64_t key, bool *fresh)
{
	void *s = NULL;

	for (;;) {
		for (size_t h = m->cap ? hmap_home(m, key) : 0; m->cap; h = (h + 1) & (m->cap - 1)) {
			s = hmap_slot(m, esz, h);
			if (!hmap_used(s))
				break;
			if (hmap_key(s) == key) {
				*fresh = false;
				return s;
			}
		}
		if (hmap_has_room(m))
			break; /* s: the free slot that ended the probe */
		if (hmap_room(m, esz))
			return NULL;
	}
	memset(s, 0, esz);
	*(uint64_t *)s = key;
	((unsigned char *)s)[8] = 1;
	m->n++;
	*fresh = true;
	return s;
}

/*
 * hmap_get for a table that has room for one more (m->cap > 0 and
 * hmap_has_room, as after hmap_room): no test of either while it probes.
 */
static inline void *hmap_get_room(struct hmap *m, size_t esz, uint64_t key, bool *fresh)
{
	const size_t mask = m->cap - 1;

	for (size_t h = hmap_home(m, key);; h = (h + 1) & mask) {
		void *s = hmap_slot(m, esz, h);

		if (!hmap_used(s)) {
			memset(s, 0, esz);
			*(uint64_t *)s = key;
			((unsigned char *)s)[8] = 1;
			m->n++;
			*fresh = true;
			return s;
		}
		if (hmap_key(s) == key) {
			*fresh = false;
			return s;
		}
	}
}

/* Remove slot s (from hmap_find or hmap_get): later slots of its run may move back. */
static inline void hmap_del(struct hmap *m, size_t esz, void *s)
{
	size_t mask = m->cap - 1, i = (size_t)((char *)s - (char *)m->v) / esz, j = i;

	for (;;) {
		size_t home;

		((unsigned char *)hmap_slot(m, esz, i))[8] = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (!hmap_used(hmap_slot(m, esz, j)))
				goto done;
			home = hmap_home(m, hmap_key(hmap_slot(m, esz, j)));
			/* j may move to i if its home is not in (i, j] cyclically */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		memcpy(hmap_slot(m, esz, i), hmap_slot(m, esz, j), esz);
		i = j;
	}
done:
	m->n--;
}

/*
 * Tables of 16-byte slots with the key packed in (struct hmap_pk): the top
 * 64 - HMAP_PK_LOW bits of w0 are the key, the low HMAP_PK_LOW bits and w1
 * the user's.  Keys are from 1 to 2^(64 - HMAP_PK_LOW) - 1, so that a used
 * slot's w0 is never 0 and an empty slot is one whose w0 is 0.  The same
 * struct hmap, hash, probing and deletion as the tables above; a lookup
 * reads one word of one slot, and four slots share a cache line (a table of
 * 32-byte slots holds two):
 *
 *	struct hmap m = { 0 };
 *	hmap_pk_reserve(&m, cap);		(or when !hmap_has_room)
 *	s = hmap_pk_get_room(&m, key, &fresh);	new: w0 = key << HMAP_PK_LOW, w1 = 0
 *	s = hmap_pk_find(&m, key);
 *	hmap_pk_del(&m, s);
 */
#define HMAP_PK_LOW 20

struct hmap_pk {
	uint64_t w0, w1;
};

/* Like HMAP_SPARSE_CAP, in bytes the same: a quarter full below it, half full past it. */
#define HMAP_PK_SPARSE_CAP (HMAP_SPARSE_CAP * 2)

static inline struct hmap_pk *hmap_pk_at(const struct hmap *m, size_t i)
{
	return (struct hmap_pk *)m->v + i;
}

/* The key of used slot s. */
static inline uint64_t hmap_pk_key(const struct hmap_pk *s)
{
	return s->w0 >> HMAP_PK_LOW;
}

/* Is used slot s the one of key (k: key << HMAP_PK_LOW)? */
static inline bool hmap_pk_is(const struct hmap_pk *s, uint64_t k)
{
	return (s->w0 ^ k) < (1ull << HMAP_PK_LOW);
}

/* The slot of key (1 <= key < 2^(64 - HMAP_PK_LOW)), or NULL. */
static inline struct hmap_pk *hmap_pk_find(const struct hmap *m, uint64_t key)
{
	const uint64_t k = key << HMAP_PK_LOW;

	if (!m->cap)
		return NULL;
	for (size_t h = hmap_home(m, key);; h = (h + 1) & (m->cap - 1)) {
		struct hmap_pk *s = hmap_pk_at(m, h);

		if (!s->w0)
			return NULL;
		if (hmap_pk_is(s, k))
			return s;
	}
}

/* Room for cap slots (rounded up to a power of two) or more.  0 or -ENOMEM. */
int hmap_pk_reserve(struct hmap *m, size_t cap);

/*
 * The slot of key in a table that has room for one more (m->cap > 0 and
 * hmap_has_room); when there is none, a new one (*fresh true), its w0 key
 * << HMAP_PK_LOW and its w1 0.
 */
static inline struct hmap_pk *hmap_pk_get_room(struct hmap *m, uint64_t key, bool *fresh)
{
	const uint64_t k = key << HMAP_PK_LOW;
	const size_t mask = m->cap - 1;

	for (size_t h = hmap_home(m, key);; h = (h + 1) & mask) {
		struct hmap_pk *s = hmap_pk_at(m, h);

		if (!s->w0) {
			s->w0 = k;
			s->w1 = 0;
			m->n++;
			*fresh = true;
			return s;
		}
		if (hmap_pk_is(s, k)) {
			*fresh = false;
			return s;
		}
	}
}

/* Remove slot s (from hmap_pk_find or hmap_pk_get_room): later slots of its run may move back. */
static inline void hmap_pk_del(struct hmap *m, struct hmap_pk *s)
{
	struct hmap_pk *v = m->v;
	size_t mask = m->cap - 1, i = (size_t)(s - v), j = i;

	for (;;) {
		size_t home;

		v[i].w0 = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (!v[j].w0)
				goto done;
			home = hmap_home(m, hmap_pk_key(&v[j]));
			/* j may move to i if its home is not in (i, j] cyclically */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		v[i] = v[j];
		i = j;
	}
done:
	m->n--;
}

void hmap_free(struct hmap *m);

#endif /* RIP_ANALYSIS_HMAP_H */
