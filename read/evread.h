/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/evread.h - reading event rings: the type table, consistent copies
 * of packets (live or post-mortem, open packets closed), decoding events,
 * and the streaming consumer.  The same decoder reads packets from a ring
 * file and from a recorded trace's stream files: they are the same bytes.
 */
#ifndef RIP_READ_EVREAD_H
#define RIP_READ_EVREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rip/abi.h>

#include "read/ringfile.h"

#define EV_MAX_TYPES 1024u

struct ev_type {
	bool valid;
	uint32_t id, category, nfields;
	char name[RIP_EVTYPE_NAME_MAX];
	struct rip_evfield fields[RIP_EVENT_MAX_FIELDS];
	uint32_t flags;	  /* RIP_EVTYPE_*: a resource kind's ("kind:NAME") */
	char desc[RIP_EVTYPE_DESC_MAX]; /* a kind's description, NUL-terminated */
	uint32_t fixed;	  /* bytes of the fixed-size fields */
	bool string;	  /* the last field is a string */
	bool array;	  /* the last field is an array of u64 */
};

struct ev_types {
	struct ev_type t[EV_MAX_TYPES]; /* indexed by id */
	uint32_t count;
	char cats[RIP_CATEGORIES][RIP_CATEGORY_NAME_MAX];
};

/* A packet copied out of a ring (or read from a stream file), validated. */
struct ev_packet {
	uint32_t ring;
	struct rip_packet hdr; /* as it should be written: an open packet is closed */
	uint8_t *data;	       /* content_size / 8 bytes, starting with the header */
	size_t len;
	bool was_open;	       /* it was being written (or the writer died in it) */
};

struct ev_event {
	uint64_t ts;	       /* ticks */
	const struct ev_type *type;
	uint64_t v[RIP_EVENT_MAX_FIELDS]; /* integers, sign-extended for signed fields */
	const char *str;       /* the string field, NUL-terminated inside the packet */
	const uint8_t *arr;    /* the array field: narr u64, little-endian, unaligned */
	uint32_t narr;
	size_t offset;	       /* byte offset in the packet */
};

/*
 * The event header at data + off (len bytes in all): its type id in *id
 * and its time in *ts, which holds the time of the event before (a compact
 * header carries the low RIP_EVENT_TS_BITS only; a smaller low part than
 * before means the clock wrapped them).  The header's size (4 or 13), 0
 * when even a compact header is cut, -1 when an extended one is.
 */
static inline int ev_header(const uint8_t *data, size_t len, size_t off, uint32_t *id,
			    uint64_t *ts)
{
	const uint64_t mask = (1ull << RIP_EVENT_TS_BITS) - 1;
	uint32_t h;
	uint64_t low;

	if (len - off < 4)
		return 0;
	__builtin_memcpy(&h, data + off, 4); /* little-endian, as the writer (checked at open) */
	if ((h & 31) == RIP_EVENT_ID_EXTENDED) {
		if (len - off < 13)
			return -1;
		__builtin_memcpy(id, data + off + 1, 4);
		__builtin_memcpy(ts, data + off + 5, 8);
		return 13;
	}
	*id = h & 31;
	low = h >> 5;
	if (low < (*ts & mask))
		*ts += 1ull << RIP_EVENT_TS_BITS;
	*ts = (*ts & ~mask) | low;
	return 4;
}

/* Copy the type table and category names out of a ring file. */
int ev_read_types(struct rr_file *f, struct ev_types *out, char *err, size_t errlen);
/*
 * The same into out that is zeroed or holds what was read from f before:
 * only the types new since are added (a writer never removes one), and
 * the 400 KiB of out are not cleared again.
 */
int ev_read_types_more(struct rr_file *f, struct ev_types *out, char *err, size_t errlen);
/* Validate one type entry (from a file or a trace index) into out. */
int ev_type_load(const struct rip_evtype *e, struct ev_type *out);

