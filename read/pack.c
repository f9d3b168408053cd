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
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <internal/grow.h>
#include <internal/hot.h>

#include "read/packfmt.h"

/* ---- the checksum ----------------------------------------------------------------- */

/*
 * zlib's crc32 (1.2.13) takes about 4 instructions a byte: 38 M of a read
 * of a1's 10 MB, 59 M of tr1000's 15 MB, a tenth of the decoder's own
 * work.  Folding 64 bytes at a time by carry-less multiplication (the
 * method of Intel's "Fast CRC Computation for Generic Polynomials Using
 * PCLMULQDQ", with the constants of Linux's crc32-pclmul for the
 * polynomial of zlib, reflected) takes a few instructions for 64 bytes.
 * Chosen at load time, where the CPU has the instruction; the bytes short
 * of a multiple of 16, and inputs under 64 bytes, are zlib's.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>

#define PK_CRC_TARGET __attribute__((target("pclmul,sse4.1")))

/* The crc (not inverted, as Linux's crc32_le) of n bytes at p, n >= 64 and a multiple of 16. */
static PK_CRC_TARGET uint32_t crc_fold(uint32_t crc, const uint8_t *p, size_t n)
{
	const __m128i k21 = _mm_set_epi64x(0x1c6e41596ll, 0x154442bd4ll);
	const __m128i k43 = _mm_set_epi64x(0x0ccaa009ell, 0x1751997d0ll);
	const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124ll);
	const __m128i poly = _mm_set_epi64x(0x1f7011641ll, 0x1db710641ll);
	const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
	__m128i x0 = _mm_loadu_si128((const __m128i *)p), x1, x2, x3, t;

	x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128((int)crc));
	if (n >= 64) {
		x1 = _mm_loadu_si128((const __m128i *)(p + 16));
		x2 = _mm_loadu_si128((const __m128i *)(p + 32));
		x3 = _mm_loadu_si128((const __m128i *)(p + 48));
		for (p += 64, n -= 64; n >= 64; p += 64, n -= 64) {
			__m128i y0 = _mm_clmulepi64_si128(x0, k21, 0x11);
			__m128i y1 = _mm_clmulepi64_si128(x1, k21, 0x11);
			__m128i y2 = _mm_clmulepi64_si128(x2, k21, 0x11);
			__m128i y3 = _mm_clmulepi64_si128(x3, k21, 0x11);

			x0 = _mm_xor_si128(_mm_clmulepi64_si128(x0, k21, 0x00), y0);
			x1 = _mm_xor_si128(_mm_clmulepi64_si128(x1, k21, 0x00), y1);
			x2 = _mm_xor_si128(_mm_clmulepi64_si128(x2, k21, 0x00), y2);
			x3 = _mm_xor_si128(_mm_clmulepi64_si128(x3, k21, 0x00), y3);
			x0 = _mm_xor_si128(x0, _mm_loadu_si128((const __m128i *)p));
			x1 = _mm_xor_si128(x1, _mm_loadu_si128((const __m128i *)(p + 16)));
			x2 = _mm_xor_si128(x2, _mm_loadu_si128((const __m128i *)(p + 32)));
			x3 = _mm_xor_si128(x3, _mm_loadu_si128((const __m128i *)(p + 48)));
		}
		/* the 4 folded into 1 */
		t = _mm_clmulepi64_si128(x0, k43, 0x11);
		x0 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x0, k43, 0x00), t), x1);
		t = _mm_clmulepi64_si128(x0, k43, 0x11);
		x0 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x0, k43, 0x00), t), x2);
		t = _mm_clmulepi64_si128(x0, k43, 0x11);
		x0 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x0, k43, 0x00), t), x3);
	}
	for (; n >= 16; p += 16, n -= 16) {
		t = _mm_clmulepi64_si128(x0, k43, 0x11);
		x0 = _mm_xor_si128(_mm_clmulepi64_si128(x0, k43, 0x00), t);
		x0 = _mm_xor_si128(x0, _mm_loadu_si128((const __m128i *)p));
	}
	/* 128 bits to 64 (and 32 zeroes added), then 64 to 32 */
	t = _mm_clmulepi64_si128(x0, k43, 0x10);
	x0 = _mm_xor_si128(_mm_srli_si128(x0, 8), t);
	t = _mm_srli_si128(x0, 4);
	x0 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x0, mask32), k5, 0x00), t);
	/* Barrett's reduction, bits reversed */
	t = x0;
	x0 = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32), poly, 0x10);
	x0 = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32), poly, 0x00);
	x0 = _mm_xor_si128(x0, t);
	return (uint32_t)_mm_extract_epi32(x0, 1);
}

/*
 * What the CPU has that the decoder uses (PK_CPU_*), found once; none when
 * PK_GENERIC_ENV is set, no pext when it is "avx2" (to test the paths
 * other CPUs take on one that has more).
 */
enum { PK_CPU_CLMUL = 1, PK_CPU_AVX2 = 2, PK_CPU_PEXT = 4, PK_CPU_KNOWN = 8 };

/*
 * Whether pext is fast: Intel's since Haswell, AMD's from Zen 3 (family
 * 0x19); Zen 1 and 2 run it in microcode, tens to hundreds of cycles.
 */
static bool pk_fast_pext(void)
{
	unsigned a, b, c, d, fam;

	if (!__builtin_cpu_supports("bmi2") || !__get_cpuid(1, &a, &b, &c, &d))
		return false;
	fam = (a >> 8) & 0xf;
	if (fam == 0xf)
		fam += (a >> 20) & 0xff;
	return __builtin_cpu_is("intel") || (__builtin_cpu_is("amd") && fam >= 0x19);
}

static unsigned pk_cpu(void)
{
	static unsigned has; /* racy but idempotent: every thread finds the same */
	unsigned h = __atomic_load_n(&has, __ATOMIC_RELAXED); /* a cache: pairs with no one */

	if (!h) {
		const char *g = getenv(PK_GENERIC_ENV);

		bool avx2 = g && !strcmp(g, "avx2");

		h = PK_CPU_KNOWN;
		if (!g || !*g || !strcmp(g, "0") || avx2) {
			__builtin_cpu_init();
			if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1"))
				h |= PK_CPU_CLMUL;
			if (__builtin_cpu_supports("avx2"))
				h |= PK_CPU_AVX2 | (!avx2 && pk_fast_pext() ? PK_CPU_PEXT : 0);
		}
		__atomic_store_n(&has, h, __ATOMIC_RELAXED);
	}
	return h;
}
#endif

