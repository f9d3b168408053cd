// SPDX-License-Identifier: Apache-2.0
/*
 * preload/thread.c - each thread's stack bounds, for the frame-pointer walk
 * of backtrace.c, found without calling anything that may take a lock the
 * thread already holds, and kept under the holes the thread makes in its
 * own stack (mprotect, pkey_mprotect: below, "holes").
 *
 * The bounds used to come from pthread_getattr_np on the thread's first
 * traced call.  But glibc's pthread_getattr_np holds the thread's own lock
 * while it allocates (and, for the main thread, while it reads
 * /proc/self/maps through stdio): when that allocation was the thread's
 * first traced call, the hook called pthread_getattr_np again and waited on
 * the lock forever.  Every Rust program and the JVM do exactly that.
 *
 * So the bounds come from two places, neither of which can block:
 *  - pthread_create is wrapped: the new thread runs rip_pl_thread_start
 *    first, which asks pthread_getattr_np before any of the program's code
 *    runs on it (it holds no lock then), then calls the real start routine;
 *  - any other thread (the main thread, threads started before tracing or
 *    by a raw clone) finds, on its first traced call, the mapping that holds
 *    its stack in /proc/self/maps, read with raw system calls into a buffer
 *    on its stack: no allocation, no stdio, no lock.  This costs a read of
 *    the maps file once per such thread; the wrapper keeps it off the
 *    thousands of threads a big program creates.
 * When neither works, the walk is given no bounds and libunwind does every
 * backtrace of that thread.
 *
 * The same start gives every thread a slot in the ring file from its first
 * instruction (so that `rip ps` shows the threads of a program that never
 * calls rip_snap),
 * and its first snap is the address of its start routine, which readers
 * symbolize (no symbol lookup here: that takes the loader's lock).  The
 * slot goes back at exit through librip's key destructor, which
 * cancellation runs too.  pthread_setname_np renames the slot.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "watch.h"

/* ---- bounds from /proc/self/maps ---- */

/* Parse a hex number at *p; advances *p.  False if there are no digits. */
static bool rip_pl_hex(const char **p, const char *end, uintptr_t *out)
{
	uintptr_t v = 0;
	const char *s = *p;

	for (; s < end; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else
			break;
		v = v << 4 | d;
	}
	if (s == *p)
		return false;
	*p = s;
	*out = v;
	return true;
}

/* Skip one space-separated field and the spaces after it. */
static const char *rip_pl_maps_field(const char *s, const char *end)
{
	while (s < end && *s != ' ')
		s++;
	while (s < end && *s == ' ')
		s++;
	return s;
}

/* One line of the maps file, [s, end) without its newline. */
static void rip_pl_maps_line(const char *s, const char *end, uintptr_t addr,
			     struct rip_pl_maps_hit *h)
{
	static const char tag[] = "[stack]";
	const size_t taglen = sizeof(tag) - 1;
	uintptr_t lo, hi;

	if (h->found || !rip_pl_hex(&s, end, &lo) || s >= end || *s++ != '-' ||
	    !rip_pl_hex(&s, end, &hi))
		return;
	if (hi <= addr) {
		if (hi > h->below)
			h->below = hi;
		return;
	}
	if (lo > addr)
		return;
	h->lo = lo;
	h->hi = hi;
	h->found = true;
	h->stack = (size_t)(end - s) >= taglen && !__builtin_memcmp(end - taglen, tag, taglen);
	/* " perms offset dev inode path": "rw-p 00000000 00:00 0" is anonymous and private */
	while (s < end && *s == ' ')
		s++;
	if (end - s > 4 && s[3] == 'p') {
		h->none = s[0] == '-' && s[1] == '-' && s[2] == '-';
		s = rip_pl_maps_field(rip_pl_maps_field(rip_pl_maps_field(s, end), end), end);
		h->anon = s < end && *s == '0' && (s + 1 == end || s[1] == ' ');
	}
}

