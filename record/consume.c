/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/consume.c - the streaming loop of `rip run` and `rip record`.
 *
 * We are the one consumer of a live ring file: ev_consumer_open puts our
 * pid in every ring's consumer_pid, which tells writers in discard and
 * block mode that someone reads (they drop or wait instead of
 * overwriting), and each pass moves every ring's consumed past the packets
 * we copied.  A packet that does not decode is most often an event of a
 * type registered after we read the type table: the table is read again
 * and the packet retried; if it still fails it is reported, counted and
 * skipped, so that one bad packet never stalls a writer that waits for us.
 * When we stop, consumer_pid goes back to 0 so that nobody waits for a
 * consumer that left (or to the subscriber we handed the rings to).
 * Other recorders of the same file subscribe to us rather than consume
 * (record/sub.h): they are sinks of ours (record/sink-sub.c), and as a
 * subscriber this file's rec_poll and rec_finish read from the consumer
 * (record/subscribe.c) instead of the rings.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rip/resource.h>

#include "record/consume.h"

#define REC_MAX_WARNINGS 10
#define REC_DRAIN_PASSES 100000

void rec_init(struct rec *r)
{
	memset(r, 0, sizeof(*r));
	r->f.fd = -1;
	r->sub_fd = -1;
	r->flush_ns = REC_FLUSH_NS;
}

