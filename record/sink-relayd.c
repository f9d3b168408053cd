/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/sink-relayd.c - the consumer's stream to lttng-relayd
 * (record/sink.h, on the producer of record/relayd.h).
 *
 * relayd gets the metadata in parts, as the trace is recorded: the head
 * (everything but the event types, no counts: ctf_write_head live) when the
 * sink is added, each event type before the first packet that may use it,
 * and at the end the counts and our index (ctf_write_index_env), so that
 * relayd's copy is a whole trace without .rip-index.  The consumer's live
 * tick (rec_tick) sends the open packets in pieces and a beacon for each
 * stream with nothing more, and every pass ends by sending the indexes
 * queued (rly_flush).
 *
 * A relayd lost in the middle is connected to again, into a new session
 * (rly_reconnect: its path gets "-rN"), at most REC_RLY_RECONNECTS times:
 * the head and the types go again, then what comes next; what was in
 * flight is missing from relayd's copies, which rec_relayd_gap says, and
 * the new session's index counts only what it holds.  One that stays lost
 * is a failed sink: optional, so the local trace goes on (rec_relayd_error
 * says why), and with no local trace the recording fails with it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/consume.h"
#include "record/relayd.h"
#include "record/sink.h"

#define REC_RLY_RECONNECTS 2 /* new sessions after relayd was lost, at most */
#define REC_RLY_ATTEMPTS 4   /* connections tried each time: 0.25, 0.5, 1, 2 s apart */
#define REC_RLY_BACKOFF_MS 250

struct rec_rly {
	struct rec_sink s; /* first: the sink is the struct */
	struct rly *rly;
	unsigned linger_ms; /* streams stay open this long after the end */
	unsigned reconnects;
	uint64_t events, packets;    /* sent to relayd's current session */
	char gap[RR_ERR_MAX + 128];  /* rec_relayd_gap */
	bool declared[EV_MAX_TYPES]; /* per type id: its TSDL went to relayd */
	uint32_t ndeclared;
};

static const struct rec_sink_ops rec_rly_ops;

/* The TSDL of the types relayd has not seen yet, before a packet that may use them. */
static int rec_rly_declare(struct rec_rly *k, char *err, size_t errlen)
{
	const struct ev_types *types = k->s.rec->types;
	char *text = NULL;
	size_t len = 0;
	FILE *out;
	int ret = 0;

	if (types->count == k->ndeclared)
		return 0;
	out = open_memstream(&text, &len);
	if (!out)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	for (uint32_t id = 0; id < EV_MAX_TYPES && !ret; id++) {
		if (!types->t[id].valid || k->declared[id])
			continue;
		ret = ctf_write_event(out, &types->t[id]);
		k->declared[id] = true;
		k->ndeclared++;
	}
	if (fclose(out) && !ret)
		ret = -ENOMEM;
	if (!ret)
		ret = rly_metadata(k->rly, text, len, err, errlen);
	else
		rr_fail(err, errlen, ret, "event type %u cannot be described in TSDL", 0);
	free(text);
	return ret;
}

/* The head of the metadata and the types known, to a new relayd session. */
static int rec_rly_head(struct rec_rly *k, char *err, size_t errlen)
{
	struct trace_info *info = calloc(1, sizeof(*info)); /* 430 KB: not on the stack */
	char *text = NULL;
	size_t len = 0;
	FILE *out;
	int ret;

	if (!info)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	ret = trace_info_from_file(&k->s.rec->f, info, err, errlen);
	if (ret)
		goto out_info;
	rec_clock_as_streamed(info);
	out = open_memstream(&text, &len);
	if (!out) {
		ret = rr_fail(err, errlen, -ENOMEM, "out of memory");
		goto out_info;
	}
	ret = ctf_write_head(out, info, true);
	if (fclose(out) && !ret)
		ret = -ENOMEM;
	if (ret) {
		ret = rr_fail(err, errlen, ret, "cannot write the metadata");
		goto out_text;
	}
	ret = rly_metadata(k->rly, text, len, err, errlen);
	memset(k->declared, 0, sizeof(k->declared));
	k->ndeclared = 0;
	if (!ret)
		ret = rec_rly_declare(k, err, errlen);
out_text:
	free(text);
out_info:
	trace_info_free(info);
	free(info);
	return ret;
}

/*
 * relayd was lost (why): connect again into a new session, a bounded number
 * of times; true if streaming goes on (what was in flight is lost to
 * relayd's copies, which rec_relayd_gap then says), false if it stops.
 */
static bool rec_rly_lost(struct rec_rly *k, const char *why)
{
	char e[RR_ERR_MAX];

	if (k->reconnects >= REC_RLY_RECONNECTS ||
	    rly_reconnect(k->rly, REC_RLY_ATTEMPTS, REC_RLY_BACKOFF_MS, e, sizeof(e)) ||
	    rec_rly_head(k, e, sizeof(e)))
		return false;
	k->reconnects++;
	snprintf(k->gap, sizeof(k->gap),
		 "%s; connected again: relayd's copy goes on in %s, without what was in flight",
		 why, rly_path(k->rly));
	return true;
}

