// SPDX-License-Identifier: Apache-2.0
/*
 * preload/backtrace.c - the stack of a hooked call, as an interned id.
 *
 * Capture (RIP_UNWIND): by default on x86-64, unwind.c's walk of the
 * unwind tables (.eh_frame), which gives exactly the frames libunwind's
 * unw_backtrace would, much faster; where it declines (an expression, no
 * unwind information), libunwind does the whole stack (not from a signal
 * handler in a thread that never called it: see rip_pl_unwind).
 * RIP_UNWIND=fp, and the default elsewhere: a frame-pointer walk from the
 * hook's frame, every step checked (the frame inside the thread's stack,
 * frames strictly increasing, the return address inside an executable
 * segment of a loaded object), and libunwind when that walk is not to be
 * trusted (fewer than two frames, or the chain broke before it left the
 * stack).  RIP_UNWIND=libunwind: libunwind for every stack; =tables: the
 * tables' walk alone (no stack where it declines), for tests.
 *
 * Stacks seen before: a cache of the loads each walk depended on, read
 * again at the next call from the same state, gives the id of a repeated
 * stack without a whole walk, hash or lookup (below, "the stack cache").
 *
 * Interning: the frames hash to 64 bits; an open-addressing table of
 * 64-bit entries (44 bits of the hash over a 20-bit id) in an anonymous
 * mapping takes new stacks by CAS on an empty entry, so no thread ever
 * waits for another and a signal handler can look up or insert too.  Ids
 * come from an atomic counter; the thread whose CAS wins emits the rip:bt
 * event, before the event that uses the id.  A full table gives id 0.
 *
 * The executable ranges of the objects loaded at start come from
 * dl_iterate_phdr, once, in the constructor, into a sorted array; objects
 * loaded later are checked with _dl_find_object, which takes no lock.  No
 * hook calls dl_iterate_phdr (libunwind does: see rip_pl_unwind).
 */
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <dlfcn.h>

#include "common.h"
#include "unwind.h"

uint32_t rip_pl_depth = 32;

/* ---- executable ranges ---- */

struct rip_pl_xr {
	uintptr_t lo, hi;
};

struct rip_pl_xmap {
	size_t map_len;
	uint32_t n;
	struct rip_pl_xr r[];
};

/* The map of the objects loaded at start; built once by the constructor. */
static struct rip_pl_xmap *rip_pl_xmap;

struct rip_pl_xfill {
	struct rip_pl_xmap *m;
	uint32_t cap;
};

static int rip_pl_xr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct rip_pl_xfill *f = data;

	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (f->m && f->m->n < f->cap) {
			f->m->r[f->m->n].lo = info->dlpi_addr + ph->p_vaddr;
			f->m->r[f->m->n].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			f->m->n++;
		} else if (!f->m) {
			f->cap++;
		}
	}
	return 0;
}

/* Build the map and publish it (once, from the constructor).  0 or -errno. */
static int rip_pl_xmap_build(void)
{
	struct rip_pl_xfill f = { 0 };
	struct rip_pl_xmap *m;
	size_t len;

	dl_iterate_phdr(rip_pl_xr_cb, &f); /* count */
	f.cap += 16;			    /* objects loaded in between */
	len = sizeof(*m) + (size_t)f.cap * sizeof(m->r[0]);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -ENOMEM;
	m->map_len = len;
	f.m = m;
	dl_iterate_phdr(rip_pl_xr_cb, &f); /* fill */
	/* Sort by start (insertion: tens of entries, nearly sorted already). */
	for (uint32_t i = 1; i < m->n; i++) {
		struct rip_pl_xr x = m->r[i];
		uint32_t j = i;

		for (; j && m->r[j - 1].lo > x.lo; j--)
			m->r[j] = m->r[j - 1];
		m->r[j] = x;
	}
	/* Publish the filled map: pairs with the acquire load in rip_pl_exec. */
	__atomic_store_n(&rip_pl_xmap, m, __ATOMIC_RELEASE);
	return 0;
}

static bool rip_pl_xmap_find(const struct rip_pl_xmap *m, uintptr_t a)
{
	uint32_t lo = 0, hi = m->n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (a < m->r[mid].lo)
			hi = mid;
		else if (a >= m->r[mid].hi)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/*
 * Is a a return address into code?  Inside an executable segment of an
 * object loaded at start, or else inside an object loaded since, as
 * _dl_find_object tells without a lock (dl_iterate_phdr would take the
 * loader's, which a hook must never wait for).  For objects loaded later
 * the check is the object's whole mapping, not only its code: weaker, never
 * wrong about an address that is in no object.
 */
static bool rip_pl_exec(uintptr_t a)
{
	/* Pairs with the release store in rip_pl_xmap_build: the entries before the pointer. */
	struct rip_pl_xmap *m = __atomic_load_n(&rip_pl_xmap, __ATOMIC_ACQUIRE);
	struct dl_find_object dlfo;

	if (RIP_LIKELY(m && rip_pl_xmap_find(m, a)))
		return true;
	return _dl_find_object((void *)a, &dlfo) == 0 && (uintptr_t)dlfo.dlfo_map_start <= a &&
	       a < (uintptr_t)dlfo.dlfo_map_end;
}

/* ---- capture ---- */

/*
 * Walk the frame pointers from fp (the hook's frame).  Returns the number
 * of frames; *ok false when the chain broke inside the stack (a frame
 * without a frame pointer on the way, most likely).  Only the stack bounds
 * and the order of frames are checked here; whether each return address
 * is in executable code is checked once per distinct stack, when it is new
 * (rip_pl_frames_exec), not on every call.
 */
static uint32_t rip_pl_fp_walk(uintptr_t fp, uint64_t *out, uint32_t max, bool *ok)
{
	struct rip_pl_thread *t = &rip_pl_self;
	uintptr_t lo = (uintptr_t)__builtin_frame_address(0), hi = t->stack_hi;
	const uintptr_t pexit = rip_pl_pexit;
	uint32_t n = 0;

	*ok = true;
	if (t->stack_lo > lo)
		lo = t->stack_lo;
	while (n < max) {
		const uintptr_t *f = (const uintptr_t *)fp;
		uintptr_t next, ret;

		if (fp < lo || fp > hi - 2 * sizeof(uintptr_t) || (fp & (sizeof(uintptr_t) - 1))) {
			*ok = n > 0; /* the first frame must be ours to read */
			break;
		}
		next = f[0];
		ret = f[1];
		/* a patched function's: the real one, at its cfa (unwind.h); none known: the end */
		if (RIP_UNLIKELY(ret == pexit) && !(ret = __rip_fn_ret_at(fp + 16)))
			break;
		out[n++] = ret;
		if (next == 0 || next < lo || next >= hi) {
			/*
			 * The end of the chain: the outermost frame.  Not above a
			 * hole the thread made in its stack (thread.c): libunwind
			 * takes the frames there, as where the tables' walk declines.
			 */
			if (next >= hi && t->nholes && next < t->stack_top)
				*ok = false;
			break;
		}
		if (next <= fp) {
			*ok = false;
			break;
		}
		fp = next;
	}
	return n;
}

/*
 * libunwind, loaded RTLD_LOCAL at start: linked normally, its libgcc-
 * compatible _Unwind_* symbols would sit in the program's global scope
 * ahead of libgcc_s and take over C++ exceptions.  NULL: not installed,
 * frame pointers only.
 */
static int (*rip_pl_unw_backtrace)(void **buf, int size);

/* libunwind's code, [lo, hi): its calls are the tracer's, never the program's. */
static uintptr_t rip_pl_unw_lo, rip_pl_unw_hi;

static int rip_pl_unw_range_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t fn = (uintptr_t)data;

	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && fn >= lo &&
		    fn < lo + ph->p_memsz) {
			rip_pl_unw_lo = lo;
			rip_pl_unw_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

static void rip_pl_unwind_load(void)
{
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);

	if (h)
		rip_pl_unw_backtrace = (int (*)(void **, int))dlsym(h, "unw_backtrace");
	if (rip_pl_unw_backtrace) /* from the constructor: no hook is running yet */
		dl_iterate_phdr(rip_pl_unw_range_cb, (void *)(uintptr_t)rip_pl_unw_backtrace);
}

