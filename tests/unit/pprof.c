/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the protobuf writer of analysis/protobuf.c and the profile
 * builder of analysis/pprof.c, byte for byte: varints (0, 1, 127, 128, 300, 2^64-1),

 * tags, fields left out at 0 or written, length-delimited fields, the
 * packed example of the protobuf encoding guide (3, 270, 86942); a profile
 * keeps each string, function and location once (the same key, the same
 * id; "" is string 0), and its encoding has exactly one field per sample
 * type, sample, location, function and string; pb_gzip's output is a gzip
 * stream that inflates back to the input.
 */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "helpers.h"
#include "analysis/pprof.h"

static int same(const struct pb_buf *b, const uint8_t *want, size_t n)
{
	if (b->oom || b->len != n || memcmp(b->p, want, n)) {
		fprintf(stderr, "got %zu bytes:", b->len);
		for (size_t i = 0; i < b->len; i++)
			fprintf(stderr, " %02x", b->p[i]);
		fprintf(stderr, "\n");
		return 0;
	}
	return 1;
}

#define BYTES(...) (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ })

static void writer(void)
{
	struct pb_buf b = { 0 };
	const uint64_t packed[3] = { 3, 270, 86942 };

	pb_varint(&b, 0);
	pb_varint(&b, 1);
	pb_varint(&b, 127);
	pb_varint(&b, 128);
	pb_varint(&b, 300);
	T_CHECK(same(&b, BYTES(0x00, 0x01, 0x7f, 0x80, 0x01, 0xac, 0x02)));
	b.len = 0;
	pb_varint(&b, UINT64_MAX);
	T_CHECK(same(&b, BYTES(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)));
	b.len = 0;
	pb_tag(&b, 1, PB_LEN);
	pb_uint(&b, 2, 150, false);
	pb_uint(&b, 3, 0, false); /* left out */
	pb_uint(&b, 1, 0, true);
	pb_bytes(&b, 6, "ab", 2);
	pb_bytes(&b, 16, "", 0);
	T_CHECK(same(&b, BYTES(0x0a, 0x10, 0x96, 0x01, 0x08, 0x00, 0x32, 0x02, 'a', 'b', 0x82,
			       0x01, 0x00)));
	b.len = 0;
	pb_packed(&b, 4, packed, 3);
	pb_packed(&b, 5, packed, 0); /* nothing */
	T_CHECK(same(&b, BYTES(0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05)));
	pb_buf_free(&b);
}

/* Read a varint at *i of b (n bytes); false when it runs off the end. */
static bool rd(const uint8_t *b, size_t n, size_t *i, uint64_t *v)
{
	*v = 0;
	for (int s = 0; s < 64 && *i < n; s += 7) {
		uint8_t c = b[(*i)++];

		*v |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

static void builder(void)
{
	const struct pp_line l2[2] = {
		{ .func = "inlined", .file = "a.c", .line = 7 },
		{ .func = "outer", .file = "a.c", .line = 3 },
	};
	const struct pp_line l1[1] = { { .func = "outer", .file = "a.c", .line = 9 } };
	const struct pp_label lab = { .key = "thread", .str = "main" };
	struct pb_buf raw = { 0 }, gz = { 0 };
	struct pp_prof *p;
	uint64_t locs[2], counts[16] = { 0 }, v;
	int64_t vals[2] = { 5, 4096 };
	bool fresh;
	size_t i = 0;

	T_EQ(pp_new(&p), 0);
	if (!p)
		return;
	T_EQ(pp_string(p, ""), 0);
	T_EQ(pp_string(p, NULL), 0);
	T_EQ(pp_string(p, "x"), 1);
	T_EQ(pp_string(p, "x"), 1);
	T_EQ(pp_sample_type(p, "alloc_objects", "count"), 0);
	T_EQ(pp_sample_type(p, "alloc_space", "bytes"), 0);
	T_EQ(pp_mapping(p, 0x1000, 0x2000, 0, "/bin/x", "abcd", true), 1);
	locs[0] = (uint64_t)pp_location(p, 0x1234, 0x1233, 1, l2, 2, &fresh);
	T_EQ(locs[0], 1);
	T_CHECK(fresh);
	locs[1] = (uint64_t)pp_location(p, 0x1500, 0x14ff, 1, l1, 1, &fresh);
	T_EQ(locs[1], 2);
	T_EQ(pp_location(p, 0x1234, 0, 0, NULL, 0, &fresh), 1);
	T_CHECK(!fresh);
	T_EQ(pp_location_find(p, 0x1500), 2);
	T_EQ(pp_location_find(p, 0x9999), 0);
	T_EQ(pp_sample(p, locs, 2, vals, &lab, 1), 0);
	T_EQ(pp_sample(p, locs + 1, 1, vals, NULL, 0), 0);
	T_EQ(pp_nsamples(p), 2);
	pp_time(p, 1700000000000000000, 5);
	T_EQ(pp_encode(p, &raw), 0);

	/* Top-level fields: which ones and how many. */
	while (i < raw.len) {
		uint64_t key;

		if (!rd(raw.p, raw.len, &i, &key)) {
			T_CHECK(!"a truncated key");
			break;
		}
		if ((key >> 3) < 16)
			counts[key >> 3]++;
		if ((key & 7) == PB_LEN) {
			if (!rd(raw.p, raw.len, &i, &v) || v > raw.len - i) {
				T_CHECK(!"a length past the end");
				break;
			}
			i += v;
		} else if (!rd(raw.p, raw.len, &i, &v)) {
			T_CHECK(!"a truncated varint");
			break;
		}
	}
	T_EQ(counts[1], 2); /* sample types */
	T_EQ(counts[2], 2); /* samples */
	T_EQ(counts[3], 1); /* mappings */
	T_EQ(counts[4], 2); /* locations */
	T_EQ(counts[5], 2); /* functions: inlined and outer, in a.c */
	/* "", x, alloc_objects, count, alloc_space, bytes, /bin/x, abcd, inlined, a.c,
	 * outer, thread, main */
	T_EQ(counts[6], 13);
	T_EQ(counts[9], 1);
	T_EQ(counts[10], 1);

	T_EQ(pb_gzip(raw.p, raw.len, &gz), 0);
	T_CHECK(gz.len > 18 && gz.p[0] == 0x1f && gz.p[1] == 0x8b);
	{
		uint8_t *back = malloc(raw.len + 1);
		z_stream z = { 0 };

		T_CHECK(back && inflateInit2(&z, 15 + 16) == Z_OK);
		if (back) {
			z.next_in = gz.p;
			z.avail_in = (uInt)gz.len;
			z.next_out = back;
			z.avail_out = (uInt)raw.len + 1;
			T_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
			T_EQ(z.total_out, raw.len);
			T_CHECK(!memcmp(back, raw.p, raw.len));
			inflateEnd(&z);
		}
		free(back);
	}
	pb_buf_free(&raw);
	pb_buf_free(&gz);
	pp_free(p);
}

int main(void)
{
	writer();
	builder();
	return t_result();
}
