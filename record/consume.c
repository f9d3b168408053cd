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
 * consumer that left.
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

static uint32_t rec_rings_used(struct rec *r)
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

int rec_attach(struct rec *r, const char *path, char *err, size_t errlen)
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
	/* one more: the stream of the CPU samples may come after every ring's */
	r->pc = rec_zalloc(r->nrings + 1, sizeof(*r->pc));
	if (!r->types || !r->bad || !r->discarded0 || !r->pc) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto err_close;
	}
	ret = ev_consumer_open(&r->f, err, errlen);
	if (ret)
		goto err_close;
	r->attached = true;
	r->types_seen = rec_u32(r, REC_HDR(types_count));
	/* zero pages so far (rec_zalloc): only the types in use are written */
	ret = ev_read_types_more(&r->f, r->types, err, errlen);
	if (ret)
		goto err_close;
	/* Rings used so far (the others have discarded nothing yet). */
	for (uint32_t i = 0, n = rec_rings_used(r); i < n; i++) {
		r->discarded0[i] = rec_ring_discarded(r, i);
		r->st.discarded_before += r->discarded0[i];
	}
	r->st.noring_before = rec_u64(r, REC_HDR(ev_lost));
	r->st.discarded_before += r->st.noring_before;
	return 0;

err_close:
	rec_close(r);
	return ret;
}

int rec_open_trace(struct rec *r, const char *dir, char *err, size_t errlen)
{
	int ret = trace_w_open(dir, &r->w, err, errlen);

	if (!ret)
		snprintf(r->dir, sizeof(r->dir), "%s", dir);
	return ret;
}

void rec_defer_sync(struct rec *r)
{
	r->nosync = true;
	if (r->w)
		trace_w_nosync(r->w);
}

/* The copy of the ring file in the trace (keep_ring); ring_err says why not. */
static void rec_keep_ring(struct rec *r)
{
	char path[PATH_MAX + 16];

	if (snprintf(path, sizeof(path), "%s/%s", r->dir, RR_TRACE_RING) >= (int)sizeof(path)) {
		rr_fail(r->ring_err, sizeof(r->ring_err), -ENAMETOOLONG, "%s: path too long", r->dir);
		return;
	}
	if (!rr_copy(&r->f, path, !r->nosync, r->ring_err, sizeof(r->ring_err)))
		r->ring_kept = true;
}

/* Streaming to relayd failed: say why once; the local trace goes on. */
static void rec_rly_fail(struct rec *r, const char *why)
{
	if (r->rly_failed)
		return;
	r->rly_failed = true;
	snprintf(r->rly_err, sizeof(r->rly_err), "%s", why);
}

static bool rec_rly_on(const struct rec *r)
{
	return r->rly && !r->rly_failed;
}

/*
 * Streamed: lttng-relayd and its live readers get the clock the metadata
 * declares at the start, from the header's rate and base alone (the
 * calibration pairs come later, and CTF cannot change a clock); the local
 * trace keeps that same clock, so that both copies time every event alike.
 */
static void rec_clock_as_streamed(struct trace_info *info)
{
	info->idx.file.clock_npairs = 0;
	memset(info->idx.file.clock_pairs, 0, sizeof(info->idx.file.clock_pairs));
}

static int rec_declare(struct rec *r, char *err, size_t errlen);

/* The head of the metadata and the types known, to a new relayd session. */
static int rec_rly_head(struct rec *r, char *err, size_t errlen)
{
	struct trace_info *info = calloc(1, sizeof(*info)); /* 430 KB: not on the stack */
	char *text = NULL;
	size_t len = 0;
	FILE *out;
	int ret;

	if (!info)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	ret = trace_info_from_file(&r->f, info, err, errlen);
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
	ret = rly_metadata(r->rly, text, len, err, errlen);
	memset(r->declared, 0, EV_MAX_TYPES * sizeof(*r->declared));
	r->ndeclared = 0;
	if (!ret)
		ret = rec_declare(r, err, errlen);
out_text:
	free(text);
out_info:
	trace_info_free(info);
	free(info);
	return ret;
}

