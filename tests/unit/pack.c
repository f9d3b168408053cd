/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: packed blocks (read/pack.c) give back exactly the packets
 * they were given: events of every field type (signed, unsigned, hex,
 * strings, arrays), compact and extended headers, gaps in time past the
 * 27 bits of a compact header, hex values met again after more than the
 * coder's window, blocks of one packet and of hundreds, a type met again
 * after the coder's hash grew in a later block; packets the coder
 * cannot read (an unknown event id, a wrong size, a few stray bytes) are
 * kept whole.  Deep stacks repeated many times among a few new ones, and
 * integer fields that follow each other (a free's "bt" after its
 * malloc's), 0s and the largest values, round trip too.  Packets given
 * with their header apart (pk_enc_add_hdr) are coded the same.  A block with any
 * of its bytes changed or cut short is refused (its checksum), and
 * cleanly; so is one whose columns are changed under a checksum made
 * again, or that is of a later version.  A block of version 1 still reads.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "helpers.h"
#include "packtypes.h"
#include "packv1.h"
#include "packv2.h"
#include "read/pack.h"
#include "read/packfmt.h"
#include "record/packw.h"

static struct ev_types types;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

struct pkt {
	uint8_t *d;
	size_t len;
};

static void put(uint8_t *d, size_t *off, uint64_t v, uint32_t n)
{
	memcpy(d + *off, &v, n);
	*off += n;
}

/* One packet of about n events from ring ring; live[] holds addresses to free. */
static struct pkt make_packet(uint32_t ring, uint64_t *ts, uint32_t n, uint64_t *live,
			      uint32_t *nlive)
{
	struct pkt p = { .d = calloc(1, 80 + n * 2200) };
	struct rip_packet h = { .magic = RIP_CTF_MAGIC, .stream_instance_id = ring };
	uint64_t t = *ts;
	size_t off = 80;

	h.timestamp_begin = t;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t id = (uint32_t)(rnd() % 6), r = (uint32_t)rnd();
		uint64_t gap = r % 16 == 0 ? (1ull << 27) * (1 + rnd() % 3) + rnd() % 1000 :
					     rnd() % 3000;
		bool ext;

		if (id == 5)
			id = 40;
		if (id == 1 && !*nlive)
			id = 0;
		t += gap;
		/* a writer goes extended for big gaps; this one also does sometimes, and sometimes not */
		ext = id >= 31 || r % 29 == 0 || (gap >= (1ull << 27) && r % 2);
		if (ext) {
			p.d[off++] = RIP_EVENT_ID_EXTENDED;
			put(p.d, &off, id, 4);
			put(p.d, &off, t, 8);
		} else {
			put(p.d, &off, id | (t & ((1ull << 27) - 1)) << 5, 4);
		}
		switch (id) {
		case 0: {
			/* addresses: mostly ones freed a moment ago, some new, a few far back */
			uint64_t a = r % 7 == 0 ? 0x7f0000000000ull + (rnd() % 100000) * 16 :
						  0x55aa00000000ull + (rnd() % 300) * 32;

			put(p.d, &off, r % 4, 1);
			put(p.d, &off, (uint64_t)(int64_t)(r % 100 - 50), 2);
			put(p.d, &off, a, 8);
			put(p.d, &off, r % 50 ? 16 + rnd() % 4000 : rnd(), 8);
			put(p.d, &off, rnd() % 40, 4);
			if (*nlive < 4096)
				live[(*nlive)++] = a;
			break;
		}
		case 1: {
			uint32_t i = (uint32_t)(rnd() % *nlive);

			put(p.d, &off, live[i], 8);
			live[i] = live[--*nlive];
			put(p.d, &off, rnd() % 40, 4);
			break;
		}
		case 2: {
			uint32_t sl = r % 5 ? (uint32_t)(r % 8) * 20 : (uint32_t)(rnd() % 255);

			put(p.d, &off, (uint64_t)(int64_t)(int32_t)(rnd() % 2000 - 1000), 4);
			for (uint32_t c = 0; c < sl; c++) /* a few paths, and some noise */
				p.d[off++] = (uint8_t)('a' + (r % 5 ? c % 26 : rnd() % 26));
			p.d[off++] = 0;
			break;
		}
		case 3: {
			uint32_t cnt = (uint32_t)(rnd() % 40);

			put(p.d, &off, rnd() % 1000, 4);
			put(p.d, &off, cnt, 4);
			for (uint32_t c = 0; c < cnt; c++) /* return addresses of a few functions */
				put(p.d, &off, 0x401000 + (rnd() % 64) * 0x40 + c, 8);
			break;
		}
		case 40:
			put(p.d, &off, rnd() % 3 ? rnd() % 100000 : rnd(), 8);
			put(p.d, &off, rnd(), 1);
			break;
		}
	}
	h.timestamp_end = t;
	h.content_size = h.packet_size = off * 8;
	h.events = n;
	h.tid = 1000 + (int32_t)ring;
	memcpy(p.d, &h, sizeof(h));
	p.len = off;
	*ts = t;
	return p;
}