/* The watcher's read of the maps file for rip_pl_maps_find (watch.h), and the fallback. */
int rip_pl_maps_read(uintptr_t addr, struct rip_pl_maps_hit *h)
{
	char buf[2048];
	size_t have = 0;
	bool skip = false; /* inside a line longer than buf: its range is parsed */
	int err = errno, ret = 0;
	long fd;

	fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	while (!h->found) {
		long n = syscall(SYS_read, (int)fd, buf + have, sizeof(buf) - have);
		char *s = buf, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (n == 0) {
			if (have && !skip)
				rip_pl_maps_line(buf, buf + have, addr, h);
			break;
		}
		have += (size_t)n;
		while ((nl = __builtin_memchr(s, '\n', have - (size_t)(s - buf)))) {
			if (!skip)
				rip_pl_maps_line(s, nl, addr, h);
			skip = false;
			s = nl + 1;
		}
		have -= (size_t)(s - buf);
		if (have == sizeof(buf)) {
			/* one line fills the buffer (a very long path): its range is at its start */
			if (!skip)
				rip_pl_maps_line(buf, buf + have, addr, h);
			skip = true;
			have = 0;
		} else {
			__builtin_memmove(buf, s, have);
		}
	}
	syscall(SYS_close, (int)fd);
	if (!ret && !h->found)
		ret = -ENOENT;
out:
	errno = err;
	return ret;
}

/*
 * Find the mapping of /proc/self/maps that holds addr (the file is sorted by
 * address: reading stops there).  0 or -errno; errno unchanged.  The
 * watcher reads it when it runs, in its own descriptor table: read here,
 * the file's descriptor would take the lowest free number of the program's
 * table for a moment, where another thread's open, dup or close_range
 * expects its own (tests/integ/trust-mapsfd).  Without a watcher (a
 * single-threaded program, RIP_WATCH=0) the read is here.
 */
static int rip_pl_maps_find(uintptr_t addr, struct rip_pl_maps_hit *h)
{
	int ret = rip_pl_watch_maps(addr, h);

	return ret == -EAGAIN ? rip_pl_maps_read(addr, h) : ret;
}

/*
 * Is addr in anonymous private memory?  1 yes, 2 yes but PROT_NONE
 * (reserved), 0 no (a file, shared memory, nothing mapped), -errno if the
 * maps file cannot be read.  Raw system calls and a buffer on the stack: no
 * lock, no allocation.
 */
int rip_pl_maps_anon_private(uintptr_t addr)
{
	struct rip_pl_maps_hit h = { 0 };
	int ret = rip_pl_maps_find(addr, &h);

	if (ret == -ENOENT)
		return 0;
	return ret ? ret : h.anon ? 1 + h.none : 0;
}

/* The bounds of a thread nobody told us about, from the maps file. */
static void rip_pl_stack_from_maps(struct rip_pl_thread *t)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	struct rip_pl_maps_hit h = { 0 };

	if (rip_pl_maps_find(here, &h))
		return;
	t->stack_lo = h.lo;
	t->stack_hi = h.hi;
	if (h.stack) {
		/* The main stack grows down to its limit, or to the mapping under it. */
		struct rlimit rl;
		uintptr_t lo = h.below;

		if (syscall(SYS_prlimit64, 0, RLIMIT_STACK, NULL, &rl) == 0 &&
		    rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < h.hi && h.hi - rl.rlim_cur > lo)
			lo = h.hi - rl.rlim_cur;
		if (lo < h.lo)
			t->stack_lo = lo;
	}
	t->stack_ok = 1;
}

/* ---- bounds from pthread_getattr_np, at the start of a thread ---- */

/* In a thread that holds no lock yet: its bounds as pthread knows them.  Guard up. */
static void rip_pl_stack_from_attr(struct rip_pl_thread *t)
{
	pthread_attr_t a;
	void *lo = NULL;
	size_t sz = 0;
	sigset_t all, held;
	int err;

	/*
	 * pthread_getattr_np allocates (the affinity mask): from a scratch slot,
	 * not from the real allocator, which would give a thread that never
	 * allocates an arena (common.h).  Signals wait meanwhile: a handler's
	 * malloc must not get a block of the slot, which the next thread reuses.
	 * No slot free: bounds from the maps file at its first traced call
	 * (rip_pl_thread_init).
	 */
	sigfillset(&all);
	if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &held, sizeof(long)))
		return;
	if (rip_pl_scratch_begin(t)) {
		err = pthread_getattr_np(pthread_self(), &a);
		if (!err && pthread_attr_getstack(&a, &lo, &sz) == 0 && lo && sz) {
			t->stack_lo = (uintptr_t)lo;
			t->stack_hi = (uintptr_t)lo + sz;
			t->stack_ok = 1;
		}
		if (!err)
			pthread_attr_destroy(&a);
		rip_pl_scratch_end(t);
	}
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &held, NULL, sizeof(long));
}

/*
 * The thread's first traced call (guard up): bounds from the maps file
 * unless the thread's start already set them.  Never blocks.
 */