/* Hand a message to the caller's warn callback (the library never prints). */
static void rec_warn(const struct rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void rec_warn(const struct rec *r, const char *fmt, ...)
{
	char msg[RR_ERR_MAX + 64];
	va_list ap;

	if (!r->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->warn(msg, r->warn_arg);
}

/*
 * A word of the live header at byte off (rr_live_u32: acquire, guarded against
 * the file shrinking): 0 when it shrank, which ev_consume then reports.
 */
static uint32_t rec_u32(struct rec *r, size_t off)
{
	char err[RR_ERR_MAX];
	uint32_t v;

	return rr_live_u32(&r->f, off, &v, err, sizeof(err)) ? 0 : v;
}

static uint64_t rec_u64(struct rec *r, size_t off)
{
	char err[RR_ERR_MAX];
	uint64_t v;

	return rr_live_u64(&r->f, off, &v, err, sizeof(err)) ? 0 : v;
}

#define REC_HDR(field) offsetof(struct rip_file_hdr, field)

static struct rip_evring *rec_ring(const struct rec *r, uint32_t i)
{
	return (struct rip_evring *)(r->f.wmap + r->f.hdr.ev_ctl_off + (size_t)i * RIP_EVRING_SIZE);
}

/* Events ring i has discarded so far. */
static uint64_t rec_ring_discarded(struct rec *r, uint32_t i)
{
	return rec_u64(r, r->f.hdr.ev_ctl_off + (size_t)i * RIP_EVRING_SIZE +
				  offsetof(struct rip_evring, discarded));
}

uint32_t rec_rings_used(struct rec *r)
{
	uint32_t n = rec_u32(r, REC_HDR(ev_fresh));

	return n < r->f.hdr.ev_rings ? n : r->f.hdr.ev_rings;
}

static uint64_t rec_discarded_now(struct rec *r)
{
	uint32_t n = rec_rings_used(r);
	uint64_t sum = 0;

	/* Rings never used have discarded nothing (and may not be backed yet: not read). */
	for (uint32_t i = 0; i < n; i++)
		sum += rec_ring_discarded(r, i);
	/* and the events no ring could count (no ring free, after exit) */
	return sum + rec_u64(r, REC_HDR(ev_lost));
}

static bool rec_pid_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

pid_t rec_other_consumer(struct rr_file *f)
{
	char err[RR_ERR_MAX];
	uint32_t v;
	pid_t pid;

	if (f->legacy_raw || !f->hdr.ev_rings)
		return 0;
	/* as rip_file_consumer reads it, guarded */
	if (rr_live_u32(f, offsetof(struct rip_file_hdr, ev_consumer), &v, err, sizeof(err)))
		return 0;
	pid = (pid_t)v;
	return pid && pid != getpid() && rec_pid_alive(pid) ? pid : 0;
}

/* Read the type table again if it grew; true if it did. */
static bool rec_refresh_types(struct rec *r)
{
	/* Pairs with the release store of types_count in the writer. */
	uint32_t n = rec_u32(r, REC_HDR(types_count));
	char err[RR_ERR_MAX];

	if (n == r->types_seen)
		return false;
	if (ev_read_types_more(&r->f, r->types, err, sizeof(err))) {
		rec_warn(r, "%s", err);
		return false;
	}
	r->types_seen = n;
	return true;
}

/*
 * The per-ring arrays are sized for every ring the file may have (16,384
 * with the defaults: 2 MB), of which a process uses a few: mapped, they
 * are zero pages until used, where malloc, once its threshold has risen,
 * would clear all of them for every child rip run follows.
 */
static void *rec_zalloc(size_t n, size_t size)
{
	void *p = mmap(NULL, (n ? n : 1) * size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void rec_zfree(void *p, size_t n, size_t size)
{
	if (p)
		munmap(p, (n ? n : 1) * size);
}

void rec_baseline(struct rec *r)
{
	r->st.discarded_before = 0;
	/* Rings used so far (the others have discarded nothing yet). */
	for (uint32_t i = 0, n = rec_rings_used(r); i < n; i++) {
		r->discarded0[i] = rec_ring_discarded(r, i);
		r->st.discarded_before += r->discarded0[i];
	}
	r->st.noring_before = rec_u64(r, REC_HDR(ev_lost));
	r->st.discarded_before += r->st.noring_before;
}

/* rec_attach, and with consume false rec_open_ro. */
static int rec_open(struct rec *r, const char *path, bool consume, char *err, size_t errlen)
{
	int ret;

	ret = rr_open(path, &r->f, err, errlen);
	if (ret)
		return ret;
	if (r->f.legacy_raw || !r->f.hdr.ev_rings) {
		snprintf(err, errlen,
			 "%s: the process has no event rings (it ran with RIP_EVENT_RINGS=0?): "
			 "nothing to record",
			 path);
		ret = -ENODATA;
		goto err_close;
	}
	r->nrings = r->f.hdr.ev_rings;
	r->types = rec_zalloc(1, sizeof(*r->types));
	r->bad = rec_zalloc(r->nrings, sizeof(*r->bad));
	r->discarded0 = rec_zalloc(r->nrings, sizeof(*r->discarded0));
	/* one more: the stream of the CPU samples, after every ring's (nrings) */
	r->pc = rec_zalloc(r->nrings + 1, sizeof(*r->pc));
	if (!r->types || !r->bad || !r->discarded0 || !r->pc) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto err_close;
	}
	if (consume) {
		uint32_t was = 0;
		char ignore[RR_ERR_MAX];

		/* as rip_file_consumer reads it, guarded: the consumer the file names before us */
		rr_live_u32(&r->f, offsetof(struct rip_file_hdr, ev_consumer), &was, ignore,
			    sizeof(ignore));
		ret = ev_consumer_open(&r->f, err, errlen);
		if (ret)
			goto err_close;
		r->attached = true;
		/*
		 * Not named from its first event (rip run's ring files name it):
		 * the stacks defined before we came are gone with their packets.
		 * Ask for each again at its next use (preload/backtrace.c); at
		 * worst, the stacks not used again stay undefined, as before.
		 */
		if (was != (uint32_t)getpid())
			rr_bt_gen_add(&r->f, ignore, sizeof(ignore));
	}
	r->types_seen = rec_u32(r, REC_HDR(types_count));
	/* zero pages so far (rec_zalloc): only the types in use are written */
	ret = ev_read_types_more(&r->f, r->types, err, errlen);
	if (ret)
		goto err_close;
	rec_baseline(r);
	/* a second rip record subscribes to us (record/sub.h); without it, it is refused */
	if (consume && rec_srv_open(r, r->srv_err, sizeof(r->srv_err)))
		r->srv = NULL;
	return 0;

err_close:
	rec_close(r);
	return ret;
}

int rec_attach(struct rec *r, const char *path, char *err, size_t errlen)
{
	return rec_open(r, path, true, err, errlen);
}

int rec_open_ro(struct rec *r, const char *path, char *err, size_t errlen)
{
	return rec_open(r, path, false, err, errlen);
}

void rec_defer_sync(struct rec *r)
{
	r->nosync = true;
}

void rec_sink_add(struct rec *r, struct rec_sink *s)
{
	struct rec_sink **at = &r->sinks;

	while (*at)
		at = &(*at)->next;
	s->rec = r;
	s->next = NULL;
	*at = s;
}

/* Does a sink still work (other than the one that failed)? */
static bool rec_sinks_work(const struct rec *r)
{
	for (const struct rec_sink *s = r->sinks; s; s = s->next)
		if (!s->failed)
			return true;
	return false;
}

/* Is a sink that got the metadata at the start still fed (record/sink.h, streams)? */
static bool rec_streamed(const struct rec *r)
{
	for (const struct rec_sink *s = r->sinks; s; s = s->next)
		if (!s->failed && s->streams)
			return true;
	return false;
}

void rec_clock_as_streamed(struct trace_info *info)
{
	info->idx.file.clock_npairs = 0;
	memset(info->idx.file.clock_pairs, 0, sizeof(info->idx.file.clock_pairs));
}

/*
 * Sink s failed (why): it is fed no more.  True when the recording fails
 * with it: it was not optional, or no sink works any more.
 */
static bool rec_sink_fail(struct rec *r, struct rec_sink *s, const char *why)
{
	if (!s->failed) {
		s->failed = true;
		snprintf(s->err, sizeof(s->err), "%s", why);
	}
	return !s->optional || !rec_sinks_work(r);
}

/* Is a live sink working (rec_tick sends it the open packets in pieces)? */
static bool rec_live(const struct rec *r)
{
	for (const struct rec_sink *s = r->sinks; s; s = s->next)
		if (!s->failed && s->ops->beacon)
			return true;
	return false;
}

/*
 * Write one packet, hdr then blen bytes of events at body, to every working
 * sink.  body lies inside a packet copy, after at least a header's worth of
 * bytes (the trace writer takes the bytes after the header).
 */
int rec_emit(struct rec *r, uint32_t ring, const struct rec_src *src,
	     const struct rip_packet *hdr0, const uint8_t *body, size_t blen)
{
	struct rip_packet hdr = *hdr0;
	char why[RR_ERR_MAX];
	bool floored = false;
	int ret;

	hdr.packet_size = hdr.content_size = (uint64_t)(sizeof(hdr) + blen) * 8;
	hdr.open = 0;
	/* not before what a sink said the stream holds nothing before: in every copy */
	for (struct rec_sink *s = r->sinks; s; s = s->next) {
		uint64_t after;

		if (!s->ops->floor)
			continue;
		after = s->ops->floor(s, ring);
		if (hdr.timestamp_begin < after)
			hdr.timestamp_begin = after;
		floored = true;
	}
	if (floored && hdr.timestamp_end < hdr.timestamp_begin)
		hdr.timestamp_end = hdr.timestamp_begin;
	r->src = src;
	for (struct rec_sink *s = r->sinks; s; s = s->next) {
		if (s->failed)
			continue;
		ret = s->ops->packet(s, ring, &hdr, body, blen, why, sizeof(why));
		if (ret && rec_sink_fail(r, s, why)) {
			snprintf(r->cb_err, sizeof(r->cb_err), "%s", why);
			r->cb_failed = true;
			r->src = NULL;
			return ret;
		}
	}
	r->src = NULL;
	/* not the definitions' copies (a subscriber's, record/sub.h): the trace writer's stream */
	if (ring <= r->nrings) {
		r->pc[ring].last = hdr;
		r->pc[ring].any = true;
		if (ring >= r->nstreams)
			r->nstreams = ring + 1;
	}
	r->st.packets++;
	r->st.events += hdr.events;
	r->st.bytes += sizeof(hdr) + blen;
	return 0;
}

static int rec_cut_event(const struct ev_event *e, void *arg)
{
	(void)e;
	(void)arg;
	return 0;
}

/*
 * Does a packet cut by a cut that came from another process (rec_take_over)
 * decode, hdr's events of them?  0, or -EBADMSG (reported, counted).
 */
static int rec_cut_check(struct rec *r, uint32_t ring, const struct rip_packet *hdr,
			 const uint8_t *body, size_t blen)
{
	char why[RR_ERR_MAX];
	int n;

	/* body has a header's worth of bytes before it: they are not read */
	n = ev_decode(r->types, body - sizeof(*hdr), sizeof(*hdr) + blen, hdr->timestamp_begin,
		      rec_cut_event, NULL, why, sizeof(why));
	if (n >= 0 && (uint32_t)n == hdr->events)
		return 0;
	if (r->st.corrupt++ < REC_MAX_WARNINGS)
		rec_warn(r, "warning: ring %u: the consumer before us stopped inside an event%s%s: "
			 "packet skipped", ring, n < 0 ? ": " : "", n < 0 ? why : "");
	return -EBADMSG;
}

bool rec_cut_apply(const struct rec_cut *c, const struct rec_src *src, struct rip_packet *hdr,
		   struct rec_src *out, const uint8_t **body, size_t *blen)
{
	*out = *src;
	if (!src->ring || !c->seq1)
		return true;
	if (src->seq != c->seq1 - 1)
		return src->seq > c->seq1 - 1;
	if (c->off >= src->off + *blen)
		return false;
	if (c->off > src->off) {
		uint64_t before = c->events > src->events ? c->events - src->events : 0;

		*body += c->off - src->off;
		*blen -= c->off - src->off;
		hdr->events = hdr->events > before ? hdr->events - (uint32_t)before : 0;
		if (hdr->timestamp_begin < c->ts)
			hdr->timestamp_begin = c->ts;
		if (hdr->timestamp_end < hdr->timestamp_begin)
			hdr->timestamp_end = hdr->timestamp_begin;
		out->off = c->off;
		out->events = c->events;
	}
	return true;
}

/*
 * The time a piece of p from byte off begins: its first event's, so that
 * it says when it begins, not when the piece before it ended (a thread
 * idle between the two: a reader that merges by time would take the piece
 * up long before its events, rec_tick).  After, when that cannot be read.
 * *coro: the coroutine running at the piece's first event, which its
 * header says (the packet's at begin was the piece's: a thread back from a
 * coroutine before the piece had its events put in that coroutine).
 */
static uint64_t rec_piece_begin(const struct rec *r, const struct ev_packet *p, size_t off,
				uint64_t after, uint32_t *coro)
{
	uint64_t at, last;

	*coro = p->hdr.coro;
	if (ev_walk_at(r->types, p->data, p->len, p->hdr.timestamp_begin, off, &at, &last, coro) <
	    0) {
		*coro = p->hdr.coro;
		return after;
	}
	return at < after ? after : at;
}

static int rec_packet(const struct ev_packet *p, void *arg)
{
	struct rec *r = arg;
	struct rec_piece *pc;
	struct rip_packet hdr = p->hdr;
	const uint8_t *body = p->data + sizeof(hdr);
	size_t blen = p->len - sizeof(hdr);
	struct rec_src src = { .ring = true, .seq = p->hdr.packet_seq_num, .off = sizeof(hdr) };

	if (p->ring >= r->f.hdr.ev_rings || p->len < sizeof(hdr))
		return 0;
	pc = &r->pc[p->ring];
	/*
	 * The final pass: where we stopped, for a subscriber that takes over;
	 * set before anything returns (an open packet whose pieces held all
	 * of it sends nothing more, and stopped at its end all the same).
	 */
	if (p->was_open && r->endcut)
		r->endcut[p->ring] = (struct rec_cut){ .seq1 = p->hdr.packet_seq_num + 1,
						       .off = p->len,
						       .events = p->hdr.events,
						       .ts = p->hdr.timestamp_end };
	if (pc->seq1 && pc->seq1 - 1 == p->hdr.packet_seq_num) {
		/* sent in part (rec_tick): the rest goes out as the last piece */
		pc->seq1 = 0;
		if (pc->off > p->len || pc->events > p->hdr.events ||
		    (pc->events == p->hdr.events &&
		     p->hdr.events_discarded == pc->last.events_discarded)) {
			pc->extra--; /* nothing left to send: the next packet follows at once */
			return 0;
		}
		body = p->data + pc->off;
		blen = p->len - pc->off;
		hdr.events = p->hdr.events - pc->events;
		hdr.timestamp_begin = rec_piece_begin(r, p, pc->off, pc->last_ts, &hdr.coro);
		src.off = pc->off;
		src.events = pc->events;
	}
	/* taken over from a consumer: what it sent us already is not sent again */
	if (r->cut && r->cut[p->ring].seq1) {
		struct rec_src cut;

		if (!rec_cut_apply(&r->cut[p->ring], &src, &hdr, &cut, &body, &blen) ||
		    (!hdr.events && p->hdr.events))
			return 0;
		/* cut where the consumer said: on an event's boundary, or it lied */
		if (cut.off != src.off && rec_cut_check(r, p->ring, &hdr, body, blen))
			return 0;
		src = cut;
	}
	hdr.packet_seq_num += pc->extra;
	return rec_emit(r, p->ring, &src, &hdr, body, blen);
}

/*
 * Ring i's written and consumed words, guarded against the file shrinking;
 * with written NULL, move consumed to *consumed + 1 instead (skip a packet).
 * 0 or -EIO.
 */
static int rec_ring_pos(struct rec *r, uint32_t i, uint64_t *written, uint64_t *consumed)
{
	struct rip_evring *ring = rec_ring(r, i);
	sigjmp_buf jb;

	if (rr_guard_enter(&jb))
		return -EIO;
	if (written) {
		*written = rip_evring_written(ring);
		*consumed = rip_evring_consumed(ring);
	} else {
		rip_evring_consume(ring, *consumed + 1);
		ev_ring_wake(ring);
	}
	rr_guard_leave();
	return 0;
}

/* Take what ring i holds; < 0 only when the trace cannot be written. */
static int rec_consume(struct rec *r, uint32_t i, bool final, char *err, size_t errlen)
{
	char why[RR_ERR_MAX];
	bool retried = false;
	int ret;

	for (;;) {
		uint64_t consumed, written;

		ret = ev_consume(&r->f, r->types, i, final, rec_packet, r, &r->st.lost_packets, why,
				 sizeof(why));
		if (!ret)
			return 0;
		if (r->cb_failed) {
			snprintf(err, errlen, "%s", r->cb_err);
			return ret;
		}
		if (ret == -ENOMEM || ret == -EIO) {
			snprintf(err, errlen, "%s", why);
			return ret;
		}
		/* An event of a type registered since we read the table? */
		if (!retried && rec_refresh_types(r)) {
			retried = true;
			continue;
		}
		retried = false;
		if (rec_ring_pos(r, i, &written, &consumed)) {
			snprintf(err, errlen, "%s: the file shrank while being read", r->f.path);
			return -EIO;
		}
		if (r->st.corrupt < REC_MAX_WARNINGS)
			rec_warn(r, "warning: %s%s", why,
				 consumed < written ? ": packet skipped" : ": ring skipped");
		r->st.corrupt++;
		if (consumed >= written) {
			r->bad[i] = true;
			return 0;
		}
		/* Skip it (a flight-recorder writer may push it too: see ev_consume). */
		if (rec_ring_pos(r, i, NULL, &consumed)) {
			snprintf(err, errlen, "%s: the file shrank while being written", r->f.path);
			return -EIO;
		}
	}
}

/* The end of a pass, for the sinks that want it (relayd: the indexes queued). */
static int rec_sinks_pass(struct rec *r, char *err, size_t errlen)
{
	char why[RR_ERR_MAX];

	for (struct rec_sink *s = r->sinks; s; s = s->next) {
		if (s->failed || !s->ops->pass || !s->ops->pass(s, why, sizeof(why)) ||
		    !rec_sink_fail(r, s, why))
			continue;
		snprintf(err, errlen, "%s", why);
		return -EIO;
	}
	return 0;
}

/* Stream i holds nothing before ts, for the live sinks (that have had a packet of it). */
static int rec_beacon(struct rec *r, uint32_t i, uint64_t ts, char *err, size_t errlen)
{
	char why[RR_ERR_MAX];

	for (struct rec_sink *s = r->sinks; s; s = s->next) {
		if (s->failed || !s->ops->beacon || !s->ops->beacon(s, i, ts, why, sizeof(why)) ||
		    !rec_sink_fail(r, s, why))
			continue;
		snprintf(err, errlen, "%s", why);
		return -EIO;
	}
	return 0;
}

/*
 * A packet of CPU samples, into the trace at once as stream nrings: its
 * sequence number follows the stream's last packet (a consumer we took over
 * from may have written some).  What the sampler lost is known at the end
 * only (smp_lost counts the samples stored since the last pass too): the
 * stream's last packet carries it (rec_samples_end), the others the count
 * of the packet before (CTF's events_discarded is cumulative).  The
 * sample type is declared before the first (relayd's metadata comes before
 * the packets that use it): counted, for the sink declares types while it
 * has seen fewer than there are.
 */
static int rec_smp_packet(const struct rip_packet *hdr0, const uint8_t *body, size_t blen,
			  void *arg, char *err, size_t errlen)
{
	struct rec *r = arg;
	struct rec_piece *pc = &r->pc[r->nrings];
	struct rip_packet hdr = *hdr0;
	int ret;

	static const struct rec_src own;

	if (!r->types->t[TRACE_SAMPLE_ID].valid) {
		r->types->count++;
		trace_sample_type(&r->types->t[TRACE_SAMPLE_ID]);
	}
	hdr.stream_instance_id = r->nrings;
	hdr.packet_seq_num = pc->any ? pc->last.packet_seq_num + 1 : 0;
	hdr.events_discarded = pc->any ? pc->last.events_discarded : 0;
	ret = rec_emit(r, r->nrings, &own, &hdr, body, blen);
	if (ret)
		snprintf(err, errlen, "%s", r->cb_err);
	return ret;
}

/*
 * The CPU samples' pass when one is due (always with final): the collector
 * is made once the file says the sampler started, and the packets go into
 * the trace as they are made (rec_smp_packet).  An error that only costs
 * the samples stops taking them (smp_err says why); -EIO (the file shrank)
 * and the sinks' errors are returned.
 */
static int rec_samples(struct rec *r, bool final, char *err, size_t errlen)
{
	char why[RR_ERR_MAX];
	uint32_t hz;
	int ret;

	if (r->smp_off)
		return 0;
	if (!r->smp) {
		if (rr_live_u32(&r->f, offsetof(struct rip_file_hdr, sample_hz), &hz, why,
				sizeof(why)) || !hz)
			return 0;
		/* the stream after every ring's (rec_open: pc has one more) */
		if (r->nrings >= TRACE_MAX_STREAMS) {
			snprintf(r->smp_err, sizeof(r->smp_err),
				 "no stream left for the CPU samples (%u rings)", r->nrings);
			r->smp_off = true;
			return 0;
		}
		ret = rr_live_hdr(&r->f, &r->f.hdr, why, sizeof(why));
		if (!ret)
			ret = smp_new(&r->f, &r->smp, why, sizeof(why));
		if (ret) {
			snprintf(r->smp_err, sizeof(r->smp_err), "%s", why);
			r->smp_off = true;
			return 0;
		}
	}
	ret = smp_poll(r->smp, final, rec_smp_packet, r, why, sizeof(why));
	if (ret == -EIO || (ret < 0 && r->cb_failed)) {
		snprintf(err, errlen, "%s", why);
		return ret;
	}
	if (ret < 0) {
		snprintf(r->smp_err, sizeof(r->smp_err), "%s", why);
		r->smp_off = true;
	}
	return 0;
}

/* Free the sinks that are done (a subscriber that left). */
static void rec_sinks_prune(struct rec *r)
{
	for (struct rec_sink **at = &r->sinks; *at;) {
		struct rec_sink *s = *at;

		if (!s->gone) {
			at = &s->next;
			continue;
		}
		*at = s->next;
		s->ops->free(s);
	}
}

int rec_poll(struct rec *r, char *err, size_t errlen)
{
	uint32_t n;
	uint64_t before = r->st.packets + r->st.lost_packets + r->st.corrupt;
	int ret;

	if (r->sub_fd >= 0)
		return rec_sub_poll(r, false, err, errlen);
	n = rec_rings_used(r);
	rec_refresh_types(r);
	/* a calibration pair every second or so: readers follow the TSC's rate with them */
	if (rr_mono_ns() - r->pair_ns >= 1000000000) {
		rr_clock_pair(&r->f);
		r->pair_ns = rr_mono_ns();
	}
	for (uint32_t i = 0; i < n; i++) {
		/* writers that wait wait on while it beats (rip/abi.h, ev_beat) */
		if (!(i & 63))
			rr_beat(&r->f);
		if (r->bad[i])
			continue;
		ret = rec_consume(r, i, false, err, errlen);
		if (ret < 0)
			return ret;
	}
	ret = rec_samples(r, false, err, errlen);
	if (ret)
		return ret;
	ret = rec_sinks_pass(r, err, errlen);
	if (ret)
		return ret;
	rec_sinks_prune(r);
	rec_srv_poll(r);
	return (int)(r->st.packets + r->st.lost_packets + r->st.corrupt - before);
}

/*
 * Not live: is a piece of ring i's open packet due?  When it held events
 * not written yet at the tick before (they waited at least a flush period:
 * a thread idle or not given a CPU in the middle of a packet); known
 * without a copy, so that the rings of busy threads, whose packets close
 * between two ticks, cost a look each.
 */
static bool rec_flush_due(struct rec *r, uint32_t i, struct rec_piece *pc)
{
	uint64_t seq;
	size_t len, had, sent;
	bool same;

	if (ev_open_size(&r->f, i, &seq, &len))
		return true; /* ev_peek_open says what is wrong */
	same = seq == pc->tick_seq;
	had = same ? pc->tick_len : 0;
	pc->tick_seq = seq;
	pc->tick_len = len;
	sent = pc->seq1 && pc->seq1 - 1 == seq ? pc->off : RIP_PACKET_HDR_SIZE;
	return same && had > sent;
}

int rec_tick(struct rec *r, uint64_t margin_ns, char *err, size_t errlen)
{
	uint64_t now = rr_now_ticks(&r->f.hdr), margin, before;
	uint32_t n;
	bool live;
	int ret;

	if (r->sub_fd >= 0 || (!(live = rec_live(r)) && !r->flush_ns))
		return rec_poll(r, err, errlen);
	/* now first: every ring in use after this holds only later events */
	ret = rec_poll(r, err, errlen);
	if (ret < 0)
		return ret;
	before = r->st.packets;
	n = rec_rings_used(r);
	margin = (uint64_t)((unsigned __int128)margin_ns * r->f.hdr.clock_hz / 1000000000u);
	for (uint32_t i = 0; i < n; i++) {
		struct rec_piece *pc = &r->pc[i];
		struct ev_packet p;
		char why[RR_ERR_MAX];

		if (r->bad[i])
			continue;
		if (!live && !rec_flush_due(r, i, pc))
			continue;
		ret = ev_peek_open(&r->f, r->types, i, pc->seq1 - 1, pc->off, &p, why, sizeof(why));
		if (ret < 0 && ret != -EAGAIN && rec_refresh_types(r))
			ret = ev_peek_open(&r->f, r->types, i, pc->seq1 - 1, pc->off, &p, why,
					   sizeof(why));
		if (ret == -EIO || ret == -ENOMEM) {
			snprintf(err, errlen, "%s", why);
			return ret;
		}
		if (ret < 0)
			continue; /* packets to take first, or not readable yet: no beacon */
		if (ret == 1) {
			bool part = pc->seq1 && pc->seq1 - 1 == p.hdr.packet_seq_num;
			uint32_t sent = part ? pc->events : 0;
			size_t off = part ? pc->off : sizeof(p.hdr);
			uint64_t first = 0;
			uint32_t coro = p.hdr.coro;

			if (p.hdr.events > sent && p.len > off)
				first = rec_piece_begin(r, &p, off,
							part ? pc->last_ts : p.hdr.timestamp_begin,
							&coro);
			if (first) {
				struct rip_packet hdr = p.hdr;
				struct rec_src src = { .ring = true,
						       .seq = p.hdr.packet_seq_num,
						       .off = off,
						       .events = sent };

				hdr.events = p.hdr.events - sent;
				hdr.timestamp_begin = first;
				hdr.coro = coro;
				hdr.packet_seq_num = p.hdr.packet_seq_num + pc->extra;
				ret = rec_emit(r, i, &src, &hdr, p.data + off, p.len - off);
				if (ret) {
					free(p.data);
					snprintf(err, errlen, "%s", r->cb_err);
					return ret;
				}
				pc->seq1 = p.hdr.packet_seq_num + 1;
				pc->off = p.len;
				pc->events = p.hdr.events;
				pc->last_ts = p.hdr.timestamp_end;
				pc->extra++;
			}
			free(p.data);
		}
		if (pc->any && now > margin) {
			ret = rec_beacon(r, i, now - margin, err, errlen);
			if (ret)
				return ret;
		}
	}
	/* the samples' stream: its next packets are timed at a pass to come */
	if (r->pc[r->nrings].any && now > margin) {
		ret = rec_beacon(r, r->nrings, now - margin, err, errlen);
		if (ret)
			return ret;
	}
	ret = rec_sinks_pass(r, err, errlen);
	if (ret)
		return ret;
	return (int)(r->st.packets - before);
}

int rec_pass(struct rec *r, int64_t live_ns, int64_t *next_tick, char *err, size_t errlen)
{
	int64_t now, period = live_ns ? live_ns : (int64_t)r->flush_ns;

	if (!period || (now = rr_mono_ns()) < *next_tick)
		return rec_poll(r, err, errlen);
	*next_tick = now + period;
	return rec_tick(r, live_ns / 2 < 20000000 ? (uint64_t)live_ns / 2 : 20000000, err, errlen);
}

/*
 * The last pass over the samples; what the sampler lost since the last
 * packet, in one more packet, empty, at its end.
 */
static int rec_samples_end(struct rec *r, char *err, size_t errlen)
{
	struct rec_piece *pc = &r->pc[r->nrings];
	struct rip_packet hdr;
	int ret;

	ret = rec_samples(r, true, err, errlen);
	if (ret || !r->smp)
		return ret;
	r->st.samples = smp_taken(r->smp);
	r->st.samples_lost = smp_lost(r->smp);
	r->st.samples_merged = smp_merged(r->smp);
	if (!pc->any || pc->last.events_discarded >= r->st.samples_lost)
		return 0; /* none written (the run's summary alone counts them), or counted */
	hdr = pc->last;
	hdr.packet_seq_num++;
	hdr.events = 0;
	hdr.events_discarded = r->st.samples_lost;
	hdr.timestamp_begin = hdr.timestamp_end;
	static const struct rec_src own;

	ret = rec_emit(r, r->nrings, &own, &hdr, (const uint8_t *)&pc->last + sizeof(hdr), 0);
	if (ret)
		snprintf(err, errlen, "%s", r->cb_err);
	return ret;
}

/* The trace's index names the samples' type, its category and the threads that took them. */
static int rec_samples_info(struct rec *r, struct trace_info *info, char *err, size_t errlen)
{
	const struct trace_name *v;
	struct trace_name *names;
	size_t n;

	if (!r->smp || !smp_taken(r->smp))
		return 0;
	if (!info->types.t[TRACE_SAMPLE_ID].valid)
		info->types.count++;
	trace_sample_type(&info->types.t[TRACE_SAMPLE_ID]);
	if (!info->types.cats[RIP_CAT_SAMPLE][0])
		snprintf(info->types.cats[RIP_CAT_SAMPLE], RIP_CATEGORY_NAME_MAX, "%s",
			 TRACE_SAMPLE_CATEGORY);
	smp_names(r->smp, &v, &n);
	if (!n)
		return 0;
	names = realloc(info->names, (info->idx.nnames + n) * sizeof(*names));
	if (!names)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	/* before the slots' own entries, which name what the file holds at the end: they win */
	memmove(names + n, names, info->idx.nnames * sizeof(*names));
	memcpy(names, v, n * sizeof(*names));
	info->names = names;
	info->idx.nnames += (uint32_t)n;
	return 0;
}

int rec_info_now(void *arg, struct trace_info *info, char *err, size_t errlen)
{
	struct rec *r = arg;
	int ret = trace_info_from_file(&r->f, info, err, errlen);

	if (ret)
		return ret;
	if (rec_streamed(r))
		rec_clock_as_streamed(info);
	info->idx.lost_packets = r->st.lost_packets + r->st.corrupt + r->sub_missed_packets;
	info->idx.nstreams = r->nstreams;
	info->idx.events = r->st.events;
	return rec_samples_info(r, info, err, errlen);
}

/* The module map's count, as the program's loader hooks last published it (0: unreadable). */
uint64_t rec_info_gen(void *arg)
{
	struct rec *r = arg;
	char why[RR_ERR_MAX];
	uint32_t n;

	return rr_live_u32(&r->f, offsetof(struct rip_file_hdr, mod_count), &n, why, sizeof(why)) ?
		       0 :
		       n;
}

/* Events no ring counted (ev_lost): one more empty packet at the end of the first stream. */
static int rec_lost(struct rec *r, uint64_t lost, char *err, size_t errlen)
{
	struct rip_packet hdr;
	uint32_t i = 0;
	int ret;

	/* a ring's stream: the samples' (nrings) counts the samples' losses only */
	while (i < r->nstreams && i < r->nrings && !r->pc[i].any)
		i++;
	if (!lost || i == r->nstreams || i >= r->nrings)
		return 0; /* nothing lost, or no stream to carry it: the index alone counts it */
	/* the stream's next packet, empty, at the time its last one ended */
	hdr = r->pc[i].last;
	hdr.packet_seq_num++;
	hdr.events = 0;
	hdr.events_discarded += lost;
	hdr.timestamp_begin = hdr.timestamp_end;
	static const struct rec_src own;

	ret = rec_emit(r, i, &own, &hdr, (const uint8_t *)&r->pc[i].last + sizeof(hdr), 0);
	if (ret)
		snprintf(err, errlen, "%s", r->cb_err);
	return ret;
}

/*
 * Every sink's end (ok: the recording is whole; a sink that failed is ended
 * as if it were not).  The error of the first sink that is not optional;
 * an optional one that fails only fails.
 */
static int rec_sinks_end(struct rec *r, struct trace_info *info, bool ok, char *err, size_t errlen)
{
	char why[RR_ERR_MAX];
	int ret = 0, e;

	for (struct rec_sink *s = r->sinks; s; s = s->next) {
		e = s->ops->end(s, info, ok && !s->failed, why, sizeof(why));
		if (!e)
			continue;
		if (s->optional) {
			rec_sink_fail(r, s, why);
		} else if (!ret) {
			snprintf(err, errlen, "%s", why);
			ret = e;
		}
	}
	return ret;
}

int rec_finish(struct rec *r, char *err, size_t errlen)
{
	struct trace_info *info; /* 430 KB (its type table): not on the stack */
	char ignore[RR_ERR_MAX];
	int ret = 0, n, e;

	if (!r->sinks || r->finished)
		return 0;
	info = calloc(1, sizeof(*info));
	if (!info)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	/* A subscriber takes the rest from the consumer, never from the rings. */
	if (r->sub_fd >= 0)
		ret = rec_sub_finish(r, err, errlen);
	/* Everything closed, then the open packets, closed in the copy. */
	for (int pass = 0; !ret && r->sub_fd < 0 && pass < REC_DRAIN_PASSES; pass++) {
		n = rec_poll(r, err, errlen);
		if (n < 0)
			ret = n;
		if (n <= 0)
			break;
	}
	/* with subscribers: where the final pass stops in each ring, for a takeover */
	if (r->sub_fd < 0 && rec_srv_count(r) && !r->endcut)
		r->endcut = calloc(r->nrings, sizeof(*r->endcut));
	for (uint32_t i = 0; !ret && r->sub_fd < 0 && i < rec_rings_used(r); i++) {
		uint64_t written, consumed;

		if (r->bad[i])
			continue;
		/* no open packet taken: all from the packet the writer is on now */
		if (r->endcut && !rec_ring_pos(r, i, &written, &consumed))
			r->endcut[i] = (struct rec_cut){ .seq1 = written + 1 };
		ret = rec_consume(r, i, true, err, errlen);
	}
	if (!ret && r->sub_fd < 0)
		ret = rec_samples_end(r, err, errlen);
	/* a subscriber's: what the writers dropped while it recorded, and the consumer for it */
	r->st.discarded = rec_discarded_now(r) - r->st.discarded_before + r->sub_missed_events;
	/*
	 * What no ring counted, into the trace's packets too (all of it, as the
	 * index and the rings' own running totals count from the start).
	 */
	r->st.noring = rec_u64(r, REC_HDR(ev_lost));
	r->st.overflow = rec_u32(r, REC_HDR(ev_overflow));
	if (!ret)
		ret = rec_lost(r, r->st.noring, err, errlen);
	r->finished = true;
	/* The index, from the file; when even that fails, an empty one closes the trace. */
	e = trace_info_from_file(&r->f, info, ret ? ignore : err, ret ? sizeof(ignore) : errlen);
	if (e) {
		trace_info_free(info);
		memset(info, 0, sizeof(*info));
		if (!ret)
			ret = e;
	}
	if (!ret && rec_streamed(r))
		rec_clock_as_streamed(info);
	if (!ret) {
		info->idx.lost_packets = r->st.lost_packets + r->st.corrupt + r->sub_missed_packets;
		info->idx.nstreams = r->nstreams;
		info->idx.events = r->st.events;
		ret = rec_samples_info(r, info, err, errlen);
	}
	/* no new subscriber; one may take over and listen at this name (record/sub.h) */
	rec_srv_close(r);
	/* With an error above, the sinks close what was written, and that error is reported. */
	e = rec_sinks_end(r, info, !ret, err, errlen);
	if (!ret)
		ret = e;
	trace_info_free(info);
	free(info);
	return ret;
}

void rec_close(struct rec *r)
{
	sigjmp_buf jb;

	if (r->attached && r->f.wmap && !rr_guard_enter(&jb)) {
		uint32_t self = (uint32_t)getpid();

		/* We leave: writers stop waiting for us (only if no one took over). */
		__atomic_compare_exchange_n(&((struct rip_file_hdr *)r->f.wmap)->ev_consumer, &self,
					    0, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
		rr_guard_leave();
	}
	r->attached = false;
	rec_srv_close(r);
	if (r->sub_fd >= 0)
		close(r->sub_fd);
	r->sub_fd = -1;
	free(r->sub_buf);
	r->sub_buf = NULL;
	r->sub_len = r->sub_cap = 0;
	free(r->sub_disc);
	r->sub_disc = NULL;
	free(r->cut);
	free(r->endcut);
	r->cut = r->endcut = NULL;
	/* (a sink never ended removes what it wrote) */
	while (r->sinks) {
		struct rec_sink *s = r->sinks;

		r->sinks = s->next;
		s->ops->free(s);
	}
	if (r->f.fd >= 0 || r->f.map)
		rr_close(&r->f);
	r->f.fd = -1;
	rec_zfree(r->types, 1, sizeof(*r->types));
	rec_zfree(r->bad, r->nrings, sizeof(*r->bad));
	rec_zfree(r->discarded0, r->nrings, sizeof(*r->discarded0));
	rec_zfree(r->pc, r->nrings + 1, sizeof(*r->pc));
	smp_free(r->smp);
	r->smp = NULL;
	r->types = NULL;
	r->bad = NULL;
	r->discarded0 = NULL;
	r->pc = NULL;
}

void rec_cut_now(struct rec *r, struct rec_cut *cut)
{
	uint32_t n = rec_rings_used(r);
	char err[RR_ERR_MAX];

	memset(cut, 0, (size_t)r->nrings * sizeof(*cut));
	for (uint32_t i = 0; i < n; i++) {
		uint64_t written, consumed;
		struct ev_packet p;
		int ret;

		if (r->bad[i] || rec_ring_pos(r, i, &written, &consumed))
			continue;
		/* all before the open packet, then what it holds now */
		cut[i].seq1 = written + 1;
		ret = ev_peek_open(&r->f, r->types, i, UINT64_MAX, 0, &p, err, sizeof(err));
		if (ret == -EAGAIN && !rec_consume(r, i, false, err, sizeof(err)))
			ret = ev_peek_open(&r->f, r->types, i, UINT64_MAX, 0, &p, err,
					   sizeof(err));
		if (ret != 1)
			continue; /* none yet, or being switched: all of it is the subscriber's */
		cut[i].seq1 = p.hdr.packet_seq_num + 1;
		cut[i].off = p.len;
		cut[i].events = p.hdr.events;
		cut[i].ts = p.hdr.timestamp_end;
		free(p.data);
	}
}

/*
 * The packets of ring i the consumer before us took (below consumed) after
 * what it sent us (r->cut): read again from the ring, as a flight recorder
 * is, into the sinks; those the writer reused since are counted.
 */
static int rec_recover(struct rec *r, uint32_t i, char *err, size_t errlen)
{
	uint64_t written, consumed, from = r->cut[i].seq1 ? r->cut[i].seq1 - 1 : 0, have = 0;
	struct ev_packet *v = NULL;
	size_t nv = 0, torn = 0;
	int ret;

	if (rec_ring_pos(r, i, &written, &consumed))
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being read", r->f.path);
	if (consumed <= from)
		return 0;
	ret = ev_copy_ring(&r->f, r->types, i, &v, &nv, &torn, err, errlen);
	if (ret)
		return ret == -ENOMEM || ret == -EIO ? ret : 0;
	for (size_t k = 0; k < nv && !ret; k++) {
		uint64_t s = v[k].hdr.packet_seq_num;

		if (v[k].was_open || s < from || s >= consumed)
			continue;
		have++;
		ret = rec_packet(&v[k], r);
	}
	ev_packets_free(v, nv);
	if (ret) {
		snprintf(err, errlen, "%s", r->cb_err);
		return ret;
	}
	r->sub_gap += consumed - from - have;
	r->st.lost_packets += consumed - from - have;
	return 0;
}

int rec_take_over(struct rec *r, bool died, char *err, size_t errlen)
{
	uint32_t n = rec_rings_used(r);
	int ret;

	if (r->sub_fd >= 0)
		close(r->sub_fd);
	r->sub_fd = -1;
	/* the consumer named us in the file already: writers wait for us, not for it */
	ret = ev_consumer_open(&r->f, err, errlen);
	if (ret)
		return ret;
	r->attached = true;
	/*
	 * Our packets' sequence numbers go on from the last one the consumer
	 * sent us in each stream (it may have sent pieces: rec_tick).
	 */
	for (uint32_t i = 0; i < n && i < r->nrings; i++) {
		struct rec_piece *pc = &r->pc[i];
		uint64_t next = r->cut[i].seq1 ? r->cut[i].seq1 - 1 : 0;

		if (pc->any && r->cut[i].seq1 && pc->last.packet_seq_num + 1 > next)
			pc->extra = pc->last.packet_seq_num + 1 - next;
		/*
		 * What it sent of the open packet it stopped in is as a piece of
		 * ours: our ticks (rec_tick) and the packet's rest (rec_packet)
		 * go on from there, not from its start.
		 */
		if (r->cut[i].seq1 && r->cut[i].off > sizeof(struct rip_packet) &&
		    r->cut[i].events <= UINT32_MAX) {
			pc->seq1 = r->cut[i].seq1;
			pc->off = r->cut[i].off;
			pc->events = (uint32_t)r->cut[i].events;
			pc->last_ts = r->cut[i].ts;
		}
	}
	r->types_seen = rec_u32(r, REC_HDR(types_count));
	ret = ev_read_types_more(&r->f, r->types, err, errlen);
	if (ret)
		return ret;
	r->sub_died = died;
	for (uint32_t i = 0; died && i < n && i < r->nrings; i++) {
		ret = rec_recover(r, i, err, errlen);
		if (ret)
			return ret;
	}
	/* and a subscriber of ours may come */
	if (rec_srv_open(r, r->srv_err, sizeof(r->srv_err)))
		r->srv = NULL;
	r->sub_end = REC_SUB_END_TAKEN;
	return 0;
}

int rec_flush_to(struct rec *r, struct rec_sink *s, char *err, size_t errlen)
{
	uint32_t n = rec_rings_used(r);
	int ret;

	for (uint32_t i = 0; i < n; i++) {
		struct rec_piece *pc = &r->pc[i];
		struct rip_packet hdr;
		struct rec_src src;
		struct ev_packet p;
		char why[RR_ERR_MAX];
		bool part;

		if (r->bad[i])
			continue;
		ret = ev_peek_open(&r->f, r->types, i, pc->seq1 - 1, pc->off, &p, why, sizeof(why));
		if (ret == -EAGAIN) {
			/* a packet closed since the pass: to every sink first */
			ret = rec_consume(r, i, false, err, errlen);
			if (ret < 0)
				return ret;
			ret = ev_peek_open(&r->f, r->types, i, pc->seq1 - 1, pc->off, &p, why,
					   sizeof(why));
		}
		if (ret != 1)
			continue; /* nothing beyond what went out (or not readable: lost to it) */
		part = pc->seq1 && pc->seq1 - 1 == p.hdr.packet_seq_num;
		src = (struct rec_src){ .ring = true,
					.seq = p.hdr.packet_seq_num,
					.off = part ? pc->off : sizeof(p.hdr),
					.events = part ? pc->events : 0 };
		if (p.hdr.events <= src.events || p.len <= src.off) {
			free(p.data);
			continue;
		}
		hdr = p.hdr;
		hdr.events = p.hdr.events - (uint32_t)src.events;
		hdr.timestamp_begin = rec_piece_begin(
			r, &p, src.off, part ? pc->last_ts : p.hdr.timestamp_begin, &hdr.coro);
		hdr.packet_seq_num = p.hdr.packet_seq_num + pc->extra;
		hdr.packet_size = hdr.content_size = (uint64_t)(p.len - src.off + sizeof(hdr)) * 8;
		hdr.open = 0;
		r->src = &src;
		ret = s->ops->packet(s, i, &hdr, p.data + src.off, p.len - src.off, err, errlen);
		r->src = NULL;
		free(p.data);
		if (ret)
			return ret;
	}
	return 0;
}

int rec_silence(const char *path, char *err, size_t errlen)
{
	static const uint64_t all[RIP_CATEGORY_WORDS] = { ~0ull, ~0ull, ~0ull, ~0ull };
	struct rr_file f = { .fd = -1 };
	int ret;

	_Static_assert(RIP_CATEGORY_WORDS == 4, "all[] names every word");
	ret = rr_open(path, &f, err, errlen);
	if (ret == -ENOENT)
		return 0; /* gone already */
	if (ret)
		return ret;
	ret = rr_enable_set(&f, all, false, NULL, err, errlen);
	if (!ret && f.hdr.ev_rings)
		ret = rr_set_consumer(&f, 0, err, errlen);
	rr_close(&f);
	return ret;
}

uint64_t rec_lost_events(const struct rec *r)
{
	return r->st.discarded_before + r->st.discarded;
}

static bool rec_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.';
}

void rec_default_dir(char *buf, size_t len, const char *name, pid_t pid)
{
	const char *base = strrchr(name, '/');
	char clean[64];
	size_t n = 0;

	base = base ? base + 1 : name;
	for (; *base && n < sizeof(clean) - 1; base++)
		clean[n++] = rec_name_char(*base) ? *base : '_';
	clean[n] = 0;
	if (!n || clean[0] == '.')
		snprintf(clean, sizeof(clean), "prog");
	snprintf(buf, len, "rip-%s-%d", clean, (int)pid);
}