static size_t round_trip(struct pkt *v, size_t n, size_t blk, int level);

/* A packet of t:free events naming addrs[0..n) in order. */
static struct pkt free_packet(const uint64_t *addrs, uint32_t n)
{
	struct pkt p = { .d = calloc(1, 80 + n * 16) };
	struct rip_packet h = { .magic = RIP_CTF_MAGIC, .timestamp_begin = 5 };
	size_t off = 80;

	for (uint32_t k = 0; k < n; k++) {
		put(p.d, &off, 1 | (uint64_t)(5 + k) << 5, 4);
		put(p.d, &off, addrs[k], 8);
		put(p.d, &off, 7, 4);
	}
	h.timestamp_end = 5 + n;
	h.content_size = h.packet_size = off * 8;
	h.events = n;
	memcpy(p.d, &h, sizeof(h));
	p.len = off;
	return p;
}

/*
 * Values named again right at the edge of the coder's window (8192
 * values), where the oldest entries share a word of the lists with the
 * newest, and just past it.
 */
static void window_edge(void)
{
	enum {
		NEW = 8301,
		ALL = NEW + 600
	};
	static uint64_t a[ALL];
	struct pkt p;

	/* value j is the one coded at stamp j: fresh values, then every other one from 8192 back */
	for (uint32_t j = 0; j < ALL; j++)
		a[j] = j >= NEW && j % 2 ? a[j - 8192 + (j % 3 == 0)] : 0x10000 + j * 16ull;
	p = free_packet(a, ALL);
	round_trip(&p, 1, PK_RAW_MAX, 1);
	free(p.d);
}

/* A packet of n events of type 40 (extended headers: an id past 30). */
static struct pkt t40_packet(uint32_t n)
{
	struct pkt p = { .d = calloc(1, 80 + n * 24) };
	struct rip_packet h = { .magic = RIP_CTF_MAGIC, .timestamp_begin = 5 };
	size_t off = 80;

	for (uint32_t k = 0; k < n; k++) {
		p.d[off++] = RIP_EVENT_ID_EXTENDED;
		put(p.d, &off, 40, 4);
		put(p.d, &off, 5 + k, 8);
		put(p.d, &off, k * 3, 8);
		put(p.d, &off, k & 0xff, 1);
	}
	h.timestamp_end = 5 + n;
	h.content_size = h.packet_size = off * 8;
	h.events = n;
	memcpy(p.d, &h, sizeof(h));
	p.len = off;
	return p;
}

/*
 * A type's plan made in an early block, met again after the coder's hash
 * of hex values grew in a later one (more than 4,096 values new in it):
 * the plan belongs to its block, whatever the hash does.  (The hash once
 * restarted its generations when it grew, which made a plan of block 1
 * look current in block 2: its events went into another type's columns.)
 */
static void stale_plans(void)
{
	enum {
		N = 6000
	};
	static uint64_t a[N];
	struct pkt v[3];

	for (uint32_t j = 0; j < N; j++)
		a[j] = 0x10000 + j * 16ull;
	v[0] = t40_packet(20);
	v[1] = free_packet(a, N);
	v[2] = t40_packet(10);
	/* block 1: v[0]; block 2: v[1] then v[2] */
	round_trip(v, 3, v[1].len + v[2].len, 1);
	for (int k = 0; k < 3; k++)
		free(v[k].d);
}

/*
 * A packet of n events: t:bt with one of 3 deep stacks (40 to 60 frames)
 * 15 times in 16, a new one else; t:alloc and t:free in pairs whose "bt"
 * go together (a free's is its malloc's + 1000) as a traced program's do,
 * with 0s and the largest values among the sizes and signed fields.
 */
static struct pkt stack_packet(uint64_t *ts, uint32_t n)
{
	static uint64_t stacks[3][60];
	struct pkt p = { .d = calloc(1, 80 + n * 520) };
	struct rip_packet h = { .magic = RIP_CTF_MAGIC, .stream_instance_id = 3 };
	uint64_t t = *ts;
	size_t off = 80;

