/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/sink.h - where the consumer's packets go (record/consume.h): one
 * interface, three implementations, any number of each in a list that the
 * consumer feeds in the order they were added.
 *
 *	record/sink-dir.c	  the local trace: a CTF directory (record/tracew.h),
 *				  and at the end the copy of the ring file in it
 *	record/sink-relayd.c	  lttng-relayd (record/relayd.h): the metadata's
 *				  head and each event type before the first packet
 *				  that uses it, live beacons, a relayd lost connected
 *				  to again, the index in the metadata at the end
 *	record/sink-sub.c	  a second recorder (record/sub.h): each packet over
 *				  a socket, cut to what came after its start, and
 *				  never waited for (optional: its failure is its own)
 *
 * Every packet goes to every working sink, the same bytes to each: a sink
 * that must not see a packet begin before some time in a stream (relayd:
 * after a live beacon) says so through floor, and the packet is moved for
 * all, so that the copies stay the same.  A sink that fails stops being fed;
 * the recording fails with it when it is not optional (the local trace),
 * or when no sink works any more.  A sink is the consumer's: it reads the
 * consumer's file, types and counts through its rec pointer.
 */
#ifndef RIP_RECORD_SINK_H
#define RIP_RECORD_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rip/abi.h>

#include "read/ringfile.h"
#include "read/trace.h"
#include "record/tracew.h"

struct rec;
struct rec_sink;

struct rec_sink_ops {
	/*
	 * One packet of stream: hdr (closed, its sizes those of hdr + blen)
	 * then the blen bytes of events at body, which lies in a buffer that
	 * holds a header's worth of bytes before it.  0, or -errno with why in
	 * err.
	 */
	int (*packet)(struct rec_sink *s, uint32_t stream, const struct rip_packet *hdr,
		      const uint8_t *body, size_t blen, char *err, size_t errlen);
	/* The earliest timestamp_begin the next packet of stream may have; NULL: any. */
	uint64_t (*floor)(const struct rec_sink *s, uint32_t stream);
	/* After each pass over the rings; NULL: nothing to do. */
	int (*pass)(struct rec_sink *s, char *err, size_t errlen);
	/*
	 * A live sink: stream holds nothing before ts.  A sink that has this
	 * gets the open packets in pieces too (rec_tick); NULL: not live.
	 */
	int (*beacon)(struct rec_sink *s, uint32_t stream, uint64_t ts, char *err, size_t errlen);
	/*
	 * The end, once.  ok: every packet was taken; info (counts, types,
	 * names, modules) goes into the metadata and the index.  Not ok: the
	 * recording failed; keep what was written as it is (info may be
	 * empty), the consumer's error is the one reported.
	 */
	int (*end)(struct rec_sink *s, struct trace_info *info, bool ok, char *err, size_t errlen);
	/*
	 * The definitions (rip:bt, rip:fn) the sink kept from *from on, as
	 * packets timed ts handed to fn (trace_w_defs_copy), for a second
	 * recorder that joins; *from moved past them.  NULL: it keeps none.
	 */
	int (*defs)(struct rec_sink *s, size_t *from, uint64_t ts, trace_w_pkt_fn *fn, void *arg);
	/* Free; a sink that was never ended removes what it wrote. */
	void (*free)(struct rec_sink *s);
};

struct rec_sink {
	const struct rec_sink_ops *ops;
	struct rec *rec; /* the consumer that feeds it */
	bool optional;	 /* the recording goes on without it while another sink works */
	bool streams;	 /* it got the metadata at the start: the clock cannot change since */
	bool failed;	 /* not fed any more: err says why */
	bool gone;	 /* done: taken out of the list and freed after the pass */
	char err[RR_ERR_MAX];
	struct rec_sink *next; /* in the consumer's list */
};

/* Put s, set up by its implementation, at the end of r's list (r owns it from now on). */
void rec_sink_add(struct rec *r, struct rec_sink *s);
/*
 * A streamed trace (a sink that streams: relayd and its live readers got
 * the clock the metadata declares at the start, from the header's rate and
 * base alone: the calibration pairs come later, and CTF cannot change a
 * clock) keeps that clock in every copy, so that all time every event
 * alike: info's pairs are dropped.
 */
void rec_clock_as_streamed(struct trace_info *info);
/*
 * The trace's index as it is now, while recording (record/tracew.h's
 * opts.info, arg the struct rec): as rec_finish makes it at the end, from
 * the ring file and the consumer's counts.  Free with trace_info_free.
 */
int rec_info_now(void *arg, struct trace_info *info, char *err, size_t errlen);
uint64_t rec_info_gen(void *arg);

/* ---- the local trace: record/sink-dir.c ---- */

/* Create the trace directory (it must not exist) as a sink of r. */
int rec_open_trace(struct rec *r, const char *dir, char *err, size_t errlen);

/* ---- lttng-relayd: record/sink-relayd.c ---- */

struct rly;
/*
 * Stream to relayd too (r attached; rly from rly_open, which r owns from
 * now on, freed if this fails): sends the head of the metadata.  The
 * streams stay open linger_ms after the end, for live readers to read the
 * tail (rly_close).  0 or -errno.
 */
int rec_relayd(struct rec *r, struct rly *rly, unsigned linger_ms, char *err, size_t errlen);
/* Why streaming to relayd stopped (the local trace goes on); NULL if it did not. */
const char *rec_relayd_error(const struct rec *r);
/*
 * relayd was lost and connected again (into a new session, "-rN"): what was
 * in flight is missing from relayd's copies.  Why, or NULL.
 */
const char *rec_relayd_gap(const struct rec *r);
/* Where relayd files the trace (rly_path); NULL when r does not stream to relayd. */
const char *rec_relayd_path(const struct rec *r);

#endif /* RIP_RECORD_SINK_H */
