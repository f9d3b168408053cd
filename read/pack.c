/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/pack.c - packed blocks (read/pack.h): the coder a recorder runs on
 * the packets it takes, and the decoder every reader runs on what it reads.
 *
 * Both sides walk the events with the type table and keep the same state:
 * the columns met so far, the last value of each hex field, and the two
 * move-to-front lists of hex values.  A list is a Fenwick tree over
 * "stamps" (every hex value coded takes the next stamp; a value's entry
 * moves to its new stamp), so the rank of an entry (how many entries of
 * its list are newer) and the entry of a rank are both O(log n).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <internal/grow.h>

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
#define K_TS(id) (0x10000u | (id))		       /* time since the event before, per type */
#define K_HEX(id, i) (0x20000u | (id) << 3 | (i))      /* hex fields' list codes */
#define K_NAME(h) (0x80000000u | ((h) & 0x7fffffffu)) /* integer fields, by name */

#define PK_MAXCOLS 512u
#define PK_HDR RIP_PACKET_HDR_SIZE
#define PK_SMALL 64u /* columns shorter than this are stored as they are */

_Static_assert(sizeof(struct pk_hdr) == 64, "pk_hdr is 64 bytes on disk");
_Static_assert(sizeof(struct pk_col) == 16, "pk_col is 16 bytes on disk");
_Static_assert(RIP_EVENT_MAX_FIELDS <= 8, "K_HEX keeps 3 bits for the field");

/* ---- little pieces ---------------------------------------------------------------- */

/* A field of n bytes (1, 2, 4 or 8), little-endian as the writer (checked at open). */
static uint64_t ld(const uint8_t *p, uint32_t n)
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