static int rec_rly_packet(struct rec_sink *s, uint32_t stream, const struct rip_packet *hdr,
			  const uint8_t *body, size_t blen, char *err, size_t errlen)
{
	struct rec_rly *k = (struct rec_rly *)s;
	int ret;

	ret = rec_rly_declare(k, err, errlen);
	if (!ret)
		ret = rly_packet(k->rly, stream, hdr, body, blen, err, errlen);
	if (ret && rec_rly_lost(k, err)) {
		k->events = k->packets = 0; /* what this session holds */
		ret = rec_rly_declare(k, err, errlen);
		if (!ret)
			ret = rly_packet(k->rly, stream, hdr, body, blen, err, errlen);
	}
	if (!ret) {
		k->events += hdr->events;
		k->packets++;
	}
	return ret;
}

/*
 * Never before a beacon sent for the stream: live readers took it as
 * "nothing before this".  The events are after it (rec_tick), and compact
 * timestamps decode the same from any base between the event before and
 * theirs.
 */
static uint64_t rec_rly_floor(const struct rec_sink *s, uint32_t stream)
{
	return rly_stream_end(((const struct rec_rly *)s)->rly, stream);
}

/* The indexes queued for relayd go out at the end of each pass. */
static int rec_rly_pass(struct rec_sink *s, char *err, size_t errlen)
{
	struct rec_rly *k = (struct rec_rly *)s;

	if (!rly_flush(k->rly, err, errlen) || rec_rly_lost(k, err))
		return 0;
	return -EIO;
}

static int rec_rly_beacon(struct rec_sink *s, uint32_t stream, uint64_t ts, char *err,
			  size_t errlen)
{
	struct rec_rly *k = (struct rec_rly *)s;

	if (!rly_beacon(k->rly, stream, ts, err, errlen) || rec_rly_lost(k, err))
		return 0;
	return -EIO;
}

/*
 * The end for relayd: the index in the metadata, then every stream closed.
 * info's counts become the session's (the consumer is done with them).
 */
static int rec_rly_end(struct rec_sink *s, struct trace_info *info, bool ok, char *err,
		       size_t errlen)
{
	struct rec_rly *k = (struct rec_rly *)s;
	char *text = NULL;
	uint8_t *idx = NULL;
	size_t len = 0, ilen = 0;
	FILE *out;
	int ret;

	if (!ok)
		return 0; /* its streams go with the connection */
	if (k->reconnects) {
		/* a session after relayd was lost holds the rest only: its index says so */
		info->idx.events = k->events;
		info->idx.lost_packets += s->rec->st.packets - k->packets;
	}
	{
		/* relayd's copy is CTF whatever the local trace is */
		struct trace_store store = info->store;
		struct trace_chunk_info *chunks = info->chunks;

		memset(&info->store, 0, sizeof(info->store));
		info->chunks = NULL;
		ret = trace_index_pack(info, &idx, &ilen, err, errlen);
		info->store = store;
		info->chunks = chunks;
	}
	if (!ret) {
		out = open_memstream(&text, &len);
		if (!out) {
			ret = rr_fail(err, errlen, -ENOMEM, "out of memory");
		} else {
			ret = ctf_write_index_env(out, info, idx, ilen);
			if (fclose(out) && !ret)
				ret = -ENOMEM;
			if (ret)
				rr_fail(err, errlen, ret, "cannot write the index");
		}
	}
	if (!ret)
		ret = rly_metadata(k->rly, text, len, err, errlen);
	if (!ret)
		ret = rly_close(k->rly, 30000, k->linger_ms, err, errlen);
	free(idx);
	free(text);
	return ret;
}

static void rec_rly_free(struct rec_sink *s)
{
	struct rec_rly *k = (struct rec_rly *)s;

	rly_free(k->rly);
	free(k);
}

static const struct rec_sink_ops rec_rly_ops = {
	.packet = rec_rly_packet,
	.floor = rec_rly_floor,
	.pass = rec_rly_pass,
	.beacon = rec_rly_beacon,
	.end = rec_rly_end,
	.free = rec_rly_free,
};

int rec_relayd(struct rec *r, struct rly *rly, unsigned linger_ms, char *err, size_t errlen)
{
	struct rec_rly *k = calloc(1, sizeof(*k));
	int ret;

	if (!k) {
		rly_free(rly);
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	}
	k->s.ops = &rec_rly_ops;
	k->s.rec = r;
	k->s.optional = true;
	k->s.streams = true;
	k->rly = rly;
	k->linger_ms = linger_ms;
	ret = rec_rly_head(k, err, errlen);
	if (ret) {
		rec_rly_free(&k->s);
		return ret;
	}
	rec_sink_add(r, &k->s);
	return 0;
}

static const struct rec_rly *rec_rly_of(const struct rec *r)
{
	for (const struct rec_sink *s = r->sinks; s; s = s->next)
		if (s->ops == &rec_rly_ops)
			return (const struct rec_rly *)s;
	return NULL;
}

const char *rec_relayd_error(const struct rec *r)
{
	const struct rec_rly *k = rec_rly_of(r);

	return k && k->s.failed ? k->s.err : NULL;
}

const char *rec_relayd_gap(const struct rec *r)
{
	const struct rec_rly *k = rec_rly_of(r);

	return k && k->gap[0] ? k->gap : NULL;
}

const char *rec_relayd_path(const struct rec *r)
{
	const struct rec_rly *k = rec_rly_of(r);

	return k ? rly_path(k->rly) : NULL;
}