	for (uint32_t s = 0; s < 3; s++)
		for (uint32_t f = 0; f < 60; f++)
			stacks[s][f] = 0x7f1234560000ull + s * 0x100 + f * 0x40;
	h.timestamp_begin = t;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t r = (uint32_t)rnd(), id = k % 3 == 0 ? 3 : k % 3 == 1 ? 0 : 1;
		uint64_t bt = 1 + (k / 3) % 37 * 7;

		t += 1 + rnd() % 500;
		put(p.d, &off, id | (t & ((1ull << 27) - 1)) << 5, 4);
		if (id == 3) {
			uint32_t s = r % 3, cnt = 40 + s * 10;

			put(p.d, &off, s, 4);
			put(p.d, &off, cnt, 4);
			for (uint32_t f = 0; f < cnt; f++)
				put(p.d, &off, r % 16 ? stacks[s][f] : rnd(), 8);
		} else if (id == 0) {
			put(p.d, &off, r % 5 ? 0 : 255, 1);
			put(p.d, &off, (uint64_t)(r % 7 ? 0 : r % 2 ? -32768 : 32767), 2);
			put(p.d, &off, 0x55aa00000000ull + (k / 3) % 64 * 32, 8);
			put(p.d, &off, r % 9 ? 16 * (1 + r % 64) : r % 2 ? 0 : UINT64_MAX, 8);
			put(p.d, &off, bt, 4);
		} else {
			put(p.d, &off, 0x55aa00000000ull + (k / 3 + 32) % 64 * 32, 8);
			put(p.d, &off, r % 50 ? bt + 1000 : r % 2 ? 0 : UINT32_MAX, 4);
		}
	}
	h.timestamp_end = t;
	h.content_size = h.packet_size = off * 8;
	h.events = n;
	memcpy(p.d, &h, sizeof(h));
	p.len = off;
	*ts = t;
	return p;
}

/*
 * A packet of n t:alloc and t:free in pairs, their "bt" one of 200 drawn at
 * random; a free's goes with its malloc's (bt + 1000) when follow, else
 * it is drawn apart.
 */
static struct pkt pair_packet(uint32_t n, bool follow)
{
	struct pkt p = { .d = calloc(1, 80 + n * 48) };
	struct rip_packet h = { .magic = RIP_CTF_MAGIC, .timestamp_begin = 5 };
	size_t off = 80;

	for (uint32_t k = 0; k < n; k++) {
		uint64_t bt = 1 + rnd() % 200;

		put(p.d, &off, 0 | (uint64_t)(5 + 2 * k) << 5, 4);
		put(p.d, &off, 0, 1);
		put(p.d, &off, 0, 2);
		put(p.d, &off, 0x55aa00000000ull + k * 32, 8);
		put(p.d, &off, 64, 8);
		put(p.d, &off, bt, 4);
		put(p.d, &off, 1 | (uint64_t)(6 + 2 * k) << 5, 4);
		put(p.d, &off, 0x55aa00000000ull + k * 32, 8);
		put(p.d, &off, follow ? bt + 1000 : 1001 + rnd() % 200, 4);
	}
	h.timestamp_end = 6 + 2 * n;
	h.content_size = h.packet_size = off * 8;
	h.events = 2 * n;
	memcpy(p.d, &h, sizeof(h));
	p.len = off;
	return p;
}

/*
 * The "bt" of a free that goes with its malloc's costs next to nothing:
 * the block of such pairs is smaller than one whose frees' are drawn
 * apart by most of a byte a pair (their 7.6 bits).
 */
static void fields_that_follow(void)
{
	enum { N = 20000 };
	struct pkt a = pair_packet(N, true), b = pair_packet(N, false);
	size_t pa = round_trip(&a, 1, PK_RAW_MAX, 3), pb = round_trip(&b, 1, PK_RAW_MAX, 3);

	if (pa + N * 6 / 8 > pb)
		fprintf(stderr, "fields that follow: %zu bytes, apart: %zu\n", pa, pb);
	T_CHECK(pa + N * 6 / 8 <= pb);
	free(a.d);
	free(b.d);
}

/*
 * Two hex fields in a row, then a signed one (t:pair): the first hex field
 * has no integer after it, the second a signed one that takes its second
 * guess from the second's entry (the decoder does a hex field and such an
 * integer in one op).  Values come back often, in both lists.
 */