uint32_t pk_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (n >= 64 && (pk_cpu() & PK_CPU_CLMUL)) {
		size_t m = n & ~(size_t)15;

		crc = ~crc_fold(~crc, p, m);
		p += m;
		n -= m;
	}
#endif
	while (n) { /* zlib takes a uInt: a block is smaller, but keep it right */
		uInt k = n > 1u << 30 ? 1u << 30 : (uInt)n;

		crc = (uint32_t)crc32(crc, p, k);
		p += k;
		n -= k;
	}
	return crc;
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
	if (hdr->version < 1 || hdr->version > PK_VERSION)
		return rr_fail(err, errlen, -EBADMSG,
			       "packed block of version %u (this rip reads 1 to %u)", hdr->version,
			       PK_VERSION);
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
		crc = pk_crc32(0, (const uint8_t *)&z, sizeof(z));
		crc = pk_crc32(crc, blk + sizeof(z), len - sizeof(z));
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

/*
 * A column as read: its next byte p and its end.  Varints are decoded as
 * they are taken, one or two bytes (the usual) on the inline path:
 * decoding every varint column into an array of values first, then taking
 * them from there, cost 10% more.  Every column is followed by DPAD bytes
 * of 0x80 in the decoder's buffer, so a byte at p <= end can be read
 * without a check (a varint's byte with its top bit: the read goes to the
 * checked path).  The cursors are pointers, which the stores of the
 * decoded fields (typed, below) cannot alias, so the compiler may keep
 * them in registers.
 */
#define DPAD 16u
/*
 * A column is read in runs (dcol.stop) when fewer than 1 in DRUN of its
 * values take a byte more (its column of high bytes is that short): the
 * end of a run is a branch mispredicted, and a column of many two-byte
 * values takes them better without one (dcol_get).
 */
#define DRUN 8u
_Static_assert(DPAD >= 16, "dcol_run reads 16 bytes from a cursor at most at its end");

struct dcol {
	const uint8_t *p, *end;
	/*
	 * A run of one-byte varints (version 2 on): the bytes from p to stop
	 * are known to be below 0x80, so each is a whole value, taken with no
	 * other load or check (stop <= end).  NULL for a column whose values
	 * are often longer (stop is then never looked for: dcol_get).
	 */
	const uint8_t *stop;
	struct dcol *hi; /* where the bytes after a varint's first are (read/packfmt.h), or NULL */
};

/*
 * The end of the run of bytes below 0x80 from p on, at most 16 bytes
 * ahead: the first byte with its top bit, within p[0 .. 16), which p <=
 * end and the padding after end (DPAD bytes of 0x80) keep at most end.
 */
static inline const uint8_t *dcol_run(const uint8_t *p)
{
#ifdef __SSE2__
	__m128i x = _mm_loadu_si128((const __m128i *)p);

	return p + __builtin_ctz((uint32_t)_mm_movemask_epi8(x) | 0x10000u);
#else
	uint64_t w;

	memcpy(&w, p, 8);
	w &= 0x8080808080808080ull;
	return p + (w ? (uint32_t)__builtin_ctzll(w) / 8 : 8);
#endif
}

static const uint8_t *dcol_bytes(struct dcol *c, size_t n)
{
	const uint8_t *p = c->p;

	if ((size_t)(c->end - p) < n)
		return NULL;
	c->p = p + n;
	return p;
}

/* A varint: its value, and whether it was whole (not cut, at most 10 bytes). */
struct duv {
	uint64_t v;
	bool ok;
};

/*
 * The next varint of c, the slow way.  Its value is returned, not stored
 * through a pointer: dcol_get's callers would otherwise take the address
 * of the variable they decode into, which gcc then keeps on the stack.
 */
static __attribute__((noinline)) struct duv dcol_slow(struct dcol *c)
{
	struct dcol *s = c;
	uint64_t x = 0;

	for (uint32_t sh = 0; sh < 64; sh += 7) {
		uint8_t b;

		if (s->p >= s->end)
			return (struct duv){ 0, false };
		b = *s->p++;
		x |= (uint64_t)(b & 0x7f) << sh;
		if (b < 0x80)
			return (struct duv){ x, true };
		if (c->hi) /* the bytes after the first */
			s = c->hi;
	}
	return (struct duv){ 0, false };
}

