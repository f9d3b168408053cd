/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/protobuf.c - the protobuf writer and gzip of pprof profiles (see
 * protobuf.h).  An append that cannot grow the buffer marks it oom and
 * every later one does nothing, so a writer checks once, at the end.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include <internal/grow.h>

#include "analysis/protobuf.h"

static bool pb_reserve(struct pb_buf *b, size_t more)
{
	if (b->oom)
		return false;
	if (more > SIZE_MAX - b->len || RIP_GROW(b->p, b->cap, b->len + more, 256)) {
		b->oom = true;
		return false;
	}
	return true;
}

void pb_put(struct pb_buf *b, const void *data, size_t n)
{
	if (!n || !pb_reserve(b, n))
		return;
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

void pb_varint(struct pb_buf *b, uint64_t v)
{
	if (!pb_reserve(b, 10))
		return;
	while (v >= 0x80) {
		b->p[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->p[b->len++] = (uint8_t)v;
}

void pb_tag(struct pb_buf *b, uint32_t field, enum pb_wire w)
{
	pb_varint(b, (uint64_t)field << 3 | w);
}

void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v, bool zero_too)
{
	if (!v && !zero_too)
		return;
	pb_tag(b, field, PB_VARINT);
	pb_varint(b, v);
}

void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t n)
{
	pb_tag(b, field, PB_LEN);
	pb_varint(b, n);
	pb_put(b, data, n);
}

static size_t pb_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

void pb_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
	size_t len = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		len += pb_varint_len(v[i]);
	pb_tag(b, field, PB_LEN);
	pb_varint(b, len);
	for (size_t i = 0; i < n; i++)
		pb_varint(b, v[i]);
}

void pb_buf_free(struct pb_buf *b)
{
	free(b->p);
	*b = (struct pb_buf){ 0 };
}

int pb_gzip(const uint8_t *in, size_t n, struct pb_buf *out)
{
	z_stream z = { 0 };
	int zr;

	if (n > UINT32_MAX)
		return -EFBIG;
	/* 15 + 16: a gzip header and trailer around the deflate stream */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)n;
	do {
		uInt room;

		if (!pb_reserve(out, 1 << 16)) {
			deflateEnd(&z);
			return -ENOMEM;
		}
		room = out->cap - out->len > UINT32_MAX ? UINT32_MAX : (uInt)(out->cap - out->len);
		z.next_out = out->p + out->len;
		z.avail_out = room;
		zr = deflate(&z, Z_FINISH);
		out->len += room - z.avail_out;
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
			deflateEnd(&z);
			return -EIO;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return 0;
}