static void hex_pairs(void)
{
	enum { N = 4000 };
	struct pkt p = { .d = calloc(1, 80 + N * 24) };
	struct rip_packet h = { .magic = RIP_CTF_MAGIC, .timestamp_begin = 5 };
	size_t off = 80;

	for (uint32_t k = 0; k < N; k++) {
		uint64_t b = 0x90000 + (rnd() % 300) * 16;

		put(p.d, &off, 5 | (uint64_t)(5 + k) << 5, 4);
		put(p.d, &off, 0x1000 + (rnd() % 100) * 16, 8);
		put(p.d, &off, b, 8);
		put(p.d, &off, (uint32_t)(k % 4 ? -(int32_t)(b >> 4) : (int32_t)rnd()), 4);
	}
	h.timestamp_end = 5 + N;
	h.content_size = h.packet_size = off * 8;
	h.events = N;
	memcpy(p.d, &h, sizeof(h));
	p.len = off;
	round_trip(&p, 1, PK_RAW_MAX, 1);
	free(p.d);
}

/* Encode v[0..n) in blocks of at most blk bytes; check each decodes to exactly its packets. */
static size_t round_trip(struct pkt *v, size_t n, size_t blk, int level)
{
	struct pk_enc *e;
	size_t first = 0, packed = 0;
	char err[256];

	T_EQ(pk_enc_new(&e, &types, level), 0);
	for (size_t i = 0; i <= n; i++) {
		if (i == n || (i > first && pk_enc_raw(e) + v[i].len > blk)) {
			const uint8_t *b;
			struct pk_block d = { 0 };
			size_t bl, off = 0;
			int ret = pk_enc_take(e, &b, &bl, err, sizeof(err));

			if (i == first) {
				T_EQ(ret, -ENODATA);
				break;
			}
			T_EQ(ret, 0);
			packed += bl;
			ret = pk_decode(NULL, &types, b, bl, &d, err, sizeof(err));
			if (ret) {
				fprintf(stderr, "decode: %s\n", err);
				t_failures++;
				break;
			}
			T_EQ(d.npackets, i - first);
			T_EQ(d.done, d.npackets); /* its progress, read by the cache's reader */
			for (size_t k = first; k < i; k++) {
				T_EQ(d.off[k - first], off);
				if (memcmp(d.data + off, v[k].d, v[k].len)) {
					fprintf(stderr, "packet %zu differs after the round trip\n",
						k);
					t_failures++;
				}
				off += v[k].len;
			}
			T_EQ(d.len, off);
			pk_block_free(&d);
			first = i;
			if (i == n)
				break;
		}
		T_EQ(pk_enc_add(e, v[i].d, v[i].len), 0);
	}
	pk_enc_free(e);
	return packed;
}

/*
 * pk_enc_add_hdr codes the packets exactly as pk_enc_add, the header taken
 * apart: the bytes where the packet's header would be are never read
 * (here: changed in the copy given), and a packet shorter than a header
 * is refused.
 */
static void header_apart(struct pkt *v, size_t n)
{
	struct pk_enc *e, *h;
	const uint8_t *a, *b;
	size_t al, bl;
	char err[256];

	T_EQ(pk_enc_new(&e, &types, 3), 0);
	T_EQ(pk_enc_new(&h, &types, 3), 0);
	for (size_t i = 0; i < n; i++) {
		struct rip_packet hdr = { 0 };
		uint8_t *c;

		if (v[i].len < sizeof(hdr)) {
			T_EQ(pk_enc_add_hdr(h, &hdr, v[i].d, v[i].len), -EINVAL);
			continue;
		}
		T_EQ(pk_enc_add(e, v[i].d, v[i].len), 0);
		memcpy(&hdr, v[i].d, sizeof(hdr));
		c = malloc(v[i].len);
		memcpy(c, v[i].d, v[i].len);
		memset(c, 0xa5, sizeof(hdr));
		T_EQ(pk_enc_add_hdr(h, &hdr, c, v[i].len), 0);
		free(c);
	}
	T_EQ(pk_enc_take(e, &a, &al, err, sizeof(err)), 0);
	T_EQ(pk_enc_take(h, &b, &bl, err, sizeof(err)), 0);
	T_CHECK(al == bl && !memcmp(a, b, al));
	pk_enc_free(e);
	pk_enc_free(h);
}

