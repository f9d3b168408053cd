/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/func.c - function tracing: the hooks that code built with
 * -finstrument-functions calls at every entry and exit
 * (__cyg_profile_func_enter and _exit), the shadow call stack they keep in
 * each slot of the ring file, and the timed records they write into the
 * thread's event ring.
 *
 * Shadow stacks (struct rip_fn_stack, rip/abi.h): one per slot, so a
 * coroutine's stack follows the coroutine from thread to thread.  A
 * thread caches the stack of the slot it runs (__rip_self.cur) in
 * __rip_self.fn_stack, which whatever moves cur clears (a coroutine
 * switch, an attach, an exit: rip.h, rip_self_run), and works it out
 * again in rip_fn_stack_slow.  That slow path also
 * backs the stack's page of the sparse file (once per page, a bit of
 * rip_fn.backed) and starts the stack afresh when the slot has a new
 * owner (its attach_ts).
 *
 * Every frame keeps its canonical frame address (cfa: where the stack
 * pointer was before the call pushed the return address).  The hook finds
 * it exactly: the instrumented function calls the hook right after its
 * prologue, so between the hook's own frame and the function's return
 * address there are only the function's saved registers and locals, and
 * the return address is the call site the compiler passes in.  The hook
 * looks for that word just above the function's frame pointer first (code
 * built with frame pointers: one compare), else upwards from its own
 * frame, at most RIP_FN_SCAN words (a bigger frame: the cfa is taken
 * RIP_FN_SCAN words up, below the real one, which is safe: it can only
 * make a frame look alive).  With the
 * cfa, the stack repairs itself where exits never came:
 *
 *   entry   frames whose cfa is at or below the new frame's are gone
 *           (a longjmp or an exception jumped over their exits; a sibling
 *           call cannot share a cfa with a live caller): popped first;
 *           but a function inlined into another one calls the hooks from
 *           that one's frame, with its cfa and return address, and the
 *           frames of that cfa stay then (rip_fn_inlined tells the two)
 *   exit    the top frame must be this function with this frame (the
 *           hook's frame lies at the same distance below its cfa, which
 *           the frame keeps in its top bits, or the function jumped to the
 *           hook after its epilogue, a tail call: then the hook returns
 *           where the function would have, and its own cfa is the
 *           function's); if not, and the function's frame is on the
 *           stack, it is popped with the frames above it
 *
 * Everything dropped that way is counted in the stack's resync.  Frames
 * past RIP_FN_DEPTH are counted in the depth only: those are neither
 * checked nor repaired.  Whether their entries' records were written is
 * kept though, a bit a level in process memory (rip_fn.deep), so that
 * their exits' records pair with them as the kept frames' do.
 *
 * Timed records: when the func category is on, the hooks also write
 * rip:fn_entry or rip:fn_exit {u32 fn} (8 bytes with the compact header)
 * through the event fast path of rip.h.  fn is a function id: ids are
 * handed out in order from the file's fn_count, and entry id - 1 of the
 * file's function table holds the address, so that a reader maps ids
 * back, live or after a crash, without the events that defined them; a
 * rip:fn {id, addr} event goes out too, the first time, for readers of a
 * recorded trace.  The hooks find an id through a hash table of this
 * process (rip_fn_hash, in .bss: untouched pages cost nothing), whose
 * entries pack the address and the id into one word, taken with a CAS so
 * that threads and signal handlers never wait for each other.  A full
 * table gives id 0 (counted in fn_full).
 *
 * The hooks take no lock, make no system call but once per page of
 * stacks, and allocate nothing; they are not instrumented themselves
 * (this file is built without -finstrument-functions, and they say so).
 * On x86-64 the file is built with -mgeneral-regs-only: the fast paths of
 * patched entries and exits (patch.c's trampolines) are here, and run
 * with the vector registers of the function's arguments and return value
 * unsaved.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define __nofn __attribute__((no_instrument_function))
#define __fninline __nofn __attribute__((always_inline)) inline

/*
 * A program linked with librip.a takes func.o for its hooks: this brings
 * nop.o too, whose constructor turns the hook calls into nops when
 * function tracing is off (nothing else refers to it).
 */
static const char *const rip_fn_nop_ref __attribute__((used)) = &__rip_fn_nop_linked;

/*
 * Words above the hook's frame where the instrumented function's return
 * address is looked for first; its frame (saved registers, locals) is
 * rarely bigger at the call of the hook.  A bigger one is looked up in
 * rip_fn_big (its distance, as found before, checked), else looked for:
 * up to the frame below's cfa when there is one (rip_fn_in), else up to
 * RIP_FN_SCAN_MAX words; past that, the cfa is taken RIP_FN_SCAN words up
 * (below the real one: a frame that can only look alive).
 */
#define RIP_FN_SCAN 24u
#define RIP_FN_SCAN_MAX 4096u /* 32 KiB */
/* The hook call sites' distances to the return address (rip_fn_kc): 2^N of them, two a bucket. */
#define RIP_FN_KC_BITS 12
/* A hook call's entry there whose distance changed (rip_fn_kc_put): at least RIP_FN_SCAN. */
#define RIP_FN_KC_MOVED 0xffffu
#define RIP_FN_BIG_BITS 12
#define RIP_FN_BIG_PROBES 16u
/* A frame's fn word: the address, and in the top bits the words from the hook's frame to cfa. */
#define RIP_FN_ADDR_BITS 48
#define RIP_FN_ADDR_MASK ((1ull << RIP_FN_ADDR_BITS) - 1)
/*
 * The top bits of a patched entry's frame (patch.c; its exit knows its cfa,
 * no words to count): PATCHED, and REC when its entry's record was written,
 * so that a frame dropped without its exit gets the exit's record iff its
 * entry had one, whatever the func category is then (rip_fn_dropped).
 */
#define RIP_FN_K_PATCHED 0x8000u
#define RIP_FN_K_REC 0x4000u
/*
 * The top bits of a hooks' frame whose entry's record was written (the
 * distance below RIP_FN_SCAN_MAX): its exit's is iff.  The exit's fast path
 * then finds no frame at that distance and leaves it to the slow path,
 * which writes the record (all timed records are out of line): an exit
 * tests no category.
 */
#define RIP_FN_K_CREC 0x2000u
/* A frame's distance in words from its hook's frame to its cfa (patched frames: none of use). */
#define RIP_FN_K(x) ((uint32_t)((x) >> RIP_FN_ADDR_BITS) & ~RIP_FN_K_CREC)
/* An entry this far above the outermost frame is on another stack (rip_fn_resync). */
#define RIP_FN_FAR (64u << 10)
/*
 * How far above the hook's frame an out-of-line entry reads, up to the
 * frame below's cfa: within a page, the words lie in the hook's page and
 * the one that holds the frame below's return address, both mapped.  A
 * frame below on another stack is further: a guard page lies between.
 */
#define RIP_FN_NEAR 4096u
/*
 * The levels past the frames kept whose entries' records are kept track
 * of, a bit each, per stack (rip_fn.deep); past them, a call's records are
 * written iff the deepest tracked level's entry's was (rip_fn_push_deep).
 */
#define RIP_FN_DEEP_BITS 4096u
#define RIP_FN_DEEP_WORDS (RIP_FN_DEEP_BITS / 64)

/* Function ids: at most RIP_FN_IDS, in a hash table of twice as many entries. */
#define RIP_FN_ID_BITS 17
#define RIP_FN_IDS ((1u << RIP_FN_ID_BITS) - 1)
#define RIP_FN_HASH_BITS (RIP_FN_ID_BITS + 1)
#define RIP_FN_HASH_SIZE (1u << RIP_FN_HASH_BITS)
#define RIP_FN_PROBES 64u

/*
 * The stack of the slot this thread runs (__rip_self.cur), as last worked
 * out; NULL when cur moved since, or when there is none to keep (no ring,
 * no area, a dummy slot): the hooks test one word of the thread's block,
 * not the slot it was worked out for against cur (two loads and a compare
 * less on every call; doc/design.md, "A sixth look").
 */
static __fninline struct rip_fn_stack *rip_fn_cached(void)
{
	return (struct rip_fn_stack *)__rip_self.fn_stack;
}

static struct {
	struct rip_file_hdr *h; /* the file whose stacks the hooks keep; NULL: off (acquire) */
	uint64_t *backed;	/* a bit per page of the stack area that is backed */
	size_t backed_words;
	/*
	 * Per stack index, RIP_FN_DEEP_WORDS words: bit l of a stack's is set
	 * when the entry of its level RIP_FN_DEPTH + l (from 0) wrote its record.
	 * For the first file's slots (deep_n, set before rip_fn.h); mapped when
	 * a stack first goes past the frames kept (rip_fn_deep_map), so that a
	 * program that never does has no such mapping; RIP_FN_DEEP_NONE when
	 * that failed.
	 */
	uint64_t *deep;
	size_t deep_n;
} rip_fn;

/* addr << RIP_FN_ID_BITS | id; 0: empty. */
static uint64_t rip_fn_hash[RIP_FN_HASH_SIZE];

/*
 * Frames bigger than RIP_FN_SCAN words: addr << 16 | words from the hook's
 * frame to the return address, addr the return address of the hook's call
 * (an entry with the frame below known, rip_fn_in) or the function
 * (rip_fn_far).
 */
static uint64_t rip_fn_big[1u << RIP_FN_BIG_BITS];

/*
 * Code without frame pointers: for each call of a hook (by its return
 * address ra), the words from the hook's frame to the function's return
 * address, as found the first time: ra << 16 | k, 0 empty.  The function's
 * frame is the same at every pass through one call, and its locals, not
 * yet set when the hook is called, may hold a copy of the return address
 * an earlier call left there (the exit hook runs in the frame a tail call
 * to it has left, and a PLT's resolver, a signal frame or our slow paths
 * write below it): the scan would take that copy for the real one.  A
 * bucket is two entries in one line, the newest first.
 */
static uint64_t rip_fn_kc[1u << RIP_FN_KC_BITS] __attribute__((aligned(64)));

/* ---- the built-in types ------------------------------------------------------------- */

static uint32_t rip_fn_entry_id = RIP_EV_FN_ENTRY;
static uint32_t rip_fn_exit_id = RIP_EV_FN_EXIT;
static uint32_t rip_fn_def_id = RIP_EV_FN;

const struct rip_event_type __rip_fn_entry_type = {
	.name = "rip:fn_entry",
	.category = RIP_CAT_FUNC,
	.nfields = 1,
	.fields = { RIP_FIELD(U32, "fn") },
	.id = &rip_fn_entry_id,
};

const struct rip_event_type __rip_fn_exit_type = {
	.name = "rip:fn_exit",
	.category = RIP_CAT_FUNC,
	.nfields = 1,
	.fields = { RIP_FIELD(U32, "fn") },
	.id = &rip_fn_exit_id,
};

const struct rip_event_type __rip_fn_def_type = {
	.name = "rip:fn",
	.category = RIP_CAT_FUNC,
	.nfields = 2,
	.fields = { RIP_FIELD(U32, "id"), RIP_FIELD(HEX64, "addr") },
	.id = &rip_fn_def_id,
};

/*
 * A call open when the trace began: what a forked child's trace starts with,
 * for each frame of its stack whose entry's record was written (the parent's
 * trace has the entry, the child's the exit).  Registered by the first
 * child that needs it: the fixed ids are the hooks' only.
 */
static uint32_t rip_fn_open_id = UINT32_MAX;

static const struct rip_event_type rip_fn_open_type = {
	.name = "rip:fn_open",
	.category = RIP_CAT_FUNC,
	.nfields = 1,
	.fields = { RIP_FIELD(U32, "fn") },
	.id = &rip_fn_open_id,
};

/* ---- the file ------------------------------------------------------------------------ */

/* RIP_FUNCTIONS=0 turns function tracing off: the file has no area, the hooks return. */
static bool rip_fn_env_on(void)
{
	const char *s = secure_getenv("RIP_FUNCTIONS");

	return !s || strcmp(s, "0") != 0;
}

/* RIP_FUNCTION_IDS: entries of the function table, 1 to RIP_FN_IDS (the default). */
static uint32_t rip_fn_env_ids(void)
{
	const char *s = secure_getenv("RIP_FUNCTION_IDS");
	char *end;
	unsigned long v;

	if (!s || !*s)
		return RIP_FN_IDS;
	v = strtoul(s, &end, 10);
	return *end || !v || v > RIP_FN_IDS ? RIP_FN_IDS : (uint32_t)v;
}

size_t __rip_fn_layout(struct rip_file_hdr *h, size_t off, uint32_t slots, bool sparse)
{
	h->fn_off = 0;
	h->fn_size = 0;
	h->fn_ids = 0;
	h->fn_tab_off = 0;
	/* Only a sparse file: one backed all at once would pay for every stack. */
	if (!sparse || !rip_fn_env_on())
		return off;
	h->fn_off = off = (off + 4095) & ~(size_t)4095;
	h->fn_size = RIP_FN_STACK_SIZE;
	off += (size_t)slots * RIP_FN_STACK_SIZE;
	h->fn_tab_off = off = (off + 4095) & ~(size_t)4095;
	h->fn_ids = rip_fn_env_ids();
	return off + (size_t)h->fn_ids * sizeof(uint64_t);
}

void __rip_fn_open(struct rip_file_hdr *h)
{
	size_t pages, words;
	uint64_t *b;

	if (!h->fn_off || h->fn_size != RIP_FN_STACK_SIZE)
		return;
	pages = ((size_t)h->slot_count * RIP_FN_STACK_SIZE + __rip_proc.page - 1) / __rip_proc.page;
	words = (pages + 63) / 64;
	/* The system call: the preload library's hooks must not see the tracer's mmap. */
	b = (uint64_t *)syscall(SYS_mmap, NULL, words * 8, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED)
		return;
	/* The ids of an earlier file (closed, then another opened) mean nothing in this one. */
	if (rip_fn.backed)
		memset(rip_fn_hash, 0, sizeof(rip_fn_hash));
	rip_fn.backed = b;
	rip_fn.backed_words = words;
	if (!rip_fn.deep_n)
		rip_fn.deep_n = h->slot_count; /* the first file's: rip_fn_deep_map */
	/* The bitmaps before the file: pairs with the acquire load of h in the slow path. */
	__atomic_store_n(&rip_fn.h, h, __ATOMIC_RELEASE);
}

void __rip_fn_close(void)
{
	/* The bitmap stays: a hook may still be reading it. */
	__atomic_store_n(&rip_fn.h, NULL, __ATOMIC_RELEASE);
}

/*
 * A forked child's copy (fd, laid out as h): the stacks of the slots in use
 * whose pages the parent backed (the others are holes, and reading them
 * would back them in the parent's file), and the function table so far.
 */
int __rip_fn_fork_copy(int fd, struct rip_file_hdr *h, uint32_t used,
		       int (*write_all)(int fd, const void *buf, size_t len, off_t off))
{
	size_t page = __rip_proc.page, per = page / RIP_FN_STACK_SIZE;
	uint32_t n = __atomic_load_n(&h->fn_count, __ATOMIC_RELAXED);

	if (!h->fn_off || !rip_fn.backed || !per)
		return 0;
	for (size_t p = 0; p * per < used && p / 64 < rip_fn.backed_words; p++) {
		if (!(rip_fn.backed[p / 64] & (1ull << (p % 64))))
			continue;
		if (write_all(fd, (char *)h + h->fn_off + p * page, page,
			      (off_t)(h->fn_off + p * page)))
			return -1;
	}
	if (n > h->fn_ids)
		n = h->fn_ids;
	/* The table's pages are backed as ids are handed out: [0, n) are. */
	if (n && write_all(fd, (char *)h + h->fn_tab_off, (size_t)n * sizeof(uint64_t),
			   (off_t)h->fn_tab_off))
		return -1;
	return 0;
}

/* ---- shadow stacks ------------------------------------------------------------------- */

/*
 * The stack of slot *sp, the one the thread runs now (NULL when none is
 * kept: the ring is closed, the file has no area, the slot is a dummy, or
 * its page cannot be backed).  Attaches a thread that has no slot yet, when
 * a ring is open (*sp: the slot it got).
 */
static __nofn struct rip_fn_stack *rip_fn_stack_slow_on(struct rip_file_hdr *h,
							struct rip_slot **sp)
{
	struct rip_slot *s = *sp;
	struct rip_fn_stack *st;
	size_t i, page, bit;
	uint32_t owner;

	if (!h)
		return NULL;
	if (!s) {
		/* Pairs with the release store of the file in rip_ring_open: one is open. */
		if (!__atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE))
			return NULL;
		__rip_attach_slow();
		*sp = s = __rip_self.cur;
	}
	if (!s || (__rip_self.flags & RIP_SELF_DUMMY) || h != __rip_proc.hdr)
		return NULL;
	i = (size_t)((char *)s - ((char *)h + h->slot_off)) >> RIP_SLOT_SHIFT;
	if ((char *)s < (char *)h + h->slot_off || i >= h->slot_count)
		return NULL; /* a dummy slot (a coroutine of a closed file) */
	page = i * RIP_FN_STACK_SIZE / __rip_proc.page;
	bit = 1ull << (page % 64);
	if (page / 64 >= rip_fn.backed_words)
		return NULL;
	/* Relaxed: a hint; a page backed twice costs one more system call. */
	if (!(__atomic_load_n(&rip_fn.backed[page / 64], __ATOMIC_RELAXED) & bit)) {
		if (__rip_commit(h, h->fn_off + i * RIP_FN_STACK_SIZE, RIP_FN_STACK_SIZE))
			return NULL; /* tmpfs full: no stack for this slot */
		__atomic_fetch_or(&rip_fn.backed[page / 64], bit, __ATOMIC_RELAXED);
	}
	st = (struct rip_fn_stack *)((char *)h + h->fn_off + i * RIP_FN_STACK_SIZE);
	owner = (uint32_t)__atomic_load_n(&s->attach_ts, __ATOMIC_RELAXED);
	if (st->owner != owner) {
		/* A new owner: its stack starts empty; readers take it once owner matches (release). */
		__atomic_store_n(&st->state, 0, __ATOMIC_RELAXED);
		st->resync = 0;
		__atomic_store_n(&st->owner, owner, __ATOMIC_RELEASE);
	}
	return st;
}

static __nofn __attribute__((noinline)) struct rip_fn_stack *rip_fn_stack_slow(void)
{
	struct rip_file_hdr *h = __atomic_load_n(&rip_fn.h, __ATOMIC_ACQUIRE);
	int saved = errno; /* the program's: an attach or a page backed may set it */
	struct rip_slot *s = __rip_self.cur;
	struct rip_fn_stack *st;

	st = rip_fn_stack_slow_on(h, &s);
	/*
	 * Cached while cur is still the slot it is of: cur read again after the
	 * work (a signal fence: a handler on this thread may have moved it, and
	 * cleared the cache, meanwhile).
	 */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (st && __rip_self.cur == s)
		__rip_self.fn_stack = st;
	errno = saved;
	return st;
}

/* The distance rip_fn_big keeps for key a (a function, or a hook's return address); 0: none. */
static __nofn uint32_t rip_fn_big_get(uintptr_t a)
{
	uint32_t h = (uint32_t)((a * 0x9E3779B97F4A7C15ull) >> (64 - RIP_FN_BIG_BITS)), i;
	uint64_t want = (uint64_t)a << 16, e;

	for (i = 0; i < RIP_FN_BIG_PROBES; i++) {
		e = __atomic_load_n(&rip_fn_big[(h + i) & ((1u << RIP_FN_BIG_BITS) - 1)],
				    __ATOMIC_RELAXED);
		if (!e)
			break;
		if ((e & ~0xffffull) == want)
			return (uint32_t)(e & 0xffff);
	}
	return 0;
}

/* Keep distance k (RIP_FN_SCAN to RIP_FN_SCAN_MAX - 1) for key a. */
static __nofn void rip_fn_big_put(uintptr_t a, uint32_t k)
{
	uint32_t h = (uint32_t)((a * 0x9E3779B97F4A7C15ull) >> (64 - RIP_FN_BIG_BITS));
	uint64_t want = (uint64_t)a << 16;

	if (a >> 48)
		return;
	/* A signal handler's insert may race ours: the same value, or another slot. */
	for (uint32_t n = 0; n < RIP_FN_BIG_PROBES; n++) {
		uint64_t *slot = &rip_fn_big[(h + n) & ((1u << RIP_FN_BIG_BITS) - 1)];
		uint64_t old = __atomic_load_n(slot, __ATOMIC_RELAXED);

		if ((old & ~0xffffull) == want) {
			/* Relaxed: the entry is all it says; a stale distance is checked before use. */
			__atomic_store_n(slot, want | k, __ATOMIC_RELAXED);
			break;
		}
		if (!old && __atomic_compare_exchange_n(slot, &old, want | k, false,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
	}
}

/*
 * Where the return address of function fn is, RIP_FN_SCAN words or more
 * above p: as far as the last time (rip_fn_big), else looked for.  The
 * words from p, or RIP_FN_SCAN when not found.
 */
static __nofn __attribute__((noinline)) uint32_t rip_fn_far(const uintptr_t *p, uintptr_t site,
							    uintptr_t fn)
{
	uint32_t e = rip_fn_big_get(fn), i;

	if (e && p[e] == site)
		return e;
	for (i = RIP_FN_SCAN; i < RIP_FN_SCAN_MAX; i++)
		if (p[i] == site)
			break;
	if (i == RIP_FN_SCAN_MAX)
		return RIP_FN_SCAN;
	rip_fn_big_put(fn, i);
	return i;
}

/*
 * The bucket of the hook call returning to ra: by the address's bits 4 to
 * 14, which costs the hooks one instruction (a hash, three).  The hooks'
 * calls are a function's first call (its entry's) and spread as the
 * functions do; two in one 16-byte line of code share a bucket.
 */
static __fninline uint64_t *rip_fn_kc_at(uintptr_t ra)
{
	return (uint64_t *)((char *)rip_fn_kc + (ra & (sizeof(rip_fn_kc) - 16)));
}

/*
 * The distance learned for the hook call returning to ra, checked against
 * p: the bucket's first entry only (the fast path; RIP_FN_SCAN or more:
 * none).  e ^ ra << 16 is k when the entry is ra's, else at least 2^16.
 */
static __fninline uint64_t rip_fn_kc_first(const uintptr_t *p, uintptr_t ra, uintptr_t site)
{
	/* Relaxed: an entry is whole (one word) and checked against the stack before use. */
	uint64_t x = __atomic_load_n(rip_fn_kc_at(ra), __ATOMIC_RELAXED) ^ (uint64_t)ra << 16;

	/* x < RIP_FN_SCAN: rip_fn_kc_put writes no other k */
	return RIP_LIKELY(x < RIP_FN_SCAN && p[x] == site) ? x : RIP_FN_SCAN;
}

/* The same in both entries of the bucket; RIP_FN_SCAN: none. */
static __nofn uint32_t rip_fn_kc_get(const uintptr_t *p, uintptr_t ra, uintptr_t site)
{
	const uint64_t *b = rip_fn_kc_at(ra);
	uint64_t x = rip_fn_kc_first(p, ra, site);

	if (x < RIP_FN_SCAN)
		return (uint32_t)x;
	x = __atomic_load_n(&b[1], __ATOMIC_RELAXED) ^ (uint64_t)ra << 16;
	return x < RIP_FN_SCAN && p[x] == site ? (uint32_t)x : RIP_FN_SCAN;
}

/*
 * Learn k for the hook call returning to ra, first in its bucket (the fast
 * path looks there).  A call whose distance changed (an alloca or a VLA
 * before the call of an inlined function's hook) is marked, and never
 * taken from the table again: the frame pointer or the scan then find it
 * each time, rather than a check that a stale copy of the return address
 * at the old distance could pass.
 */
static __nofn void rip_fn_kc_put(uintptr_t ra, uint32_t k)
{
	uint64_t *b = rip_fn_kc_at(ra);
	uint64_t old, o1;

	if (ra >> 48 || k >= RIP_FN_SCAN)
		return;
	old = __atomic_load_n(&b[0], __ATOMIC_RELAXED);
	/* Racing writers (threads, a signal handler) leave one entry or the other: both checked. */
	if (old >> 16 == ra) {
		if ((old & 0xffff) != k)
			__atomic_store_n(&b[0], (uint64_t)ra << 16 | RIP_FN_KC_MOVED,
					 __ATOMIC_RELAXED);
		return;
	}
	o1 = __atomic_load_n(&b[1], __ATOMIC_RELAXED);
	if (o1 >> 16 == ra && (o1 & 0xffff) != k)
		k = RIP_FN_KC_MOVED;
	__atomic_store_n(&b[1], old, __ATOMIC_RELAXED);
	__atomic_store_n(&b[0], (uint64_t)ra << 16 | k, __ATOMIC_RELAXED);
}

/*
 * The cfa of the instrumented function fn that called the hook whose own
 * cfa is p: one word above its return address, site, looked for upwards;
 * *k gets how many words up it was.  Of several copies of site in the
 * first RIP_FN_SCAN words, the highest that puts the cfa at or below bound
 * (the frame below's: the caller's, which the function's cannot pass, and
 * reaches only when the function was inlined into it), as the real one is
 * above copies left in the function's locals (rip_fn_kc).  Past the first
 * copy, only words known mapped are read: up to a bound within
 * RIP_FN_NEAR (rip_fn_in), else those of the first copy's page.  The
 * function may be the outermost of its stack: a coroutine's, switched to
 * by hand (libcoro's CORO_ASM, boost.context), whose top may have an
 * unmapped page above it.  A copy taken for the real one is below it, and
 * can only make the frame look alive.
 */
static __nofn uintptr_t rip_fn_cfa(const uintptr_t *p, uintptr_t site, uintptr_t fn,
				   uintptr_t bound, uint32_t *k)
{
	uint32_t i, j;
	uintptr_t end;

	for (i = 0; i < RIP_FN_SCAN; i++)
		if (p[i] == site)
			break;
	if (RIP_UNLIKELY(i == RIP_FN_SCAN)) {
		i = rip_fn_far(p, site, fn);
	} else {
		end = bound - (uintptr_t)p <= RIP_FN_NEAR ?
			      bound :
			      ((uintptr_t)(p + i) | (RIP_FN_NEAR - 1)) + 1;
		for (j = i + 1; j < RIP_FN_SCAN && (uintptr_t)(p + j + 1) <= end; j++)
			if (p[j] == site)
				i = j;
	}
	*k = i;
	return (uintptr_t)(p + i + 1);
}

static void rip_fn_record(const struct rip_event_type *t, uint32_t ev, uintptr_t fn);
static __nofn __attribute__((noinline)) void rip_fn_record_id(const struct rip_event_type *t,
							      uint32_t ev, uint32_t id);

/* An entry of the hooks, for rip_fn_inlined (ra: the return address of its call of the hook). */
struct rip_fn_inl {
	uintptr_t fn, site, ra;
	uint32_t k;
};

/* Was the entry's record of the frame whose fn word is x written (RIP_FN_K_REC, RIP_FN_K_CREC)? */
static __fninline bool rip_fn_frame_rec(uint64_t x)
{
	uint32_t k = (uint32_t)(x >> RIP_FN_ADDR_BITS);

	return k & (k & RIP_FN_K_PATCHED ? RIP_FN_K_REC : RIP_FN_K_CREC);
}

#define RIP_FN_DEEP_NONE ((uint64_t *)1)

/*
 * rip_fn.deep, mapped now if it is not yet (the first stack past the
 * frames kept): deep_n stacks' bits, backed as they are used; NULL when
 * the mapping failed (RIP_FN_DEEP_NONE from then on, not tried again: the
 * levels' records go by the category).  Threads and signal handlers that
 * race here each map, one installs its own, the others unmap theirs.
 */
static __nofn __attribute__((noinline)) uint64_t *rip_fn_deep_map(void)
{
	size_t len = rip_fn.deep_n * RIP_FN_DEEP_WORDS * sizeof(uint64_t);
	int saved = errno; /* the program's */
	uint64_t *b, *old = NULL;

	b = (uint64_t *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!len || b == MAP_FAILED)
		b = RIP_FN_DEEP_NONE;
	/* Pairs with the acquire loads in rip_fn_deep_bits: the zero pages before the pointer. */
	if (!__atomic_compare_exchange_n(&rip_fn.deep, &old, b, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		if (b != RIP_FN_DEEP_NONE)
			syscall(SYS_munmap, b, len);
		b = old;
	}
	errno = saved;
	return b == RIP_FN_DEEP_NONE ? NULL : b;
}

/*
 * The bits of st in rip_fn.deep, by its index in the hooks' file; NULL
 * when there are none (not mapped, or st is no stack of that file: one
 * closed, or a later file with more slots than the first).
 */
static __fninline uint64_t *rip_fn_deep_bits(const struct rip_fn_stack *st)
{
	/* Acquire: pairs with the release store of h, after rip_fn.deep_n was set. */
	const struct rip_file_hdr *h = __atomic_load_n(&rip_fn.h, __ATOMIC_ACQUIRE);
	uint64_t *b;
	size_t i;

	if (!h)
		return NULL;
	i = (size_t)((const char *)st - ((const char *)h + h->fn_off)) / RIP_FN_STACK_SIZE;
	if (i >= rip_fn.deep_n || i >= h->slot_count)
		return NULL;
	/* Acquire: pairs with the install in rip_fn_deep_map. */
	b = __atomic_load_n(&rip_fn.deep, __ATOMIC_ACQUIRE);
	if (RIP_UNLIKELY(!b))
		b = rip_fn_deep_map();
	return b && b != RIP_FN_DEEP_NONE ? b + i * RIP_FN_DEEP_WORDS : NULL;
}

/*
 * At the exit of level d - 1 of st, past the frames kept (before it is
 * popped: a signal handler's entries may then reuse its bit): was its
 * entry's record written (rip_fn_push_deep)?  With no bits, the category
 * says, as at its entry.
 */
static __fninline bool rip_fn_deep_rec(const struct rip_fn_stack *st, uint32_t d)
{
	const uint64_t *b = rip_fn_deep_bits(st);
	uint32_t l = d - 1 - RIP_FN_DEPTH;

	if (RIP_UNLIKELY(!b))
		return rip_category_enabled(RIP_CAT_FUNC);
	if (RIP_UNLIKELY(l >= RIP_FN_DEEP_BITS))
		l = RIP_FN_DEEP_BITS - 1;
	return b[l / 64] >> (l % 64) & 1;
}

/*
 * Frames [lo, hi) of st are dropped without their exits: write the exits
 * of those whose entries were written (innermost first), so that a trace
 * pairs every entry it has with an exit, where the hooks saw it end,
 * whatever the func category is now.
 */
static __nofn void rip_fn_dropped(const struct rip_fn_stack *st, uint32_t lo, uint32_t hi)
{
	while (hi-- > lo) {
		uint64_t x = st->frame[hi].fn;

		if (rip_fn_frame_rec(x))
			rip_fn_record(&__rip_fn_exit_type, RIP_EV_FN_EXIT,
				      (uintptr_t)(x & RIP_FN_ADDR_MASK));
	}
}

/*
 * Levels (lo, hi] of st, past the frames kept, are dropped without their
 * exits (a longjmp or an exception out of them): their functions are not
 * kept, so when any of them wrote its entry's record, write one exit of
 * RIP_FN_ID_DEEP, which tells a reader that every call it has open past
 * the RIP_FN_DEPTH outermost ends here.  Without it a reader paired the
 * exits that rip_fn_dropped writes next, of the kept frames, with calls of
 * the same functions among the levels dropped (a recursion), and ended the
 * kept frames' calls later, where it met an exit below them.  One record
 * and not one a level: a longjmp from one level past the frames kept to
 * another leaves the levels between counted in the depth (nothing tells
 * where it landed), so hi may count levels that are gone already.
 */
static __nofn void rip_fn_dropped_deep(const struct rip_fn_stack *st, uint32_t lo, uint32_t hi)
{
	for (; hi > lo; hi--)
		if (rip_fn_deep_rec(st, hi)) {
			rip_fn_record_id(&__rip_fn_exit_type, RIP_EV_FN_EXIT, RIP_FN_ID_DEEP);
			return;
		}
}

/*
 * The thread exits (its key's destructor: rip_thread_exit) inside calls
 * that never return: pthread_exit, or a cancellation, from a traced
 * function of C built without -fexceptions (no cleanup calls the exit
 * hooks).  Their exits are written now, innermost first, as for frames a
 * jump drops: else a reader ran them on to the end of the trace (25
 * threads that lived a few microseconds were charged 75 s in a 3 s run).
 * Only the thread's own stack, cached (a thread that ran no traced
 * function has none worked out, and none is backed for it now); left as
 * it is, for rip ps of the exited thread.
 */
void __rip_fn_thread_exit(void)
{
	struct rip_fn_stack *st = rip_fn_cached();
	uint32_t d;

	if (!st || __rip_self.cur != __rip_self.thread)
		return;
	d = RIP_FN_STATE_DEPTH(__atomic_load_n(&st->state, __ATOMIC_RELAXED)); /* ours */
	if (d > RIP_FN_DEPTH)
		rip_fn_dropped_deep(st, RIP_FN_DEPTH, d);
	rip_fn_dropped(st, 0, d < RIP_FN_DEPTH ? d : RIP_FN_DEPTH);
}

/*
 * Is the entry inl, from the frame of cfa the top frame of st (d levels)
 * has too, a function inlined into that frame's (or into the function it
 * was inlined into)?  gcc and clang call the hooks of an inlined function
 * from the frame it was inlined into: the same cfa, the same call site.  A
 * frame of the same cfa is otherwise a call that was jumped out of (a
 * longjmp, an exception) and this a new call from the same frame of the
 * caller.  A new call made by a direct call has, just before its return
 * address, a call of fn; an inlined one has there the call of the function
 * it went into (read only within site's page, which is mapped: the code
 * returns there).  Any other call (through a pointer or a PLT) is taken
 * for an inlined one when its frame is as far above the hook as the top
 * frame's (k): one frame; or when the hook was called from the code of a
 * function of that cfa: one of them starts nearer below the hook call's
 * return address ra than fn does.  A new call of fn calls the hook from
 * fn's own code, just past fn's start, where no other function starts;
 * an inlined one from the code of the function it went into, whose frame
 * the stack it moved since (the arguments of a call pushed, an alloca)
 * puts at another k.  The same function again is a new call (a recursion
 * the compiler inlined loses a level).
 */
static __nofn bool rip_fn_inlined(const struct rip_fn_stack *st, uint32_t d,
				  const struct rip_fn_inl *inl)
{
	const struct rip_fn_frame *f = &st->frame[d - 1];
	uintptr_t fn = inl->fn, site = inl->site;
	int32_t rel;

	if ((f->fn & RIP_FN_ADDR_MASK) == fn)
		return false;
	if (site % 4096 >= 5 && *(const uint8_t *)(site - 5) == 0xe8) {
		memcpy(&rel, (const void *)(site - 4), sizeof(rel)); /* call rel32 */
		return site + (uintptr_t)(intptr_t)rel != fn;
	}
	if (RIP_FN_K(f->fn) == inl->k)
		return true;
	for (; d && st->frame[d - 1].cfa == f->cfa; d--)
		if (inl->ra - (st->frame[d - 1].fn & RIP_FN_ADDR_MASK) < inl->ra - fn)
			return true;
	return false;
}

/*
 * Are frames of st (d levels) gone, or the same cfa, at an entry whose cfa
 * is cfa: is the top frame's cfa at or below it?  Deeper than the frames
 * kept, the deepest kept frame's: a live frame past it has its cfa below
 * it, so an entry at or above it comes after a longjmp or an exception
 * out of the levels not kept (0 levels: nothing to drop).
 */
static __fninline bool rip_fn_below(const struct rip_fn_stack *st, uint32_t d, uintptr_t cfa)
{
	return d - 1 < RIP_FN_DEPTH ? st->frame[d - 1].cfa <= cfa :
				      d && st->frame[RIP_FN_DEPTH - 1].cfa <= cfa;
}

/*
 * Pop the frames that are gone at an entry whose cfa is cfa; the new state.
 * Frames of that very cfa go too, unless inl says they are the frame the
 * entering function was inlined into (rip_fn_inlined).  An entry far above
 * the outermost frame is on another stack (a signal handler on an
 * alternate stack, coroutines switched without librip): its frames go on
 * top, and nothing is popped.
 */
static __nofn uint64_t rip_fn_resync_to(struct rip_fn_stack *st, uint64_t w, uintptr_t cfa,
					const struct rip_fn_inl *inl)
{
	uint32_t d = RIP_FN_STATE_DEPTH(w), drop = 0, deep = 0;

	if (cfa - st->frame[0].cfa < (1ull << 63) && cfa - st->frame[0].cfa > RIP_FN_FAR)
		return w;
	if (d > RIP_FN_DEPTH && st->frame[RIP_FN_DEPTH - 1].cfa <= cfa) {
		/*
		 * At the deepest kept frame's own cfa, the entering function may be
		 * inlined into a level past it that was inlined into that frame too:
		 * then those levels live on (a recursion whose callees are inlined
		 * into each level's function, at the 63rd level).
		 */
		if (st->frame[RIP_FN_DEPTH - 1].cfa == cfa && inl &&
		    rip_fn_inlined(st, RIP_FN_DEPTH, inl))
			return w;
		/* The levels past the frames kept are gone: their functions unknown. */
		deep = d - RIP_FN_DEPTH;
		d = RIP_FN_DEPTH;
	}
	while (d && d <= RIP_FN_DEPTH && st->frame[d - 1].cfa < cfa) {
		d--;
		drop++;
	}
	if (d && d <= RIP_FN_DEPTH && st->frame[d - 1].cfa == cfa &&
	    !(inl && rip_fn_inlined(st, d, inl))) {
		while (d && st->frame[d - 1].cfa == cfa) {
			d--;
			drop++;
		}
	}
	if (!drop && !deep)
		return w;
	/*
	 * Only with a kept frame: levels past them of the very cfa of the
	 * deepest kept frame may be functions inlined into it, alive.
	 */
	if (deep && drop)
		rip_fn_dropped_deep(st, RIP_FN_DEPTH, RIP_FN_DEPTH + deep);
	rip_fn_dropped(st, d, d + drop);
	st->resync += drop + deep;
	w -= drop + deep;
	/* Readers see the shorter stack before any frame above it is rewritten. */
	__atomic_store_n(&st->state, w, __ATOMIC_RELEASE);
	return w;
}

/* At an entry that is no inlined function's (a patched entry) or a catch: frames at or below cfa go. */
static __nofn __attribute__((noinline)) uint64_t rip_fn_resync(struct rip_fn_stack *st, uint64_t w,
							       uintptr_t cfa)
{
	return rip_fn_resync_to(st, w, cfa, NULL);
}

/* At the entry of fn from the hooks (its frame k words above the hook's, its return address site). */
static __nofn __attribute__((noinline)) uint64_t rip_fn_resync_entry(struct rip_fn_stack *st,
								     uint64_t w, uintptr_t fn,
								     uintptr_t cfa, uint32_t k,
								     uintptr_t site)
{
	/* The hook's return address, just under its cfa: k + 1 words below fn's. */
	const struct rip_fn_inl inl = {
		.fn = fn, .site = site, .ra = ((const uintptr_t *)cfa)[-(ptrdiff_t)k - 2], .k = k
	};

	return rip_fn_resync_to(st, w, cfa, &inl);
}

/*
 * Is frame f that of the function leaving now, whose exit hook has its
 * own cfa at p?  Its cfa is as far above p as at the entry (the hook
 * called from the same frame), or p itself when the function jumped to
 * the hook after its epilogue (tail).  Either, when tail: a function gcc
 * split (partial inlining) has its entry's hook called from the frame its
 * first part went into and its exit's jumped to by its out-of-line part,
 * whose cfa is the first hook's own, the frame's distance below it.
 */
static __fninline bool rip_fn_exit_match(const struct rip_fn_frame *f, const uintptr_t *p,
					 bool tail)
{
	return f->cfa == (uintptr_t)(p + RIP_FN_K(f->fn) + 1) || (tail && f->cfa == (uintptr_t)p);
}

/*
 * The depth, at most d, of the nearest frame of fn whose return address
 * site is still just under its cfa, within RIP_FN_NEAR above p (the words
 * read lie in mapped pages, as rip_fn_in's); 0: none.  For an exit whose
 * frame an alloca moved off its entry's distance: rip_fn_cfa would take
 * the highest copy of site within its scan, which may lie in the caller's
 * frame (funcprog movedkeep).
 */
static __nofn uint32_t rip_fn_exit_moved(const struct rip_fn_stack *st, uint32_t d, uintptr_t fn,
					 const uintptr_t *p, uintptr_t site)
{
	for (; d; d--) {
		const struct rip_fn_frame *f = &st->frame[d - 1];

		if ((f->fn & RIP_FN_ADDR_MASK) == fn && f->cfa > (uintptr_t)p &&
		    f->cfa - (uintptr_t)p <= RIP_FN_NEAR && ((const uintptr_t *)f->cfa)[-1] == site)
			break;
	}
	return d;
}

/*
 * An exit the fast path could not match: if the leaving function's frame
 * is on the stack, pop it and the frames above it (their exits never
 * came); else the exit has no frame here (entered before the thread had a
 * slot, dropped already, or a frame of another stack): nothing moves.
 * Whether the exit's record is to be written: its frame's entry's was
 * (rip_fn_frame_rec), or for a level past the frames kept the func
 * category's; -1 when nothing moved.
 */
static __nofn __attribute__((noinline)) int rip_fn_exit_slow(struct rip_fn_stack *st, uint64_t w,
							     uintptr_t fn, const uintptr_t *p,
							     uintptr_t site, bool tail)
{
	uint32_t d = RIP_FN_STATE_DEPTH(w), k, drop;
	uintptr_t cfa = (uintptr_t)p;

	if (d > RIP_FN_DEPTH) {
		/*
		 * Deeper than the frames kept: the leaving function's frame is one of
		 * them or none.  An exit jumped to (tail) has the function's own cfa:
		 * a kept frame as far above it as its entry's hook was is its caller,
		 * the same function in a recursion (whose callee's cfa is the sp the
		 * caller's entry hook had), not a split function's frame.
		 */
		for (k = RIP_FN_DEPTH; k; k--) {
			const struct rip_fn_frame *f = &st->frame[k - 1];

			if ((f->fn & RIP_FN_ADDR_MASK) == fn &&
			    (tail ? f->cfa == cfa : rip_fn_exit_match(f, p, false)))
				break;
		}
		if (!k) {
			/* A level not kept: nothing to check against; its record iff its entry's. */
			bool rec = rip_fn_deep_rec(st, d);

			__atomic_store_n(&st->state, w - 1, __ATOMIC_RELEASE);
			return rec;
		}
		/*
		 * A kept frame's (a longjmp out of the levels not kept): those
		 * levels are gone.  Said only when its cfa is above the deepest
		 * kept frame's: a level past them that a tail call or inlining
		 * put at that very cfa (dispose_command in bash calls itself
		 * so) is matched by its frame too, and it was no jump.
		 */
		if (st->frame[k - 1].cfa > st->frame[RIP_FN_DEPTH - 1].cfa)
			rip_fn_dropped_deep(st, RIP_FN_DEPTH, d);
		st->resync += d - RIP_FN_DEPTH;
		w -= d - RIP_FN_DEPTH;
		d = RIP_FN_DEPTH;
	}
	/* Its frame: where its entry's hook found the return address, from the same place. */
	for (k = d; k; k--) {
		const struct rip_fn_frame *f = &st->frame[k - 1];

		if ((f->fn & RIP_FN_ADDR_MASK) == fn && rip_fn_exit_match(f, p, tail))
			break;
	}
	if (k) {
		cfa = st->frame[k - 1].cfa;
	} else if (!tail) {
		/* Else its frame moved (an alloca): where its return address still is, or as an entry would. */
		k = rip_fn_exit_moved(st, d, fn, p, site);
		cfa = k ? st->frame[k - 1].cfa : rip_fn_cfa(p, site, fn, UINTPTR_MAX, &k);
	}
	while (d && st->frame[d - 1].cfa < cfa)
		d--;
	/* Functions inlined into one another share a cfa: the leaving one may be below the top. */
	while (d > 1 && st->frame[d - 1].cfa == cfa &&
	       (st->frame[d - 1].fn & RIP_FN_ADDR_MASK) != fn && st->frame[d - 2].cfa == cfa)
		d--;
	if (!d || (st->frame[d - 1].fn & RIP_FN_ADDR_MASK) != fn || st->frame[d - 1].cfa != cfa) {
		st->resync++; /* no frame of its own: counted */
		return -1;
	}
	drop = RIP_FN_STATE_DEPTH(w) - d;
	rip_fn_dropped(st, d, d + drop);
	st->resync += drop;
	__atomic_store_n(&st->state, w - drop - 1, __ATOMIC_RELEASE);
	return rip_fn_frame_rec(st->frame[d - 1].fn);
}

/* ---- function ids -------------------------------------------------------------------- */

static __fninline uint32_t rip_fn_hash_of(uintptr_t a)
{
	return (uint32_t)((a * 0x9E3779B97F4A7C15ull) >> (64 - RIP_FN_HASH_BITS));
}

/* Write the definition of id into the file's table and as an event.  0 or -ENOSPC. */
static __nofn int rip_fn_define(struct rip_file_hdr *h, uint32_t id, uintptr_t a)
{
	uint64_t *tab = (uint64_t *)((char *)h + h->fn_tab_off);
	const uint64_t v[RIP_EVENT_MAX_FIELDS] = { id, a };
	struct rip_evw *w = &__rip_self.ev;

	if (__rip_commit(h, h->fn_tab_off + (uint64_t)(id - 1) * sizeof(uint64_t),
			 sizeof(uint64_t)))
		return -ENOSPC;
	/* Relaxed: readers take an entry still 0 as not defined yet. */
	__atomic_store_n(&tab[id - 1], (uint64_t)a, __ATOMIC_RELAXED);
	if (w->nest) {
		__rip_event_nested_v(&__rip_fn_def_type, v, 2);
		return 0;
	}
	w->nest = 1;
	/* The flag before the slow path reads anything: pairs with a handler's check. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__rip_event_slow(&__rip_fn_def_type, v, NULL, rip_clock_ticks()); /* drops nest */
	return 0;
}

/*
 * The id of function a, handed out now if it has none yet: 0 when the table
 * is full (counted), when the address does not fit an entry, or no file is
 * open.  A slot found empty is taken with the id already reserved, so that
 * nobody ever sees a taken entry without its id.
 */
static __nofn __attribute__((noinline)) uint32_t rip_fn_id_slow(uintptr_t a)
{
	struct rip_file_hdr *h = __atomic_load_n(&rip_fn.h, __ATOMIC_ACQUIRE);
	uint32_t i = rip_fn_hash_of(a), id = 0;

	if (!h || !h->fn_tab_off || a >> (64 - RIP_FN_ID_BITS))
		return 0;
	for (uint32_t n = 0; n < RIP_FN_PROBES; n++, i = (i + 1) & (RIP_FN_HASH_SIZE - 1)) {
		uint64_t e = __atomic_load_n(&rip_fn_hash[i], __ATOMIC_RELAXED);

		if (e >> RIP_FN_ID_BITS == a)
			return (uint32_t)e & RIP_FN_IDS;
		if (e)
			continue;
		if (!id) {
			uint32_t c = __atomic_fetch_add(&h->fn_count, 1, __ATOMIC_RELAXED);

			if (c >= h->fn_ids || c >= RIP_FN_IDS)
				break;
			id = c + 1;
		}
		/* Relaxed: the entry carries all it says (address and id), nothing else hangs on it. */
		if (__atomic_compare_exchange_n(&rip_fn_hash[i], &e,
						(uint64_t)a << RIP_FN_ID_BITS | id, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			if (rip_fn_define(h, id, a))
				break;
			return id;
		}
		/* Someone took it first: it may be this very function. */
		if (e >> RIP_FN_ID_BITS == a)
			return (uint32_t)e & RIP_FN_IDS; /* our id stays unused: harmless */
	}
	__atomic_fetch_add(&h->fn_full, 1, __ATOMIC_RELAXED);
	return 0;
}

/* ---- timed records ------------------------------------------------------------------- */

static __nofn __attribute__((noinline)) void rip_fn_record_slow(const struct rip_event_type *t,
								uint32_t id, uint64_t ts)
{
	const uint64_t v[RIP_EVENT_MAX_FIELDS] = { id };

	__rip_event_slow(t, v, NULL, ts); /* drops nest */
}

static __nofn __attribute__((noinline)) void rip_fn_record_nested(const struct rip_event_type *t,
								  uint32_t id)
{
	const uint64_t v[1] = { id };

	__rip_event_nested_v(t, v, 1);
}

/*
 * rip:fn_entry or rip:fn_exit {fn}: 8 bytes, through rip.h's fast path.  Out
 * of line, called last by the hooks (a jump): the registers it needs are
 * not saved on the way through the shadow stack alone.
 */
static __nofn __attribute__((noinline)) void rip_fn_record_id(const struct rip_event_type *t,
							      uint32_t ev, uint32_t id);

/* The record of a function the fast path found no id for (a new one, or one in a probe). */
static __nofn __attribute__((noinline)) void rip_fn_record_new(const struct rip_event_type *t,
							       uint32_t ev, uintptr_t fn)
{
	rip_fn_record_id(t, ev, rip_fn_id_slow(fn));
}

static __nofn __attribute__((noinline)) void rip_fn_record(const struct rip_event_type *t,
							   uint32_t ev, uintptr_t fn)
{
	uint64_t e = __atomic_load_n(&rip_fn_hash[rip_fn_hash_of(fn)], __ATOMIC_RELAXED);
	struct rip_evw *w = &__rip_self.ev;
	uint32_t id = (uint32_t)e & RIP_FN_IDS;
	uint64_t ts;
	char *p;

	/* A function seen before, the TSC, room in the packet: nothing else is called. */
	if (RIP_UNLIKELY(e >> RIP_FN_ID_BITS != fn))
		return rip_fn_record_new(t, ev, fn);
	if (RIP_UNLIKELY(w->nest || !__rip_clock_tsc))
		return rip_fn_record_id(t, ev, id);
	ts = __rip_event_clock();
	p = __rip_event_reserve(w, ev, 8, ts);
	if (RIP_UNLIKELY(!p))
		return rip_fn_record_slow(t, id, ts);
	memcpy(p, &id, 4);
	__rip_event_commit(w, p + 4, ts);
}

/* The record of function id, whatever the clock, from a nested writer too. */
static __nofn __attribute__((noinline)) void rip_fn_record_id(const struct rip_event_type *t,
							      uint32_t ev, uint32_t id)
{
	struct rip_evw *w = &__rip_self.ev;
	uint64_t ts;
	char *p;

	if (RIP_UNLIKELY(w->nest)) {
		rip_fn_record_nested(t, id);
		return;
	}
	if (RIP_LIKELY(__rip_clock_tsc)) {
		ts = __rip_event_clock();
		p = __rip_event_reserve(w, ev, 8, ts);
	} else {
		/* Another clock: read it here, where the packet's real end is known. */
		ts = __rip_clock_fallback();
		w->nest = 1;
		/* The flag before the position is read: pairs with a handler's check of nest. */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		p = __rip_event_reserve_any(w, ev, 8, ts);
	}
	if (RIP_UNLIKELY(!p)) {
		rip_fn_record_slow(t, id, ts);
		return;
	}
	memcpy(p, &id, 4);
	__rip_event_commit(w, p + 4, ts);
}

/*
 * The forking thread's stack as it was when it called fork(), in process
 * memory (the child gets it as it was, where the stacks of the file are
 * shared with the parent, which goes on pushing and popping while the child
 * copies the file: a child copied its parent's next call).  of: the stack
 * it is of, NULL when none was cached, or outside fork() (a child of a raw
 * clone comes to ring.c's fork handler without a prepare handler before).
 */
static struct {
	struct rip_fn_stack *of;
	struct rip_fn_stack st;
} rip_fn_fork_snap;

void __rip_fn_fork_prepare(bool on)
{
	struct rip_fn_stack *st = on ? rip_fn_cached() : NULL;

	rip_fn_fork_snap.of = st;
	if (st)
		memcpy(&rip_fn_fork_snap.st, st, sizeof(*st));
}

/* Write t {v0, v1} at ts with nest raised, as the slow path wants it. */
static void rip_fn_fork_event(const struct rip_event_type *t, uint64_t v0, uint64_t v1, uint64_t ts)
{
	const uint64_t v[RIP_EVENT_MAX_FIELDS] = { v0, v1 };

	__rip_self.ev.nest = 1;
	/* The flag before the slow path reads anything: pairs with a handler's check. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__rip_event_slow(t, v, NULL, ts); /* drops nest */
}

/*
 * In a forked child, after its trace was started afresh (ring.c): the calls
 * its stack inherited from the parent's thread are open, and their exits
 * will come, with a record each when their entry had one.  Their entries are
 * in the parent's trace: the child's begins with a rip:fn_open of each,
 * outermost first (and the rip:fn that names it: the parent's trace has
 * that too), so that readers open them at its start rather than take their
 * exits for exits without an entry.  Levels past the frames kept have no
 * function to name: their exits stay without entries.  Only this thread
 * exists here.
 */
void __rip_fn_fork_child(void)
{
	struct rip_file_hdr *h = __atomic_load_n(&rip_fn.h, __ATOMIC_ACQUIRE);
	struct rip_fn_stack *st = rip_fn_fork_snap.of;
	uint64_t ts = rip_clock_ticks();
	uint32_t n;

	if (!st || st != rip_fn_cached() || !h || h != __rip_proc.hdr)
		return;
	/* The stack as the parent's thread had it at the fork (the owner is the same slot's). */
	memcpy(st, &rip_fn_fork_snap.st, sizeof(*st));
	rip_fn_fork_snap.of = NULL;
	if (__rip_self.ev.nest)
		return;
	n = RIP_FN_STATE_DEPTH(st->state);
	for (uint32_t k = 0; k < n && k < RIP_FN_DEPTH; k++) {
		uint64_t x = st->frame[k].fn, a = x & RIP_FN_ADDR_MASK;
		uint32_t id;

		if (!rip_fn_frame_rec(x))
			continue;
		if (rip_fn_open_id == UINT32_MAX && __rip_type_register(&rip_fn_open_type, true))
			return;
		id = rip_fn_id_slow((uintptr_t)a);
		if (id)
			rip_fn_fork_event(&__rip_fn_def_type, id, a, ts);
		rip_fn_fork_event(&rip_fn_open_type, id, 0, ts);
	}
}

/* ---- the hooks ----------------------------------------------------------------------- */

/*
 * Is the func category on?  The byte rip_category_enabled tests, through
 * __rip_enable, which is never NULL (no file: a word of zeros), so that the
 * entry's fast path needs no file pointer and no test of one: a cached
 * stack is a file's, and one that outlived its file's close (the file stays
 * mapped: rip_ring_close) takes pushes and pops that nobody reads.  No
 * ordering, as there: no data hangs on the bit.
 */
/* The same byte found from h, the file the hooks keep stacks in, which patched entries hold. */
static __fninline bool rip_fn_timed_in(const struct rip_file_hdr *h)
{
	return (__atomic_load_n((const uint8_t *)h->enable + RIP_CAT_FUNC / 8, __ATOMIC_RELAXED) >>
		(RIP_CAT_FUNC % 8)) &
	       1;
}

static __fninline bool rip_fn_timed(void)
{
	return rip_category_enabled(RIP_CAT_FUNC); /* testb: the load and the test in one */
}

/*
 * The hooks' fast paths make no call but their last (a jump), so that they
 * save no register: what is rare (a slot to work out, frames to drop, a
 * timed record) goes out of line and finishes the hook's work there.
 */

/*
 * Push fn, a hooks' entry, at state w on st, past the frames kept
 * (rip_fn_push), whose frame would have k in its top bits: whether its
 * entry's record is written (k marked) goes into its level's bit, for its
 * exit (rip_fn_deep_rec), before the push publishes the level (a signal
 * handler's entries go above it).  Past the bits, the deepest tracked
 * level decides: the record is written here iff that level's was, and
 * false returned (the caller writes none), as the exit cannot tell what
 * the category was at the entry.  That bit stays as it is while the levels
 * past it live, whoever set it last (a patched entry sets none: patch.c
 * keeps its record's bit on the return stack).  Out of line: the fast
 * path jumps here.
 */
static __nofn __attribute__((noinline)) bool rip_fn_push_deep(struct rip_fn_stack *st, uint64_t w,
							      uintptr_t fn, uint32_t k)
{
	uint32_t l = RIP_FN_STATE_DEPTH(w) - RIP_FN_DEPTH;
	uint64_t *b = rip_fn_deep_bits(st);
	bool past = false;

	/* No bits: the category decides, at the entry and at the exit. */
	if (b) {
		if (l < RIP_FN_DEEP_BITS) {
			if (k & RIP_FN_K_CREC)
				b[l / 64] |= 1ull << (l % 64);
			else
				b[l / 64] &= ~(1ull << (l % 64));
		} else {
			past = true;
		}
	}
	/* Publish the level: pairs with the acquire loads of state in the readers. */
	__atomic_store_n(&st->state, w + RIP_FN_PUSH, __ATOMIC_RELEASE);
	if (!past)
		return true;
	if (b[RIP_FN_DEEP_WORDS - 1] >> 63)
		rip_fn_record(&__rip_fn_entry_type, RIP_EV_FN_ENTRY, fn);
	return false;
}

/*
 * Push fn (its frame k words above p, cfa) on st at state w.  Whether the
 * caller's timed record stands: false for a level past those tracked
 * (rip_fn_push_deep wrote it or not).
 */
static __fninline bool rip_fn_push(struct rip_fn_stack *st, uint64_t w, uintptr_t fn, uintptr_t cfa,
				   uint32_t k)
{
	uint32_t d = RIP_FN_STATE_DEPTH(w);

	if (RIP_LIKELY(d < RIP_FN_DEPTH)) {
		/* fn fits 48 bits (x86-64 user addresses without 5-level paging) */
		st->frame[d].fn = fn | (uint64_t)k << RIP_FN_ADDR_BITS;
		st->frame[d].cfa = cfa;
	} else if (!(k & RIP_FN_K_PATCHED)) {
		/* A hooks' level past them (a patched one's exit knows about its record: patch.c). */
		return rip_fn_push_deep(st, w, fn, k);
	}
	/* Publish the frame: pairs with the acquire loads of state in the readers. */
	__atomic_store_n(&st->state, w + RIP_FN_PUSH, __ATOMIC_RELEASE);
	return true;
}

/* The k of a hooks' entry's frame: marked when the func category is on (its record is written). */
static __fninline uint32_t rip_fn_k_rec(uint32_t k, bool on)
{
	return on ? k | RIP_FN_K_CREC : k;
}

static __nofn __attribute__((noinline)) void rip_fn_enter_resync(struct rip_fn_stack *st,
								 uint64_t w, uintptr_t fn,
								 uintptr_t cfa, uint32_t k,
								 uintptr_t site)
{
	bool on = rip_category_enabled(RIP_CAT_FUNC);

	if (rip_fn_push(st, rip_fn_resync_entry(st, w, fn, cfa, k, site), fn, cfa,
			rip_fn_k_rec(k, on)) &&
	    RIP_UNLIKELY(on))
		rip_fn_record(&__rip_fn_entry_type, RIP_EV_FN_ENTRY, fn);
}

/* A timed entry: its frame says so (RIP_FN_K_CREC), and its record. */
static __nofn __attribute__((noinline)) void
rip_fn_enter_rec(struct rip_fn_stack *st, uint64_t w, uintptr_t fn, uintptr_t cfa, uint32_t k)
{
	if (rip_fn_push(st, w, fn, cfa, k | RIP_FN_K_CREC))
		rip_fn_record(&__rip_fn_entry_type, RIP_EV_FN_ENTRY, fn);
}

/*
 * Where the function's frame pointer fp puts its return address, in words
 * above p, when fp is one: the word above it is site, and the frame lies
 * below bound (the frame below's cfa, at most RIP_FN_NEAR above p: the
 * words between are mapped).  RIP_FN_SCAN_MAX when not.
 */
static __nofn uint32_t rip_fn_fp_at(const uintptr_t *p, uintptr_t site, uintptr_t fp,
				    uintptr_t bound)
{
	uintptr_t off = fp - (uintptr_t)p;

	if (bound - (uintptr_t)p > RIP_FN_NEAR || off % sizeof(*p) ||
	    off + 2 * sizeof(*p) > bound - (uintptr_t)p || p[off / sizeof(*p) + 1] != site)
		return RIP_FN_SCAN_MAX;
	return (uint32_t)(off / sizeof(*p)) + 1;
}

/*
 * Where the return address of fn is, in words above p, for an entry whose
 * frame below (the caller's, or the frame fn was inlined into) has its cfa
 * at bound, more than p and at most RIP_FN_NEAR above it: every word
 * between is mapped, and fn's return address lies below bound, or just
 * under it (inlined).  Copies of site lie below the real one: locals not
 * yet set hold what earlier calls left (funcprog big), and clang keeps
 * call_site in a local when registers run short; a first scan from p
 * takes a copy, and one that stops at RIP_FN_SCAN words cannot tell a
 * copy from a frame bigger than that.  So: as far as this call of the
 * hook (p[-1]) had it the last time, when past RIP_FN_SCAN (rip_fn_big;
 * nearer ones are rip_fn_kc's, which the fast path missed), within bound
 * and still site there; else the highest copy at or below bound.  Not the
 * one just under bound when the frame below is fn's own (same): a
 * recursion from one call site has the caller's return address there too,
 * and the new frame's is lower (if none is, a call that replaces a frame
 * jumped out of).  RIP_FN_SCAN_MAX when site is not below bound (the frame
 * below is gone).
 */
static __nofn __attribute__((noinline)) uint32_t rip_fn_in(const uintptr_t *p, uintptr_t site,
							   uintptr_t bound, bool same)
{
	uint32_t top = (uint32_t)((bound - (uintptr_t)p) / sizeof(*p)), k;

	if (!top)
		return RIP_FN_SCAN_MAX;
	k = rip_fn_big_get(p[-1]);
	if (k && k < top && p[k] == site)
		return k;
	k = top - (same && p[top - 1] == site); /* above the highest word to look at */
	while (k--)
		if (p[k] == site)
			break;
	if (k == UINT32_MAX)
		return same && p[top - 1] == site ? top - 1 : RIP_FN_SCAN_MAX;
	if (k >= RIP_FN_SCAN)
		rip_fn_big_put(p[-1], k);
	return k;
}

/*
 * The caller's frame pointer register; 1 where there is no shortcut (the
 * scan finds it).  Read where it is used (volatile): the hooks leave rbp
 * alone, and a value kept for a call out of line would cost them a saved
 * register.
 */
static __always_inline uintptr_t rip_fn_fp(void)
{
	uintptr_t fp = 1;

#if defined(__x86_64__)
	__asm__ volatile("mov %%rbp, %0" : "=r"(fp));
#endif
	return fp;
}

/*
 * How many words above p the function's return address is, at a hook call
 * the fast path has not learned (or has second in its bucket), remembered
 * for the next time: as learned, else just above the function's frame
 * pointer fp (code built with frame pointers: exact), else looked for.  An
 * fp that is no frame pointer (a build without them, a register like any
 * other) is only used when it points into the words the scan would read
 * anyway, or below the frame below within RIP_FN_NEAR (rip_fn_fp_at).
 * Looked for: with a frame below within RIP_FN_NEAR, the highest copy of
 * the return address under it (rip_fn_in); else the scan (rip_fn_cfa).
 */
static __nofn uintptr_t rip_fn_cfa_learn(const struct rip_fn_stack *st, uintptr_t fn,
					 const uintptr_t *p, uintptr_t site, uintptr_t fp,
					 uint32_t *kp)
{
	uint32_t d = RIP_FN_STATE_DEPTH(st->state), k = rip_fn_kc_get(p, p[-1], site);
	uintptr_t bound;

	if (k == RIP_FN_SCAN && fp - (uintptr_t)p < (RIP_FN_SCAN - 1) * sizeof(*p) &&
	    !(fp % sizeof(*p)) && p[(fp - (uintptr_t)p) / sizeof(*p) + 1] == site)
		k = (uint32_t)((fp - (uintptr_t)p) / sizeof(*p)) + 1;
	if (k == RIP_FN_SCAN) {
		/* The caller's frame bounds the function's (unless it is gone, or on another stack). */
		bound = d - 1 < RIP_FN_DEPTH && st->frame[d - 1].cfa > (uintptr_t)p ?
				st->frame[d - 1].cfa :
				UINTPTR_MAX;
		k = rip_fn_fp_at(p, site, fp, bound);
		if (k == RIP_FN_SCAN_MAX && bound - (uintptr_t)p <= RIP_FN_NEAR)
			k = rip_fn_in(p, site, bound,
				      (st->frame[d - 1].fn & RIP_FN_ADDR_MASK) == fn);
		if (k == RIP_FN_SCAN_MAX)
			rip_fn_cfa(p, site, fn, bound, &k);
	}
	rip_fn_kc_put(p[-1], k);
	*kp = k;
	return (uintptr_t)(p + k + 1);
}

/* An entry on st the fast path does not finish: a hook call whose distance it has not learned. */
static __nofn __attribute__((noinline)) void rip_fn_enter_on(struct rip_fn_stack *st, uintptr_t fn,
							     const uintptr_t *p, uintptr_t site,
							     uintptr_t fp)
{
	bool on = rip_category_enabled(RIP_CAT_FUNC);
	uint32_t d, k;
	uintptr_t cfa;
	uint64_t w;

	if (st) {
		cfa = rip_fn_cfa_learn(st, fn, p, site, fp, &k);
		w = st->state;
		d = RIP_FN_STATE_DEPTH(w);
		if (rip_fn_below(st, d, cfa))
			w = rip_fn_resync_entry(st, w, fn, cfa, k, site);
		on = rip_fn_push(st, w, fn, cfa, rip_fn_k_rec(k, on)) && on;
	}
	if (RIP_UNLIKELY(on))
		rip_fn_record(&__rip_fn_entry_type, RIP_EV_FN_ENTRY, fn);
}

/* An entry whose thread moved to another slot (or has none yet). */
static __nofn __attribute__((noinline)) void rip_fn_enter_slow(uintptr_t fn, const uintptr_t *p,
							       uintptr_t site, uintptr_t fp)
{
	/* Off (no file with stacks).  Relaxed: a hint, the slow path acquires. */
	if (!__atomic_load_n(&rip_fn.h, __ATOMIC_RELAXED))
		return;
	rip_fn_enter_on(rip_fn_stack_slow(), fn, p, site, fp);
}

/* An entry at a level past the frames kept, or at the last kept, whose hook call is learned. */
static __nofn __attribute__((noinline)) void rip_fn_enter_edge(struct rip_fn_stack *st, uint64_t w,
							       uintptr_t fn, uintptr_t cfa,
							       uint32_t k, uintptr_t site)
{
	if (rip_fn_below(st, RIP_FN_STATE_DEPTH(w), cfa))
		return rip_fn_enter_resync(st, w, fn, cfa, k, site);
	if (RIP_UNLIKELY(rip_fn_timed()))
		return rip_fn_enter_rec(st, w, fn, cfa, k);
	rip_fn_push(st, w, fn, cfa, k);
}

__nofn RIP_API void __cyg_profile_func_enter(void *this_fn, void *call_site)
{
	const uintptr_t *p = (const uintptr_t *)__builtin_dwarf_cfa();
	struct rip_fn_stack *st = rip_fn_cached();
	uintptr_t fn = (uintptr_t)this_fn, site = (uintptr_t)call_site, cfa;
	struct rip_fn_frame *f;
	uint32_t d;
	uint64_t k, w;

	/* No stack cached: cur moved, or none is kept (no file: the slow path returns at once). */
	if (RIP_UNLIKELY(!st))
		return rip_fn_enter_slow(fn, p, site, rip_fn_fp());
	/*
	 * The function's return address, a few words up: as far up as this
	 * call of the hook (p[-1]: its return address) found it before (the
	 * function's frame is the same at every pass), checked.  The first time
	 * (or a bucket shared), rip_fn_cfa_learn works it out.  The first entry
	 * of the bucket only: every instruction here costs a call of a function
	 * that works, all the more one that writes a register (doc/design.md).
	 */
	k = rip_fn_kc_first(p, p[-1], site);
	if (RIP_UNLIKELY(k == RIP_FN_SCAN))
		return rip_fn_enter_on(st, fn, p, site, rip_fn_fp());
	cfa = (uintptr_t)(p + k + 1);
	w = st->state;
	d = RIP_FN_STATE_DEPTH(w);
	/*
	 * A frame below and room for one more (the usual), else none below (a
	 * thread's first level) or a level past the frames kept
	 * (rip_fn_enter_edge): one compare for the depth here.
	 */
	if (RIP_LIKELY(d - 1 < RIP_FN_DEPTH - 1)) {
		f = &st->frame[d];
		if (RIP_UNLIKELY(f[-1].cfa <= cfa))
			return rip_fn_enter_resync(st, w, fn, cfa, (uint32_t)k, site);
	} else if (!d) {
		f = &st->frame[0];
	} else {
		return rip_fn_enter_edge(st, w, fn, cfa, (uint32_t)k, site);
	}
	if (RIP_UNLIKELY(rip_fn_timed()))
		return rip_fn_enter_rec(st, w, fn, cfa, (uint32_t)k);
	/* fn fits 48 bits (x86-64 user addresses without 5-level paging) */
	f->fn = fn | k << RIP_FN_ADDR_BITS;
	f->cfa = cfa;
	/* Publish the frame: pairs with the acquire loads of state in the readers. */
	__atomic_store_n(&st->state, w + RIP_FN_PUSH, __ATOMIC_RELEASE);
}

/* Did the function jump to the exit hook after its epilogue (the hook returns to its caller)? */
#define RIP_FN_TAIL(site) ((uintptr_t)__builtin_return_address(0) == (site))

/*
 * At an exit deeper than the frames kept: may the leaving function be one
 * of them (a longjmp out of the levels not kept)?  Its hook's cfa p is
 * then no lower than that of the deepest kept frame's hook, the sp with
 * which that frame calls: a level past it has its whole frame below that.
 * rip_fn_exit_slow looks for the frame.
 */
static __fninline bool rip_fn_deep_kept(const struct rip_fn_stack *st, const uintptr_t *p)
{
	const struct rip_fn_frame *f = &st->frame[RIP_FN_DEPTH - 1];

	return (uintptr_t)p >= f->cfa - (RIP_FN_K(f->fn) + 1) * sizeof(*p);
}

/*
 * Pop fn from st at state w (d levels), checking it is the top frame.
 * Whether the exit's record is to be written: its entry's was, or with no
 * frame kept to say (a level past them, an exit with no frame), the func
 * category is on.
 */
static __fninline bool rip_fn_pop(struct rip_fn_stack *st, uint64_t w, uintptr_t fn,
				  const uintptr_t *p, uintptr_t site, bool tail)
{
	uint32_t d = RIP_FN_STATE_DEPTH(w);
	int rec;

	if (d - 1 < RIP_FN_DEPTH) {
		const struct rip_fn_frame *f = &st->frame[d - 1];

		/* The same function, the same frame. */
		if ((f->fn & RIP_FN_ADDR_MASK) == (fn & RIP_FN_ADDR_MASK) &&
		    rip_fn_exit_match(f, p, tail)) {
			/* Pairs with the acquire loads of state in the readers. */
			__atomic_store_n(&st->state, w - 1, __ATOMIC_RELEASE);
			return rip_fn_frame_rec(f->fn);
		}
	} else if (!d) {
		st->resync++; /* an exit with nothing entered: entered before the slot */
		return rip_category_enabled(RIP_CAT_FUNC);
	} else if (RIP_LIKELY(!rip_fn_deep_kept(st, p))) {
		rec = rip_fn_deep_rec(st, d);
		__atomic_store_n(&st->state, w - 1, __ATOMIC_RELEASE);
		return rec;
	}
	rec = rip_fn_exit_slow(st, w, fn & RIP_FN_ADDR_MASK, p, site, tail);
	return rec < 0 ? rip_category_enabled(RIP_CAT_FUNC) : rec;
}

/*
 * The exit of fn, a level past the frames kept of st at state w: its
 * record iff its entry's.  fn first: where the exit's fast path has it.
 */
static __nofn __attribute__((noinline)) void rip_fn_exit_deep(uintptr_t fn, struct rip_fn_stack *st,
							      uint64_t w)
{
	bool rec = rip_fn_deep_rec(st, RIP_FN_STATE_DEPTH(w));

	/* Pairs with the acquire loads of state in the readers. */
	__atomic_store_n(&st->state, w - 1, __ATOMIC_RELEASE);
	if (RIP_UNLIKELY(rec))
		rip_fn_record(&__rip_fn_exit_type, RIP_EV_FN_EXIT, fn);
}

/* An exit the fast path does not finish: another slot, a frame that does not match, or a record. */
static __nofn __attribute__((noinline)) void
rip_fn_exit_other(uintptr_t fn, const uintptr_t *p, uintptr_t site, bool tail, bool moved)
{
	struct rip_fn_stack *st = rip_fn_cached();
	bool rec;

	if (moved) {
		if (!__atomic_load_n(&rip_fn.h, __ATOMIC_RELAXED))
			return;
		st = rip_fn_stack_slow();
	}
	rec = st ? rip_fn_pop(st, st->state, fn, p, site, tail) :
		   rip_category_enabled(RIP_CAT_FUNC);
	if (RIP_UNLIKELY(rec))
		rip_fn_record(&__rip_fn_exit_type, RIP_EV_FN_EXIT, fn);
}

/*
 * The exit's fast path: the top frame is the leaving function's, in the
 * same frame (or the hook's own cfa: a tail call to it), or the stack is
 * deeper than the frames kept; anything else (another slot, frames to
 * drop) goes to rip_fn_exit_other.  The frame's word less fn, rotated by
 * 48 bits, is its k (under 2^16) when the low 48 bits are fn's, and at
 * least 2^16 when they are not (they are then nonzero, and rotated into
 * the high bits): the function and the distance to its cfa in three
 * instructions.  A frame whose entry's record was written has its k
 * marked (RIP_FN_K_CREC, 2^13 words off): only when the first match
 * fails is the mark taken off, the frame popped and the exit's record
 * written, so an exit tests no category.  Every instruction here counts,
 * more than at the entry: a chain of calls that return one after the
 * other runs its exits back to back, with none of the callers' work to
 * overlap them (doc/design.md, "A fifth look").
 */
__nofn RIP_API void __cyg_profile_func_exit(void *this_fn, void *call_site)
{
	const uintptr_t *p = (const uintptr_t *)__builtin_dwarf_cfa();
	struct rip_fn_stack *st = rip_fn_cached();
	uintptr_t fn = (uintptr_t)this_fn, site = (uintptr_t)call_site;
	const struct rip_fn_frame *f;
	bool moved = false;
	uint64_t w, r, k;
	uint32_t d;

	/*
	 * No stack cached: cur moved, or none is kept (no file yet).  A cached
	 * stack outlives its file's close (the file stays mapped:
	 * rip_ring_close), whose exits pop frames nobody reads: only off with
	 * no stack cached does the exit read rip_fn.h (relaxed: a hint, the
	 * slow path acquires).
	 */
	if (RIP_UNLIKELY(!st)) {
		if (!__atomic_load_n(&rip_fn.h, __ATOMIC_RELAXED))
			return;
		moved = true;
		goto other;
	}
	w = st->state;
	d = RIP_FN_STATE_DEPTH(w);
	if (RIP_LIKELY(d - 1 < RIP_FN_DEPTH)) {
		f = &st->frame[d - 1];
		r = f->fn - fn;
		r = r >> RIP_FN_ADDR_BITS | r << (64 - RIP_FN_ADDR_BITS);
		if (RIP_UNLIKELY(r > 0xffff || f->cfa != (uintptr_t)(p + r + 1))) {
			/* A tail call to the hook, or a frame whose entry was recorded (its k marked). */
			k = r & ~(uint64_t)RIP_FN_K_CREC;
			if (r > 0xffff || k >= RIP_FN_K_CREC ||
			    (f->cfa != (uintptr_t)(p + k + 1) &&
			     (f->cfa != (uintptr_t)p || !RIP_FN_TAIL(site))))
				goto other;
			__atomic_store_n(&st->state, w - 1, __ATOMIC_RELEASE);
			if (r & RIP_FN_K_CREC)
				return rip_fn_record(&__rip_fn_exit_type, RIP_EV_FN_EXIT, fn);
			return;
		}
		/* Pairs with the acquire loads of state in the readers. */
		__atomic_store_n(&st->state, w - 1, __ATOMIC_RELEASE);
		return;
	}
	if (RIP_UNLIKELY(!d || rip_fn_deep_kept(st, p)))
		goto other;
	return rip_fn_exit_deep(fn, st, w);
other:
	return rip_fn_exit_other(fn, p, site, RIP_FN_TAIL(site), moved);
}

/* The hooks as librip defines them, whatever the program binds (nop.c tells its calls by them). */
extern __typeof__(__cyg_profile_func_enter) __rip_fn_enter_self
	__attribute__((alias("__cyg_profile_func_enter")));
extern __typeof__(__cyg_profile_func_exit) __rip_fn_exit_self
	__attribute__((alias("__cyg_profile_func_exit")));

/*
 * The hooks once more at glibc's version of its no-op ones, in librip.so
 * only (RIP_LIBSO, Makefile): a program built with -finstrument-functions
 * and linked without librip asks for that version, which ld.so binds to
 * no definition of another (LIBRIP_0.1), and so took glibc's even with
 * librip.so preloaded (rip run --preload, LD_PRELOAD=librip.so): it
 * recorded nothing.  Not the default version (name@VER, not name@@VER): a
 * program linked with librip binds LIBRIP_0.1 as before, and one that
 * preloads librip.so binds these ahead of libc's.  Each is a jump to the
 * hook, which sees the same return address and canonical frame address as
 * if called directly (no frame in between), as preload/cyg.c's: not an
 * alias, since GNU ld keeps only the versioned name of two at one address
 * (then nop.c leaves librip.so alone: its hooks' addresses are not its
 * definitions').  librip-preload.so has its own: it comes before libc in
 * the scope, its librip.so after.  Not in librip.a: an executable would
 * export the versioned names.  The version is glibc's first on the
 * architecture, GLIBC_2.2.5 on x86-64 and GLIBC_2.17 on aarch64 (the node
 * is in lib/librip.map); none on the others.
 */
#if defined(RIP_LIBSO) && (defined(__x86_64__) || defined(__aarch64__))
#if defined(__x86_64__)
#define RIP_FN_GLIBC "GLIBC_2.2.5"
#define RIP_FN_JUMP "\tendbr64\n\tjmp "
#else
#define RIP_FN_GLIBC "GLIBC_2.17"
#define RIP_FN_JUMP "\thint 34\n\tb " /* bti c */
#endif
__asm__(".symver __rip_fn_enter_glibc, __cyg_profile_func_enter@" RIP_FN_GLIBC "\n"
	".symver __rip_fn_exit_glibc, __cyg_profile_func_exit@" RIP_FN_GLIBC "\n"
	".pushsection .text\n"
	".globl __rip_fn_enter_glibc\n"
	".type __rip_fn_enter_glibc, %function\n"
	"__rip_fn_enter_glibc:\n"
	"\t.cfi_startproc\n" RIP_FN_JUMP "__rip_fn_enter_self\n"
	"\t.cfi_endproc\n"
	".size __rip_fn_enter_glibc, .-__rip_fn_enter_glibc\n"
	".globl __rip_fn_exit_glibc\n"
	".type __rip_fn_exit_glibc, %function\n"
	"__rip_fn_exit_glibc:\n"
	"\t.cfi_startproc\n" RIP_FN_JUMP "__rip_fn_exit_self\n"
	"\t.cfi_endproc\n"
	".size __rip_fn_exit_glibc, .-__rip_fn_exit_glibc\n"
	".popsection\n");
#endif

/* ---- for patched entries (patch.c) ----------------------------------------------------- */

struct rip_fn_stack *__rip_fn_stack_now(uint32_t *index)
{
	struct rip_file_hdr *h = __atomic_load_n(&rip_fn.h, __ATOMIC_RELAXED);
	struct rip_fn_stack *st;

	if (!h)
		return NULL;
	st = rip_fn_cached();
	if (!st)
		st = rip_fn_stack_slow();
	if (st && index)
		*index = (uint32_t)(((char *)st - ((char *)h + h->fn_off)) / RIP_FN_STACK_SIZE);
	return st;
}

bool __rip_fn_enter_at(struct rip_fn_stack *st, uintptr_t fn, uintptr_t cfa)
{
	const struct rip_file_hdr *h = __atomic_load_n(&rip_fn.h, __ATOMIC_RELAXED);
	bool timed;

	if (!h)
		return false;
	timed = rip_fn_timed_in(h);
	if (st) {
		uint64_t w = st->state;
		uint32_t d = RIP_FN_STATE_DEPTH(w);

		if (rip_fn_below(st, d, cfa))
			w = rip_fn_resync(st, w, cfa);
		/* the exit comes through __rip_fn_exit_at, which knows the cfa */
		rip_fn_push(st, w, fn, cfa, RIP_FN_K_PATCHED | (timed ? RIP_FN_K_REC : 0));
	}
	if (timed)
		rip_fn_record(&__rip_fn_entry_type, RIP_EV_FN_ENTRY, fn);
	return timed;
}

void __rip_fn_exit_at(struct rip_fn_stack *st, uintptr_t fn, uintptr_t cfa, bool rec)
{
	const struct rip_file_hdr *h = __atomic_load_n(&rip_fn.h, __ATOMIC_RELAXED);

	if (!h)
		return;
	if (st) {
		uint64_t w = st->state;
		uint32_t d = RIP_FN_STATE_DEPTH(w);

		/* Its frame on top: pop it (pairs with the readers' acquire loads of state). */
		if (RIP_LIKELY(d - 1 < RIP_FN_DEPTH) &&
		    !((st->frame[d - 1].fn ^ fn) << (64 - RIP_FN_ADDR_BITS)) &&
		    st->frame[d - 1].cfa == cfa)
			__atomic_store_n(&st->state, w - 1, __ATOMIC_RELEASE);
		else if (rip_fn_exit_slow(st, w, fn, (const uintptr_t *)cfa, 0, true) < 0)
			/*
			 * The slow path with the cfa known, as for a tail-call exit.  No frame:
			 * dropped already, its exit written then (a sibling call's entry of the
			 * same cfa: tail_1 jumps to tail_2, both return through the trampoline).
			 */
			return;
	}
	/* Its entry's record written, whatever the category is now (internal.h). */
	if (rec)
		rip_fn_record(&__rip_fn_exit_type, RIP_EV_FN_EXIT, fn);
}

#if defined(__x86_64__)
#if defined(__SSE__)
#error "build lib/func.c with -mgeneral-regs-only (the patched entries call it unsaved)"
#endif

/*
 * The patched entries' fast paths, called by the trampolines of patch.c
 * with only the general registers saved (this file is built with
 * -mgeneral-regs-only).  They do the common case in one go: the thread's
 * cached stack, its slot's return stack (the same index), a frame to push
 * or the top frame to pop with nothing to drop, and for a timed record (an
 * entry with the func category on, an exit whose entry had its record), a
 * function that has an id, the TSC and room in the packet.  Anything
 * else, they decline before they change anything (a record reserved is
 * given back: only nest was raised), and the slow paths of patch.c, with
 * the vector registers saved, do the whole entry or exit.
 */

/* The return stack of the slot whose stack st is (of: the slot), NULL when it must be set up. */
static __fninline struct rip_fn_rets *rip_fn_rets_at(const struct rip_file_hdr *h,
						     const struct rip_fn_stack *st,
						     const struct rip_slot *of)
{
	/* Acquire: pairs with the release store of the pointer once it is mapped. */
	struct rip_fn_rets *r = __atomic_load_n(&__rip_fn_rets, __ATOMIC_ACQUIRE);
	size_t i = (size_t)((const char *)st - ((const char *)h + h->fn_off)) / RIP_FN_STACK_SIZE;

	if (RIP_UNLIKELY(!r || i >= __rip_fn_nrets))
		return NULL;
	r += i;
	/* Another owner's entries: the slow path starts it afresh. */
	return r->owner == (uint32_t)of->attach_ts ? r : NULL;
}

/*
 * What both fast paths start with: the thread's cached stack in *stp and
 * its slot's return stack, or NULL (no file, a hook under way, another
 * coroutine current, no stack, or a return stack to set up) for the slow
 * path.
 */
static __fninline struct rip_fn_rets *rip_fn_fast_rets(const struct rip_file_hdr *h,
						       struct rip_fn_stack **stp)
{
	struct rip_fn_stack *st = rip_fn_cached();

	if (RIP_UNLIKELY(!h || __rip_fn_busy || !st))
		return NULL;
	*stp = st;
	return rip_fn_rets_at(h, st, __rip_self.cur);
}

/*
 * The timed record of fn reserved (entry or exit): *p where its id goes,
 * *id, *ts; false when it cannot be had here (nothing reserved then).
 */
static __fninline bool rip_fn_reserve(uint32_t ev, uintptr_t fn, char **p, uint32_t *id,
				      uint64_t *ts)
{
	uint64_t e = __atomic_load_n(&rip_fn_hash[rip_fn_hash_of(fn)], __ATOMIC_RELAXED);
	struct rip_evw *w = &__rip_self.ev;

	if (RIP_UNLIKELY(e >> RIP_FN_ID_BITS != fn || w->nest || !__rip_clock_tsc))
		return false;
	*id = (uint32_t)e & RIP_FN_IDS;
	*ts = __rip_event_clock();
	*p = __rip_event_reserve(w, ev, 8, *ts);
	if (RIP_LIKELY(*p))
		return true;
	/* Given back: reserve raised nest, nothing else (pairs with a handler's check of nest). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	w->nest = 0;
	return false;
}

static __fninline void rip_fn_commit(char *p, uint32_t id, uint64_t ts)
{
	memcpy(p, &id, 4);
	__rip_event_commit(&__rip_self.ev, p + 4, ts);
}

int __rip_fn_penter_fast(uintptr_t *slot)
{
	const struct rip_file_hdr *h = __atomic_load_n(&rip_fn.h, __ATOMIC_RELAXED);
	struct rip_fn_stack *st;
	uintptr_t fn = slot[0] - 5, cfa = (uintptr_t)&slot[2];
	struct rip_fn_rets *r;
	uint32_t n, d, id = 0;
	uint64_t w, ts = 0;
	char *p = NULL;
	bool timed;

	r = rip_fn_fast_rets(h, &st);
	if (RIP_UNLIKELY(!r))
		return 1;
	/* The stack full, or entries at or below this cfa that may be gone: the slow path sees. */
	n = r->n;
	if (RIP_UNLIKELY(n >= RIP_FN_RETS || (n && r->e[n - 1].cfa <= cfa)))
		return 1;
	w = st->state;
	d = RIP_FN_STATE_DEPTH(w);
	if (RIP_UNLIKELY(rip_fn_below(st, d, cfa)))
		return 1;
	timed = rip_fn_timed_in(h);
	if (timed && !rip_fn_reserve(RIP_EV_FN_ENTRY, fn, &p, &id, &ts))
		return 1;
	__rip_fn_busy = 1;
	/* The flag before the stacks change: pairs with a signal handler's check of it. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* The exit knows the cfa: no k, the frame marked patched (and recorded). */
	rip_fn_push(st, w, fn, cfa, RIP_FN_K_PATCHED | (timed ? RIP_FN_K_REC : 0));
	/* The count first: a signal handler's entries go above this one (as in the slow path). */
	r->n = n + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->e[n].ra = slot[1];
	r->e[n].cfa = cfa;
	r->e[n].fn = fn | (timed ? RIP_FN_RET_REC : 0); /* the exit's record iff this entry's */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	slot[1] = (uintptr_t)__rip_fn_pexit;
	/* Everything above before the flag drops: pairs with a signal handler's check. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__rip_fn_busy = 0;
	if (timed)
		rip_fn_commit(p, id, ts);
	return 0;
}

uintptr_t __rip_fn_pexit_fast(uintptr_t cfa)
{
	const struct rip_file_hdr *h = __atomic_load_n(&rip_fn.h, __ATOMIC_RELAXED);
	struct rip_fn_stack *st;
	const struct rip_fn_frame *f;
	struct rip_fn_rets *r;
	uintptr_t fn, ra;
	uint32_t n, d, id = 0;
	uint64_t w, ts = 0;
	char *p = NULL;
	bool timed;

	r = rip_fn_fast_rets(h, &st);
	if (RIP_UNLIKELY(!r))
		return 0;
	/* The top entry is this frame's, and the top frame of the stack too. */
	n = r->n;
	if (RIP_UNLIKELY(n - 1 >= RIP_FN_RETS || r->e[n - 1].cfa != cfa))
		return 0;
	fn = r->e[n - 1].fn & ~RIP_FN_RET_REC;
	ra = r->e[n - 1].ra;
	w = st->state;
	d = RIP_FN_STATE_DEPTH(w);
	if (RIP_UNLIKELY(d - 1 >= RIP_FN_DEPTH))
		return 0;
	f = &st->frame[d - 1];
	if (RIP_UNLIKELY(((f->fn ^ fn) << (64 - RIP_FN_ADDR_BITS)) || f->cfa != cfa))
		return 0;
	/* Its entry's record written, whatever the category is now (internal.h). */
	timed = r->e[n - 1].fn >> 63;
	if (timed && !rip_fn_reserve(RIP_EV_FN_EXIT, fn, &p, &id, &ts))
		return 0;
	__rip_fn_busy = 1;
	/* The flag before the stacks change: pairs with a signal handler's check of it. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->n = n - 1;
	/* Pairs with the acquire loads of state in the readers. */
	__atomic_store_n(&st->state, w - 1, __ATOMIC_RELEASE);
	/* Everything above before the flag drops: pairs with a signal handler's check. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__rip_fn_busy = 0;
	if (timed)
		rip_fn_commit(p, id, ts);
	return ra;
}
#endif

/*
 * A catch block begins (the preload library's hook of __cxa_begin_catch):
 * the frames at or below cfa, the catching frame's sp, were unwound; the
 * exits of C frames never ran, nor those of patched functions.
 */
__nofn void __rip_fn_caught(uintptr_t cfa)
{
	struct rip_fn_stack *st = __rip_fn_stack_now(NULL);

	if (st) {
		uint64_t w = st->state;
		uint32_t d = RIP_FN_STATE_DEPTH(w);

		if (rip_fn_below(st, d, cfa))
			rip_fn_resync(st, w, cfa);
	}
	__rip_fn_rets_caught(cfa);
}

/*
 * A longjmp is about to land where the sp is sp (the preload library's
 * hooks of longjmp and its kin): the frames at or below sp are gone now,
 * rather than at the thread's next entry, which may never come (a thread
 * that parks after the jump, a program whose functions were unpatched).
 * Their exits, for the entries written, are written now.  Only the
 * thread's cached stack; a jump down, or far above its outermost frame, is
 * to another stack (coroutines switched by longjmp): nothing goes.  The
 * patched calls' return stack drops only the entries at or below sp whose
 * slots no longer hold the trampoline (a jump out of a signal handler that
 * interrupted a blocking call, around which the real return addresses
 * were lent back: __rip_fn_rets_lend), and gives those above theirs back: an
 * entry dropped for a frame that lives on (another stack after all) would
 * lose its return.  The others go as before, once their slots hold another
 * return address; or at once when the preload library knows the jump
 * stays on the thread's stack, from lo up: every entry there at or below
 * sp is gone (__rip_fn_rets_jumped).
 */
__nofn void __rip_fn_jumped(uintptr_t sp, uintptr_t lo)
{
	const struct rip_file_hdr *h = __atomic_load_n(&rip_fn.h, __ATOMIC_RELAXED);
	struct rip_fn_stack *st = rip_fn_cached();
	uint64_t w;

	if (!h || sp <= (uintptr_t)__builtin_frame_address(0))
		return;
	/*
	 * The patched calls' entries first: the exits of those past the frames
	 * kept, innermost first, before the kept frames' exits (the resync).
	 */
	if (lo) {
		uintptr_t deep = 0;

		if (st && RIP_FN_STATE_DEPTH(st->state) > RIP_FN_DEPTH)
			deep = st->frame[RIP_FN_DEPTH - 1].cfa;
		__rip_fn_rets_jumped(lo, sp, deep);
	}
	if (st) {
		w = st->state;
		if (rip_fn_below(st, RIP_FN_STATE_DEPTH(w), sp))
			(void)rip_fn_resync(st, w, sp);
	}
	__rip_fn_rets_caught(sp);
}

/* The exit's record of a patched call past the frames kept, jumped over (patch.c). */
__nofn void __rip_fn_exit_deep(uintptr_t fn)
{
	rip_fn_record(&__rip_fn_exit_type, RIP_EV_FN_EXIT, fn);
}
