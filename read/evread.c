/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/evread.c - reading event rings from outside the writing process.
 *
 * A packet is copied under the protocol of lib/events.c: its sequence
 * number and open flag are read before and after the copy, and a packet
 * that changed in between (the writer came round and reused it) is dropped.
 * Of the open packet only the committed prefix (content_size, read with
 * acquire) is taken, and the copy is closed: decoding it gives the time of
 * its last event and how many there are.  Every header and every event is
 * bounds-checked; the decoder rebuilds full timestamps from the 27-bit
 * compact ones exactly as a CTF reader does.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "read/evread.h"


/* ---- types ------------------------------------------------------------------------ */

int ev_type_load(const struct rip_evtype *e, struct ev_type *t)
{
	memset(t, 0, sizeof(*t));
	if (e->id >= EV_MAX_TYPES || e->nfields > RIP_EVENT_MAX_FIELDS ||
	    e->category >= RIP_CATEGORIES)
		return -EBADMSG;
	t->id = e->id;
	t->category = e->category;
	t->nfields = e->nfields;
	memcpy(t->name, e->name, sizeof(t->name));
	t->name[sizeof(t->name) - 1] = 0;
	rr_printable(t->name);
	if (!t->name[0])
		return -EBADMSG;
	/* a kind: "kind:NAME" with no fields (rip/resource.h); other flags are not ours to judge */
	t->flags = e->flags;
	if ((t->flags & RIP_EVTYPE_KIND) && (e->nfields || strncmp(t->name, "kind:", 5)))
		t->flags = 0;
	memcpy(t->desc, e->desc, sizeof(t->desc));
	t->desc[sizeof(t->desc) - 1] = 0;
	rr_printable(t->desc);
	for (uint32_t i = 0; i < e->nfields; i++) {
		uint32_t ty = e->fields[i].type;

		t->fields[i] = e->fields[i];
		t->fields[i].name[sizeof(t->fields[i].name) - 1] = 0;
		rr_printable(t->fields[i].name);
		if (ty < RIP_FT_U8 || ty > RIP_FT_HEX64_ARRAY)
			return -EBADMSG;
		if (RIP_FT_IS_TAIL(ty)) {
			if (i + 1 != e->nfields)
				return -EBADMSG;
			t->string = ty == RIP_FT_STRING;
			t->array = ty == RIP_FT_HEX64_ARRAY;
			continue;
		}
		t->fixed += rip_field_size(ty);
	}
	t->valid = true;
	return 0;
}

int ev_read_types(struct rr_file *f, struct ev_types *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	return ev_read_types_more(f, out, err, errlen);
}

int ev_read_types_more(struct rr_file *f, struct ev_types *out, char *err, size_t errlen)
{
	sigjmp_buf jb;
	uint32_t n;

	if (f->legacy_raw || !f->hdr.types_cap)
		return 0;
	/* Pairs with the release store of types_count in rip_type_write. */
	if (rr_live_u32(f, offsetof(struct rip_file_hdr, types_count), &n, err, errlen))
		return -EIO;
	if (n > f->hdr.types_cap)
		return rr_fail(err, errlen, -EBADMSG, "%s: corrupt: %u event types in a table of %u",
			       f->path, n, f->hdr.types_cap);
	if (rr_guard_enter(&jb))
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being read", f->path);
	for (uint32_t i = 0; i < n; i++) {
		struct rip_evtype e;
		struct ev_type t;

		memcpy(&e, f->map + f->hdr.types_off + (size_t)i * RIP_EVTYPE_SIZE, sizeof(e));
		if (ev_type_load(&e, &t)) {
			rr_guard_leave();
			return rr_fail(err, errlen, -EBADMSG, "%s: corrupt event type entry %u",
				       f->path, i);
		}
		if (!out->t[t.id].valid) {
			out->t[t.id] = t;
			out->count++;
		}
	}
	for (uint32_t i = 0; i < RIP_CATEGORIES; i++) {
		memcpy(out->cats[i], f->map + f->hdr.cats_off + (size_t)i * RIP_CATEGORY_NAME_MAX,
		       RIP_CATEGORY_NAME_MAX);
		out->cats[i][RIP_CATEGORY_NAME_MAX - 1] = 0;
		rr_printable(out->cats[i]);
	}
	rr_guard_leave();
	return 0;
}

/* ---- decoding ----------------------------------------------------------------------- */

