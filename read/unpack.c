// SPDX-License-Identifier: Apache-2.0
/*
 * read/unpack.c - ring files copied off a host compressed (gzip or zstd)
 * are read in place of the plain file.
 *
 * The compressed copy is recognised by its first bytes, not its name, and
 * unpacked into an anonymous memory file (memfd) that the readers then map
 * exactly as they map a ring file on disk: every check of ringfile.c runs
 * on the unpacked bytes.  A ring file is mostly holes (slots and rings never
 * used), so pages of zeros are skipped and left as holes in the memfd: the
 * memory used is that of the data the file really holds.
 *
 * Hostile input: a few hundred kilobytes of zstd (a few megabytes of gzip)
 * unpack to gigabytes, and rip ls opens every ring file of a directory that
 * others may write.  The stream is unpacked a chunk at a time and stops at
 * the first of these bounds, with a message that names the file:
 *
 *  - The header.  As soon as its first 4 KiB are out, a ring file's header
 *    gets rr_open's checks (rr_check_hdr, its own file_size taken as the
 *    file's size), and its file_size must be where its last area ends
 *    (rr_hdr_extent, what the writer gives it): a header that cannot be
 *    read, or that claims more than its layout holds, stops it there.
 *    Then no more than file_size bytes are taken.
 *  - The ratio.  The memory a copy costs is its pages of data (those not
 *    all zero); zeros cost only the time to unpack them (zstd's run at
 *    memset speed), so only pages of data count.  Real ring files keep 2
 *    to 120 times their compressed size in pages of data (the most: 9,000
 *    threads that each wrote one event, zstd -19: 121, gzip -9: 50); a run
 *    of one byte keeps 1,030 times (gzip's default level) to 30,000 (zstd).
 *    So past the first RR_UNPACK_FLOOR bytes of data, a copy may keep at
 *    most RR_UNPACK_RATIO bytes of data per compressed byte the decoder has
 *    read: such bombs stop at the floor, and whatever the compressor's
 *    settings (gzip -1 keeps 230 times), a copy never costs more than that
 *    many times the bytes it takes on disk.  A real file that went past it
 *    is unpacked by hand (gzip -d, zstd -d) and read as the plain file.
 *  - The ceiling.  At most RIP_UNPACK_MAX bytes in all (RR_UNPACK_MAX,
 *    4 GiB, ten times a default ring file, by default), holes included:
 *    it bounds the time a header with a huge layout makes us spend
 *    unpacking zeros (gzip's run at about 300 MB/s).
 *
 * A stream that ends early or does not decode is an error with the offset
 * where it failed, and the descriptor is never one the caller has to trust.
 * zstd frames may ask for a window of up to 2^27 bytes (zstd's default
 * limit), the decoder's memory on top of the bounds above.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <rip/abi.h>

#include "read/ringfile.h"

#define RR_UNPACK_CHUNK (256u * 1024)
#define RR_PAGE 4096u

_Static_assert(sizeof(struct rip_file_hdr) == RR_PAGE, "the header is the first page");

struct rr_unpack {
	int out;	    /* the memfd */
	uint64_t total;	    /* bytes produced */
	uint64_t cap;	    /* at most this many */
	const char *cap_is; /* what cap is, for the message */
	uint64_t kept;	    /* bytes written out: the pages of data, not holes */
	uint64_t in;	    /* compressed bytes the decoder has read */
	uint64_t raw_max;   /* 0: a ring file; else a raw file of at most this many bytes */
	uint8_t page[RR_PAGE];
	size_t fill;	    /* bytes in page */
	const char *path;
	char *err;
	size_t errlen;
};

