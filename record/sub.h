/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/sub.h - several recorders on one process: the consumer of a ring
 * file (rip run, or the first rip record) stays the only one that takes
 * packets out of the rings; a second rip record subscribes to it and gets
 * a copy of every packet from the moment it subscribed, which it writes
 * with a trace writer of its own.
 *
 * The consumer listens on a unix socket named after the ring file (its
 * device and inode) and itself (its pid) in a directory of the user's own, mode 0700
 * (/run/user/UID when it is one, else /tmp/rip-rec-UID, created, its owner
 * and mode checked), and takes only peers of its own uid (SO_PEERCRED); a
 * subscriber checks the socket's owner and that the peer is the pid the
 * ring file names as its consumer.  The conversation, in frames (struct
 * rec_sub_frame, then len bytes):
 *
 *	subscriber		consumer
 *	HELLO		->
 *			<-	WELCOME		 the cut: later events are its
 *			<-	PACKET ...	 the definitions (stacks, functions) the
 *					 consumer's trace kept, in packets of the
 *					 trace writer's stream of copies, timed
 *					 before the start; later, those it meets
 *					 after (record/tracew.h, opts.defs)
 *			<-	PACKET ...	 every packet taken, cut to after the start
 *			<-	MISSED		 packets dropped for it (it fell behind)
 *	BYE		->
 *			<-	PACKET ...	 what the open packets hold beyond what went
 *			<-	END		 why it ends: BYE, the process exited, the
 *					 consumer stopped
 *
 * A consumer that stops while the process runs hands the rings over to
 * its oldest subscriber: after the last packets it sends TAKEOVER (where
 * it stopped in each ring) before END, and names the subscriber the
 * rings' consumer in the file, so that writers in block mode go on
 * waiting, for it now.  The subscriber becomes the consumer (its own
 * socket for the next subscribers included) and goes on from exactly
 * there: its trace has no gap.  The other subscribers end, and say so.
 * A consumer that dies (SIGKILL) says nothing: its oldest subscriber sees the
 * connection end, finds it gone, and takes over all the same, from where
 * what it was sent ends in each ring (the WELCOME's cut, moved on by each
 * PACKET): what the dead one took but never sent is read again from the
 * rings while they still hold it, and counted lost when they do not.
 *
 * A subscriber that reads too slowly never slows the consumer (and so the
 * program's writers in block mode): what it has not read is queued, up to
 * REC_SUB_QUEUE_MAX bytes, and packets beyond are dropped for it alone and
 * counted (MISSED), into its packets' events_discarded and its summary.
 *
 * record/sink-sub.c is the consumer's side (a sink per subscriber),
 * record/subscribe.c the subscriber's.
 */
#ifndef RIP_RECORD_SUB_H
#define RIP_RECORD_SUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rip/abi.h>

#include "read/ringfile.h"

struct rec;

#define REC_SUB_MAGIC 0x53504952u /* "RIPS", little-endian */
#define REC_SUB_VERSION 2u	  /* 2: the definitions kept are sent (stream store.defs_stream) */
#define REC_SUB_QUEUE_MAX (64u << 20) /* bytes queued for one subscriber */
#define REC_SUB_FRAME_MAX (16u << 20) /* a frame's len, at most */

enum rec_sub_kind {
	REC_SUB_HELLO = 1, /* u32 version */
	REC_SUB_WELCOME,   /* struct rec_sub_welcome, then struct rec_cut per ring in use */
	REC_SUB_PACKET,	   /* struct rec_sub_pkt, then the packet's events */
	REC_SUB_MISSED,	   /* struct rec_sub_missed */
	REC_SUB_BYE,	   /* nothing */
	REC_SUB_END,	   /* struct rec_sub_end */
	REC_SUB_TAKEOVER,  /* struct rec_cut per ring in use: where the consumer stopped */
};

/* Why the subscription ended (struct rec_sub_end, and the subscriber's own). */
enum rec_sub_why {
	REC_SUB_ON = 0,	   /* it has not */
	REC_SUB_END_BYE,   /* the subscriber asked */
	REC_SUB_END_EXIT,  /* the process exited: the consumer took everything */
	REC_SUB_END_STOP,  /* the consumer stopped while the process runs */
	REC_SUB_END_LOST,  /* the connection broke without an END */
	REC_SUB_END_TAKEN, /* (the subscriber's own) it took over as the consumer */
};

struct rec_sub_frame {
	uint32_t magic;
	uint32_t kind; /* enum rec_sub_kind */
	uint32_t len;  /* bytes after this */
	uint32_t pad;
};

struct rec_sub_welcome {
	uint32_t pid; /* the consumer's */
	uint32_t pad;
	uint64_t ticks; /* the start: events at and after it are the subscriber's */
};

struct rec_sub_pkt {
	uint32_t stream;
	uint32_t from_ring; /* 1: the body is bytes [off, ...) of ring packet seq */
	uint64_t seq;
	uint64_t off;
	uint64_t events; /* of that packet before off */
	struct rip_packet hdr;
	/* the events: len - sizeof(struct rec_sub_pkt) bytes */
};

struct rec_sub_missed {
	uint32_t stream;
	uint32_t packets;
	uint64_t events;
};

struct rec_sub_end {
	uint32_t why; /* enum rec_sub_why */
	uint32_t pad;
	uint64_t missed_packets; /* dropped for this subscriber in all */
	uint64_t missed_events;
};

/*
 * The socket of ring file f's consumer, pid consumer, into buf: with make,
 * its directory is created if missing, and the sockets in it of consumers
 * that died (SIGKILL) are removed.  0, or -errno with why in err (the
 * directory is not the user's own and private: never used).
 */
int rec_sub_path(const struct rr_file *f, pid_t consumer, bool make, char *buf, size_t len,
		 char *err, size_t errlen);

/* ---- the consumer's side: record/sink-sub.c ---- */

/*
 * Listen for subscribers of r's ring file (r attached as its consumer).
 * 0, or -errno with why in err (rip record then cannot join this one).
 */
int rec_srv_open(struct rec *r, char *err, size_t errlen);
/* Take the subscribers that knocked (rate-limited: cheap to call at every pass). */
void rec_srv_poll(struct rec *r);
/* Stop listening, remove the socket. */
void rec_srv_close(struct rec *r);
/* Subscribers connected now. */
unsigned rec_srv_count(const struct rec *r);

/* ---- the subscriber's side: record/subscribe.c ---- */

/*
 * Open the ring file at path without consuming it and subscribe to its
 * consumer, pid consumer: from the WELCOME on, r's sinks (added after
 * this, as for rec_attach) get every packet the consumer takes, from the
 * start.  rec_poll, rec_pass and rec_finish then read from the consumer
 * instead of the rings.  0, or -errno with why in err.
 */
int rec_subscribe(struct rec *r, const char *path, pid_t consumer, char *err, size_t errlen);
/* Read what the consumer sent, into the sinks: packets taken, or -errno (rec_poll's). */
int rec_sub_poll(struct rec *r, bool wait, char *err, size_t errlen);
/* Ask the consumer for the end and take the rest, until END (or it is gone). */
int rec_sub_finish(struct rec *r, char *err, size_t errlen);

#endif /* RIP_RECORD_SUB_H */