bool rip_pl_thread_init(void)
{
	struct rip_pl_thread *t = &rip_pl_self;

	if (t->stack_ok)
		return true;
	t->stack_ok = 2;
	rip_pl_stack_from_maps(t);
	if (t->stack_ok != 1) {
		/* Unknown: an empty range, so that libunwind does every backtrace. */
		t->stack_lo = t->stack_hi = (uintptr_t)__builtin_frame_address(0);
	}
	return true;
}

/* ---- holes: parts of the stack a thread made unreadable ---- */

/*
 * Every walk of a thread's stack (backtrace.c's, unwind.c's, the sampler's,
 * the search for a signal frame) reads it directly between sp and
 * stack_hi, which is mapped and readable as long as the program leaves it
 * so.  A program that makes a page of its own stack unreadable above its
 * frames (mprotect, munmap, mmap MAP_FIXED: a test's PROT_NONE page, a
 * guard of its own) would be killed with SIGSEGV by a walk that went
 * there: a frame pointer that is any register in code built without them,
 * the search for a signal frame, which reads every word up to the top.
 * So the calls that can do it lower stack_hi under the range first, for
 * as long as it stays unreadable; the frames above it are not walked (the
 * tables' walk declines there, and libunwind, which follows only the
 * frames the tables describe, takes the stack).  The calling thread's own
 * stack only: a thread that changes another's is not seen.  madvise's
 * guards (MADV_GUARD_INSTALL, Linux 6.13) are not seen either.
 */