static uint64_t ev_get(const uint8_t *p, uint32_t n)
{
	uint64_t v = 0;

	memcpy(&v, p, n); /* the files are little-endian, as the writer (checked at open) */
	return v;
}

static uint64_t ev_sign(uint64_t v, uint32_t type)
{
	switch (type) {
	case RIP_FT_S8:
		return (uint64_t)(int64_t)(int8_t)v;
	case RIP_FT_S16:
		return (uint64_t)(int64_t)(int16_t)v;
	case RIP_FT_S32:
		return (uint64_t)(int64_t)(int32_t)v;
	default:
		return v;
	}
}

int ev_walk_at(const struct ev_types *types, const uint8_t *data, size_t len, uint64_t ts_begin,
	       size_t at, uint64_t *at_ts, uint64_t *last_ts, uint32_t *coro)
{
	const struct ev_type *sw = &types->t[RIP_EV_CORO_SWITCH];
	size_t off = RIP_PACKET_HDR_SIZE;
	uint64_t ts = ts_begin;
	bool found = false;
	int count = 0, swsize = 0;

	if (len < RIP_PACKET_HDR_SIZE)
		return -1;
	/* the switch type, as readers know it (read/evsource.c): its first field is "to" */
	if (coro && sw->valid && sw->nfields >= 1 && !strcmp(sw->name, "rip:coro_switch"))
		swsize = (int)rip_field_size(sw->fields[0].type);
	while (off < len) {
		const struct ev_type *t;
		uint32_t id;
		int hl = ev_header(data, len, off, &id, &ts);

		if (hl <= 0)
			return -1;
		if (off == at) {
			*at_ts = ts;
			found = true;
		}
		off += (size_t)hl;
		if (id >= EV_MAX_TYPES || !types->t[id].valid)
			return -1;
		t = &types->t[id];
		if (len - off < t->fixed)
			return -1;
		/* a switch before at moves the coroutine the piece from at begins in */
		if (id == RIP_EV_CORO_SWITCH && swsize > 0 && swsize <= 4 &&
		    (size_t)swsize <= t->fixed && !found)
			*coro = (uint32_t)ev_get(data + off, (unsigned)swsize);
		off += t->fixed;
		if (t->string) {
			size_t max = len - off < RIP_STRING_MAX ? len - off : RIP_STRING_MAX;
			const uint8_t *nul = memchr(data + off, 0, max);

			if (!nul)
				return -1;
			off += (size_t)(nul - (data + off)) + 1;
		} else if (t->array) {
			uint32_t cnt;

			if (len - off < 4 || (cnt = (uint32_t)ev_get(data + off, 4)) > RIP_ARRAY_MAX ||
			    len - off - 4 < (size_t)cnt * 8)
				return -1;
			off += 4 + (size_t)cnt * 8;
		}
		count++;
	}
	*last_ts = ts;
	if (!found)
		*at_ts = ts;
	return count;
}

int ev_walk(const struct ev_types *types, const uint8_t *data, size_t len, uint64_t ts_begin,
	    uint64_t *last_ts)
{
	uint64_t unused;

	return ev_walk_at(types, data, len, ts_begin, 0, &unused, last_ts, NULL);
}