#define REC_RLY_RECONNECTS 2	  /* new sessions after relayd was lost, at most */
#define REC_RLY_ATTEMPTS 4	  /* connections tried each time: 0.25, 0.5, 1, 2 s apart */
#define REC_RLY_BACKOFF_MS 250

/*
 * relayd was lost (why): connect again into a new session, a bounded number
 * of times; true if streaming goes on (what was in flight is lost to
 * relayd's copies, which rec_relayd_gap then says), false if it stops.
 */
static bool rec_rly_lost(struct rec *r, const char *why)
{
	char e[RR_ERR_MAX];

	if (r->rly_failed)
		return false;
	if (r->rly_reconnects >= REC_RLY_RECONNECTS ||
	    rly_reconnect(r->rly, REC_RLY_ATTEMPTS, REC_RLY_BACKOFF_MS, e, sizeof(e)) ||
	    rec_rly_head(r, e, sizeof(e))) {
		rec_rly_fail(r, why);
		return false;
	}
	r->rly_reconnects++;
	snprintf(r->rly_gap, sizeof(r->rly_gap),
		 "%s; connected again: relayd's copy goes on in %s, without what was in flight",
		 why, rly_path(r->rly));
	return true;
}

/* The TSDL of the types relayd has not seen yet, before a packet that may use them. */
static int rec_declare(struct rec *r, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out;
	int ret = 0;

	if (r->types->count == r->ndeclared)
		return 0;
	out = open_memstream(&text, &len);
	if (!out)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	for (uint32_t id = 0; id < EV_MAX_TYPES && !ret; id++) {
		if (!r->types->t[id].valid || r->declared[id])
			continue;
		ret = ctf_write_event(out, &r->types->t[id]);
		r->declared[id] = true;
		r->ndeclared++;
	}
	if (fclose(out) && !ret)
		ret = -ENOMEM;
	if (!ret)
		ret = rly_metadata(r->rly, text, len, err, errlen);
	else
		rr_fail(err, errlen, ret, "event type %u cannot be described in TSDL", 0);
	free(text);
	return ret;
}

/*
 * Write one packet, hdr then blen bytes of events at body, to the trace and
 * to relayd.  body lies inside a packet copy, after at least a header's
 * worth of bytes (trace_w_packet takes the bytes after the header).
 */
static int rec_emit(struct rec *r, uint32_t ring, const struct rip_packet *hdr0,
		    const uint8_t *body, size_t blen)
{
	struct rip_packet hdr = *hdr0;
	char why[RR_ERR_MAX];
	int ret;

	hdr.packet_size = hdr.content_size = (uint64_t)(sizeof(hdr) + blen) * 8;
	hdr.open = 0;
	if (r->rly) {
		/*
		 * Never before a beacon sent for the stream: live readers took it
		 * as "nothing before this".  The events are after it (rec_tick), and
		 * compact timestamps decode the same from any base between the
		 * event before and theirs.
		 */
		uint64_t after = rly_stream_end(r->rly, ring);

		if (hdr.timestamp_begin < after)
			hdr.timestamp_begin = after;
		if (hdr.timestamp_end < hdr.timestamp_begin)
			hdr.timestamp_end = hdr.timestamp_begin;
	}
	if (r->w) {
		struct ev_packet p = { .ring = ring, .hdr = hdr, .len = sizeof(hdr) + blen };

		/* trace_w_packet writes p.hdr, then the bytes after the header */
		p.data = (uint8_t *)body - sizeof(hdr);
		ret = trace_w_packet(r->w, &p, r->cb_err, sizeof(r->cb_err));
		if (ret) {
			r->cb_failed = true;
			return ret;
		}
	}
	if (rec_rly_on(r)) {
		ret = rec_declare(r, why, sizeof(why));
		if (!ret)
			ret = rly_packet(r->rly, ring, &hdr, body, blen, why, sizeof(why));
		if (ret && rec_rly_lost(r, why)) {
			r->rly_events = r->rly_packets = 0; /* what this session holds */
			ret = rec_declare(r, why, sizeof(why));
			if (!ret)
				ret = rly_packet(r->rly, ring, &hdr, body, blen, why, sizeof(why));
		}
		if (ret) {
			rec_rly_fail(r, why);
			if (!r->w) {
				snprintf(r->cb_err, sizeof(r->cb_err), "%s", why);
				r->cb_failed = true;
				return ret;
			}
		} else {
			r->rly_events += hdr.events;
			r->rly_packets++;
		}
	}
	r->pc[ring].last = hdr;
	r->pc[ring].any = true;
	if (ring >= r->nstreams)
		r->nstreams = ring + 1;
	r->st.packets++;
	r->st.events += hdr.events;
	r->st.bytes += sizeof(hdr) + blen;
	return 0;
}

