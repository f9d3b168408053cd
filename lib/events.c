/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/events.c - event rings: the writer's slow path, packets, the ring
 * pool, event types and categories.
 *
 * One ring per thread that emits, taken from a pool like slots are (never
 * used rings first, then the one released longest ago):
 *
 *   ring i:  +----------+----------+----------+-- ... --+----------+
 *            | packet 0 | packet 1 | packet 2 |         | packet n |
 *            +----------+----------+----------+-- ... --+----------+
 *   packet:  | struct rip_packet | event | event | ... |  (unused)  |
 *                                 ^ content_size (bits) is the commit
 *
 * Packet k of a ring holds sequence numbers k, k + n, k + 2n...; the
 * writer owns the packet ring->written (mod n) and closes it when the next
 * event does not fit: timestamp_end, events and events_discarded are filled
 * in, open drops to 0, and ring->written is bumped with a release store.
 * What happens to the packet after that depends on the mode:
 *
 *   overwrite  the next packet is reused even if nobody read it; the events
 *              it held are added to ring->discarded (flight recorder)
 *   discard    when the consumer is n packets behind, new events are dropped
 *              and counted until it catches up
 *   block      the writer waits for the consumer while it lives and goes
 *              over the rings (its heartbeat) or uses CPU; one whose beat
 *              and CPU time stood still for RIP_BLOCK_MS is not waited
 *              for: the writer discards
 *
 * Nested writers: the fast path raises the thread's ev.nest before it reads
 * its position and drops it after the commit; the slow path runs with it
 * raised.  A signal handler that emits while it is up drops its event and
 * counts it (__rip_event_nested), so a packet is never written by two
 * writers at once nor switched under one.
 */
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "rip/resource.h"

#define RIP_BLOCK_MS 3000  /* a consumer whose beat stands still this long is not waited for */
#define RIP_NAP_MS 100	   /* a waiting writer's first look at the consumer, then twice as long */
#define RIP_NAP_MAX_MS 800 /* ... up to this */
#define RIP_MAX_TYPES RIP_TYPES_CAP /* one file entry per registered type */

static uint64_t rip_no_enable[RIP_CATEGORY_WORDS];
uint64_t *__rip_enable = rip_no_enable;
static const uint32_t rip_no_bt_gen;
RIP_PRIVATE const uint32_t *__rip_bt_gen = &rip_no_bt_gen;

/* The built-in coroutine switch event: id 0. */
static uint32_t rip_coro_switch_id = RIP_EV_CORO_SWITCH;
const struct rip_event_type __rip_coro_switch_type = {
	.name = "rip:coro_switch",
	.category = RIP_CAT_CORO,
	.nfields = 2,
	.fields = { RIP_FIELD(U32, "to"), RIP_FIELD(U32, "from") },
	.id = &rip_coro_switch_id,
};

/* Registered types and category names, kept to write into every ring file opened. */
static struct {
	pthread_mutex_t lock;
	const struct rip_event_type *types[RIP_MAX_TYPES];
	uint32_t ntypes;
	char cats[RIP_CATEGORIES][RIP_CATEGORY_NAME_MAX];
	struct rip_file_hdr *file; /* the open ring file, once it has the list */
	/* by type id: a resource kind's flags (RIP_EVTYPE_*) and description, else 0 */
	uint32_t flags[RIP_MAX_TYPES];
	char desc[RIP_MAX_TYPES][RIP_EVTYPE_DESC_MAX];
} rip_reg = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	/* The built-in types at their fixed ids (rip/abi.h): the hooks write them inline. */
	.types = { &__rip_coro_switch_type, &__rip_fn_entry_type, &__rip_fn_exit_type,
		   &__rip_fn_def_type },
	.ntypes = 4,
	.cats = { [RIP_CAT_CORO] = "coro",
		  [RIP_CAT_FUNC] = "func",
		  [RIP_CAT_MEM] = "mem",
		  [RIP_CAT_FD] = "fd",
		  [RIP_CAT_SHM] = "shm",
		  [RIP_CAT_BT] = "bt",
		  [RIP_CAT_RES] = "res" },
};

static struct rip_evring *rip_evring_at(struct rip_file_hdr *h, uint32_t i)
{
	return (struct rip_evring *)((char *)h + h->ev_ctl_off + (size_t)i * RIP_EVRING_SIZE);
}

static char *rip_evdata_at(struct rip_file_hdr *h, uint32_t i)
{
	return (char *)h + rip_evring_data_off(h, i);
}

static struct rip_fifo rip_fifo_rings(struct rip_file_hdr *h)
{
	return (struct rip_fifo){
		.cells = (struct rip_fifo_cell *)((char *)h + h->ev_fifo_off),
		.n = h->ev_rings,
		.head = &h->ev_fifo_head,
		.tail = &h->ev_fifo_tail,
		.h = h,
		.backed = __rip_proc.sparse ? &__rip_proc.rings_backed : NULL,
	};
}

static bool rip_in_events(struct rip_file_hdr *h, const char *p)
{
	const char *lo = (const char *)h + h->ev_off, *slo = (const char *)h + h->ev_small_off;
	uint32_t big = h->ev_big ? h->ev_big : h->ev_rings;

	return (p >= lo && p < lo + (size_t)big * h->ev_ring_size) ||
	       (p >= slo && p < slo + (size_t)(h->ev_rings - big) * h->ev_small_ring_size);
}

/* ---- types and categories ------------------------------------------------------ */