bool rip_pl_from_unwinder(const void *ret)
{
	return (uintptr_t)ret >= rip_pl_unw_lo && (uintptr_t)ret < rip_pl_unw_hi;
}

/*
 * Is there a signal frame between sp and the top of the thread's stack (a
 * word that is the address of the signal trampoline)?  False when the
 * stack's bounds are not known.  sp is the hook's caller's: our own frames
 * below it hold stale words (the frames of an earlier walk), which could
 * name the trampoline long after its handler returned.
 */
static bool rip_pl_sig_on_stack(uintptr_t sp)
{
	const struct rip_pl_thread *t = &rip_pl_self;
	uintptr_t a, hi = t->stack_hi, top = hi;

	/*
	 * Past the holes the thread made in its stack too (thread.c), the
	 * words between and above them: a handler that made one in its own
	 * frame has its signal frame above it.  Where they are not all known
	 * (more than RIP_PL_HOLES), as if there were one.
	 */
	if (__atomic_load_n(&t->nholes, __ATOMIC_RELAXED)) {
		top = t->stack_top;
		if (t->holes_lost)
			return t->stack_ok == 1 && sp >= t->stack_lo && sp < top;
	}
	if (t->stack_ok != 1 || sp < t->stack_lo || sp >= top)
		return false;
	for (a = sp & ~(uintptr_t)7; a + 8 <= top; a += 8) {
		if (a >= hi) {
			uintptr_t e = rip_pl_stack_hole_end(a);

			if (e >= top)
				break;
			if (e) {
				a = e - 8;
				continue;
			}
		}
		if (rip_pl_sigret_at(*(const uintptr_t *)a))
			return true;
	}
	return false;
}

/*
 * From the unwind tables: the frames above the hook whose return address is
 * hook_ret.  libunwind finds the tables with dl_iterate_phdr, whose lock is
 * recursive (a hook inside a dl_iterate_phdr callback of the same thread
 * goes through); the guard keeps anything libunwind allocates untraced.
 *
 * A thread's first unw_backtrace mallocs: __tls_get_addr makes the
 * thread's block of libunwind's TLS (libunwind is dlopened).  In a signal
 * handler that interrupted malloc or free, that corrupts the heap (a crash
 * seen: the block handed out while the interrupted free still wrote to
 * it).  So a thread's first call is never made from a signal handler: sig
 * (the walk of the tables crossed a signal frame), or a signal frame found
 * on the stack above sp (the hook's caller's); the hook then has no stack
 * (id 0), and the thread's first call outside a handler makes the block.
 */
static uint32_t rip_pl_unwind(uintptr_t hook_ret, uintptr_t sp, uint64_t *out, uint32_t max,
			      bool sig)
{
	struct rip_pl_thread *t = &rip_pl_self;
	void *buf[RIP_BT_MAX_DEPTH + 8];
	int got, skip = -1, i;
	uint64_t lent[2];
	uint32_t n = 0;

	/* A signal handler's hook that interrupted libunwind on this thread (nest.c): not again. */
	if (!rip_pl_unw_backtrace || RIP_UNLIKELY(t->in_unw))
		return 0;
	if (RIP_UNLIKELY(!t->unw_ready)) {
		if (sig || rip_pl_sig_on_stack(sp))
			return 0;
		t->unw_ready = 1;
	}
	t->in_unw = 1;
	/* The flag before the call: pairs with the check above in a handler's hook. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/*
	 * libunwind stops at a patched function's frame (unwind.h): the real
	 * return addresses of the frames above sp are lent back for the walk,
	 * as for the program's backtrace(3) (fnpatch.c), then the trampoline
	 * again.  This thread's own stack, which nothing else writes meanwhile;
	 * nothing without patched functions.
	 */
	__rip_fn_rets_lend(sp, lent);
	got = rip_pl_unw_backtrace(buf, (int)(max + 8));
	__rip_fn_rets_back(sp, lent);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->in_unw = 0;
	for (i = 0; i < got && i < 8; i++) {
		if ((uintptr_t)buf[i] == hook_ret) {
			skip = i + 1;
			break;
		}
	}
	if (skip < 0)
		return 0; /* not where we thought we were: no backtrace rather than a wrong one */
	for (i = skip; i < got && n < max; i++)
		out[n++] = (uintptr_t)buf[i];
	return n;
}

/* ---- interning ---- */

/*
 * Stacks are interned in open-addressing tables of 64-bit entries, tag
 * (the hash's high bits) and id: a small one first, and a big one once the
 * small one is full.  Every page of a table a program writes costs it a
 * page fault or two (a read maps the zero page, the write then copies it),
 * and stacks land on pages at random: with one big table, gcc's cc1
 * faulted in all 2,048 pages of 8 MiB for its 5,900 stacks, a fifth of
 * what tracing a compiler cost.  The small table is 64 pages; programs with
 * more than RIP_PL_TAB0_LOAD stacks (or a stack that finds its run of
 * the small table too long) go on in the big one, looked up after the
 * small one.  Two threads interning the same new stack at the moment
 * the small table fills may give it two ids: readers see two stacks with
 * the same frames, which is what they are.
 */
#define RIP_PL_ID_BITS 20u
#define RIP_PL_TAB_CAP (1u << RIP_PL_ID_BITS) /* entries of the big table */
#define RIP_PL_ID_MASK ((1ull << RIP_PL_ID_BITS) - 1)
#define RIP_PL_TAB_LOAD (RIP_PL_TAB_CAP / 4 * 3) /* ids past this: table full, id 0 */
#define RIP_PL_TAB0_CAP (1u << 15)		  /* entries of the small table */
#define RIP_PL_TAB0_LOAD (RIP_PL_TAB0_CAP / 2)	  /* entries the small table takes */
#define RIP_PL_TAB_PROBES 64u

static uint64_t *rip_pl_tab;  /* the small table: entries tag | id; 0: empty */
static uint64_t *rip_pl_tab1; /* the big table (memory only where written), NULL: none */
static bool rip_pl_tab1_on;   /* the small one is full: new stacks go to the big one */
static uint32_t rip_pl_tab0_used; /* entries of the small table taken (or being taken) */
static uint32_t rip_pl_next_id = 1;
/*
 * Per id, the file's bt_gen its definition was last written under (memory
 * only where written).  A recorder that attaches to the running process
 * adds 1 to bt_gen (include/rip/abi.h): an id whose entry is older has its
 * definition written again at its next use (rip_pl_bt_again), so that the
 * late recorder's trace names the stacks defined before it came.  Relaxed
 * everywhere: a definition written twice is harmless, and one written
 * again under a newer bt_gen before its entry says so only once more.
 */
static uint32_t *rip_pl_bt_gens;