int ev_decode(const struct ev_types *types, const uint8_t *data, size_t len, uint64_t ts_begin,
	      ev_cb cb, void *arg, char *err, size_t errlen)
{
	size_t off = RIP_PACKET_HDR_SIZE;
	uint64_t ts = ts_begin;
	int count = 0, ret;

	if (len < RIP_PACKET_HDR_SIZE)
		return rr_fail(err, errlen, -EBADMSG, "packet shorter than its header");
	while (off < len) {
		struct ev_event e;
		uint32_t id;
		int hl;

		/* no memset: v[] is written for each field the type has, the rest here */
		e.str = NULL;
		e.arr = NULL;
		e.narr = 0;
		e.offset = off;
		hl = ev_header(data, len, off, &id, &ts);
		if (hl <= 0)
			return rr_fail(err, errlen, -EBADMSG, "%sevent header cut at byte %zu",
				       hl ? "extended " : "", off);
		off += (size_t)hl;
		if (id >= EV_MAX_TYPES || !types->t[id].valid)
			return rr_fail(err, errlen, -EBADMSG, "unknown event id %u at byte %zu", id,
				       e.offset);
		e.type = &types->t[id];
		e.ts = ts;
		if (len - off < e.type->fixed)
			return rr_fail(err, errlen, -EBADMSG, "event %s cut at byte %zu",
				       e.type->name, e.offset);
		for (uint32_t i = 0; i < e.type->nfields; i++) {
			uint32_t ty = e.type->fields[i].type, n;

			if (ty == RIP_FT_STRING) {
				size_t max = len - off < RIP_STRING_MAX ? len - off : RIP_STRING_MAX;
				const uint8_t *nul = memchr(data + off, 0, max);

				if (!nul)
					return rr_fail(err, errlen, -EBADMSG,
						       "unterminated string in %s at byte %zu",
						       e.type->name, e.offset);
				e.str = (const char *)data + off;
				off += (size_t)(nul - (data + off)) + 1;
				break;
			}
			if (ty == RIP_FT_HEX64_ARRAY) {
				uint32_t cnt;

				if (len - off < 4 ||
				    (cnt = (uint32_t)ev_get(data + off, 4)) > RIP_ARRAY_MAX ||
				    len - off - 4 < (size_t)cnt * 8)
					return rr_fail(err, errlen, -EBADMSG,
						       "bad array in %s at byte %zu", e.type->name,
						       e.offset);
				e.narr = cnt;
				e.arr = data + off + 4;
				off += 4 + (size_t)cnt * 8;
				break;
			}
			n = rip_field_size(ty);
			e.v[i] = ev_sign(ev_get(data + off, n), ty);
			off += n;
		}
		count++;
		if (cb) {
			ret = cb(&e, arg);
			if (ret)
				return ret;
		}
	}
	return count;
}

int ev_check_packet(const struct rip_packet *p, size_t avail, char *err, size_t errlen)
{
	if (p->magic != RIP_CTF_MAGIC)
		return rr_fail(err, errlen, -EBADMSG, "bad packet magic 0x%08x", p->magic);
	if (p->packet_size % 8 || p->content_size % 8 || p->packet_size < p->content_size ||
	    p->content_size < RIP_PACKET_HDR_SIZE * 8 || p->packet_size / 8 > avail)
		return rr_fail(err, errlen, -EBADMSG,
			       "bad packet sizes (content %llu bits, packet %llu bits, %zu bytes "
			       "there)",
			       (unsigned long long)p->content_size, (unsigned long long)p->packet_size,
			       avail);
	if (p->timestamp_end && p->timestamp_end < p->timestamp_begin)
		return rr_fail(err, errlen, -EBADMSG, "packet ends before it begins");
	return 0;
}

/* ---- copying packets out of a ring --------------------------------------------------- */

struct ev_last {
	uint64_t ts;
	uint32_t n;
};

static const struct rip_evring *ev_ctl(struct rr_file *f, uint32_t ring)
{
	return (const struct rip_evring *)(f->map + f->hdr.ev_ctl_off +
					   (size_t)ring * RIP_EVRING_SIZE);
}

/* Packets per ring and bytes per packet of ring (big and small rings differ). */
static uint32_t ev_npk(const struct rr_file *f, uint32_t ring)
{
	return rip_evring_bytes(&f->hdr, ring) / rip_evring_packet_bytes(&f->hdr, ring);
}

static const struct rip_packet *ev_pkt(struct rr_file *f, uint32_t ring, uint64_t k)
{
	return (const struct rip_packet *)(f->map + rip_evring_data_off(&f->hdr, ring) +
					   (size_t)k * rip_evring_packet_bytes(&f->hdr, ring));
}

/*
 * Copy packet k of ring if it holds sequence number want (or any, want ==
 * UINT64_MAX).  1: copied; 0: empty, other sequence or torn; <0: corrupt.
 */