/* Are the n bytes at p all zero?  (Whole pages 64 bytes at a time: zeros are most of a file.) */
static bool rr_zero(const uint8_t *p, size_t n)
{
	size_t i = 0;

	for (; i + 64 <= n; i += 64) {
		uint64_t w[8];

		memcpy(w, p + i, sizeof(w));
		if (w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7])
			return false;
	}
	for (; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Write the n bytes at p, which end at u->total, out (unless they are all zero: a hole). */
static int rr_write(struct rr_unpack *u, const uint8_t *p, size_t n)
{
	uint64_t at = u->total - n;
	size_t done = 0;

	if (rr_zero(p, n))
		return 0;
	u->kept += n;
	if (u->kept > RR_UNPACK_FLOOR && u->kept / RR_UNPACK_RATIO > u->in)
		return rr_fail(u->err, u->errlen, -EFBIG,
			       "%s: refused: the compressed copy unpacks to over %llu MiB of data "
			       "from %llu KiB, more than %u to 1: a decompression bomb, not a ring "
			       "file (to read it anyway, unpack it with gzip -d or zstd -d)",
			       u->path, (unsigned long long)(u->kept >> 20),
			       (unsigned long long)((u->in + 1023) >> 10), RR_UNPACK_RATIO);
	while (done < n) {
		ssize_t k = pwrite(u->out, p + done, n - done, (off_t)(at + done));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return rr_fail(u->err, u->errlen, k < 0 ? -errno : -EIO,
				       "%s: cannot hold the unpacked copy: %s", u->path,
				       strerror(k < 0 ? errno : EIO));
		done += (size_t)k;
	}
	return 0;
}

/* Write the page buffer out. */
static int rr_flush_page(struct rr_unpack *u)
{
	size_t n = u->fill;

	u->fill = 0;
	return rr_write(u, u->page, n);
}

/*
 * The first page is out: a ring file's header must be one rr_open takes,
 * of a file_size its layout gives, and no more than file_size is taken.
 */
static int rr_check_head(struct rr_unpack *u)
{
	char why[RR_ERR_MAX];
	struct rip_file_hdr h;
	uint64_t end;
	int ret;

	if (u->raw_max)
		return 0;
	memcpy(&h, u->page, sizeof(h));
	ret = rr_check_hdr(&h, h.file_size, why, sizeof(why));
	if (ret)
		return rr_fail(u->err, u->errlen, ret, "%s: %s", u->path, why);
	end = rr_hdr_extent(&h);
	if (h.file_size > ((end + RR_PAGE - 1) & ~(uint64_t)(RR_PAGE - 1)))
		return rr_fail(u->err, u->errlen, -EBADMSG,
			       "%s: corrupt header: it says %llu bytes, but the areas it lays out "
			       "end at %llu",
			       u->path, (unsigned long long)h.file_size, (unsigned long long)end);
	if (h.file_size > u->cap)
		return rr_fail(u->err, u->errlen, -EFBIG,
			       "%s: a ring file of %llu bytes, more than %s allows (%llu): set it "
			       "higher to read this one",
			       u->path, (unsigned long long)h.file_size, RR_UNPACK_ENV,
			       (unsigned long long)u->cap);
	u->cap = h.file_size;
	u->cap_is = ", the size its header gives";
	return 0;
}

static int rr_put(struct rr_unpack *u, const uint8_t *p, size_t n)
{
	while (n) {
		size_t k = RR_PAGE - u->fill;
		int ret;

		if (k > n)
			k = n;
		if (u->total + k > u->cap)
			return rr_fail(u->err, u->errlen, -EFBIG,
				       "%s: the compressed copy unpacks to more than %llu bytes%s",
				       u->path, (unsigned long long)u->cap, u->cap_is);
		if (k == RR_PAGE && u->total) {
			/* a whole page past the header: straight from the decoder's buffer */
			u->total += k;
			ret = rr_write(u, p, k);
			if (ret)
				return ret;
			p += k;
			n -= k;
			continue;
		}
		memcpy(u->page + u->fill, p, k);
		u->fill += k;
		u->total += k;
		p += k;
		n -= k;
		if (u->fill == RR_PAGE) {
			if (u->total == RR_PAGE) {
				ret = rr_check_head(u);
				if (ret)
					return ret;
			}
			ret = rr_flush_page(u);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Read up to len bytes of the compressed file; 0 at its end. */
static ssize_t rr_in(struct rr_unpack *u, int fd, uint8_t *buf, size_t len)
{
	for (;;) {
		ssize_t n = read(fd, buf, len);

		if (n >= 0)
			return n;
		if (errno != EINTR)
			return rr_fail(u->err, u->errlen, -errno, "%s: %s", u->path,
				       strerror(errno));
	}
}

static int rr_gunzip(struct rr_unpack *u, int fd, uint8_t *in, uint8_t *out)
{
	z_stream z;
	uint64_t pos = 0; /* compressed bytes consumed */
	bool ended = false;
	int ret = 0, zr;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return rr_fail(u->err, u->errlen, -ENOMEM, "%s: cannot start zlib", u->path);
	for (;;) {
		ssize_t n = rr_in(u, fd, in, RR_UNPACK_CHUNK);

		if (n < 0) {
			ret = (int)n;
			goto out_end;
		}
		if (n == 0)
			break;
		z.next_in = in;
		z.avail_in = (uInt)n;
		while (z.avail_in) {
			if (ended) {
				/* gzip files may hold several members, one after the other */
				if (inflateReset(&z) != Z_OK) {
					ret = rr_fail(u->err, u->errlen, -EBADMSG,
						      "%s: corrupt gzip data", u->path);
					goto out_end;
				}
				ended = false;
			}
			z.next_out = out;
			z.avail_out = RR_UNPACK_CHUNK;
			zr = inflate(&z, Z_NO_FLUSH);
			if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
				ret = rr_fail(u->err, u->errlen, -EBADMSG,
					      "%s: corrupt gzip data near compressed byte %llu%s%s",
					      u->path,
					      (unsigned long long)(pos + (uint64_t)n - z.avail_in),
					      z.msg ? ": " : "", z.msg ? z.msg : "");
				goto out_end;
			}
			u->in = pos + (uint64_t)n - z.avail_in;
			ret = rr_put(u, out, RR_UNPACK_CHUNK - z.avail_out);
			if (ret)
				goto out_end;
			if (zr == Z_STREAM_END)
				ended = true;
			else if (zr == Z_BUF_ERROR && z.avail_out)
				break;
		}
		pos += (uint64_t)n;
	}
	if (!ended)
		ret = rr_fail(u->err, u->errlen, -EBADMSG,
			      "%s: truncated gzip data: the compressed copy ends early (%llu bytes "
			      "unpacked)",
			      u->path, (unsigned long long)u->total);
out_end:
	inflateEnd(&z);
	return ret;
}

static int rr_unzstd(struct rr_unpack *u, int fd, uint8_t *in, uint8_t *out)
{
	ZSTD_DStream *d = ZSTD_createDStream();
	uint64_t pos = 0;
	size_t left = 1; /* 0: the last frame ended */
	int ret = 0;

	if (!d)
		return rr_fail(u->err, u->errlen, -ENOMEM, "%s: cannot start zstd", u->path);
	ZSTD_initDStream(d);
	/* a window up to 2^27 (zstd's default limit): a hostile frame cannot ask for more */
	ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, 27);
	for (;;) {
		ssize_t n = rr_in(u, fd, in, RR_UNPACK_CHUNK);
		ZSTD_inBuffer ib = { in, 0, 0 };

		if (n < 0) {
			ret = (int)n;
			goto out_free;
		}
		if (n == 0)
			break;
		ib.size = (size_t)n;
		while (ib.pos < ib.size) {
			ZSTD_outBuffer ob = { out, RR_UNPACK_CHUNK, 0 };

			left = ZSTD_decompressStream(d, &ob, &ib);
			if (ZSTD_isError(left)) {
				ret = rr_fail(u->err, u->errlen, -EBADMSG,
					      "%s: corrupt zstd data near compressed byte %llu: %s",
					      u->path, (unsigned long long)(pos + ib.pos),
					      ZSTD_getErrorName(left));
				goto out_free;
			}
			u->in = pos + ib.pos;
			ret = rr_put(u, out, ob.pos);
			if (ret)
				goto out_free;
		}
		pos += (uint64_t)n;
	}
	/* drain what the decoder still holds */
	for (;;) {
		ZSTD_inBuffer ib = { in, 0, 0 };
		ZSTD_outBuffer ob = { out, RR_UNPACK_CHUNK, 0 };

		if (!left)
			break;
		left = ZSTD_decompressStream(d, &ob, &ib);
		if (ZSTD_isError(left) || !ob.pos)
			break;
		ret = rr_put(u, out, ob.pos);
		if (ret)
			goto out_free;
	}
	if (left)
		ret = rr_fail(u->err, u->errlen, -EBADMSG,
			      "%s: truncated zstd data: the compressed copy ends early (%llu bytes "
			      "unpacked)",
			      u->path, (unsigned long long)u->total);
out_free:
	ZSTD_freeDStream(d);
	return ret;
}

enum rr_packing rr_packing_of(const uint8_t *head, size_t n)
{
	static const uint8_t gz[2] = { 0x1f, 0x8b };
	static const uint8_t zst[4] = { 0x28, 0xb5, 0x2f, 0xfd };

	if (n >= sizeof(zst) && !memcmp(head, zst, sizeof(zst)))
		return RR_PACK_ZSTD;
	if (n >= sizeof(gz) && !memcmp(head, gz, sizeof(gz)))
		return RR_PACK_GZIP;
	return RR_PACK_NONE;
}

/* RIP_UNPACK_MAX: a size with an optional k, m, g or t, at least 1; else RR_UNPACK_MAX. */
static int rr_unpack_max(uint64_t *max, char *err, size_t errlen)
{
	const char *s = getenv(RR_UNPACK_ENV);
	unsigned shift = 0;
	uint64_t v = 0;

	*max = RR_UNPACK_MAX;
	if (!s || !*s)
		return 0;
	for (const char *p = s;; p++) {
		if (*p >= '0' && *p <= '9') {
			if (v > (UINT64_MAX - 9) / 10)
				goto bad;
			v = v * 10 + (uint64_t)(*p - '0');
			continue;
		}
		if (p == s)
			goto bad;
		if (*p && strchr("kK", *p))
			shift = 10;
		else if (*p && strchr("mM", *p))
			shift = 20;
		else if (*p && strchr("gG", *p))
			shift = 30;
		else if (*p && strchr("tT", *p))
			shift = 40;
		else if (*p)
			goto bad;
		if (*p && p[1])
			goto bad;
		break;
	}
	if (!v || v > UINT64_MAX >> shift)
		goto bad;
	*max = v << shift;
	return 0;
bad:
	return rr_fail(err, errlen, -EINVAL,
		       "%s=%s: not a size (bytes, with an optional k, m, g or t)", RR_UNPACK_ENV,
		       s);
}

int rr_unpack(int fd, const char *path, uint64_t raw_max, int *out, char *err, size_t errlen)
{
	struct rr_unpack *u;
	uint8_t head[4], *in, *outbuf;
	enum rr_packing how;
	uint64_t max;
	ssize_t n;
	int ret;

	*out = -1;
	n = pread(fd, head, sizeof(head), 0);
	if (n < 0)
		return rr_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	how = rr_packing_of(head, (size_t)n);
	if (how == RR_PACK_NONE)
		return 0;
	ret = rr_unpack_max(&max, err, errlen);
	if (ret)
		return ret;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return rr_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	u = calloc(1, sizeof(*u));
	in = malloc(RR_UNPACK_CHUNK);
	outbuf = malloc(RR_UNPACK_CHUNK);
	if (!u || !in || !outbuf) {
		ret = rr_fail(err, errlen, -ENOMEM, "%s: out of memory", path);
		goto out_free;
	}
	u->out = memfd_create("rip-unpacked", MFD_CLOEXEC);
	if (u->out < 0) {
		ret = rr_fail(err, errlen, -errno, "%s: cannot make a memory file: %s", path,
			      strerror(errno));
		goto out_free;
	}
	u->cap = max;
	u->cap_is = " (" RR_UNPACK_ENV ": set it higher to read this file)";
	if (raw_max && raw_max < max) {
		u->cap = raw_max;
		u->cap_is = ", the most a raw librip file holds";
	}
	u->raw_max = raw_max;
	u->path = path;
	u->err = err;
	u->errlen = errlen;
	ret = how == RR_PACK_GZIP ? rr_gunzip(u, fd, in, outbuf) : rr_unzstd(u, fd, in, outbuf);
	if (!ret)
		ret = rr_flush_page(u);
	if (!ret && ftruncate(u->out, (off_t)u->total))
		ret = rr_fail(err, errlen, -errno, "%s: cannot size the unpacked copy: %s", path,
			      strerror(errno));
	if (ret) {
		close(u->out);
		goto out_free;
	}
	*out = u->out;
out_free:
	free(outbuf);
	free(in);
	free(u);
	return ret;
}
