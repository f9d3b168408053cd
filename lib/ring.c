/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/ring.c - the ring file of a process and its slot pool.
 *
 * One file per process (layout in rip/abi.h):
 *
 *   +--------+-----------------------+--------------+------------+---------------+
 *   | header | slot[0] ... slot[n-1] | free FIFO[n] | module map | event areas   |
 *   +--------+-----------------------+--------------+------------+---------------+
 *              ^ fresh: never used slots are handed out first, in order
 *                                      ^ head (take), tail (give back)
 *   (the event areas, types to ring data, are lib/events.c's: see rip/abi.h)
 *
 * Slots are taken without locks: a compare-and-swap on hdr->fresh while
 * never-used slots remain, then the bounded MPMC queue of released slots
 * (Vyukov's design: one sequence word per cell), which returns the slot that
 * was released longest ago, so the history of dead threads survives as long as
 * the pool allows.  A slot is set up under a seqlock on slot->gen (odd while
 * being set up) so readers never mistake a half-initialised slot for a live one.
 *
 * The file is created O_EXCL|O_NOFOLLOW with mode 0600 and its space is
 * reserved with posix_fallocate, so a full tmpfs is an error at open, never a
 * SIGBUS in the program later.  The file stays when the process ends.  No
 * descriptor is kept once the file is mapped: the program never sees one
 * more fd than it opened, and one that closes every fd cannot hurt tracing.
 * Readers tell live files from dead ones by pid, start time, boot id and
 * whether the process still maps the file (read/ringfile.c rr_alive).
 *
 * fork(): the child copies the file into one of its own and maps the copy at
 * the very same address (MAP_FIXED), so every pointer (slots, coroutine
 * handles, librip.h's rip_ring) stays valid and no write ever reaches the
 * parent's file.
 *
 * The environment (RIP_*, XDG_RUNTIME_DIR) is read with secure_getenv, here
 * and in events.c, clock.h and the preload library: under secure execution
 * (a set-user-ID or set-group-ID program, file capabilities: AT_SECURE) it
 * belongs to whoever ran the program, who must not choose where a file is
 * made, nor anything else.  Such a program then opens no file by itself
 * (RIP_RING is unset for it), and one it asks for goes to the default place,
 * unless its effective user is the real one (set-group-ID, capabilities): a
 * file that user owns, they could write under the program (no file then).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <internal/relax.h>
#include <rip/proc.h>

#include <internal/clock.h>

#include "internal.h"

__thread struct rip_self __rip_self __attribute__((tls_model("initial-exec")));

struct rip_proc __rip_proc = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/*
 * Where threads write when there is no ring (or the pool is full): never
 * read, spread over several slots so that unrelated threads do not fight over
 * one cache line.
 */
#define RIP_DUMMIES 64
static struct rip_slot rip_dummy[RIP_DUMMIES] __attribute__((aligned(64)));

pid_t __rip_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

void __rip_name_copy(char *dst, const char *src, size_t len)
{
	size_t n = len < RIP_NAME_MAX - 1 ? len : RIP_NAME_MAX - 1;

	n = strnlen(src, n);
	memcpy(dst, src, n);
	memset(dst + n, 0, RIP_NAME_MAX - n);
}

#define RIP_PAGE_UP(x) (((x) + 4095) & ~(size_t)4095)

/* Lay the areas out one after the other (rip/abi.h); returns the file size. */
/*
 * __rip_preload_watch (internal/preload.h) is defined by librip-preload.so
 * alone: a program without it gets no copy area, and its file stays as
 * small as before (tools that copy ring files whole pay for every byte of
 * its size).  A weak reference: 0 without it.
 */
#pragma weak __rip_preload_watch

static size_t rip_file_layout(struct rip_file_hdr *h, uint32_t slots,
			      const struct rip_ev_config *ev, uint32_t copies, bool samples)
{
	size_t off = RIP_SLOTS_OFFSET + (size_t)slots * RIP_SLOT_SIZE;

	h->fifo_off = off;
	off = RIP_PAGE_UP(off + (size_t)slots * sizeof(struct rip_fifo_cell));
	h->mod_off = off;
	off += (size_t)RIP_MOD_CAP * RIP_MODULE_SIZE;
	h->types_off = off;
	off += (size_t)RIP_TYPES_CAP * RIP_EVTYPE_SIZE;
	h->cats_off = off;
	off += (size_t)RIP_CATEGORIES * RIP_CATEGORY_NAME_MAX;
	h->ev_fifo_off = off;
	off += (size_t)(ev->rings + ev->small_rings) * sizeof(struct rip_fifo_cell);
	h->ev_ctl_off = off = RIP_PAGE_UP(off);
	off += (size_t)(ev->rings + ev->small_rings) * RIP_EVRING_SIZE;
	h->ev_off = off = RIP_PAGE_UP(off);
	off += (size_t)ev->rings * ev->ring_size;
	h->ev_small_off = off;
	off += (size_t)ev->small_rings * ev->small_ring_size;
	/* The watcher's stack copies (preload/watch.c), last: holes until it uses them. */
	h->watch_off = 0;
	h->watch_copies = copies;
	h->watch_copy_size = copies ? RIP_WATCH_COPY_SIZE : 0;
	if (copies) {
		h->watch_off = off = RIP_PAGE_UP(off);
		off += (size_t)copies * RIP_WATCH_COPY_SIZE;
	}
	/* The CPU samples (preload/sample.c), one ring per slot: holes until sampled. */
	h->sample_off = 0;
	h->sample_size = samples ? RIP_SAMPLE_RING_SIZE : 0;
	if (samples) {
		h->sample_off = off = RIP_PAGE_UP(off);
		off += (size_t)slots * RIP_SAMPLE_RING_SIZE;
	}
	/* The shadow call stacks and the function table (func.c): holes until used. */
	return __rip_fn_layout(h, off, slots, __rip_proc.sparse);
}

/*
 * A sample area for a sparse file of a process with the preload library
 * (the sampler's) that asked for sampling (RIP_SAMPLE set, not 0).
 */
static bool rip_env_samples(void)
{
	const char *s = secure_getenv("RIP_SAMPLE");

	return &__rip_preload_watch && s && *s && strcmp(s, "0") != 0;
}

/*
 * Buffers of the watcher's copy area (RIP_WATCH_COPIES, default 4096 of 16
 * KiB: at most 64 MiB of tmpfs, and only the pages copies fill are backed).
 * Only a sparse file of a process with the preload library's watcher gets
 * one (not with RIP_WATCH=0): a file backed all at once would pay for all
 * of it.
 */
static uint32_t rip_env_watch_copies(void)
{
	const char *s = secure_getenv("RIP_WATCH_COPIES"), *w = secure_getenv("RIP_WATCH");
	char *end;
	unsigned long v;

	if (!&__rip_preload_watch || (w && !strcmp(w, "0")))
		return 0;

	if (!s || !*s)
		return RIP_WATCH_COPIES_DEFAULT;
	v = strtoul(s, &end, 10);
	if (*end || v > RIP_WATCH_COPIES_MAX)
		return RIP_WATCH_COPIES_DEFAULT;
	return (uint32_t)v;
}

/* ---- the free FIFOs -------------------------------------------------- */

struct rip_fifo __rip_fifo_slots(struct rip_file_hdr *h)
{
	return (struct rip_fifo){
		.cells = (struct rip_fifo_cell *)((char *)h + h->fifo_off),
		.n = h->slot_count,
		.head = &h->fifo_head,
		.tail = &h->fifo_tail,
		.h = h,
		.backed = __rip_proc.sparse ? &__rip_proc.slots_backed : NULL,
	};
}

/*
 * The cells are stored relative to their index (rip/abi.h): a cell holds
 * seq - i, so that a hole (all zero) is an empty cell of the first lap and
 * the queues need neither writing nor backing when the file is created.
 */
static inline uint64_t rip_cell_seq(const struct rip_fifo_cell *c, uint64_t i)
{
	return __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE) + i;
}

/*
 * Back cell i's page before the first push there (cells are filled in
 * order, so a count of the cells backed is enough).  0 or -errno (tmpfs
 * full: the item is lost to the pool).
 */
static int rip_fifo_back(struct rip_fifo q, uint64_t i)
{
	uint64_t cells = (uint64_t)((char *)q.cells - (char *)q.h), off, end, got;
	uint64_t have = __atomic_load_n(q.backed, __ATOMIC_RELAXED);
	int err;

	if (i < have)
		return 0;
	off = cells + i * sizeof(struct rip_fifo_cell);
	err = __rip_commit(q.h, off, sizeof(struct rip_fifo_cell));
	if (err)
		return err;
	/* Every cell that ends on or before the end of that page is backed now. */
	end = (off + __rip_proc.page) & ~((uint64_t)__rip_proc.page - 1);
	got = (end - cells) / sizeof(struct rip_fifo_cell);
	if (got > q.n)
		got = q.n;
	/* A count only: the page itself was backed by the call above, in this process. */
	while (have < got && !__atomic_compare_exchange_n(q.backed, &have, got, true,
							  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return 0;
}

int __rip_fifo_push(struct rip_fifo q, uint32_t item)
{
	struct rip_fifo_cell *c;
	uint64_t pos = __atomic_load_n(q.tail, __ATOMIC_RELAXED);
	unsigned spins = 0;

	for (;;) {
		uint64_t i = pos % q.n;

		/* Its page first: never a cell read or written where no memory stands behind. */
		if (q.backed && rip_fifo_back(q, i))
			return -ENOSPC;
		c = &q.cells[i];
		/* Pairs with the release store of c->seq in __rip_fifo_pop: the cell is empty. */
		uint64_t seq = rip_cell_seq(c, i);
		int64_t dif = (int64_t)(seq - pos);

		if (dif == 0) {
			/* Release: the cell's page is backed before a popper sees the new tail. */
			if (__atomic_compare_exchange_n(q.tail, &pos, pos + 1, true,
							__ATOMIC_RELEASE, __ATOMIC_RELAXED))
				break;
		} else if (dif < 0) {
			return -ENOSPC; /* more releases than items: a corrupted file */
		} else {
			/* tail behind its cells: others moving it, or a broken queue (never spin) */
			if (++spins > 100000)
				return -EAGAIN;
			pos = __atomic_load_n(q.tail, __ATOMIC_RELAXED);
		}
	}
	c->slot = item;
	/* Publish the cell: pairs with the acquire load of c->seq in __rip_fifo_pop. */
	__atomic_store_n(&c->seq, pos + 1 - pos % q.n, __ATOMIC_RELEASE);
	return 0;
}

void __rip_fifo_reset(struct rip_fifo q)
{
	/*
	 * A sparse child file has the queue as holes (rip_copy_rings leaves
	 * it out), all empty; a file backed all at once has the parent's
	 * cells, which go back to zero.
	 */
	if (q.backed)
		*q.backed = 0;
	else
		memset(q.cells, 0, q.n * sizeof(*q.cells));
	*q.head = *q.tail = 0;
}

int __rip_fifo_pop(struct rip_fifo q, uint32_t *item)
{
	struct rip_fifo_cell *c;
	uint64_t pos = __atomic_load_n(q.head, __ATOMIC_RELAXED);
	unsigned spins = 0;

	for (;;) {
		uint64_t i = pos % q.n;

		/*
		 * Empty: do not even read the cell, whose page may be a hole
		 * (reading one backs it).  Pairs with the release CAS of the
		 * tail in __rip_fifo_push: cells below the tail are backed.
		 */
		if (pos == __atomic_load_n(q.tail, __ATOMIC_ACQUIRE))
			return -ENOSPC;
		c = &q.cells[i];
		/* Pairs with the release store of c->seq in __rip_fifo_push: the cell is full. */
		uint64_t seq = rip_cell_seq(c, i);
		int64_t dif = (int64_t)(seq - (pos + 1));

		if (dif == 0) {
			if (__atomic_compare_exchange_n(q.head, &pos, pos + 1, true,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
				break;
		} else if (dif < 0) {
			/*
			 * Empty, or a pusher won the tail but has not filled
			 * its cell yet: wait a little for the latter.
			 */
			if (__atomic_load_n(q.tail, __ATOMIC_RELAXED) == pos || ++spins > 1000)
				return -ENOSPC;
			rip_cpu_relax();
			pos = __atomic_load_n(q.head, __ATOMIC_RELAXED);
		} else {
			if (++spins > 100000)
				return -EAGAIN; /* never spin on a broken queue */
			pos = __atomic_load_n(q.head, __ATOMIC_RELAXED);
		}
	}
	*item = (uint32_t)c->slot;
	/* Free the cell for the push one lap later: pairs with the acquire in __rip_fifo_push. */
	__atomic_store_n(&c->seq, pos + q.n - pos % q.n, __ATOMIC_RELEASE);
	return *item < q.n ? 0 : -EUCLEAN;
}

/* ---- slots ---------------------------------------------------------- */

int __rip_slot_take(struct rip_file_hdr *h, uint32_t *out)
{
	uint32_t n = h->slot_count;
	uint32_t f = __atomic_load_n(&h->fresh, __ATOMIC_RELAXED);

	while (f < n) {
		/* Only the counter matters here; the slot is published by its gen. */
		if (__atomic_compare_exchange_n(&h->fresh, &f, f + 1, true, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			*out = f;
			/* Never used: back it first (tmpfs full: lost to the pool, counted). */
			if (__rip_commit(h, h->slot_off + ((uint64_t)f << RIP_SLOT_SHIFT),
					 RIP_SLOT_SIZE))
				break;
			goto out_index;
		}
	}
	if (__rip_fifo_pop(__rip_fifo_slots(h), out) == 0) {
		/* A slot free at a fork is a hole of the child's file (rip_atfork_child): back it. */
		if (*out < __rip_proc.slot_holes &&
		    __rip_commit(h, h->slot_off + ((uint64_t)*out << RIP_SLOT_SHIFT),
				 RIP_SLOT_SIZE))
			goto out_lost;
		goto out_index;
	}
out_lost:
	__atomic_fetch_add(&h->overflow, 1, __ATOMIC_RELAXED);
	return -ENOSPC;

out_index:
	/* A forked child's file has only the used slots copied: (re)state the index. */
	rip_slot_at(h, *out)->index = *out;
	return 0;
}

void __rip_slot_setup(struct rip_slot *s, uint32_t kind, int32_t tid, const char *name,
		      size_t namelen)
{
	uint32_t gen = s->gen;
	uint64_t now = rip_clock_ticks();

	/* Seqlock write side: odd gen while the fields change; pairs with readers' gen checks. */
	__atomic_store_n(&s->gen, gen | 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	s->snap_seq = 0;
	s->switch_ts = now;
	s->tid = tid;
	s->kind = kind;
	s->coro = 0;
	s->attach_ts = now;
	s->exit_ts = 0;
	s->switches = 0;
	s->user_id = 0;
	__rip_name_copy(s->name, name, namelen);
	s->state = kind == RIP_KIND_CORO ? RIP_SLOT_WAITING : RIP_SLOT_RUNNING;
	/* Close the seqlock: everything above is visible before the even gen. */
	__atomic_store_n(&s->gen, (gen | 1) + 1, __ATOMIC_RELEASE);
}

/* Rename a slot in use without a reader ever seeing half of each name. */
static void rip_slot_rename(struct rip_slot *s, const char *name)
{
	uint32_t gen = s->gen;

	/* Seqlock write side, as in __rip_slot_setup: readers retry or skip an odd gen. */
	__atomic_store_n(&s->gen, gen | 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__rip_name_copy(s->name, name, strlen(name));
	/* Close it: the name is visible before the even gen. */
	__atomic_store_n(&s->gen, (gen | 1) + 1, __ATOMIC_RELEASE);
}

void __rip_slot_release(struct rip_file_hdr *h, struct rip_slot *s)
{
	uint32_t seq = s->wait.seq;

	/*
	 * No wait outlives its thread (a cancelled wait, or a thread that died
	 * in a signal handler that was in one).  The wait record's seqlock, as
	 * the wrappers write it (rip/abi.h): odd, clear, even with a release.
	 */
	if (__atomic_load_n(&s->wait.kind, __ATOMIC_RELAXED)) {
		__atomic_store_n(&s->wait.seq, seq | 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		__atomic_store_n(&s->wait.kind, RIP_WAIT_NONE, __ATOMIC_RELAXED);
		/* Pairs with the readers' acquire loads of seq. */
		__atomic_store_n(&s->wait.seq, (seq | 1) + 1, __ATOMIC_RELEASE);
	}
	s->exit_ts = rip_clock_ticks();
	s->switch_ts = s->exit_ts;
	/* Exit time before state: pairs with the acquire load of state in readers. */
	__atomic_store_n(&s->state, RIP_SLOT_EXITED, __ATOMIC_RELEASE);
	__rip_fifo_push(__rip_fifo_slots(h), s->index);
}

/* ---- threads -------------------------------------------------------- */

static void rip_use_dummy(struct rip_self *me)
{
	struct rip_slot *d = &rip_dummy[(uint32_t)me->tid % RIP_DUMMIES];

	rip_self_run(me, d);
	me->thread = d;
	me->flags |= RIP_SELF_DUMMY;
}

/* Does s point at a slot of the file mapped at h (and not of an older, closed one)? */
static bool rip_slot_of(struct rip_file_hdr *h, struct rip_slot *s)
{
	char *lo, *hi;

	if (!h || !s)
		return false;
	lo = (char *)h + h->slot_off;
	hi = lo + ((size_t)h->slot_count << RIP_SLOT_SHIFT);
	return (char *)s >= lo && (char *)s < hi && ((char *)s - lo) % RIP_SLOT_SIZE == 0;
}

static void rip_thread_exit(void *arg)
{
	struct rip_self *me = &__rip_self;
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);

	/*
	 * Called as the key's destructor (arg is the slot): the destructors of
	 * the keys made after ours (the program's, its libraries') run after
	 * this one in the same round, and their frees and closes would find the
	 * ring given back and be counted lost.  Put the exit off by one round
	 * (glibc runs another while a destructor set a value): by then every
	 * key's first destructor ran.  One round only: runtimes that must be
	 * last (ThreadSanitizer's thread state) count down all of
	 * PTHREAD_DESTRUCTOR_ITERATIONS, and our exit must come before theirs.
	 * Setting our own key's value again allocates nothing.
	 */
	if (arg && __rip_proc.key_ok && !(me->flags & RIP_SELF_EXIT_PUT_OFF) &&
	    pthread_setspecific(__rip_proc.key, arg) == 0) {
		me->flags |= RIP_SELF_EXIT_PUT_OFF;
		return;
	}
	me->flags &= ~RIP_SELF_EXIT_PUT_OFF;
	if (h) {
		__rip_fn_thread_exit(); /* into its ring, before it is given back */
		__rip_events_thread_exit(h, me);
		__rip_modules_maybe_rescan();
	}
	if (!(me->flags & RIP_SELF_DUMMY) && rip_slot_of(h, me->thread)) {
		__rip_slot_release(h, me->thread);
		__atomic_fetch_sub(&h->live_threads, 1, __ATOMIC_RELAXED);
	}
	/* Destructors that run after this one may still snap: into a dummy. */
	me->flags |= RIP_SELF_EXITING;
	rip_use_dummy(me);
}

/* ---- children no fork handler saw ---------------------------------- */

/*
 * One word in a page the kernel empties in a child made without CLONE_VM
 * (MADV_WIPEONFORK, Linux 4.14): 1 in this process, set again by the fork
 * handler in a fork child, and 0 in a child of a raw clone or clone3, which
 * runs no handler.  Such a child still maps its parent's ring file shared:
 * the slow paths below, and the preload library's hooks, look at the word
 * before they write, and make the child's own file (or none) first.  NULL
 * until a file is open, or when the kernel does not wipe.
 */
static uint32_t *rip_fork_word;

static void rip_atfork_child(void);
static void rip_atfork_prepare(void);
static void rip_atfork_parent(void);

/* Map the word (a file was just opened, lock held). */
static void rip_fork_word_map(void)
{
	uint32_t *w;

	if (__atomic_load_n(&rip_fork_word, __ATOMIC_RELAXED))
		return;
	/* The system calls: the preload library's hooks must not see the tracer's mmap. */
	w = (uint32_t *)syscall(SYS_mmap, NULL, __rip_proc.page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED)
		return;
	if (syscall(SYS_madvise, w, __rip_proc.page, MADV_WIPEONFORK)) {
		syscall(SYS_munmap, w, __rip_proc.page);
		return;
	}
	*w = 1;
	/* Release: the 1 before the pointer (pairs with the acquire in __rip_fork_check). */
	__atomic_store_n(&rip_fork_word, w, __ATOMIC_RELEASE);
}

int __rip_fork_check(void)
{
	/* Acquire: pairs with the release store of the pointer in rip_fork_word_map. */
	uint32_t *w = __atomic_load_n(&rip_fork_word, __ATOMIC_ACQUIRE);

	/* Relaxed: only this thread exists in a child that finds 0. */
	if (RIP_LIKELY(!w || __atomic_load_n(w, __ATOMIC_RELAXED)))
		return 0;
	rip_atfork_child();
	return 1;
}

static int rip_attach(struct rip_self *me)
{
	/* Pairs with the release store of hdr in rip_ring_open. */
	struct rip_file_hdr *h;
	char comm[17] = "", again[17] = "";
	struct rip_slot *s;
	uint32_t idx;
	int err;

	h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	if (me->flags & RIP_SELF_ATTACHING) {
		/* A signal handler snapped while this thread was attaching: use a dummy
		 * until the interrupted attach finishes and sets cur for real. */
		rip_self_run(me, &rip_dummy[0]);
		return -EBUSY;
	}
	if (!me->tid)
		me->tid = __rip_gettid();
	if (!h || (me->flags & RIP_SELF_EXITING)) {
		rip_use_dummy(me);
		return h ? -ESRCH : -ENODEV;
	}
	me->flags |= RIP_SELF_ATTACHING;
	/* Order the flag before the work for a signal handler on this thread. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	err = __rip_slot_take(h, &idx);
	if (err) {
		rip_use_dummy(me);
		goto out_attaching;
	}
	s = rip_slot_at(h, idx);
	prctl(PR_GET_NAME, comm, 0, 0, 0);
	__rip_slot_setup(s, RIP_KIND_THREAD, me->tid, comm, sizeof(comm));
	__atomic_fetch_add(&h->live_threads, 1, __ATOMIC_RELAXED);
	me->flags &= ~RIP_SELF_DUMMY;
	me->thread = s;
	rip_self_run(me, s);
	/*
	 * A pthread_setname_np of this thread by another one after the name was
	 * read above but before the slot was set up found no slot to rename
	 * (__rip_thread_name looks for it by tid), and the name was lost: read
	 * it again.  The fence orders the slot's setup before this read; the
	 * renamer's system call orders the new name before its search.  Both
	 * may rename then, with the same name (the kernel's).
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	prctl(PR_GET_NAME, again, 0, 0, 0);
	if (memcmp(again, comm, sizeof(comm)))
		rip_slot_rename(s, again);
	if (__rip_proc.key_ok)
		pthread_setspecific(__rip_proc.key, s);
out_attaching:
	/* Pairs with the signal fence above: cur is set before the flag drops. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	me->flags &= ~RIP_SELF_ATTACHING;
	return err;
}

void __rip_attach_slow(void)
{
	struct rip_self *me = &__rip_self;

	if (!me->cur)
		rip_attach(me);
}

int rip_thread_attach(void)
{
	struct rip_self *me = &__rip_self;

	if (me->thread && !(me->flags & RIP_SELF_DUMMY))
		return 0;
	if (me->cur != me->thread)
		return -EBUSY; /* inside a coroutine */
	rip_self_run(me, NULL);
	me->thread = NULL;
	me->flags &= ~RIP_SELF_DUMMY;
	return rip_attach(me);
}

int rip_thread_detach(void)
{
	struct rip_self *me = &__rip_self;

	if (!me->thread || (me->flags & RIP_SELF_DUMMY))
		return -ENOENT;
	if (me->cur != me->thread)
		return -EBUSY;
	if (__rip_proc.key_ok)
		pthread_setspecific(__rip_proc.key, NULL);
	rip_thread_exit(NULL);
	me->flags &= ~RIP_SELF_EXITING; /* a later snap may attach again */
	me->ev.ring = 0;
	rip_self_run(me, NULL);
	me->thread = NULL;
	return 0;
}

int rip_thread_set_name(const char *name)
{
	struct rip_self *me = &__rip_self;

	int err = 0;

	if (!name)
		return -EINVAL;
	if (!me->thread || (me->flags & RIP_SELF_DUMMY))
		err = rip_thread_attach();
	if (me->flags & RIP_SELF_DUMMY)
		return err ? err : -ENODEV;
	rip_slot_rename(me->thread, name);
	__rip_modules_maybe_rescan();
	return 0;
}

/*
 * For librip-preload.so's pthread_setname_np: name the slot of thread tid
 * (0: the caller) without the module rescan of rip_thread_set_name, which
 * calls into the loader.  Another thread's slot is found by its tid among
 * the live thread slots.  Takes no lock, allocates nothing.
 */
int __rip_thread_name(int32_t tid, const char *name)
{
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	struct rip_self *me = &__rip_self;
	uint32_t used;

	if (!name)
		return -EINVAL;
	if (!h)
		return -ENODEV;
	if (!tid || tid == me->tid) {
		if (!me->thread || (me->flags & RIP_SELF_DUMMY) || !rip_slot_of(h, me->thread))
			return -ENOENT;
		rip_slot_rename(me->thread, name);
		return 0;
	}
	used = __atomic_load_n(&h->fresh, __ATOMIC_RELAXED);
	if (used > h->slot_count)
		used = h->slot_count;
	for (uint32_t i = 0; i < used; i++) {
		struct rip_slot *s = rip_slot_at(h, i);

		/* Acquire: pairs with the release of state in __rip_slot_release. */
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == RIP_SLOT_RUNNING &&
		    s->kind == RIP_KIND_THREAD && s->tid == tid) {
			rip_slot_rename(s, name);
			return 0;
		}
	}
	return -ESRCH;
}

/* ---- coroutines ------------------------------------------------------ */

static struct rip_slot *rip_coro_slot(struct rip_coro *co)
{
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	struct rip_slot *s = (struct rip_slot *)co;

	if (!rip_slot_of(h, s))
		return NULL;
	if (s->kind != RIP_KIND_CORO || s->state == RIP_SLOT_EXITED)
		return NULL;
	return s;
}

static int rip_coro_new(const char *name, struct rip_coro **out, bool rescan);

RIP_PRIVATE bool __rip_coro_api;

int rip_coro_create(const char *name, struct rip_coro **out)
{
	/* Relaxed: a hint the preload's ucontext hooks read (internal/preload.h). */
	__atomic_store_n(&__rip_coro_api, true, __ATOMIC_RELAXED);
	return rip_coro_new(name, out, true);
}

/* For librip-preload.so's makecontext: no module rescan (it calls into the loader). */
int __rip_coro_new(const char *name, struct rip_coro **out)
{
	return rip_coro_new(name, out, false);
}

static int rip_coro_new(const char *name, struct rip_coro **out, bool rescan)
{
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	struct rip_self *me = &__rip_self;
	uint32_t idx;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!h)
		return -ENODEV;
	if (!me->tid)
		me->tid = __rip_gettid();
	err = __rip_slot_take(h, &idx);
	if (err)
		return err;
	if (!name)
		name = "coro";
	if (rescan)
		__rip_modules_maybe_rescan();
	__rip_slot_setup(rip_slot_at(h, idx), RIP_KIND_CORO, me->tid, name, strlen(name));
	__atomic_fetch_add(&h->live_coros, 1, __ATOMIC_RELAXED);
	*out = (struct rip_coro *)rip_slot_at(h, idx);
	return 0;
}

/*
 * rip:coro_end {u32 coro}: coroutine coro (its slot's index + 1) is
 * destroyed, and the number may name another one next.  The calls open in
 * it end there (analysis/funcs.c): without it, rip report --functions ran
 * them on to the end of the trace, and a coroutine given the slot next
 * inherited them.  Registered the first time a coroutine is destroyed with
 * the coro category on; with our lock taken (a signal handler may destroy
 * one), not written.
 */
static uint32_t rip_coro_end_id = UINT32_MAX;
static const struct rip_event_type rip_coro_end_type = {
	.name = "rip:coro_end",
	.category = RIP_CAT_CORO,
	.nfields = 1,
	.fields = { RIP_FIELD(U32, "coro") },
	.id = &rip_coro_end_id,
};

int rip_coro_destroy(struct rip_coro *co)
{
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	struct rip_slot *s = rip_coro_slot(co);

	if (!s)
		return -EINVAL;
	if (__rip_self.cur == s)
		rip_coro_switch_out();
	/*
	 * The id's acquire pairs with its release store in the registration
	 * (events.c).  Only from a thread with a slot: the event would attach
	 * one that has none, and take a slot (or count one missing) for it.
	 */
	if (__rip_self.thread && rip_category_enabled(RIP_CAT_CORO) &&
	    (__atomic_load_n(&rip_coro_end_id, __ATOMIC_ACQUIRE) != UINT32_MAX ||
	     !__rip_type_register(&rip_coro_end_type, true)))
		rip_event1(&rip_coro_end_type, s->index + 1);
	__rip_slot_release(h, s);
	__atomic_fetch_sub(&h->live_coros, 1, __ATOMIC_RELAXED);
	return 0;
}

int rip_coro_set_name(struct rip_coro *co, const char *name)
{
	struct rip_slot *s = rip_coro_slot(co);

	if (!s || !name)
		return -EINVAL;
	rip_slot_rename(s, name);
	return 0;
}

/* ---- the file ------------------------------------------------------- */

/* /proc/PID/stat start time in clock ticks (pid 0: this process), 0 if unknown. */
uint64_t __rip_start_ticks(pid_t pid)
{
	char state;

	return rip_proc_start((int)pid, &state);
}

static void rip_read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 0)
		n = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = 0;
}

static uint64_t rip_realtime_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void rip_hdr_identity(struct rip_file_hdr *h)
{
	struct stat st;
	ssize_t n;

	h->pid = getpid();
	h->ppid = getppid();
	/* A reader in another pid namespace finds the process by it (read/ringfile.c). */
	if (!stat("/proc/self/ns/pid", &st))
		h->pidns = st.st_ino;
	h->start_ticks = __rip_start_ticks(0);
	h->create_realtime = rip_realtime_ns(CLOCK_REALTIME);
	rip_read_small("/proc/sys/kernel/random/boot_id", h->boot_id, sizeof(h->boot_id));
	prctl(PR_GET_NAME, h->comm, 0, 0, 0);
	h->comm[sizeof(h->comm) - 1] = 0;
	n = readlink("/proc/self/exe", h->exe, sizeof(h->exe) - 1);
	h->exe[n > 0 ? n : 0] = 0;
	if (gethostname(h->host, sizeof(h->host) - 1))
		h->host[0] = 0;
	h->host[sizeof(h->host) - 1] = 0;
}

/* The directory for ring files: $RIP_DIR, $XDG_RUNTIME_DIR/rip, /dev/shm. */
static int rip_default_dir(char *buf, size_t len)
{
	const char *d = secure_getenv("RIP_DIR");
	const char *x = secure_getenv("XDG_RUNTIME_DIR");
	int n;

	if (d && *d) {
		n = snprintf(buf, len, "%s", d);
	} else if (x && *x) {
		n = snprintf(buf, len, "%s/rip", x);
		if (n > 0 && (size_t)n < len && mkdir(buf, 0700) && errno != EEXIST)
			n = snprintf(buf, len, "/dev/shm");
	} else {
		n = snprintf(buf, len, "/dev/shm");
	}
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/* Append n bytes of s at *at in buf of len (kept NUL-terminated); false if it does not fit. */
static bool rip_str_add(char *buf, size_t len, size_t *at, const char *s, size_t n)
{
	if (n >= len - *at)
		return false;
	memcpy(buf + *at, s, n);
	*at += n;
	buf[*at] = 0;
	return true;
}

/* The same with v in decimal. */
static bool rip_num_add(char *buf, size_t len, size_t *at, uint64_t v)
{
	char tmp[24];
	size_t n = sizeof(tmp);

	do
		tmp[--n] = (char)('0' + v % 10);
	while ((v /= 10));
	return rip_str_add(buf, len, at, tmp + n, sizeof(tmp) - n);
}

/*
 * DIR/rip-PID-START.ring into buf.  No stdio: a fork child makes its path
 * here, where only async-signal-safe calls are allowed (dir given).
 */
static int rip_file_path(char *buf, size_t len, const char *dir, pid_t pid, uint64_t start)
{
	char d[PATH_MAX];
	size_t at = 0, n;
	int err;

	if (!dir) {
		err = rip_default_dir(d, sizeof(d));
		if (err)
			return err;
		dir = d;
	}
	if (!len)
		return -ENAMETOOLONG;
	buf[0] = 0;
	/* a directory given with its slash (RIP_RING=DIR/, rip run's): one slash, not two */
	n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (!rip_str_add(buf, len, &at, dir, n) || !rip_str_add(buf, len, &at, "/rip-", 5) ||
	    !rip_num_add(buf, len, &at, (uint64_t)pid) || !rip_str_add(buf, len, &at, "-", 1) ||
	    !rip_num_add(buf, len, &at, start) || !rip_str_add(buf, len, &at, ".ring", 5))
		return -ENAMETOOLONG;
	return 0;
}

/*
 * The random part of a name (RIP_NAME_TAG_LEN lowercase letters, about 37
 * bits), for a name another user took first: getrandom, or when it cannot
 * give (an old kernel, a seccomp filter) the clock, the pid and a counter
 * mixed, which no other user can predict to the nanosecond either.  No
 * stdio, no locks: a fork child comes here.
 */
#define RIP_NAME_TAG_LEN 8 /* read/ringname.h RN_TAG_LEN */

static void rip_name_tag(char tag[RIP_NAME_TAG_LEN + 1])
{
	static uint64_t salt; /* another tag at each call (atomic: threads may race here) */
	unsigned char r[RIP_NAME_TAG_LEN];
	int err = errno;

	if (syscall(SYS_getrandom, r, sizeof(r), 1 /* GRND_NONBLOCK */) != (long)sizeof(r)) {
		struct timespec ts;
		uint64_t x;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		/* Relaxed, pairs with nothing: the counter only has to differ between calls. */
		x = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 40 ^
		    __atomic_add_fetch(&salt, 0x9e3779b97f4a7c15ull, __ATOMIC_RELAXED);
		for (size_t i = 0; i < sizeof(r); i++) {
			/* splitmix64's finaliser, a byte at a time */
			x = (x ^ x >> 30) * 0xbf58476d1ce4e5b9ull;
			x = (x ^ x >> 27) * 0x94d049bb133111ebull;
			r[i] = (unsigned char)(x ^ x >> 31);
		}
	}
	for (size_t i = 0; i < sizeof(r); i++)
		tag[i] = (char)('a' + r[i] % 26);
	tag[RIP_NAME_TAG_LEN] = 0;
	errno = err;
}

/*
 * Rename buf, a DIR/rip-PID-START... path, to image gen's name:
 * DIR/rip-PID-START[.gen][.tag].ring (no .gen for 0, no tag for NULL).
 * After execve the pid and start time stay the same: the new image gets
 * rip-PID-START.N.ring, N counting the images.
 */
static int rip_file_path_next(char *buf, size_t len, unsigned gen, const char *tag)
{
	char *slash = strrchr(buf, '/');
	char *dot = strchr(slash ? slash : buf, '.');
	size_t at = dot ? (size_t)(dot - buf) : strlen(buf);

	/* the stem, rip-PID-START, has no dot: cut what follows it */
	buf[at] = 0;
	if ((gen && (!rip_str_add(buf, len, &at, ".", 1) || !rip_num_add(buf, len, &at, gen))) ||
	    (tag && (!rip_str_add(buf, len, &at, ".", 1) ||
		     !rip_str_add(buf, len, &at, tag, strlen(tag)))) ||
	    !rip_str_add(buf, len, &at, ".ring", 5))
		return -ENAMETOOLONG;
	return 0;
}

/*
 * path exists: is it the file of this process's image before an execve
 * (ours, with our pid and start time)?  Then say so in it, for readers, and
 * return true.  false for a file in the way that is not ours: another
 * user's, planted, or something else than a ring file.
 */
static bool rip_mark_execed(const char *path)
{
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct rip_file_hdr *old;
	struct stat st;
	bool ours = false;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (size_t)st.st_size < sizeof(*old))
		goto out_close;
	old = mmap(NULL, sizeof(*old), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (old == MAP_FAILED)
		goto out_close;
	ours = !memcmp(old->magic, RIP_MAGIC, sizeof(old->magic)) && old->pid == getpid() &&
	       old->start_ticks == __rip_start_ticks(0);
	if (ours &&
	    !(__atomic_load_n(&old->proc_flags, __ATOMIC_RELAXED) & (RIP_P_CLOSED | RIP_P_EXITED)))
		/* Readers only test the bit. */
		__atomic_fetch_or(&old->proc_flags, RIP_P_EXECED, __ATOMIC_RELAXED);
	munmap(old, sizeof(*old));
out_close:
	close(fd);
	return ours;
}

/*
 * Does RIP_FOLLOW name what (fork or exec)?  Unset, "1" or "all": both;
 * "0" or "none": neither; else a comma-separated list of the two words.
 */
static bool rip_follows(const char *what)
{
	const char *s = secure_getenv("RIP_FOLLOW");
	size_t n = strlen(what);

	if (!s || !*s || !strcmp(s, "1") || !strcmp(s, "all"))
		return true;
	while (*s) {
		size_t len = strcspn(s, ",");

		if (len == n && !strncmp(s, what, n))
			return true;
		s += len + (s[len] == ',');
	}
	return false;
}

bool __rip_followed(void)
{
	const char *root = secure_getenv("RIP_ROOT");

	if (__rip_proc.exec_unfollowed)
		return false;
	return !root || !*root || strtol(root, NULL, 10) == (long)getpid() || rip_follows("fork");
}

/* The bytes rip_file_create reserves up front for a file of len bytes laid out as h says. */
static size_t rip_file_reserved(size_t len, const struct rip_file_hdr *h, bool sparse)
{
	return sparse ? RIP_SLOTS_OFFSET + (h->ev_fifo_off - h->cats_off) : len;
}

/*
 * Under rip run (RIP_CONSUMER is set), a ring file that cannot be created
 * leaves in its place an empty file whose name says why, so that rip run can
 * tell the user (a full tmpfs, most often) instead of finding nothing:
 * PATH.failed-ERRNO-BYTES, BYTES being what the file needed up front.  An
 * empty file takes an inode but no space.  Nobody else reads the directory
 * of rip run: elsewhere nothing is left.
 */
static void rip_mark_failed(const char *path, int err, size_t need)
{
	const char *consumer = secure_getenv("RIP_CONSUMER");
	char mark[PATH_MAX];
	size_t at = 0;
	int fd;

	/* No stdio: a fork child comes here (rip_atfork_child). */
	mark[0] = 0;
	if (!consumer || !*consumer || !rip_str_add(mark, sizeof(mark), &at, path, strlen(path)) ||
	    !rip_str_add(mark, sizeof(mark), &at, ".failed-", 8) ||
	    !rip_num_add(mark, sizeof(mark), &at, (uint64_t)err) ||
	    !rip_str_add(mark, sizeof(mark), &at, "-", 1) ||
	    !rip_num_add(mark, sizeof(mark), &at, need))
		return;
	fd = open(mark, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
}

/*
 * Create a file of len bytes at path, laid out as h says, and back with
 * memory what is written before first use: the header and the category
 * names.  Slots, event rings, the queues' cells, modules and types are
 * backed as they are first used (__rip_commit), or all at once with
 * sparse false.  Returns the fd or -errno.
 */
static int rip_file_create(const char *path, size_t len, const struct rip_file_hdr *h, bool sparse)
{
	int fd, err;

	/*
	 * Under secure execution with the effective user the real one
	 * (set-group-ID, file capabilities) the file would belong to whoever
	 * ran the program, who could write what this process maps and trusts
	 * (offsets, queues): no file.  A set-user-ID program's is its owner's.
	 */
	if (getauxval(AT_SECURE) && geteuid() == getuid())
		return -EPERM;
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = errno;
		if (err != EEXIST)
			rip_mark_failed(path, err, rip_file_reserved(len, h, sparse));
		return -err;
	}
	if (!sparse) {
		err = posix_fallocate(fd, 0, (off_t)len);
	} else if (ftruncate(fd, (off_t)len)) {
		err = errno;
	} else {
		err = posix_fallocate(fd, 0, RIP_SLOTS_OFFSET);
		if (!err)
			err = posix_fallocate(fd, (off_t)h->cats_off,
					      (off_t)(h->ev_fifo_off - h->cats_off));
	}
	if (err)
		goto err_unlink;
	return fd;

err_unlink:
	unlink(path);
	close(fd);
	rip_mark_failed(path, err, rip_file_reserved(len, h, sparse));
	return -err;
}

/*
 * Create the file at buf (a default name, image gen's) when a file was in
 * the way there that is not ours: the same name with a random part, tried
 * up to RIP_NAME_TRIES times (O_EXCL: a name taken meanwhile is never
 * opened).  Another user can take every name librip would try without one
 * (rip-PID-START.ring, .1 ... .99, predictable), never these.  The fd, or
 * -errno (-EEXIST when every try was taken, which only a guess of 37 random
 * bits at each try could do).
 */
#define RIP_NAME_TRIES 16

static int rip_file_create_tagged(char *buf, size_t blen, unsigned gen, size_t len,
				  const struct rip_file_hdr *h, bool sparse)
{
	char tag[RIP_NAME_TAG_LEN + 1];
	int fd = -EEXIST, err;

	for (int i = 0; i < RIP_NAME_TRIES && fd == -EEXIST; i++) {
		rip_name_tag(tag);
		err = rip_file_path_next(buf, blen, gen, tag);
		if (err)
			return err;
		fd = rip_file_create(buf, len, h, sparse);
	}
	return fd;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

int __rip_commit(struct rip_file_hdr *h, uint64_t off, size_t len)
{
	size_t page = __rip_proc.page;
	uintptr_t a, b;
	int err = errno, ret = 0;

	if (!__rip_proc.sparse || !len)
		return 0;
	a = ((uintptr_t)h + off) & ~(page - 1);
	b = ((uintptr_t)h + off + len + page - 1) & ~(page - 1);
	/* Populated for writing: backed now, or an error now, never a SIGBUS later. */
	while (madvise((void *)a, b - a, MADV_POPULATE_WRITE)) {
		if (errno != EINTR) {
			ret = -errno;
			break;
		}
	}
	errno = err;
	return ret;
}

/*
 * Can this kernel back a mapping on demand without a SIGBUS
 * (MADV_POPULATE_WRITE)?  Tried once, on a page of our own (__rip_proc.page
 * is set).
 */
static bool rip_sparse_ok(void)
{
	static int ok = -1;
	size_t page = __rip_proc.page;
	void *p;

	if (ok >= 0)
		return ok;
	/* The system calls, as in modules.c: the preload hooks must not see the tracer's mmap. */
	p = (void *)syscall(SYS_mmap, NULL, page, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return false;
	ok = madvise(p, page, MADV_POPULATE_WRITE) == 0;
	syscall(SYS_munmap, p, page);
	return ok;
}

static void rip_hdr_init(struct rip_file_hdr *h, const struct rip_file_hdr *layout, size_t len,
			 uint32_t slots, uint32_t flags, const struct rip_ev_config *ev)
{
	h->version = RIP_FORMAT_VERSION;
	h->hdr_size = RIP_HDR_SIZE;
	h->byte_order = RIP_BYTE_ORDER_MARK;
	h->ptr_size = sizeof(void *);
	h->flags = flags;
	h->file_size = len;
	h->slot_off = RIP_SLOTS_OFFSET;
	h->slot_size = RIP_SLOT_SIZE;
	h->slot_count = slots;
	h->snap_depth = RIP_SNAP_DEPTH;
	h->snap_off = RIP_SNAP_OFFSET;
	h->fifo_off = layout->fifo_off;
	h->mod_off = layout->mod_off;
	h->mod_size = RIP_MODULE_SIZE;
	h->mod_cap = RIP_MOD_CAP;
	h->types_off = layout->types_off;
	h->types_cap = RIP_TYPES_CAP;
	h->type_size = RIP_EVTYPE_SIZE;
	h->cats_off = layout->cats_off;
	h->ev_fifo_off = layout->ev_fifo_off;
	h->ev_ctl_off = layout->ev_ctl_off;
	h->ev_off = layout->ev_off;
	h->ev_rings = ev->rings + ev->small_rings;
	h->ev_ring_size = ev->ring_size;
	h->ev_packet_size = ev->packet_size;
	h->ev_mode = ev->mode;
	if (ev->small_rings) {
		h->ev_big = ev->rings;
		h->ev_small_ring_size = ev->small_ring_size;
		h->ev_small_packet_size = ev->small_packet_size;
		h->ev_small_off = layout->ev_small_off;
	}
	h->watch_off = layout->watch_off;
	h->watch_copy_size = layout->watch_copy_size;
	h->watch_copies = layout->watch_copies;
	h->sample_off = layout->sample_off;
	h->sample_size = layout->sample_size;
	h->fn_off = layout->fn_off;
	h->fn_size = layout->fn_size;
	h->fn_ids = layout->fn_ids;
	h->fn_tab_off = layout->fn_tab_off;
	/* The queues' cells stay zero, which is empty (rip_cell_seq): nothing to write. */
	rip_hdr_identity(h);
	__rip_clock_init(h);
	/* A slot's index is set when it is taken (__rip_slot_take): unused slots stay holes. */
	if (!__rip_proc.sparse)
		for (uint32_t i = 0; i < slots; i++)
			rip_slot_at(h, i)->index = i;
	/* All categories on until someone says otherwise. */
	memset(h->enable, 0xff, sizeof(h->enable));
}

int __rip_open_locked(const char *path, const char *dir, uint32_t slots, uint32_t flags,
		      const struct rip_ev_config *ev)
{
	struct rip_file_hdr layout;
	struct rip_file_hdr *h;
	char buf[PATH_MAX];
	size_t len;
	int fd, err;

	if (__rip_proc.hdr)
		return -EALREADY;
	if (!slots || slots > RIP_MAX_SLOTS)
		return -EINVAL;
	if (!path) {
		err = rip_file_path(buf, sizeof(buf), dir, getpid(), __rip_start_ticks(0));
		if (err)
			return err;
		path = buf;
	} else if (strlen(path) >= sizeof(__rip_proc.path)) {
		return -ENAMETOOLONG;
	}
	/* A <librip.h> file's slots are the program's ids: all backed at once. */
	__rip_proc.page = (size_t)sysconf(_SC_PAGESIZE);
	__rip_proc.sparse = !(flags & RIP_F_LEGACY_API) && rip_sparse_ok();
	len = rip_file_layout(&layout, slots, ev, __rip_proc.sparse ? rip_env_watch_copies() : 0,
			      __rip_proc.sparse && rip_env_samples());
	fd = rip_file_create(path, len, &layout, __rip_proc.sparse);
	if (fd == -EEXIST && path == buf) {
		/*
		 * The name is taken: by this process's image before an execve
		 * (ours: marked, and the next image's name is tried), or by a file
		 * in the way that is not ours (another user's, planted: names are
		 * predictable), which gets the same name with a random part.
		 */
		unsigned gen = 0;
		bool ours = rip_mark_execed(buf);

		if (ours && __rip_proc.no_exec_follow) {
			/*
			 * An image exec'd into, not followed (RIP_FOLLOW): no cost, and
			 * no consumer for a file the program opens itself, which rip
			 * run does not read.
			 */
			__rip_proc.exec_unfollowed = true;
			return -ESRCH;
		}
		while (fd == -EEXIST && ours && gen < 99) {
			err = rip_file_path_next(buf, sizeof(buf), ++gen, NULL);
			if (err)
				return err;
			fd = rip_file_create(path, len, &layout, __rip_proc.sparse);
			if (fd == -EEXIST)
				ours = rip_mark_execed(buf);
		}
		if (fd == -EEXIST)
			fd = rip_file_create_tagged(buf, sizeof(buf), gen, len, &layout,
						    __rip_proc.sparse);
	}
	if (fd < 0)
		return fd;
	h = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		err = -errno;
		goto err_unlink;
	}
	rip_hdr_init(h, &layout, len, slots, flags, ev);
	close(fd); /* the mapping is all we need */
	rip_fork_word_map();
	if (!__rip_proc.key_ok) {
		/* Lock-free in glibc (a compare-and-swap on the key's sequence). */
		if (pthread_key_create(&__rip_proc.key, rip_thread_exit) == 0)
			__rip_proc.key_ok = true;
		/* pthread_atfork takes a lock and allocates under it: not from a hook (early). */
		if (!__rip_proc.early)
			pthread_atfork(rip_atfork_prepare, rip_atfork_parent, rip_atfork_child);
		else
			__rip_proc.atfork_pending = true;
	}
	/* Types and category names before the magic: a reader finds them with the file. */
	__rip_events_open(h);
	__rip_fn_open(h);
	/* Magic last: a reader that sees it sees a complete header (pairs with its acquire). */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(h->magic, RIP_MAGIC, sizeof(h->magic));
	__rip_proc.map_len = len;
	__rip_proc.flags = flags;
	snprintf(__rip_proc.path, sizeof(__rip_proc.path), "%s", path);
	/* Pairs with the acquire loads of hdr in the attach and coroutine paths. */
	__atomic_store_n(&__rip_proc.hdr, h, __ATOMIC_RELEASE);
	__rip_events_start(h);
	return 0;

err_unlink:
	unlink(path);
	close(fd);
	return err;
}

static uint32_t rip_env_slots(void)
{
	const char *s = secure_getenv("RIP_SLOTS");
	char *end;
	unsigned long v;

	if (!s || !*s)
		return RIP_DEFAULT_SLOTS;
	v = strtoul(s, &end, 10);
	if (*end || !v || v > RIP_MAX_SLOTS)
		return 0; /* rejected by open with -EINVAL */
	return (uint32_t)v;
}

int rip_ring_open(const struct rip_ring_opts *opts)
{
	struct rip_ring_opts o = { .sz = sizeof(o) };
	struct rip_ev_config ev;
	int err;

	if (opts) {
		/* Fields past the caller's sz stay 0: an older caller gets the defaults. */
		if (opts->sz < offsetof(struct rip_ring_opts, flags))
			return -EINVAL;
		/*
		 * A newer caller's fields past ours: refused unless zero (what it
		 * asks for, this library cannot do), as libbpf's OPTS_VALID.
		 */
		for (size_t i = sizeof(o); i < opts->sz; i++)
			if (((const char *)opts)[i])
				return -E2BIG;
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
		o.sz = sizeof(o);
		if (o.flags)
			return -EINVAL;
	}
	if (!o.slots)
		o.slots = rip_env_slots();
	err = __rip_events_config(&o, &ev);
	if (err)
		return err;
	pthread_mutex_lock(&__rip_proc.lock);
	if (__rip_proc.hdr && __rip_proc.from_env && !__rip_proc.adopted) {
		/*
		 * The environment opened the ring before main (RIP_RING=1, rip
		 * run): the program's own open takes it, whatever its options, and
		 * runs traced as its user asked.  It failed with -EALREADY, and
		 * the examples, and every program that checks, stopped there.
		 */
		__rip_proc.adopted = true;
		pthread_mutex_unlock(&__rip_proc.lock);
		return 0;
	}
	err = __rip_open_locked(o.path, o.dir, o.slots, 0, &ev);
	pthread_mutex_unlock(&__rip_proc.lock);
	if (!err)
		__rip_modules_scan();
	return err;
}

int rip_ring_close(void)
{
	struct rip_file_hdr *h;

	pthread_mutex_lock(&__rip_proc.lock);
	h = __rip_proc.hdr;
	if (!h) {
		pthread_mutex_unlock(&__rip_proc.lock);
		return -ENOENT;
	}
	__atomic_store_n(&__rip_proc.hdr, NULL, __ATOMIC_RELEASE);
	__rip_events_close();
	__rip_fn_close();
	rip_clock_pair_add(h);
	h->exit_ts = rip_clock_ticks();
	/* After exit_ts: pairs with the acquire load of proc_flags in readers. */
	__atomic_fetch_or(&h->proc_flags, RIP_P_CLOSED, __ATOMIC_RELEASE);
	/*
	 * Threads may still hold pointers into the mapping and snap through
	 * them at any moment: keep it mapped (and leak it) rather than risk a
	 * fault in the program.
	 */
	__rip_proc.path[0] = 0;
	pthread_mutex_unlock(&__rip_proc.lock);
	return 0;
}

int rip_ring_path(char *buf, size_t len)
{
	int n, err = 0;

	if (!buf)
		return -EINVAL;
	pthread_mutex_lock(&__rip_proc.lock);
	if (!__rip_proc.hdr)
		err = -ENOENT;
	else if ((n = snprintf(buf, len, "%s", __rip_proc.path)) < 0 || (size_t)n >= len)
		err = -ERANGE;
	pthread_mutex_unlock(&__rip_proc.lock);
	return err;
}

/* ---- fork ------------------------------------------------------------ */

static int rip_write_all(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		off += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The exit time of slot v[i] (rip_fifo_rebuild's sort key). */
static uint64_t rip_exit_of(const struct rip_file_hdr *h, const uint32_t *v, uint32_t i)
{
	return rip_slot_at((struct rip_file_hdr *)h, v[i])->exit_ts;
}

/* Move v[i] down the heap v[0 .. n) (largest exit time on top). */
static void rip_sift(const struct rip_file_hdr *h, uint32_t *v, uint32_t i, uint32_t n)
{
	for (;;) {
		uint32_t c = 2 * i + 1, t;

		if (c >= n)
			return;
		if (c + 1 < n && rip_exit_of(h, v, c + 1) > rip_exit_of(h, v, c))
			c++;
		if (rip_exit_of(h, v, i) >= rip_exit_of(h, v, c))
			return;
		t = v[i];
		v[i] = v[c];
		v[c] = t;
		i = c;
	}
}

/* Sort slot indices by exit time, oldest first: a heap sort (qsort may allocate). */
static void rip_sort_by_exit(const struct rip_file_hdr *h, uint32_t *v, uint32_t n)
{
	for (uint32_t i = n / 2; i-- > 0;)
		rip_sift(h, v, i, n);
	for (uint32_t end = n; end > 1; end--) {
		uint32_t t = v[0];

		v[0] = v[end - 1];
		v[end - 1] = t;
		rip_sift(h, v, 0, end - 1);
	}
}

/*
 * The slots the free FIFO holds at a fork, which the child does not copy: a
 * fork child (the system calls only) reads the queue's cells, not the slots.
 */
struct rip_free_slots {
	uint8_t *map;	 /* a bit a slot of [0, used): in the queue; NULL: none known */
	uint32_t *order; /* those slots, in the queue's order (the oldest exit first) */
	uint32_t n;
	size_t bytes; /* of the mapping map and order lie in */
};

/*
 * Fill f from h's queue, for slots [0, used).  The parent goes on taking and
 * freeing slots while the child reads: a cell whose sequence number is not
 * that of a full cell at its place is passed over (its slot is then copied,
 * as one in use).  No memory, or a queue caught moving or corrupted: none
 * known, every slot is copied.
 */
static void rip_free_slots_get(struct rip_file_hdr *h, uint32_t used, struct rip_free_slots *f)
{
	const struct rip_fifo_cell *cells =
		(const struct rip_fifo_cell *)((const char *)h + h->fifo_off);
	uint64_t head = __atomic_load_n(&h->fifo_head, __ATOMIC_RELAXED);
	uint64_t tail = __atomic_load_n(&h->fifo_tail, __ATOMIC_RELAXED);
	size_t bits = (((size_t)used + 7) / 8 + 3) & ~(size_t)3;
	void *m;

	*f = (struct rip_free_slots){ 0 };
	if (!used || !h->slot_count || tail == head || tail - head > h->slot_count)
		return;
	f->bytes = bits + (size_t)used * sizeof(*f->order);
	m = (void *)syscall(SYS_mmap, NULL, f->bytes, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return;
	f->map = m;
	f->order = (uint32_t *)((char *)m + bits);
	for (uint64_t pos = head; pos != tail; pos++) {
		uint64_t i = pos % h->slot_count;
		/* Relaxed: the parent's pushes and pops are not waited for (see above). */
		uint64_t seq = __atomic_load_n(&cells[i].seq, __ATOMIC_RELAXED) + i;
		uint64_t slot = __atomic_load_n(&cells[i].slot, __ATOMIC_RELAXED);

		if (seq != pos + 1 || slot >= used || (f->map[slot / 8] & (1u << (slot % 8))))
			continue;
		f->map[slot / 8] |= (uint8_t)(1u << (slot % 8));
		f->order[f->n++] = (uint32_t)slot;
	}
}

static void rip_free_slots_put(struct rip_free_slots *f)
{
	if (f->map)
		syscall(SYS_munmap, f->map, f->bytes);
	*f = (struct rip_free_slots){ 0 };
}

/* Is slot i one of f's? */
static bool rip_slot_free_at_fork(const struct rip_free_slots *f, uint32_t i)
{
	return f->map && (f->map[i / 8] & (1u << (i % 8)));
}

/* Copy the header and the slots in use of from to to (one of them packed: rip_child_untraced). */
static void rip_slots_copy(char *to, const char *from, uint32_t used,
			   const struct rip_free_slots *f, bool pack_to)
{
	size_t at = RIP_SLOTS_OFFSET;

	memcpy(to, from, RIP_SLOTS_OFFSET);
	for (uint32_t i = 0; i < used; i++) {
		size_t place = RIP_SLOTS_OFFSET + (size_t)i * RIP_SLOT_SIZE;

		if (rip_slot_free_at_fork(f, i))
			continue;
		memcpy(to + (pack_to ? at : place), from + (pack_to ? place : at), RIP_SLOT_SIZE);
		at += RIP_SLOT_SIZE;
	}
}

/*
 * In the child: the free queue was copied while the parent's threads used
 * it, so its head, tail and cells may disagree.  Only this thread exists
 * here: empty it and give it back every slot free at the fork (f: the
 * parent's queue as it was, oldest exit first, left out of the copy) and
 * then every other exited slot, oldest exit first.  The buffer comes from
 * the system call itself (no hook sees it).
 */
static void rip_fifo_rebuild(struct rip_file_hdr *h, uint32_t used, const struct rip_free_slots *f)
{
	struct rip_fifo q = __rip_fifo_slots(h);
	size_t bytes = (size_t)(used ? used : 1) * sizeof(uint32_t);
	uint32_t *v, n = 0;

	__rip_fifo_reset(q);
	for (uint32_t i = 0; i < f->n; i++)
		__rip_fifo_push(q, f->order[i]);
	v = (uint32_t *)syscall(SYS_mmap, NULL, bytes, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (uint32_t i = 0; i < used; i++) {
		if (rip_slot_free_at_fork(f, i) || rip_slot_at(h, i)->state != RIP_SLOT_EXITED)
			continue;
		if (v == MAP_FAILED)
			__rip_fifo_push(q, i); /* no room to sort: index order */
		else
			v[n++] = i;
	}
	if (v == MAP_FAILED)
		return;
	rip_sort_by_exit(h, v, n);
	for (uint32_t i = 0; i < n; i++)
		__rip_fifo_push(q, v[i]);
	syscall(SYS_munmap, v, bytes);
}

/* Write the slots in use of [0, used) to fd, in runs (the others stay holes).  0 or -1. */
static int rip_slots_write(int fd, struct rip_file_hdr *h, uint32_t used,
			   const struct rip_free_slots *f)
{
	for (uint32_t i = 0; i < used; i++) {
		uint64_t off = RIP_SLOTS_OFFSET + (uint64_t)i * RIP_SLOT_SIZE;
		uint32_t j = i;

		while (j < used && !rip_slot_free_at_fork(f, j))
			j++;
		if (j > i &&
		    rip_write_all(fd, (char *)h + off, (size_t)(j - i) * RIP_SLOT_SIZE, (off_t)off))
			return -1;
		i = j; /* free at the fork, or the end */
	}
	return 0;
}

/*
 * A child without a file of its own: keep every address valid with a
 * private anonymous copy of the parent's mapping moved into its place, so
 * the child's writes never reach the parent's file, and stop tracing.
 */
static void rip_child_untraced(struct rip_file_hdr *h, size_t len)
{
	uint32_t used = __atomic_load_n(&h->fresh, __ATOMIC_RELAXED);
	struct rip_free_slots f;
	size_t head;
	void *copy;

	/*
	 * Only the header and the slots in use: the thread's and the
	 * coroutines' slots are all the child can still touch (the rest
	 * stays untouched zero pages, free).  Copying the whole file made
	 * every fork of a big ring file cost milliseconds, and copying every
	 * slot ever used, 416 ms a fork once 100,000 threads had come and
	 * gone (64 MiB of slots, copied twice into fresh pages): the slots
	 * the free FIFO holds are left out (rip_free_slots_get).  They go
	 * aside, packed, and a private mapping replaces the shared one in
	 * place: the child has no page tables for the shared one (fork
	 * copies none), so this costs what the slots in use cost, where
	 * moving a mapping of the file's size into place walked all of it.
	 */
	if (used > h->slot_count)
		used = h->slot_count;
	rip_free_slots_get(h, used, &f);
	head = RIP_SLOTS_OFFSET + (size_t)(used - f.n) * RIP_SLOT_SIZE;
	/* The system calls themselves: a fork child (no hook may see them). */
	copy = (void *)syscall(SYS_mmap, NULL, head, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (copy != MAP_FAILED) {
		rip_slots_copy(copy, (const char *)h, used, &f, true);
		if ((void *)syscall(SYS_mmap, h, len, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED)
			rip_slots_copy((char *)h, copy, used, &f, false);
		syscall(SYS_munmap, copy, head);
	}
	rip_free_slots_put(&f);
	__rip_proc.path[0] = 0;
	/* Nothing new is taken from the copy, and no events are written. */
	__rip_proc.hdr = NULL;
	__rip_events_close();
	__rip_fn_close();
}

/*
 * In the child, right after fork(): give it a file of its own at the same
 * address.  Only the forking thread exists here, so no lock is needed (the
 * parent's lock may even be held by a thread that does not exist here).
 */
/* The child's copy of the parent's event areas: queues, then the rings used so far. */
static int rip_copy_rings(int fd, struct rip_file_hdr *h, size_t len, const struct rip_self *me)
{
	uint32_t used = __atomic_load_n(&h->ev_fresh, __ATOMIC_RELAXED);
	uint32_t mods = h->mod_count < h->mod_cap ? h->mod_count : h->mod_cap;
	uint32_t types = h->types_count < h->types_cap ? h->types_count : h->types_cap;

	if (!__rip_proc.sparse)
		return rip_write_all(fd, (char *)h + h->fifo_off, len - h->fifo_off,
				     (off_t)h->fifo_off);
	if (used > h->ev_rings)
		used = h->ev_rings;
	/*
	 * Not the queues: the child starts them empty (__rip_fifo_reset), as
	 * holes.  Of the rings, the control lines of those used, and the
	 * packets of the forking thread's only: the others go back to the
	 * pool unused (__rip_events_fork_child), and writing every ring ever
	 * taken made a fork cost 711 ms once 20,000 threads that wrote events
	 * had come and gone (320 MiB of rings).
	 */
	if (rip_write_all(fd, (char *)h + h->mod_off, (size_t)mods * RIP_MODULE_SIZE,
			  (off_t)h->mod_off) ||
	    rip_write_all(fd, (char *)h + h->types_off, (size_t)types * RIP_EVTYPE_SIZE,
			  (off_t)h->types_off) ||
	    rip_write_all(fd, (char *)h + h->cats_off, h->ev_fifo_off - h->cats_off,
			  (off_t)h->cats_off) ||
	    rip_write_all(fd, (char *)h + h->ev_ctl_off, (size_t)used * RIP_EVRING_SIZE,
			  (off_t)h->ev_ctl_off))
		return -1;
	if (me->ev.ring && me->ev.ring <= used) {
		uint64_t off = rip_evring_data_off(h, me->ev.ring - 1);

		if (rip_write_all(fd, (char *)h + off, rip_evring_bytes(h, me->ev.ring - 1),
				  (off_t)off))
			return -1;
	}
	/* The shadow stacks of the slots in use, and the function table. */
	return __rip_fn_fork_copy(fd, h, __atomic_load_n(&h->fresh, __ATOMIC_RELAXED),
				  rip_write_all);
}

/* In the parent, right before fork(): what the child must see as it was then. */
static void rip_atfork_prepare(void)
{
	__rip_fn_fork_prepare(true);
	__rip_dl_fork_prepare();
}

/* And after it: nothing kept for a child of a raw clone, which no prepare handler precedes. */
static void rip_atfork_parent(void)
{
	__rip_dl_fork_parent();
	__rip_fn_fork_prepare(false);
}

static void rip_atfork_child(void)
{
	struct rip_file_hdr *h = __rip_proc.hdr;
	struct rip_self *me = &__rip_self;
	size_t len = __rip_proc.map_len;
	struct rip_free_slots f = { 0 };
	char path[PATH_MAX];
	bool ok;
	int fd;
	uint32_t used;

	/*
	 * Only async-signal-safe calls from here on: the child of a
	 * multithreaded program may make no other until it execs (no stdio, no
	 * allocation, no qsort; the system calls themselves for mmap).
	 */
	pthread_mutex_init(&__rip_proc.lock, NULL);
	__rip_events_fork_lock();
	__rip_dl_fork_child();
	me->tid = __rip_gettid();
	/* Relaxed: only this thread exists here; __rip_fork_check now finds this child set up. */
	if (rip_fork_word)
		__atomic_store_n(rip_fork_word, 1, __ATOMIC_RELAXED);
	if (!h)
		return;
	/* RIP_FOLLOW without fork (rip run without --follow-fork): children are not traced. */
	if (!rip_follows("fork"))
		goto err_private;
	if (__rip_proc.flags & RIP_F_LEGACY_API) {
		size_t at = 0;

		path[0] = 0;
		ok = rip_str_add(path, sizeof(path), &at, __rip_proc.path,
				 strlen(__rip_proc.path)) &&
		     rip_str_add(path, sizeof(path), &at, ".", 1) &&
		     rip_num_add(path, sizeof(path), &at, (uint64_t)getpid());
	} else {
		const char *slash = strrchr(__rip_proc.path, '/');
		size_t dlen = slash ? (size_t)(slash - __rip_proc.path) : 1;
		char dir[PATH_MAX];

		/* dlen < sizeof(dir): the path it is part of fits __rip_proc.path, no longer */
		memcpy(dir, slash ? __rip_proc.path : ".", dlen);
		dir[dlen] = 0;
		ok = !rip_file_path(path, sizeof(path), dir, getpid(), __rip_start_ticks(0));
	}
	if (!ok)
		goto err_private;
	fd = rip_file_create(path, len, h, __rip_proc.sparse);
	/* A name in the way (another user's: a child's pid is predictable): a random part. */
	if (fd == -EEXIST && !(__rip_proc.flags & RIP_F_LEGACY_API))
		fd = rip_file_create_tagged(path, sizeof(path), 0, len, h, __rip_proc.sparse);
	/*
	 * No permission (the process changed its user: rip run's directory is
	 * not its own), where no marker can be left either: told in the
	 * parent's header, still mapped shared here.  Relaxed: a count that
	 * rip run reads once the parent is done, ordered by nothing else.
	 */
	if (fd == -EACCES || fd == -EPERM) {
		__atomic_fetch_add(&h->forks_denied, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&h->forks_denied_err, -fd, __ATOMIC_RELAXED);
	}
	if (fd < 0)
		goto err_private;
	/*
	 * Copy what is in use: header, used slots, module map and the event
	 * rings' control lines (the rest of a sparse file stays holes).  Not
	 * the slots free at the fork (in the parent's queue): 78 ms a fork
	 * once 20,000 threads had come and gone, 10 MiB of slots of threads
	 * that are not the child's; they go back to the child's queue as holes
	 * (rip_fifo_rebuild), backed when taken (__rip_slot_take).  The
	 * copy's magic stays zero until the child has made it its own (below):
	 * a reader that finds the new file meanwhile sees a file still being
	 * created, not the parent's state under the child's name.
	 */
	used = __atomic_load_n(&h->fresh, __ATOMIC_RELAXED);
	if (used > h->slot_count)
		used = h->slot_count;
	rip_free_slots_get(h, used, &f);
	if (rip_write_all(fd, (char *)h + sizeof(h->magic), RIP_SLOTS_OFFSET - sizeof(h->magic),
			  (off_t)sizeof(h->magic)) ||
	    rip_slots_write(fd, h, used, &f) || rip_copy_rings(fd, h, len, me))
		goto err_unlink;
	if ((void *)syscall(SYS_mmap, h, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
			    0) == MAP_FAILED)
		goto err_unlink;
	close(fd);
	memcpy(__rip_proc.path, path, sizeof(path)); /* both PATH_MAX */
	h->flags |= RIP_F_FORKED;
	rip_hdr_identity(h);
	h->exit_ts = 0;
	h->proc_flags &= ~RIP_P_EXITED;
	/*
	 * Threads other than this one do not exist in the child: their slots
	 * exit.  (In a librip.h file slots are the program's ids, which the
	 * child still has: they stay.)
	 */
	h->live_threads = 0;
	for (uint32_t i = 0; i < used; i++) {
		struct rip_slot *s = rip_slot_at(h, i);

		if (rip_slot_free_at_fork(&f, i) || s->kind != RIP_KIND_THREAD ||
		    s->state == RIP_SLOT_EXITED || s->state == RIP_SLOT_FREE)
			continue;
		if ((s == me->thread && !(me->flags & RIP_SELF_DUMMY)) || s == me->cur ||
		    (__rip_proc.flags & RIP_F_LEGACY_API)) {
			if (s == me->thread || s == me->cur) {
				s->tid = me->tid;
				/*
				 * The parent's thread may have entered a wrapped wait
				 * (waitpid) between fork and this copy, and its watcher's
				 * record describes the parent's thread: this one is in
				 * fork, in no wait.
				 */
				memset(&s->wait, 0, sizeof(s->wait));
				memset(&s->watch, 0, sizeof(s->watch));
			}
			h->live_threads++;
			continue;
		}
		s->exit_ts = s->switch_ts = rip_clock_ticks();
		s->state = RIP_SLOT_EXITED;
	}
	rip_fifo_rebuild(h, used, &f);
	if (f.n && __rip_proc.sparse)
		__rip_proc.slot_holes = used;
	rip_free_slots_put(&f);
	__rip_events_fork_child(h, me);
	/* The thread's stack as it was at the fork; its trace starts with the calls open then. */
	__rip_fn_fork_child();
	/* Complete: readers may take it (pairs with their acquire of the magic). */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(h->magic, RIP_MAGIC, sizeof(h->magic));
	return;

err_unlink:
	unlink(path);
	close(fd);
	rip_free_slots_put(&f);
err_private:
	rip_child_untraced(h, len);
}

/* ---- start and exit --------------------------------------------------- */

/*
 * RIP_RING=1 (default place) or RIP_RING=PATH (a file, or a directory ending
 * in /).  RIP_FOLLOW and RIP_ROOT say which processes and images of a traced
 * program's family trace (rip_follows): the others open no file at all, so
 * that they cost nothing.  false: this process opens no file.
 */
static bool rip_auto_opts(struct rip_ring_opts *o)
{
	const char *v = secure_getenv("RIP_RING");
	struct stat st;

	if (!v || !*v || !strcmp(v, "0"))
		return false;
	/* A process of the family other than the root, forks not followed: not traced. */
	if (!__rip_followed())
		return false;
	__rip_proc.no_exec_follow = !rip_follows("exec");
	if (strcmp(v, "1") != 0) {
		size_t n = strlen(v);

		if (v[n - 1] == '/' || (stat(v, &st) == 0 && S_ISDIR(st.st_mode)))
			o->dir = v;
		else
			o->path = v;
	}
	return true;
}

/*
 * The preload library's first hook, called before its constructor (another
 * library's constructor allocates): register the preload library's event
 * types and open the file now, so that the call is recorded, without
 * waiting for a lock the caller may hold.  Our locks are only tried: -EBUSY
 * when this thread (librip's own work calls hooked functions) or another
 * holds one; the hook tries again at its next call.  What takes the locks
 * of others, pthread_atfork (which allocates under its lock) and the module
 * scan (dl_iterate_phdr), waits for rip_auto_open, our constructor, which
 * runs before the preload library's (its dependency).  0 with a file open
 * (now or before), -errno otherwise.
 */
int __rip_auto_open_early(const struct rip_event_type *const *types, size_t ntypes)
{
	RIP_OPTS(rip_ring_opts, o);
	struct rip_ev_config ev;
	int err = 0;

	if (pthread_mutex_trylock(&__rip_proc.lock))
		return -EBUSY;
	for (size_t i = 0; i < ntypes && !err; i++)
		err = __rip_type_register(types[i], true);
	if (err || __rip_proc.hdr)
		goto out_unlock;
	if (!rip_auto_opts(&o)) {
		err = -ENOENT;
		goto out_unlock;
	}
	if (!o.slots)
		o.slots = rip_env_slots();
	err = __rip_events_config(&o, &ev);
	if (!err) {
		__rip_proc.early = true;
		err = __rip_open_locked(o.path, o.dir, o.slots, 0, &ev);
		__rip_proc.early = false;
		if (!err)
			__rip_proc.scan_pending = __rip_proc.from_env = true;
	}
out_unlock:
	pthread_mutex_unlock(&__rip_proc.lock);
	return err;
}

/*
 * An image exec'd into that rip run does not follow opens no file, but with
 * LD_PRELOAD inherited it still loads librip and the preload library, and
 * for a short program (a shell loop, make's compilers) loading them is most
 * of what tracing its parent costs.  So when RIP_FOLLOW leaves exec out,
 * librip's own entries are cut from this process's LD_PRELOAD, in place (no
 * allocation, no lock: constructors run before the program's main and its
 * threads), and the programs it execs start as they would untraced.  Unset
 * RIP_FOLLOW (everything followed) keeps LD_PRELOAD as it is.  The tracing
 * modules rip run preloads after librip-preload.so (RIP_MODULES, their
 * paths, ':' between) go too: without it they only forward; and so does
 * librip-track.so from LD_AUDIT (rip run --track), whose trampolines would
 * only forward too.
 */
static bool rip_env_is_module(const char *r, size_t n, const char *mods)
{
	while (mods && *mods) {
		size_t m = strcspn(mods, ":");

		if (m == n && !strncmp(r, mods, n))
			return true;
		mods += m;
		mods += *mods == ':';
	}
	return false;
}

/* Is the entry [r, r + n) of a list of paths one of librip's (its base name starts with lib)? */
static bool rip_env_is_ours(const char *r, size_t n, const char *lib)
{
	const char *base = memrchr(r, '/', n);
	size_t bn, ln = strlen(lib);

	base = base ? base + 1 : r;
	bn = n - (size_t)(base - r);
	return bn >= ln && !strncmp(base, lib, ln);
}

/* Cut librip's entries from the list of paths v (LD_PRELOAD's, audit: LD_AUDIT's), in place. */
static void rip_env_cut(char *v, bool audit, const char *mods)
{
	char *w = v, *r = v;

	while (*r) {
		size_t n = strcspn(r, audit ? ":" : ": ");

		if (audit ? !rip_env_is_ours(r, n, "librip-track.so") :
			    !(rip_env_is_ours(r, n, "librip-preload.so") ||
			      rip_env_is_ours(r, n, "librip.so") ||
			      rip_env_is_module(r, n, mods))) {
			if (w != v)
				*w++ = ':';
			memmove(w, r, n); /* w <= r: the string only shrinks */
			w += n;
		}
		r += n;
		while (*r == ':' || (!audit && *r == ' '))
			r++;
	}
	*w = 0;
}

static void rip_env_unpreload(void)
{
	static const char pre[] = "LD_PRELOAD=", aud[] = "LD_AUDIT=";
	const char *f = secure_getenv("RIP_FOLLOW");
	const char *mods = secure_getenv("RIP_MODULES");
	char **e, **w;

	if (!f || !*f || rip_follows("exec") || !environ)
		return;
	for (e = w = environ; *e; e++) {
		if (!strncmp(*e, pre, sizeof(pre) - 1))
			rip_env_cut(*e + sizeof(pre) - 1, false, mods);
		else if (!strncmp(*e, aud, sizeof(aud) - 1))
			rip_env_cut(*e + sizeof(aud) - 1, true, mods);
		/*
		 * A variable left empty held ours alone: rip run set it, and the
		 * program (env, a test of its own environment) sees it unset, as
		 * untraced, not as "LD_PRELOAD=".
		 */
		if (!strcmp(*e, pre) || !strcmp(*e, aud))
			continue;
		*w++ = *e;
	}
	*w = NULL;
}

/*
 * Has another librip in this process opened the process's file already?  A
 * program linked with librip.a and run under librip-preload.so (rip run)
 * has two: librip.so, which the preload library brings and whose
 * constructor ran first, and this copy in the executable, whose state
 * (its slots, its thread-local self) is its own.  Opening a file of its
 * own under the same name, this copy took the file in the way for its
 * image before an execve, marked it so (rip ps said "replaced by
 * execve"), and recorded its own system calls as the program's.  So it
 * stays off, and says so in the other's file (RIP_P_SECOND_OFF): its
 * rip_snap() calls are not recorded, and rip ps tells why.  A constructor
 * may call dlsym (no hook runs this).
 */
static bool rip_other_opened(void)
{
	struct rip_file_hdr *(*other)(void) = (struct rip_file_hdr * (*)(void))
		dlsym(RTLD_DEFAULT, "__rip_file_hdr");
	struct rip_file_hdr *h;

	if (!other || other == __rip_file_hdr || !(h = other()) || h->pid != getpid())
		return false;
	/* Readers only test the bit. */
	__atomic_fetch_or(&h->proc_flags, RIP_P_SECOND_OFF, __ATOMIC_RELAXED);
	return true;
}

__attribute__((constructor)) static void rip_auto_open(void)
{
	RIP_OPTS(rip_ring_opts, o);

	rip_env_unpreload();

	if (__atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE)) {
		/* Opened early, from a hook: what it left to us. */
		pthread_mutex_lock(&__rip_proc.lock);
		if (__rip_proc.atfork_pending)
			pthread_atfork(rip_atfork_prepare, rip_atfork_parent, rip_atfork_child);
		__rip_proc.atfork_pending = false;
		pthread_mutex_unlock(&__rip_proc.lock);
		if (__rip_proc.scan_pending)
			__rip_modules_scan();
		__rip_proc.scan_pending = false;
		return;
	}
	if (rip_auto_opts(&o) && !rip_other_opened() && !rip_ring_open(&o)) {
		pthread_mutex_lock(&__rip_proc.lock);
		__rip_proc.from_env = true;
		pthread_mutex_unlock(&__rip_proc.lock);
	}
}

/* The process ends: the time, and the flag that tells an exit from a death. */
static void rip_exit_mark(struct rip_file_hdr *h)
{
	/* A calibration pair at the end: readers take the rate over the whole run. */
	rip_clock_pair_add(h);
	h->exit_ts = rip_clock_ticks();
	/* After exit_ts: pairs with the acquire load of proc_flags in readers. */
	__atomic_fetch_or(&h->proc_flags, RIP_P_EXITED, __ATOMIC_RELEASE);
}

__attribute__((destructor)) static void rip_at_exit(void)
{
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);

	if (!h)
		return;
	/*
	 * Libraries dlopen'ed since the last rescan (a program traced through
	 * librip-preload.so triggers none: its hooks may not call into the
	 * loader) are still loaded here: put them in the module map, or their
	 * frames resolve to no module.  _dl_fini holds no loader lock while
	 * destructors run.
	 */
	__rip_modules_maybe_rescan();
	rip_exit_mark(h);
}

void __rip_exit_mark(void)
{
	struct rip_file_hdr *h;

	h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	/* A vfork or CLONE_VM child sees its parent's file: not its own to mark. */
	if (h && h->pid == (int32_t)syscall(SYS_getpid))
		rip_exit_mark(h);
}

/* ---- for the preload library's watcher thread (preload/watch.c) ------- */

struct rip_file_hdr *__rip_file_hdr(void)
{
	/* Acquire: pairs with the release store of hdr when the file is opened. */
	return __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
}

int __rip_file_commit(uint64_t off, size_t len)
{
	struct rip_file_hdr *h = __rip_file_hdr();

	if (!h || off > __rip_proc.map_len || len > __rip_proc.map_len - off)
		return -EINVAL;
	return __rip_commit(h, off, len);
}