static void rip_type_write(struct rip_file_hdr *h, const struct rip_event_type *t, uint32_t id)
{
	uint32_t n = __atomic_load_n(&h->types_count, __ATOMIC_RELAXED);
	struct rip_evtype *e;

	/* Backed before it is written; a tmpfs too full for it leaves the type out. */
	if (n >= h->types_cap ||
	    __rip_commit(h, h->types_off + (uint64_t)n * RIP_EVTYPE_SIZE, RIP_EVTYPE_SIZE))
		return;
	e = (struct rip_evtype *)((char *)h + h->types_off + (size_t)n * RIP_EVTYPE_SIZE);
	memset(e, 0, sizeof(*e));
	e->id = id;
	e->category = t->category;
	e->nfields = t->nfields;
	e->flags = id < RIP_MAX_TYPES ? rip_reg.flags[id] : 0;
	if (e->flags)
		memcpy(e->desc, rip_reg.desc[id], sizeof(e->desc));
	snprintf(e->name, sizeof(e->name), "%s", t->name ? t->name : "");
	for (uint32_t i = 0; i < t->nfields && i < RIP_EVENT_MAX_FIELDS; i++) {
		e->fields[i].type = t->fields[i].type;
		snprintf(e->fields[i].name, sizeof(e->fields[i].name), "%s",
			 t->fields[i].name ? t->fields[i].name : "");
	}
	/* Publish the entry: pairs with the acquire load of types_count in readers. */
	__atomic_store_n(&h->types_count, n + 1, __ATOMIC_RELEASE);
}

static bool rip_type_valid(const struct rip_event_type *t)
{
	if (!t || !t->id || !t->name || !*t->name || t->nfields > RIP_EVENT_MAX_FIELDS ||
	    t->category >= RIP_CATEGORIES)
		return false;
	for (uint32_t i = 0; i < t->nfields; i++) {
		uint32_t ty = t->fields[i].type;

		if (ty < RIP_FT_U8 || ty > RIP_FT_HEX64_ARRAY || !t->fields[i].name)
			return false;
		/* a string or array only as the last field (rip_event_str, rip_event_array) */
		if (RIP_FT_IS_TAIL(ty) && i + 1 != t->nfields)
			return false;
	}
	return true;
}

int rip_event_register(const struct rip_event_type *t)
{
	if (!rip_type_valid(t))
		return -EINVAL;
	/* often a dlopen'd library's constructor: the module map may be behind */
	__rip_modules_maybe_rescan();
	return __rip_type_register(t, false);
}

/*
 * Add t to the registry and the file, with its kind flags and description
 * (0 and NULL for an event type), under rip_reg.lock; 0 if it was there.
 */