/* The 7-bit groups of the bytes of x (top bits clear), packed: 56 bits of 8 bytes. */
static inline uint64_t dpack7(uint64_t x)
{
	x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
	x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
	return (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
}

/*
 * The next varint of c (version 2 on) when it is not one or two bytes, as
 * dcol_slow, with the bytes after the first taken from its column of high
 * bytes by one 8-byte load: the first byte without its top bit ends it.
 * The padding after a column (DPAD bytes of 0x80) holds no such byte, so
 * one found is in the column.  Hex literals (differences from the value
 * before, 3 to 6 bytes) are most of these: 1.6 M at 1,000 threads, where
 * dcol_slow's loop over the bytes took 68 instructions each and a branch
 * mispredicted at its end.  Longer than 9 bytes, cut, or a column without
 * its own column of high bytes: dcol_slow.
 */
static __attribute__((noinline)) struct duv dcol_long(struct dcol *c)
{
	const uint8_t *cp = c->p;
	struct dcol *h = c->hi;
	uint64_t w, stop;

	if (!h || cp >= c->end || *cp < 0x80)
		return dcol_slow(c);
	memcpy(&w, h->p, 8);
	stop = ~w & 0x8080808080808080ull;
	if (!stop)
		return dcol_slow(c);
	h->p += (__builtin_ctzll(stop) + 1) / 8;
	c->p = cp + 1;
	if (c->stop) /* the run after it */
		c->stop = dcol_run(cp + 1);
	w &= (stop ^ (stop - 1)) & 0x7f7f7f7f7f7f7f7full; /* its bytes, their top bits clear */
	return (struct duv){ (*cp & 0x7full) | dpack7(w) << 7, true };
}

/* The next varint of c: 0, or -1 when it is cut or longer than 10 bytes. */
static int dcol_uv(struct dcol *c, uint64_t *v)
{
	struct duv r = dcol_slow(c);

	*v = r.v;
	return r.ok ? 0 : -1;
}

/*
 * What the caller of dcol_get knows of its column (version 2 on): read in
 * runs (stop set) or not (stop NULL, never looked at), or either.  A plan
 * (below) knows it of every field's column, chosen once a block: a column
 * not read in runs then takes its varints without the load and the two
 * tests of stop, about 8 instructions of each value's 20 (a1: 8 M values).
 */
enum { DRUN_NO, DRUN_YES, DRUN_ANY };

/*
 * The next varint of c.  One or two bytes (the usual) without a branch on
 * which: from one 8-byte load (version 1), or the first byte here and the
 * next from the column of the bytes after the first (version 2), taken or
 * not by the first byte's top bit (read unchecked: at the end of its
 * column it is padding, 0x80, which sends a two-byte varint to dcol_slow).
 * A one-byte path first, taken when the first byte is a whole value, was
 * mispredicted for every two-byte value: at 60 threads, where ranks pass
 * 64 (two bytes), that cost 7-11% of decoding version 1.  h is c->hi,
 * which the callers hold (in a plan, in a local): one load fewer before
 * the bytes, on the way to every value.
 */
static inline RIP_HOT int dcol_get(struct dcol *c, struct dcol *h, uint64_t *v, bool split, int run)
{
	if (split) { /* version 2 on: the first byte here, the next in h (never NULL) */
		const uint8_t *cp = c->p, *hp, *stop = run != DRUN_NO ? c->stop : NULL;

		if (__builtin_expect(cp < stop, 1)) { /* in a run: a whole value */
			*v = *cp;
			c->p = cp + 1;
			return 0;
		}
		hp = h->p;
		if (__builtin_expect(cp < c->end, 1)) {
			/*
			 * b0 sign-extended: its top bit (more) spread over a
			 * mask, which selects the byte from h (t) and moves
			 * h on (subtracted: 0 or -1), 14 instructions where
			 * the shifts of the top bits of both bytes took 19.
			 * b0 a whole register from here: gcc spilled it around
			 * the run's search below as the byte loaded (a 1-byte
			 * store) and took it back by an 8-byte load, which
			 * the store cannot forward: a fifth of dec_events2's
			 * samples on tr2 fell just after those loads (perf);
			 * without, decoding takes 2-4% less CPU.
			 */
			int64_t b0 = (int8_t)*cp;
			uint64_t mask, t;

			__asm__("" : "+r"(b0));
			mask = (uint64_t)(b0 >> 63); /* gcc, clang: arithmetic */
			t = *hp & mask;

			if (__builtin_expect(!(t & 0x80), 1)) {
				*v = ((uint64_t)b0 & 0x7f) | t << 7;
				c->p = cp + 1;
				h->p = (const uint8_t *)((uintptr_t)hp - mask);
				/* the run after it */
				if (run == DRUN_YES || (run == DRUN_ANY && stop))
					c->stop = dcol_run(cp + 1);
				return 0;
			}
		}
		goto slow;
	}
	if (__builtin_expect(c->end - c->p >= 8, 1)) {
		uint64_t w, stop;
		uint32_t n;

		memcpy(&w, c->p, 8);
		stop = ~w & 0x8080808080808080ull;
		n = stop ? (uint32_t)__builtin_ctzll(stop) / 8 + 1 : 9;
		if (__builtin_expect(n <= 2, 1)) {
			uint64_t x = (w & 0x7f) | ((w >> 1) & 0x3f80);

			*v = n == 1 ? (x & 0x7f) : x;
			c->p += n;
			return 0;
		}
	}
slow: {
	struct duv r = split ? dcol_long(c) : dcol_slow(c);

	*v = r.v;
	return r.ok ? 0 : -1;
}
}

/*
 * What the build of the decoder's loop may use (dec_events2*): the
 * baseline's instructions, AVX2's, or AVX2's and a fast pext (BMI2).
 */
enum { DSIMD_NO, DSIMD_AVX2, DSIMD_PEXT };

/*
 * dcol_get of a field's column, its hi loaded only off a run: gcc loaded
 * it before the run's test, where a column read in runs seldom needs it.
 */
static inline RIP_HOT int dcol_getf(struct dcol *c, struct dcol *const *hq, uint64_t *v, bool split,
			     int run)
{
	if (split && run == DRUN_YES) {
		const uint8_t *cp = c->p;

		if (__builtin_expect(cp < c->stop, 1)) {
			*v = *cp;
			c->p = cp + 1;
			return 0;
		}
	}
	return dcol_get(c, *hq, v, split, run);
}

/*
 * The next varint of c, a column of hex literals (version 2 on: 3 to 6
 * bytes, the most at 1,000 threads), inline: its first byte, and when it
 * has the top bit the bytes after from one 8-byte load of its high bytes,
 * as dcol_long.  A column read in runs, or one whose varint is cut or
 * longer than 9 bytes, goes the usual way (dcol_get).  Its column of high
 * bytes is never NULL (version 2 on, read/packfmt.h: key_split).
 */
static inline RIP_HOT int dcol_lit(struct dcol *c, uint64_t *v, int simd)
{
	const uint8_t *cp = c->p;
	struct dcol *h = c->hi;

	if (__builtin_expect(!c->stop && cp < c->end, 1)) {
		uint64_t b0 = *cp, w, stop;

		memcpy(&w, h->p, 8);
		stop = ~w & 0x8080808080808080ull;
		if (b0 < 0x80) {
			*v = b0;
			c->p = cp + 1;
			return 0;
		}
		if (__builtin_expect(stop != 0, 1)) {
			h->p += (__builtin_ctzll(stop) + 1) / 8;
			c->p = cp + 1;
			w &= (stop ^ (stop - 1)) & 0x7f7f7f7f7f7f7f7full;
#if defined(__x86_64__) && defined(__GNUC__)
			if (simd == DSIMD_PEXT) /* its 7-bit groups packed in one instruction */
				__asm__("pextq %2, %1, %0"
					: "=r"(w)
					: "r"(w), "r"(0x7f7f7f7f7f7f7f7full));
			else
#endif
				w = dpack7(w);
			*v = (b0 & 0x7f) | w << 7;
			return 0;
		}
	}
	return dcol_get(c, h, v, true, DRUN_ANY);
}

/*
 * The decoder's lists: the low 16 bits of the stamps of the entries each
 * holds, oldest first, from head to tail, and the value of stamp s at
 * val[s % PK_WINDOW].  The rank of an entry counts from the newest, so the
 * usual small rank is an entry near the tail, taken out by moving the few
 * stamps after it.  The same entries as the coder's bitmaps
 * (read/packfmt.h), but for the stamps older than the window: they stay at
 * the front, and a rank that lands on one is past the list (the stamps
 * grow from head to tail, so the entry of a rank is in the list iff its
 * own stamp is in the window; its value's place may be taken already).
 * Stamps are kept as their low 16 bits, an entry's age as the difference
 * of those from the count's, exact while under 65,536: at most every
 * DSWEEP stamps the old stamps are dropped from the front of both lists
 * and both are moved to the front of their arrays, so no entry is looked
 * at older than DSWEEP + PK_WINDOW, and a list, at most PK_WINDOW entries
 * after a sweep, has room for the DSWEEP stamps until the next (no check
 * of its room at each push: a sweep when a list reached the end of its
 * array, as it was, 2 instructions a hex value).  A sweep is due before
 * a run of a packet's events (DSEG bytes of them at most: dec_events)
 * could take the stamps past DSWEEP since the last, not at each hex value
 * (2 instructions each); it is invisible to the values decoded (a rank
 * counts from the tail, and one that lands on a stamp out of the window
 * is refused whether it was swept or not).  The sweeps move up to 2 x 16
 * KiB every 6,000 to 8,192 stamps.  2-byte stamps halve the bytes a rank moves:
 * with 4-byte ones, memmove of a rank of 32 or more was 9% of rip leaks'
 * samples at 2 threads (ranks of 128 to 511 are most of them on deep
 * stacks).  Dropping the entry that leaves the window at every push
 * instead (from the head of either list), 14 more instructions an event;
 * telling the list of each position in a byte for that, 6% slower at 1,000
 * threads (a cache miss).  (The lists held (value, stamp) pairs once, 16
 * bytes moved an entry.)
 */
/*
 * Ranks below DMOVE move DMOVE stamps, whatever is after the tail; larger
 * ranks, below 2 x DMOVE (4 x DMOVE with AVX2), as many DMOVE as cover
 * them (what is read past the tail is within the DMOVE after it): 8
 * instructions a DMOVE with AVX2 where memmove took ~55 with its call
 * (ranks of 64 to 255 are 1.4 M at 2 threads).
 */
#define DMOVE 64u
#define DSWEEP PK_WINDOW /* stamps between two sweeps of both lists, at most */
/*
 * The bytes of a packet's events decoded between two checks of the sweep
 * due, and the hex values they can hold at most: a hex field writes 8
 * bytes, and the last event started may pass the end by its fixed part.
 */
#define DSEG 16384u
#define DSEG_HEX (DSEG / 8 + 16)
_Static_assert(DSEG_HEX < DSWEEP && 13 + 8 * RIP_EVENT_MAX_FIELDS < 8 * 16, "a run fits");
_Static_assert(PK_WINDOW + DSWEEP < 65536 && (DSWEEP & (DSWEEP - 1)) == 0,
	       "an entry's age fits in 16 bits");
_Static_assert(PK_WINDOW + DSWEEP <= 2 * PK_WINDOW, "a list's array holds a sweep's stamps");

/*
 * e[0 .. DMOVE) = e[1 .. DMOVE + 1): every load, then every store, in
 * vectors of 8 entries (which may alias the entries: their elements are
 * uint16_t).  A memcpy to a local array and back, as it was, had gcc
 * store the array to the stack too: 8 stores of 16 bytes for nothing.
 */
typedef uint16_t dvec __attribute__((vector_size(16), aligned(2)));
_Static_assert(DMOVE == 64, "dmove moves 8 vectors of 8 entries");

static inline void dmove(uint16_t *e)
{
	const dvec *s = (const dvec *)(e + 1);
	dvec *o = (dvec *)e;
	dvec a0 = s[0], a1 = s[1], a2 = s[2], a3 = s[3], a4 = s[4], a5 = s[5], a6 = s[6], a7 = s[7];

	o[0] = a0;
	o[1] = a1;
	o[2] = a2;
	o[3] = a3;
	o[4] = a4;
	o[5] = a5;
	o[6] = a6;
	o[7] = a7;
}

/*
 * The same in vectors of 16 entries, for the decoder's loop built for
 * AVX2 (dec_events2w): 8 instructions, not 16 (a1: 3.3 M moves).  Only
 * there: a function built without AVX2 would split each vector in two.
 */
typedef uint16_t dvecw __attribute__((vector_size(32), aligned(2)));

static inline RIP_HOT void dmove_w(uint16_t *e)
{
	const dvecw *s = (const dvecw *)(e + 1);
	dvecw *o = (dvecw *)e;
	dvecw a0 = s[0], a1 = s[1], a2 = s[2], a3 = s[3];

	o[0] = a0;
	o[1] = a1;
	o[2] = a2;
	o[3] = a3;
}

struct dlist {
	uint16_t e[2 * PK_WINDOW + DMOVE];
	uint32_t head, tail;
};

struct dmtf {
	struct {
		uint64_t v;
		uint32_t aux[2]; /* as the coder's (read/packfmt.h) */
	} val[PK_WINDOW];	 /* by position: a value and what came after it, one load */
	struct dlist l[2];
	uint32_t n;	/* stamps used */
	uint32_t swept; /* n at the last sweep */
};

/*
 * The counters of a stream's lists while a packet is decoded: locals, which
 * no store into the lists can reach, so they stay in registers rather than
 * go through memory from one value to the next (in struct dlist, uint32_t
 * as the stamps stored, they did).  The head and tail of each list as
 * pointers to its entries: a rank's entry is the tail's less the rank,
 * with no base of its list worked out (a multiplication by the size of a
 * list and an addition, for both lists, at each value).
 */
struct dpos {
	uint32_t n, swept;
	uint16_t *head[2], *tail[2];
};

static inline void dpos_load(struct dpos *s, struct dmtf *m)
{
	s->n = m->n;
	s->swept = m->swept;
	for (int l = 0; l < 2; l++) {
		s->head[l] = m->l[l].e + m->l[l].head;
		s->tail[l] = m->l[l].e + m->l[l].tail;
	}
}

static inline void dpos_keep(const struct dpos *s, struct dmtf *m)
{
	m->n = s->n;
	m->swept = s->swept;
	for (int l = 0; l < 2; l++) {
		m->l[l].head = (uint32_t)(s->head[l] - m->l[l].e);
		m->l[l].tail = (uint32_t)(s->tail[l] - m->l[l].e);
	}
}

/* The age of an entry of stamp bits e when the stamps used are n: exact (above). */
static inline uint32_t dage(uint32_t n, uint16_t e)
{
	return (uint16_t)(n - e);
}

/*
 * The stamps that left the window dropped from both lists, and both moved
 * to the front.  A list's ages fall from its head to its tail (its stamps
 * grow, and are all less than 65,536 old), so the first in the window is
 * found by halving: the loop over the old stamps one at a time took 13 M
 * instructions at 1,000 threads.
 */
static __attribute__((noinline)) void dmtf_sweep(struct dmtf *m, struct dpos *s)
{
	for (uint32_t l = 0; l < 2; l++) {
		uint16_t *e = m->l[l].e, *h = s->head[l], *hi = s->tail[l];
		size_t k;

		while (h < hi) { /* the first of head .. hi in the window, or hi */
			uint16_t *mid = h + (hi - h) / 2;

			if (dage(s->n, *mid) > PK_WINDOW)
				h = mid + 1;
			else
				hi = mid;
		}
		k = (size_t)(s->tail[l] - h); /* at most PK_WINDOW: a window's stamps */
		memmove(e, h, k * sizeof(e[0]));
		s->head[l] = e;
		s->tail[l] = e + k;
	}
	s->swept = s->n;
}

/* v under a new stamp at the tail of list l (a sweep due was done: dec_events). */
static inline void dmtf_push(struct dmtf *m, struct dpos *s, uint64_t v, uint32_t l)
{
	m->val[s->n & PK_WMASK].v = v;
	*s->tail[l]++ = (uint16_t)s->n++;
}

/*
 * The bytes after a block's packets in the buffer they are decoded into:
 * an event's header and fixed fields are written before anything tells
 * whether they fit in its packet (the loop over the events checks once an
 * event is done, and a packet that ends inside one is refused then:
 * "events past their packet"), so they may pass its end by at most an
 * extended header, all the fields and the 8 bytes of the last field's
 * store.  In the next packet's place that is overwritten; after the last,
 * it is this.  (A check of the bytes an event needs before it, as it was,
 * took 4 instructions and a load an event.)  Strings and arrays are
 * checked against the packet's end, with nothing left when it is passed.
 */
#define DSLACK PK_DEC_SLACK
_Static_assert(13 + 8 * RIP_EVENT_MAX_FIELDS + 8 <= DSLACK, "an event's fixed part fits");

/* ---- the decoder's state ----------------------------------------------------------------- */

/*
 * What to do with each field of a type, the block's version and the field
 * before taken into account once, when the plan is made: a field's op is
 * all the decoding loop branches on, through the address of the op's code
 * (go, a GNU C label as value: one indirect jump at the end of each op,
 * where a switch in a loop took a load, a table's lookup and two jumps).
 */
enum {
	D_HEX, /* a hex value, from its list or its literal */
	D_U,   /* an integer against the guess of its name (version 2 on) */
	D_S,   /* the same, signed (the guess on its zigzag) */
	D_UG,  /* an integer right after a hex field (version 3): two guesses */
	D_SG,  /* the same, signed */
	D_HUG, /* a hex field and the D_UG after it, in one op */
	D_HSG, /* a hex field and the D_SG after it */
	D_U1,  /* an integer as it is (version 1) */
	D_S1,  /* the same, signed (zigzag) */
	D_STR, /* a string, its NUL included */
	D_ARR, /* an array of u64 */
	D_END, /* after the last field */
	/*
	 * The ops that read varints again, for columns read in runs
	 * (DRUN_YES, above; those of the ops before: DRUN_NO): the op's
	 * column (C, a hex field's codes), the integer's after a hex field
	 * (I).
	 */
	D_HEX_C,
	D_U_C,
	D_S_C,
	D_HUG_C,
	D_HUG_I,
	D_HUG_CI,
	D_HSG_C,
	D_HSG_I,
	D_HSG_CI,
	D_NOPS
};

struct dplan {
	bool ready;
	bool ts_run; /* the column of times is read in runs */
	struct dcol *ts, *ts_hi;
	struct dfield {
		const void *go;	       /* the code of op, in dec_events */
		struct dcol *col, *hi; /* its column and that column's hi */
		uint64_t *last;	       /* a hex field's value before, or pred.prev[name] */
		uint64_t salt;	       /* an integer field's name's (pred_salt) */
		/*
		 * Where it is written: bytes after q, which moves on only
		 * past a string or an array (to its start, then its end)
		 * and at the end of the event (D_END's): one store a field,
		 * no addition of its size to q.
		 */
		uint8_t op, off;
	} f[RIP_EVENT_MAX_FIELDS + 1]; /* D_END after the last */
};

struct pk_dec {
	/*
	 * First, and its table of guesses first in it: a guess is at d plus
	 * 8 times its hash, where gcc added the offset of the table to each
	 * hash by an instruction of its own.
	 */
	struct pred pred;
	uint8_t *cols; /* the columns decompressed */
	size_t colscap;
	ZSTD_DCtx *zd;
	const struct ev_types *types;
	uint32_t ncols;
	uint32_t key[PK_MAXCOLS];
	struct dcol col[PK_MAXCOLS];
	struct dplan plan[EV_MAX_TYPES];
	struct dplan *bycode[2 * EV_MAX_TYPES]; /* by event code (id << 1 | extended) */
	uint64_t last[EV_MAX_TYPES][RIP_EVENT_MAX_FIELDS];
	struct dmtf *mtf[PK_NSTREAMS]; /* each stream's lists, made as streams come */
	struct pk_streams streams;     /* of the block */
	struct dmtf *cur;	       /* the lists of the packet being decoded */
	uint32_t version; /* of the block */
	struct dcol nohi; /* a column of high bytes for columns that have none: padding only */
	char *err;
	size_t errlen;
};

/* The column of key: that column, K_OTHER's when the block has none (the table was full). */
static struct dcol *dec_col(struct pk_dec *d, uint32_t key)
{
	for (uint32_t i = 0; i < d->ncols; i++)
		if (d->key[i] == key)
			return &d->col[i];
	return &d->col[K_OTHER];
}

/* The column of high bytes of c for dec_events2, never NULL (version 1: c's, NULL, unused). */
static struct dcol *dec_hi(struct pk_dec *d, struct dcol *c)
{
	return c->hi || d->version == 1 ? c->hi : &d->nohi;
}

static struct dplan *dec_plan(struct pk_dec *d, const struct ev_type *t, const void *const *go)
{
	struct dplan *pl = &d->plan[t->id];
	uint32_t off = 0; /* at most 8 fields of 8 bytes since q last moved */

	if (pl->ready)
		return pl;
	pl->ts = dec_col(d, K_TS(t->id));
	pl->ts_hi = dec_hi(d, pl->ts);
	for (uint32_t i = 0; i < t->nfields; i++) {
		uint8_t op = field_op(t->fields[i].type), name;
		bool after_hex = i && d->version > 2 && pl->f[i - 1].op == D_HEX;

		switch (op) {
		case OP_HEX:
			pl->f[i].op = D_HEX;
			break;
		case OP_STR:
			pl->f[i].op = D_STR;
			break;
		case OP_ARR:
			pl->f[i].op = D_ARR;
			break;
		default:
			pl->f[i].op = d->version == 1 ? D_U1 : after_hex ? D_UG : D_U;
			pl->f[i].op += op == OP_S; /* each signed op is after its unsigned */
		}
		pl->f[i].off = (uint8_t)off;
		off = op == OP_STR || op == OP_ARR ? 0 : off + rip_field_size(t->fields[i].type);
		name = pred_name(&d->pred, t, i);
		pl->f[i].salt = pred_salt(name);
		pl->f[i].col = dec_col(d, field_key(t, i, d->version));
		pl->f[i].hi = dec_hi(d, pl->f[i].col);
		pl->f[i].last = op == OP_HEX ? &d->last[t->id][i] : &d->pred.prev[name];
		if (pl->f[i].op == D_UG || pl->f[i].op == D_SG) /* the hex field before takes it */
			pl->f[i - 1].op = pl->f[i].op == D_UG ? D_HUG : D_HSG;
	}
	pl->f[t->nfields].op = D_END;
	pl->f[t->nfields].off = (uint8_t)off;
	pl->ts_run = pl->ts->stop;
	for (uint32_t i = 0; i < t->nfields; i++) { /* the ops of columns read in runs */
		struct dfield *f = &pl->f[i];
		bool c = f->col->stop, n;

		switch (f->op) {
		case D_HEX:
		case D_U:
		case D_S:
			f->op = !c ? f->op : f->op == D_HEX ? D_HEX_C : f->op == D_U ? D_U_C : D_S_C;
			break;
		case D_HUG:
		case D_HSG: /* the integer after is f[1] */
			n = f[1].col->stop;
			if (c || n)
				f->op = (f->op == D_HUG ? D_HUG_C : D_HSG_C) + (n ? 1 + c : 0);
			break;
		}
	}
	for (uint32_t i = 0; i <= t->nfields; i++)
		pl->f[i].go = go[pl->f[i].op];
	pl->ready = true;
	return pl;
}

static int bad(struct pk_dec *d, const char *what, uint32_t p)
{
	return rr_fail(d->err, d->errlen, -EBADMSG, "packed block: %s (packet %u)", what, p);
}

/*
 * The hex value decoded last, for the integer field after it (version 3):
 * where its entry keeps that integer (the aux of the list it went to), and
 * the guess it brings.
 */
struct daux {
	uint32_t *slot;
	uint64_t g;
};

static inline RIP_HOT int dec_hex(struct pk_dec *d, struct dmtf *m, struct dpos *s, struct dcol *c,
			   struct dcol *const *ch, uint64_t *last, uint64_t *v, struct daux *ax,
			   uint32_t p, bool split, int run, int simd)
{
	uint64_t code, dv;

	if (dcol_getf(c, ch, &code, split, run))
		return bad(d, "hex code column cut", p);
	if (!code) {
		struct dcol *lit = &d->col[K_HEXLIT];

		if (split ? dcol_lit(lit, &dv, simd) : dcol_get(lit, lit->hi, &dv, split, DRUN_NO))
			return bad(d, "hex literal column cut", p);
		uint32_t pos = s->n & PK_WMASK;

		*v = *last + (uint64_t)unzig(dv);
		memset(m->val[pos].aux, 0, sizeof(m->val[pos].aux));
		ax->g = 0;
		ax->slot = &m->val[pos].aux[1];
		dmtf_push(m, s, *v, 1);
		*last = *v;
	} else {
		uint32_t l = (uint32_t)((code - 1) & 1), o, pos = s->n & PK_WMASK;
		uint64_t r2 = (code - 1) & ~1ull; /* the rank, in bytes of entries */
		uint16_t *t = s->tail[l], *e;

		if (r2 >= (uint64_t)((uintptr_t)t - (uintptr_t)s->head[l]))
			return bad(d, "hex rank past its list", p);
		e = (uint16_t *)((uintptr_t)t - r2) - 1;
		if (dage(s->n, *e) > PK_WINDOW) /* it left the window: the rank is past the list */
			return bad(d, "hex rank past its list", p);
		o = *e & PK_WMASK;
		*v = m->val[o].v;
		memcpy(m->val[pos].aux, m->val[o].aux, sizeof(m->val[o].aux)); /* both: one copy */
		ax->g = m->val[o].aux[l ^ 1];
		ax->slot = &m->val[pos].aux[l ^ 1];
		s->tail[l] = t - 1;
		dmtf_push(m, s, *v, l ^ 1);
		*last = *v;
		if (r2 < 2 * DMOVE) { /* one fixed move, inline: no call, no branch on the size */
			simd ? dmove_w(e) : dmove(e);
		} else if (!simd && r2 < 4 * DMOVE) { /* two (the second's after the first's) */
			dmove(e);
			dmove(e + DMOVE);
		} else if (simd && r2 < 8 * DMOVE) { /* up to four */
			uint16_t *x = e, *const xe = (uint16_t *)((uintptr_t)e + r2);

			do {
				dmove_w(x);
				x += DMOVE;
			} while (x < xe);
		} else {
			memmove(e, e + 1, r2);
		}
	}
	return 0;
}

/*
 * Stores of the decoded fields, typed: a store through a uint8_t (or memcpy)
 * may alias anything, so the compiler would write the column cursors back
 * to memory and load them again around every field.
 */
typedef uint64_t u64_any __attribute__((aligned(1)));
typedef uint32_t u32_any __attribute__((aligned(1)));

static inline void st64(uint8_t *p, uint64_t v)
{
	*(u64_any *)p = v;
}

static inline void st32(uint8_t *p, uint32_t v)
{
	*(u32_any *)p = v;
}

/* A string field from c into *q, its NUL included: 0, or -1 past the packet (oend) or column. */
static inline RIP_HOT int dec_str(struct dcol *c, uint8_t **q, const uint8_t *oend)
{
	size_t room = *q < oend ? (size_t)(oend - *q) : 0; /* past it: DSLACK */
	size_t max = room < RIP_STRING_MAX ? room : RIP_STRING_MAX;
	const uint8_t *nul;

	if ((size_t)(c->end - c->p) < max)
		max = (size_t)(c->end - c->p);
	nul = memchr(c->p, 0, max);
	if (!nul)
		return -1;
	max = (size_t)(nul - c->p) + 1;
	memcpy(*q, dcol_bytes(c, max), max);
	*q += max;
	return 0;
}

/* An array field from c into *q: 0, or -1 past the packet (oend) or column. */
static inline RIP_HOT int dec_arr(struct dcol *c, uint8_t **q, const uint8_t *oend)
{
	const uint8_t *src;
	uint64_t n;
	uint32_t n32;

	if (dcol_uv(c, &n) || n > RIP_ARRAY_MAX || *q > oend || (size_t)(oend - *q) < 4 + n * 8 ||
	    !(src = dcol_bytes(c, n * 8)))
		return -1;
	n32 = (uint32_t)n;
	memcpy(*q, &n32, 4);
	memcpy(*q + 4, src, n * 8);
	*q += 4 + n * 8;
	return 0;
}

/*
 * The loop over a packet's events, twice: dec_events2 for blocks of
 * version 2 on, whose varints' columns of high bytes are never NULL (a
 * column that has none is given d->nohi, padding only), so a varint takes
 * no branch on it; dec_events1 for version 1, whose varints are whole.
 * One function for both, with the choice a branch in every varint, was 14
 * instructions an event more on tr2 and a1 (the branch, and the registers
 * the 8-byte loads of version 1 took from the rest of the loop).
 */
#define DEC_EVENTS dec_events2
#define DEC_SPLIT true
#define DEC_SIMD DSIMD_NO
#define DEC_ATTR
#include "read/packdec.h"
#undef DEC_EVENTS
#undef DEC_SIMD
#undef DEC_ATTR
#if defined(__x86_64__) && defined(__GNUC__)
/*
 * dec_events2 again, built for AVX2 where the CPU has it (chosen once, at
 * the first block: pk_decode): only its moves of list entries differ
 * (dmove_w); and again for AVX2 and a fast pext (dcol_lit).
 */
#define DEC_EVENTS dec_events2w
#define DEC_SIMD DSIMD_AVX2
#define DEC_ATTR __attribute__((target("avx2")))
#include "read/packdec.h"
#undef DEC_EVENTS
#undef DEC_SIMD
#undef DEC_ATTR
#define DEC_EVENTS dec_events2x
#define DEC_SIMD DSIMD_PEXT
#define DEC_ATTR __attribute__((target("avx2,bmi2")))
#include "read/packdec.h"
#undef DEC_EVENTS
#undef DEC_SIMD
#undef DEC_ATTR
#endif
#undef DEC_SPLIT
#define DEC_EVENTS dec_events1
#define DEC_SPLIT false
#define DEC_SIMD DSIMD_NO
#define DEC_ATTR
#include "read/packdec.h"
#undef DEC_EVENTS
#undef DEC_SPLIT
#undef DEC_SIMD
#undef DEC_ATTR

int pk_dec_new(struct pk_dec **out)
{
	static const uint8_t pad = 0x80; /* a byte with its top bit: to dcol_slow */
	struct pk_dec *d = calloc(1, sizeof(*d));

	if (!d || !(d->zd = ZSTD_createDCtx())) {
		free(d);
		return -ENOMEM;
	}
	d->nohi = (struct dcol){ .p = &pad, .end = &pad };
	*out = d;
	return 0;
}

void pk_dec_free(struct pk_dec *d)
{
	if (!d)
		return;
	ZSTD_freeDCtx(d->zd);
	for (uint32_t i = 0; i < PK_NSTREAMS; i++)
		free(d->mtf[i]);
	free(d->cols);
	free(d);
}

/* Room for n bytes at *p (holding *cap): 0 or -ENOMEM. */
static int pk_room(void **p, size_t *cap, size_t n)
{
	void *v;

	if (n <= *cap)
		return 0;
	v = realloc(*p, n);
	if (!v)
		return -ENOMEM;
	*p = v;
	*cap = n;
	return 0;
}

/*
 * Room for n bytes of columns at d->cols: 0 or -ENOMEM.  What it held is
 * not needed (every block decompresses its columns anew), so a larger
 * buffer replaces it, not realloc, which copied it to where it moved; and
 * with a quarter more than asked, as the next blocks are often a little
 * larger: with realloc to the size asked, a read of a1 allocated it 3
 * times, one of tr1000 6 (7.8 M instructions of copies), 2 and 1 now.
 */
static int pk_cols_room(struct pk_dec *d, size_t n)
{
	void *p = d->cols;
	int ret;

	if (n <= d->colscap)
		return 0;
	ret = rip_room(&p, &d->colscap, n + n / 4);
	d->cols = p;
	return ret;
}

/* The lists of stream id for the packet to decode: its own, empty if new in the block. */
static int dec_stream(struct pk_dec *d, uint64_t id)
{
	bool fresh;
	uint32_t n = pk_stream(&d->streams, id, &fresh);
	struct dmtf *m = d->mtf[n];

	if (!m && !(m = d->mtf[n] = malloc(sizeof(*m))))
		return rr_fail(d->err, d->errlen, -ENOMEM, "decoding a packed block: out of memory");
	if (fresh) {
		m->n = m->swept = 0;
		m->l[0].head = m->l[0].tail = m->l[1].head = m->l[1].tail = 0;
	}
	d->cur = m;
	return 0;
}

int pk_decode(struct pk_dec *dd, const struct ev_types *types, const uint8_t *blk, size_t len,
	      struct pk_block *out, char *err, size_t errlen)
{
	struct pk_dec *d = dd;
	struct pk_hdr h;
	size_t pos, cpos = 0, total = 0, o = 0;
#if defined(__x86_64__) && defined(__GNUC__)
	unsigned cpu = pk_cpu();
#endif
	int ret;

	out->len = 0;
	out->npackets = 0;
	__atomic_store_n(&out->done, 0, __ATOMIC_RELAXED); /* a hint: pairs with no one */
	if ((ret = pk_peek(blk, len, &h, err, errlen)))
		return ret;
	if (!d && pk_dec_new(&d))
		return rr_fail(err, errlen, -ENOMEM, "decoding a packed block: out of memory");
	d->types = types;
	d->version = h.version;
	d->ncols = 0;
	d->err = err;
	d->errlen = errlen;
	for (uint32_t i = 0; i < EV_MAX_TYPES; i++)
		d->plan[i].ready = false;
	memset(d->bycode, 0, sizeof(d->bycode));
	memset(d->last, 0, sizeof(d->last));
	memset(&d->pred, 0, sizeof(d->pred));
	d->streams.n = 0;
	pos = sizeof(h) + h.ncols * sizeof(struct pk_col);
	for (uint32_t i = 0; i < h.ncols; i++) {
		struct pk_col c;

		memcpy(&c, blk + sizeof(h) + i * sizeof(c), sizeof(c));
		total += c.raw + DPAD;
	}
	if (pk_cols_room(d, total) ||
	    pk_room((void **)&out->data, &out->cap, h.raw + DSLACK) ||
	    pk_room((void **)&out->off, &out->offcap, h.npackets * sizeof(*out->off))) {
		ret = rr_fail(err, errlen, -ENOMEM, "decoding a packed block: out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < h.ncols; i++) {
		struct pk_col c;

		memcpy(&c, blk + sizeof(h) + i * sizeof(c), sizeof(c));
		d->key[i] = c.key;
		if (c.flags & PK_COL_ZSTD) {
			size_t z = ZSTD_decompressDCtx(d->zd, d->cols + cpos, c.raw, blk + pos, c.size);

			if (ZSTD_isError(z) || z != c.raw) {
				ret = rr_fail(err, errlen, -EBADMSG, "packed block: column %u: %s", i,
					      ZSTD_isError(z) ? ZSTD_getErrorName(z) : "short");
				goto out;
			}
		} else {
			memcpy(d->cols + cpos, blk + pos, c.raw);
		}
		memset(d->cols + cpos + c.raw, 0x80, DPAD);
		d->col[i] = (struct dcol){ .p = d->cols + cpos, .end = d->cols + cpos + c.raw };
		d->ncols = i + 1;
		cpos += c.raw + DPAD;
		pos += c.size;
	}
	for (uint32_t i = 0; h.version > 1 && i < h.ncols; i++)
		if (key_split(d->key[i])) {
			struct dcol *c = &d->col[i], *hi = dec_col(d, K_HI(d->key[i]));

			c->hi = hi;
			if (hi != &d->col[K_OTHER] && (size_t)(hi->end - hi->p) * DRUN <
							      (size_t)(c->end - c->p))
				c->stop = c->p;
		}
	for (uint32_t p = 0; p < h.npackets; p++) {
		struct dcol *pk = &d->col[K_PKT];
		const uint8_t *src;
		uint8_t kind;
		uint64_t n;

		if (pk->p >= pk->end) {
			ret = bad(d, "packet column cut", p);
			goto out;
		}
		kind = *pk->p++;
		out->off[p] = o;
		if (kind == 1) {
			if (dcol_uv(&d->col[K_RAW], &n) || n > h.raw - o ||
			    !(src = dcol_bytes(&d->col[K_RAW], n))) {
				ret = bad(d, "kept packet past the block", p);
				goto out;
			}
			memcpy(out->data + o, src, n);
			o += n;
		} else if (kind == 0) {
			struct rip_packet ph;

			if (!(src = dcol_bytes(&d->col[K_PHDR], PK_HDR))) {
				ret = bad(d, "packet header column cut", p);
				goto out;
			}
			memcpy(&ph, src, sizeof(ph));
			n = ph.content_size / 8;
			if (ph.content_size % 8 || n < PK_HDR || n > h.raw - o) {
				ret = bad(d, "packet size out of range", p);
				goto out;
			}
			if ((ret = dec_stream(d, h.version > 2 ? ph.stream_instance_id : 0)))
				goto out;
			memcpy(out->data + o, src, PK_HDR);
			if (h.version == 1)
				ret = dec_events1(d, out->data + o, n, ph.timestamp_begin, p);
#if defined(__x86_64__) && defined(__GNUC__)
			else if (cpu & PK_CPU_PEXT)
				ret = dec_events2x(d, out->data + o, n, ph.timestamp_begin, p);
			else if (cpu & PK_CPU_AVX2)
				ret = dec_events2w(d, out->data + o, n, ph.timestamp_begin, p);
#endif
			else
				ret = dec_events2(d, out->data + o, n, ph.timestamp_begin, p);
			if (ret)
				goto out;
			o += n;
		} else {
			ret = bad(d, "bad packet kind", p);
			goto out;
		}
		/* packet p written: pairs with the acquire in read/tracepk.c's tpk_block */
		__atomic_store_n(&out->done, p + 1, __ATOMIC_RELEASE);
	}
	for (uint32_t i = 0; i < h.ncols; i++) {
		const struct dcol *c = &d->col[i];

		if (c->p != c->end) {
			ret = rr_fail(err, errlen, -EBADMSG,
				      "packed block: column 0x%x has bytes no packet used", d->key[i]);
			goto out;
		}
	}
	if (o != h.raw) {
		ret = rr_fail(err, errlen, -EBADMSG,
			      "packed block: %zu bytes of packets, %" PRIu64 " declared", o, h.raw);
		goto out;
	}
	out->len = o;
	out->npackets = h.npackets;
	out->events = h.events;
	ret = 0;
out:
	if (d != dd)
		pk_dec_free(d);
	return ret;
}

void pk_block_free(struct pk_block *b)
{
	free(b->data);
	free(b->off);
	memset(b, 0, sizeof(*b));
}
