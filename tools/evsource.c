/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/evsource.c - events of a trace directory or a ring file, merged
 * in time order (see evsource.h).
 *
 * Each stream is a cursor over its packets: for a ring file, the packets
 * ev_copy_ring copied (a consistent copy of a live ring, validated); for a
 * trace, the stream file read one packet at a time, each header checked
 * against the bytes left in the file before its body is read.  A packet is
 * decoded once with ev_decode into a compact list of (time, offset, id);
 * the fields are read again from the packet when the event is handed out.
 * The streams sit in a binary min-heap keyed by the time of their next
 * event, so the merge costs O(log streams) per event.
 *
 * The coroutine an event ran on is tracked per stream: the packet header
 * says which one ran when the packet began, and every rip:coro_switch event
 * after that moves it.  A switch event itself is attributed to what ran
 * before it (the code that switched).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evsource.h"
#include "ripread.h"
#include "trace.h"

#define EVS_MAX_PACKET (1u << 30)

/* One decoded event of the current packet. */
struct evs_ent {
	uint64_t ts;
	uint32_t off; /* of the event header in the packet */
	uint32_t id;
};

struct evs_stream {
	uint32_t index;
	/* ring file: the copied packets */
	struct ev_packet *pk;
	size_t npk, next;
	/* trace: the stream file */
	int fd;
	uint64_t foff, fsize;
	char path[PATH_MAX];
	uint8_t *buf;
	size_t bufcap;
	/* the packet being handed out */
	const uint8_t *data;
	size_t len;
	uint64_t pkt_off; /* its offset in the stream file (traces) */
	struct evs_ent *ents;
	size_t nents, cap, pos;
	/* state */
	bool seen;
	uint64_t seq, discarded;
	int32_t tid;
	const char *thread;
	uint32_t coro;
	char errbuf[256];
};

struct evs_name {
	int32_t tid;
	uint64_t when; /* attach time: the newest owner of a tid wins */
	char name[RIP_NAME_MAX];
};

struct evs {
	bool trace;
	struct rr_file f;
	struct trace_r tr;
	const struct rip_file_hdr *hdr;
	const struct ev_types *types;
	struct ev_types *own_types;
	char src[PATH_MAX];
	/* names: threads sorted by tid, coroutines by slot index */
	struct evs_name *threads;
	size_t nthreads;
	char (*coros)[RIP_NAME_MAX];
	size_t ncoros;
	char coro_tmp[32];
	/* streams and the heap of those with an event to give */
	struct evs_stream *st;
	uint32_t nst;
	uint32_t *heap;
	uint32_t nheap;
	bool primed, refill;
	struct evs_totals tot;
	uint64_t idx_lost, idx_discarded;
	struct rip_module *mods; /* ring files: read on demand */
	size_t nmods;
	bool mods_read;
};


/* ---- names ---------------------------------------------------------------------- */

static int evs_name_cmp(const void *a, const void *b)
{
	const struct evs_name *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->when < y->when ? -1 : x->when > y->when;
}

/* Sort by tid and keep the newest entry of each tid. */
static void evs_names_finish(struct evs *s)
{
	size_t n = 0;

	qsort(s->threads, s->nthreads, sizeof(*s->threads), evs_name_cmp);
	for (size_t i = 0; i < s->nthreads; i++) {
		if (n && s->threads[n - 1].tid == s->threads[i].tid)
			n--;
		s->threads[n++] = s->threads[i];
	}
	s->nthreads = n;
}

const char *evs_thread_name(struct evs *s, int32_t tid)
{
	size_t lo = 0, hi = s->nthreads;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->threads[mid].tid == tid)
			return s->threads[mid].name;
		if (s->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return "";
}

const char *evs_coro_name(struct evs *s, uint32_t coro)
{
	if (!coro)
		return NULL;
	if (coro - 1 < s->ncoros && s->coros[coro - 1][0])
		return s->coros[coro - 1];
	snprintf(s->coro_tmp, sizeof(s->coro_tmp), "coro#%" PRIu32, coro - 1);
	return s->coro_tmp;
}

static int evs_add_name(struct evs *s, uint32_t kind, int32_t tid, uint32_t slot, uint64_t when,
			const char *name)
{
	if (kind == RIP_KIND_THREAD) {
		struct evs_name *n = &s->threads[s->nthreads++];

		n->tid = tid;
		n->when = when;
		snprintf(n->name, sizeof(n->name), "%s", name);
	} else if (kind == RIP_KIND_CORO && slot < s->ncoros) {
		snprintf(s->coros[slot], sizeof(s->coros[slot]), "%s", name);
	}
	return 0;
}

