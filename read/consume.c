/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/consume.c - the streaming loop of `rip run` and `rip record`.
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
#include <unistd.h>

#include "read/consume.h"

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
	if (ev_read_types(&r->f, r->types, err, sizeof(err))) {
		rec_warn(r, "%s", err);
		return false;
	}
	r->types_seen = n;
	return true;
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
	r->types = calloc(1, sizeof(*r->types));
	r->bad = calloc(r->f.hdr.ev_rings, sizeof(*r->bad));
	r->discarded0 = calloc(r->f.hdr.ev_rings, sizeof(*r->discarded0));
	if (!r->types || !r->bad || !r->discarded0) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto err_close;
	}
	ret = ev_consumer_open(&r->f, err, errlen);
	if (ret)
		goto err_close;
	r->attached = true;
	r->types_seen = rec_u32(r, REC_HDR(types_count));
	ret = ev_read_types(&r->f, r->types, err, errlen);
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

static int rec_packet(const struct ev_packet *p, void *arg)
{
	struct rec *r = arg;
	int ret;

	ret = trace_w_packet(r->w, p, r->cb_err, sizeof(r->cb_err));
	if (ret) {
		r->cb_failed = true;
		return ret;
	}
	r->st.packets++;
	r->st.events += p->hdr.events;
	r->st.bytes += p->len;
	return 0;
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

int rec_poll(struct rec *r, char *err, size_t errlen)
{
	uint32_t n = rec_rings_used(r);
	uint64_t before = r->st.packets + r->st.lost_packets + r->st.corrupt;
	int ret;

	rec_refresh_types(r);
	for (uint32_t i = 0; i < n; i++) {
		if (r->bad[i])
			continue;
		ret = rec_consume(r, i, false, err, errlen);
		if (ret < 0)
			return ret;
	}
	return (int)(r->st.packets + r->st.lost_packets + r->st.corrupt - before);
}

int rec_finish(struct rec *r, char *err, size_t errlen)
{
	struct trace_info info;
	struct trace_w *w = r->w;
	int ret = 0, n;

	if (!w)
		return 0;
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
	r->st.discarded = rec_discarded_now(r) - r->st.discarded_before;
	/*
	 * What no ring counted, into the trace's packets too (all of it, as the
	 * index and the rings' own running totals count from the start).
	 */
	r->st.noring = rec_u64(r, REC_HDR(ev_lost));
	if (!ret)
		ret = trace_w_lost(w, r->st.noring, err, errlen);
	r->w = NULL;
	r->finished = true;
	if (ret) {
		/* Close what was written; the error above is the one to report. */
		char ignore[RR_ERR_MAX];

		memset(&info, 0, sizeof(info));
		if (!trace_info_from_file(&r->f, &info, ignore, sizeof(ignore)))
			trace_w_finish(w, &info, ignore, sizeof(ignore));
		trace_info_free(&info);
		return ret;
	}
	ret = trace_info_from_file(&r->f, &info, err, errlen);
	if (ret) {
		char ignore[RR_ERR_MAX];

		trace_info_free(&info);
		memset(&info, 0, sizeof(info));
		trace_w_finish(w, &info, ignore, sizeof(ignore));
		return ret;
	}
	info.idx.lost_packets = r->st.lost_packets + r->st.corrupt;
	ret = trace_w_finish(w, &info, err, errlen);
	trace_info_free(&info);
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
	free(r->types);
	free(r->bad);
	free(r->discarded0);
	r->types = NULL;
	r->bad = NULL;
	r->discarded0 = NULL;
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