static int ev_copy_packet(struct rr_file *f, const struct ev_types *types, uint32_t ring,
			  uint64_t k, uint64_t want, struct ev_packet *out, char *err,
			  size_t errlen)
{
	const struct rip_packet *src = ev_pkt(f, ring, k);
	uint32_t psize = rip_evring_packet_bytes(&f->hdr, ring), npk = ev_npk(f, ring);
	uint64_t seq1, seq2, content;
	uint32_t open1, open2;
	struct ev_last last = { 0 };
	char why[256];
	int ret;

	memset(out, 0, sizeof(*out));
	/* Pairs with the release in rip_packet_close / the fence in rip_packet_open. */
	open1 = __atomic_load_n(&src->open, __ATOMIC_ACQUIRE);
	seq1 = __atomic_load_n(&src->packet_seq_num, __ATOMIC_ACQUIRE);
	content = __atomic_load_n(&src->content_size, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&src->magic, __ATOMIC_RELAXED) == 0)
		return 0; /* never used */
	if (want != UINT64_MAX && seq1 != want)
		return 0;
	if (content % 8 || content / 8 > psize || content / 8 < RIP_PACKET_HDR_SIZE)
		return open1 ? 0 : rr_fail(err, errlen, -EBADMSG,
					   "ring %u packet %llu: content size %llu bits out of "
					   "bounds",
					   ring, (unsigned long long)k, (unsigned long long)content);
	out->data = malloc(content / 8);
	if (!out->data)
		return -ENOMEM;
	memcpy(out->data, src, content / 8);
	/* The copy above before the re-check below. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	seq2 = __atomic_load_n(&src->packet_seq_num, __ATOMIC_RELAXED);
	open2 = __atomic_load_n(&src->open, __ATOMIC_RELAXED);
	if (seq1 != seq2 || open2 > open1) {
		free(out->data);
		out->data = NULL;
		return 0; /* reused under us */
	}
	out->len = content / 8;
	out->ring = ring;
	memcpy(&out->hdr, out->data, sizeof(out->hdr));
	out->hdr.content_size = content;
	out->hdr.open = 0;
	out->was_open = open1;
	ret = ev_check_packet(&out->hdr, psize, why, sizeof(why));
	if (!ret && (out->hdr.packet_size != (uint64_t)psize * 8 ||
		     out->hdr.stream_instance_id != ring || out->hdr.packet_seq_num % npk != k))
		ret = rr_fail(why, sizeof(why), -EBADMSG, "packet does not belong here");
	if (!ret) {
		ret = ev_walk(types, out->data, out->len, out->hdr.timestamp_begin, &last.ts);
		if (ret >= 0) {
			last.n = (uint32_t)ret;
			ret = 0;
		} else {
			/* ev_decode says what is wrong */
			ret = ev_decode(types, out->data, out->len, out->hdr.timestamp_begin, NULL,
					NULL, why, sizeof(why));
			if (ret >= 0)
				ret = rr_fail(why, sizeof(why), -EBADMSG, "events that do not decode");
		}
	}
	if (ret) {
		free(out->data);
		out->data = NULL;
		if (open1)
			return 0; /* a packet in the middle of a switch */
		return rr_fail(err, errlen, ret, "ring %u packet %llu: %s", ring,
			       (unsigned long long)k, why);
	}
	if (open1) {
		/* Close the copy as the writer would have. */
		out->hdr.timestamp_end = last.n ? last.ts : out->hdr.timestamp_begin;
		out->hdr.events = last.n;
		out->hdr.events_discarded =
			__atomic_load_n(&ev_ctl(f, ring)->discarded, __ATOMIC_RELAXED);
	} else if (out->hdr.events != last.n) {
		free(out->data);
		out->data = NULL;
		return rr_fail(err, errlen, -EBADMSG,
			       "ring %u packet %llu: says %u events, holds %u", ring,
			       (unsigned long long)k, out->hdr.events, last.n);
	}
	memcpy(out->data, &out->hdr, sizeof(out->hdr));
	return 1;
}

static int ev_seq_cmp(const void *a, const void *b)
{
	const struct ev_packet *x = a, *y = b;

	return x->hdr.packet_seq_num < y->hdr.packet_seq_num	 ? -1
	       : x->hdr.packet_seq_num > y->hdr.packet_seq_num ? 1
							       : 0;
}

void ev_packets_free(struct ev_packet *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].data);
	free(v);
}

static bool ev_ring_ok(struct rr_file *f, uint32_t ring)
{
	return !f->legacy_raw && f->hdr.ev_rings && ring < f->hdr.ev_rings;
}

int ev_copy_ring(struct rr_file *f, const struct ev_types *types, uint32_t ring,
		 struct ev_packet **out, size_t *n, size_t *torn, char *err, size_t errlen)
{
	uint32_t npk, lim;
	uint64_t written;
	struct ev_packet *v;
	volatile size_t got = 0; /* read after a siglongjmp */
	sigjmp_buf jb;
	volatile int ret = 0; /* live across the sigsetjmp of rr_guard_enter */