/* ---- opening ---------------------------------------------------------------------- */

static int evs_streams_alloc(struct evs *s, uint32_t n)
{
	s->nst = n;
	s->st = calloc(n ? n : 1, sizeof(*s->st));
	s->heap = calloc(n ? n : 1, sizeof(*s->heap));
	if (!s->st || !s->heap)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		s->st[i].index = i;
		s->st[i].fd = -1;
	}
	s->tot.streams = n;
	return 0;
}

static int evs_open_ring(struct evs *s, const char *target, char *err, size_t errlen)
{
	struct rr_slots slots;
	uint32_t used;
	int ret;

	ret = rr_open_target(target, &s->f, err, errlen);
	if (ret)
		return ret;
	snprintf(s->src, sizeof(s->src), "%s", s->f.path);
	s->hdr = &s->f.hdr;
	s->own_types = malloc(sizeof(*s->own_types));
	if (!s->own_types)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	ret = ev_read_types(&s->f, s->own_types, err, errlen);
	if (ret)
		return ret;
	s->types = s->own_types;

	ret = rr_read_slots(&s->f, &slots, err, errlen);
	if (ret)
		return ret;
	s->threads = calloc(slots.n ? slots.n : 1, sizeof(*s->threads));
	s->ncoros = s->f.hdr.slot_count;
	s->coros = calloc(s->ncoros ? s->ncoros : 1, sizeof(*s->coros));
	if (!s->threads || !s->coros) {
		rr_slots_free(&slots);
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < slots.n; i++) {
		const struct rr_slot *sl = &slots.v[i];

		evs_add_name(s, sl->kind, sl->tid, sl->index, sl->attach_ts, sl->name);
	}
	rr_slots_free(&slots);
	evs_names_finish(s);

	if (s->f.legacy_raw || !s->f.hdr.ev_rings)
		return evs_streams_alloc(s, 0);
	used = __atomic_load_n(&((const struct rip_file_hdr *)s->f.map)->ev_fresh,
			       __ATOMIC_RELAXED);
	if (used > s->f.hdr.ev_rings)
		used = s->f.hdr.ev_rings;
	ret = evs_streams_alloc(s, used);
	if (ret)
		return rr_fail(err, errlen, ret, "out of memory");
	for (uint32_t i = 0; i < used; i++) {
		struct evs_stream *st = &s->st[i];
		size_t torn = 0;
		char why[RR_ERR_MAX];

		ret = ev_copy_ring(&s->f, s->types, i, &st->pk, &st->npk, &torn, why, sizeof(why));
		if (ret)
			return rr_fail(err, errlen, ret, "%s: %s", s->src, why);
		s->tot.torn += torn;
	}
	return 0;
}

static int evs_open_trace(struct evs *s, const char *dir, char *err, size_t errlen)
{
	const struct trace_info *in;
	size_t nthreads = 0;
	int ret;

	ret = trace_r_open(dir, &s->tr, err, errlen);
	if (ret)
		return ret;
	s->trace = true;
	snprintf(s->src, sizeof(s->src), "%s", dir);
	in = &s->tr.info;
	s->hdr = &in->idx.file;
	s->types = &in->types;
	s->idx_lost = in->idx.lost_packets;
	s->idx_discarded = in->idx.discarded;
	for (uint32_t i = 0; i < in->idx.nnames; i++) {
		if (in->names[i].kind == RIP_KIND_CORO && in->names[i].slot + 1 > s->ncoros &&
		    in->names[i].slot < (1u << 24))
			s->ncoros = in->names[i].slot + 1;
		nthreads += in->names[i].kind == RIP_KIND_THREAD;
	}
	s->threads = calloc(nthreads ? nthreads : 1, sizeof(*s->threads));
	s->coros = calloc(s->ncoros ? s->ncoros : 1, sizeof(*s->coros));
	if (!s->threads || !s->coros)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < in->idx.nnames; i++) {
		const struct trace_name *n = &in->names[i];
		char name[RIP_NAME_MAX];

		memcpy(name, n->name, sizeof(name));
		name[sizeof(name) - 1] = 0;
		/* later entries win: use the entry's position as its age */
		evs_add_name(s, n->kind, n->tid, n->slot, i, name);
	}
	evs_names_finish(s);

	ret = evs_streams_alloc(s, in->idx.nstreams);
	if (ret)
		return rr_fail(err, errlen, ret, "out of memory");
	for (uint32_t i = 0; i < s->nst; i++) {
		struct evs_stream *st = &s->st[i];
		struct stat sb;

		snprintf(st->path, sizeof(st->path), "%s/stream_%" PRIu32, dir, i);
		st->fd = open(st->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (st->fd < 0 && errno == ENOENT)
			continue; /* a ring that wrote nothing */
		if (st->fd < 0 || fstat(st->fd, &sb))
			return rr_fail(err, errlen, -errno, "%s: %s", st->path, strerror(errno));
		if (!S_ISREG(sb.st_mode))
			return rr_fail(err, errlen, -EINVAL, "%s: not a regular file", st->path);
		st->fsize = (uint64_t)sb.st_size;
	}
	return 0;
}

