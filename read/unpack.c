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
 * Hostile input: the unpacked size is capped (RR_UNPACK_MAX, and the size
 * the ring header announces once the header is out), a stream that ends
 * early or does not decode is an error with the offset where it failed,
 * and the descriptor is never one the caller has to trust.
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

struct rr_unpack {
	int out;	    /* the memfd */
	uint64_t total;	    /* bytes produced */
	uint64_t cap;	    /* at most this many */
	uint8_t page[RR_PAGE];
	size_t fill;	    /* bytes in page */
	const char *path;
	char *err;
	size_t errlen;
};

static bool rr_zero(const uint8_t *p, size_t n)
{
	const uint64_t *w = (const uint64_t *)p;

	for (size_t i = 0; i < n / 8; i++)
		if (w[i])
			return false;
	for (size_t i = n & ~(size_t)7; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Write the page buffer out (unless it is all zero: a hole). */
static int rr_flush_page(struct rr_unpack *u)
{
	uint64_t at = u->total - u->fill;
	size_t done = 0;

	if (rr_zero(u->page, u->fill)) {
		u->fill = 0;
		return 0;
	}
	while (done < u->fill) {
		ssize_t n = pwrite(u->out, u->page + done, u->fill - done, (off_t)(at + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return rr_fail(u->err, u->errlen, n < 0 ? -errno : -EIO,
				       "%s: cannot hold the unpacked copy: %s", u->path,
				       strerror(n < 0 ? errno : EIO));
		done += (size_t)n;
	}
	u->fill = 0;
	return 0;
}

/*
 * The header is out: a ring file says how big it is, and no more is taken.
 * (A file that is no ring file, e.g. the original librip's raw slots, keeps
 * the global cap.)
 */
static void rr_cap_from_header(struct rr_unpack *u)
{
	struct rip_file_hdr h;

	memcpy(&h, u->page, sizeof(h));
	if (!memcmp(h.magic, RIP_MAGIC, sizeof(h.magic)) && h.file_size >= RIP_HDR_SIZE &&
	    h.file_size < u->cap)
		u->cap = h.file_size;
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
				       u->path, (unsigned long long)u->cap,
				       u->cap < RR_UNPACK_MAX ? ", the size its header gives" : "");
		memcpy(u->page + u->fill, p, k);
		u->fill += k;
		u->total += k;
		p += k;
		n -= k;
		if (u->fill == RR_PAGE) {
			if (u->total == RR_PAGE)
				rr_cap_from_header(u);
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

int rr_unpack(int fd, const char *path, int *out, char *err, size_t errlen)
{
	struct rr_unpack *u;
	uint8_t head[4], *in, *outbuf;
	enum rr_packing how;
	ssize_t n;
	int ret;

	*out = -1;
	n = pread(fd, head, sizeof(head), 0);
	if (n < 0)
		return rr_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	how = rr_packing_of(head, (size_t)n);
	if (how == RR_PACK_NONE)
		return 0;
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
	u->cap = RR_UNPACK_MAX;
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
