/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/evsource.c - events of a trace directory or a ring file, merged
 * in time order (see evsource.h).
 *
 * Each stream is a cursor over its packets: for a ring file, the packets
 * ev_copy_ring copied (a consistent copy of a live ring, validated); for a
 * trace, the stream file read one packet at a time, each header checked
 * against the bytes left in the file before its body is read.  A packet is
 * decoded once with ev_decode into a compact list of (time, offset, id);
 * the fields are read again from the packet when the event is handed out.
 * The streams sit in a binary min-heap keyed by the time of their next
 * event (kept in the heap's entries, so sifting reads one small array), so
 * the merge costs O(log streams) when the lead changes; while the leading
 * stream stays ahead of the next one, its events come out with no heap work
 * (evs_next_fast), and a change of lead goes straight on to the new
 * leader's head (evs_fast_switch) without building an event the slow way.
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
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <internal/hot.h>

#include "read/evsource.h"
#include "read/ringfile.h"
#include "read/trace.h"

#define EVS_MAX_PACKET (1u << 30)

struct evs_stream {
	/* first: the head (see evsource.h), also by its fields' names */
	union {
		struct evs_head h;
		struct {
			EVS_HEAD_FIELDS
		};
	};
	/* ring file: the copied packets */
	struct ev_packet *pk;
	size_t npk, next;
	/* trace: the stream file (fd -1 while closed: see evs_stream_fd) */
	int fd;
	bool exists;
	dev_t dev;
	ino_t ino;
	uint64_t foff, fsize;
	uint8_t *buf;	   /* bytes of the file from foff - bpos on, blen of them */
	bool pooled;	   /* buf is in the pool: not freed */
	size_t bufcap, blen, bpos;
	uint64_t pkt_off; /* the offset in the stream file of the packet (traces) */
	uint32_t hold;	  /* packed: the packet at data is held (trace_r_packet_hold), not copied */
	uint32_t skipped; /* packed: packets of damaged blocks skipped since the last read (torn) */
	uint32_t pk_events; /* its header's count of events, to check count against */
	bool check_count;  /* a trace's packet: its events count must match */
	uint64_t ts_begin;
	/*
	 * Packed: its next packet not loaded yet, its time in the heap a bound
	 * from the trace (evs_defer); taken up when it comes to the top.
	 */
	bool deferred;
	/* state */
	bool seen;
	uint64_t seq, discarded;
	const char *thread;
	uint32_t coro;
};

/*
 * An entry of the merge's heap: a stream and the time of its head, kept
 * here so that sifting reads one small array, not the streams (the top's
 * time is brought up to date before it sifts).
 */
struct evs_hent {
	uint64_t ts;
	uint32_t st;
};

struct evs_name {
	int32_t tid;
	uint64_t when; /* attach time: the newest owner of a tid wins */
	char name[RIP_NAME_MAX];
};

struct evs {
	struct evs_fast fast; /* first: evs_next_fast reads it through a cast */
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
	struct evs_hent *heap;
	uint32_t nheap;
	/* the head of the heap's second stream: the top stays on top while before it */
	uint64_t bound_ts;
	uint32_t bound_st;
	uint32_t bound_i; /* its place in the heap: 1 or 2 */
	bool primed, refill;
	bool defer; /* packed: streams wait for their next packet in the heap (evs_defer) */
	struct evs_totals tot;
	uint64_t idx_lost, idx_discarded;
	uint64_t gone_packets, gone_events; /* a packed trace's dropped or missing chunks */
	uint64_t damaged;	 /* packets of a packed trace's damaged blocks, skipped */
	uint64_t damaged_events; /* theirs: what the index counts that was not read */
	char damage[RR_ERR_MAX]; /* what the first damaged block said (evs_damage) */
	uint32_t damage_said;	 /* blocks evs_damage said already */
	uint32_t gone_chunks;
	struct rip_module *mods; /* ring files: read on demand */
	size_t nmods;
	bool mods_read;
	struct rr_clock clock; /* the file's, for ticks to ns */
	uint8_t pad[RIP_EVENT_MAX_FIELDS * 8 + 8]; /* fixed fields too near a packet's end */
	struct evs_plan plan[EV_MAX_TYPES];
	bool lazy; /* evs_set_lazy */
	size_t chunk; /* bytes read from a stream file at once */
	void *pool;	 /* the mapping of the streams' first buffers (evs_pool_map), or NULL */
	size_t pool_len; /* its length */
	uint32_t fds_open, fds_max, fd_victim; /* stream files open now, at most, the next to close */
	char path[PATH_MAX + 32]; /* evs_path's */
	/* evs_set_progress: bytes of packets read of all there are, and who is told */
	uint64_t done, total;
	uint32_t pk_tick;
	evs_progress_fn *progress; /* NULL: nobody */
	void *progress_arg;
	int failed; /* -errno: the next event is corrupt, fail_msg says how */
	char fail_msg[RR_ERR_MAX + PATH_MAX];
	char why[256]; /* what evs_head found wrong, for fail_msg */
	uint32_t switch_id; /* RIP_EV_CORO_SWITCH when it is rip:coro_switch, else none */
	/* rip:bt events are shown to bt_hook as they go by (evs_set_bt_hook) */
	uint32_t bt_id;
	evs_bt_hook *bt_hook;
	void *bt_arg;
};

/* Tell the progress callback where we are; end: for the last time. */
static void evs_bar(struct evs *s, bool end)
{
	evs_progress_fn *fn = s->progress;

	if (!fn)
		return;
	if (end)
		s->progress = NULL;
	fn(s->done, s->total, end, s->progress_arg);
}

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

/* What evs_head_next and evs_next_fast test of pl (once its slow is set). */
static void evs_plan_need(struct evs_plan *pl)
{
	pl->need = pl->valid ? pl->fixed : SIZE_MAX;
	pl->fast_need = pl->valid && !pl->slow ? (size_t)pl->fixed + 8 : SIZE_MAX;
}

/* Work out each type's plan and the clock conversion, once per source. */
static void evs_plan_types(struct evs *s)
{
	for (uint32_t id = 0; id < EV_MAX_TYPES; id++) {
		const struct ev_type *t = &s->types->t[id];
		struct evs_plan *pl = &s->plan[id];

		if (!t->valid)
			continue;
		pl->valid = true;
		pl->type = t;
		pl->fixed = t->fixed;
		for (uint32_t i = 0; i < t->nfields && i < RIP_EVENT_MAX_FIELDS; i++) {
			uint32_t ty = t->fields[i].type;

			if (RIP_FT_IS_TAIL(ty)) {
				pl->tail = (uint8_t)ty;
				break;
			}
			pl->size[i] = (uint8_t)rip_field_size(ty);
			pl->sign[i] = ty == RIP_FT_S8 || ty == RIP_FT_S16 || ty == RIP_FT_S32
					      ? pl->size[i]
					      : 0;
			pl->shift[i] = (uint8_t)(64 - 8 * pl->size[i]);
			pl->off[i] = (uint16_t)(i ? pl->off[i - 1] + pl->size[i - 1] : 0);
			pl->nfix++;
		}
	}
	s->switch_id = UINT32_MAX;
	if (s->plan[RIP_EV_CORO_SWITCH].nfix >= 2 &&
	    !strcmp(s->types->t[RIP_EV_CORO_SWITCH].name, "rip:coro_switch")) {
		s->switch_id = RIP_EV_CORO_SWITCH;
		s->plan[RIP_EV_CORO_SWITCH].slow = true; /* it moves the stream's coroutine */
	}
	s->bt_id = UINT32_MAX;
	for (uint32_t id = 0; id < EV_MAX_TYPES; id++)
		if (s->plan[id].tail == RIP_FT_HEX64_ARRAY && !strcmp(s->types->t[id].name, "rip:bt"))
			s->bt_id = id;
	for (uint32_t id = 0; id < EV_MAX_TYPES; id++)
		evs_plan_need(&s->plan[id]);
	s->fast.qmax = 0;
	for (uint32_t id = 0; id <= RIP_EVENT_ID_EXTENDED; id++) {
		const struct evs_plan *pl = &s->plan[id];
		bool quick = id != RIP_EVENT_ID_EXTENDED && pl->valid && !pl->tail;

		s->fast.q[id].pl = pl;
		s->fast.q[id].fixed = quick ? (int64_t)pl->fixed : -1;
		if (quick && pl->fixed > s->fast.qmax)
			s->fast.qmax = pl->fixed;
	}
	s->fast.stop_plan.need = s->fast.stop_plan.fast_need = SIZE_MAX;
	s->fast.stop.pl = &s->fast.stop_plan;
	s->fast.h = &s->fast.stop;
	rr_clock_init(&s->clock, s->hdr);
	s->fast.plan = s->plan;
	s->fast.clock = s->clock;
}

/* The path of a trace's stream file, for opening and for messages (good until the next call). */
static const char *evs_path(struct evs *s, const struct evs_stream *st)
{
	snprintf(s->path, sizeof(s->path), "%s/stream_%" PRIu32, s->src, st->index);
	return s->path;
}

/*
 * The descriptor of st's file.  Streams may outnumber the descriptors a
 * process can have: at most fds_max are open at once, and the one opened
 * longest ago (in turn) is closed to make room.  The first open measures
 * the file (fsize); a file opened again must be the same one.  0 or -errno.
 */
static int evs_stream_fd(struct evs *s, struct evs_stream *st, char *err, size_t errlen)
{
	const char *path;
	struct stat sb;

	if (st->fd >= 0)
		return 0;
	while (s->fds_open >= s->fds_max) {
		struct evs_stream *v = &s->st[s->fd_victim];

		s->fd_victim = (s->fd_victim + 1) % s->nst;
		if (v != st && v->fd >= 0) {
			close(v->fd);
			v->fd = -1;
			s->fds_open--;
		}
	}
	path = evs_path(s, st);
	st->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (st->fd < 0)
		return rr_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	s->fds_open++;
	if (fstat(st->fd, &sb))
		return rr_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return rr_fail(err, errlen, -EINVAL, "%s: not a regular file", path);
	if (st->exists && (sb.st_dev != st->dev || sb.st_ino != st->ino))
		return rr_fail(err, errlen, -ESTALE, "%s: replaced while being read", path);
	if (!st->exists)
		st->fsize = (uint64_t)sb.st_size; /* what is read: a file that grows later is read as it was */
	st->exists = true;
	st->dev = sb.st_dev;
	st->ino = sb.st_ino;
	return 0;
}

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
		for (size_t k = 0; k < st->npk; k++)
			s->total += st->pk[k].len;
	}
	return 0;
}

