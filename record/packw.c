/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/packw.c - the coder of packed blocks (record/packw.h): packets in,
 * a block out, that read/pack.c decodes to the same bytes.  What the two
 * share is read/packfmt.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_c_literalCompressionMode (enc_zfast) */
#include <zstd.h>

#include <internal/grow.h>

#include "read/packfmt.h"
#include "record/packw.h"

struct buf {
	uint8_t *p;
	size_t len, cap;
	struct buf *hi; /* where the bytes after a varint's first go (read/packfmt.h), or NULL */
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
	struct buf *h;
	uint8_t *p = b->p + b->len; /* stores through p may alias b: b->len is written once */
	size_t n = 0;

	if (v < 0x80) {
		*p = (uint8_t)v;
		b->len++;
		return;
	}
	if (b->hi) { /* the first byte here, the rest in b->hi */
		h = b->hi;
		*p = (uint8_t)(v | 0x80);
		b->len++;
		v >>= 7;
		p = h->p + h->len;
		b = h;
	}
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	b->len += n;
}

/*
 * Entries of list l newer than the one at stamp s (which it holds): in the
 * newest word up to the newest stamp, in s's word above s, and in the
 * words between.
 */
static inline __attribute__((always_inline)) uint32_t mtf_rank(const struct mtf *m, int l,
							       uint32_t s)
{
	uint32_t newest = m->n - 1, wn = newest >> 6, ws = s >> 6;
	uint64_t top = m->bits[l][wn % PK_WORDS] & (~0ull >> (63 - (newest & 63)));
	uint64_t low = m->bits[l][ws % PK_WORDS] & (~1ull << (s & 63));

	if (wn == ws)
		return (uint32_t)__builtin_popcountll(top & low);
	return (uint32_t)(__builtin_popcountll(top) + __builtin_popcountll(low)) +
	       mtf_between(m, l, ws, wn);
}

/* ---- the coder -------------------------------------------------------------------- */

/*
 * A hex value of a stream seen in the block: where it is in that stream's
 * lists.  Its tag is the block it was set in (a new block empties the
 * table) and the stream's number: gen << 5 | stream.
 */
struct slot {
	uint64_t v;
	uint32_t stamp;
	uint32_t tag;
};
#define GEN_MAX (1u << 27)

/* What enc_events does with a field: a plan's op (read/packfmt.h's, refined). */
enum {
	EO_HEX,
	EO_STR,
	EO_ARR,
	EO_U4, /* unsigned, 4 bytes */
	EO_U8, /* unsigned, 8 bytes */
	EO_INT, /* any other integer: size bytes, signed or not */
	EO_END	/* after the last field */
};

struct eplan {
	uint32_t gen; /* the block it was made for */
	uint32_t nf;
	bool def; /* a definition pk_enc_on_def hands on (rip:bt, rip:fn) */
	struct buf *ts;
	struct efield {
		uint8_t op, size, name;
		bool sign;
		bool g; /* right after a hex field: its second guess (pred_code_g) */
		struct buf *col;
		uint64_t last; /* a hex field's value last */
	} f[RIP_EVENT_MAX_FIELDS + 1]; /* then EO_END */
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
	struct mtf *mtf[PK_NSTREAMS]; /* each stream's lists, made as streams come */
	struct pk_streams streams;    /* of the block */
	uint32_t cur;		      /* the number of the stream of the packet being coded */
	struct mtf *cur_mtf;	      /* and its lists */
	struct pred pred;
	struct slot *hash;
	uint32_t hmask, hused, gen;
	struct buf out;
	uint64_t raw, events, ts_min, ts_max;
	uint32_t npackets;
	ZSTD_CCtx *zf;		    /* zstd's fast way (enc_zstd), or NULL */
	struct buf ztmp;	    /* a column compressed the fast way in a trial */
	uint32_t ntaken;	    /* blocks taken */
	uint32_t nzk;		    /* column keys with a way: */
	uint32_t zkey[PK_MAXCOLS];
	uint8_t zway[PK_MAXCOLS]; /* 0: not tried yet, 1: the usual, 2: the fast one */
	pk_def_fn *def;		  /* pk_enc_on_def's */
	void *def_arg;
};

