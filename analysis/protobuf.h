/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/protobuf.h - the protobuf writer pprof profiles are written with
 * (pprof.h), and the gzip around them: varints, tags, length-delimited
 * fields and packed repeated integers into a growing byte buffer; a
 * message inside a message is written into a buffer of its own and
 * appended as bytes.  No libprotobuf: profile.proto needs nothing more.
 * The buffer is a plain growing byte buffer too (rip push writes its
 * request into one).
 */
#ifndef RIP_ANALYSIS_PROTOBUF_H
#define RIP_ANALYSIS_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growing byte buffer.  oom: an append failed (the buffer is then unusable). */
struct pb_buf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

enum pb_wire { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

void pb_put(struct pb_buf *b, const void *data, size_t n);
void pb_varint(struct pb_buf *b, uint64_t v);
void pb_tag(struct pb_buf *b, uint32_t field, enum pb_wire w);
/* A varint field; 0 is written too (zero_too) or left out as proto3 does. */
void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v, bool zero_too);
/* A length-delimited field: bytes, a string, or an encoded message. */
void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t n);
/* A packed repeated integer field (nothing when n is 0). */
void pb_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n);
void pb_buf_free(struct pb_buf *b);

/* Gzip n bytes of in into out (appended).  0 or -ENOMEM / -EIO. */
int pb_gzip(const uint8_t *in, size_t n, struct pb_buf *out);

#endif /* RIP_ANALYSIS_PROTOBUF_H */