#define EVS_HUGE (2u << 20) /* a transparent huge page (x86-64, arm64 with 4 KiB pages) */

/* Does this kernel give huge pages to a mapping that asks (MADV_HUGEPAGE)? */
static bool evs_thp_madvise(void)
{
	char buf[128] = "";
	int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return strstr(buf, "[always]") || strstr(buf, "[madvise]");
}

/*
 * The streams' first buffers (chunk bytes each) in one mapping of huge
 * pages, when there are enough of them to fill some (hundreds of streams:
 * 16 MiB).  Their first reads are the first touches of their pages, and
 * where a first touch is a fault of microseconds (a virtual machine) those
 * faults are most of what opening a thousand streams costs, and what makes
 * it vary from run to run: huge pages make them a few (doc/design.md,
 * "Reading a trace fast", for the figures).  Without huge pages (or without
 * the mapping) the buffers come from malloc, as a stream's buffer that must
 * grow does: a fresh mapping of small pages is slower than the heap, whose
 * pages are partly touched already.
 */
static void evs_pool_map(struct evs *s)
{
	size_t len = (size_t)s->nst * s->chunk;
	uint8_t *m, *base;

	if (len < 4 * EVS_HUGE || !evs_thp_madvise())
		return;
	/* room to start on a huge page's boundary: mmap aligns none on older kernels */
	m = mmap(NULL, len + EVS_HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return;
	base = (uint8_t *)(((uintptr_t)m + EVS_HUGE - 1) & ~((uintptr_t)EVS_HUGE - 1));
	if (madvise(base, len, MADV_HUGEPAGE)) {
		munmap(m, len + EVS_HUGE);
		return;
	}
	s->pool = m;
	s->pool_len = len + EVS_HUGE;
	for (uint32_t i = 0; i < s->nst; i++) {
		s->st[i].buf = base + (size_t)i * s->chunk;
		s->st[i].bufcap = s->chunk;
		s->st[i].pooled = true;
	}
}

/* How many stream files to keep open at once: a quarter of the descriptors still free. */
static uint32_t evs_fds_max(void)
{
	struct rlimit rl;
	int open_now = 0;
	rlim_t left;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return 4096;
	for (int fd = 0; fd < 64; fd++)
		open_now += fcntl(fd, F_GETFD) != -1;
	left = rl.rlim_cur > (rlim_t)open_now + 64 ? rl.rlim_cur - (rlim_t)open_now - 64 : 16;
	left /= 4;
	return left < 16 ? 16 : left > 65536 ? 65536 : (uint32_t)left;
}

static int evs_open_trace(struct evs *s, const char *dir, char *err, size_t errlen)
{
	const struct trace_info *in;
	size_t nthreads = 0;
	uint32_t nst;
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
	trace_r_gone(&s->tr, &s->gone_packets, &s->gone_events, &s->gone_chunks);
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
	/*
	 * 1 MiB reads, less when there are many streams: 4 MiB of buffers in
	 * all while the reads stay at 64 KiB or more; past that, with hundreds
	 * of streams, reads of 64 KiB down to 16 KiB with 16 MiB in all (a
	 * system call for each 4 KiB packet cost 40 ms at 1,000 streams); never
	 * less than a small ring's packet (bigger packets are read whole
	 * anyway).  Descriptors: a quarter of what is left, the rest of the
	 * streams are opened again when their turn comes.
	 */
	nst = in->idx.nstreams ? in->idx.nstreams : 1;
	s->chunk = (4u << 20) / nst;
	if (s->chunk > (1u << 20))
		s->chunk = 1u << 20;
	if (s->chunk < (64u << 10)) { /* hundreds of streams: 16 MiB in all, 64 KiB a read at most */
		s->chunk = (16u << 20) / nst;
		if (s->chunk > (64u << 10))
			s->chunk = 64u << 10;
	}
	if (s->chunk < (4u << 10))
		s->chunk = 4u << 10;
	evs_pool_map(s);
	if (s->tr.pk) { /* packed: the packets come from the chunks, decoded (read/trace.h) */
		const char *defer = getenv("RIP_READ_DEFER"); /* "0": as before, for the tests */

		s->total = trace_r_raw_bytes(&s->tr);
		for (uint32_t i = 0; i < s->nst; i++)
			s->st[i].exists = trace_r_npackets(&s->tr, i) > 0;
		s->defer = !defer || strcmp(defer, "0");
		if (s->defer)
			trace_r_merge_defers(&s->tr);
		return 0;
	}
	s->fds_max = evs_fds_max();
	for (uint32_t i = 0; i < s->nst; i++) {
		struct evs_stream *st = &s->st[i];

		ret = evs_stream_fd(s, st, err, errlen);
		if (ret == -ENOENT)
			continue; /* a ring that wrote nothing */
		if (ret)
			return ret;
		s->total += st->fsize; /* measured by evs_stream_fd */
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
	if (!*target) {
		free(s);
		return rr_fail(err, errlen, -ENOENT,
			       "an empty name: give a pid, a ring file or a trace directory");
	}
	s->f.fd = -1;
	if (trace_is_dir(target))
		ret = evs_open_trace(s, target, err, errlen);
	else
		ret = evs_open_ring(s, target, err, errlen);
	if (ret) {
		evs_close(s);
		return ret;
	}
	evs_plan_types(s);
	*out = s;
	return 0;
}

void evs_close(struct evs *s)
{
	if (!s)
		return;
	evs_bar(s, true);
	for (uint32_t i = 0; s->st && i < s->nst; i++) {
		struct evs_stream *st = &s->st[i];

		ev_packets_free(st->pk, st->npk);
		if (st->fd >= 0)
			close(st->fd);
		if (!st->pooled)
			free(st->buf);
	}
	if (s->pool)
		munmap(s->pool, s->pool_len);
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

/* evs_head_next for any event: every check in turn (see evsource.h). */
bool evs_head_next_any(struct evs_head *h, const struct evs_plan *plan)
{
	const uint64_t mask = (1ull << RIP_EVENT_TS_BITS) - 1;
	const uint8_t *d = h->data;
	const struct evs_plan *pl;
	size_t len = h->len, off = h->after, fields;
	uint64_t ts = h->ts, low;
	uint32_t id, w;

	/* ev_header's parse, with its checks (after <= len: a head never passes its packet) */
	if (len - off < 4) /* the end of the packet, or a header cut */
		return false;
	memcpy(&w, d + off, 4); /* little-endian, as the writer (checked at open) */
	if ((w & 31) == RIP_EVENT_ID_EXTENDED) {
		if (len - off < 13)
			return false;
		memcpy(&id, d + off + 1, 4);
		memcpy(&ts, d + off + 5, 8);
		if (id >= EV_MAX_TYPES)
			return false;
		off += 13;
	} else {
		id = w & 31;
		low = w >> 5;
		/*
		 * The low bits replaced, one more wrap of them when they are
		 * below the last ones: the time moves on by (low - ts) mod 2^bits.
		 */
		ts += (low - ts) & mask;
		off += 4;
	}
	pl = &plan[id];
	if (len - off < pl->need) /* and a type that is not valid needs more than there can be */
		return false;
	fields = off;
	off += pl->fixed;
	if (pl->tail == RIP_FT_STRING) {
		size_t max = len - off < RIP_STRING_MAX ? len - off : RIP_STRING_MAX;
		const uint8_t *nul = memchr(d + off, 0, max);

		if (!nul)
			return false;
		off = (size_t)(nul - d) + 1;
	} else if (pl->tail) {
		uint32_t cnt;

		if (len - off < 4)
			return false;
		memcpy(&cnt, d + off, 4);
		if (cnt > RIP_ARRAY_MAX || len - off - 4 < (size_t)cnt * 8)
			return false;
		off += 4 + (size_t)cnt * 8;
	}
	h->fields = fields;
	h->after = off;
	h->ts = ts;
	h->pl = pl;
	h->count++;
	return true;
}

/* evs_head met a problem: ev_decode, run over the packet, says what it is. */
static __attribute__((noinline)) int evs_head_bad(struct evs *s, struct evs_stream *st,
						   char *why, size_t whylen)
{
	int ret = ev_decode(s->types, st->data, st->len, st->ts_begin, NULL, NULL, why, whylen);

	if (ret >= 0) /* cannot be: the checks are the same */
		ret = rr_fail(why, whylen, -EBADMSG, "event at byte %zu could not be decoded",
			      st->after);
	return ret;
}

/*
 * Parse the event at st->after into the head: the fast path of ev_decode,
 * with the same checks; at the first problem, ev_decode itself is run over
 * the packet to say what it is (every event before it passed).  1: a new
 * head, 0: the packet has no more events, -errno.
 */
static inline RIP_HOT int evs_head(struct evs *s, struct evs_stream *st, char *why, size_t whylen)
{
	if (st->after >= st->len)
		return 0;
	if (!evs_head_next(&st->h, &s->fast))
		goto slow;
	return 1;

slow:
	return evs_head_bad(s, st, why, whylen);
}

/* Say where the problem why (from evs_head) of stream st is. */
static int evs_bad(struct evs *s, const struct evs_stream *st, int ret, const char *why,
		   char *err, size_t errlen)
{
	if (s->tr.pk)
		return rr_fail(err, errlen, ret, "%s: stream %" PRIu32 ", packet %" PRIu64 ": %s",
			       s->src, st->index, st->pkt_off, why);
	if (s->trace)
		return rr_fail(err, errlen, ret, "%s: offset %" PRIu64 ": %s", evs_path(s, st),
			       st->pkt_off, why);
	return rr_fail(err, errlen, ret, "%s: ring %" PRIu32 ": %s", s->src, st->index, why);
}

/* The packet of st is used up: does it hold as many events as its header said? */
static int evs_count_ok(struct evs *s, const struct evs_stream *st, char *err,
			size_t errlen)
{
	if (!st->check_count || st->count == st->pk_events)
		return 0;
	if (s->tr.pk)
		return rr_fail(err, errlen, -EBADMSG,
			       "%s: stream %" PRIu32 ", packet %" PRIu64 ": it says %" PRIu32
			       " events, holds %" PRIu32,
			       s->src, st->index, st->pkt_off, st->pk_events, st->count);
	return rr_fail(err, errlen, -EBADMSG,
		       "%s: offset %" PRIu64 ": packet says %" PRIu32 " events, holds %" PRIu32,
		       s->trace ? evs_path(s, st) : s->src, st->pkt_off, st->pk_events, st->count);
}

/*
 * Make the n bytes of the stream file at st->foff readable at st->buf +
 * st->bpos (n no more than what is left in the file): keep what the buffer
 * already holds and read on, a chunk at a time, so that a packet costs no
 * system call of its own.  When it reads, it reads ahead bytes at least
 * (a guess at what is wanted next: a packet's header is read with as many
 * bytes as the packet before it had, so that the packet comes in the same
 * read).  0 or -errno with the message in err.
 */
static int evs_fill(struct evs *s, struct evs_stream *st, size_t n, size_t ahead, char *err,
		    size_t errlen)
{
	size_t have = st->blen - st->bpos, want;
	ssize_t got;
	int ret;

	if (have >= n)
		return 0;
	/* the bytes still unread go to the front; then read a chunk, or n if more */
	want = n > s->chunk ? n : s->chunk;
	if (want < ahead)
		want = ahead;
	if (want > st->fsize - st->foff)
		want = (size_t)(st->fsize - st->foff);
	if (want > st->bufcap) {
		uint8_t *b = malloc(want);

		if (!b)
			return rr_fail(err, errlen, -ENOMEM, "out of memory");
		if (have)
			memcpy(b, st->buf + st->bpos, have);
		if (!st->pooled)
			free(st->buf);
		st->pooled = false;
		st->buf = b;
		st->bufcap = want;
	} else if (have) {
		memmove(st->buf, st->buf + st->bpos, have);
	}
	st->bpos = 0;
	st->blen = have;
	ret = evs_stream_fd(s, st, err, errlen);
	if (ret)
		return ret;
	while (st->blen < want) {
		got = pread(st->fd, st->buf + st->blen, want - st->blen,
			    (off_t)(st->foff + st->blen));
		if (got <= 0)
			return rr_fail(err, errlen, got < 0 ? -errno : -EIO,
				       "%s: offset %" PRIu64 ": %s", evs_path(s, st), st->foff + st->blen,
				       got < 0 ? strerror(errno) : "the file shrank while being read");
		st->blen += (size_t)got;
	}
	return 0;
}

/*
 * The next packet of a packed trace's stream (st->next counts them), held
 * in the block it was decoded in until the stream's next read, or, when
 * the trace's reader holds too many blocks, copied into st's buffer (the
 * block may be dropped by the next read).  Holding saves a copy of every
 * packet, and the fresh pages of a buffer per stream: at 1,000 threads, a
 * tenth of `rip leaks`' time went to first touches of those pages.  1: got
 * one, 0: end.
 */
static int evs_read_packed(struct evs *s, struct evs_stream *st, struct rip_packet *hdr,
			   char *err, size_t errlen)
{
	const uint8_t *data;
	uint32_t before = st->hold;
	char why[256];
	size_t len;
	int ret;

	/*
	 * The packet before is let go only once the next is held: when both
	 * are in one block (the usual), its holds never fall to 0 in between,
	 * and nobody is woken to find the block still wanted.
	 */
	st->hold = 0;
	for (;;) {
		ret = st->next >= trace_r_npackets(&s->tr, st->index) ?
			      0 :
			      trace_r_packet_hold(&s->tr, st->index, st->next, &data, &len,
						  &st->hold, err, errlen);
		if (ret != TRACE_R_DAMAGED)
			break;
		/* in a damaged block: lost, counted with the packets damaged, and the next read */
		s->tot.torn++;
		s->damaged++;
		st->skipped++;
		st->next++;
	}
	trace_r_packet_release(&s->tr, before);
	if (ret)
		return ret;
	if (st->next >= trace_r_npackets(&s->tr, st->index))
		return 0;
	st->pkt_off = st->next++;
	if (len < sizeof(*hdr))
		return rr_fail(err, errlen, -EBADMSG,
			       "%s: stream %" PRIu32 ", packet %" PRIu64 ": shorter than its header",
			       s->src, st->index, st->pkt_off);
	memcpy(hdr, data, sizeof(*hdr));
	ret = ev_check_packet(hdr, len, why, sizeof(why));
	if (!ret && (hdr->stream_id != 0 || hdr->content_size != hdr->packet_size ||
		     hdr->content_size / 8 != len || hdr->stream_instance_id != st->index))
		ret = rr_fail(why, sizeof(why), -EBADMSG,
			      "packet does not belong here (stream %" PRIu64 ", %" PRIu64
			      " of %" PRIu64 " bits used, %zu bytes)",
			      hdr->stream_instance_id, hdr->content_size, hdr->packet_size, len);
	if (ret)
		return rr_fail(err, errlen, ret, "%s: stream %" PRIu32 ", packet %" PRIu64 ": %s",
			       s->src, st->index, st->pkt_off, why);
	st->len = len;
	if (st->hold) {
		st->data = data;
		return 1;
	}
	if (len > st->bufcap) {
		uint8_t *b = malloc(len);

		if (!b)
			return rr_fail(err, errlen, -ENOMEM, "out of memory");
		if (!st->pooled)
			free(st->buf);
		st->pooled = false;
		st->buf = b;
		st->bufcap = len;
	}
	memcpy(st->buf, data, len);
	st->data = st->buf;
	return 1;
}

/*
 * The last packet of st's stream file runs past its end (hdr: its header,
 * NULL: the header itself is cut).  In a trace read while its recording
 * went on, or whose recorder was killed (TRACE_F_LIVE), that is the packet
 * being written: the stream ends before it, and it is counted lost (with
 * its events when its header says).  True then; false in a finished trace,
 * where it is damage.
 */
static bool evs_live_cut(struct evs *s, struct evs_stream *st, const struct rip_packet *hdr)
{
	if (!s->trace || !(s->tr.info.idx.flags & TRACE_F_LIVE))
		return false;
	s->gone_packets++;
	if (hdr)
		s->gone_events += hdr->events;
	st->foff = st->fsize;
	return true;
}

/* Read the next packet of a trace stream file.  1: got one, 0: end. */
static int evs_read_packet(struct evs *s, struct evs_stream *st, struct rip_packet *hdr,
			   char *err, size_t errlen)
{
	uint64_t left = st->fsize - st->foff, size;
	size_t ahead;
	char why[256];
	int ret;

	if (!st->exists || !left)
		return 0;
	if (left < RIP_PACKET_HDR_SIZE && evs_live_cut(s, st, NULL))
		return 0;
	if (left < RIP_PACKET_HDR_SIZE)
		return rr_fail(err, errlen, -EBADMSG,
				"%s: offset %" PRIu64 ": packet header cut (%" PRIu64
				" bytes left)",
				evs_path(s, st), st->foff, left);
	/*
	 * Many streams read small chunks: the size of a packet of the ring (at
	 * first as the header says, then the last packet's, in pages) brings a
	 * packet in one read.  A guess only: any value reads the same bytes.
	 */
	ahead = st->len ? st->len : rip_evring_packet_bytes(s->hdr, st->index);
	ahead = ahead > (1u << 20) ? 0 : (ahead + 4095) & ~(size_t)4095;
	ret = evs_fill(s, st, RIP_PACKET_HDR_SIZE, ahead, err, errlen);
	if (ret)
		return ret;
	memcpy(hdr, st->buf + st->bpos, sizeof(*hdr));
	if (hdr->magic == RIP_CTF_MAGIC && hdr->content_size / 8 > left && evs_live_cut(s, st, hdr))
		return 0;
	ret = ev_check_packet(hdr, left > EVS_MAX_PACKET ? EVS_MAX_PACKET : (size_t)left, why,
			      sizeof(why));
	if (ret)
		return rr_fail(err, errlen, ret, "%s: offset %" PRIu64 ": %s", evs_path(s, st), st->foff,
				why);
	/* A trace's packets are cut to their content, in the file of their ring. */
	if (hdr->stream_id != 0 || hdr->content_size != hdr->packet_size ||
	    hdr->stream_instance_id != st->index)
		return rr_fail(err, errlen, -EBADMSG,
				"%s: offset %" PRIu64
				": packet does not belong here (stream %" PRIu64
				", %" PRIu64 " of %" PRIu64 " bits used)",
				evs_path(s, st), st->foff, hdr->stream_instance_id, hdr->content_size,
				hdr->packet_size);
	size = hdr->content_size / 8; /* ev_check_packet: no more than what is left */
	ret = evs_fill(s, st, (size_t)size, 0, err, errlen);
	if (ret)
		return ret;
	st->pkt_off = st->foff;
	st->data = st->buf + st->bpos;
	st->len = size;
	st->bpos += size; /* packet_size == content_size, checked above */
	st->foff += size;
	return 1;
}

void evs_set_progress(struct evs *s, evs_progress_fn *fn, void *arg)
{
	s->progress = fn;
	s->progress_arg = arg;
}

/*
 * Load the next packet of st that holds events.  1: its first event is
 * st's head, 0: the stream is done, <0: corrupt.
 */
static int evs_load(struct evs *s, struct evs_stream *st, char *err, size_t errlen)
{
	for (;;) {
		struct rip_packet hdr;
		char why[256];
		int ret;

		if (s->tr.pk) {
			ret = evs_read_packed(s, st, &hdr, err, errlen);
			if (ret <= 0)
				return ret;
		} else if (s->trace) {
			ret = evs_read_packet(s, st, &hdr, err, errlen);
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
		s->done += s->trace ? hdr.packet_size / 8 : st->len;
		if (s->progress && (!(++s->pk_tick & 63) || s->pk_tick == 1))
			evs_bar(s, false);
		if (st->seen) {
			if (hdr.packet_seq_num <= st->seq) {
				if (s->trace) {
					rr_fail(why, sizeof(why), -EBADMSG,
						"packet sequence number %" PRIu64 " after %" PRIu64,
						hdr.packet_seq_num, st->seq);
					return evs_bad(s, st, -EBADMSG, why, err, errlen);
				}
			} else {
				uint64_t gap = hdr.packet_seq_num - st->seq - 1;

				/* those of damaged blocks are counted already (torn) */
				s->tot.lost_packets += gap > st->skipped ? gap - st->skipped : 0;
			}
		}
		st->skipped = 0;
		st->seen = true;
		st->seq = hdr.packet_seq_num;
		st->discarded = hdr.events_discarded;
		if (hdr.tid != st->tid || !st->thread) {
			st->tid = hdr.tid;
			st->thread = evs_thread_name(s, hdr.tid);
		}
		st->coro = hdr.coro;
		st->ts_begin = st->ts = hdr.timestamp_begin;
		st->after = RIP_PACKET_HDR_SIZE;
		st->quick = st->len >= (size_t)4 + s->fast.qmax ? st->len - 4 - s->fast.qmax + 1 : 0;
		st->count = 0;
		st->pk_events = hdr.events;
		st->check_count = s->trace;
		ret = st->len < RIP_PACKET_HDR_SIZE
			      ? rr_fail(why, sizeof(why), -EBADMSG, "packet shorter than its header")
			      : evs_head(s, st, why, sizeof(why));
		if (ret < 0)
			return evs_bad(s, st, ret, why, err, errlen);
		if (ret)
			return 1;
		ret = evs_count_ok(s, st, err, errlen); /* an empty packet */
		if (ret)
			return ret;
	}
}

/* ---- the merge -------------------------------------------------------------------- */

/* Does heap entry a come before b: earlier, or at the same time from a lower stream? */
static inline bool evs_before(const struct evs_hent *a, const struct evs_hent *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->st < b->st);
}

/*
 * The top's stream moved on (its head is later now): sift it down.  (ts,
 * stream) orders the heads strictly, so the order events come out in does
 * not depend on the shape of the heap.
 */
/* x, which goes at heap[i] (its place now empty), sifted down to its place. */
static inline void evs_sift_down(struct evs *s, uint32_t i, struct evs_hent x)
{
	struct evs_hent *h = s->heap;
	uint32_t n = s->nheap;

	for (;;) {
		uint32_t l = 2 * i + 1, m = l;

		if (l >= n)
			break;
		if (l + 1 < n && evs_before(&h[l + 1], &h[l]))
			m = l + 1;
		if (!evs_before(&h[m], &x))
			break;
		h[i] = h[m];
		i = m;
	}
	h[i] = x;
}

static inline void evs_sift_top(struct evs *s)
{
	struct evs_hent x = { .st = s->heap[0].st };

	x.ts = s->st[x.st].ts;
	evs_sift_down(s, 0, x);
}

/*
 * The top's stream moved on past the second stream's head (bound_ts,
 * bound_st, at heap[bound_i]), to a head at ts: that one takes the top and
 * the top's stream sifts down from its place, one level of compares less
 * than evs_sift_top.  At every change of lead: 5.8 events apart at 2, 60
 * and 1,000 threads of the deep-stack traces.
 */
static inline void evs_sift_past(struct evs *s, uint64_t ts)
{
	struct evs_hent x = { .st = s->heap[0].st, .ts = ts };

	s->heap[0] = s->heap[s->bound_i];
	evs_sift_down(s, s->bound_i, x);
}

static void evs_sift_up(struct evs *s, uint32_t i)
{
	struct evs_hent *h = s->heap, x = h[i];

	while (i) {
		uint32_t p = (i - 1) / 2;

		if (!evs_before(&x, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = x;
}

/* Note which stream comes second (the earlier child of the top), for evs_next. */
static inline void evs_bound(struct evs *s)
{
	const struct evs_hent *c;

	if (s->nheap < 2) {
		s->bound_ts = UINT64_MAX;
		s->bound_st = UINT32_MAX;
		return;
	}
	s->bound_i = 1 + (s->nheap > 2 && evs_before(&s->heap[2], &s->heap[1]));
	c = &s->heap[s->bound_i];
	s->bound_ts = c->ts;
	s->bound_st = c->st;
}

/*
 * Stream st needs its next packet (after its events up to floor): in a
 * packed trace whose block says when its packets begin, the stream waits
 * in the heap at that time, not loaded, and its packet before is let go.
 * A merge of 1,000 threads that each ran in short slices over the whole
 * recording needed every stream's next packet at once when loaded at
 * once: the blocks that held them were most of the trace, decoded and
 * held together.  True when deferred (st->ts its time in the heap).
 */
static bool evs_defer(struct evs *s, struct evs_stream *st, uint64_t floor)
{
	uint64_t after;

	if (!s->defer || st->next >= trace_r_npackets(&s->tr, st->index))
		return false;
	after = trace_r_packet_after(&s->tr, st->index, st->next);
	trace_r_packet_release(&s->tr, st->hold);
	st->hold = 0;
	st->deferred = true;
	st->ts = after > floor ? after : floor;
	return true;
}

/* The top's stream has a new head (more: 1) or nothing more (0): it sifts down or leaves. */
static void evs_top_moved(struct evs *s, int more)
{
	if (!more)
		s->heap[0] = s->heap[--s->nheap];
	if (s->nheap)
		evs_sift_top(s);
}

/*
 * Take up the deferred streams at the top until the top's packet is
 * loaded: each gets its packet and goes to the time of its first event
 * (no earlier than the bound it waited at, when the trace says true), or
 * leaves the heap.  0 or -errno.
 */
static int evs_resolve(struct evs *s, char *err, size_t errlen)
{
	while (s->nheap) {
		struct evs_stream *st = &s->st[s->heap[0].st];
		int ret;

		if (!st->deferred)
			return 0;
		st->deferred = false;
		ret = evs_load(s, st, err, errlen);
		if (ret < 0)
			return ret;
		evs_top_moved(s, ret);
	}
	return 0;
}

static int evs_prime(struct evs *s, char *err, size_t errlen)
{
	int ret;

	s->primed = true;
	for (uint32_t i = 0; i < s->nst; i++) {
		struct evs_stream *st = &s->st[i];

		ret = evs_defer(s, st, 0) ? 1 : evs_load(s, st, err, errlen);
		if (ret < 0)
			return ret;
		if (ret) {
			s->heap[s->nheap] = (struct evs_hent){ .ts = st->ts, .st = i };
			evs_sift_up(s, s->nheap++);
		}
	}
	ret = evs_resolve(s, err, errlen);
	evs_bound(s);
	return ret;
}

/*
 * The fields, at off, of an event evs_head has already checked.  raw points
 * at them where 8 bytes can be read at every field's offset inside the
 * packet, else at a copy in pad with room behind; v[] gets them decoded
 * unless lazy.
 */
static inline void evs_fields(const struct evs_plan *pl, const uint8_t *data, size_t len,
			      size_t off, bool lazy, uint8_t *pad, struct evs_event *e)
{
	e->str = NULL;
	e->arr = NULL;
	e->narr = 0;
	e->plan = pl;
	if (__builtin_expect(off + pl->fixed + 8 <= len, 1)) {
		e->raw = data + off;
	} else {
		memset(pad, 0, pl->fixed + 8);
		memcpy(pad, data + off, pl->fixed);
		e->raw = pad;
	}
	if (!lazy)
		for (uint32_t i = 0; i < pl->nfix; i++)
			e->v[i] = evs_val(e, i);
	off += pl->fixed;
	if (pl->tail == RIP_FT_STRING) {
		e->str = (const char *)data + off;
		e->v[pl->nfix] = 0;
	} else if (pl->tail == RIP_FT_HEX64_ARRAY) {
		uint32_t n;

		memcpy(&n, data + off, 4);
		e->narr = n;
		e->arr = data + off + 4;
		e->v[pl->nfix] = n;
	}
}

/*
 * The stream at the top of the heap used up its packet: load the next (or
 * defer it) or drop it; or the top is a stream deferred: take it up.
 */
static int evs_refill(struct evs *s, char *err, size_t errlen)
{
	struct evs_stream *st = &s->st[s->heap[0].st];
	int ret = 0;

	if (!st->deferred) {
		ret = evs_count_ok(s, st, err, errlen);
		if (ret)
			return ret;
		ret = evs_defer(s, st, st->ts) ? 1 : evs_load(s, st, err, errlen);
		if (ret < 0)
			return ret;
		evs_top_moved(s, ret);
	}
	ret = evs_resolve(s, err, errlen);
	s->refill = false;
	evs_bound(s);
	return ret;
}

/* The top's stream changed: a deferred one is taken up before its events (evs_refill). */
static inline void evs_top_check(struct evs *s)
{
	if (__builtin_expect(s->st[s->heap[0].st].deferred, 0))
		s->refill = true;
}

/* The next event, the whole way (evs_next without the fast path's state). */
static int evs_next1(struct evs *s, struct evs_event *e, char *err, size_t errlen)
{
	struct evs_stream *st;
	uint32_t id;
	int ret;

	if (__builtin_expect(!s->primed || s->refill || s->failed, 0)) {
		if (s->failed) { /* the event after the last one handed out is corrupt */
			evs_bar(s, true);
			return rr_fail(err, errlen, s->failed, "%s", s->fail_msg);
		}
		ret = s->primed ? evs_refill(s, err, errlen) : evs_prime(s, err, errlen);
		if (ret) {
			evs_bar(s, true);
			return ret;
		}
	}
	if (!s->nheap) {
		evs_bar(s, true);
		/*
		 * The index counts what the recorder wrote (less a packed trace's
		 * chunks found missing or cut, counted as lost): fewer or more
		 * means damage.
		 */
		const struct trace_chunk_info *one =
			s->tr.only ? trace_chunk_of(&s->tr.info, s->tr.only - 1) : NULL;
		uint64_t gone = s->gone_events - s->tr.info.store.dropped_events;
		/* (a packet cut in a live trace may have come after the index: more gone) */
		uint64_t want = s->tr.info.idx.events > gone ? s->tr.info.idx.events - gone : 0;

		/*
		 * Read while its recording went on (or its recorder was killed):
		 * the chunk after those counted, or the stream files, hold what
		 * was written after the index too.
		 */
		bool more = !one && (s->tr.info.idx.flags & TRACE_F_LIVE);

		if (one) /* one chunk: what it held, less a cut */
			want = one->events - s->gone_events;

		/* packets of damaged blocks skipped: what they held is what is missing */
		if (s->damaged && s->tot.events <= want)
			s->damaged_events = want - s->tot.events;
		else if (s->trace && (more ? s->tot.events < want : s->tot.events != want)) {
			s->failed = rr_fail(s->fail_msg, sizeof(s->fail_msg), -EBADMSG,
					    "%s: the %s hold %" PRIu64 " events, the index says %" PRIu64
					    ": %s",
					    s->src, s->tr.pk ? "chunks" : "stream files", s->tot.events,
					    want,
					    s->tr.pk ? "a chunk was damaged"
						     : "a stream file was cut, emptied or lost");
			return rr_fail(err, errlen, s->failed, "%s", s->fail_msg);
		}
		return 0;
	}
	st = &s->st[s->heap[0].st];
	id = (uint32_t)(st->pl - s->plan);
	e->ts = st->ts;
	e->ns = evs_ns(s, st->ts);
	e->tid = st->tid;
	e->type = &s->types->t[id];
	evs_fields(st->pl, st->data, st->len, st->fields, s->lazy, s->pad, e);
	if (!s->lazy) {
		/* e->ns may be saturated (rr_clock_ns): so is the sum */
		if (__builtin_add_overflow(e->ns, s->hdr->realtime_offset, &e->wall_ns))
			e->wall_ns = e->ns < 0 ? INT64_MIN : INT64_MAX;
		e->stream = st->index;
		e->thread = st->thread;
		e->coro = st->coro;
		e->coro_name = st->coro ? evs_coro_name(s, st->coro) : NULL;
	}
	if (__builtin_expect(id == s->bt_id, 0) && s->bt_hook)
		s->bt_hook(s->bt_arg, e->arr, e->narr);
	e->is_switch = id == s->switch_id;
	if (e->is_switch)
		st->coro = (uint32_t)evs_val(e, 0);
	s->tot.events++;

	/*
	 * Advance the cursor.  When the packet is used up, the next one is read
	 * at the next call: e points into this one's bytes until then.
	 */
	ret = evs_head(s, st, s->why, sizeof(s->why));
	if (__builtin_expect(ret > 0, 1)) {
		if (st->ts > s->bound_ts || (st->ts == s->bound_ts && st->index > s->bound_st)) {
			evs_sift_past(s, st->ts);
			evs_bound(s);
			evs_top_check(s);
		}
	} else if (!ret) {
		s->refill = true;
	} else {
		s->failed = evs_bad(s, st, ret, s->why, s->fail_msg, sizeof(s->fail_msg));
	}
	return 1;
}

/* ---- the fast path's state (see evsource.h) ------------------------------------------- */

/* Take back what evs_next_fast did: the head into its stream, the merge, the count. */
static void evs_sync(struct evs *s)
{
	struct evs_fast *f = &s->fast;
	struct evs_stream *st;
	int ret;

	if (f->state == EVS_FAST_OFF)
		return;
	s->tot.events += f->events;
	f->events = 0;
	st = &s->st[s->heap[0].st]; /* the head moved in place (the top's: evs_arm) */
	ret = 1;
	if (f->state == EVS_FAST_ADVANCE)
		ret = evs_head(s, st, s->why, sizeof(s->why));
	if (ret > 0 && (st->ts > s->bound_ts || (st->ts == s->bound_ts && st->index > s->bound_st))) {
		evs_sift_past(s, st->ts);
		evs_bound(s);
		evs_top_check(s);
	} else if (!ret) {
		s->refill = true;
	} else if (ret < 0) {
		s->failed = evs_bad(s, st, ret, s->why, s->fail_msg, sizeof(s->fail_msg));
	}
	f->state = EVS_FAST_OFF;
	f->h = &f->stop;
}

/*
 * The bound of the fast path's head f->h, the top of the heap, which is
 * before the next stream's head (bound_ts, bound_st): at the same time,
 * from a lower stream.  So when its stream comes after, bound_ts is above
 * its time, and not 0.
 */
static inline RIP_HOT void evs_fast_bound(struct evs *s)
{
	struct evs_fast *f = &s->fast;

	f->bound_gt = s->bound_ts - (f->h->index > s->bound_st);
}

/* Let evs_next_fast go on with the leading stream's head, when nothing else is due. */
static inline RIP_HOT void evs_arm(struct evs *s)
{
	struct evs_fast *f = &s->fast;

	if (!s->lazy || !s->primed || s->refill || s->failed || !s->nheap)
		return;
	f->h = &s->st[s->heap[0].st].h;
	evs_fast_bound(s);
	f->state = EVS_FAST_HEAD;
}

void evs_fast_switch(struct evs *s)
{
	struct evs_fast *f = &s->fast;
	/* the second stream leads now: known before the heap moves */
	struct evs_stream *lead = &s->st[s->bound_st];

	/*
	 * The head moved in place and its count waits in f->events: only the
	 * merge moves (the state stays EVS_FAST_HEAD).  What evs_arm checks has
	 * not changed since it armed.
	 */
	evs_sift_past(s, f->h->ts);
	evs_bound(s);
	if (__builtin_expect(lead->deferred, 0)) {
		/* its packet is not loaded: evs_next takes it up (evs_refill) */
		s->tot.events += f->events;
		f->events = 0;
		f->state = EVS_FAST_OFF;
		f->h = &f->stop;
		s->refill = true;
		return;
	}
	f->h = &lead->h;
	f->bound_gt = s->bound_ts - (lead->index > s->bound_st);
	if (s->nheap > 1) {
		/*
		 * The next stream is likely to lead next: with hundreds of
		 * streams its head and its packet are out of the caches by now.
		 */
		const struct evs_head *n = &s->st[s->bound_st].h;

		__builtin_prefetch(n->data + n->fields);
	}
}

int evs_next(struct evs *s, struct evs_event *e, char *err, size_t errlen)
{
	int ret;

	evs_sync(s);
	ret = evs_next1(s, e, err, errlen);
	if (ret > 0)
		evs_arm(s);
	return ret;
}

void evs_set_lazy(struct evs *s, bool lazy)
{
	evs_sync(s);
	s->lazy = lazy;
}

void evs_set_bt_hook(struct evs *s, evs_bt_hook *fn, void *arg)
{
	if (s->bt_id < EV_MAX_TYPES) {
		s->plan[s->bt_id].slow = fn != NULL; /* evs_next calls the hook */
		evs_plan_need(&s->plan[s->bt_id]);
	}
	s->bt_hook = fn;
	s->bt_arg = arg;
}

void evs_totals(const struct evs *s, struct evs_totals *t)
{
	*t = s->tot;
	t->events += s->fast.events; /* not taken back yet */
	t->discarded = 0;
	t->samples_lost = 0;
	/*
	 * A trace's stream after the event rings' holds the CPU samples: the
	 * samples it lost are no resource event lost (rip leaks warned that a
	 * release may be missing for each timer period merged into one signal).
	 */
	/* the streams read: a trace's index may count every ring the file could have had */
	t->streams = 0;
	for (uint32_t i = 0; i < s->nst; i++) {
		t->streams += s->st[i].seen;
		if (s->trace && s->hdr && i == s->hdr->ev_rings)
			t->samples_lost = s->st[i].discarded;
		else
			t->discarded += s->st[i].discarded;
	}
	/*
	 * A trace's index counts what the recorder saw; report the larger of
	 * each.  The packets of chunks gone are not in the index's count, but
	 * the gaps in the streams' sequence numbers count those of a chunk
	 * missing between two read: the larger of the recorder's count with
	 * them and the gaps (a missing chunk's packets were counted twice).
	 */
	if (s->idx_discarded > t->discarded)
		t->discarded = s->idx_discarded;
	if (s->idx_lost + s->gone_packets > t->lost_packets)
		t->lost_packets = s->idx_lost + s->gone_packets;
	t->discarded += s->gone_events + s->damaged_events;
	t->gone_chunks = s->gone_chunks;
	t->unfinished = evs_recording_on(s);
}

const char *evs_damage(struct evs *s, uint32_t *blocks)
{
	*blocks = s->trace && s->tr.pk ? trace_r_damaged(&s->tr, s->damage, sizeof(s->damage)) : 0;
	if (*blocks <= s->damage_said)
		return NULL;
	s->damage_said = *blocks;
	return s->damage;
}

uint64_t evs_stream_discarded(const struct evs *s, uint32_t stream)
{
	return stream < s->nst ? s->st[stream].discarded : 0;
}

const struct rip_file_hdr *evs_file_hdr(const struct evs *s)
{
	return s->hdr;
}

const struct ev_types *evs_types(const struct evs *s)
{
	return s->types;
}

uint64_t evs_size(const struct evs *s)
{
	return s->total;
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

bool evs_recording_on(const struct evs *s)
{
	return s->trace && !s->tr.only && (s->tr.info.idx.flags & TRACE_F_LIVE);
}

bool evs_one_chunk_of_many(const struct evs *s)
{
	return s->trace && s->tr.only &&
	       (s->tr.only > 1 || s->tr.info.store.nchunks > 1 ||
		(s->tr.info.idx.flags & TRACE_F_LIVE));
}

bool evs_chunks_unread(const struct evs *s)
{
	return s->trace && (s->gone_chunks > 0 || s->tr.only > 1);
}