/*
 * The fast way of zstd: level 1, literals Huffman-coded, matches looked
 * for a few times a column only (an acceleration of 128).  Most columns of
 * a trace of malloc and free are codes of values drawn at random, whose
 * matches gain nothing and cost zstd a third of its time; a real
 * program's need them (cc1's trace, 2.93 bytes an event, took 3.31 with
 * its time and integer columns the fast way, 6.34 with all), hence the
 * trials of enc_zstd.  NULL when the library lacks the literals' setting
 * (at an acceleration zstd would leave them uncoded).
 */
static ZSTD_CCtx *enc_zfast(void)
{
	ZSTD_CCtx *z = ZSTD_createCCtx();

	if (!z)
		return NULL;
	/* 1: ZSTD_ps_enable (ZSTD_lcm_huffman before zstd 1.5.1) */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_minMatch, 7)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_literalCompressionMode, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_targetLength, 128))) {
		ZSTD_freeCCtx(z);
		return NULL;
	}
	return z;
}

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
	/*
	 * Matches of 7 bytes at least: most columns are codes of values
	 * drawn at random (ranks, call sites, sizes), where the short matches
	 * zstd finds cost more than the literals they replace (3% of a trace
	 * of malloc and free at level 3: bench/heaptrack.sh).
	 */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(e->zc, ZSTD_c_compressionLevel, e->level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(e->zc, ZSTD_c_minMatch, 7))) {
		ZSTD_freeCCtx(e->zc);
		free(e);
		return -EINVAL;
	}
	if (e->level <= 3) /* a higher level asks for the smallest: every column the usual way */
		e->zf = enc_zfast();
	e->gen = 1;
	e->ts_min = UINT64_MAX;
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
	free(e->ztmp.p);
	ZSTD_freeCCtx(e->zf);
	free(e->hash);
	for (uint32_t i = 0; i < PK_NSTREAMS; i++)
		free(e->mtf[i]);
	ZSTD_freeCCtx(e->zc);
	free(e);
}

bool pk_is_def(const struct ev_type *t)
{
	if (!t->valid || t->nfields != 2 || t->fields[0].type != RIP_FT_U32)
		return false;
	if (t->fields[1].type == RIP_FT_HEX64_ARRAY)
		return !strcmp(t->name, "rip:bt");
	return t->fields[1].type == RIP_FT_HEX64 && !strcmp(t->name, "rip:fn");
}

void pk_enc_on_def(struct pk_enc *e, pk_def_fn *fn, void *arg)
{
	e->def = fn;
	e->def_arg = arg;
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
	e->col[e->ncols].hi = NULL;
	if (buf_room(&e->col[e->ncols], e->reserve)) {
		e->oom = true;
		return &e->col[K_OTHER];
	}
	e->key[e->ncols] = key;
	return &e->col[e->ncols++];
}

/* The column of key, with its K_HI column when its varints are cut in two. */
static struct buf *enc_vcol(struct pk_enc *e, uint32_t key)
{
	struct buf *b = enc_col(e, key);

	if (b != &e->col[K_OTHER] && !b->hi && key_split(key))
		b->hi = enc_col(e, K_HI(key));
	return b;
}

static struct eplan *enc_plan_make(struct pk_enc *e, const struct ev_type *t)
{
	struct eplan *pl = &e->plan[t->id];

	pl->ts = enc_vcol(e, K_TS(t->id));
	pl->nf = t->nfields;
	for (uint32_t i = 0; i < t->nfields; i++) {
		uint32_t ty = t->fields[i].type, op = field_op(ty);

		pl->f[i].size = (uint8_t)rip_field_size(ty);
		pl->f[i].sign = op == OP_S;
		pl->f[i].op = op == OP_HEX ? EO_HEX :
			      op == OP_STR ? EO_STR :
			      op == OP_ARR ? EO_ARR :
			      op == OP_U && pl->f[i].size == 4 ? EO_U4 :
			      op == OP_U && pl->f[i].size == 8 ? EO_U8 :
								 EO_INT;
		pl->f[i].g = i && pl->f[i - 1].op == EO_HEX;
		pl->f[i].name = pred_name(&e->pred, t, i);
		pl->f[i].col = enc_vcol(e, field_key(t, i, PK_VERSION));
		pl->f[i].last = 0;
	}
	pl->f[t->nfields].op = EO_END;
	pl->def = e->def && pk_is_def(t);
	pl->gen = e->gen;
	return pl;
}