/*
 * Copy every valid packet of ring in sequence order (what a flight recorder
 * holds).  The open packet is closed in the copy: its timestamp_end and
 * events come from decoding it.  Packets torn by a live writer are dropped
 * and counted in *torn.  Free with ev_packets_free.
 */
int ev_copy_ring(struct rr_file *f, const struct ev_types *types, uint32_t ring,
		 struct ev_packet **out, size_t *n, size_t *torn, char *err, size_t errlen);
void ev_packets_free(struct ev_packet *v, size_t n);

/*
 * Decode the events of a packet: cb for each, in order, with ts rebuilt from
 * the compact headers.  Returns the number of events, or -EBADMSG with a
 * reason in err when the bytes are not events of known types.
 */
typedef int (*ev_cb)(const struct ev_event *e, void *arg);
/*
 * The same checks as ev_decode without decoding the fields: the number of
 * events and the last one's time in *last_ts, or -1 when ev_decode would
 * refuse the packet (it says why).  The recorder's path: every packet it
 * takes is walked once.
 */
int ev_walk(const struct ev_types *types, const uint8_t *data, size_t len, uint64_t ts_begin,
	    uint64_t *last_ts);
/*
 * ev_walk, with the time of the event at byte at in *at_ts (at is where
 * an earlier walk stopped: a packet sent in pieces), or the last event's
 * when at is the packet's end or on no event's start.  coro, unless NULL:
 * the coroutine running at the packet's begin (its header's), moved by
 * the coroutine switches before at: the one a piece from at begins in.
 */
int ev_walk_at(const struct ev_types *types, const uint8_t *data, size_t len, uint64_t ts_begin,
	       size_t at, uint64_t *at_ts, uint64_t *last_ts, uint32_t *coro);
int ev_decode(const struct ev_types *types, const uint8_t *data, size_t len,
	      uint64_t ts_begin, ev_cb cb, void *arg, char *err, size_t errlen);

/* Check a packet header read from anywhere: sizes and magic.  0 or -EBADMSG. */
int ev_check_packet(const struct rip_packet *p, size_t avail, char *err, size_t errlen);

/*
 * Streaming: map the ring file writable (rr_map_writable) and name us the
 * consumer of every ring (consumer_pid), then take every closed packet past ring->consumed (overwritten ones are counted
 * in *lost_packets) and advance consumed.  With final, the open packet is
 * taken too, closed in the copy.  cb gets each packet in order.
 */
typedef int (*ev_packet_cb)(const struct ev_packet *p, void *arg);
int ev_consumer_open(struct rr_file *f, char *err, size_t errlen);
/* Wake the writer of ring w if it sleeps until consumed moves (after moving it). */
void ev_ring_wake(struct rip_evring *w);
int ev_consume(struct rr_file *f, const struct ev_types *types, uint32_t ring, bool final,
	       ev_packet_cb cb, void *arg, uint64_t *lost_packets, char *err, size_t errlen);

/*
 * For a live reader that cannot wait for a packet to close (rec_flush): a
 * copy of ring's open packet, closed in the copy, if every packet before
 * it was consumed.  1 with *out filled (free out->data), 0 when there is
 * none (no event since the last packet closed, or the open packet is
 * still packet have_seq with have_len bytes: what the caller has), -EAGAIN
 * while closed packets wait to be consumed first, other -errno on error.  Bytes below the open packet's committed
 * content never change, so what is copied now is a prefix of the packet
 * as it will close.
 */
int ev_peek_open(struct rr_file *f, const struct ev_types *types, uint32_t ring,
		 uint64_t have_seq, size_t have_len, struct ev_packet *out, char *err,
		 size_t errlen);
/*
 * Without a copy: the sequence number of ring's open packet and the bytes
 * committed in it so far (header included) in *seq and *len, as the
 * writer published them (they may move on at once).  0, or -EIO when the
 * file shrank, -EINVAL for no such ring.
 */
int ev_open_size(struct rr_file *f, uint32_t ring, uint64_t *seq, size_t *len);

#endif /* RIP_READ_EVREAD_H */
