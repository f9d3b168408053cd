/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/pack.c - decoding packed blocks (read/pack.h), which every reader of
 * a packed trace runs on what it reads.  The coder is record/packw.c; what
 * the two share is read/packfmt.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "read/packfmt.h"

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
		pl->f[i].size = (uint8_t)ev_field_size(t->fields[i].type);
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