/* Change bytes of a block (or cut it): decoding fails cleanly or keeps to the declared size. */
static void hostile(struct pkt *v, size_t n)
{
	struct pk_enc *e;
	const uint8_t *b;
	uint8_t *copy;
	size_t bl;
	char err[256];
	uint32_t refused = 0;

	T_EQ(pk_enc_new(&e, &types, 1), 0);
	for (size_t i = 0; i < n; i++) {
		T_EQ(pk_enc_add(e, v[i].d, v[i].len), 0);
	}
	T_EQ(pk_enc_take(e, &b, &bl, err, sizeof(err)), 0);
	copy = malloc(bl);
	for (uint32_t k = 0; k < 3000; k++) {
		struct pk_block d = { 0 };
		size_t len = bl;
		int ret;

		memcpy(copy, b, bl);
		if (k % 10 == 9)
			len = rnd() % bl; /* cut short */
		else
			for (uint32_t f = 0; f <= k % 3; f++)
				copy[rnd() % bl] ^= (uint8_t)(1 + rnd() % 255);
		ret = pk_decode(NULL, &types, copy, len, &d, err, sizeof(err));
		if (ret) {
			T_CHECK(ret == -EBADMSG && err[0]);
			refused++;
			continue;
		}
		T_CHECK(d.len <= PK_RAW_MAX);
		pk_block_free(&d);
	}
	T_EQ(refused, 3000); /* the block's checksum sees every change */
	free(copy);
	pk_enc_free(e);
}

/* The block's checksum made again, after a change. */
static void recrc(uint8_t *b, size_t len)
{
	struct pk_hdr h;

	memcpy(&h, b, sizeof(h));
	h.crc = 0;
	memcpy(b, &h, sizeof(h));
	h.crc = (uint32_t)crc32(0, b, (uInt)len);
	memcpy(b, &h, sizeof(h));
}

/*
 * Change bytes of the columns of a block of small packets (every column
 * under PK_SMALL bytes: kept as it is, not compressed), then make its
 * checksum again, so that the decoder meets the changes: a bad count, a
 * varint cut between a column and its K_HI column, a code past a list,
 * a column with bytes left.  It refuses the block, saying so, or decodes
 * at most the bytes it declares; never reads out of bounds (ASan).  A
 * block of a later version is refused, by name.
 */
static void hostile_cols(uint64_t *ts)
{
	static uint64_t live[4096];
	struct pk_block d = { 0 };
	struct pkt v[2];
	struct pk_enc *e;
	const uint8_t *b;
	uint8_t *copy;
	size_t bl, data;
	uint32_t refused = 0, nc;
	char err[256];
	struct pk_hdr h;

	uint32_t nlive = 0;

	v[0] = stack_packet(ts, 4);
	v[1] = make_packet(2, ts, 3, live, &nlive);
	T_EQ(pk_enc_new(&e, &types, 1), 0);
	for (int k = 0; k < 2; k++)
		T_EQ(pk_enc_add(e, v[k].d, v[k].len), 0);
	T_EQ(pk_enc_take(e, &b, &bl, err, sizeof(err)), 0);
	memcpy(&h, b, sizeof(h));
	nc = h.ncols;
	data = sizeof(h) + nc * sizeof(struct pk_col);
	T_CHECK(data < bl);
	copy = malloc(bl);
	for (uint32_t k = 0; k < 20000; k++) {
		int ret;

		memcpy(copy, b, bl);
		for (uint32_t f = 0; f <= k % 4; f++)
			copy[data + rnd() % (bl - data)] ^= (uint8_t)(1 + rnd() % 255);
		recrc(copy, bl);
		ret = pk_decode(NULL, &types, copy, bl, &d, err, sizeof(err));
		if (ret) {
			T_CHECK(ret == -EBADMSG && !strncmp(err, "packed block", 12));
			refused++;
		} else {
			T_CHECK(d.len <= h.raw);
		}
	}
	T_CHECK(refused > 10000);
	/* a later version */
	memcpy(copy, b, bl);
	h.version = PK_VERSION + 1;
	memcpy(copy, &h, sizeof(h));
	recrc(copy, bl);
	T_EQ(pk_decode(NULL, &types, copy, bl, &d, err, sizeof(err)), -EBADMSG);
	{
		char want[32];

		snprintf(want, sizeof(want), "version %u", PK_VERSION + 1);
		T_CHECK(strstr(err, want) != NULL);
	}
	pk_block_free(&d);
	free(copy);
	pk_enc_free(e);
	for (int k = 0; k < 2; k++)
		free(v[k].d);
}

/* A block of version 1 (tests/packv1.h) decodes to its packet. */
static void version1(void)
{
	struct pk_block d = { 0 };
	char err[256];
	int ret = pk_decode(NULL, &types, v1_block, sizeof(v1_block), &d, err, sizeof(err));

	if (ret)
		fprintf(stderr, "version 1: %s\n", err);
	T_EQ(ret, 0);
	T_EQ(d.npackets, 1);
	T_EQ(d.len, sizeof(v1_packet));
	T_CHECK(d.len == sizeof(v1_packet) && !memcmp(d.data, v1_packet, d.len));
	pk_block_free(&d);
}