	*out = NULL;
	*n = 0;
	if (!ev_ring_ok(f, ring))
		return rr_fail(err, errlen, -EINVAL, "no event ring %u", ring);
	npk = ev_npk(f, ring);
	v = calloc(npk, sizeof(*v));
	if (!v)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	if (rr_guard_enter(&jb)) {
		ev_packets_free(v, got);
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being read", f->path);
	}
	/*
	 * A ring in its first turn: the packets past the open one were never
	 * written, nor backed (librip backs a packet when it opens it).  Not
	 * reading them keeps a full tmpfs from failing the read, and a reader
	 * from backing them.
	 */
	written = rip_evring_written((struct rip_evring *)ev_ctl(f, ring));
	lim = written < npk ? (uint32_t)written + 1 : npk;
	for (uint32_t k = 0; k < lim; k++) {
		ret = ev_copy_packet(f, types, ring, k, UINT64_MAX, &v[got], err, errlen);
		if (ret < 0)
			break;
		if (ret == 0 && torn && __atomic_load_n(&ev_pkt(f, ring, k)->magic,
							__ATOMIC_RELAXED))
			(*torn)++;
		got += ret == 1;
		ret = 0;
	}
	rr_guard_leave();
	if (ret) {
		ev_packets_free(v, got);
		return ret;
	}
	qsort(v, got, sizeof(*v), ev_seq_cmp);
	*out = v;
	*n = got;
	return 0;
}

/* ---- streaming ----------------------------------------------------------------------- */

int ev_consumer_open(struct rr_file *f, char *err, size_t errlen)
{
	int ret = rr_map_writable(f, err, errlen);

	if (ret)
		return ret;
	/* Writers in discard/block mode look at this before they drop or wait. */
	return rr_set_consumer(f, (uint32_t)getpid(), err, errlen);
}