/* stack_hi: the lowest hole's start, or the top. */
static void rip_pl_stack_hi_set(struct rip_pl_thread *t)
{
	uintptr_t hi = t->stack_top;

	for (uint32_t i = 0; i < t->nholes; i++)
		if (t->hole[i][0] < hi)
			hi = t->hole[i][0];
	/*
	 * Lowered before the call that makes the hole, raised after the one
	 * that removes it: the walks of this thread's signal handlers, which
	 * read it, see a whole word (same thread: a signal fence).
	 */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&t->stack_hi, hi, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/*
 * The count of holes, as a signal handler of this thread reads it: every
 * entry below the new count is whole first, and the entries a smaller
 * count drops are already readable (rip_pl_stack_hole_end).
 */
static void rip_pl_holes_set(struct rip_pl_thread *t, uint32_t n)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&t->nholes, n, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

uintptr_t rip_pl_stack_hole_end(uintptr_t a)
{
	const struct rip_pl_thread *t = &rip_pl_self;
	const uintptr_t page = (uintptr_t)getpagesize();
	/* Relaxed: this thread's own count; the fences of rip_pl_holes_set order the entries. */
	uint32_t n = __atomic_load_n(&t->nholes, __ATOMIC_RELAXED);

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (uint32_t i = 0; i < n && i < RIP_PL_HOLES; i++) {
		uintptr_t h0 = t->hole[i][0] & ~(page - 1), h1 = t->hole[i][1];

		/* whole pages, as the kernel changes them */
		h1 = h1 > UINTPTR_MAX - page ? UINTPTR_MAX : (h1 + page - 1) & ~(page - 1);
		if (a >= h0 && a < h1)
			return h1;
	}
	return 0;
}

void rip_pl_stack_prot(uintptr_t a, size_t len, int prot, bool done)
{
	struct rip_pl_thread *t = &rip_pl_self;
	uintptr_t end = a + len < a ? UINTPTR_MAX : a + len, top;
	uint32_t n;

	/* An address inside a page: the call fails (EINVAL) and changes nothing. */
	if (t->stack_ok != 1 || !len || (a & ((uintptr_t)getpagesize() - 1)))
		return;
	top = t->nholes ? t->stack_top : t->stack_hi;
	if (end <= t->stack_lo || a >= top)
		return;
	if (!done && (!(prot & PROT_READ) || (prot & RIP_PL_PROT_KEYED))) {
		/* Under sp: the program's frames would go through it first. */
		if (end <= rip_pl_sp())
			return;
		if (!t->nholes)
			t->stack_top = t->stack_hi;
		if (t->holes_lost || t->nholes == RIP_PL_HOLES) {
			t->holes_lost = 1; /* lowered, and left there */
			/* the flag first: a handler's search for a signal frame stops under it */
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			if (a < t->stack_hi)
				__atomic_store_n(&t->stack_hi, a, __ATOMIC_RELAXED);
			return;
		}
		t->hole[t->nholes][0] = a;
		t->hole[t->nholes][1] = end;
		rip_pl_holes_set(t, t->nholes + 1);
		rip_pl_stack_hi_set(t);
		/* a keyed range: known as a hole, and the top never raised again */
		if (prot & RIP_PL_PROT_KEYED)
			t->holes_lost = 1;
		return;
	}
	if (!done || !(prot & PROT_READ) || (prot & RIP_PL_PROT_KEYED) || !t->nholes ||
	    t->holes_lost)
		return;
	/*
	 * Readable again: what is left of each hole, the parts outside [a,
	 * end).  Each step leaves every part still unreadable in an entry
	 * below the count (a handler may read them meanwhile).
	 */
	for (uint32_t i = 0; i < t->nholes;) {
		uintptr_t h0 = t->hole[i][0], h1 = t->hole[i][1];

		n = t->nholes;
		if (h1 <= a || h0 >= end) {
			i++;
			continue;
		}
		if (h0 < a && h1 > end) {
			if (n == RIP_PL_HOLES) {
				t->holes_lost = 1; /* stack_hi stays under the lower part */
				return;
			}
			t->hole[n][0] = end;
			t->hole[n][1] = h1;
			rip_pl_holes_set(t, n + 1); /* the upper part kept before it is cut off */
			t->hole[i++][1] = a;
		} else if (h0 < a) {
			t->hole[i++][1] = a;
		} else if (h1 > end) {
			t->hole[i++][0] = end;
		} else {
			t->hole[i][0] = t->hole[n - 1][0];
			t->hole[i][1] = t->hole[n - 1][1];
			rip_pl_holes_set(t, n - 1);
		}
	}
	rip_pl_stack_hi_set(t);
}

RIP_PL_EXPORT int mprotect(void *addr, size_t len, int prot)
{
	static int (*real)(void *, size_t, int);
	int ret;

	if (!RIP_PL_REAL(real, "mprotect"))
		return rip_pl_enosys();
	rip_pl_stack_prot((uintptr_t)addr, len, prot, false);
	ret = real(addr, len, prot);
	if (!ret) {
		rip_pl_stack_prot((uintptr_t)addr, len, prot, true);
		rip_pl_mprotect_record(__builtin_return_address(0), addr, len, prot);
	}
	return ret;
}

RIP_PL_EXPORT int pkey_mprotect(void *addr, size_t len, int prot, int pkey)
{
	static int (*real)(void *, size_t, int, int);
	int ret;

	if (!RIP_PL_REAL(real, "pkey_mprotect"))
		return rip_pl_enosys();
	rip_pl_stack_prot((uintptr_t)addr, len, rip_pl_pkey_prot(prot, pkey), false);
	ret = real(addr, len, prot, pkey);
	if (!ret) {
		rip_pl_stack_prot((uintptr_t)addr, len, rip_pl_pkey_prot(prot, pkey), true);
		rip_pl_mprotect_record(__builtin_return_address(0), addr, len, prot);
	}
	return ret;
}

/* ---- slots ---- */

int rip_pl_waits;

/*
 * A slot for the calling thread (now: at its start, or the main thread in
 * the constructor) and, when start is given, a first snap at it.  Guard up
 * or not, errno kept; never blocks (librip takes slots without locks).
 */
void rip_pl_thread_born(uintptr_t start)
{
	int err = errno;

	/* Relaxed: set once by the constructor; a thread born before it gets its slot later. */
	if (__atomic_load_n(&rip_pl_waits, __ATOMIC_RELAXED) && rip_thread_attach() == 0 && start &&
	    __rip_self.thread)
		__rip_snap_store(__rip_self.thread, start);
	errno = err;
}

/*
 * Another thread's tid, without a lock or a system call: glibc and musl
 * both make the CPU-time clock id of a thread from its tid (the kernel's
 * encoding: ~tid << 3 | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED).  0 if unknown.
 */
static int32_t rip_pl_tid_of(pthread_t th)
{
	clockid_t c;

	if (pthread_getcpuclockid(th, &c) || (c & 7) != 6)
		return 0;
	return (int32_t)~(c >> 3);
}

RIP_PL_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
	static int (*real)(pthread_t, const char *);
	int ret, err;

	if (!RIP_PL_REAL(real, "pthread_setname_np"))
		return ENOSYS;
	ret = real(th, name);
	err = errno;
	if (!ret && pthread_equal(th, pthread_self()))
		rip_pl_renamed(0);
	else if (!ret && rip_pl_tid_of(th) > 0) /* (0: unknown, not this thread) */
		rip_pl_renamed(rip_pl_tid_of(th));
	if (!ret && __atomic_load_n(&rip_pl_waits, __ATOMIC_RELAXED)) {
		if (pthread_equal(th, pthread_self()))
			__rip_thread_name(0, name);
		else if (rip_pl_tid_of(th) > 0)
			__rip_thread_name(rip_pl_tid_of(th), name);
	}
	errno = err;
	return ret;
}

