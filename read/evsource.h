/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/evsource.h - an event source for the commands that read events
 * (rip dump, rip export): every event of a recorded trace directory or of a
 * ring file (a pid, live or dead, or the file itself), merged across
 * streams in time order, with the thread and the coroutine it ran on.
 *
 * Streams are read packet by packet and merged through a heap of
 * per-stream cursors, so memory is bounded by one decoded packet per
 * stream, not by the size of the trace.  Losses are counted as they go by:
 * discarded or overwritten events (the last packet's events_discarded of
 * each stream) and lost packets (gaps in the packets' sequence numbers).
 */
#ifndef RIP_READ_EVSOURCE_H
#define RIP_READ_EVSOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rip/abi.h>
#include <internal/hot.h>

#include "read/evread.h"

struct evs;

/*
 * How to read the fields of one event type, worked out once from the type
 * table: the size and signedness of each fixed-size field, then the tail.
 */
struct evs_plan {
	bool valid;
	uint8_t nfix;		/* fixed-size fields before the tail */
	uint8_t tail;		/* 0, RIP_FT_STRING or RIP_FT_HEX64_ARRAY */
	uint8_t size[RIP_EVENT_MAX_FIELDS];
	uint8_t sign[RIP_EVENT_MAX_FIELDS]; /* sign-extend from this many bytes, 0: no */
	uint8_t shift[RIP_EVENT_MAX_FIELDS]; /* 64 - 8 * size */
	uint16_t off[RIP_EVENT_MAX_FIELDS];  /* of each fixed field after the event header */
	uint32_t fixed;		/* bytes of the fixed-size fields */
	bool slow;		/* evs_next_fast hands it to evs_next (switches, hooked rip:bt) */
	/*
	 * What evs_head_next and evs_next_fast test, one compare each: the bytes
	 * an event of the type needs after its header (fixed; SIZE_MAX when
	 * the type is not valid), and the bytes evs_next_fast needs at its
	 * fields to hand it out (fixed + 8 for 8-byte loads; SIZE_MAX when
	 * slow).  evs_plan_need sets them.
	 */
	size_t need, fast_need;
	const struct ev_type *type;
};

struct evs_event {
	uint64_t ts;		  /* ticks of the file's clock */
	int64_t ns;		  /* CLOCK_MONOTONIC_RAW ns */
	int64_t wall_ns;	  /* CLOCK_REALTIME ns (through the file's realtime_offset) */
	uint32_t stream;	  /* index of the stream (event ring) in the source */
	int32_t tid;		  /* the thread that emitted it */
	const char *thread;	  /* its name, "" when unknown */
	uint32_t coro;		  /* slot index + 1 of the coroutine it ran on, 0: none */
	const char *coro_name;	  /* its name (or "coro#N"), NULL when coro is 0 */
	bool is_switch;		  /* a rip:coro_switch event: v[0] to, v[1] from */
	const struct ev_type *type;
	uint64_t v[RIP_EVENT_MAX_FIELDS]; /* integers, sign-extended for signed fields */
	const char *str;	  /* the string field, or NULL */
	const uint8_t *arr;	  /* the u64 array field: narr values, little-endian, unaligned */
	uint32_t narr;		  /* (ev_decode checked the count against the packet) */
	/*
	 * The fixed-size fields as on the wire, with at least 8 bytes readable at
	 * each: what evs_val reads.  With evs_set_lazy, v[] holds only the tail's
	 * value.
	 */
	const uint8_t *raw;
	const struct evs_plan *plan;
};

/*
 * Field i of e when it is one of the fixed-size fields (i below the
 * plan's nfix: every integer field, as a string or an array can only be
 * the last field of a type), read from the packet without a branch on the
 * sign.  evs_val is this and a test for the tail; the resource passes call
 * it directly, three fields an event.
 */
static inline uint64_t evs_fixed(const struct evs_event *e, uint32_t i)
{
	const struct evs_plan *pl = e->plan;
	uint64_t v;
	int64_t s;

	__builtin_memcpy(&v, e->raw + pl->off[i], 8); /* evs_next made 8 bytes readable */
	v <<= pl->shift[i];
	s = (int64_t)v >> pl->shift[i];
	v >>= pl->shift[i];
	return pl->sign[i] ? (uint64_t)s : v;
}

/*
 * Field i of e (e->v[i]), read from the packet when evs_next left it there
 * (evs_set_lazy): a consumer that reads few of an event's fields, or reads
 * them once, saves decoding the others.
 */
static inline uint64_t evs_val(const struct evs_event *e, uint32_t i)
{
	if (i >= e->plan->nfix)
		return e->v[i]; /* the tail's count, or 0 */
	return evs_fixed(e, i);
}

struct evs_totals {
	uint64_t events;	  /* events handed out */
	uint64_t packets;	  /* packets read */
	uint64_t streams;	  /* streams of the source that held a packet read */
	uint64_t discarded;	  /* events discarded or overwritten by the writers, or in
				     chunks of a packed trace that are gone (--max-size);
				     not the CPU samples: samples_lost */
	uint64_t samples_lost;	  /* a trace's CPU samples the recorder counted lost (the
				     discarded of their stream, after the event rings') */
	uint64_t lost_packets;	  /* packets missing: gaps in sequence numbers, and those
				     chunks' packets */
	uint64_t torn;		  /* packets of a live ring reused while being copied */
	uint32_t gone_chunks;	  /* a packed trace's chunks gone (dropped, missing, cut) */
	bool unfinished;	  /* a trace read while its recording went on, or whose
				     recorder was killed: what it had not written is not
				     counted (evs_recording_on) */
};

/*
 * Open TRACE-OR-TARGET: a trace directory (with .rip-index), a pid or a
 * ring file.  0, or -errno with a one-line message in err.
 */
int evs_open(const char *target, struct evs **out, char *err, size_t errlen);

/*
 * The next event in time order (equal times: by stream).  1 and *e filled
 * (its pointers valid until the next call), 0 at the end, or -errno with a
 * message naming the file and offset when the source is corrupt.
 */
int evs_next(struct evs *s, struct evs_event *e, char *err, size_t errlen);

void evs_totals(const struct evs *s, struct evs_totals *t);

/*
 * A packed trace's blocks found damaged so far, whose packets were skipped
 * (counted in torn, what they held in discarded): their number in *blocks,
 * and what the first said (file, offset, what is wrong); NULL when none, or
 * when no block was found since the last call said them (said once).
 */
const char *evs_damage(struct evs *s, uint32_t *blocks);

/*
 * From now on, evs_next fills only what a resource analysis reads: ts, ns,
 * tid, type, is_switch and the fields, and may leave the fixed-size fields
 * in the packet (e->raw): the caller reads every field with evs_val, never
 * e->v directly, and does not use wall_ns, stream, thread, coro or coro_name.
 */
void evs_set_lazy(struct evs *s, bool lazy);

/*
 * Have fn see the frames of every rip:bt event (a backtrace definition) as
 * evs_next hands it out: n return addresses, little-endian, unaligned (read
 * them with evs_arr).  fn NULL: no more.
 */
typedef void evs_bt_hook(void *arg, const uint8_t *frames, uint32_t n);
void evs_set_bt_hook(struct evs *s, evs_bt_hook *fn, void *arg);

/* The header of the ring file (for a trace, as recorded): clock, pid, comm. */
const struct rip_file_hdr *evs_file_hdr(const struct evs *s);
/* The event types and category names. */
const struct ev_types *evs_types(const struct evs *s);
/* Name of coroutine coro (slot index + 1): its slot's name, or "coro#N". */
const char *evs_coro_name(struct evs *s, uint32_t coro);
/* Name of thread tid, "" when unknown. */
const char *evs_thread_name(struct evs *s, int32_t tid);
/* Number of streams (evs_event.stream < this). */
uint32_t evs_nstreams(const struct evs *s);
/*
 * The events stream discarded, as the last packet of it read so far says
 * (CTF's events_discarded is cumulative); 0 for a stream out of range.
 */
uint64_t evs_stream_discarded(const struct evs *s, uint32_t stream);
/* Bytes of packets in all the streams (what the progress callback counts to). */
uint64_t evs_size(const struct evs *s);
/*
 * The module map (for symbols): the trace's index, or the ring file's map
 * read now.  *out stays owned by s (valid until evs_close).  0 or -errno.
 */
int evs_modules(struct evs *s, const struct rip_module **out, size_t *n, char *err,
		size_t errlen);
/* The source as opened: the trace directory or the ring file's path. */
const char *evs_source(const struct evs *s);
/* Is the source a recorded trace directory (not a ring file)? */
bool evs_is_trace(const struct evs *s);
/*
 * Is the source a trace directory whose index was written at a chunk's
 * close while its recording went on (TRACE_F_LIVE: the recorder still
 * runs, or was killed), read whole?  Then what came after that chunk is
 * not in it, and no loss counts it.  (A chunk read alone is a part by
 * choice: false.)
 */
bool evs_recording_on(const struct evs *s);
/*
 * Is the source a packed trace read without some chunk that came before
 * one it reads (dropped by --max-size, handed on by --on-rotate, missing
 * or cut, or a chunk after the first read alone)?  Then a stack is
 * defined once per process, in the chunk where it was first met: uses in
 * the chunks read may name stacks whose rip:bt is not there.
 */
bool evs_chunks_unread(const struct evs *s);
/*
 * Is the source one chunk of a packed trace read alone, and one of several
 * (a chunk after the first, or one whose index counts others, or closed
 * while the recording went on)?  Then what it made may be released in a
 * chunk after it, and what it releases may have been made before it.
 */
bool evs_one_chunk_of_many(const struct evs *s);
/* Element i of an event's u64 array (i < narr). */
static inline uint64_t evs_arr(const struct evs_event *e, uint32_t i)
{
	uint64_t v;

	__builtin_memcpy(&v, e->arr + (size_t)i * 8, 8);
	return v; /* the trace's byte order is the host's (checked when it is opened) */
}

/*
 * Progress: fn(done, total, end, arg) is called with the bytes of packets
 * read so far of all there are, on the first packet and every 64th after,
 * and once more with end true when the events end (or fail, or s closes).
 * NULL: nobody is told.
 */
typedef void evs_progress_fn(uint64_t done, uint64_t total, bool end, void *arg);
void evs_set_progress(struct evs *s, evs_progress_fn *fn, void *arg);

void evs_close(struct evs *s);

/* ---- the fast path of a lazy source --------------------------------------------------- */

/*
 * The head of the leading stream, mirrored at the start of struct evs so
 * that evs_next_fast can hand events out inline while that stream stays
 * ahead of the others (bound) within its packet.  Anything else (a new
 * packet, another stream taking the lead, a problem, an event of a slow
 * type) goes through evs_next, which takes the state back first.
 */
enum evs_fast_state {
	EVS_FAST_OFF,	  /* evs_next owns the streams */
	EVS_FAST_HEAD,	  /* head below: valid, not handed out yet */
	EVS_FAST_ADVANCE, /* the head was handed out; evs_next parses the next one */
};

/*
 * The head of a stream: its packet, and the next event to hand out, parsed
 * and checked, its fields at offset fields, the event after it at after,
 * its type's plan pl (its id: pl less the plan table); count: events of
 * the packet parsed so far, head included.  It is
 * part of the stream (evsource.c), so that the fast path moves it in place
 * and taking the lead is a change of pointer.
 */
#define EVS_HEAD_FIELDS                                                                            \
	const uint8_t *data; /* the packet being handed out */                                     \
	size_t len;                                                                                \
	size_t after, fields;                                                                      \
	size_t quick; /* an event before this offset has room for any quick type (evs_fast) */    \
	uint64_t ts;		   /* the head's time */                                           \
	const struct evs_plan *pl; /* the head's type's plan */                                    \
	uint32_t count;                                                                            \
	uint32_t index; /* the stream (then tid: as evs_event's stream and tid) */                 \
	int32_t tid;

struct evs_head {
	EVS_HEAD_FIELDS
};

struct evs_fast {
	enum evs_fast_state state;
	struct evs_head *h;  /* the leading stream's head */
	/*
	 * The next stream's head (time, index) as one time: the head leads
	 * while its time is not above bound_gt (bound_ts, or bound_ts - 1 when
	 * the head's stream comes after the next one's: the lower stream goes
	 * first at the same time).  The head leads when it is set, so it is
	 * before the next one: bound_ts - 1 is no wrap.
	 */
	uint64_t bound_gt;
	uint64_t events;     /* handed out here, not yet in the totals */
	const struct evs_plan *plan;
	/*
	 * The quick types: those of a short header (id below
	 * RIP_EVENT_ID_EXTENDED), valid, of fixed size: q[id] is their plan
	 * and their fields' size, -1 for every other id.  An event that begins
	 * more than 4 + qmax bytes before its packet's end (a head's quick)
	 * has room for any of them, so that evs_head_next parses it with one
	 * test of its place and one of its type.
	 */
	struct {
		const struct evs_plan *pl;
		int64_t fixed;
	} q[RIP_EVENT_ID_EXTENDED + 1];
	uint32_t qmax;
	/*
	 * h when the state is not EVS_FAST_HEAD: a head whose plan's
	 * fast_need no packet has, so that evs_next_fast's one test of the
	 * room left sends it to evs_next, with no test of the state.
	 */
	struct evs_head stop;
	struct evs_plan stop_plan;
	struct rr_clock clock;
};

/*
 * Move head h on to the event after its current one (at h->after, not past
 * h->len), parsed with the types' plans: its fields' offset and the next
 * one's, its time and plan, and the packet's count of events.  Checks
 * what ev_decode checks (a known type, fields and tail inside the packet, a
 * string's NUL within RIP_STRING_MAX, an array's count within RIP_ARRAY_MAX)
 * and at the first problem returns false with h unchanged, leaving ev_decode
 * to say what it is.  evs_head_next is the one parser of the heads of
 * evs_next and evs_next_fast: a quick type's event before h->quick here,
 * every other in evs_head_next_any.
 */
bool evs_head_next_any(struct evs_head *h, const struct evs_plan *plan);

static inline RIP_HOT bool evs_head_next(struct evs_head *h, const struct evs_fast *f)
{
	const uint64_t mask = (1ull << RIP_EVENT_TS_BITS) - 1;
	size_t off = h->after;
	uint32_t w;
	int64_t fx;

	if (__builtin_expect(off >= h->quick, 0))
		return evs_head_next_any(h, f->plan);
	__builtin_memcpy(&w, h->data + off, 4); /* little-endian, as the writer (checked at open) */
	fx = f->q[w & 31].fixed;
	if (__builtin_expect(fx < 0, 0))
		return evs_head_next_any(h, f->plan);
	/*
	 * The low bits replaced, one more wrap of them when they are below the
	 * last ones: the time moves on by (low - ts) mod 2^bits.
	 */
	h->ts += ((w >> 5) - h->ts) & mask;
	h->fields = off + 4;
	h->after = off + 4 + (size_t)fx;
	h->pl = f->q[w & 31].pl;
	h->count++;
	return true;
}

/*
 * The head went past the bound: put it back in the merge and take the head
 * of the stream that leads now (EVS_FAST_HEAD still), without handing an
 * event out.
 */
void evs_fast_switch(struct evs *s);

/*
 * The CLOCK_MONOTONIC_RAW ns of ticks of s's clock: what evs_next puts in
 * e->ns for an event at e->ts.
 */
static inline int64_t evs_ns(const struct evs *s, uint64_t ticks)
{
	return rr_clock_ns(&((const struct evs_fast *)s)->clock, ticks);
}

/*
 * s's clock when it is one line with a 64-bit rate (as for every clock a
 * file states; rr_clock_ns): true, and then evs_ns(s, t) is *base_ns +
 * ((t - *base_ticks) * *mult >> 32), the product in 128 bits, for every t
 * from *base_ticks up to *end, the first t where evs_ns(s, t) is INT64_MAX
 * (it saturates there, and stays; UINT64_MAX when it never does, that one
 * tick left out).  For a pass that keeps ticks and works out differences
 * of ns without converting each time.  false: no such line, or one that
 * saturates at its base.
 */
static inline bool evs_clock_line(const struct evs *s, uint64_t *base_ticks, int64_t *base_ns,
				  uint64_t *mult, uint64_t *end)
{
	const struct rr_clock *c = &((const struct evs_fast *)s)->clock;

	*base_ticks = c->base_ticks;
	*base_ns = c->base_ns;
	*mult = c->mult64;
	*end = c->base_ticks + c->span; /* at most UINT64_MAX (rr_clock_init) */
	return c->span != 0;
}

_Static_assert(__builtin_offsetof(struct evs_event, tid) ==
		       __builtin_offsetof(struct evs_event, stream) + 4 &&
		       __builtin_offsetof(struct evs_head, tid) == __builtin_offsetof(struct evs_head, index) + 4,
	       "evs_next_fast copies stream and tid at once");

/*
 * evs_next_fast and evs_next_fast_ts: with_ns false leaves e->ns out of
 * what the fast path fills.
 */
static inline RIP_HOT int evs_next_fast_as(struct evs *s, struct evs_event *e, char *err, size_t errlen,
				    bool with_ns)
{
	struct evs_fast *f = (struct evs_fast *)s; /* the first member of struct evs */
	const struct evs_plan *pl;
	struct evs_head *h;
	const uint8_t *d;
	size_t off, len;
	uint64_t ts;

	h = f->h;
	pl = h->pl;
	d = h->data;
	len = h->len;
	off = h->fields;
	/*
	 * A slow type, too near the end for 8-byte loads (fields <= len), or
	 * no head (the state is not EVS_FAST_HEAD: h is f->stop).
	 */
	if (__builtin_expect(len - off < pl->fast_need, 0))
		return evs_next(s, e, err, errlen);
	e->ts = h->ts;
	if (with_ns)
		e->ns = rr_clock_ns(&f->clock, h->ts);
	/* e->stream and e->tid, one copy (the same order in both) */
	__builtin_memcpy(&e->stream, &h->index, sizeof(e->stream) + sizeof(e->tid));
	e->type = pl->type;
	e->plan = pl;
	e->raw = d + off;
	e->is_switch = false;
	e->str = NULL;
	e->arr = NULL;
	e->narr = 0;
	if (__builtin_expect(pl->tail != 0, 0)) {
		off += pl->fixed;
		if (pl->tail == RIP_FT_STRING) {
			e->str = (const char *)d + off;
			e->v[pl->nfix] = 0;
		} else {
			__builtin_memcpy(&e->narr, d + off, 4);
			e->arr = d + off + 4;
			e->v[pl->nfix] = e->narr;
		}
	}
	f->events++;

	/*
	 * The next head, checked as evs_next would; anything unusual is left to
	 * it, and so is the end of the packet (evs_head_next's first test).
	 */
	if (!evs_head_next(h, f))
		goto advance;
	ts = h->ts;
	/*
	 * Another stream leads now: the merge moves at once, not on the next
	 * call, so that the state that call tests is nearly always HEAD (a
	 * change of lead is a branch no predictor foresees: one mispredicted
	 * branch for it, not two; 382,000 changes in 2M events at 1,000
	 * threads).  e stays good: the packets do not move.
	 */
	if (ts > f->bound_gt)
		evs_fast_switch(s);
	return 1;

advance:
	f->state = EVS_FAST_ADVANCE;
	f->h = &f->stop;
	return 1;
}

/*
 * evs_next for a source in lazy mode (evs_set_lazy), inline.  Same results,
 * in the same order.
 */
static inline RIP_HOT int evs_next_fast(struct evs *s, struct evs_event *e, char *err, size_t errlen)
{
	return evs_next_fast_as(s, e, err, errlen, true);
}

/*
 * evs_next_fast without e->ns: the caller reads e->ts, and converts the few
 * times it needs in ns with evs_ns (a conversion of every event's time was
 * a tenth of what rip leaks did per event beside decoding blocks).  e->ns
 * is left as it was, or filled, as may happen: never read it.
 */
static inline RIP_HOT int evs_next_fast_ts(struct evs *s, struct evs_event *e, char *err, size_t errlen)
{
	return evs_next_fast_as(s, e, err, errlen, false);
}

/*
 * Will the next evs_next_fast hand out the leading stream's head without
 * loading a packet?  Then the events handed out before stay good (their
 * fields, string and array stay where they are) through that call too; a
 * call when it is false may load the next packet of a stream into the
 * bytes an earlier event of it pointed to.  For a pass that keeps a few
 * events a moment before it uses them.
 */
static inline bool evs_fast_steady(const struct evs *s)
{
	return ((const struct evs_fast *)s)->state == EVS_FAST_HEAD;
}

/* How the fields of type id are read (valid false: no such type). */
static inline const struct evs_plan *evs_plan_of(const struct evs *s, uint32_t id)
{
	return &((const struct evs_fast *)s)->plan[id];
}

/*
 * The fields of the event evs_next_fast will hand out next, when the fast
 * path knows it already (the leading stream's next head, parsed and
 * checked, with 8 bytes readable at each fixed field's offset, as
 * evs_plan_of says): its type in *id.  NULL otherwise.  A hint, for a pass
 * that prefetches what that event will touch.
 */
static inline const uint8_t *evs_peek_fast(const struct evs *s, uint32_t *id)
{
	const struct evs_fast *f = (const struct evs_fast *)s;
	const struct evs_head *h = f->h;

	if (h->len - h->fields < h->pl->fast_need) /* and f->stop when there is no head */
		return NULL;
	*id = (uint32_t)(h->pl - f->plan);
	return h->data + h->fields;
}

#endif /* RIP_READ_EVSOURCE_H */