int evs_open(const char *target, struct evs **out, char *err, size_t errlen)
{
	struct evs *s = calloc(1, sizeof(*s));
	int ret;

	*out = NULL;
	if (!s)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	s->f.fd = -1;
	if (trace_is_dir(target))
		ret = evs_open_trace(s, target, err, errlen);
	else
		ret = evs_open_ring(s, target, err, errlen);
	if (ret) {
		evs_close(s);
		return ret;
	}
	*out = s;
	return 0;
}

void evs_close(struct evs *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; s->st && i < s->nst; i++) {
		struct evs_stream *st = &s->st[i];

		ev_packets_free(st->pk, st->npk);
		if (st->fd >= 0)
			close(st->fd);
		free(st->buf);
		free(st->ents);
	}
	free(s->st);
	free(s->heap);
	free(s->threads);
	free(s->coros);
	free(s->own_types);
	free(s->mods);
	if (s->trace)
		trace_r_close(&s->tr);
	if (s->f.fd >= 0 || s->f.map)
		rr_close(&s->f);
	free(s);
}

/* ---- packets ---------------------------------------------------------------------- */

static int evs_note(const struct ev_event *e, void *arg)
{
	struct evs_stream *st = arg;

	if (st->nents == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 256;
		struct evs_ent *v = realloc(st->ents, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		st->ents = v;
		st->cap = cap;
	}
	st->ents[st->nents++] = (struct evs_ent){
		.ts = e->ts,
		.off = (uint32_t)e->offset,
		.id = e->type->id,
	};
	return 0;
}

/* Read the next packet of a trace stream file into st->buf.  1: got one, 0: end. */
static int evs_read_packet(struct evs_stream *st, struct rip_packet *hdr, char *err, size_t errlen)
{
	uint64_t left = st->fsize - st->foff, size;
	char why[256];
	ssize_t got;
	int ret;

	if (st->fd < 0 || !left)
		return 0;
	if (left < RIP_PACKET_HDR_SIZE)
		return rr_fail(err, errlen, -EBADMSG,
				"%s: offset %" PRIu64 ": packet header cut (%" PRIu64
				" bytes left)",
				st->path, st->foff, left);
	got = pread(st->fd, hdr, sizeof(*hdr), (off_t)st->foff);
	if (got != (ssize_t)sizeof(*hdr))
		return rr_fail(err, errlen, got < 0 ? -errno : -EIO, "%s: offset %" PRIu64 ": %s",
				st->path, st->foff, got < 0 ? strerror(errno) : "short read");
	ret = ev_check_packet(hdr, left > EVS_MAX_PACKET ? EVS_MAX_PACKET : (size_t)left, why,
			      sizeof(why));
	if (ret)
		return rr_fail(err, errlen, ret, "%s: offset %" PRIu64 ": %s", st->path, st->foff,
				why);
	/* A trace's packets are cut to their content, in the file of their ring. */
	if (hdr->stream_id != 0 || hdr->content_size != hdr->packet_size ||
	    hdr->stream_instance_id != st->index)
		return rr_fail(err, errlen, -EBADMSG,
				"%s: offset %" PRIu64
				": packet does not belong here (stream %" PRIu64
				", %" PRIu64 " of %" PRIu64 " bits used)",
				st->path, st->foff, hdr->stream_instance_id, hdr->content_size,
				hdr->packet_size);
	size = hdr->content_size / 8;
	if (size > st->bufcap) {
		uint8_t *b = realloc(st->buf, size);

		if (!b)
			return rr_fail(err, errlen, -ENOMEM, "out of memory");
		st->buf = b;
		st->bufcap = size;
	}
	got = pread(st->fd, st->buf, size, (off_t)st->foff);
	if (got != (ssize_t)size)
		return rr_fail(err, errlen, got < 0 ? -errno : -EIO, "%s: offset %" PRIu64 ": %s",
				st->path, st->foff, got < 0 ? strerror(errno) : "short read");
	st->pkt_off = st->foff;
	st->foff += hdr->packet_size / 8;
	st->data = st->buf;
	st->len = size;
	return 1;
}

/*
 * Load the next packet of st that holds events.  1: st->ents has events,
 * 0: the stream is done, <0: corrupt.
 */
static int evs_load(struct evs *s, struct evs_stream *st, char *err, size_t errlen)
{
	for (;;) {
		struct rip_packet hdr;
		char why[256];
		int ret;

		if (s->trace) {
			ret = evs_read_packet(st, &hdr, err, errlen);
			if (ret <= 0)
				return ret;
		} else {
			if (st->next >= st->npk)
				return 0;
			hdr = st->pk[st->next].hdr;
			st->data = st->pk[st->next].data;
			st->len = st->pk[st->next].len;
			st->pkt_off = st->next;
			st->next++;
		}
		s->tot.packets++;
		if (st->seen) {
			if (hdr.packet_seq_num <= st->seq) {
				if (s->trace)
					return rr_fail(err, errlen, -EBADMSG,
							"%s: offset %" PRIu64
							": packet sequence number %" PRIu64
							" after %" PRIu64,
							st->path, st->pkt_off, hdr.packet_seq_num,
							st->seq);
			} else {
				s->tot.lost_packets += hdr.packet_seq_num - st->seq - 1;
			}
		}
		st->seen = true;
		st->seq = hdr.packet_seq_num;
		st->discarded = hdr.events_discarded;
		if (hdr.tid != st->tid || !st->thread) {
			st->tid = hdr.tid;
			st->thread = evs_thread_name(s, hdr.tid);
		}
		st->coro = hdr.coro;
		st->nents = st->pos = 0;
		ret = ev_decode(s->types, st->data, st->len, hdr.timestamp_begin, evs_note, st, why,
				sizeof(why));
		if (ret == -ENOMEM)
			return rr_fail(err, errlen, ret, "out of memory");
		if (ret < 0) {
			if (s->trace)
				return rr_fail(err, errlen, ret, "%s: offset %" PRIu64 ": %s",
						st->path, st->pkt_off, why);
			return rr_fail(err, errlen, ret, "%s: ring %" PRIu32 ": %s", s->src,
					st->index, why);
		}
		if (s->trace && hdr.events != st->nents)
			return rr_fail(err, errlen, -EBADMSG,
					"%s: offset %" PRIu64 ": packet says %" PRIu32
					" events, holds %zu",
					st->path, st->pkt_off, hdr.events, st->nents);
		if (st->nents)
			return 1;
	}
}

/* ---- the merge -------------------------------------------------------------------- */

static bool evs_before(const struct evs *s, uint32_t a, uint32_t b)
{
	const struct evs_stream *x = &s->st[a], *y = &s->st[b];
	uint64_t tx = x->ents[x->pos].ts, ty = y->ents[y->pos].ts;

	return tx < ty || (tx == ty && a < b);
}

static void evs_sift_down(struct evs *s, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i, t;

		if (l < s->nheap && evs_before(s, s->heap[l], s->heap[m]))
			m = l;
		if (r < s->nheap && evs_before(s, s->heap[r], s->heap[m]))
			m = r;
		if (m == i)
			return;
		t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

static void evs_sift_up(struct evs *s, uint32_t i)
{
	while (i) {
		uint32_t p = (i - 1) / 2, t;

		if (!evs_before(s, s->heap[i], s->heap[p]))
			return;
		t = s->heap[i];
		s->heap[i] = s->heap[p];
		s->heap[p] = t;
		i = p;
	}
}

static int evs_prime(struct evs *s, char *err, size_t errlen)
{
	s->primed = true;
	for (uint32_t i = 0; i < s->nst; i++) {
		int ret = evs_load(s, &s->st[i], err, errlen);

		if (ret < 0)
			return ret;
		if (ret) {
			s->heap[s->nheap++] = i;
			evs_sift_up(s, s->nheap - 1);
		}
	}
	return 0;
}

/* The fields of an event ev_decode has already checked: read them again. */
static void evs_fields(const struct ev_type *t, const uint8_t *data, size_t off,
		       struct evs_event *e)
{
	off += (data[off] & 31) == RIP_EVENT_ID_EXTENDED ? 13 : 4;
	e->str = NULL;
	e->arr = NULL;
	e->narr = 0;
	for (uint32_t i = 0; i < t->nfields; i++) {
		uint32_t ty = t->fields[i].type, n;
		uint64_t v = 0;

		if (ty == RIP_FT_STRING) {
			e->str = (const char *)data + off;
			e->v[i] = 0;
			break;
		}
		if (ty == RIP_FT_HEX64_ARRAY) {
			memcpy(&n, data + off, 4);
			e->narr = n;
			e->arr = data + off + 4;
			e->v[i] = n;
			break;
		}
		n = ev_field_size(ty);
		memcpy(&v, data + off, n);
		switch (ty) {
		case RIP_FT_S8:
			v = (uint64_t)(int64_t)(int8_t)v;
			break;
		case RIP_FT_S16:
			v = (uint64_t)(int64_t)(int16_t)v;
			break;
		case RIP_FT_S32:
			v = (uint64_t)(int64_t)(int32_t)v;
			break;
		}
		e->v[i] = v;
		off += n;
	}
}

/* The stream at the top of the heap used up its packet: load the next or drop it. */
static int evs_refill(struct evs *s, char *err, size_t errlen)
{
	int ret = evs_load(s, &s->st[s->heap[0]], err, errlen);

	s->refill = false;
	if (ret < 0)
		return ret;
	if (!ret)
		s->heap[0] = s->heap[--s->nheap];
	if (s->nheap)
		evs_sift_down(s, 0);
	return 0;
}

int evs_next(struct evs *s, struct evs_event *e, char *err, size_t errlen)
{
	struct evs_stream *st;
	const struct evs_ent *en;
	const struct ev_type *t;
	int ret;

	if (!s->primed) {
		ret = evs_prime(s, err, errlen);
		if (ret)
			return ret;
	}
	if (s->refill) {
		ret = evs_refill(s, err, errlen);
		if (ret)
			return ret;
	}
	if (!s->nheap)
		return 0;
	st = &s->st[s->heap[0]];
	en = &st->ents[st->pos];
	t = &s->types->t[en->id];
	e->ts = en->ts;
	e->ns = rr_ticks_to_ns(s->hdr, en->ts);
	e->wall_ns = e->ns + s->hdr->realtime_offset;
	e->stream = st->index;
	e->tid = st->tid;
	e->thread = st->thread;
	e->coro = st->coro;
	e->coro_name = evs_coro_name(s, st->coro);
	e->type = t;
	evs_fields(t, st->data, en->off, e);
	e->is_switch = en->id == RIP_EV_CORO_SWITCH && t->nfields >= 2 &&
		       !strcmp(t->name, "rip:coro_switch");
	if (e->is_switch)
		st->coro = (uint32_t)e->v[0];
	s->tot.events++;

	/*
	 * Advance the cursor.  When the packet is used up, the next one is read
	 * at the next call: e points into this one's bytes until then.
	 */
	if (++st->pos < st->nents)
		evs_sift_down(s, 0);
	else
		s->refill = true;
	return 1;
}

void evs_totals(const struct evs *s, struct evs_totals *t)
{
	*t = s->tot;
	t->discarded = 0;
	for (uint32_t i = 0; i < s->nst; i++)
		t->discarded += s->st[i].discarded;
	/* A trace's index counts what the recorder saw; report the larger of each. */
	if (s->idx_discarded > t->discarded)
		t->discarded = s->idx_discarded;
	if (s->idx_lost > t->lost_packets)
		t->lost_packets = s->idx_lost;
}

const struct rip_file_hdr *evs_file_hdr(const struct evs *s)
{
	return s->hdr;
}

const struct ev_types *evs_types(const struct evs *s)
{
	return s->types;
}

uint32_t evs_nstreams(const struct evs *s)
{
	return s->nst;
}

int evs_modules(struct evs *s, const struct rip_module **out, size_t *n, char *err, size_t errlen)
{
	int ret;

	if (s->trace) {
		*out = s->tr.info.mods;
		*n = s->tr.info.idx.nmods;
		return 0;
	}
	if (!s->mods_read) {
		if (s->f.legacy_raw) {
			s->nmods = 0;
		} else {
			ret = rr_read_modules(&s->f, &s->mods, &s->nmods, err, errlen);
			if (ret)
				return ret;
		}
		s->mods_read = true;
	}
	*out = s->mods;
	*n = s->nmods;
	return 0;
}

const char *evs_source(const struct evs *s)
{
	return s->src;
}

bool evs_is_trace(const struct evs *s)
{
	return s->trace;
}