static inline struct eplan *enc_plan(struct pk_enc *e, uint32_t id)
{
	struct eplan *pl = &e->plan[id];

	return pl->gen == e->gen ? pl : enc_plan_make(e, &e->types->t[id]);
}

/* Where (v, stream) is looked for first in a table of mask + 1 slots. */
static inline uint32_t hash_at(uint64_t v, uint32_t stream, uint32_t mask)
{
	return (uint32_t)(((v + stream) * 0x9e3779b97f4a7c15ull) >> 40) & mask;
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

		if (s->tag >> 5 != e->gen)
			continue;
		for (j = hash_at(s->v, s->tag & 31, cap - 1); h[j].tag; j = (j + 1) & (cap - 1))
			;
		h[j] = *s;
	}
	free(e->hash);
	e->hash = h;
	e->hmask = cap - 1;
	/*
	 * Only the live entries were copied, with the block's generation:
	 * e->gen stays, for the plans are of it too (a plan of an earlier
	 * block must not look current).
	 */
	return 0;
}

/*
 * Code the hex value v into column b: its rank in a list of the packet's
 * stream, or its difference from *last.  *aux: where the entry keeps the
 * integer field after it, for the list it went to; *g: what it kept there
 * the last time the value went to that list (0: none).
 */
static inline __attribute__((always_inline)) int enc_hex(struct pk_enc *e, struct buf *b,
							   uint64_t *last, uint64_t v,
			  uint32_t **aux, uint64_t *g)
{
	uint32_t tag = e->gen << 5 | e->cur, j, q;
	struct mtf *m = e->cur_mtf;
	struct slot *s;
	int ret;

	if ((e->hused + 1) * 2 > e->hmask + 1 && (ret = hash_grow(e)))
		return ret;
	for (j = hash_at(v, e->cur, e->hmask);; j = (j + 1) & e->hmask) {
		s = &e->hash[j];
		if (s->tag >> 5 != e->gen || (s->v == v && s->tag == tag))
			break;
	}
	if (s->tag == tag && m->n - s->stamp <= PK_WINDOW) {
		uint32_t p = s->stamp & PK_WMASK;
		uint32_t l = m->list[p];
		uint32_t a0 = m->aux[p][0], a1 = m->aux[p][1];

		put_uv(b, ((uint64_t)mtf_rank(m, l, s->stamp) << 1 | (uint64_t)l) + 1);
		mtf_drop(m, p);
		s->stamp = mtf_push(m, l ^ 1);
		q = s->stamp & PK_WMASK;
		m->aux[q][0] = a0;
		m->aux[q][1] = a1;
		/* what came after the value the last time it went to l ^ 1 */
		*g = l ? a0 : a1;
		*aux = &m->aux[q][l ^ 1];
		*last = v;
		return 0;
	}
	put_uv(b, 0);
	put_uv(&e->col[K_HEXLIT], zig((int64_t)(v - *last)));
	if (s->tag != tag)
		e->hused++;
	s->v = v;
	s->tag = tag;
	s->stamp = mtf_push(m, 1);
	q = s->stamp & PK_WMASK;
	m->aux[q][0] = m->aux[q][1] = 0;
	*g = 0;
	*aux = &m->aux[q][1];
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
PK_POPCNT static int enc_events(struct pk_enc *e, const uint8_t *d, size_t len, uint64_t ts)
{
	struct buf *evid = &e->col[K_EVID];
	const uint8_t *end = d + len;
	uint64_t events = 0;
	size_t off = PK_HDR;
	int ret;

	while (off < len) {
		const uint8_t *q;
		struct efield *f;
		uint64_t prev = ts, g = 0;
		uint32_t id = 0, *aux = NULL;
		int hl = ev_header(d, len, off, &id, &ts);
		struct eplan *pl;

		q = d + off + hl;
		pl = enc_plan(e, id);
		f = pl->f;
		put_uv(evid, (uint64_t)id << 1 | (hl == 13));
		put_uv(e->plan[id].ts, hl == 13 ? zig((int64_t)(ts - prev)) : ts - prev);
		events++;
		for (;; f++) {
			struct buf *b = f->col;
			uint32_t n;
			uint64_t v;

			switch (f->op) {
			case EO_END:
				break;
			case EO_STR:
				n = (uint32_t)strnlen((const char *)q, (size_t)(end - q)) + 1;
				memcpy(b->p + b->len, q, n);
				b->len += n;
				q += n;
				continue;
			case EO_ARR:
				v = ld(q, 4);
				put_uv(b, v);
				memcpy(b->p + b->len, q + 4, v * 8);
				b->len += v * 8;
				q += 4 + v * 8;
				continue;
			case EO_HEX:
				ret = enc_hex(e, b, &f->last, ld(q, 8), &aux, &g);
				if (ret)
					return ret;
				q += 8;
				continue;
			case EO_U4:
				v = ld(q, 4);
				q += 4;
				goto code;
			case EO_U8:
				v = ld(q, 8);
				q += 8;
				goto code;
			default:
				__builtin_unreachable(); /* the plan has no other op */
			case EO_INT:
				n = f->size;
				v = ld(q, n);
				if (f->sign)
					v = zig(sext(v, n));
				q += n;
code:
				if (!f->g) {
					put_uv(b, pred_code(&e->pred, f->name, v));
					continue;
				}
				put_uv(b, pred_code_g(&e->pred, f->name, v, g));
				*aux = aux_of(v);
				continue;
			}
			break;
		}
		if (__builtin_expect(pl->def, 0) &&
		    (ret = e->def(e->def_arg, id, d + off + hl,
				  (size_t)(q - d) - off - (size_t)hl)))
			return ret;
		off = (size_t)(q - d);
	}
	e->events += events;
	return 0;
}

/* The lists of the stream id for the packet to code: its own, empty if new in the block. */
static int enc_stream(struct pk_enc *e, uint64_t id)
{
	bool fresh;
	uint32_t n = pk_stream(&e->streams, id, &fresh);

	if (!e->mtf[n] && !(e->mtf[n] = malloc(sizeof(*e->mtf[n]))))
		return -ENOMEM;
	if (fresh)
		mtf_reset(e->mtf[n]);
	e->cur = n;
	e->cur_mtf = e->mtf[n];
	return 0;
}

/* Add the packet of len bytes at pkt, its first PK_HDR bytes at hdr (pkt's not read). */
static int enc_add(struct pk_enc *e, const uint8_t *hdr, const uint8_t *pkt, size_t len)
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
	if (!e->ncols) { /* a new block: the fixed columns first, in key order */
		for (uint32_t k = 0; k < K_FIXED; k++)
			enc_col(e, k);
		enc_vcol(e, K_EVID);
		enc_vcol(e, K_HEXLIT);
	}
	for (uint32_t k = 0; k < e->ncols; k++)
		if (buf_room(&e->col[k], e->reserve))
			e->oom = true;
	if (e->oom)
		return -ENOMEM;
	if (len >= PK_HDR) {
		memcpy(&h, hdr, sizeof(h));
		coded = h.magic == RIP_CTF_MAGIC && h.content_size % 8 == 0 &&
			h.content_size / 8 == len && enc_check(e->types, pkt, len);
		if (h.magic == RIP_CTF_MAGIC) {
			if (h.timestamp_begin < e->ts_min)
				e->ts_min = h.timestamp_begin;
			if (h.timestamp_end > e->ts_max)
				e->ts_max = h.timestamp_end;
		}
	}
	if (coded && (ret = enc_stream(e, h.stream_instance_id))) {
		e->oom = true;
		return ret;
	}
	b = &e->col[K_PKT];
	b->p[b->len++] = !coded;
	if (coded) {
		b = &e->col[K_PHDR];
		memcpy(b->p + b->len, hdr, PK_HDR);
		b->len += PK_HDR;
		ret = enc_events(e, pkt, len, h.timestamp_begin);
	} else {
		b = &e->col[K_RAW];
		put_uv(b, len);
		if (len >= PK_HDR) {
			memcpy(b->p + b->len, hdr, PK_HDR);
			memcpy(b->p + b->len + PK_HDR, pkt + PK_HDR, len - PK_HDR);
		} else {
			memcpy(b->p + b->len, pkt, len);
		}
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

int pk_enc_add(struct pk_enc *e, const uint8_t *pkt, size_t len)
{
	return enc_add(e, pkt, pkt, len);
}

int pk_enc_add_hdr(struct pk_enc *e, const struct rip_packet *hdr, const uint8_t *pkt, size_t len)
{
	if (len < PK_HDR)
		return -EINVAL;
	return enc_add(e, (const uint8_t *)hdr, pkt, len);
}

static void enc_reset(struct pk_enc *e)
{
	e->ncols = 0;
	e->raw = e->events = 0;
	e->npackets = 0;
	e->ts_min = UINT64_MAX;
	e->ts_max = 0;
	e->streams.n = 0; /* each stream's lists are emptied when it is met again */
	memset(&e->pred, 0, sizeof(e->pred));
	e->hused = 0;
	e->oom = false;
	if (++e->gen == GEN_MAX) { /* after 2^27 blocks: clear the tables for real */
		if (e->hash)
			memset(e->hash, 0, (e->hmask + 1) * sizeof(*e->hash));
		for (uint32_t i = 0; i < EV_MAX_TYPES; i++)
			e->plan[i].gen = 0;
		e->gen = 1;
	}
}

/* Blocks between two trials of both ways for a column. */
#define PK_ZTRIAL 16u

/* The way of the column of key (enc_zstd), or NULL when the table is full. */
static uint8_t *enc_zway(struct pk_enc *e, uint32_t key)
{
	for (uint32_t i = 0; i < e->nzk; i++)
		if (e->zkey[i] == key)
			return &e->zway[i];
	if (e->nzk == PK_MAXCOLS)
		return NULL;
	e->zkey[e->nzk] = key;
	e->zway[e->nzk] = 0;
	return &e->zway[e->nzk++];
}

/*
 * zstd of the n bytes at src (the column of key) into out (cap bytes): the
 * fast way when it was no larger than the usual one the last time both
 * were tried, on a column's first block and every PK_ZTRIAL blocks after
 * (a trial keeps the bytes of that one), else the usual way.
 * ZSTD_compress2's result.
 */
static size_t enc_zstd(struct pk_enc *e, uint32_t key, uint8_t *out, size_t cap,
		       const uint8_t *src, size_t n)
{
	uint8_t *way = e->zf ? enc_zway(e, key) : NULL;
	size_t z, f;

	if (!way)
		return ZSTD_compress2(e->zc, out, cap, src, n);
	if (*way && e->ntaken % PK_ZTRIAL)
		return ZSTD_compress2(*way == 2 ? e->zf : e->zc, out, cap, src, n);
	*way = 1;
	z = ZSTD_compress2(e->zc, out, cap, src, n);
	e->ztmp.len = 0;
	if (ZSTD_isError(z) || buf_room(&e->ztmp, ZSTD_compressBound(n)))
		return z;
	f = ZSTD_compress2(e->zf, e->ztmp.p, e->ztmp.cap, src, n);
	if (ZSTD_isError(f) || f > z)
		return z;
	memcpy(out, e->ztmp.p, f);
	*way = 2;
	return f;
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
			z = enc_zstd(e, c.key, e->out.p + pos, need - pos, e->col[i].p, c.raw);
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
	e->ntaken++;
	enc_reset(e);
	return 0;
}