void ev_ring_wake(struct rip_evring *w)
{
	/* the writer sleeps while the word is 1: see rip_evring_wait_arm */
	if (rip_evring_waiter(w))
		syscall(SYS_futex, &w->waiting, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int ev_consume(struct rr_file *f, const struct ev_types *types, uint32_t ring, bool final,
	       ev_packet_cb cb, void *arg, uint64_t *lost_packets, char *err, size_t errlen)
{
	struct rip_evring *w;
	uint64_t written, consumed;
	uint32_t npk;
	sigjmp_buf jb;
	volatile bool freed = false; /* read after the guard's sigsetjmp */
	int ret = 0;

	if (!ev_ring_ok(f, ring) || !f->wmap)
		return rr_fail(err, errlen, -EINVAL, "no event ring %u to consume", ring);
	npk = ev_npk(f, ring);
	w = (struct rip_evring *)(f->wmap + f->hdr.ev_ctl_off + (size_t)ring * RIP_EVRING_SIZE);
	if (rr_guard_enter(&jb))
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being read", f->path);
	/*
	 * consumed first: a writer pushes it to at most written - n + 1 of its
	 * moment, so written read afterwards is never below it, even if the
	 * writer laps the ring between the two loads.  Both acquire
	 * (include/rip/abi.h): the first pairs with the writer's CAS, the
	 * second with rip_evring_publish in rip_packet_close.
	 */
	consumed = rip_evring_consumed(w);
	written = rip_evring_written(w);
	if (consumed > written) {
		ret = rr_fail(err, errlen, -EBADMSG, "ring %u: consumed past written", ring);
		goto out;
	}
	if (written - consumed > npk) {
		/* fell behind before writers pushed us (a file from an older librip) */
		if (lost_packets)
			*lost_packets += written - npk - consumed;
		consumed = written - npk;
		rip_evring_consume(w, consumed);
		ev_ring_wake(w);
	}
	while (consumed < written) {
		struct ev_packet p;
		uint64_t s = consumed;
		bool mine;

		ret = ev_copy_packet(f, types, ring, s % npk, s, &p, err, errlen);
		if (ret < 0)
			goto out;
		/*
		 * Claim the packet: a flight-recorder writer that needs it pushes
		 * consumed past it first (lib/events.c), and then it is the
		 * writer's, counted there as lost.  Pairs with that CAS.
		 */
		mine = __atomic_compare_exchange_n(&w->consumed, &consumed, s + 1, false,
						   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		if (!mine) {
			free(p.data);
			/* the writer only ever pushes it forward (it may pass written read above) */
			if (consumed <= s) {
				ret = rr_fail(err, errlen, -EBADMSG,
					      "ring %u: the consumer position jumped to %llu", ring,
					      (unsigned long long)consumed);
				goto out;
			}
			/* consumed now holds where the writer pushed it: all before it are gone */
			if (lost_packets)
				*lost_packets += consumed - s;
			continue;
		}
		consumed = s + 1;
		freed = true;
		if (ret == 0 || p.was_open) {
			if (lost_packets)
				(*lost_packets)++;
			free(p.data);
			continue;
		}
		ret = cb(&p, arg);
		free(p.data);
		if (ret)
			goto out;
	}
	ret = 0;
	if (final) {
		struct ev_packet p;

		ret = ev_copy_packet(f, types, ring, written % npk, written, &p, err, errlen);
		if (ret == 1 && p.hdr.events)
			ret = cb(&p, arg);
		else if (ret > 0)
			ret = 0;
		free(p.data);
	}
out:
	/*
	 * A blocking writer may reuse what we freed: woken once, when all we
	 * took of its ring is free, not at each packet (at thousands of
	 * threads a wake per packet is a context switch per packet).
	 */
	if (freed)
		ev_ring_wake(w);
	rr_guard_leave();
	return ret;
}

int ev_open_size(struct rr_file *f, uint32_t ring, uint64_t *seq, size_t *len)
{
	const struct rip_packet *src;
	uint64_t written;
	sigjmp_buf jb;

	if (!ev_ring_ok(f, ring))
		return -EINVAL;
	if (rr_guard_enter(&jb))
		return -EIO;
	written = rip_evring_written((struct rip_evring *)ev_ctl(f, ring));
	src = ev_pkt(f, ring, written % ev_npk(f, ring));
	*seq = written;
	/* pairs with the writer's commit, as ev_peek_open's; a packet being switched: 0 */
	*len = __atomic_load_n(&src->packet_seq_num, __ATOMIC_ACQUIRE) == written ?
		       (size_t)(__atomic_load_n(&src->content_size, __ATOMIC_ACQUIRE) / 8) :
		       0;
	rr_guard_leave();
	return 0;
}

int ev_peek_open(struct rr_file *f, const struct ev_types *types, uint32_t ring,
		 uint64_t have_seq, size_t have_len, struct ev_packet *out, char *err,
		 size_t errlen)
{
	const struct rip_evring *w;
	uint64_t written, consumed;
	sigjmp_buf jb;
	volatile int ret;

	memset(out, 0, sizeof(*out));
	if (!ev_ring_ok(f, ring))
		return rr_fail(err, errlen, -EINVAL, "no event ring %u", ring);
	w = ev_ctl(f, ring);
	if (rr_guard_enter(&jb))
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being read", f->path);
	/* as ev_consume: consumed first, both acquire (rip/abi.h) */
	consumed = rip_evring_consumed((struct rip_evring *)w);
	written = rip_evring_written((struct rip_evring *)w);
	/* closed packets still to take go first; the open one holds sequence number written */
	if (consumed == written) {
		const struct rip_packet *src = ev_pkt(f, ring, written % ev_npk(f, ring));

		/* nothing since the caller's copy: no copy (pairs with the writer's commit) */
		if (have_seq == written &&
		    __atomic_load_n(&src->packet_seq_num, __ATOMIC_ACQUIRE) == written &&
		    __atomic_load_n(&src->content_size, __ATOMIC_ACQUIRE) / 8 == have_len) {
			rr_guard_leave();
			return 0;
		}
		ret = ev_copy_packet(f, types, ring, written % ev_npk(f, ring), written, out, err,
				     errlen);
		/* the open packet, not readable this instant (being switched, torn): later */
		if (ret == 0 && __atomic_load_n(&src->magic, __ATOMIC_RELAXED) &&
		    __atomic_load_n(&src->packet_seq_num, __ATOMIC_ACQUIRE) == written)
			ret = -EAGAIN;
	} else {
		ret = -EAGAIN;
	}
	rr_guard_leave();
	if (ret == -EAGAIN)
		return rr_fail(err, errlen, -EAGAIN, "ring %u: not readable yet", ring);
	if (ret == 1 && out->was_open)
		return 1;
	free(out->data);
	memset(out, 0, sizeof(*out));
	return ret < 0 ? ret : 0;
}