static uint64_t zig(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzig(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static int64_t sext(uint64_t v, uint32_t bytes)
{
	uint32_t sh = 64 - 8 * bytes;

	return (int64_t)(v << sh) >> sh;
}

static bool is_signed(uint32_t ty)
{
	return ty >= RIP_FT_S8 && ty <= RIP_FT_S64;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static int buf_room(struct buf *b, size_t more)
{
	if (more > SIZE_MAX - b->len)
		return -ENOMEM;
	return RIP_GROW(b->p, b->cap, b->len + more, 256);
}


/* The caller made room (pk_enc_add reserves room in every column for a packet). */
static inline void put_uv(struct buf *b, uint64_t v)
{
	uint8_t *p = b->p + b->len; /* stores through p may alias b: b->len is written once */
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	b->len += n;
}

/* A column being read. */
struct rd {
	const uint8_t *p;
	size_t len, pos;
};

static int get_uv_slow(struct rd *r, uint64_t *v)
{
	uint64_t x = 0;

	if (r->len - r->pos >= 10) { /* no varint is longer: no bound to check on the way */
		const uint8_t *p = r->p + r->pos;

		for (uint32_t k = 0; k < 10; k++) {
			x |= (uint64_t)(p[k] & 0x7f) << (7 * k);
			if (!(p[k] & 0x80)) {
				r->pos += k + 1;
				*v = x;
				return 0;
			}
		}
		return -1;
	}
	for (uint32_t sh = 0; sh < 64; sh += 7) {
		uint8_t c;

		if (r->pos >= r->len)
			return -1;
		c = r->p[r->pos++];
		x |= (uint64_t)(c & 0x7f) << sh;
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* A varint: 0, or -1 when the column ends in it or it is longer than 64 bits. */
static inline int get_uv(struct rd *r, uint64_t *v)
{
	const uint8_t *p = r->p + r->pos;
	size_t left = r->len - r->pos;

	if (left >= 2 && p[0] < 0x80) { /* one byte or two: the usual */
		*v = p[0];
		r->pos++;
		return 0;
	}
	if (left >= 2 && p[1] < 0x80) {
		*v = (p[0] & 0x7fu) | (uint64_t)p[1] << 7;
		r->pos += 2;
		return 0;
	}
	return get_uv_slow(r, v);
}

static const uint8_t *get_bytes(struct rd *r, size_t n)
{
	const uint8_t *p;

	if (r->len - r->pos < n)
		return NULL;
	p = r->p + r->pos;
	r->pos += n;
	return p;
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
	uint64_t val[PK_WINDOW];	    /* by position */
	uint8_t list[PK_WINDOW];	    /* 0 or 1, or 2: none (moved on, or never used) */
	uint64_t bits[2][PK_WORDS];	    /* the positions each list holds */
	uint8_t wc[2][PK_WORDS];	    /* bits set in each word */
	uint16_t gc[2][PK_WORDS / 8];	    /* in each group of 8 words */
	uint32_t count[2];
	uint32_t n; /* stamps used */
};
_Static_assert(PK_WORDS % 8 == 0, "words come in groups of 8");

/* Bits 0 .. b of a word. */
static uint64_t upto(uint32_t b)
{
	return b == 63 ? ~0ull : (2ull << b) - 1;
}

/*
 * Count with the popcnt instruction where the CPU has it (chosen at load
 * time: the baseline x86-64 lacks it, and the fallback is a dozen
 * instructions).
 */
#if defined(__x86_64__) && !defined(__clang__)
#define PK_POPCNT __attribute__((target_clones("popcnt", "default")))
#else
#define PK_POPCNT
#endif

/*
 * Words are numbered as stamps are, without wrapping (stamp >> 6); word w
 * sits at w % PK_WORDS.  The entries of list l in the words strictly
 * between lo and hi (whole words, less than a lap apart).
 */
static uint32_t mtf_between(const struct mtf *m, int l, uint32_t lo, uint32_t hi)
{
	uint32_t r = 0;

	for (uint32_t w = lo + 1; w < hi;) {
		if (w % 8 == 0 && w + 8 <= hi) {
			r += m->gc[l][(w % PK_WORDS) / 8];
			w += 8;
		} else {
			r += m->wc[l][w % PK_WORDS];
			w++;
		}
	}
	return r;
}

/* Entries of list l newer than the one at stamp s (which it holds). */
PK_POPCNT static uint32_t mtf_rank(const struct mtf *m, int l, uint32_t s)
{
	uint32_t newest = m->n - 1, wn = newest >> 6, ws = s >> 6;
	uint64_t top = m->bits[l][wn % PK_WORDS] & upto(newest & 63);

	if (wn == ws)
		return (uint32_t)__builtin_popcountll(top & ~upto(s & 63));
	return (uint32_t)__builtin_popcountll(top) + mtf_between(m, l, ws, wn) +
	       (uint32_t)__builtin_popcountll(m->bits[l][ws % PK_WORDS] & ~upto(s & 63));
}

/* The j-th highest bit set in w (j below c, the bits set), cleared from the nearer end. */
static uint32_t select_high(uint64_t w, uint32_t j, uint32_t c)
{
	if (j < c / 2) {
		while (j--)
			w &= ~(1ull << (63 - __builtin_clzll(w)));
		return (uint32_t)(63 - __builtin_clzll(w));
	}
	for (j = c - 1 - j; j; j--)
		w &= w - 1;
	return (uint32_t)__builtin_ctzll(w);
}

/* The stamp of list l's entry of this rank (below count[l]), or UINT32_MAX. */
PK_POPCNT static uint32_t mtf_find(const struct mtf *m, int l, uint32_t rank)
{
	uint32_t newest = m->n - 1, wn = newest >> 6;
	uint32_t oldest = wn >= PK_WORDS ? wn - PK_WORDS : 0; /* the lowest word still held */
	uint64_t w = m->bits[l][wn % PK_WORDS] & upto(newest & 63);
	uint32_t c = (uint32_t)__builtin_popcountll(w);

	if (rank < c)
		return wn << 6 | select_high(w, rank, c);
	rank -= c;
	for (uint32_t k = wn; k-- > oldest;) {
		if (k % 8 == 7 && k >= oldest + 8 && m->gc[l][(k % PK_WORDS) / 8] <= rank) {
			rank -= m->gc[l][(k % PK_WORDS) / 8]; /* the group k - 7 .. k, all held */
			k -= 7;
			continue;
		}
		w = m->bits[l][k % PK_WORDS];
		if (k == oldest && wn >= PK_WORDS) /* the newest word's place: the lap before */
			w &= ~upto(newest & 63);
		c = (uint32_t)__builtin_popcountll(w);
		if (rank < c)
			return k << 6 | select_high(w, rank, c);
		rank -= c;
	}
	return UINT32_MAX;
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
	m->count[l]--;
}

/* Put v at a new stamp in list l, pushing out the entry PK_WINDOW stamps older. */
static inline uint32_t mtf_push(struct mtf *m, uint64_t v, uint32_t l)
{
	uint32_t s = m->n++, p = s & PK_WMASK;

	mtf_drop(m, p);
	m->val[p] = v;
	m->list[p] = (uint8_t)l;
	m->bits[l][p / 64] |= 1ull << (p % 64);
	m->wc[l][p / 64]++;
	m->gc[l][p / 512]++;
	m->count[l]++;
	return s;
}

static void mtf_reset(struct mtf *m)
{
	m->n = 0;
	m->count[0] = m->count[1] = 0;
	memset(m->list, 2, sizeof(m->list));
	memset(m->bits, 0, sizeof(m->bits));
	memset(m->wc, 0, sizeof(m->wc));
	memset(m->gc, 0, sizeof(m->gc));
}

/* ---- the plan of a type -------------------------------------------------------------- */

/* What to do with each field, worked out once a block for each type it meets. */
enum { OP_U, OP_S, OP_HEX, OP_STR, OP_ARR };

static uint8_t field_op(uint32_t ty)
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

/* The column key of field i of t. */
static uint32_t field_key(const struct ev_type *t, uint32_t i)
{
	switch (field_op(t->fields[i].type)) {
	case OP_HEX:
		return K_HEX(t->id, i);
	case OP_STR:
		return K_STR;
	case OP_ARR:
		return K_ARR;
	default:
		return K_NAME(name_hash(t->fields[i].name));
	}
}

/* ---- the coder -------------------------------------------------------------------- */

struct slot {
	uint64_t v;
	uint32_t stamp;
	uint32_t gen; /* the block it was set in: a new block empties the table */
};

struct eplan {
	uint32_t gen; /* the block it was made for */
	uint32_t nf;
	struct buf *ts;
	struct {
		uint8_t op, size;
		struct buf *col;
	} f[RIP_EVENT_MAX_FIELDS];
};

struct pk_enc {
	const struct ev_types *types;
	int level;
	ZSTD_CCtx *zc;
	uint32_t ncols;
	uint32_t key[PK_MAXCOLS];
	struct buf col[PK_MAXCOLS];
	size_t reserve; /* room every column has for the packet being coded */
	bool oom;	/* a column could not get it: the block is lost */
	struct eplan plan[EV_MAX_TYPES];
	uint64_t last[EV_MAX_TYPES][RIP_EVENT_MAX_FIELDS]; /* of hex fields */
	struct mtf mtf;
	struct slot *hash;
	uint32_t hmask, hused, gen;
	struct buf out;
	uint64_t raw, events, ts_min, ts_max;
	uint32_t npackets;
};

int pk_enc_new(struct pk_enc **out, const struct ev_types *types, int level)
{
	struct pk_enc *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->zc = ZSTD_createCCtx();
	if (!e->zc) {
		free(e);
		return -ENOMEM;
	}
	e->types = types;
	e->level = level < 1 ? 1 : level > 19 ? 19 : level;
	e->gen = 1;
	e->ts_min = UINT64_MAX;
	mtf_reset(&e->mtf);
	*out = e;
	return 0;
}

void pk_enc_free(struct pk_enc *e)
{
	if (!e)
		return;
	for (uint32_t i = 0; i < PK_MAXCOLS; i++)
		free(e->col[i].p);
	free(e->out.p);
	free(e->hash);
	ZSTD_freeCCtx(e->zc);
	free(e);
}

size_t pk_enc_raw(const struct pk_enc *e)
{
	return e->raw;
}

uint32_t pk_enc_packets(const struct pk_enc *e)
{
	return e->npackets;
}

/* The column of key, made now if it is new (K_OTHER's when the table is full). */
static struct buf *enc_col(struct pk_enc *e, uint32_t key)
{
	for (uint32_t i = 0; i < e->ncols; i++)
		if (e->key[i] == key)
			return &e->col[i];
	if (e->ncols == PK_MAXCOLS)
		return &e->col[K_OTHER];
	e->col[e->ncols].len = 0;
	if (buf_room(&e->col[e->ncols], e->reserve)) {
		e->oom = true;
		return &e->col[K_OTHER];
	}
	e->key[e->ncols] = key;
	return &e->col[e->ncols++];
}

static struct eplan *enc_plan(struct pk_enc *e, const struct ev_type *t)
{
	struct eplan *pl = &e->plan[t->id];

	if (pl->gen == e->gen)
		return pl;
	pl->ts = enc_col(e, K_TS(t->id));
	pl->nf = t->nfields;
	for (uint32_t i = 0; i < t->nfields; i++) {
		pl->f[i].op = field_op(t->fields[i].type);
		pl->f[i].size = (uint8_t)rip_field_size(t->fields[i].type);
		pl->f[i].col = enc_col(e, field_key(t, i));
	}
	pl->gen = e->gen;
	return pl;
}

static int hash_grow(struct pk_enc *e)
{
	uint32_t cap = e->hmask ? (e->hmask + 1) * 2 : 8192;
	struct slot *h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (uint32_t i = 0; e->hmask && i <= e->hmask; i++) {
		struct slot *s = &e->hash[i];
		uint32_t j;

		if (s->gen != e->gen)
			continue;
		for (j = (uint32_t)((s->v * 0x9e3779b97f4a7c15ull) >> 40) & (cap - 1); h[j].gen;
		     j = (j + 1) & (cap - 1))
			;
		h[j] = *s;
	}
	free(e->hash);
	e->hash = h;
	e->hmask = cap - 1;
	e->gen = 1; /* only the live entries were copied, now of generation 1 */
	for (uint32_t i = 0; i < cap; i++)
		if (h[i].gen)
			h[i].gen = 1;
	return 0;
}

/* Code the hex value v into column b: its rank in a list, or its difference from *last. */
static int enc_hex(struct pk_enc *e, struct buf *b, uint64_t *last, uint64_t v)
{
	struct mtf *m = &e->mtf;
	struct slot *s;
	uint32_t j;
	int ret;

	if ((e->hused + 1) * 2 > e->hmask + 1 && (ret = hash_grow(e)))
		return ret;
	for (j = (uint32_t)((v * 0x9e3779b97f4a7c15ull) >> 40) & e->hmask;; j = (j + 1) & e->hmask) {
		s = &e->hash[j];
		if (s->gen != e->gen || s->v == v)
			break;
	}
	if (s->gen == e->gen && m->n - s->stamp <= PK_WINDOW) {
		uint32_t p = s->stamp & PK_WMASK;
		uint32_t l = m->list[p];

		put_uv(b, ((uint64_t)mtf_rank(m, l, s->stamp) << 1 | (uint64_t)l) + 1);
		mtf_drop(m, p);
		s->stamp = mtf_push(m, v, l ^ 1);
	} else {
		put_uv(b, 0);
		put_uv(&e->col[K_HEXLIT], zig((int64_t)(v - *last)));
		if (s->gen != e->gen)
			e->hused++;
		s->v = v;
		s->gen = e->gen;
		s->stamp = mtf_push(m, v, 1);
	}
	*last = v;
	return 0;
}

/*
 * Walk the events of a packet as ev_decode does: 1 when every byte is an
 * event of a known type (the coder can take it), 0 when not.
 */
static int enc_check(const struct ev_types *types, const uint8_t *d, size_t len)
{
	size_t off = PK_HDR;
	uint64_t ts = 0;

	while (off < len) {
		const struct ev_type *t;
		uint32_t id;
		int hl = ev_header(d, len, off, &id, &ts);

		if (hl <= 0 || (hl == 13 && d[off] != RIP_EVENT_ID_EXTENDED))
			return 0;
		off += (size_t)hl;
		if (id >= EV_MAX_TYPES || !types->t[id].valid)
			return 0;
		t = &types->t[id];
		if (len - off < t->fixed)
			return 0;
		off += t->fixed;
		if (t->string) {
			size_t max = len - off < RIP_STRING_MAX ? len - off : RIP_STRING_MAX;
			const uint8_t *nul = memchr(d + off, 0, max);

			if (!nul)
				return 0;
			off += (size_t)(nul - (d + off)) + 1;
		} else if (t->array) {
			uint64_t cnt;

			if (len - off < 4 || (cnt = ld(d + off, 4)) > RIP_ARRAY_MAX ||
			    len - off - 4 < cnt * 8)
				return 0;
			off += 4 + cnt * 8;
		}
	}
	return 1;
}

/* The events of a packet enc_check passed, into the columns. */
static int enc_events(struct pk_enc *e, const uint8_t *d, size_t len, uint64_t ts)
{
	struct buf *evid = &e->col[K_EVID];
	size_t off = PK_HDR;
	int ret;

	while (off < len) {
		const struct ev_type *t;
		struct eplan *pl;
		uint64_t prev = ts;
		uint32_t id = 0;
		int hl = ev_header(d, len, off, &id, &ts);

		off += (size_t)hl;
		t = &e->types->t[id];
		pl = enc_plan(e, t);
		put_uv(evid, (uint64_t)id << 1 | (hl == 13));
		put_uv(pl->ts, hl == 13 ? zig((int64_t)(ts - prev)) : ts - prev);
		e->events++;
		for (uint32_t i = 0, nf = pl->nf; i < nf; i++) {
			struct buf *b = pl->f[i].col;
			uint32_t n = pl->f[i].size;
			uint64_t v;

			switch (pl->f[i].op) {
			case OP_STR:
				n = (uint32_t)strnlen((const char *)d + off, len - off) + 1;
				memcpy(b->p + b->len, d + off, n);
				b->len += n;
				off += n;
				break;
			case OP_ARR:
				v = ld(d + off, 4);
				put_uv(b, v);
				memcpy(b->p + b->len, d + off + 4, v * 8);
				b->len += v * 8;
				off += 4 + v * 8;
				break;
			case OP_HEX:
				ret = enc_hex(e, b, &e->last[id][i], ld(d + off, 8));
				if (ret)
					return ret;
				off += 8;
				break;
			case OP_S:
				put_uv(b, zig(sext(ld(d + off, n), n)));
				off += n;
				break;
			default:
				put_uv(b, ld(d + off, n));
				off += n;
			}
		}
	}
	return 0;
}

int pk_enc_add(struct pk_enc *e, const uint8_t *pkt, size_t len)
{
	struct rip_packet h;
	bool coded = false;
	struct buf *b;
	int ret = 0;

	if (!len)
		return -EINVAL;
	if (len > PK_RAW_MAX || e->raw + len > PK_RAW_MAX)
		return -E2BIG;
	/* room in every column for what this packet can add to it (2 bytes a byte at most) */
	e->reserve = 2 * len + 64;
	if (!e->ncols) /* a new block: the fixed columns first, in key order */
		for (uint32_t k = 0; k < K_FIXED; k++)
			enc_col(e, k);
	for (uint32_t k = 0; k < e->ncols; k++)
		if (buf_room(&e->col[k], e->reserve))
			e->oom = true;
	if (e->oom)
		return -ENOMEM;
	if (len >= PK_HDR) {
		memcpy(&h, pkt, sizeof(h));
		coded = h.magic == RIP_CTF_MAGIC && h.content_size % 8 == 0 &&
			h.content_size / 8 == len && enc_check(e->types, pkt, len);
		if (h.magic == RIP_CTF_MAGIC) {
			if (h.timestamp_begin < e->ts_min)
				e->ts_min = h.timestamp_begin;
			if (h.timestamp_end > e->ts_max)
				e->ts_max = h.timestamp_end;
		}
	}
	b = &e->col[K_PKT];
	b->p[b->len++] = !coded;
	if (coded) {
		b = &e->col[K_PHDR];
		memcpy(b->p + b->len, pkt, PK_HDR);
		b->len += PK_HDR;
		ret = enc_events(e, pkt, len, h.timestamp_begin);
	} else {
		b = &e->col[K_RAW];
		put_uv(b, len);
		memcpy(b->p + b->len, pkt, len);
		b->len += len;
	}
	if (ret || e->oom) {
		e->oom = true; /* the block is lost: pk_enc_take says so */
		return ret ? ret : -ENOMEM;
	}
	e->raw += len;
	e->npackets++;
	return 0;
}

static void enc_reset(struct pk_enc *e)
{
	e->ncols = 0;
	e->raw = e->events = 0;
	e->npackets = 0;
	e->ts_min = UINT64_MAX;
	e->ts_max = 0;
	memset(e->last, 0, sizeof(e->last));
	mtf_reset(&e->mtf);
	e->hused = 0;
	e->oom = false;
	if (++e->gen == 0) { /* after 4 billion blocks: clear the tables for real */
		if (e->hash)
			memset(e->hash, 0, (e->hmask + 1) * sizeof(*e->hash));
		for (uint32_t i = 0; i < EV_MAX_TYPES; i++)
			e->plan[i].gen = 0;
		e->gen = 1;
	}
}

int pk_enc_take(struct pk_enc *e, const uint8_t **out, size_t *len, char *err, size_t errlen)
{
	size_t need = sizeof(struct pk_hdr) + e->ncols * sizeof(struct pk_col), pos;
	struct pk_hdr h;
	int ret;

	if (e->oom) {
		enc_reset(e);
		return rr_fail(err, errlen, -ENOMEM, "packing a block: out of memory");
	}
	if (!e->npackets)
		return -ENODATA;
	for (uint32_t i = 0; i < e->ncols; i++)
		need += ZSTD_compressBound(e->col[i].len);
	e->out.len = 0;
	if ((ret = buf_room(&e->out, need))) {
		enc_reset(e);
		return rr_fail(err, errlen, ret, "packing a block: out of memory");
	}
	pos = sizeof(h) + e->ncols * sizeof(struct pk_col);
	for (uint32_t i = 0; i < e->ncols; i++) {
		struct pk_col c = { .key = e->key[i], .raw = (uint32_t)e->col[i].len };
		size_t z = 0;

		if (c.raw >= PK_SMALL) {
			z = ZSTD_compressCCtx(e->zc, e->out.p + pos, need - pos, e->col[i].p, c.raw,
					      e->level);
			if (ZSTD_isError(z)) {
				enc_reset(e);
				return rr_fail(err, errlen, -EIO, "zstd: %s", ZSTD_getErrorName(z));
			}
		}
		if (z && z < c.raw) {
			c.flags = PK_COL_ZSTD;
			c.size = (uint32_t)z;
		} else {
			memcpy(e->out.p + pos, e->col[i].p, c.raw);
			c.size = c.raw;
		}
		pos += c.size;
		memcpy(e->out.p + sizeof(h) + i * sizeof(c), &c, sizeof(c));
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, PK_MAGIC, 4);
	h.version = PK_VERSION;
	h.npackets = e->npackets;
	h.ncols = e->ncols;
	h.raw = e->raw;
	h.size = pos;
	h.events = e->events;
	h.ts_min = e->ts_min == UINT64_MAX ? 0 : e->ts_min;
	h.ts_max = e->ts_max;
	memcpy(e->out.p, &h, sizeof(h));
	h.crc = (uint32_t)crc32(0, e->out.p, (uInt)pos);
	memcpy(e->out.p, &h, sizeof(h));
	*out = e->out.p;
	*len = pos;
	enc_reset(e);
	return 0;
}

/* ---- the decoder ------------------------------------------------------------------ */

/* Bytes of columns a block of raw bytes in npackets packets can need at most. */
static uint64_t cols_bound(uint64_t raw, uint64_t npackets)
{
	return 2 * raw + 64 * npackets + 4096;
}

int pk_peek(const uint8_t *blk, size_t len, struct pk_hdr *hdr, char *err, size_t errlen)
{
	uint64_t pos, total = 0;

	if (len < sizeof(*hdr))
		return rr_fail(err, errlen, -EBADMSG, "packed block cut in its header");
	memcpy(hdr, blk, sizeof(*hdr));
	if (memcmp(hdr->magic, PK_MAGIC, 4))
		return rr_fail(err, errlen, -EBADMSG, "not a packed block (bad magic)");
	if (hdr->version != PK_VERSION)
		return rr_fail(err, errlen, -EBADMSG, "packed block of version %u (this rip reads %u)",
			       hdr->version, PK_VERSION);
	if (hdr->size != len || hdr->raw > PK_RAW_MAX || hdr->npackets > hdr->raw ||
	    !hdr->npackets || hdr->ncols > PK_MAXCOLS || hdr->ncols < K_FIXED)
		return rr_fail(err, errlen, -EBADMSG,
			       "packed block header out of range (size %" PRIu64 " of %zu, raw %" PRIu64
			       ", %u packets, %u columns)",
			       hdr->size, len, hdr->raw, hdr->npackets, hdr->ncols);
	{
		struct pk_hdr z = *hdr;
		uint32_t crc;

		z.crc = 0;
		crc = (uint32_t)crc32(0, (const Bytef *)&z, sizeof(z));
		crc = (uint32_t)crc32(crc, blk + sizeof(z), (uInt)(len - sizeof(z)));
		if (crc != hdr->crc)
			return rr_fail(err, errlen, -EBADMSG, "packed block: checksum mismatch");
	}
	pos = sizeof(*hdr) + (uint64_t)hdr->ncols * sizeof(struct pk_col);
	if (pos > len)
		return rr_fail(err, errlen, -EBADMSG, "packed block cut in its column table");
	for (uint32_t i = 0; i < hdr->ncols; i++) {
		struct pk_col c;

		memcpy(&c, blk + sizeof(*hdr) + i * sizeof(c), sizeof(c));
		if ((i < K_FIXED && c.key != i) || (c.flags & ~PK_COL_ZSTD) ||
		    (!(c.flags & PK_COL_ZSTD) && c.size != c.raw) || c.size > len - pos)
			return rr_fail(err, errlen, -EBADMSG, "packed block: bad column %u", i);
		for (uint32_t j = 0; j < i; j++)
			if (!memcmp(blk + sizeof(*hdr) + j * sizeof(c), &c.key, 4))
				return rr_fail(err, errlen, -EBADMSG,
					       "packed block: column key 0x%x twice", c.key);
		pos += c.size;
		total += c.raw;
	}
	if (pos != len)
		return rr_fail(err, errlen, -EBADMSG, "packed block: %" PRIu64
			       " bytes of columns in %zu", pos, len);
	if (total > cols_bound(hdr->raw, hdr->npackets))
		return rr_fail(err, errlen, -EBADMSG,
			       "packed block: columns of %" PRIu64 " bytes for %" PRIu64
			       " bytes of packets", total, hdr->raw);
	return 0;
}

struct dplan {
	bool ready;
	uint32_t nf;
	struct rd *ts;
	struct {
		uint8_t op, size;
		struct rd *col;
	} f[RIP_EVENT_MAX_FIELDS];
};

struct dec {
	const struct ev_types *types;
	uint32_t ncols;
	uint32_t key[PK_MAXCOLS];
	struct rd col[PK_MAXCOLS];
	struct dplan plan[EV_MAX_TYPES];
	uint64_t last[EV_MAX_TYPES][RIP_EVENT_MAX_FIELDS];
	struct mtf mtf;
	char *err;
	size_t errlen;
};

/* The column of key: that column, K_OTHER's when the block has none (the table was full). */
static struct rd *dec_col(struct dec *d, uint32_t key)
{
	for (uint32_t i = 0; i < d->ncols; i++)
		if (d->key[i] == key)
			return &d->col[i];
	return &d->col[K_OTHER];
}

static struct dplan *dec_plan(struct dec *d, const struct ev_type *t)
{
	struct dplan *pl = &d->plan[t->id];

	if (pl->ready)
		return pl;
	pl->ts = dec_col(d, K_TS(t->id));
	pl->nf = t->nfields;
	for (uint32_t i = 0; i < t->nfields; i++) {
		pl->f[i].op = field_op(t->fields[i].type);
		pl->f[i].size = (uint8_t)rip_field_size(t->fields[i].type);
		pl->f[i].col = dec_col(d, field_key(t, i));
	}
	pl->ready = true;
	return pl;
}

static int bad(struct dec *d, const char *what, uint32_t p)
{
	return rr_fail(d->err, d->errlen, -EBADMSG, "packed block: %s (packet %u)", what, p);
}

static int dec_hex(struct dec *d, struct rd *r, uint64_t *last, uint64_t *v, uint32_t p)
{
	struct mtf *m = &d->mtf;
	uint64_t code, dv;

	if (get_uv(r, &code))
		return bad(d, "hex code column cut", p);
	if (!code) {
		if (get_uv(&d->col[K_HEXLIT], &dv))
			return bad(d, "hex literal column cut", p);
		*v = *last + (uint64_t)unzig(dv);
		mtf_push(m, *v, 1);
	} else {
		int l = (int)((code - 1) & 1);
		uint64_t rank = (code - 1) >> 1;
		uint32_t pos;

		if (rank >= m->count[l])
			return bad(d, "hex rank past its list", p);
		pos = mtf_find(m, l, (uint32_t)rank);
		if (pos == UINT32_MAX || m->n - pos > PK_WINDOW || m->list[pos & PK_WMASK] != l)
			return bad(d, "hex list inconsistent", p);
		pos &= PK_WMASK;
		*v = m->val[pos];
		mtf_drop(m, pos);
		mtf_push(m, *v, (uint32_t)l ^ 1);
	}
	*last = *v;
	return 0;
}

/* The events of one coded packet into o[PK_HDR .. len). */
static int dec_events(struct dec *d, uint8_t *o, size_t len, uint64_t ts, uint32_t p)
{
	struct rd *evid = &d->col[K_EVID];
	size_t off = PK_HDR;
	int ret;

	while (off < len) {
		const struct ev_type *t;
		struct dplan *pl;
		uint64_t code, dt, id;
		bool ext;

		if (get_uv(evid, &code))
			return bad(d, "event id column cut", p);
		id = code >> 1;
		ext = code & 1;
		if (id >= EV_MAX_TYPES || !d->types->t[id].valid ||
		    (!ext && id >= RIP_EVENT_ID_EXTENDED))
			return bad(d, "unknown event id", p);
		t = &d->types->t[id];
		pl = dec_plan(d, t);
		if (get_uv(pl->ts, &dt))
			return bad(d, "time column cut", p);
		if (len - off < (ext ? 13u : 4u) + t->fixed)
			return bad(d, "event past its packet's end", p);
		if (ext) {
			uint32_t id32 = (uint32_t)id;

			ts += (uint64_t)unzig(dt);
			o[off] = RIP_EVENT_ID_EXTENDED;
			memcpy(o + off + 1, &id32, 4);
			memcpy(o + off + 5, &ts, 8);
			off += 13;
		} else {
			uint32_t h;

			ts += dt;
			h = (uint32_t)id | (uint32_t)(ts & ((1ull << RIP_EVENT_TS_BITS) - 1)) << 5;
			memcpy(o + off, &h, 4);
			off += 4;
		}
		for (uint32_t i = 0, nf = pl->nf; i < nf; i++) {
			struct rd *r = pl->f[i].col;
			uint32_t n = pl->f[i].size;
			const uint8_t *src, *nul;
			uint64_t v = 0;
			uint32_t c32;
			size_t max;

			switch (pl->f[i].op) {
			case OP_STR:
				max = len - off < RIP_STRING_MAX ? len - off : RIP_STRING_MAX;
				if (r->len - r->pos < max)
					max = r->len - r->pos;
				nul = memchr(r->p + r->pos, 0, max);
				if (!nul)
					return bad(d, "string past its packet or column", p);
				max = (size_t)(nul - (r->p + r->pos)) + 1;
				memcpy(o + off, get_bytes(r, max), max);
				off += max;
				continue;
			case OP_ARR:
				if (get_uv(r, &v) || v > RIP_ARRAY_MAX || len - off < 4 + v * 8 ||
				    !(src = get_bytes(r, v * 8)))
					return bad(d, "array past its packet or column", p);
				c32 = (uint32_t)v;
				memcpy(o + off, &c32, 4);
				memcpy(o + off + 4, src, v * 8);
				off += 4 + v * 8;
				continue;
			case OP_HEX:
				if ((ret = dec_hex(d, r, &d->last[id][i], &v, p)))
					return ret;
				break;
			case OP_S:
				if (get_uv(r, &v))
					return bad(d, "field column cut", p);
				v = (uint64_t)unzig(v);
				break;
			default:
				if (get_uv(r, &v))
					return bad(d, "field column cut", p);
			}
			memcpy(o + off, &v, 8); /* the low n bytes count; the block has 8 to spare */
			off += n;
		}
	}
	return off == len ? 0 : bad(d, "events past their packet", p);
}

int pk_decode(const struct ev_types *types, const uint8_t *blk, size_t len, struct pk_block *out,
	      char *err, size_t errlen)
{
	struct pk_hdr h;
	struct dec *d;
	uint8_t *cols = NULL;
	size_t pos, cpos = 0, total = 0, o = 0;
	ZSTD_DCtx *zd = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	if ((ret = pk_peek(blk, len, &h, err, errlen)))
		return ret;
	d = malloc(sizeof(*d));
	if (!d)
		return rr_fail(err, errlen, -ENOMEM, "decoding a packed block: out of memory");
	d->types = types;
	d->ncols = h.ncols;
	d->err = err;
	d->errlen = errlen;
	for (uint32_t i = 0; i < EV_MAX_TYPES; i++)
		d->plan[i].ready = false;
	memset(d->last, 0, sizeof(d->last));
	mtf_reset(&d->mtf);
	pos = sizeof(h) + h.ncols * sizeof(struct pk_col);
	for (uint32_t i = 0; i < h.ncols; i++) {
		struct pk_col c;

		memcpy(&c, blk + sizeof(h) + i * sizeof(c), sizeof(c));
		total += c.raw;
	}
	ret = -ENOMEM;
	cols = malloc(total ? total : 1);
	out->data = malloc(h.raw + 8);
	out->off = malloc(h.npackets * sizeof(*out->off));
	zd = ZSTD_createDCtx();
	if (!cols || !out->data || !out->off || !zd) {
		rr_fail(err, errlen, ret, "decoding a packed block: out of memory");
		goto free_all;
	}
	for (uint32_t i = 0; i < h.ncols; i++) {
		struct pk_col c;

		memcpy(&c, blk + sizeof(h) + i * sizeof(c), sizeof(c));
		d->key[i] = c.key;
		if (c.flags & PK_COL_ZSTD) {
			size_t z = ZSTD_decompressDCtx(zd, cols + cpos, c.raw, blk + pos, c.size);

			if (ZSTD_isError(z) || z != c.raw) {
				ret = rr_fail(err, errlen, -EBADMSG, "packed block: column %u: %s", i,
					      ZSTD_isError(z) ? ZSTD_getErrorName(z) : "short");
				goto free_all;
			}
		} else {
			memcpy(cols + cpos, blk + pos, c.raw);
		}
		d->col[i] = (struct rd){ .p = cols + cpos, .len = c.raw };
		cpos += c.raw;
		pos += c.size;
	}
	for (uint32_t p = 0; p < h.npackets; p++) {
		struct rd *pk = &d->col[K_PKT];
		const uint8_t *src;
		uint8_t kind;
		uint64_t n;

		ret = bad(d, "packet column cut", p);
		if (pk->pos >= pk->len)
			goto free_all;
		kind = pk->p[pk->pos++];
		out->off[p] = o;
		if (kind == 1) {
			if (get_uv(&d->col[K_RAW], &n) || n > h.raw - o ||
			    !(src = get_bytes(&d->col[K_RAW], n))) {
				ret = bad(d, "kept packet past the block", p);
				goto free_all;
			}
			memcpy(out->data + o, src, n);
			o += n;
		} else if (kind == 0) {
			struct rip_packet ph;

			if (!(src = get_bytes(&d->col[K_PHDR], PK_HDR))) {
				ret = bad(d, "packet header column cut", p);
				goto free_all;
			}
			memcpy(&ph, src, sizeof(ph));
			n = ph.content_size / 8;
			if (ph.content_size % 8 || n < PK_HDR || n > h.raw - o) {
				ret = bad(d, "packet size out of range", p);
				goto free_all;
			}
			memcpy(out->data + o, src, PK_HDR);
			if ((ret = dec_events(d, out->data + o, n, ph.timestamp_begin, p)))
				goto free_all;
			o += n;
		} else {
			ret = bad(d, "bad packet kind", p);
			goto free_all;
		}
	}
	for (uint32_t i = 0; i < h.ncols; i++)
		if (d->col[i].pos != d->col[i].len) {
			ret = rr_fail(err, errlen, -EBADMSG,
				      "packed block: column 0x%x has bytes no packet used", d->key[i]);
			goto free_all;
		}
	if (o != h.raw) {
		ret = rr_fail(err, errlen, -EBADMSG,
			      "packed block: %zu bytes of packets, %" PRIu64 " declared", o, h.raw);
		goto free_all;
	}
	out->len = o;
	out->npackets = h.npackets;
	out->events = h.events;
	ret = 0;
free_all:
	if (ret)
		pk_block_free(out);
	ZSTD_freeDCtx(zd);
	free(cols);
	free(d);
	return ret;
}

void pk_block_free(struct pk_block *b)
{
	free(b->data);
	free(b->off);
	memset(b, 0, sizeof(*b));
}
