/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz-unpack.c - libFuzzer harness: the input is a compressed
 * copy of a ring file (gzip or zstd: read/unpack.c), or anything else,
 * written to a file and read as rip ps and rip ls read a ring file
 * (fz_ring: rr_open unpacks it first, then every reader of fuzz-ring), and
 * as rip ps --legacy opens a raw file of the original format
 * (rr_open_legacy, unpacked under its own bound).  RIP_UNPACK_MAX is 64 MiB
 * for the ring file (every bound of read/unpack.c, the header's checks, the
 * ratio past 32 MiB of data, the ceiling, is reached by inputs of a few
 * kilobytes) and 4 MiB for the legacy file (its bound differs, not the
 * unpacking): no run spends long unpacking.  Seeds: ring files and a legacy
 * file compressed both ways, and small bombs (tests/fuzz/seeds.sh).
 *
 * libFuzzer's mutations of compressed bytes almost never decode (gzip's
 * CRC, zstd's blocks), so they would test the decoders' errors and not the
 * readers behind them.  The harness's own mutator (LLVMFuzzerCustomMutator)
 * unpacks an input of up to FZ_MUT_MAX bytes, mutates a window of the
 * unpacked bytes (mostly in a page that holds data past the header, the
 * file keeping its size) or cuts it short, and packs it again the same
 * way; one mutation in four is libFuzzer's own on the compressed bytes, as
 * are all of those of inputs that do not unpack (bombs, broken streams).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "read/ringfile.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned int seed);

#define FZ_MUT_MAX (16u << 20) /* the most a mutation unpacks */
#define FZ_WINDOW 4096u	       /* the most bytes one mutation changes */

/* Unpack the n bytes at d into a malloc'd *out of *len bytes.  0, or -1 (not whole, too big). */
static int fz_unpack(enum rr_packing how, const uint8_t *d, size_t n, uint8_t **out, size_t *len)
{
	uint8_t *buf = malloc(FZ_MUT_MAX);
	size_t got = 0;
	int ok = 0;

	if (!buf)
		return -1;
	if (how == RR_PACK_GZIP) {
		z_stream z;
		int zr = Z_OK;

		memset(&z, 0, sizeof(z));
		if (inflateInit2(&z, 15 + 16) != Z_OK)
			goto fail;
		z.next_in = (uint8_t *)d;
		z.avail_in = (uInt)n;
		z.next_out = buf;
		z.avail_out = FZ_MUT_MAX;
		while (zr == Z_OK && z.avail_out)
			zr = inflate(&z, Z_NO_FLUSH);
		got = FZ_MUT_MAX - z.avail_out;
		ok = zr == Z_STREAM_END;
		inflateEnd(&z);
	} else {
		ZSTD_DStream *ds = ZSTD_createDStream();
		ZSTD_inBuffer ib = { d, n, 0 };
		ZSTD_outBuffer ob = { buf, FZ_MUT_MAX, 0 };
		size_t left = 1;

		if (!ds)
			goto fail;
		ZSTD_initDStream(ds);
		while (left && !ZSTD_isError(left) && ob.pos < ob.size) {
			size_t was_in = ib.pos, was_out = ob.pos;

			left = ZSTD_decompressStream(ds, &ob, &ib);
			if (ib.pos == was_in && ob.pos == was_out)
				break;
		}
		got = ob.pos;
		ok = !left;
		ZSTD_freeDStream(ds);
	}
	if (!ok)
		goto fail;
	*out = buf;
	*len = got;
	return 0;
fail:
	free(buf);
	return -1;
}

/* Pack the n bytes at d the way how says into out (of max bytes): its length, or 0. */
static size_t fz_pack(enum rr_packing how, const uint8_t *d, size_t n, uint8_t *out, size_t max)
{
	if (how == RR_PACK_GZIP) {
		z_stream z;
		size_t len = 0;

		memset(&z, 0, sizeof(z));
		if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			return 0;
		z.next_in = (uint8_t *)d;
		z.avail_in = (uInt)n;
		z.next_out = out;
		z.avail_out = (uInt)max;
		if (deflate(&z, Z_FINISH) == Z_STREAM_END)
			len = max - z.avail_out;
		deflateEnd(&z);
		return len;
	} else {
		size_t len = ZSTD_compress(out, max, d, n, 1);

		return ZSTD_isError(len) ? 0 : len;
	}
}

static bool fz_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned int seed)
{
	enum rr_packing how = rr_packing_of(data, size);
	uint64_t r = seed * 0x9e3779b97f4a7c15ull + 1;
	uint8_t *raw, *packed, win[FZ_WINDOW];
	size_t n, len = 0;

#define FZ_RAND() (r ^= r << 13, r ^= r >> 7, r ^= r << 17, r)
	if (how == RR_PACK_NONE || FZ_RAND() % 4 == 0 || fz_unpack(how, data, size, &raw, &n))
		return LLVMFuzzerMutate(data, size, max);
	if (n && FZ_RAND() % 16 == 0) {
		/* cut short: a copy of a file that was being written */
		n = (size_t)(FZ_RAND() % n);
	} else if (n) {
		size_t at = (size_t)(FZ_RAND() % n), w = 1 + (size_t)(FZ_RAND() % FZ_WINDOW), k;

		/*
		 * mostly a page that holds data past the header (a ring file is mostly
		 * zeros; most changes to the header fail rr_open's checks), one time in
		 * eight the header, one in eight anywhere
		 */
		if (FZ_RAND() % 8 == 0) {
			at = (size_t)(FZ_RAND() % (n < FZ_WINDOW ? n : FZ_WINDOW));
		} else if (FZ_RAND() % 7) {
			size_t pages = 0, pick;

			for (size_t pg = FZ_WINDOW; pg < n; pg += FZ_WINDOW)
				pages +=
					!fz_zero(raw + pg, pg + FZ_WINDOW < n ? FZ_WINDOW : n - pg);
			pick = pages ? (size_t)(FZ_RAND() % pages) : 0;
			for (size_t pg = FZ_WINDOW; pages && pg < n; pg += FZ_WINDOW) {
				size_t plen = pg + FZ_WINDOW < n ? FZ_WINDOW : n - pg;

				if (!fz_zero(raw + pg, plen) && !pick--) {
					at = pg + (size_t)(FZ_RAND() % plen);
					break;
				}
			}
		}
		if (w > n - at)
			w = n - at;
		memcpy(win, raw + at, w);
		k = LLVMFuzzerMutate(win, w, w);
		memcpy(raw + at, win, k);
	}
#undef FZ_RAND
	packed = malloc(max);
	if (packed)
		len = fz_pack(how, raw, n, packed, max);
	if (len)
		memcpy(data, packed, len);
	free(packed);
	free(raw);
	return len ? len : LLVMFuzzerMutate(data, size, max);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *path;
	char err[RR_ERR_MAX];
	struct rr_file f;

	if (!path && !(path = strdup(fz_path("input.ring"))))
		abort();
	if (fz_write(path, data, size))
		abort(); /* no room to write the input: not a finding of the readers */
	if (setenv(RR_UNPACK_ENV, "64m", 1))
		abort();
	fz_ring(path, NULL, NULL);
	if (rr_packing_of(data, size) == RR_PACK_NONE)
		return 0;
	if (setenv(RR_UNPACK_ENV, "4m", 1))
		abort();
	if (!rr_open_legacy(path, &f, err, sizeof(err)))
		rr_close(&f);
	return 0;
}