/*
 * A block of version 2 (tests/packv2.h: one pair of lists for its two
 * streams) decodes to its packets; the same block called version 3 (a
 * pair of lists per stream) does not.
 */
static void version2(void)
{
	static uint8_t copy[sizeof(v2_block)];
	struct pk_block d = { 0 };
	char err[256];
	int ret = pk_decode(NULL, &types, v2_block, sizeof(v2_block), &d, err, sizeof(err));

	if (ret)
		fprintf(stderr, "version 2: %s\n", err);
	T_EQ(ret, 0);
	T_EQ(d.npackets, 4);
	T_CHECK(d.len == sizeof(v2_packets) && !memcmp(d.data, v2_packets, d.len));
	memcpy(copy, v2_block, sizeof(copy));
	copy[4] = 3; /* the version, in the header's second u32 */
	recrc(copy, sizeof(copy));
	ret = pk_decode(NULL, &types, copy, sizeof(copy), &d, err, sizeof(err));
	T_CHECK(ret || d.len != sizeof(v2_packets) || memcmp(d.data, v2_packets, d.len));
	pk_block_free(&d);
}

/* One thread's heap: LIVE blocks, the freed ones reused last freed first. */
#define HEAP_LIVE 256
struct heap {
	uint64_t live[HEAP_LIVE], freed[1024], next;
	uint32_t nfreed;
};

/*
 * A packet of ring's npairs malloc + free pairs, a new block replacing a
 * random live one; the other fields the same throughout, so that the
 * addresses are most of the block, and the sizes too (48) unless sized:
 * then one of 64 sizes, drawn for each address once (as an allocator
 * hands back a block freed for the size it had).
 */
static struct pkt heap_packet_sized(uint32_t ring, struct heap *hp, uint64_t *ts, uint32_t npairs,
				    bool sized)
{
	struct pkt p = { .d = calloc(1, 80 + npairs * 60) };
	struct rip_packet h = { .magic = RIP_CTF_MAGIC, .stream_instance_id = ring };
	size_t off = 80;

	h.timestamp_begin = *ts;
	for (uint32_t k = 0; k < npairs; k++) {
		uint32_t slot = (uint32_t)(rnd() % HEAP_LIVE);
		uint64_t a = hp->nfreed && rnd() % 8 ? hp->freed[--hp->nfreed] : hp->next;

		if (a == hp->next)
			hp->next += 64;
		*ts += 100;
		put(p.d, &off, 0 | (*ts & ((1ull << 27) - 1)) << 5, 4);
		put(p.d, &off, 1, 1);
		put(p.d, &off, 0, 2);
		put(p.d, &off, a, 8);
		put(p.d, &off, sized ? 16 + (a >> 6) * 0x9e3779b97f4a7c15ull % 64 * 16 : 48, 8);
		put(p.d, &off, 7, 4);
		*ts += 100;
		put(p.d, &off, 1 | (*ts & ((1ull << 27) - 1)) << 5, 4);
		put(p.d, &off, hp->live[slot], 8);
		put(p.d, &off, 7, 4);
		if (hp->live[slot] && hp->nfreed < 1024)
			hp->freed[hp->nfreed++] = hp->live[slot];
		hp->live[slot] = a;
	}
	h.timestamp_end = *ts;
	h.content_size = h.packet_size = off * 8;
	h.events = 2 * npairs;
	h.tid = 1000 + (int32_t)ring;
	memcpy(p.d, &h, sizeof(h));
	p.len = off;
	return p;
}

static struct pkt heap_packet(uint32_t ring, struct heap *hp, uint64_t *ts, uint32_t npairs)
{
	return heap_packet_sized(ring, hp, ts, npairs, false);
}

/*
 * A malloc's size after its address is guessed from the size of the
 * malloc before at that address (version 3): packets whose sizes are one
 * of 64 for each address (one malloc in 8 a new address, with no guess)
 * pack within 25% of the same with one size (16% here; the coder without
 * the guess took 47% more).
 */
static void sizes_after_addresses(uint64_t *ts)
{
	static struct heap hp[2];
	struct pkt v[2][20];
	size_t packed[2];

	for (int k = 0; k < 2; k++) {
		uint64_t t = *ts;

		memset(&hp[k], 0, sizeof(hp[k]));
		hp[k].next = 0x7f0000000000ull;
		rng = 0x1234567;
		for (int j = 0; j < 20; j++)
			v[k][j] = heap_packet_sized(0, &hp[k], &t, 200, k == 1);
		packed[k] = round_trip(v[k], 20, PK_RAW_MAX, 3);
		for (int j = 0; j < 20; j++)
			free(v[k][j].d);
	}
	if (getenv("PACK_SIZES") || packed[1] > packed[0] + packed[0] / 4)
		fprintf(stderr, "one size: %zu bytes, a size per address: %zu\n", packed[0],
			packed[1]);
	T_CHECK(packed[1] <= packed[0] + packed[0] / 4);
}

