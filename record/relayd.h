/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/relayd.h - a producer for LTTng's relay daemon (lttng-relayd): the
 * network sink of `rip run --relayd` and `rip record --relayd`.
 *
 * relayd takes CTF packets from producers on two TCP connections and writes
 * one trace per host and session, which it also serves live to
 * `babeltrace2 net://...`.  We speak its producer protocol at version 2.10
 * (the last before trace chunks; relayd 2.11 and later adapt down to it):
 *
 *	rly_url_parse(url, &u, err, len);	   net://HOST[:CTRL[:DATA]], tcp://...
 *	rly_open(&u, session, host, live_us, &r, err, len);
 *					   connect, VERSION, CREATE_SESSION,
 *					   ADD_STREAM "metadata"
 *	rly_metadata(r, text, n, err, len);	   TSDL, appended (any time)
 *	rly_packet(r, stream, hdr, body, n, err, len);
 *					   ADD_STREAM on first use, the packet
 *					   on the data connection, its index
 *	rly_beacon(r, stream, ts, err, len);	   "nothing in this stream until ts"
 *	rly_close(r, err, len);		   wait until relayd has it all, close
 *	rly_free(r);
 *
 * Every reply is read in full and checked (size, status, handles): a relay
 * daemon is a peer on the network, its bytes are hostile input.  Nothing
 * here prints; errors are -errno with a message in err.
 */
#ifndef RIP_RECORD_RELAYD_H
#define RIP_RECORD_RELAYD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLY_DEFAULT_CTRL 5342 /* lttng-relayd's default ports */
#define RLY_DEFAULT_DATA 5343
#define RLY_DEFAULT_LIVE_US 1000000u
#define RLY_NAME_MAX 160      /* session names (relayd takes paths HOST/SESSION-DATE < 255) */
#define RLY_HOST_MAX 63	      /* host names */

struct rly_url {
	char host[256];
	uint16_t ctrl, data;
};

/*
 * net://HOST[:CTRL[:DATA]], net6://, tcp://HOST[:CTRL[:DATA]] (as lttng
 * create --set-url takes them; a bare port for CTRL makes DATA CTRL + 1).
 * IPv6 addresses in brackets.  0 or -EINVAL with the reason in err.
 */
int rly_url_parse(const char *url, struct rly_url *u, char *err, size_t errlen);

/* Is s a name relayd takes for a session or host (safe as a path component)? */
bool rly_name_ok(const char *s, size_t max);

struct rly;

struct rly_stats {
	uint64_t packets, bytes, beacons;
};

/*
 * Connect (tries `attempts` times, `backoff_ms` apart, doubling), check the
 * protocol version, create the session (live if live_us > 0) and its
 * metadata stream.  Every send and reply wait gives up after timeout_ms.
 */
int rly_open(const struct rly_url *u, const char *session, const char *hostname,
	     uint32_t live_us, unsigned attempts, unsigned backoff_ms, unsigned timeout_ms,
	     struct rly **out, char *err, size_t errlen);
/*
 * After the connection was lost: connect again (as rly_open) into a new
 * session of the same name (its path gets "-rN"), where every stream is
 * announced anew.  The caller sends the metadata again first.
 */
int rly_reconnect(struct rly *r, unsigned attempts, unsigned backoff_ms, char *err,
		  size_t errlen);
/* Append TSDL text to the metadata stream. */
int rly_metadata(struct rly *r, const void *text, size_t len, char *err, size_t errlen);
/*
 * Send one CTF packet of stream (a rip event ring: its file on relayd is
 * stream_<stream>): hdr (sizes already cut to hdr + body) then the len
 * bytes of events at body; the header gives the index.  New streams are
 * announced first.
 */
struct rip_packet;
int rly_packet(struct rly *r, uint32_t stream, const struct rip_packet *hdr, const void *body,
	       size_t len, char *err, size_t errlen);
/*
 * A live beacon: stream holds nothing before ts (clock ticks), so a live
 * reader may go past it.  Ignored for streams that sent no packet yet.
 */
int rly_beacon(struct rly *r, uint32_t stream, uint64_t ts, char *err, size_t errlen);
/*
 * Send the packet indexes queued so far (they go 32 at a time otherwise):
 * after each pass over the rings, so that live readers see what was sent.
 */
int rly_flush(struct rly *r, char *err, size_t errlen);
/* The end timestamp of the last packet sent on stream (0 if none). */
uint64_t rly_stream_end(const struct rly *r, uint32_t stream);
/* Streams that sent packets: those below the returned bound. */
uint32_t rly_streams(const struct rly *r);
/*
 * The end: wait (up to timeout_ms) until relayd has every packet and
 * index, keep the streams open linger_ms more, then close every stream
 * and the metadata.  (relayd 2.13 hangs up on a live reader at once when
 * a stream it has not read to the end closes: the linger gives live
 * readers the time to read the tail.)  The connection stays for rly_free.
 */
int rly_close(struct rly *r, unsigned timeout_ms, unsigned linger_ms, char *err, size_t errlen);
void rly_free(struct rly *r);
const struct rly_stats *rly_stats(const struct rly *r);
/* The path of the trace in relayd's output directory: HOST/SESSION-YYYYMMDD-HHMMSS. */
const char *rly_path(const struct rly *r);
/* Did the connection fail (relayd gone)?  Then every call fails at once. */
bool rly_broken(const struct rly *r);

#endif /* RIP_RECORD_RELAYD_H */