/* The open file's bt_gen (0 while none is open: no definition is written again). */
static inline uint32_t rip_pl_bt_gen_now(void)
{
	/* Relaxed: a hint (include/rip/abi.h); lib/events.c swaps the pointer at open and close. */
	return __atomic_load_n(__atomic_load_n(&__rip_bt_gen, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

/* id's definition was written under bt_gen g. */
static inline void rip_pl_bt_gen_set(uint32_t id, uint32_t g)
{
	if (rip_pl_bt_gens && id < RIP_PL_TAB_LOAD)
		__atomic_store_n(&rip_pl_bt_gens[id], g, __ATOMIC_RELAXED);
}

/* Two independent lanes (even and odd frames): half the chain of dependent multiplies. */
static uint64_t rip_pl_hash(const uint64_t *f, uint32_t n)
{
	uint64_t a = 0x9e3779b97f4a7c15ull ^ n, b = 0xbf58476d1ce4e5b9ull;
	uint32_t i;

	for (i = 0; i + 1 < n; i += 2) {
		a ^= f[i];
		b ^= f[i + 1];
		a *= 0xff51afd7ed558ccdull;
		b *= 0xc4ceb9fe1a85ec53ull;
		a ^= a >> 32;
		b ^= b >> 29;
	}
	if (i < n) {
		a ^= f[i];
		a *= 0xff51afd7ed558ccdull;
	}
	a ^= b * 0x94d049bb133111ebull;
	/* murmur3's finaliser */
	a ^= a >> 33;
	a *= 0xc4ceb9fe1a85ec53ull;
	a ^= a >> 33;
	return a;
}

/* Is every frame a return address into executable code?  (New stacks only.) */
static bool rip_pl_frames_exec(const uint64_t *f, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (!rip_pl_exec(f[i]))
			return false;
	return true;
}

/* The id of hash h in table tab of cap entries, 0 if none. */
static uint32_t rip_pl_tab_find(const uint64_t *tab, uint32_t cap, uint64_t h)
{
	uint64_t tag = h & ~RIP_PL_ID_MASK;
	uint32_t i = (uint32_t)h & (cap - 1);

	for (uint32_t probes = 0; probes < RIP_PL_TAB_PROBES; probes++, i = (i + 1) & (cap - 1)) {
		/* Pairs with the release CAS in rip_pl_tab_put: the entry is whole once seen. */
		uint64_t e = __atomic_load_n(&tab[i], __ATOMIC_ACQUIRE);

		if (!e)
			return 0;
		if ((e & ~RIP_PL_ID_MASK) == tag)
			return (uint32_t)(e & RIP_PL_ID_MASK);
	}
	return 0;
}

/* The id of a stack already interned (its frames were checked then), 0 if none. */
static uint32_t rip_pl_lookup(uint64_t h)
{
	uint32_t id = rip_pl_tab_find(rip_pl_tab, RIP_PL_TAB0_CAP, h);

	/* Relaxed: the entries' own acquire loads order what they hold. */
	if (!id && __atomic_load_n(&rip_pl_tab1_on, __ATOMIC_RELAXED))
		id = rip_pl_tab_find(rip_pl_tab1, RIP_PL_TAB_CAP, h);
	return id;
}

/*
 * The id of stack f (hash h) in table tab of cap entries: found, or given
 * to it now (its definition emitted).  used: the count of entries taken,
 * at most load of them (NULL: no limit but the ids').  0 when the table
 * has no room for it (full, or a cluster this long) or the ids ran out.
 */
static uint32_t rip_pl_tab_put(uint64_t *tab, uint32_t cap, uint32_t *used, uint32_t load,
			       const uint64_t *f, uint32_t n, uint64_t h)
{
	uint64_t tag = h & ~RIP_PL_ID_MASK;
	uint32_t i = (uint32_t)h & (cap - 1), id = 0, probes;
	bool room = !used;

	for (probes = 0; probes < RIP_PL_TAB_PROBES; probes++, i = (i + 1) & (cap - 1)) {
		/* Pairs with the release CAS below: the entry is whole once seen. */
		uint64_t e = __atomic_load_n(&tab[i], __ATOMIC_ACQUIRE);

		if (e) {
			if ((e & ~RIP_PL_ID_MASK) == tag)
				return (uint32_t)(e & RIP_PL_ID_MASK);
			continue;
		}
		/* Relaxed: a count of entries, not an order; a lost CAS leaves it one high. */
		if (!room && __atomic_fetch_add(used, 1, __ATOMIC_RELAXED) >= load)
			return 0;
		room = true;
		if (!id) {
			/* Relaxed: ids only need to be unique; the CAS publishes the entry. */
			id = __atomic_fetch_add(&rip_pl_next_id, 1, __ATOMIC_RELAXED);
			if (id >= RIP_PL_TAB_LOAD)
				return 0;
		}
		if (__atomic_compare_exchange_n(&tab[i], &e, tag | id, false, __ATOMIC_RELEASE,
						__ATOMIC_ACQUIRE)) {
			/* bt_gen before the definition: a recorder that comes meanwhile gets it again */
			uint32_t g = rip_pl_bt_gen_now();

			rip_pl_bt_emit(id, f, n);
			rip_pl_bt_gen_set(id, g);
			return id;
		}
		/* Lost to another thread (e now holds its entry): same stack, or probe on. */
		if ((e & ~RIP_PL_ID_MASK) == tag)
			return (uint32_t)(e & RIP_PL_ID_MASK);
	}
	return 0; /* a cluster this long: treat as full */
}

static uint32_t rip_pl_intern(const uint64_t *f, uint32_t n, uint64_t h)
{
	uint32_t id;

	if (!rip_pl_tab)
		return 0;
	/* Relaxed: a switch; the entries' own acquire loads and CAS order what they hold. */
	if (__atomic_load_n(&rip_pl_tab1_on, __ATOMIC_RELAXED)) {
		/* the small table is full: what it holds stays there */
		id = rip_pl_tab_find(rip_pl_tab, RIP_PL_TAB0_CAP, h);
		if (id)
			return id;
	} else {
		id = rip_pl_tab_put(rip_pl_tab, RIP_PL_TAB0_CAP, &rip_pl_tab0_used,
				    RIP_PL_TAB0_LOAD, f, n, h);
		/* found or added, or out of ids; else full, or a cluster too long: the big one */
		if (id || __atomic_load_n(&rip_pl_next_id, __ATOMIC_RELAXED) >= RIP_PL_TAB_LOAD ||
		    !rip_pl_tab1)
			return id;
		__atomic_store_n(&rip_pl_tab1_on, true, __ATOMIC_RELAXED);
	}
	return rip_pl_tab_put(rip_pl_tab1, RIP_PL_TAB_CAP, NULL, 0, f, n, h);
}

/* ---- the stack cache ---- */

/*
 * Most stacks a program allocates from are stacks it allocated from a
 * moment ago, and a walk from the same state that finds the same values
 * on the stack gives the same frames (unwind.h, struct rip_pl_wlog).  So
 * the id of each stack walked is kept with what its walk read: the
 * starting state (the hook's pc; sp as its distance from the stack's top,
 * fp as its distance from sp), the dlclose epoch, and the loads its frames
 * depend on (each one's offset from sp and value: every return address,
 * and an rbp a later CFA came from, as its distance from sp).  Stacks of
 * more than RIP_PL_SC_READS such loads are not kept.  A later call walks
 * its first RIP_PL_SC_KEY frames only, finds the entries keyed by those
 * and its state, and reads the stack again at the entry's offsets: all
 * equal, the id is the entry's, with no further walk, hash or interning.
 * Anything unequal is a miss, and the whole walk runs as without the cache.
 * The checks are exact (no hash decides a hit), so the frames are always
 * what the walk would have given.
 *
 * One table for all threads, as the stack table.  Positions are kept as
 * distances (a walk without a signal frame gives the same frames wherever
 * the stack is: unwind.h), so threads that run the same code at the same
 * depth share entries: 512 threads of one program need the entries of
 * one, not 512 times as many.  A walk through a signal frame also keeps sp
 * itself, and matches only at that address.  The table is bounded however
 * many threads there are; a fork child finds it empty with the stack table
 * (ids are the child's own).  It starts small (RIP_PL_SC_SETS0 sets: a
 * program pays a page fault for each page of it it writes, and short ones
 * write most of it), and grows once to RIP_PL_SC_SETS when RIP_PL_SC_GROW
 * walks found a stack known already (the cache is too small for the
 * stacks in use: many threads, whose stacks are told apart by address).
 * Sets of RIP_PL_SC_WAYS entries, each behind a sequence count (odd while
 * written): readers never wait and never write, a writer that finds the
 * entry being written gives up; a signal handler's hook cannot walk while
 * its thread writes (the guard is up).  The keys of a set's entries sit
 * together, apart from the entries (a line of their own: a lookup reads
 * one line to find its way, not one line per way; the entries are 700
 * bytes apart, and that scan was most of a hit's cache misses).
 */
#define RIP_PL_SC_KEY 4u /* frames walked before the lookup */
#define RIP_PL_SC_WAYS 4u
#define RIP_PL_SC_SETS0 64u   /* sets of the first cache */
#define RIP_PL_SC_SETS 1024u  /* sets once grown */
#define RIP_PL_SC_GROW 4096u  /* walks of known stacks that grow it */
#define RIP_PL_SC_READS 56u /* loads kept: 28 frames with rbp saved in each */
#define RIP_PL_SC_SLOTS 64u /* their slots: each group padded to a multiple of 4 (see put) */

/* Four loads of an entry: what rip_pl_sc_diff checks at a time, together. */
struct rip_pl_sc_blk {
	uint32_t off[4]; /* from sp */
	uint64_t val[4];
};

struct rip_pl_sc_ent {
	uint64_t seq;	    /* odd: being written */
	uintptr_t pc;	    /* the starting state: pc, */
	uintptr_t depth;    /* the stack's top less sp (the walk's bounds), */
	uintptr_t fpr;	    /* fp less sp, */
	uintptr_t sp;	    /* and sp if the walk stepped through a signal frame (else 0) */
	uint32_t epoch;	    /* dlclose epoch of the walk */
	uint32_t id;	    /* the stack's id */
	uint32_t n;	    /* loads in off, val (a multiple of 4, at most RIP_PL_SC_SLOTS) */
	uint32_t nabs;	    /* the first nabs (a multiple of 4) hold values; the others stack
			     * addresses less sp */
	uint64_t pad;	    /* the loads from the next line on, after one line of the above */
	struct rip_pl_sc_blk b[RIP_PL_SC_SLOTS / 4];
};

/* A cache: its entries, sets of RIP_PL_SC_WAYS, and their keys (one mapping, the keys first). */
struct rip_pl_scd {
	uint64_t *k; /* entry i's key (rip_pl_sc_key, or a shape's); 0: empty */
	struct rip_pl_sc_ent *e;
	uint32_t sets;
	bool wiped; /* a fork child finds it empty without our help */
};

static struct rip_pl_scd rip_pl_scd[2]; /* the first cache, the grown one */
static struct rip_pl_scd *rip_pl_sc;    /* the one in use, NULL: none */
static uint32_t rip_pl_sc_rewalks;	 /* walks of stacks known already */
static uint32_t rip_pl_sc_victim;	 /* the way a full set gives up next (a rotation) */

static size_t rip_pl_sc_len(uint32_t sets)
{
	return (size_t)sets * RIP_PL_SC_WAYS * (sizeof(uint64_t) + sizeof(struct rip_pl_sc_ent));
}

/* Map cache d with sets sets.  0 or -ENOMEM. */
static int rip_pl_sc_map(struct rip_pl_scd *d, uint32_t sets)
{
	_Static_assert(RIP_PL_SC_WAYS * sizeof(uint64_t) == 32, "a set's keys: half a line");
	_Static_assert(offsetof(struct rip_pl_sc_ent, b) == 64 &&
			       sizeof(struct rip_pl_sc_ent) % 64 == 0,
		       "an entry: whole lines, the loads from its second on");
	d->sets = sets;
	d->k = rip_pl_table_map(rip_pl_sc_len(sets), &d->wiped);
	d->e = d->k ? (struct rip_pl_sc_ent *)(d->k + (size_t)sets * RIP_PL_SC_WAYS) : NULL;
	return d->k ? 0 : -ENOMEM;
}

/*
 * The first cache was too small: put the big one (mapped with it, memory
 * only where written) in its place.  The first stays, for the walks still
 * reading it.
 */
static void rip_pl_sc_grow(void)
{
	if (!rip_pl_scd[1].e)
		return;
	/* Release: pairs with the acquire in rip_pl_bt_tables (the descriptor is whole). */
	__atomic_store_n(&rip_pl_sc, &rip_pl_scd[1], __ATOMIC_RELEASE);
}

/*
 * The key of a walk from pc, depth below the stack's top, fp at fpr from sp, whose first
 * frames are f[0 .. n - 1] (the others of the RIP_PL_SC_KEY 0): never 0.  Four independent
 * products, then a finaliser.
 */
static inline uint64_t rip_pl_sc_key(uintptr_t pc, uintptr_t depth, uintptr_t fpr,
				     const uint64_t *f, uint32_t n)
{
	_Static_assert(RIP_PL_SC_KEY == 4, "the key hashes four frames");
	uint64_t a = (pc ^ depth << 24 ^ (uint64_t)n << 58) * 0x9e3779b97f4a7c15ull;
	uint64_t b = (fpr ^ f[0]) * 0xff51afd7ed558ccdull;
	uint64_t c = (f[1] ^ f[2] << 21 ^ f[2] >> 43) * 0xc4ceb9fe1a85ec53ull;
	uint64_t d = f[3] * 0x94d049bb133111ebull;

	a ^= b ^ (c >> 7 | c << 57) ^ (d >> 19 | d << 45);
	a ^= a >> 31;
	a *= 0xbf58476d1ce4e5b9ull;
	a ^= a >> 29;
	return a | 1;
}

/* The index of the first entry of key's set. */
static inline size_t rip_pl_sc_set(const struct rip_pl_scd *d, uint64_t key)
{
	return (size_t)((key >> 1) & (d->sets - 1)) * RIP_PL_SC_WAYS;
}

/*
 * The way of its set an entry of key takes when it is free (rip_pl_sc_put),
 * and so where rip_pl_sc_find looks first: it fetches that entry while it
 * reads the set's keys, not after (the two were a hit's slowest loads, one
 * waiting for the other).
 */
static inline uint32_t rip_pl_sc_way(uint64_t key)
{
	return (uint32_t)(key >> 40) & (RIP_PL_SC_WAYS - 1);
}

/*
 * The four offsets of block b, each kept at most lim (inside the stack) whatever the entry
 * holds: it may be being rewritten.  Relaxed loads: the entry's count, read again by the
 * caller, says whether they held.
 */
static inline __attribute__((always_inline)) void
rip_pl_sc_offs(const struct rip_pl_sc_blk *b, uintptr_t lim, uintptr_t *o0, uintptr_t *o1,
	       uintptr_t *o2, uintptr_t *o3)
{
	uintptr_t v0 = __atomic_load_n(&b->off[0], __ATOMIC_RELAXED);
	uintptr_t v1 = __atomic_load_n(&b->off[1], __ATOMIC_RELAXED);
	uintptr_t v2 = __atomic_load_n(&b->off[2], __ATOMIC_RELAXED);
	uintptr_t v3 = __atomic_load_n(&b->off[3], __ATOMIC_RELAXED);

	*o0 = v0 < lim ? v0 : lim;
	*o1 = v1 < lim ? v1 : lim;
	*o2 = v2 < lim ? v2 : lim;
	*o3 = v3 < lim ? v3 : lim;
}

/*
 * Nonzero unless each of the n loads off, val finds its value at sp + off
 * now: val itself for the first nabs, val + sp for the others (stack
 * addresses).  Every offset is kept at most lim (inside the stack)
 * whatever the entry holds: it may be being rewritten.  A function of its
 * own, so that its few values stay in registers.  Four loads at a time
 * (each group is padded to a multiple of four by repeating its last load:
 * rip_pl_sc_put), and out at the first four that differ: a stack that
 * shares its first frames with the one looked for (the same key) differs a
 * few frames up.
 */
static __attribute__((noinline)) uint64_t rip_pl_sc_diff(uintptr_t sp, uintptr_t lim,
							const struct rip_pl_sc_blk *b,
							uint32_t nabs, uint32_t n)
{
	const struct rip_pl_sc_blk *end, *abs_end;
	uint64_t diff = 0;

	/* in blocks: as the entry says if it is whole; else inside the entry (the count tells) */
	n = (n < RIP_PL_SC_SLOTS ? n : RIP_PL_SC_SLOTS) / 4;
	nabs = (nabs < n * 4 ? nabs : n * 4) / 4;
	end = b + n;
	abs_end = b + nabs;
	/* Relaxed loads: the entry's count, read again by the caller, says whether they held. */
	for (; b < abs_end; b++) {
		uintptr_t o0, o1, o2, o3;

		rip_pl_sc_offs(b, lim, &o0, &o1, &o2, &o3);
		diff = (*(const uint64_t *)(sp + o0) ^ __atomic_load_n(&b->val[0], __ATOMIC_RELAXED)) |
		       (*(const uint64_t *)(sp + o1) ^ __atomic_load_n(&b->val[1], __ATOMIC_RELAXED)) |
		       (*(const uint64_t *)(sp + o2) ^ __atomic_load_n(&b->val[2], __ATOMIC_RELAXED)) |
		       (*(const uint64_t *)(sp + o3) ^ __atomic_load_n(&b->val[3], __ATOMIC_RELAXED));
		if (diff)
			return diff;
	}
	/* the stack addresses, kept less sp */
	for (; b < end; b++) {
		uintptr_t o0, o1, o2, o3;

		rip_pl_sc_offs(b, lim, &o0, &o1, &o2, &o3);
		diff |= (*(const uint64_t *)(sp + o0) - sp) ^
			__atomic_load_n(&b->val[0], __ATOMIC_RELAXED);
		diff |= (*(const uint64_t *)(sp + o1) - sp) ^
			__atomic_load_n(&b->val[1], __ATOMIC_RELAXED);
		diff |= (*(const uint64_t *)(sp + o2) - sp) ^
			__atomic_load_n(&b->val[2], __ATOMIC_RELAXED);
		diff |= (*(const uint64_t *)(sp + o3) - sp) ^
			__atomic_load_n(&b->val[3], __ATOMIC_RELAXED);
	}
	return diff;
}

/*
 * The id of a stack walked before from (pc, sp, fp) with key key, epoch
 * epoch, whose loads find the same values now; 0 if none.  The stack's
 * bounds are [sp, hi): every offset read is checked against them (an
 * entry being rewritten may hold anything until its count says so).
 */
static inline __attribute__((always_inline)) uint32_t
rip_pl_sc_find(const struct rip_pl_scd *d, uint64_t key, uintptr_t pc, uintptr_t sp, uintptr_t fp,
	       uintptr_t hi, uint32_t epoch)
{
	const size_t set = rip_pl_sc_set(d, key);
	const uint64_t *k = &d->k[set];
	const uintptr_t lim = hi - sp - 8; /* the last offset a load may have */
	const uintptr_t depth = hi - sp, fpr = fp - sp;
	const uint32_t way = rip_pl_sc_way(key);
	const char *pref = (const char *)&d->e[set + way];

	/* its first four lines: the count and state, and 16 loads */
	__builtin_prefetch(pref);
	__builtin_prefetch(pref + 64);
	__builtin_prefetch(pref + 128);
	__builtin_prefetch(pref + 192);
	/* that way first */
#pragma GCC unroll 4
	for (uint32_t i = 0; i < RIP_PL_SC_WAYS; i++) {
		const uint32_t w = (way + i) & (RIP_PL_SC_WAYS - 1);
		const struct rip_pl_sc_ent *e;
		uint64_t seq, diff;
		uintptr_t esp;
		uint32_t n, id;

		/* Relaxed: a filter only (where to look); the count and the loads decide. */
		if (RIP_LIKELY(__atomic_load_n(&k[w], __ATOMIC_RELAXED) != key))
			continue;
		e = &d->e[set + w];
		/* Acquire: pairs with the release store that ends the entry's write. */
		seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
		/* Relaxed field loads: the count, read again below, says whether they hold. */
		n = __atomic_load_n(&e->n, __ATOMIC_RELAXED);
		esp = __atomic_load_n(&e->sp, __ATOMIC_RELAXED);
		if ((seq & 1) || __atomic_load_n(&e->pc, __ATOMIC_RELAXED) != pc ||
		    __atomic_load_n(&e->depth, __ATOMIC_RELAXED) != depth ||
		    __atomic_load_n(&e->fpr, __ATOMIC_RELAXED) != fpr || (esp && esp != sp) ||
		    __atomic_load_n(&e->epoch, __ATOMIC_RELAXED) != epoch)
			continue;
		diff = rip_pl_sc_diff(sp, lim, e->b,
				      __atomic_load_n(&e->nabs, __ATOMIC_RELAXED), n);
		id = __atomic_load_n(&e->id, __ATOMIC_RELAXED);
		/* Acquire fence: the loads above happen before the count is read again. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (!diff && __atomic_load_n(&e->seq, __ATOMIC_RELAXED) == seq)
			return id;
	}
	return 0;
}

/* Load i of entry e: at off from sp, val there (stores for rip_pl_sc_put's writer). */
static inline void rip_pl_sc_load(struct rip_pl_sc_ent *e, uint32_t i, uint32_t off, uint64_t val)
{
	/* Relaxed: inside the entry's odd count; the release store that ends it publishes. */
	__atomic_store_n(&e->b[i / 4].off[i % 4], off, __ATOMIC_RELAXED);
	__atomic_store_n(&e->b[i / 4].val[i % 4], val, __ATOMIC_RELAXED);
}

/* Keep id for the walk from (pc, sp, fp) with key key whose loads log holds. */
static void rip_pl_sc_put(const struct rip_pl_scd *d, uint64_t key, uintptr_t pc, uintptr_t sp,
			  uintptr_t fp, uintptr_t hi, const struct rip_pl_wlog *log, uint32_t id)
{
	const size_t set = rip_pl_sc_set(d, key);
	struct rip_pl_sc_ent *e = NULL;
	uint64_t seq, *ek = NULL, lv = 0;
	uint32_t j = 0, lo = 0;

	if (log->n > RIP_PL_SC_READS)
		return;
	/*
	 * An empty way, else the next in turn.  Not the way that holds the key
	 * already: stacks whose first frames are the same share a key (a leaf
	 * called from many paths), and two of them used in turn would each
	 * put the other out, missing every other time (half the calls of
	 * bench/malloc-nofp walked the whole stack).
	 */
	for (uint32_t i = 0, w; i < RIP_PL_SC_WAYS && !e; i++) {
		w = (rip_pl_sc_way(key) + i) & (RIP_PL_SC_WAYS - 1);
		if (!__atomic_load_n(&d->k[set + w], __ATOMIC_RELAXED)) {
			e = &d->e[set + w];
			ek = &d->k[set + w];
		}
	}
	if (!e) {
		/* Relaxed load and store, no RMW: a hint; two threads may pick the same way. */
		uint32_t v = __atomic_load_n(&rip_pl_sc_victim, __ATOMIC_RELAXED);

		__atomic_store_n(&rip_pl_sc_victim, v + 1, __ATOMIC_RELAXED);
		e = &d->e[set + v % RIP_PL_SC_WAYS];
		ek = &d->k[set + v % RIP_PL_SC_WAYS];
	}
	seq = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
	/* Relaxed CAS: it only makes this thread the entry's one writer; the fence publishes. */
	if ((seq & 1) || !__atomic_compare_exchange_n(&e->seq, &seq, seq + 1, false,
						      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return; /* another thread is writing it */
	/* Release fence: the odd count is seen before any field changes (pairs with find's fence). */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(ek, key, __ATOMIC_RELAXED);
	__atomic_store_n(&e->pc, pc, __ATOMIC_RELAXED);
	__atomic_store_n(&e->depth, hi - sp, __ATOMIC_RELAXED);
	__atomic_store_n(&e->fpr, fp - sp, __ATOMIC_RELAXED);
	__atomic_store_n(&e->sp, log->sig ? sp : 0, __ATOMIC_RELAXED);
	__atomic_store_n(&e->epoch, log->epoch, __ATOMIC_RELAXED);
	__atomic_store_n(&e->id, id, __ATOMIC_RELAXED);
	/*
	 * The values first, then the stack addresses, less sp; each group
	 * padded to a multiple of four by repeating its last load (a load
	 * checked twice), so that rip_pl_sc_diff checks four at a time.
	 */
	for (uint32_t i = 0; i < log->n; i++) {
		if (!(log->off[i] & RIP_PL_WLOG_REL)) {
			lo = log->off[i];
			lv = log->val[i];
			rip_pl_sc_load(e, j++, lo, lv);
		}
	}
	for (; j & 3; j++)
		rip_pl_sc_load(e, j, lo, lv);
	__atomic_store_n(&e->nabs, j, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < log->n; i++) {
		if (log->off[i] & RIP_PL_WLOG_REL) {
			lo = log->off[i] & ~RIP_PL_WLOG_REL;
			lv = log->val[i] - sp;
			rip_pl_sc_load(e, j++, lo, lv);
		}
	}
	for (; j & 3; j++)
		rip_pl_sc_load(e, j, lo, lv);
	__atomic_store_n(&e->n, j, __ATOMIC_RELAXED);
	/* Release: pairs with the acquire load of the count in rip_pl_sc_find. */
	__atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
}

/* ---- shapes: the stack cache's key without a walk ---- */

/*
 * A key made by walking the first frames costs a rule lookup per frame,
 * more than the rest of a hit.  But the calls of one hook at one depth
 * (distance from the stack's top) mostly come through frames of the same
 * sizes, so their return addresses are at the same offsets from sp: a
 * shape.  The first walk of a class (hook pc, depth, fp less sp) keeps
 * the offsets of its first RIP_PL_SH_K return addresses; a later call of
 * the class reads the words at those offsets and hashes them into a key
 * (rip_pl_sh_key), with no rule lookup.  Stacks that fit the shape are kept
 * under that key; others (other frame sizes at the same depth, a signal
 * frame) under the walked key, which a call that misses with the shape's
 * tries next.  As for the walked key, only where to look depends on it: a
 * hit is decided by the entry's loads alone, so a torn or stale shape only
 * costs a miss.  Direct-mapped and written once per slot (a class whose
 * slot another holds uses the walked key): no lock, no wait.
 */
#define RIP_PL_SH_K 6u	      /* return addresses in a shape */
#define RIP_PL_SH_SLOTS 4096u /* classes kept */

struct rip_pl_shape {
	uint64_t tag;		   /* the class's hash, less its low 3 bits | n; 0: free */
	uint32_t off[RIP_PL_SH_K]; /* the first n return addresses' offsets from sp, the last
				    * repeated to fill the K (a key reads K words, no loop) */
};

static struct rip_pl_shape *rip_pl_shapes; /* NULL: none (the walked key only) */

/* The class of a call: its hook pc, depth below the stack's top and fp less sp. */
static inline uint64_t rip_pl_sh_class(uintptr_t pc, uintptr_t depth, uintptr_t fpr)
{
	uint64_t h = (pc ^ depth << 20 ^ fpr << 44) * 0x9e3779b97f4a7c15ull;

	return h ^ h >> 29;
}

static inline uint64_t rip_pl_rotl(uint64_t x, unsigned r)
{
	return x << r | x >> (64 - r);
}

/*
 * The key of the stack at sp under shape off of class cls, whose first n
 * offsets are its own: the words at all RIP_PL_SH_K offsets (each kept at
 * most lim: the shape may be being written), in four independent products,
 * then a finaliser.  Never 0.
 */
static inline uint64_t rip_pl_sh_key(uint64_t cls, uintptr_t sp, uintptr_t lim, const uint32_t *off,
				     uint32_t n)
{
	_Static_assert(RIP_PL_SH_K == 6, "the key hashes six words");
	uint64_t w[RIP_PL_SH_K], a, b, c, d;

	/* unrolled: a loop's counting was a quarter of a lookup's instructions */
#pragma GCC unroll 6
	for (uint32_t i = 0; i < RIP_PL_SH_K; i++) {
		/* Relaxed: a torn shape only makes a key that finds nothing. */
		uintptr_t o = __atomic_load_n(&off[i], __ATOMIC_RELAXED);

		o = o < lim ? o : lim;
		w[i] = *(const uint64_t *)(sp + o);
	}
	a = (cls ^ n ^ w[0]) * 0x9e3779b97f4a7c15ull;
	b = (w[1] ^ rip_pl_rotl(w[2], 32)) * 0xff51afd7ed558ccdull;
	c = (w[3] ^ rip_pl_rotl(w[4], 32)) * 0xc4ceb9fe1a85ec53ull;
	d = w[5] * 0x94d049bb133111ebull;
	a ^= b ^ rip_pl_rotl(c, 21) ^ rip_pl_rotl(d, 43);
	a ^= a >> 29;
	a *= 0xbf58476d1ce4e5b9ull;
	a ^= a >> 32;
	return a | 1;
}

/*
 * Under which key to keep a stack just walked from sp (its loads in log),
 * of class cls, whose walked key is key: the key of its class's shape if
 * it fits it (the shape is made now, from this walk, if the class has
 * none and its slot is free), else key.
 */
static uint64_t rip_pl_sh_put_key(uint64_t cls, uintptr_t sp, uintptr_t lim,
				  const struct rip_pl_wlog *log, uint64_t key)
{
	struct rip_pl_shape *sh;
	uint32_t off[RIP_PL_SH_K], n = 0;
	uint64_t tag, want;

	if (!rip_pl_shapes || log->sig)
		return key;
	/* without a signal frame, the loads that are not stack addresses are the return addresses */
	for (uint32_t i = 0; i < log->n && n < RIP_PL_SH_K; i++)
		if (!(log->off[i] & RIP_PL_WLOG_REL))
			off[n++] = log->off[i];
	if (!n)
		return key;
	for (uint32_t i = n; i < RIP_PL_SH_K; i++)
		off[i] = off[n - 1];
	sh = &rip_pl_shapes[cls & (RIP_PL_SH_SLOTS - 1)];
	want = (cls & ~7ull) | n;
	/* Relaxed: the slot is a hint (see above); the CAS only makes one thread its writer. */
	tag = __atomic_load_n(&sh->tag, __ATOMIC_RELAXED);
	if (!tag) {
		if (!__atomic_compare_exchange_n(&sh->tag, &tag, want, false, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			return key;
		for (uint32_t i = 0; i < RIP_PL_SH_K; i++)
			__atomic_store_n(&sh->off[i], off[i], __ATOMIC_RELAXED);
		return rip_pl_sh_key(cls, sp, lim, off, n);
	}
	if (tag != want)
		return key;
	for (uint32_t i = 0; i < RIP_PL_SH_K; i++)
		if (__atomic_load_n(&sh->off[i], __ATOMIC_RELAXED) != off[i])
			return key;
	return rip_pl_sh_key(cls, sp, lim, off, n);
}

/*
 * The rest of rip_pl_bt_tables when the class's shape found nothing: the
 * walked key, then the whole walk, kept for the next time.  Out of line, so
 * that the lookup by shape, which nearly every call ends with, keeps its
 * registers and a small frame (the walk's log is 900 bytes).
 */
static __attribute__((noinline)) int rip_pl_bt_miss(uintptr_t pc, uintptr_t sp, uintptr_t fp,
						    uint64_t *frames, uint32_t max, uint32_t epoch,
						    const struct rip_pl_scd *sc, uint64_t cls,
						    bool shaped, uint32_t *idp)
{
	const uintptr_t hi = rip_pl_self.stack_hi;
	uint32_t pre = max < RIP_PL_SC_KEY ? max : RIP_PL_SC_KEY, id, known;
	struct rip_pl_wlog log;
	uint64_t key;
	int m = -1;

	/*
	 * The first frames, for the key: no log (a miss walks again with one).
	 * The first is the hook's caller's, from the hook's frame (ours, with a
	 * frame pointer: fp is its rbp), and rip_pl_dwarf_prefix gives the
	 * others; where it declines, or fp is not in the stack above sp, the
	 * whole walk gives them all.  Only the key depends on this choice,
	 * which is the same at every call from the same state: a hit is
	 * decided by the entry's loads alone.
	 */
	frames[1] = frames[2] = frames[3] = 0;
	if (RIP_LIKELY(pre == RIP_PL_SC_KEY && fp >= sp && hi >= 16 && fp <= hi - 16 &&
		       !(fp & 7))) {
		const uintptr_t *hook = (const uintptr_t *)fp;

		frames[0] = hook[1];
		m = rip_pl_dwarf_prefix(hook[1], fp + 16, hook[0], frames + 1, pre - 1, epoch);
		m = m < 0 ? -1 : m + 1;
	}
	if (RIP_UNLIKELY(m < 0)) {
		frames[0] = 0;
		m = rip_pl_dwarf_walk(pc, sp, fp, frames, pre, NULL);
		if (m < 0)
			return m;
	}
	/* the walk checked the stack's bounds: hi > sp */
	key = rip_pl_sc_key(pc, hi - sp, fp - sp, frames, (uint32_t)m);
	if (RIP_LIKELY(sc) && (id = rip_pl_sc_find(sc, key, pc, sp, fp, hi, epoch)) != 0) {
		*idp = id;
		return 0;
	}
	m = rip_pl_dwarf_walk(pc, sp, fp, frames, max, &log);
	if (m < 0)
		return m;
	*idp = 0;
	if (!m)
		return 0;
	/* ids are given in order: one below this had been given before the walk */
	known = __atomic_load_n(&rip_pl_next_id, __ATOMIC_RELAXED);
	id = rip_pl_intern(frames, (uint32_t)m, rip_pl_hash(frames, (uint32_t)m));
	/* a walk through a patched frame depends on librip's return stack too: not kept */
	if (id && sc && !log.patched) {
		if (shaped)
			key = rip_pl_sh_put_key(cls, sp, hi - sp - 8, &log, key);
		rip_pl_sc_put(sc, key, pc, sp, fp, hi, &log, id);
		/* Relaxed: a count; the one call that reaches the limit grows the cache. */
		if (id < known && sc == &rip_pl_scd[0] &&
		    __atomic_add_fetch(&rip_pl_sc_rewalks, 1, __ATOMIC_RELAXED) == RIP_PL_SC_GROW)
			rip_pl_sc_grow();
	}
	*idp = id;
	return 0;
}

/*
 * The id of the stack above the hook (frames from its return address pc,
 * sp, fp) through the unwind tables, the cache first; the walk's -1 or -2
 * when it declines.  frames: room for max.
 */
static inline __attribute__((always_inline)) int rip_pl_bt_tables(uintptr_t pc, uintptr_t sp,
								  uintptr_t fp, uint64_t *frames,
								  uint32_t max, uint32_t *idp)
{
	const struct rip_pl_thread *t = &rip_pl_self;
	const uint32_t epoch = rip_pl_unwind_epoch();
	/* Acquire: pairs with the release in rip_pl_sc_grow (the cache is whole). */
	const struct rip_pl_scd *sc = __atomic_load_n(&rip_pl_sc, __ATOMIC_ACQUIRE);
	const uintptr_t hi = t->stack_hi;
	uint64_t cls = 0;

	/* the class's shape first: a key without a walk */
	if (RIP_LIKELY(sc && rip_pl_shapes && t->stack_ok == 1 && sp >= t->stack_lo && hi >= 16 &&
		       sp <= hi - 16)) {
		const struct rip_pl_shape *sh;
		uint64_t tag;
		uint32_t id;

		cls = rip_pl_sh_class(pc, hi - sp, fp - sp);
		sh = &rip_pl_shapes[cls & (RIP_PL_SH_SLOTS - 1)];
		/* Relaxed: a hint; a torn shape makes a key that finds nothing. */
		tag = __atomic_load_n(&sh->tag, __ATOMIC_RELAXED);
		if ((tag & ~7ull) == (cls & ~7ull) && (tag & 7) && (tag & 7) <= RIP_PL_SH_K) {
			uint64_t key =
				rip_pl_sh_key(cls, sp, hi - sp - 8, sh->off, (uint32_t)(tag & 7));

			id = rip_pl_sc_find(sc, key, pc, sp, fp, hi, epoch);
			if (RIP_LIKELY(id)) {
				*idp = id;
				return 0;
			}
		}
		return rip_pl_bt_miss(pc, sp, fp, frames, max, epoch, sc, cls, true, idp);
	}
	return rip_pl_bt_miss(pc, sp, fp, frames, max, epoch, sc, cls, false, idp);
}

/* RIP_UNWIND: how stacks are walked. */
enum rip_pl_unwind_mode {
	RIP_PL_UNW_AUTO,      /* the unwind tables (unwind.c), libunwind where it declines */
	RIP_PL_UNW_FP,	      /* frame pointers, libunwind where the chain breaks */
	RIP_PL_UNW_LIBUNWIND, /* libunwind for every stack */
	RIP_PL_UNW_TABLES,    /* the unwind tables only: no stack where unwind.c declines (tests) */
};

static enum rip_pl_unwind_mode rip_pl_unwind_mode = RIP_PL_UNW_AUTO;

/* The frames by frame pointers, libunwind where the chain is not to be trusted. */
static uint32_t rip_pl_bt_fp(const uintptr_t *self, uint64_t *frames, uint32_t max, uint64_t *hp)
{
	uint32_t n, m;
	bool ok;

	n = rip_pl_fp_walk(self[0], frames, max, &ok);
	if (RIP_LIKELY(n >= 2 && ok)) {
		/* A stack seen before: its frames were checked when it was new. */
		*hp = rip_pl_hash(frames, n);
		if (RIP_LIKELY(rip_pl_lookup(*hp)))
			return n;
		ok = rip_pl_frames_exec(frames, n);
		if (ok)
			return n;
	}
	*hp = 0;
	m = rip_pl_unwind(self[1], (uintptr_t)(self + 2), frames, max, false);
	/* libunwind's frames come from the unwind tables: no further check */
	if (m >= n)
		return m;
	return ok ? n : 0;
}

/*
 * Before our constructor has loaded libunwind (other libraries'
 * constructors allocate), where the unwind tables stop short: the
 * constructors of the libraries loaded at start are called from the
 * loader's entry code, which has no unwind table (x86-64's _dl_start_user),
 * so every such stack stopped there, and frame pointers alone were left,
 * which give one frame in code built without them.  The tables' frames up
 * to where they stop are exact: kept when they are more.
 */
static uint32_t rip_pl_bt_early(const uintptr_t *self, uint64_t *frames, uint32_t max, uint64_t *hp)
{
	uint64_t part[RIP_BT_MAX_DEPTH];
	uint32_t n = rip_pl_bt_fp(self, frames, max, hp);
	int m = rip_pl_dwarf_walk_partial(self[1], (uintptr_t)(self + 2), self[0], part, max);

	if (m > 0 && (uint32_t)m > n) {
		memcpy(frames, part, (size_t)m * sizeof(part[0]));
		n = (uint32_t)m;
		*hp = 0;
	}
	return n;
}

/*
 * The frames above the hook of self without the unwind tables: the mode's
 * walk (RIP_UNWIND=fp, libunwind), or, in the default mode, where the
 * tables declined (r: their walk's -1 or -2), libunwind, or before our
 * constructor loaded libunwind (other libraries' constructors) frame
 * pointers, or the tables' frames where they stop (rip_pl_bt_early).
 * *hp: the frames' hash where the walk took it, else left as it is.
 */
static inline __attribute__((always_inline)) uint32_t
rip_pl_bt_other(const uintptr_t *self, uint64_t *frames, uint32_t max, uint64_t *hp, int r)
{
	if (rip_pl_unwind_mode == RIP_PL_UNW_AUTO && !rip_pl_unw_backtrace)
		return r == -1 ? rip_pl_bt_early(self, frames, max, hp) :
				 rip_pl_bt_fp(self, frames, max, hp);
	if (rip_pl_unwind_mode == RIP_PL_UNW_FP)
		return rip_pl_bt_fp(self, frames, max, hp);
	return rip_pl_unwind(self[1], (uintptr_t)(self + 2), frames, max,
			     rip_pl_unwind_mode == RIP_PL_UNW_AUTO && r == -2);
}

/*
 * The stack of the hook that called the function whose frame is self: that
 * function's return address is in the hook, the hook's caller is frame 0.
 */
static inline __attribute__((always_inline)) uint32_t rip_pl_bt_find(const uintptr_t *self)
{
	uint64_t frames[RIP_BT_MAX_DEPTH];
	uint32_t n = 0, max = rip_pl_depth, id;
	uint64_t h = 0;
	int r;

	if (!rip_pl_tab)
		return 0;
	switch (rip_pl_unwind_mode) {
	case RIP_PL_UNW_AUTO:
		/*
		 * From the hook's return address, our caller's stack pointer
		 * (just above our frame: frame pointers here) and rbp there.
		 */
		r = rip_pl_bt_tables(self[1], (uintptr_t)(self + 2), self[0], frames, max, &id);
		if (RIP_LIKELY(!r))
			goto done;
		n = rip_pl_bt_other(self, frames, max, &h, r);
		/*
		 * A signal handler's call where libunwind cannot go (its first
		 * on this thread, or it interrupted libunwind: nest.c): the
		 * handler's frames, at least, when the interrupted ones do not
		 * unwind.
		 */
		if (!n && r == -2) {
			int m = rip_pl_dwarf_walk_partial(self[1], (uintptr_t)(self + 2), self[0],
							  frames, max);

			n = m > 0 ? (uint32_t)m : 0;
		}
		break;
	case RIP_PL_UNW_TABLES:
		if (rip_pl_bt_tables(self[1], (uintptr_t)(self + 2), self[0], frames, max, &id))
			id = 0;
		goto done;
	case RIP_PL_UNW_FP:
	case RIP_PL_UNW_LIBUNWIND:
		n = rip_pl_bt_other(self, frames, max, &h, 0);
		break;
	}
	id = 0;
	if (n) {
		if (!h)
			h = rip_pl_hash(frames, n);
		id = rip_pl_intern(frames, n, h);
	}
done:
	return id;
}

/*
 * A recorder came (bt_gen g, not 0): if id's definition was last written
 * under another bt_gen, write it again (rip_pl_bt_gens): the stack above
 * self, walked as rip_pl_bt_find walks it, without the caches, and written
 * only if the frames are id's (their hash finds id in the table).  Under g
 * from then on, written or not: a stack that does not walk the same way
 * again is not walked at each of its uses.
 */
static __attribute__((noinline)) void rip_pl_bt_again(const uintptr_t *self, uint32_t id,
						      uint32_t g)
{
	uint64_t frames[RIP_BT_MAX_DEPTH], h = 0;
	uint32_t n = 0, max = rip_pl_depth;
	int m;

	/* Relaxed: see rip_pl_bt_gens. */
	if (!id || !rip_pl_bt_gens || id >= RIP_PL_TAB_LOAD ||
	    __atomic_load_n(&rip_pl_bt_gens[id], __ATOMIC_RELAXED) == g)
		return;
	if (rip_pl_unwind_mode == RIP_PL_UNW_AUTO || rip_pl_unwind_mode == RIP_PL_UNW_TABLES) {
		m = rip_pl_dwarf_walk(self[1], (uintptr_t)(self + 2), self[0], frames, max, NULL);
		if (m > 0)
			n = (uint32_t)m;
		else if (m < 0 && rip_pl_unwind_mode == RIP_PL_UNW_AUTO)
			n = rip_pl_bt_other(self, frames, max, &h, m);
	} else {
		n = rip_pl_bt_other(self, frames, max, &h, 0);
	}
	if (n && rip_pl_lookup(h ? h : rip_pl_hash(frames, n)) == id)
		rip_pl_bt_emit(id, frames, n);
	rip_pl_bt_gen_set(id, g);
}

/*
 * rip_pl_bt_find, and the definition written again when a recorder came
 * since it was last written: with no such recorder (bt_gen 0, nearly
 * always), one load more than the lookup.
 */
static inline __attribute__((always_inline)) uint32_t rip_pl_bt_of(const uintptr_t *self)
{
	uint32_t id = rip_pl_bt_find(self), g = rip_pl_bt_gen_now();

	if (RIP_UNLIKELY(g))
		rip_pl_bt_again(self, id, g);
	return id;
}

/*
 * noinline: its frame is the one skipped.  The hook's frame pointer is our
 * saved one, and the hook's return address is the first frame.
 */
__attribute__((noinline)) uint32_t rip_pl_backtrace_id(void)
{
	uint32_t id = rip_pl_bt_of(__builtin_frame_address(0));

	/* Not a tail call: this frame must stay until the walk is done (it is). */
	__asm__ __volatile__("" ::: "memory");
	return id;
}

__attribute__((noinline)) uint32_t rip_pl_backtrace_at(const void *frame)
{
	uint32_t id = rip_pl_bt_of(frame);

	/* Not a tail call: frame's function waits for us, and so does its caller's frame. */
	__asm__ __volatile__("" ::: "memory");
	return id;
}

/* ---- setup ---- */

/* Whether a fork child finds the stack tables empty without our help. */
static bool rip_pl_tab_wiped, rip_pl_tab1_wiped;

/*
 * Both stack tables (the big one costs nothing until written); without the
 * big one, 16,384 stacks.
 */
static int rip_pl_tab_map(void)
{
	bool wiped;

	rip_pl_tab = rip_pl_table_map((size_t)RIP_PL_TAB0_CAP * sizeof(uint64_t), &rip_pl_tab_wiped);
	rip_pl_tab1 = rip_pl_table_map((size_t)RIP_PL_TAB_CAP * sizeof(uint64_t), &rip_pl_tab1_wiped);
	/*
	 * Once (a fork child keeps its copy: each id it defines sets its entry
	 * first).  Without it no definition is written again.
	 */
	if (!rip_pl_bt_gens)
		rip_pl_bt_gens =
			rip_pl_table_map((size_t)RIP_PL_TAB_LOAD * sizeof(uint32_t), &wiped);
	return rip_pl_tab ? 0 : -ENOMEM;
}

/*
 * RIP_DEPTH, RIP_UNWIND and the stack and rule tables: all a hook needs before our
 * constructor (frame pointers and the unwind tables; no lock taken).
 */
int rip_pl_bt_init_early(void)
{
	const char *s = secure_getenv("RIP_DEPTH");
	int err;

	rip_pl_pexit = __rip_fn_pexit_at();

	if (s && *s) {
		char *end;
		unsigned long v = strtoul(s, &end, 10);

		if (!*end && v >= 1)
			rip_pl_depth = v > RIP_BT_MAX_DEPTH ? RIP_BT_MAX_DEPTH : (uint32_t)v;
	}
	s = secure_getenv("RIP_UNWIND");
	if (s && !strcmp(s, "fp"))
		rip_pl_unwind_mode = RIP_PL_UNW_FP;
	else if (s && !strcmp(s, "libunwind"))
		rip_pl_unwind_mode = RIP_PL_UNW_LIBUNWIND;
	else if (s && !strcmp(s, "tables"))
		rip_pl_unwind_mode = RIP_PL_UNW_TABLES;
#if !defined(__x86_64__)
	if (rip_pl_unwind_mode == RIP_PL_UNW_AUTO)
		rip_pl_unwind_mode = RIP_PL_UNW_FP; /* unwind.c walks x86-64 only */
#endif
	/* the rule table is an anonymous mapping; the walk finds tables with _dl_find_object */
	err = rip_pl_tab_map();
	/* the stack cache is a speed-up: without its mapping, every stack is walked */
	if (!err && !rip_pl_sc_map(&rip_pl_scd[0], RIP_PL_SC_SETS0)) {
		bool wiped;

		rip_pl_sc = &rip_pl_scd[0];
		rip_pl_sc_map(&rip_pl_scd[1], RIP_PL_SC_SETS); /* for rip_pl_sc_grow; none: no growth */
		/* shapes hold offsets only: a fork child may keep them, wiped or not */
		rip_pl_shapes =
			rip_pl_table_map(RIP_PL_SH_SLOTS * sizeof(struct rip_pl_shape), &wiped);
	}
	return err ? err : rip_pl_unwind_init();
}

/* libunwind (dlopen) and the map of code (dl_iterate_phdr): the constructor's. */
int rip_pl_bt_init_late(void)
{
	rip_pl_unwind_load();
	rip_pl_rc_init();
	return rip_pl_xmap_build();
}

int rip_pl_bt_init(void)
{
	int err = rip_pl_bt_init_early();

	return err ? err : rip_pl_bt_init_late();
}

void rip_pl_bt_fork_child(void)
{
	/*
	 * Only this thread exists: the table must be empty (the kernel wiped
	 * it, or we swap in a new one).  Ids go on from the parent's, so the
	 * copy of its events in the child's file keeps meaning what it meant.
	 */
	uint64_t *old = rip_pl_tab, *big = rip_pl_tab1;
	struct rip_pl_scd *sc = rip_pl_sc;
	bool wiped = rip_pl_tab_wiped && rip_pl_tab1_wiped;

	/* the caches' ids are the parent's: they go with the table (none if one cannot be made) */
	for (unsigned i = 0; i < 2; i++) {
		struct rip_pl_scd *d = &rip_pl_scd[i];
		uint64_t *k = d->k;

		if (!k || d->wiped)
			continue;
		if (rip_pl_sc_map(d, d->sets) && sc == d)
			rip_pl_sc = NULL;
		rip_pl_own_map_del(k);
		munmap(k, rip_pl_sc_len(d->sets));
	}
	/* the child starts with the small table again */
	rip_pl_tab0_used = 0;
	rip_pl_tab1_on = false;
	if (wiped)
		return;
	rip_pl_tab = rip_pl_tab1 = NULL;
	if (rip_pl_tab_map()) {
		rip_pl_fail(-ENOMEM);
		return;
	}
	if (old) {
		rip_pl_own_map_del(old);
		munmap(old, (size_t)RIP_PL_TAB0_CAP * sizeof(uint64_t));
	}
	if (big) {
		rip_pl_own_map_del(big);
		munmap(big, (size_t)RIP_PL_TAB_CAP * sizeof(uint64_t));
	}
}