/*
 * Each stream has its lists: the packets of two threads' heaps pack, in
 * the order a recorder takes them (one of each in turn), no bigger than
 * grouped by thread (the lists of version 2, shared, made them 5% bigger);
 * and a block of 40 streams, more than have lists of their own
 * (PK_NSTREAMS), decodes to its packets.
 */
static void streams(uint64_t *ts)
{
	static struct heap hp[40];
	struct pkt in[2][30], v[60], *many = calloc(400, sizeof(*many));
	size_t apart, grouped;

	for (uint32_t r = 0; r < 2; r++)
		hp[r].next = 0x7f0000000000ull * (r + 1);
	for (int k = 0; k < 30; k++)
		for (uint32_t r = 0; r < 2; r++)
			in[r][k] = heap_packet(r, &hp[r], ts, 150);
	for (int k = 0; k < 60; k++)
		v[k] = in[k % 2][k / 2];
	apart = round_trip(v, 60, PK_RAW_MAX, 3);
	for (int k = 0; k < 60; k++)
		v[k] = in[k / 30][k % 30];
	grouped = round_trip(v, 60, PK_RAW_MAX, 3);
	if (getenv("PACK_SIZES") || apart > grouped + grouped / 50)
		fprintf(stderr, "streams in turn: %zu bytes, grouped: %zu\n", apart, grouped);
	T_CHECK(apart <= grouped + grouped / 50);
	for (int k = 0; k < 60; k++)
		free(v[k].d);

	T_CHECK(many != NULL);
	if (!many)
		return;
	for (uint32_t r = 0; r < 40; r++) {
		memset(&hp[r], 0, sizeof(hp[r]));
		hp[r].next = 0x550000000000ull + ((uint64_t)r << 32);
	}
	for (uint32_t k = 0; k < 400; k++)
		many[k] = heap_packet(k % 40, &hp[k % 40], ts, 1 + (uint32_t)(rnd() % 40));
	round_trip(many, 400, PK_RAW_MAX, 3);
	round_trip(many, 400, 16 << 10, 1);
	for (uint32_t k = 0; k < 400; k++)
		free(many[k].d);
	free(many);
}

/* Write the block of v[0..n) to dir/block-k (seeds of fuzz-pack). */
/*
 * The decoder's guess with a second one (pred_value_g, which takes the
 * usual code 0 first) undoes the coder's swap (swap2) for every code,
 * guess and second guess among the values where they differ: 0, 1, 2,
 * equal ones, the largest.
 */
static void second_guesses(void)
{
	static const uint64_t x[] = { 0, 1, 2, 3, 16, UINT64_MAX - 1, UINT64_MAX };
	static struct pred p;
	const uint32_t n = sizeof(x) / sizeof(x[0]);

	for (uint32_t a = 0; a < n; a++)
		for (uint32_t b = 0; b < n; b++)
			for (uint32_t c = 0; c < n; c++) {
				uint64_t v = x[a], g = x[b], h = x[c];

				memset(&p, 0, sizeof(p));
				*pred_at(&p, 0) = g;
				T_EQ(pred_value_g(&p, &p.prev[0], pred_salt(0), swap2(v, g, h), h),
				     v);
				memset(&p, 0, sizeof(p));
				*pred_at(&p, 0) = g;
				T_EQ(pred_value_g(&p, &p.prev[0], pred_salt(0), v, h),
				     swap2(v, g, h));
			}
}