static int rip_reg_add_locked(const struct rip_event_type *t, uint32_t flags, const char *desc)
{
	struct rip_file_hdr *h;
	uint32_t id;
	size_t n;

	for (uint32_t i = 0; i < rip_reg.ntypes; i++)
		if (rip_reg.types[i] == t)
			return 0;
	if (rip_reg.ntypes == RIP_MAX_TYPES)
		return -ENOSPC;
	id = rip_reg.ntypes;
	/* the flags before the type is written (a kind registered again keeps its first ones) */
	rip_reg.flags[id] = flags;
	/* no snprintf: an early registration comes from a hook */
	n = desc ? strnlen(desc, RIP_EVTYPE_DESC_MAX - 1) : 0;
	memcpy(rip_reg.desc[id], desc ? desc : "", n);
	rip_reg.desc[id][n] = 0;
	rip_reg.types[rip_reg.ntypes++] = t;
	h = rip_reg.file;
	if (h)
		rip_type_write(h, t, id);
	/* After the type's entry in the file: pairs with the acquire loads of t->id. */
	__atomic_store_n(t->id, id, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Register t (valid).  early: from a hook (__rip_auto_open_early), which
 * must not wait: the lock is only tried (-EBUSY), and no module rescan.
 */
int __rip_type_register(const struct rip_event_type *t, bool early)
{
	int ret;

	if (!early)
		pthread_mutex_lock(&rip_reg.lock);
	else if (!rip_type_valid(t))
		return -EINVAL;
	else if (pthread_mutex_trylock(&rip_reg.lock))
		return -EBUSY;
	ret = rip_reg_add_locked(t, 0, NULL);
	pthread_mutex_unlock(&rip_reg.lock);
	return ret;
}

/*
 * A resource kind: t ("kind:NAME", no fields) registered with its flags and
 * description in the type table.
 */
int __rip_kind_register(const struct rip_event_type *t, uint32_t flags, const char *desc)
{
	int ret;

	if (!rip_type_valid(t) || t->nfields || strncmp(t->name, "kind:", 5))
		return -EINVAL;
	pthread_mutex_lock(&rip_reg.lock);
	ret = rip_reg_add_locked(t, flags | RIP_EVTYPE_KIND, desc);
	pthread_mutex_unlock(&rip_reg.lock);
	return ret;
}

int rip_category_name(unsigned bit, const char *name)
{
	struct rip_file_hdr *h;

	if (bit >= RIP_CATEGORIES || bit < RIP_CAT_USER || !name || !*name ||
	    strlen(name) >= RIP_CATEGORY_NAME_MAX || strchr(name, ' '))
		return -EINVAL;
	pthread_mutex_lock(&rip_reg.lock);
	snprintf(rip_reg.cats[bit], RIP_CATEGORY_NAME_MAX, "%s", name);
	h = rip_reg.file;
	if (h) {
		struct rip_category *c = (struct rip_category *)((char *)h + h->cats_off);

		memcpy(c[bit].name, rip_reg.cats[bit], RIP_CATEGORY_NAME_MAX);
	}
	pthread_mutex_unlock(&rip_reg.lock);
	return 0;
}

/*
 * RIP_DISABLE=name,name,... (or bit numbers, or "all"): categories that start
 * off in a new file; `rip enable` turns them on later.  Unknown names are
 * ignored (the library never prints).  Called with rip_reg.lock held.
 */
static void rip_apply_disable(struct rip_file_hdr *h)
{
	const char *s = secure_getenv("RIP_DISABLE");
	char word[RIP_CATEGORY_NAME_MAX];

	while (s && *s) {
		size_t n = strcspn(s, ",");

		if (n && n < sizeof(word)) {
			char *end;
			unsigned long bit;

			memcpy(word, s, n);
			word[n] = 0;
			bit = strtoul(word, &end, 10);
			if (!strcmp(word, "all"))
				memset(h->enable, 0, sizeof(h->enable));
			else if (!*end && bit < RIP_CATEGORIES)
				h->enable[bit / 64] &= ~(1ull << (bit % 64));
			else
				for (uint32_t i = 0; i < RIP_CATEGORIES; i++)
					if (!strcmp(rip_reg.cats[i], word))
						h->enable[i / 64] &= ~(1ull << (i % 64));
		}
		s += n + (s[n] == ',');
	}
}

/*
 * RIP_CONSUMER=PID:START: rip run, which records every file of the family
 * it follows (the others open none: RIP_FOLLOW), names itself the consumer
 * of every new file before its first event, so that blocking mode holds
 * from that event in children and new images as in the program itself.
 * START (its start time in clock ticks) must match, so that a process that
 * outlives rip run never waits for a stranger that got its pid.  A bare PID
 * counts only for the direct child (an older rip run).  A process of the
 * family that rip run does not follow (a child of a program run without
 * --follow-fork, that links librip and opens a ring itself) has none: rip
 * run never reads its file, and in block mode its writers would wait for it
 * as long as rip run lives.  0: no consumer.
 */
static uint32_t rip_env_consumer(void)
{
	const char *v = secure_getenv("RIP_CONSUMER");
	unsigned long long start;
	char *end;
	long pid;

	if (!v || !*v || !__rip_followed())
		return 0;
	pid = strtol(v, &end, 10);
	if (pid <= 0 || pid > INT32_MAX || end == v)
		return 0;
	if (!*end)
		return pid == (long)getppid() ? (uint32_t)pid : 0;
	if (*end != ':')
		return 0;
	start = strtoull(end + 1, &end, 10);
	if (*end || !start || __rip_start_ticks((pid_t)pid) != start)
		return 0;
	return (uint32_t)pid;
}

/*
 * A ring file was just mapped (under __rip_proc.lock), and is not yet
 * published: give it the types and names, so that a reader that finds it
 * finds them too.  Events flow from __rip_events_start, once it is.
 */
void __rip_events_open(struct rip_file_hdr *h)
{
	struct rip_category *c = (struct rip_category *)((char *)h + h->cats_off);
	uint32_t consumer = rip_env_consumer();

	if (consumer)
		rip_file_set_consumer(h, consumer);

	pthread_mutex_lock(&rip_reg.lock);
	for (uint32_t i = 0; i < rip_reg.ntypes; i++)
		rip_type_write(h, rip_reg.types[i], i);
	for (uint32_t i = 0; i < RIP_CATEGORIES; i++)
		memcpy(c[i].name, rip_reg.cats[i], RIP_CATEGORY_NAME_MAX);
	rip_apply_disable(h);
	rip_reg.file = h;
	pthread_mutex_unlock(&rip_reg.lock);
}

void __rip_events_start(struct rip_file_hdr *h)
{
	/* Relaxed: the word is a hint (the preload library's stack hook: include/rip/abi.h). */
	__atomic_store_n(&__rip_bt_gen, &h->bt_gen, __ATOMIC_RELAXED);
	/* Events may flow from here on: pairs with the relaxed loads in the fast path. */
	__atomic_store_n(&__rip_enable, h->enable, __ATOMIC_RELEASE);
}

void __rip_events_close(void)
{
	pthread_mutex_lock(&rip_reg.lock);
	rip_reg.file = NULL;
	pthread_mutex_unlock(&rip_reg.lock);
	__atomic_store_n(&__rip_enable, rip_no_enable, __ATOMIC_RELEASE);
	__atomic_store_n(&__rip_bt_gen, &rip_no_bt_gen, __ATOMIC_RELAXED);
}

static void rip_packet_close(struct rip_file_hdr *h, struct rip_evw *w);
static uint32_t rip_npackets(struct rip_file_hdr *h, uint32_t ring);

/* First thing in a forked child: the registry's lock may have been held by a thread gone here. */
void __rip_events_fork_lock(void)
{
	pthread_mutex_init(&rip_reg.lock, NULL);
}

/*
 * In a forked child whose file has the parent's packets (not sparse: all
 * copied): the packet a thread that does not exist here left open in ring
 * i holds its events in the parent, before the fork (a consumer takes an
 * open packet too, at the end): emptied, closed and counted written, so
 * that the child's trace starts at the fork for that ring too.  Only this
 * thread exists here.
 */
static void rip_packet_drop_open(struct rip_file_hdr *h, uint32_t i)
{
	struct rip_evring *r = rip_evring_at(h, i);
	uint64_t seq = __atomic_load_n(&r->written, __ATOMIC_RELAXED);
	uint32_t n = rip_npackets(h, i);
	struct rip_packet *pk;

	if (!n)
		return;
	pk = (struct rip_packet *)(rip_evdata_at(h, i) +
				   (size_t)(seq % n) * rip_evring_packet_bytes(h, i));
	if (pk->magic != RIP_CTF_MAGIC || pk->packet_seq_num != seq || !pk->open)
		return;
	pk->content_size = (uint64_t)RIP_PACKET_HDR_SIZE * 8;
	pk->timestamp_end = pk->timestamp_begin;
	pk->events = 0;
	/* The fields above before open = 0: pairs with the acquire load of open in readers. */
	__atomic_store_n(&pk->open, 0, __ATOMIC_RELEASE);
	rip_evring_publish(r, seq + 1);
}

/*
 * In a forked child: the rings of threads that do not exist here go back to
 * the pool, whose queue is rebuilt (it was copied while the parent's threads
 * used it: see rip_fifo_rebuild in ring.c).
 */
void __rip_events_fork_child(struct rip_file_hdr *h, struct rip_self *me)
{
	uint32_t used = __atomic_load_n(&h->ev_fresh, __ATOMIC_RELAXED);
	struct rip_fifo q = rip_fifo_rings(h);

	/*
	 * The parent's consumer (a copy) is not the child's: rip run's, named
	 * by RIP_CONSUMER, records the child's file too; anyone else (rip
	 * record) does not, and nobody should wait for it here.
	 */
	rip_file_set_consumer(h, rip_env_consumer());
	__rip_fifo_reset(q);
	for (uint32_t i = 0; i < used && i < h->ev_rings; i++) {
		struct rip_evring *r = rip_evring_at(h, i);

		if (me->ev.ring == i + 1)
			continue;
		/*
		 * The parent's history is not the child's: its trace starts at
		 * the fork.  The ring's packets were not copied to a sparse file
		 * (ring.c's rip_copy_rings): it starts again as a ring never
		 * written, whose packets are backed as its first turn opens them
		 * (rip_packet_open); a file backed whole has them, and the one
		 * left open goes first.
		 */
		if (!__rip_proc.sparse)
			rip_packet_drop_open(h, i);
		memset(r, 0, sizeof(*r));
		__rip_fifo_push(q, i);
	}
	if (me->ev.ring && me->ev.ring <= h->ev_rings) {
		struct rip_evring *r = rip_evring_at(h, me->ev.ring - 1);

		/*
		 * The child's trace starts at the fork: close the packet the
		 * parent's events are in and mark everything so far as read.
		 */
		rip_packet_close(h, &me->ev);
		r->tid = me->tid;
		rip_evring_consume(r, r->written);
		r->discarded = 0;
		r->stalled = 0;
	}
}

/* ---- packets ------------------------------------------------------------------- */

static uint32_t rip_npackets(struct rip_file_hdr *h, uint32_t ring)
{
	return rip_evring_bytes(h, ring) / rip_evring_packet_bytes(h, ring);
}

/* Close the current packet: readers and consumers may take it from now on. */
static void rip_packet_close(struct rip_file_hdr *h, struct rip_evw *w)
{
	struct rip_packet *pk = w->pkt;
	struct rip_evring *r = rip_evring_at(h, w->ring - 1);

	if (!pk)
		return;
	pk->content_size = (uint64_t)(w->pos - (char *)pk) * 8;
	pk->timestamp_end = w->last;
	pk->events = w->events;
	pk->events_discarded = __atomic_load_n(&r->discarded, __ATOMIC_RELAXED);
	/* The fields above before open = 0: pairs with the acquire load of open in readers. */
	__atomic_store_n(&pk->open, 0, __ATOMIC_RELEASE);
	/* Counted as written after it is complete. */
	rip_evring_publish(r, pk->packet_seq_num + 1);
	w->pkt = NULL;
	w->pos = w->end = NULL;
}

/* Is the file's consumer alive?  (errno kept: the traced program's.) */
static bool rip_consumer_alive(struct rip_file_hdr *h)
{
	uint32_t pid = rip_file_consumer(h);
	int saved = errno;
	bool alive = pid && (kill((pid_t)pid, 0) == 0 || errno == EPERM);

	errno = saved;
	return alive;
}

static int64_t rip_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#define RIP_ALIVE_MS 10 /* a consumer found alive is taken as alive this long */

/* The consumer last found alive, and when: pid << 32 | the low 32 bits of rip_mono_ms(). */
static uint64_t rip_alive_seen;

/*
 * rip_consumer_alive for threads that wait or drop often (a full ring in
 * blocking or discard mode): they ask before each wait or for each event
 * dropped, and a kill(2) each cost 1-4 us: 850,000 of them at 512
 * threads in discard mode, 24,000 in blocking mode.  A consumer found
 * alive is taken as alive for RIP_ALIVE_MS by every thread of the
 * process: one that died is seen that much later.
 */
static bool rip_consumer_alive_recent(struct rip_file_hdr *h)
{
	uint32_t pid = rip_file_consumer(h), now = (uint32_t)rip_mono_ms();
	/* Relaxed: a hint; a stale value makes one check early, or one 10 ms late. */
	uint64_t seen = __atomic_load_n(&rip_alive_seen, __ATOMIC_RELAXED);

	if (pid && seen >> 32 == pid && now - (uint32_t)seen < RIP_ALIVE_MS)
		return true;
	if (!rip_consumer_alive(h))
		return false;
	__atomic_store_n(&rip_alive_seen, (uint64_t)pid << 32 | now, __ATOMIC_RELAXED);
	return true;
}

/*
 * The CPU time the consumer's process has used, in ns; 0 if it cannot be
 * read (gone).  A clock read of another process: no descriptor, no lock.
 */
static uint64_t rip_consumer_cpu(struct rip_file_hdr *h)
{
	uint32_t pid = rip_file_consumer(h);
	struct timespec ts;
	clockid_t id;
	int saved = errno;
	uint64_t ns = 0;

	if (pid && !clock_getcpuclockid((pid_t)pid, &id) && !clock_gettime(id, &ts))
		ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 1;
	errno = saved;
	return ns;
}

/*
 * Wait for the consumer to free the packet seq will reuse; false on timeout.
 * The writer sleeps on the ring's futex word and the consumer wakes it when
 * it moves consumed (rip_evring_wait_arm, rip_evring_waiter), so that a
 * thousand waiting threads cost nothing while they wait; every 10 ms it
 * checks that the consumer is still alive, and how far its heartbeat moved
 * (rip_file_beats) and its CPU time (rip_consumer_cpu).  It waits for as
 * long as the consumer goes over the rings, however long it takes to come
 * back to this one (10,000 threads that all write keep it busy for
 * seconds), and however little CPU a loaded machine gives it: only a
 * consumer whose beat and CPU time both stood still for RIP_BLOCK_MS
 * (stopped, or stuck) is given up on, and not waited for again until it
 * moves: the program runs on, dropping and counting.  The naps grow from
 * RIP_NAP_MS to RIP_NAP_MAX_MS: a thousand writers that wait for a busy
 * consumer wake for it, not for their timers.
 */
static bool rip_wait_consumer(struct rip_file_hdr *h, struct rip_evring *r, uint64_t seq,
			      uint32_t n)
{
	uint64_t consumed = rip_evring_consumed(r);
	uint32_t beat = rip_file_beats(h);
	uint64_t cpu = rip_consumer_cpu(h);
	int saved = errno;
	int64_t start;
	long nap_ms = RIP_NAP_MS;
	bool room = false;

	if (r->stalled == consumed + 1)
		return false;
	__atomic_fetch_add(&r->blocked, 1, __ATOMIC_RELAXED);
	start = rip_mono_ms();
	for (;;) {
		struct timespec ts = { 0, nap_ms * 1000 * 1000 };
		uint64_t c;
		uint32_t b;

		if (seq - rip_evring_consumed(r) < n) {
			room = true;
			break;
		}
		if (!rip_consumer_alive_recent(h))
			break;
		b = rip_file_beats(h);
		if (b != beat) {
			beat = b; /* it moves: the bound counts from now */
			start = rip_mono_ms();
		} else if (rip_mono_ms() - start >= RIP_BLOCK_MS) {
			c = rip_consumer_cpu(h);
			if (c == cpu)
				break;
			cpu = c; /* it runs, slowly: a loaded machine */
			start = rip_mono_ms();
		}
		rip_evring_wait_arm(r);
		if (seq - rip_evring_consumed(r) < n) {
			room = true;
			break;
		}
		/* returns at once if the consumer cleared the word in between */
		syscall(SYS_futex, &r->waiting, FUTEX_WAIT, 1, &ts, NULL, 0);
		if (nap_ms < RIP_NAP_MAX_MS)
			nap_ms *= 2;
	}
	if (!room && rip_consumer_alive(h))
		r->stalled = consumed + 1;
	errno = saved;
	return room;
}

/* Open the next packet of the thread's ring at time ts; -ENOSPC if it must drop. */
static int rip_packet_open(struct rip_file_hdr *h, struct rip_self *me, uint64_t ts)
{
	struct rip_evw *w = &me->ev;
	uint32_t ri = w->ring - 1, n = rip_npackets(h, ri), psize = rip_evring_packet_bytes(h, ri);
	struct rip_evring *r = rip_evring_at(h, ri);
	/* Relaxed: this thread is the only one that writes it. */
	uint64_t seq = __atomic_load_n(&r->written, __ATOMIC_RELAXED);
	uint64_t consumed = rip_evring_consumed(r);
	struct rip_packet *pk =
		(struct rip_packet *)(rip_evdata_at(h, ri) + (size_t)(seq % n) * psize);

	/*
	 * The ring's first turn: back this packet before it is written (a
	 * sparse file, see __rip_commit).  A program that writes a few events
	 * backs a packet, not the whole ring: 4 pages instead of 64 by
	 * default, for each short program a traced one runs.  tmpfs full: the
	 * event is dropped and counted, as when the ring is full.
	 */
	if (seq < n && __rip_commit(h, (uint64_t)((char *)pk - (char *)h), psize))
		return -ENOSPC;
	if (seq >= n && seq - consumed >= n) {
		uint32_t mode = h->ev_mode;

		if (mode == RIP_MODE_BLOCK && rip_wait_consumer(h, r, seq, n)) {
			/* room now */
		} else if (mode != RIP_MODE_OVERWRITE && rip_consumer_alive_recent(h)) {
			return -ENOSPC;
		} else {
			/*
			 * Flight recorder: the oldest packet goes.  Take it from the
			 * consumer first (push it past), so that each packet is either
			 * read or counted lost, never both: pairs with the consumer's
			 * compare-and-swap in ev_consume.
			 */
			uint64_t old = seq - n, c = consumed;

			while (c <= old) {
				if (__atomic_compare_exchange_n(&r->consumed, &c, old + 1, false,
								__ATOMIC_ACQ_REL,
								__ATOMIC_ACQUIRE)) {
					if (pk->packet_seq_num == old && pk->magic == RIP_CTF_MAGIC)
						__atomic_fetch_add(&r->discarded, pk->events,
								   __ATOMIC_RELAXED);
					break;
				}
			}
		}
	}
	/*
	 * Readers that copy this packet see open = 1 or a new seq: they drop
	 * their copy.  Both before the fence, so that no new byte below is seen
	 * with the old seq (pairs with the readers' acquire fence and re-check).
	 */
	__atomic_store_n(&pk->open, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&pk->packet_seq_num, seq, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	pk->magic = RIP_CTF_MAGIC;
	pk->stream_id = 0;
	pk->stream_instance_id = ri;
	pk->timestamp_begin = ts;
	pk->timestamp_end = 0;
	pk->packet_size = (uint64_t)psize * 8;
	pk->events_discarded = __atomic_load_n(&r->discarded, __ATOMIC_RELAXED);
	pk->tid = me->tid;
	pk->coro = me->cur && me->cur != me->thread ? me->cur->index + 1 : 0;
	pk->events = 0;
	/* Commit of the empty packet: pairs with the acquire load in readers. */
	__atomic_store_n(&pk->content_size, (uint64_t)RIP_PACKET_HDR_SIZE * 8, __ATOMIC_RELEASE);
	w->pkt = pk;
	w->pos = (char *)pk + RIP_PACKET_HDR_SIZE;
	w->last = ts;
	w->events = 0;
	/* Without the TSC the fast path's clock is wrong: keep it out (end == pos). */
	w->end = __rip_clock_tsc ? (char *)pk + psize : w->pos;
	return 0;
}

/* The owner word of the rings this thread takes: its slot index + 1, 0 on a dummy slot. */
static uint32_t rip_ring_owner(const struct rip_self *me)
{
	return me->thread && !(me->flags & RIP_SELF_DUMMY) ? me->thread->index + 1 : 0;
}

/*
 * Take an event ring for the calling thread.  first: its first try (a
 * failure then counts the thread in ev_overflow; later tries do not).
 */
static int rip_ring_take(struct rip_file_hdr *h, struct rip_self *me, bool first)
{
	uint32_t f = __atomic_load_n(&h->ev_fresh, __ATOMIC_RELAXED), idx;
	struct rip_evring *r;

	if (!h->ev_rings)
		return -ENODEV;
	for (;;) {
		if (f >= h->ev_rings) {
			if (__rip_fifo_pop(rip_fifo_rings(h), &idx)) {
				if (first)
					__atomic_fetch_add(&h->ev_overflow, 1, __ATOMIC_RELAXED);
				return -ENOSPC;
			}
			break;
		}
		/* Only the counter matters; the ring is published by its owner field. */
		if (__atomic_compare_exchange_n(&h->ev_fresh, &f, f + 1, true, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			idx = f;
			/* Never used: back its control line first (its packets: rip_packet_open). */
			if (__rip_commit(h, h->ev_ctl_off + (uint64_t)idx * RIP_EVRING_SIZE,
					 RIP_EVRING_SIZE)) {
				/* tmpfs full: the ring is lost to the pool, and counted */
				__atomic_fetch_add(&h->ev_overflow, 1, __ATOMIC_RELAXED);
				return -ENOSPC;
			}
			break;
		}
	}
	r = rip_evring_at(h, idx);
	r->tid = me->tid;
	r->attach_ts = rip_clock_ticks();
	__atomic_store_n(&r->owner, rip_ring_owner(me), __ATOMIC_RELEASE);
	me->ev.ring = idx + 1;
	return 0;
}

/* Close the thread's packet and give its ring (index ri) back to the pool. */
static void rip_ring_give_back(struct rip_file_hdr *h, struct rip_evw *w, uint32_t ri)
{
	rip_packet_close(h, w);
	__atomic_store_n(&rip_evring_at(h, ri)->owner, 0, __ATOMIC_RELEASE);
	__rip_fifo_push(rip_fifo_rings(h), ri);
	w->pkt = NULL;
	w->pos = w->end = NULL;
	w->events = 0;
	w->ring = RIP_EVW_EXITED; /* no ring after exit: see rip_event_write */
}

/* The thread is done with events: close its packet, give its ring back. */
void __rip_events_thread_exit(struct rip_file_hdr *h, struct rip_self *me)
{
	struct rip_evw *w = &me->ev;
	uint32_t ri = w->ring - 1;

	if (!h || !w->ring || w->ring > h->ev_rings)
		return;
	if (!w->pkt || !rip_in_events(h, (char *)w->pkt) ||
	    __atomic_load_n(&rip_evring_at(h, ri)->owner, __ATOMIC_RELAXED) != rip_ring_owner(me)) {
		/* a ring of a file closed since (or not ours): leave this file alone */
		w->pkt = NULL;
		w->pos = w->end = NULL;
		w->ring = 0;
		return;
	}
	w->nest = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rip_ring_give_back(h, w, ri);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	w->nest = 0;
}

/* ---- the slow path ---------------------------------------------------------------- */

/* One event lost: in the thread's ring's count, or the file's when it has none. */
static void rip_count_drop(struct rip_file_hdr *h, struct rip_evw *w)
{
	if (!h)
		return;
	if (w->ring && w->ring <= h->ev_rings)
		__atomic_fetch_add(&rip_evring_at(h, w->ring - 1)->discarded, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&h->ev_lost, 1, __ATOMIC_RELAXED);
}

/* A signal handler emitted while this thread was writing an event: count it, lost. */
void __rip_event_nested(void)
{
	rip_count_drop(__atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE), &__rip_self.ev);
}

/* Who may keep a nested event for later (the preload library's hooks); NULL: nobody. */
static bool (*rip_nest_keeper)(const struct rip_event_type *t, const uint64_t *v, uint32_t nv,
			       const void *tail, uint32_t tlen);

void __rip_event_set_keeper(bool (*keep)(const struct rip_event_type *t, const uint64_t *v,
					 uint32_t nv, const void *tail, uint32_t tlen))
{
	/* Release: the keeper's own state is set up before it is called (acquire below). */
	__atomic_store_n(&rip_nest_keeper, keep, __ATOMIC_RELEASE);
}

/* An event of a nested writer: kept by the keeper (it writes it later), or counted lost. */
static void rip_event_nested_tail(const struct rip_event_type *t, const uint64_t *v, uint32_t nv,
				  const void *tail, uint32_t tlen)
{
	/* Acquire: pairs with the release in __rip_event_set_keeper. */
	bool (*keep)(const struct rip_event_type *, const uint64_t *, uint32_t, const void *,
		     uint32_t) = __atomic_load_n(&rip_nest_keeper, __ATOMIC_ACQUIRE);

	if (!keep || !keep(t, v, nv, tail, tlen))
		__rip_event_nested();
}

void __rip_event_nested_v(const struct rip_event_type *t, const uint64_t *v, uint32_t nv)
{
	rip_event_nested_tail(t, v, nv, NULL, 0);
}

/*
 * The slow path proper: fields v, then the variable tail (a string with its
 * NUL, or an array's count and elements) when the type ends with one.
 */
static void rip_event_write(const struct rip_event_type *t, const uint64_t *v, const void *tail,
			    size_t tlen, uint64_t ts)
{
	struct rip_self *me = &__rip_self;
	struct rip_evw *w = &me->ev;
	struct rip_file_hdr *h;
	uint32_t id, payload = 0, hsize, size, psize;
	size_t slen = 0;
	uint32_t last = t && t->nfields ? t->fields[t->nfields - 1].type : 0;
	bool late = false;
	char *p;

	/* A child of a raw clone writes into its own file (or none), never its parent's. */
	__rip_fork_check();
	h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	/* Called with w->nest raised by the fast path (or rip_event_str). */
	if (!h || !t)
		goto out;
	if (me->flags & RIP_SELF_EXITING) {
		/*
		 * After the thread gave its ring back, glibc's exit path still frees
		 * (the dynamic TLS blocks, in _dl_deallocate_tls).  Borrow a ring for
		 * this one event and give it back right after, so that nothing is
		 * lost and no ring stays with a thread about to vanish.
		 */
		late = true;
		if (w->ring == RIP_EVW_EXITED)
			w->ring = 0;
	}
	if (!__rip_clock_tsc)
		ts = __rip_clock_fallback(); /* the fast path read the TSC regardless */
	if (!me->tid)
		me->tid = __rip_gettid();
	if (!me->thread)
		__rip_attach_slow();
	id = __atomic_load_n(t->id, __ATOMIC_RELAXED);
	if (id == UINT32_MAX || id >= RIP_MAX_TYPES)
		goto out_drop;
	if (w->ring && w->ring <= h->ev_rings &&
	    ((w->pkt && !rip_in_events(h, (char *)w->pkt)) ||
	     __atomic_load_n(&rip_evring_at(h, w->ring - 1)->tid, __ATOMIC_RELAXED) != me->tid)) {
		/* A ring of a file closed since (or no longer ours): start afresh here. */
		w->pkt = NULL;
		w->pos = w->end = NULL;
		w->ring = 0;
	}
	if (!w->ring || w->ring == RIP_EVW_RETRY) {
		/* No ring yet, or none was free the last time: try (again). */
		bool first = !w->ring;

		if (rip_ring_take(h, me, first)) {
			w->ring = RIP_EVW_RETRY;
			goto out_drop; /* counted in the file's ev_lost */
		}
	}
	if (w->ring > h->ev_rings)
		goto out_drop;
	for (uint32_t i = 0; i < t->nfields; i++)
		if (!RIP_FT_IS_TAIL(t->fields[i].type))
			payload += rip_field_size(t->fields[i].type);
	/* A tail goes exactly where the type declares one (empty if none given). */
	if (RIP_FT_IS_TAIL(last)) {
		static const uint32_t none;

		if (!tail) {
			tail = last == RIP_FT_STRING ? (const void *)"" : (const void *)&none;
			tlen = last == RIP_FT_STRING ? 1 : 4;
		}
		slen = tlen;
	}
	if (ts < w->last)
		ts = w->last; /* never backwards within a stream (TSC skew between CPUs) */
	hsize = id <= RIP_EVENT_ID_COMPACT_MAX && ts - w->last < (1u << RIP_EVENT_TS_BITS) ? 4 : 13;
	size = hsize + payload + (uint32_t)slen;
	psize = rip_evring_packet_bytes(h, w->ring - 1);
	if (!w->pkt || (size_t)((char *)w->pkt + psize - w->pos) < size) {
		rip_packet_close(h, w);
		if (rip_packet_open(h, me, ts))
			goto out_drop;
		hsize = id <= RIP_EVENT_ID_COMPACT_MAX ? 4 : 13;
		size = hsize + payload + (uint32_t)slen;
		if ((size_t)((char *)w->pkt + psize - w->pos) < size)
			goto out_drop;
	}
	p = w->pos;
	w->pos = p + size;
	if (hsize == 4) {
		uint32_t hdr = id | (uint32_t)(ts << 5);

		memcpy(p, &hdr, 4);
	} else {
		p[0] = RIP_EVENT_ID_EXTENDED;
		memcpy(p + 1, &id, 4);
		memcpy(p + 5, &ts, 8);
	}
	p += hsize;
	for (uint32_t i = 0; i < t->nfields; i++) {
		uint32_t n;

		if (RIP_FT_IS_TAIL(t->fields[i].type))
			break;
		n = rip_field_size(t->fields[i].type);
		memcpy(p, &v[i], n);
		p += n;
	}
	if (slen) {
		memcpy(p, tail, slen);
		p += slen;
	}
	w->last = ts;
	w->events++;
	if (!__rip_clock_tsc)
		w->end = w->pos; /* see rip_packet_open */
	/* Commit: pairs with the acquire load of content_size in the readers. */
	__atomic_store_n((uint32_t *)&w->pkt->content_size,
			 (uint32_t)((size_t)(p - (char *)w->pkt) * 8), __ATOMIC_RELEASE);
	goto out;

out_drop:
	rip_count_drop(h, w);
out:
	/* an event after exit: its borrowed ring goes back at once */
	if (late && w->ring && w->ring <= h->ev_rings)
		rip_ring_give_back(h, w, w->ring - 1);
	else if (late && w->ring == RIP_EVW_RETRY)
		w->ring = RIP_EVW_EXITED;
	/* Everything above before the flag drops: pairs with a handler's check of nest. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	w->nest = 0;
}

/*
 * The fast path for writers inside librip that read the file's clock
 * themselves (the hooks of function tracing): room for size bytes of event
 * id at ts in the thread's open packet, whatever the clock.  Without the
 * TSC the fast path of rip.h finds every packet full (end == pos: it read
 * the wrong clock); this one knows the packet's real end, and leaves end ==
 * pos behind it.  NULL: take the slow path.  The caller raised nest.
 */
char *__rip_event_reserve_any(struct rip_evw *w, uint32_t id, uint32_t size, uint64_t ts)
{
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_RELAXED);
	char *p = w->pos, *end;

	if (__rip_clock_tsc)
		return __rip_event_reserve(w, id, size, ts);
	if (!h || !p || !w->pkt || !w->ring || w->ring > h->ev_rings ||
	    !rip_in_events(h, (const char *)w->pkt) || id > RIP_EVENT_ID_COMPACT_MAX ||
	    ts < w->last || ts - w->last >= (1u << RIP_EVENT_TS_BITS))
		return NULL;
	end = (char *)w->pkt + rip_evring_packet_bytes(h, w->ring - 1);
	if (p + size > end)
		return NULL;
	w->pos = w->end = p + size;
	{
		uint32_t hd = id | (uint32_t)(ts << 5);

		memcpy(p, &hd, 4);
	}
	return p + 4;
}

void __rip_event_slow(const struct rip_event_type *t, const uint64_t *v, const char *str,
		      uint64_t ts)
{
	char buf[RIP_STRING_MAX];
	size_t n;

	if (!str)
		return rip_event_write(t, v, NULL, 0, ts);
	n = strnlen(str, RIP_STRING_MAX - 1);
	memcpy(buf, str, n);
	buf[n] = 0;
	rip_event_write(t, v, buf, n + 1, ts);
}

void __rip_event_replay(const struct rip_event_type *t, const uint64_t *v, uint32_t nv,
			const void *tail, size_t tlen, uint64_t ts)
{
	uint64_t all[RIP_EVENT_MAX_FIELDS] = { 0 };
	struct rip_evw *w = &__rip_self.ev;

	if (!t || !rip_category_enabled(t->category))
		return;
	if (w->nest) {
		__rip_event_nested();
		return;
	}
	for (uint32_t i = 0; i < nv && i < RIP_EVENT_MAX_FIELDS; i++)
		all[i] = v[i];
	w->nest = 1;
	/* The flag before the slow path reads anything: pairs with a handler's check. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rip_event_write(t, all, tail, tail ? tlen : 0, ts);
}

void rip_event_str(const struct rip_event_type *t, const uint64_t *vals, const char *str)
{
	static const uint64_t none[RIP_EVENT_MAX_FIELDS];

	struct rip_evw *w = &__rip_self.ev;

	if (!t || !rip_category_enabled(t->category))
		return;
	if (w->nest) {
		char buf[RIP_STRING_MAX];
		size_t n = str ? strnlen(str, RIP_STRING_MAX - 1) : 0;

		if (n)
			memcpy(buf, str, n);
		buf[n] = 0;
		rip_event_nested_tail(t, vals ? vals : none, t->nfields ? t->nfields - 1 : 0, buf,
				      (uint32_t)n + 1);
		return;
	}
	w->nest = 1;
	/* The flag before the slow path reads anything: pairs with a handler's check. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__rip_event_slow(t, vals ? vals : none, str ? str : "", rip_clock_ticks());
}

void rip_event_array(const struct rip_event_type *t, const uint64_t *vals, const uint64_t *arr,
		     uint32_t n)
{
	static const uint64_t none[RIP_EVENT_MAX_FIELDS];
	struct rip_evw *w = &__rip_self.ev;
	uint8_t tail[4 + RIP_ARRAY_MAX * 8];

	if (!t || !rip_category_enabled(t->category))
		return;
	if (n > RIP_ARRAY_MAX)
		n = RIP_ARRAY_MAX;
	memcpy(tail, &n, 4);
	if (n)
		memcpy(tail + 4, arr, (size_t)n * 8);
	if (w->nest) {
		rip_event_nested_tail(t, vals ? vals : none, t->nfields ? t->nfields - 1 : 0, tail,
				      4 + n * 8);
		return;
	}
	w->nest = 1;
	/* The flag before the slow path reads anything: pairs with a handler's check. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rip_event_write(t, vals ? vals : none, tail, 4 + (size_t)n * 8, rip_clock_ticks());
}

/* ---- configuration ------------------------------------------------------------------ */

static uint32_t rip_env_size(const char *name, uint32_t def)
{
	const char *s = secure_getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return def;
	v = strtoull(s, &end, 10);
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (end == s || *end || v > (1ull << 30))
		return UINT32_MAX; /* rejected by the caller */
	return (uint32_t)v;
}

int __rip_events_config(const struct rip_ring_opts *o, struct rip_ev_config *c)
{
	const char *mode = secure_getenv("RIP_MODE");

	c->rings = o && o->ev_rings ? o->ev_rings : rip_env_size("RIP_EVENT_RINGS", 64);
	c->ring_size = o && o->ev_ring_size ? o->ev_ring_size :
					      rip_env_size("RIP_EVENT_RING_SIZE", 256u << 10);
	c->packet_size = o && o->ev_packet_size ? o->ev_packet_size :
						  rip_env_size("RIP_EVENT_PACKET_SIZE", 16u << 10);
	/*
	 * The threads past the big rings get small ones: 10,000 live threads
	 * take about 170 MiB, backed only as rings are first used.  A caller
	 * that chose the number of rings gets exactly that, unless it asks for
	 * small ones too.
	 */
	c->small_rings = rip_env_size(
		"RIP_EVENT_SMALL_RINGS",
		(o && o->ev_rings) || secure_getenv("RIP_EVENT_RINGS") ? 0 : RIP_EV_SMALL_RINGS);
	c->small_ring_size = rip_env_size("RIP_EVENT_SMALL_RING_SIZE", 16u << 10);
	c->small_packet_size = rip_env_size("RIP_EVENT_SMALL_PACKET_SIZE", 4u << 10);
	if (o && o->ev_mode)
		c->mode = o->ev_mode - 1;
	else if (!mode || !*mode || !strcmp(mode, "overwrite"))
		c->mode = RIP_MODE_OVERWRITE;
	else if (!strcmp(mode, "discard"))
		c->mode = RIP_MODE_DISCARD;
	else if (!strcmp(mode, "block"))
		c->mode = RIP_MODE_BLOCK;
	else
		return -EINVAL;
	if (c->mode > RIP_MODE_BLOCK || c->rings > 65536 || c->ring_size == UINT32_MAX ||
	    c->packet_size == UINT32_MAX || c->small_rings > 65536 - c->rings ||
	    c->small_ring_size == UINT32_MAX || c->small_packet_size == UINT32_MAX)
		return -EINVAL;
	if (!c->rings) {
		c->small_rings = 0;
		return 0; /* events off */
	}
	if (c->packet_size < 1024 || c->packet_size > (64u << 20) ||
	    (c->packet_size & (c->packet_size - 1)) || c->ring_size < 2 * c->packet_size ||
	    (c->ring_size & (c->ring_size - 1)))
		return -EINVAL;
	if (c->small_rings && (c->small_packet_size < 4096 || c->small_packet_size > (64u << 20) ||
			       (c->small_packet_size & (c->small_packet_size - 1)) ||
			       c->small_ring_size < 2 * c->small_packet_size ||
			       (c->small_ring_size & (c->small_ring_size - 1))))
		return -EINVAL;
	return 0;
}
