/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/pack.h - packed blocks: many CTF packets of a trace, from any of its
 * streams, stored losslessly in a tenth of their size.  This is the format
 * and its decoder; record/packw.h is the coder.
 *
 * A trace's packets are what the writers put in their rings: fixed-size
 * fields, 8-byte addresses, 27-bit timestamps.  That is cheap to write and
 * to read but takes 20 to 30 bytes an event on disk.  A block keeps the
 * same bytes in columns, one per kind of value, each coded for what it
 * holds, then compressed with zstd:
 *
 *   - event ids, and times as the ticks since the event before (a column
 *     per event type: the gap before a free is not the gap before a malloc);
 *   - integer fields as varints, a column per type and field, signed ones
 *     zigzagged, each coded against a guess: the value that followed the
 *     last value of its name the last time (a free's "bt" follows its
 *     malloc's), and a field right after a hex field against the value it
 *     had with that hex value last (a malloc's size, the size of the block
 *     last allocated at that address);
 *   - 64-bit hex fields (addresses, handles) by the value's rank in one of
 *     two move-to-front lists of the packet's stream: a value seen an odd
 *     number of times in the block (a live block, an open handle) or an
 *     even number (freed, closed).
 *     A free names a block allocated a few allocations ago and a malloc
 *     usually returns one freed a few frees ago, so ranks are small; values
 *     not seen before are written as the difference from the last value of
 *     the same field;
 *   - strings and arrays, and the 80-byte packet headers, as they are.
 *
 * The varints of all but strings, arrays and kept packets put their first
 * byte in their column and the bytes after it in a second one, so that
 * zstd codes each kind of byte with its own table.  That and the guesses
 * are version 2; lists per stream and the guess after a hex field are
 * version 3 (PK_VERSION).  Blocks of version 2 (one pair of lists for all
 * the streams of a block, no guess after a hex field) and of version 1
 * (that, and a column per field name, no guess, varints whole) are read
 * too.
 *
 * A packet the coder does not understand (an event id it has no type for,
 * bytes past the last event) is kept whole, so a block holds exactly the
 * bytes it was given whatever they are.  Every block is decoded on its own:
 * nothing is carried from one block to the next.
 *
 * Decoding needs the type table the packets were written with (a type
 * table only grows, so the trace's final one does).  pk_decode treats the
 * block as hostile: a checksum covers all of it, and every length, count
 * and rank is checked besides; its output is at most the size the block
 * declares, itself bounded.
 */
#ifndef RIP_READ_PACK_H
#define RIP_READ_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "read/evread.h"

#define PK_MAGIC "RIPK"	       /* its 4 characters, no NUL stored */
#define PK_VERSION 3	       /* the version coded; 1 and 2 are read too */
#define PK_RAW_MAX (16u << 20) /* packet bytes one block may hold */

/* A block on disk: this header, ncols struct pk_col, then the columns' bytes. */
struct pk_hdr {
	char magic[4];
	uint32_t version;
	uint32_t npackets;
	uint32_t ncols;
	uint64_t raw;	/* bytes of the packets it holds, back to back */
	uint64_t size;	/* bytes of the block, this header included */
	uint64_t events;
	uint64_t ts_min, ts_max; /* the packets' timestamp_begin and _end extremes */
	uint32_t crc;	/* CRC-32 (zlib's) of the block with this field 0 */
	uint32_t pad;
};

struct pk_col {
	uint32_t key;	/* what it holds (read/pack.c) */
	uint32_t flags; /* PK_COL_ZSTD: compressed */
	uint32_t raw;	/* bytes decoded */
	uint32_t size;	/* bytes stored */
};

#define PK_COL_ZSTD 0x1u

/* A block decoded: its packets back to back, in the order they were added. */
struct pk_block {
	uint8_t *data;
	size_t len;
	uint32_t npackets;
	uint64_t events;
	size_t *off; /* packet i starts at data + off[i]; its length is in its header */
	size_t cap, offcap; /* what data and off hold room for */
	/*
	 * Packets decoded so far while pk_decode runs, stored with release
	 * once each is written whole (and off[] up to it): another thread may
	 * read packet i < done - 1 (its end is off[i + 1]) after an acquire
	 * load, before the block is done.  A block that fails later fails
	 * whole all the same: its packets before the failure were checked.
	 */
	uint32_t done;
};

/*
 * Check the header and column table of a block of len bytes (at least
 * sizeof(struct pk_hdr)): 0 and *hdr, or -EBADMSG with the reason in err.
 */
int pk_peek(const uint8_t *blk, size_t len, struct pk_hdr *hdr, char *err, size_t errlen);

/*
 * A decoder's memory, kept from block to block (a reader decodes many: the
 * columns' buffers and the lists are made once).  0 or -ENOMEM.
 */
struct pk_dec;
int pk_dec_new(struct pk_dec **out);
void pk_dec_free(struct pk_dec *d);

/*
 * Bytes a decoded block's data needs past its raw length (pk_hdr.raw): the
 * decoder stores an event's fixed part before it checks the room left.  A
 * buffer given with this much room is used as it is; a smaller one is
 * replaced by realloc, which copies it.
 */
#define PK_DEC_SLACK 128u

/*
 * Decode a block with d (NULL: a decoder made for this block only) into
 * out, which is zeroed or holds a block decoded before (its memory is used
 * again).  0, or -EBADMSG / -ENOMEM with the reason in err (out then holds
 * nothing, but its memory).
 */
int pk_decode(struct pk_dec *d, const struct ev_types *types, const uint8_t *blk, size_t len,
	      struct pk_block *out, char *err, size_t errlen);
void pk_block_free(struct pk_block *b);

#endif /* RIP_READ_PACK_H */