static void write_seed(const char *dir, int k, struct pkt *v, size_t n)
{
	struct pk_enc *e;
	const uint8_t *b;
	char path[4096], err[256];
	size_t bl;
	FILE *f;

	T_EQ(pk_enc_new(&e, &types, 3), 0);
	for (size_t i = 0; i < n; i++)
		T_EQ(pk_enc_add(e, v[i].d, v[i].len), 0);
	T_EQ(pk_enc_take(e, &b, &bl, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/block-%d", dir, k);
	f = fopen(path, "wx");
	T_CHECK(f && fwrite(b, 1, bl, f) == bl);
	if (f)
		T_EQ(fclose(f), 0);
	pk_enc_free(e);
}

/*
 * usage: pack, the test; pack --seeds DIR, write a few blocks of the
 * test's packets into DIR instead (tests/fuzz/seeds.sh).
 */
int main(int argc, char **argv)
{
	static uint64_t live[4096];
	uint32_t nlive = 0;
	struct pkt v[400];
	size_t n = 0, raw = 0, packed;
	uint64_t ts = 1000;

	T_EQ(pt_types(&types), 0);
	for (uint32_t i = 0; i < 360; i++)
		v[n++] = make_packet(i % 7, &ts, 1 + (uint32_t)(rnd() % 300), live, &nlive);
	/* what the coder cannot read, kept whole */
	v[n] = make_packet(9, &ts, 20, live, &nlive);
	v[n].d[80] = 17;
	n++;
	v[n] = make_packet(9, &ts, 20, live, &nlive);
	v[n].len -= 3; /* content_size no longer says its length */
	n++;
	v[n].d = malloc(10);
	memset(v[n].d, 0xab, 10);
	v[n++].len = 10;
	for (size_t i = 0; i < n; i++)
		raw += v[i].len;
	if (argc == 3 && !strcmp(argv[1], "--seeds")) {
		struct pkt s[2] = { stack_packet(&ts, 60), stack_packet(&ts, 300) };

		write_seed(argv[2], 0, v, 3);
		write_seed(argv[2], 1, v + 3, 30);
		write_seed(argv[2], 2, v + n - 3, 3); /* packets kept whole */
		write_seed(argv[2], 3, s, 2); /* deep stacks, fields that follow each other */
		/* more streams than have lists of their own */
		{
			static struct heap hp[24];
			struct pkt m[24];

			for (uint32_t k = 0; k < 24; k++)
				m[k] = heap_packet(k, &hp[k], &ts, 3);
			write_seed(argv[2], 4, m, 24);
			for (uint32_t k = 0; k < 24; k++)
				free(m[k].d);
		}
		return t_result();
	}

	packed = round_trip(v, n, PK_RAW_MAX, 3); /* one block */
	T_CHECK(packed < raw / 3);
	round_trip(v, n, 1, 1);	       /* a packet a block */
	round_trip(v, n, 64 << 10, 5); /* a few */
	header_apart(v, n);

	/* a window's worth of other values between a value and its return */
	{
		struct pk_enc *e;
		const uint8_t *b;
		struct pk_block d = { 0 };
		size_t bl;
		char err[256];
		struct pkt big[3];

		nlive = 0;
		for (int k = 0; k < 3; k++)
			big[k] = make_packet(1, &ts, 9000, live, &nlive);
		T_EQ(pk_enc_new(&e, &types, 1), 0);
		for (int k = 0; k < 3; k++)
			T_EQ(pk_enc_add(e, big[k].d, big[k].len), 0);
		T_EQ(pk_enc_take(e, &b, &bl, err, sizeof(err)), 0);
		T_EQ(pk_decode(NULL, &types, b, bl, &d, err, sizeof(err)), 0);
		T_EQ(d.len, big[0].len + big[1].len + big[2].len);
		T_CHECK(d.len == big[0].len + big[1].len + big[2].len &&
			!memcmp(d.data, big[0].d, big[0].len) &&
			!memcmp(d.data + big[0].len, big[1].d, big[1].len) &&
			!memcmp(d.data + big[0].len + big[1].len, big[2].d, big[2].len));
		pk_block_free(&d);
		T_EQ(pk_enc_add(e, big[0].d, PK_RAW_MAX + 1), -E2BIG);
		pk_enc_free(e);
		for (int k = 0; k < 3; k++)
			free(big[k].d);
	}

	/* deep stacks, many times the same few, and fields that follow each other */
	{
		struct pkt s[40];
		size_t sraw = 0;

		for (int k = 0; k < 40; k++) {
			s[k] = stack_packet(&ts, 1 + (uint32_t)(rnd() % 600));
			sraw += s[k].len;
		}
		packed = round_trip(s, 40, PK_RAW_MAX, 3);
		T_CHECK(packed < sraw / 10); /* a new stack in 16 is most of it */
		round_trip(s, 40, 1, 1);
		round_trip(s, 40, 32 << 10, 3);
		for (int k = 0; k < 40; k++)
			free(s[k].d);
	}

	fields_that_follow();
	hex_pairs();
	window_edge();
	stale_plans();
	hostile(v, 40);
	hostile_cols(&ts);
	version1();
	version2();
	streams(&ts);
	sizes_after_addresses(&ts);
	second_guesses();
	for (size_t i = 0; i < n; i++)
		free(v[i].d);
	return t_result();
}
