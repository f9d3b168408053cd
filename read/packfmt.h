/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/packfmt.h - what the coder of packed blocks (record/packw.c) and their
 * decoder (read/pack.c) must agree on, byte for byte: the column keys, how a
 * field is coded, the little-endian loads, zigzag, and the two move-to-front
 * lists of hex values of each stream, kept the same on both sides.  Internal
 * to the two.
 *
 * A list is a bitmap over "stamps" (every hex value coded takes the next
 * stamp; a value's entry moves to its new stamp), so the rank of an entry
 * (how many entries of its list are newer) and the entry of a rank are
 * found a word at a time.
 */
#ifndef RIP_READ_PACKFMT_H
#define RIP_READ_PACKFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "read/pack.h"

/* Column keys.  The fixed ones: */
enum {
	K_PKT,	  /* per packet: 0 coded, 1 kept whole */
	K_PHDR,	  /* the 80-byte headers of coded packets */
	K_RAW,	  /* packets kept whole: varint length, bytes */
	K_EVID,	  /* per event: varint id << 1 | extended header */
	K_STR,	  /* string fields, their NUL included */
	K_ARR,	  /* array fields: varint count, then the u64 as they are */
	K_HEXLIT, /* hex values not in a list: zigzag difference from the field's last */
	K_OTHER,  /* fields past PK_MAXCOLS columns */
	K_FIXED
};
#define K_TS(id) (0x10000u | (id))		    /* time since the event before, per type */
#define K_HEX(id, i) (0x20000u | (id) << 3 | (i))   /* hex fields' list codes */
#define K_INT(id, i) (0x30000u | (id) << 3 | (i))   /* integer fields' codes (version 2) */
#define K_NAME(h) (0x80000000u | ((h)&0x7fffffffu)) /* integer fields, by name (version 1) */
#define K_HI(k) (0x40000000u | (k)) /* the bytes after the first of k's varints (version 2) */

/*
 * From version 2 the varints of the columns of event ids, hex literals,
 * times, hex codes and integer fields are cut in two: the first byte of
 * each in the column, the bytes after it (when the first has its top bit)
 * in the column K_HI(key) (in K_OTHER when the block has no such column:
 * the coder's table was full).  zstd's literals are coded a byte at a time
 * with one table a column: a rank of 300 is a byte of its low 7 bits and a
 * byte of 2 or 3, and the two kinds of byte in one table cost a bit more
 * each than in two.
 */
static inline bool key_split(uint32_t key)
{
	return key == K_EVID || key == K_HEXLIT || (key >= 0x10000u && key < 0x40000u);
}

#define PK_MAXCOLS 512u
#define PK_HDR RIP_PACKET_HDR_SIZE
#define PK_SMALL 64u /* columns shorter than this are stored as they are */

_Static_assert(sizeof(struct pk_hdr) == 64, "pk_hdr is 64 bytes on disk");
_Static_assert(sizeof(struct pk_col) == 16, "pk_col is 16 bytes on disk");
_Static_assert(RIP_EVENT_MAX_FIELDS <= 8, "K_HEX keeps 3 bits for the field");

/* zlib's crc32 of n bytes at p after crc (0 to start), faster where the CPU allows. */
uint32_t pk_crc32(uint32_t crc, const uint8_t *p, size_t n);

/* Set (not "0"): the decoder takes the paths of a baseline x86-64; "avx2": no pext (pk_cpu). */
#define PK_GENERIC_ENV "RIP_PACK_GENERIC"

/* ---- little pieces ---------------------------------------------------------------- */

/* A field of n bytes (1, 2, 4 or 8), little-endian as the writer (checked at open). */
static inline uint64_t ld(const uint8_t *p, uint32_t n)
{
	uint64_t v8;
	uint32_t v4;
	uint16_t v2;

	switch (n) {
	case 1:
		return *p;
	case 2:
		memcpy(&v2, p, 2);
		return v2;
	case 4:
		memcpy(&v4, p, 4);
		return v4;
	default:
		memcpy(&v8, p, 8);
		return v8;
	}
}

static inline uint64_t zig(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzig(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline int64_t sext(uint64_t v, uint32_t bytes)
{
	uint32_t sh = 64 - 8 * bytes;

	return (int64_t)(v << sh) >> sh;
}

static inline bool is_signed(uint32_t ty)
{
	return ty >= RIP_FT_S8 && ty <= RIP_FT_S64;
}

static inline uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* ---- the two lists ---------------------------------------------------------------- */

/*
 * Only the last PK_WINDOW stamps are kept: an entry PK_WINDOW stamps old
 * leaves its list (its value is written out in full if it comes back).
 * Stamp s sits at position s % PK_WINDOW, and each list is a bitmap of
 * the positions it holds: the rank of an entry is the number of its
 * list's bits between it and the newest stamp, counted a 64-bit word at a
 * time from the newest, so a small rank (the usual one) costs a word or
 * two.  Everything stays in the first-level cache.
 */
#ifndef PK_WINDOW
#define PK_WINDOW 8192u
#endif
#define PK_WMASK (PK_WINDOW - 1)
#define PK_WORDS (PK_WINDOW / 64)
_Static_assert((PK_WINDOW & PK_WMASK) == 0 && PK_WINDOW >= 64, "PK_WINDOW: a power of 2");

struct mtf {
	uint32_t aux[PK_WINDOW][2];   /* the field after, by position and list (below) */
	uint8_t list[PK_WINDOW];      /* 0 or 1, or 2: none (moved on, or never used) */
	uint64_t bits[2][PK_WORDS];   /* the positions each list holds */
	uint8_t wc[2][PK_WORDS];      /* bits set in each word */
	uint16_t gc[2][PK_WORDS / 8]; /* in each group of 8 words */
	uint32_t n;		      /* stamps used */
};
_Static_assert(PK_WORDS % 8 == 0, "words come in groups of 8");

/*
 * Count with the popcnt instruction where the CPU has it (chosen at load
 * time: the baseline x86-64 lacks it, and the fallback is a dozen
 * instructions): for the function that inlines the counting.
 */
#if defined(__x86_64__) && !defined(__clang__)
#define PK_POPCNT __attribute__((target_clones("popcnt", "default")))
#else
#define PK_POPCNT
#endif

/* The counts of bytes lo .. hi - 1 of a u64 (0 <= lo <= hi <= 8), each at most 128, summed. */
static inline uint32_t sum_bytes(uint64_t x, uint32_t lo, uint32_t hi)
{
	static const uint64_t below[9] = { 0, 0xff, 0xffff, 0xffffff, 0xffffffff, 0xffffffffffull,
					   0xffffffffffffull, 0xffffffffffffffull, ~0ull };

	x &= below[hi] & ~below[lo];
	x = (x & 0x00ff00ff00ff00ffull) + ((x >> 8) & 0x00ff00ff00ff00ffull); /* 4 lanes of 16 bits */
	return (uint32_t)((x * 0x0001000100010001ull) >> 48);
}

/* The entries of list l in words lo .. hi - 1 of group g (8 words), 0 <= lo <= hi <= 8. */
static inline uint32_t mtf_part(const struct mtf *m, int l, uint32_t g, uint32_t lo, uint32_t hi)
{
	uint64_t x;

	memcpy(&x, &m->wc[l][(g % (PK_WORDS / 8)) * 8], 8);
	return sum_bytes(x, lo, hi);
}

/*
 * Words are numbered as stamps are, without wrapping (stamp >> 6); word w
 * sits at w % PK_WORDS.  The entries of list l in the words strictly
 * between lo and hi (whole words, less than a lap apart): the counts of a
 * group's words 8 at a time, whole groups by their count.
 */
static inline uint32_t mtf_between(const struct mtf *m, int l, uint32_t lo, uint32_t hi)
{
	uint32_t a = lo + 1, ga = a / 8, gb = hi / 8, r;

	if (a >= hi)
		return 0;
	if (ga == gb)
		return mtf_part(m, l, ga, a % 8, hi % 8);
	r = mtf_part(m, l, ga, a % 8, 8) + mtf_part(m, l, gb, 0, hi % 8);
	for (uint32_t g = ga + 1; g < gb; g++)
		r += m->gc[l][g % (PK_WORDS / 8)];
	return r;
}

static inline void mtf_drop(struct mtf *m, uint32_t pos)
{
	uint32_t l = m->list[pos];

	if (l == 2)
		return;
	m->list[pos] = 2;
	m->bits[l][pos / 64] &= ~(1ull << (pos % 64));
	m->wc[l][pos / 64]--;
	m->gc[l][pos / 512]--;
}

/* A new stamp in list l, pushing out the entry PK_WINDOW stamps older. */
static inline uint32_t mtf_push(struct mtf *m, uint32_t l)
{
	uint32_t s = m->n++, p = s & PK_WMASK;

	mtf_drop(m, p);
	m->list[p] = (uint8_t)l;
	m->bits[l][p / 64] |= 1ull << (p % 64);
	m->wc[l][p / 64]++;
	m->gc[l][p / 512]++;
	return s;
}

static inline void mtf_reset(struct mtf *m)
{
	m->n = 0;
	memset(m->list, 2, sizeof(m->list));
	memset(m->bits, 0, sizeof(m->bits));
	memset(m->wc, 0, sizeof(m->wc));
	memset(m->gc, 0, sizeof(m->gc));
}

/* ---- the lists of each stream (version 3) ------------------------------------------------ */

/*
 * Each stream (a packet's stream_instance_id: a ring, a thread) has its own
 * pair of lists and its own stamps: a free names a block its own thread
 * allocated a few allocations ago, and the packets of other threads in
 * between no longer add to its rank or push it out of the window (at 2
 * threads, shared lists doubled the ranks of frees).  The streams of a
 * block are numbered as their first coded packets come; the first
 * PK_NSTREAMS - 1 have lists of their own, the others share the last
 * pair, so a block of thousands of streams costs each side at most
 * PK_NSTREAMS pairs of lists (about 74 KiB each for the coder, 192 KiB for
 * the decoder).  A pair is emptied when a stream is given it.  Blocks of
 * versions 1 and 2 have one pair for all their packets (every stream is 0).
 */
#define PK_NSTREAMS 16u
_Static_assert(PK_NSTREAMS <= 32, "a stream's number has 5 bits in the coder's table");

struct pk_streams {
	uint32_t n;
	uint64_t id[PK_NSTREAMS];
};

/* The number of stream id in the block; *fresh when it is given now (its lists to empty). */
static inline uint32_t pk_stream(struct pk_streams *s, uint64_t id, bool *fresh)
{
	*fresh = false;
	for (uint32_t i = 0; i < s->n; i++)
		if (s->id[i] == id)
			return i;
	if (s->n == PK_NSTREAMS)
		return PK_NSTREAMS - 1;
	*fresh = true;
	s->id[s->n] = id;
	return s->n++;
}

/* ---- the plan of a type -------------------------------------------------------------- */

/* What to do with each field, worked out once a block for each type it meets. */
enum {
	OP_U,
	OP_S,
	OP_HEX,
	OP_STR,
	OP_ARR
};

static inline uint8_t field_op(uint32_t ty)
{
	switch (ty) {
	case RIP_FT_HEX64:
		return OP_HEX;
	case RIP_FT_STRING:
		return OP_STR;
	case RIP_FT_HEX64_ARRAY:
		return OP_ARR;
	default:
		return is_signed(ty) ? OP_S : OP_U;
	}
}

/* The column key of field i of t in a block of version ver. */
static inline uint32_t field_key(const struct ev_type *t, uint32_t i, uint32_t ver)
{
	switch (field_op(t->fields[i].type)) {
	case OP_HEX:
		return K_HEX(t->id, i);
	case OP_STR:
		return K_STR;
	case OP_ARR:
		return K_ARR;
	default:
		return ver == 1 ? K_NAME(name_hash(t->fields[i].name)) : K_INT(t->id, i);
	}
}

/* ---- integer fields (version 2) --------------------------------------------------------- */

/*
 * An integer field is coded against a guess: the value that followed, the
 * last time, the value its name had last (in any type of event).  A free's
 * "bt" is the one that followed its malloc's "bt" the last time the same
 * pair of call sites ran, so most of them are a 0.  The code of v for the
 * guess g swaps two values: 0 when v == g, g when v == 0, v otherwise (a
 * field that does not repeat keeps its values, and what zstd finds in
 * them).  Signed fields are guessed on their zigzag.  A name is the index
 * of its hash among the names the block's types have met, in the order
 * their first events come (the last index shared past PK_NAMES); the
 * guesses are kept in a table of PK_PRED_BITS bits indexed by (name,
 * value)'s hash: a collision costs a bad guess, never a wrong value, for
 * both sides do the same.  Each block starts with no name and every guess
 * and last value 0.
 */
#define PK_PRED_BITS 14
#define PK_NAMES 64u

struct pred {
	uint64_t next[1u << PK_PRED_BITS]; /* what followed a value of a name last (first: below) */
	uint64_t prev[PK_NAMES];	   /* the last value of each */
	uint32_t names[PK_NAMES];	   /* their hashes */
	uint32_t nnames;
};

/* The name of field i of t, given one now if it is new. */
static inline uint8_t pred_name(struct pred *p, const struct ev_type *t, uint32_t i)
{
	uint32_t h = name_hash(t->fields[i].name);

	for (uint32_t k = 0; k < p->nnames; k++)
		if (p->names[k] == h)
			return (uint8_t)k;
	if (p->nnames == PK_NAMES)
		return PK_NAMES - 1;
	p->names[p->nnames] = h;
	return (uint8_t)p->nnames++;
}

/* The guess after value prev of the name whose salt (pred_salt) is salt. */
static inline uint64_t *pred_slot(struct pred *p, uint64_t prev, uint64_t salt)
{
	uint64_t h = (prev ^ salt) * 0x9e3779b97f4a7c15ull;

	return &p->next[h >> (64 - PK_PRED_BITS)];
}

static inline uint64_t pred_salt(uint8_t name)
{
	return (uint64_t)name << 56;
}

static inline uint64_t *pred_at(struct pred *p, uint8_t name)
{
	return pred_slot(p, p->prev[name], pred_salt(name));
}

/* The code of value v of name (the coder). */
static inline uint64_t pred_code(struct pred *p, uint8_t name, uint64_t v)
{
	uint64_t *s = pred_at(p, name), g = *s;

	*s = v;
	p->prev[name] = v;
	return v == g ? 0 : v ? v : g;
}

/*
 * From version 3, an integer field right after a hex field in its event
 * has a second guess: the value it had the last time the hex value went
 * to the list it goes to now (a malloc's "size" after its "addr": the
 * allocator hands back a block freed a moment ago for a request of the
 * size it had then, so the size of the malloc before at that address).
 * Each entry of a stream's lists keeps that for both lists (aux), and the
 * entry takes it along when it moves; an entry new in the block has none
 * (0).  A list's parity is not liveness (a block live when the block
 * began is first seen at its free), hence one per list.
 *
 * Two guesses: g the table's, h the other (0: none).  The code swaps g
 * and 0, and h and 1 when h is none of 0, 1 and g and g is not 1: its own
 * inverse, so the decoder undoes it with the same guesses.
 */
static inline uint64_t swap2(uint64_t v, uint64_t g, uint64_t h)
{
	bool two = (h > 1) & (h != g) & (g != 1);
	uint64_t r = v == g ? 0 : v == 0 ? g : v; /* selects, not branches: v is noise */

	r = (two & (v == h)) ? 1 : r;
	return (two & (v == 1)) ? h : r;
}

/* The code of value v of name with the second guess h (the coder). */
static inline uint64_t pred_code_g(struct pred *p, uint8_t name, uint64_t v, uint64_t h)
{
	uint64_t *s = pred_at(p, name), g = *s;

	*s = v;
	p->prev[name] = v;
	return swap2(v, g, h);
}

/*
 * The value of code c of a name (the decoder): any c gives a value.  The
 * decoder names a name by its last value's place (prev, in p->prev) and
 * its salt, both kept in its plans: no index to shift at each value.
 */
static inline uint64_t pred_value(struct pred *p, uint64_t *prev, uint64_t salt, uint64_t c)
{
	uint64_t *s = pred_slot(p, *prev, salt), g = *s, v = !c ? g : c == g ? 0 : c;

	*s = v;
	*prev = v;
	return v;
}

/*
 * The value of code c of name with the second guess h (the decoder):
 * swap2(c, g, h), with the usual code, 0 (the table's guess held), first,
 * for which nothing else is worked out (swap2(0, g, h) is g).
 */
static inline uint64_t pred_value_g(struct pred *p, uint64_t *prev, uint64_t salt, uint64_t c,
				    uint64_t h)
{
	uint64_t *s = pred_slot(p, *prev, salt), g = *s, v = g;

	if (c) {
		v = c == g ? 0 : c;
		if ((h > 1) & (h != g) & (g != 1))
			v = c == h ? 1 : c == 1 ? h : v;
	}

	*s = v;
	*prev = v;
	return v;
}

/* What an entry keeps of the integer field after it: the value when it fits, else 0 (none). */
static inline uint32_t aux_of(uint64_t v)
{
	uint32_t r = 0;

#if defined(__x86_64__) && defined(__GNUC__)
	/* a cmov: v is noise, and gcc's branch for it went out of line and back */
	__asm__("cmpq %2, %1\n\tcmovbl %k1, %0"
		: "+r"(r)
		: "r"(v), "r"((uint64_t)UINT32_MAX)
		: "cc");
#else
	if (v < UINT32_MAX)
		r = (uint32_t)v;
#endif
	return r;
}

#endif /* RIP_READ_PACKFMT_H */