static int rec_packet(const struct ev_packet *p, void *arg)
{
	struct rec *r = arg;
	struct rec_piece *pc;
	struct rip_packet hdr = p->hdr;
	const uint8_t *body = p->data + sizeof(hdr);
	size_t blen = p->len - sizeof(hdr);

	if (p->ring >= r->f.hdr.ev_rings || p->len < sizeof(hdr))
		return 0;
	pc = &r->pc[p->ring];
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
		hdr.timestamp_begin = pc->last_ts;
	}
	hdr.packet_seq_num += pc->extra;
	return rec_emit(r, p->ring, &hdr, body, blen);
}

int rec_relayd(struct rec *r, struct rly *rly, char *err, size_t errlen)
{
	r->declared = calloc(EV_MAX_TYPES, sizeof(*r->declared));
	if (!r->declared) {
		rly_free(rly);
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	}
	r->rly = rly;
	return rec_rly_head(r, err, errlen);
}

const char *rec_relayd_error(const struct rec *r)
{
	return r->rly_failed ? r->rly_err : NULL;
}

const char *rec_relayd_gap(const struct rec *r)
{
	return r->rly_gap[0] ? r->rly_gap : NULL;
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

/* The indexes queued for relayd go out at the end of each pass. */
static int rec_rly_flush(struct rec *r, char *err, size_t errlen)
{
	char why[RR_ERR_MAX];

	if (!rec_rly_on(r) || !rly_flush(r->rly, why, sizeof(why)) || rec_rly_lost(r, why))
		return 0;
	if (r->w)
		return 0;
	snprintf(err, errlen, "%s", why);
	return -EIO;
}

/*
 * The CPU samples' pass when one is due (always with final): the collector
 * is made once the file says the sampler started.  An error that only
 * costs the samples stops taking them (smp_err says why); -EIO (the file
 * shrank) is returned.
 */
static int rec_samples(struct rec *r, bool final, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");
	char why[RR_ERR_MAX];
	uint32_t hz;
	int ret;

	if (r->smp_off)
		return 0;
	if (!r->smp) {
		if (rr_live_u32(&r->f, offsetof(struct rip_file_hdr, sample_hz), &hz, why,
				sizeof(why)) || !hz)
			return 0;
		ret = rr_live_hdr(&r->f, &r->f.hdr, why, sizeof(why));
		if (!ret)
			ret = smp_new(&r->f, r->w ? r->dir : tmp && *tmp ? tmp : "/tmp", &r->smp,
				      why, sizeof(why));
		if (ret) {
			snprintf(r->smp_err, sizeof(r->smp_err), "%s", why);
			r->smp_off = true;
			return 0;
		}
	}
	ret = smp_poll(r->smp, final, why, sizeof(why));
	if (ret == -EIO) {
		snprintf(err, errlen, "%s", why);
		return ret;
	}
	if (ret < 0) {
		snprintf(r->smp_err, sizeof(r->smp_err), "%s", why);
		r->smp_off = true;
	}
	return 0;
}

int rec_poll(struct rec *r, char *err, size_t errlen)
{
	uint32_t n = rec_rings_used(r);
	uint64_t before = r->st.packets + r->st.lost_packets + r->st.corrupt;
	int ret;

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
	ret = rec_rly_flush(r, err, errlen);
	if (ret)
		return ret;
	return (int)(r->st.packets + r->st.lost_packets + r->st.corrupt - before);
}

int rec_tick(struct rec *r, uint64_t margin_ns, char *err, size_t errlen)
{
	uint64_t now = rr_now_ticks(&r->f.hdr), margin, before;
	uint32_t n;
	int ret;

	if (!rec_rly_on(r))
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

			if (p.hdr.events > sent && p.len > off) {
				struct rip_packet hdr = p.hdr;

				hdr.events = p.hdr.events - sent;
				hdr.timestamp_begin = part ? pc->last_ts : p.hdr.timestamp_begin;
				hdr.packet_seq_num = p.hdr.packet_seq_num + pc->extra;
				ret = rec_emit(r, i, &hdr, p.data + off, p.len - off);
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
		if (rec_rly_on(r) && pc->any && now > margin &&
		    rly_beacon(r->rly, i, now - margin, why, sizeof(why)) && !rec_rly_lost(r, why)) {
			if (!r->w) {
				snprintf(err, errlen, "%s", why);
				return -EIO;
			}
		}
	}
	ret = rec_rly_flush(r, err, errlen);
	if (ret)
		return ret;
	return (int)(r->st.packets - before);
}

static int rec_smp_packet(uint32_t stream, const struct rip_packet *hdr, const uint8_t *body,
			  size_t blen, void *arg)
{
	struct rec *r = arg;

	return rec_emit(r, stream, hdr, body, blen);
}

/* The last pass over the samples, and every sample, as the stream after the rings'. */
static int rec_samples_end(struct rec *r, char *err, size_t errlen)
{
	uint32_t stream = r->nstreams;
	int ret;

	ret = rec_samples(r, true, err, errlen);
	if (ret || !r->smp)
		return ret;
	r->st.samples = smp_taken(r->smp);
	r->st.samples_lost = smp_lost(r->smp);
	if (!r->st.samples)
		return 0;
	if (stream >= TRACE_MAX_STREAMS || stream > r->nrings) {
		snprintf(r->smp_err, sizeof(r->smp_err),
			 "no stream left for the CPU samples (%u streams)", stream);
		r->st.samples_lost += r->st.samples;
		r->st.samples = 0;
		return 0;
	}
	/* the type, for relayd's metadata (rec_declare) */
	trace_sample_type(&r->types->t[TRACE_SAMPLE_ID]);
	ret = smp_emit(r->smp, stream, r->st.samples_lost, rec_smp_packet, r, err, errlen);
	if (ret && r->cb_failed)
		snprintf(err, errlen, "%s", r->cb_err);
	return ret;
}

/* The trace's index names the samples' type, its category and the threads that took them. */
static int rec_samples_info(struct rec *r, struct trace_info *info, char *err, size_t errlen)
{
	const struct trace_name *v;
	struct trace_name *names;
	size_t n;

	if (!r->smp || !r->st.samples)
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

/* Events no ring counted (ev_lost): one more empty packet at the end of the first stream. */
static int rec_lost(struct rec *r, uint64_t lost, char *err, size_t errlen)
{
	struct rip_packet hdr;
	uint32_t i = 0;
	int ret;

	while (i < r->nstreams && !r->pc[i].any)
		i++;
	if (!lost || i == r->nstreams)
		return 0; /* nothing lost, or no stream to carry it: the index alone counts it */
	/* the stream's next packet, empty, at the time its last one ended */
	hdr = r->pc[i].last;
	hdr.packet_seq_num++;
	hdr.events = 0;
	hdr.events_discarded += lost;
	hdr.timestamp_begin = hdr.timestamp_end;
	ret = rec_emit(r, i, &hdr, (const uint8_t *)&r->pc[i].last + sizeof(hdr), 0);
	if (ret)
		snprintf(err, errlen, "%s", r->cb_err);
	return ret;
}

/*
 * The end for relayd: the index in the metadata, then every stream closed.
 * info's counts become the session's (the caller is done with them).
 */
static void rec_relayd_end(struct rec *r, struct trace_info *info)
{
	char why[RR_ERR_MAX], *text = NULL;
	uint8_t *idx = NULL;
	size_t len = 0, ilen = 0;
	FILE *out;
	int ret;

	if (!rec_rly_on(r))
		return;
	if (r->rly_reconnects) {
		/* a session after relayd was lost holds the rest only: its index says so */
		info->idx.events = r->rly_events;
		info->idx.lost_packets += r->st.packets - r->rly_packets;
	}
	ret = trace_index_pack(info, &idx, &ilen, why, sizeof(why));
	if (!ret) {
		out = open_memstream(&text, &len);
		if (!out) {
			ret = rr_fail(why, sizeof(why), -ENOMEM, "out of memory");
		} else {
			ret = ctf_write_index_env(out, info, idx, ilen);
			if (fclose(out) && !ret)
				ret = -ENOMEM;
			if (ret)
				rr_fail(why, sizeof(why), ret, "cannot write the index");
		}
	}
	if (!ret)
		ret = rly_metadata(r->rly, text, len, why, sizeof(why));
	if (!ret)
		ret = rly_close(r->rly, 30000, r->rly_linger_ms, why, sizeof(why));
	if (ret)
		rec_rly_fail(r, why);
	free(idx);
	free(text);
}

int rec_finish(struct rec *r, char *err, size_t errlen)
{
	struct trace_info *info; /* 430 KB (its type table): not on the stack */
	struct trace_w *w = r->w;
	int ret = 0, n;

	if (!w && !r->rly)
		return 0;
	info = calloc(1, sizeof(*info));
	if (!info)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	/* Everything closed, then the open packets, closed in the copy. */
	for (int pass = 0; pass < REC_DRAIN_PASSES; pass++) {
		n = rec_poll(r, err, errlen);
		if (n < 0)
			ret = n;
		if (n <= 0)
			break;
	}
	for (uint32_t i = 0; !ret && i < rec_rings_used(r); i++)
		if (!r->bad[i])
			ret = rec_consume(r, i, true, err, errlen);
	if (!ret)
		ret = rec_samples_end(r, err, errlen);
	r->st.discarded = rec_discarded_now(r) - r->st.discarded_before;
	/*
	 * What no ring counted, into the trace's packets too (all of it, as the
	 * index and the rings' own running totals count from the start).
	 */
	r->st.noring = rec_u64(r, REC_HDR(ev_lost));
	if (!ret)
		ret = rec_lost(r, r->st.noring, err, errlen);
	r->w = NULL;
	r->finished = true;
	if (ret) {
		/* Close what was written; the error above is the one to report. */
		char ignore[RR_ERR_MAX];

		if (w && !trace_info_from_file(&r->f, info, ignore, sizeof(ignore)))
			trace_w_finish(w, info, ignore, sizeof(ignore));
		goto out_info;
	}
	ret = trace_info_from_file(&r->f, info, err, errlen);
	if (!ret && rec_rly_on(r))
		rec_clock_as_streamed(info);
	if (ret) {
		char ignore[RR_ERR_MAX];

		trace_info_free(info);
		memset(info, 0, sizeof(*info));
		if (w)
			trace_w_finish(w, info, ignore, sizeof(ignore));
		rec_rly_fail(r, err);
		goto out_info;
	}
	info->idx.lost_packets = r->st.lost_packets + r->st.corrupt;
	info->idx.nstreams = r->nstreams;
	info->idx.events = r->st.events;
	ret = rec_samples_info(r, info, err, errlen);
	if (ret) {
		char ignore[RR_ERR_MAX];

		if (w)
			trace_w_finish(w, info, ignore, sizeof(ignore));
		goto out_info;
	}
	if (w)
		ret = trace_w_finish(w, info, err, errlen);
	if (w && !ret && r->keep_ring)
		rec_keep_ring(r);
	rec_relayd_end(r, info);
out_info:
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
	if (r->w) {
		/* Never finished: remove what was written. */
		trace_w_abort(r->w);
		r->w = NULL;
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
	free(r->declared);
	rly_free(r->rly);
	r->types = NULL;
	r->bad = NULL;
	r->discarded0 = NULL;
	r->pc = NULL;
	r->declared = NULL;
	r->rly = NULL;
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