/* ---- pthread_create ---- */

struct rip_pl_start {
	void *(*fn)(void *);
	void *arg;
};

/*
 * The records a new thread starts from: a small pool, not malloc, so that
 * the thread frees nothing before its start routine runs.  A thread's
 * first free() gives it an arena of the allocator's (glibc's tcache takes
 * one, up to 8 per CPU, each a 64 MB reservation; jemalloc's starts a
 * background thread for it): a thread that never allocates had one
 * under rip run only.  malloc when the pool is empty (64 threads between
 * pthread_create and their first instruction).
 */
#define RIP_PL_START_RECS 64u
static struct rip_pl_start rip_pl_start_recs[RIP_PL_START_RECS];
static uint64_t rip_pl_start_busy; /* bit i: record i is in use */

static struct rip_pl_start *rip_pl_start_get(void)
{
	int i = rip_pl_bit_take(&rip_pl_start_busy);

	return i < 0 ? NULL : &rip_pl_start_recs[i];
}

/* Give r back: to the pool, or to malloc (the guard up: the block is ours). */
static void rip_pl_start_put(struct rip_pl_thread *t, struct rip_pl_start *r)
{
	uintptr_t guard = t->guard;

	if (r >= rip_pl_start_recs && r < rip_pl_start_recs + RIP_PL_START_RECS) {
		/* The reads of the record before another thread reuses it. */
		rip_pl_bit_give(&rip_pl_start_busy, (unsigned)(r - rip_pl_start_recs));
		return;
	}
	t->guard = rip_pl_guard_up();
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* pairs with rip_pl_enter's check */
	free(r);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->guard = guard;
}

/*
 * The new thread's first code: bounds, then the program's start routine
 * (a tail call where the compiler makes one, so no frame of ours stays).
 */
static void *rip_pl_thread_start(void *p)
{
	struct rip_pl_thread *t = &rip_pl_self;
	struct rip_pl_start s = *(struct rip_pl_start *)p;

	rip_pl_start_put(t, p);
	t->guard = rip_pl_guard_up();
	/* Guard up before the calls: pairs with rip_pl_enter's check in a signal handler. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* Bounds for the backtraces of resource tracing (off: slots and waits only). */
	if (!t->stack_ok && !__atomic_load_n(&rip_pl_off, __ATOMIC_RELAXED))
		rip_pl_stack_from_attr(t);
	rip_pl_thread_born((uintptr_t)s.fn);
	rip_pl_sample_thread_start();
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->guard = 0;
	return s.fn(s.arg);
}

RIP_PL_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
				 void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	struct rip_pl_thread *t = &rip_pl_self;
	struct rip_pl_start *s;
	uintptr_t guard = t->guard;
	int err;

	if (!RIP_PL_REAL(real, "pthread_create"))
		return ENOSYS;
	/* A child of a raw clone: its own file first, then its threads. */
	if (RIP_UNLIKELY(!*rip_pl_alive))
		rip_pl_child_setup();
	rip_pl_watch_start(); /* the program becomes multithreaded: the watcher may start */
	/* Relaxed both: set once by the constructor (waits on even when resources are off). */
	if (__atomic_load_n(&rip_pl_off, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&rip_pl_waits, __ATOMIC_RELAXED)) {
		err = real(th, attr, fn, arg);
		return err == EAGAIN && rip_pl_watch_yield() ? real(th, attr, fn, arg) : err;
	}
	s = rip_pl_start_get();
	if (!s) {
		/* Ours, not the program's: the guard keeps the block out of the trace. */
		t->guard = rip_pl_guard_up();
		__atomic_signal_fence(__ATOMIC_SEQ_CST); /* pairs with rip_pl_enter's check */
		s = malloc(sizeof(*s));
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->guard = guard;
	}
	if (!s) {
		/* The thread finds its bounds itself. */
		err = real(th, attr, fn, arg);
		return err == EAGAIN && rip_pl_watch_yield() ? real(th, attr, fn, arg) : err;
	}
	s->fn = fn;
	s->arg = arg;
	err = real(th, attr, rip_pl_thread_start, s);
	/* The user's limit of threads reached: the watcher's gives way (rip_pl_watch_yield). */
	if (err == EAGAIN && rip_pl_watch_yield())
		err = real(th, attr, rip_pl_thread_start, s);
	if (err)
		rip_pl_start_put(t, s);
	return err;
}
