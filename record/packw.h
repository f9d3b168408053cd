/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/packw.h - the coder of packed blocks (read/pack.h): add packets,
 * take a block.
 *
 *	pk_enc_new(&e, types, level);
 *	pk_enc_add(e, packet, len);	     ... until pk_enc_raw(e) is enough
 *	pk_enc_take(e, &block, &len, err, errlen);
 *	pk_enc_free(e);
 */
#ifndef RIP_RECORD_PACKW_H
#define RIP_RECORD_PACKW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/pack.h"

struct pk_enc;

/*
 * A coder for types (kept by reference: it may grow between packets, as a
 * recorder's copy does), compressing at zstd level (1 to 19).  0 or -errno.
 */
int pk_enc_new(struct pk_enc **out, const struct ev_types *types, int level);
void pk_enc_free(struct pk_enc *e);

/*
 * Add one packet: its content (header and events, content_size / 8 bytes).
 * -E2BIG when the block would pass PK_RAW_MAX: take the block first.
 */
int pk_enc_add(struct pk_enc *e, const uint8_t *pkt, size_t len);
/*
 * The same, the packet's header taken from hdr: the first PK_HDR bytes at
 * pkt are not read (a recorder's copy of the packet keeps the ring's
 * header there, and the closed one is written).  -EINVAL when len is less.
 */
int pk_enc_add_hdr(struct pk_enc *e, const struct rip_packet *hdr, const uint8_t *pkt, size_t len);

/*
 * Definitions, as a packet's events are coded: fn(arg, type id, payload,
 * bytes) for each event of rip:bt or rip:fn (pk_is_def) in a packet coded
 * (one stored raw, not valid, is not looked at).  Set before the first
 * packet is added; a non-zero return fails the packet (the block is lost).
 */
typedef int pk_def_fn(void *arg, uint32_t type, const uint8_t *payload, size_t len);
void pk_enc_on_def(struct pk_enc *e, pk_def_fn *fn, void *arg);
/* Is t a definition: rip:bt {U32 id, HEX64_ARRAY frames} or rip:fn {U32 id, HEX64 addr}. */
bool pk_is_def(const struct ev_type *t);

/* Bytes and packets added since the last block was taken. */
size_t pk_enc_raw(const struct pk_enc *e);
uint32_t pk_enc_packets(const struct pk_enc *e);

/*
 * The block of what was added since the last one, in *out (the coder's
 * memory, valid until its next call), and start a new one.  0 or -errno
 * (-ENODATA: nothing was added).
 */
int pk_enc_take(struct pk_enc *e, const uint8_t **out, size_t *len, char *err, size_t errlen);

#endif /* RIP_RECORD_PACKW_H */
