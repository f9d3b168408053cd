/* SPDX-License-Identifier: Apache-2.0 */
/*
 * preload/common.h - what the hooks of librip-preload.so share: the real
 * functions (dlsym(RTLD_NEXT), resolved once), the per-thread recursion
 * guard, the fail-open switch, backtrace ids and one emitter per event of
 * rip/resource.h.  The event types themselves live in common.c only.
 *
 * A hook is written like this:
 *
 *	int close(int fd)
 *	{
 *		static int (*real)(int);
 *		uint32_t bt;
 *
 *		if (!RIP_PL_REAL(real, "close"))
 *			return rip_pl_enosys();
 *		if (rip_pl_enter(RIP_CAT_FD)) {
 *			bt = rip_pl_backtrace_id();	// directly from the hook itself
 *			rip_pl_fd_close(fd, bt, RIP_FD_CLOSE);
 *			rip_pl_leave();
 *		}
 *		return real(fd);
 *	}
 *
 * Record a release before the real call and an acquisition after it, so
 * that another thread that is handed the same resource records after us.
 * Never hold the guard across a real call that may throw (operator new)
 * or block for long.
 */
#ifndef RIP_PRELOAD_COMMON_H
#define RIP_PRELOAD_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <internal/preload.h>
#include <rip.h>
#include <rip/resource.h>
/* rip/module.h's functions are ours: declared here as defined, not weak */
#define RIP_MODULE_WEAK
#include <rip/module.h>

#define RIP_PL_EXPORT __attribute__((visibility("default")))
#define RIP_PL_TLS __attribute__((tls_model("initial-exec")))

#define RIP_PL_HOLES 4 /* unreadable ranges of its own stack a thread's bounds keep track of */

/* Per thread; initial-exec TLS: no allocation, no lock, safe in a signal handler. */
struct rip_pl_thread {
	uintptr_t guard;    /* nonzero: inside our own work (rip_pl_guard_up); see nest.c */
	uint32_t stack_ok;  /* 1: stack_lo/hi hold this thread's stack; 2: could not tell */
	uint32_t boot;	    /* inside dlsym: allocations come from the bootstrap buffer */
	uint32_t vfork;	    /* 1: vfork was called (wait.c): are we its child? */
	uint32_t unw_ready; /* 1: libunwind's TLS block is made, or being made (backtrace.c) */
	uint32_t vm;	    /* CLONE_VM children of clone(3) running on this TLS (clone.c) */
	int32_t vm_owner;   /* while vm: the tid of the thread whose TLS this is */
	uintptr_t stack_lo; /* lowest address of the thread's stack */
	uintptr_t stack_hi; /* one past its highest address; below its holes (thread.c) */
	uintptr_t stack_top; /* while it has holes: stack_hi before them */
	uint32_t nholes;     /* holes made in the stack above sp (hole), walks stop under them */
	uint32_t holes_lost; /* 1: more than RIP_PL_HOLES at once: stack_hi never raised again */
	uintptr_t hole[RIP_PL_HOLES][2];
	uintptr_t nest_sp;  /* while nested: sp of the hook of the signal handler (nest.c) */
	uint32_t nested;    /* RIP_PL_NESTED, RIP_PL_PENDING (nest.c) */
	uint32_t in_unw;    /* 1: inside libunwind's unw_backtrace (backtrace.c) */
	void *pend;	    /* the events left, NULL: none */
	uint32_t scratch;   /* 1 + the scratch slot this thread holds; 0: none */
	uint32_t scratch_used; /* bytes of it handed out */
	uintptr_t mods[2][2];  /* objects [lo, hi) found in the module map (rip_pl_mod_seen) */
	uint32_t mods_next;    /* the entry of mods the next object replaces */
};

/* rip_pl_thread.nested */
#define RIP_PL_NESTED 1u  /* a hook of a signal handler that interrupted our work runs */
#define RIP_PL_PENDING 2u /* such hooks left events for the interrupted one to write */

/* The stack pointer here (the caller's frame, inlined). */
static inline __attribute__((always_inline)) uintptr_t rip_pl_sp(void)
{
	uintptr_t sp;

#if defined(__x86_64__)
	__asm__("mov %%rsp, %0" : "=r"(sp));
#elif defined(__aarch64__)
	__asm__("mov %0, sp" : "=r"(sp));
#else
	sp = (uintptr_t)__builtin_frame_address(0);
#endif
	return sp;
}

/*
 * The value of the guard while our work runs here: the stack pointer of
 * the frame that raises it, with the low bit set (never 0).  One store
 * both raises the guard and says where: a signal handler's hook that finds
 * it up tells by it whether it interrupted our work (nest.c).
 */
static inline __attribute__((always_inline)) uintptr_t rip_pl_guard_up(void)
{
	return rip_pl_sp() | 1;
}

extern __thread struct rip_pl_thread rip_pl_self RIP_PL_TLS;

/*
 * Copy n bytes of the program's memory at src to dst, as the kernel reads a
 * system call's argument: false where the call would fail with EFAULT (an
 * argument that points nowhere is the call's error to give, not a crash in
 * our wrapper).  Memory above our frame in the page we run on (where a
 * caller's timespec or sigset_t mostly is) is read directly; other memory
 * directly once each of its pages is known readable (a probe with
 * rt_sigprocmask: one system call a page), or where that probe is refused.
 * errno untouched.
 */
bool rip_pl_peek(void *dst, const void *src, size_t n);

/*
 * Can the page of byte x be read, as a system call reads it?  1 yes, 0 no
 * (EFAULT), -1 the probe was refused (a sandbox).  One system call; errno
 * changed.  Async-signal-safe.
 */
int rip_pl_readable(uintptr_t x);

/*
 * Does the status text of a thread (/proc/.../status, buf NUL-terminated)
 * say a seccomp filter or strict mode is in force on it ("Seccomp:" not 0)?
 * A sandbox's filter that does not list process_vm_readv kills the process
 * at it: such a thread reads its own memory through /proc/self/mem instead.
 */
bool rip_pl_status_seccomp(const char *buf);

/* Nonzero: an internal failure turned tracing off for good; hooks forward only. */
extern int rip_pl_off;

/* Turn tracing off for good (fail open); err is kept for `rip` to show. */
void rip_pl_fail(int err);

/*
 * Secure execution (AT_SECURE: set-user-ID, set-group-ID, file
 * capabilities): the preload library does nothing at all, whatever the
 * environment says.  No lock: getauxval reads what the kernel gave at exec.
 */
static inline bool rip_pl_secure(void)
{
	return getauxval(AT_SECURE) != 0;
}

/* Nonzero once tracing has started (early or by the constructor): see rip_pl_enter. */
extern int rip_pl_started;

/*
 * A hook called before our constructor (from another library's
 * constructor): start tracing now, lock-free (common.c says how).  True
 * when tracing is on.
 */
bool rip_pl_start_early(void);

/*
 * The process's word in a page the kernel empties in a child made without
 * CLONE_VM (clone.c): 0 in a child of a raw clone or clone3, which ran no
 * fork handler.  Points at a constant 1 until the constructor maps it.
 */
extern uint32_t *rip_pl_alive __attribute__((visibility("hidden")));

/*
 * In such a child, before anything is written into the parent's file: run
 * librip's fork handler and ours now (clone.c).  True when tracing goes on.
 */
bool rip_pl_child_setup(void);

/*
 * The slow half of rip_pl_enter: the guard is up, or a CLONE_VM child of
 * clone(3) shares this thread's TLS (nest.c).  0: forward (our own work, or
 * the child's call, counted lost); 1: trace as usual (the guard is down);
 * 2: a hook of a signal handler that interrupted our work: traced, nested
 * (RIP_PL_NESTED, the guard stays up as it was until rip_pl_leave).
 */
int rip_pl_enter_odd(struct rip_pl_thread *t, uintptr_t sp);
/* Is the caller a CLONE_VM child running on the TLS of the thread t is (clone.c)? */
bool rip_pl_vm_child(const struct rip_pl_thread *t);
/* rip_pl_leave's slow half: a nested hook ends, or events wait (nest.c). */
void rip_pl_leave_slow(struct rip_pl_thread *t);
/*
 * librip's nested writer calls this for an event written while the thread
 * was writing another (a signal handler's): a hook of a handler that
 * interrupted our work keeps it for the interrupted hook to write after
 * (nest.c; true: kept, or counted lost here).  false: not ours, librip
 * counts it lost.  tail is the variable part as librip writes it (a string
 * with its NUL, or an array's count and elements).
 */
bool rip_pl_keep(const struct rip_event_type *type, const uint64_t *v, uint32_t nv,
		 const void *tail, uint32_t tlen);
/* For a wait wrapper while t->vm is up: is the caller such a child (not to record)? */
bool rip_pl_wait_foreign(struct rip_pl_thread *t);
/* After syscall(2) made a clone, clone3 or fork: set up the child at once (clone.c). */
void rip_pl_syscall_cloned(long ret);

/* Map the word rip_pl_alive points to (the constructor, first thing). */
void rip_pl_alive_init(void);

/* The fork-child handlers of each part, run by fork or by rip_pl_child_setup. */
void rip_pl_res_fork_child(void);
void rip_pl_wait_fork_child(void);
void rip_pl_watch_fork_child(void);
void rip_pl_sample_fork_child(void);

/* The next definition of name after this library, from the symbol tables; no lock (resolve.c). */
void *rip_pl_lookup_next(const char *name);
/* The same after the object whose dynamic section is dyn (a module's: rip_mod_next). */
void *rip_pl_lookup_after(const void *dyn, const char *name);

/*
 * Slow half of rip_pl_enter: the thread's first traced call, guard up (its
 * stack bounds: thread.c).  Never blocks.
 */
bool rip_pl_thread_init(void);

/*
 * A change of [a, a + len) to prot (PROT_NONE for an unmapping): before
 * the call (done false), a range that may become unreadable in the part of
 * this thread's stack above its sp lowers the stack's top (stack_hi)
 * under it, so that no walk of its stack reads there; after the call
 * succeeded (done true), a range made readable again raises it back.
 * thread.c.
 */
void rip_pl_stack_prot(uintptr_t a, size_t len, int prot, bool done);

/*
 * After an mprotect (pkey_mprotect) of [addr, addr + len) to prot that
 * succeeded, called by its hook (ret: the hook's return address):
 * accessible, and the program reserved address space before (a mmap with
 * PROT_NONE), a mem:alloc of kind mprotect, which readers make memory of
 * what it covers of the reservations.  mem.c.
 */
void rip_pl_mprotect_record(const void *ret, void *addr, size_t len, int prot);

/*
 * For rip_pl_stack_prot: a protection key other than the default's may
 * forbid reads of the range at any time, with no system call (pkey_set):
 * a hole for good, whatever prot says.
 */
#define RIP_PL_PROT_KEYED 0x40000000
static inline int rip_pl_pkey_prot(int prot, long pkey)
{
	return pkey > 0 ? prot | RIP_PL_PROT_KEYED : prot;
}

/*
 * The end of the hole of this thread's stack (rip_pl_stack_prot) that
 * address a is in, in whole pages; 0 if a is in none.  Async-signal-safe.
 */
uintptr_t rip_pl_stack_hole_end(uintptr_t a);

/*
 * addr (a wait's call site, a sample's instruction) outside the objects t
 * last found in the module map: put its object there (lib/modules.c's
 * __rip_modules_note, no lock of the loader's) and keep its range in
 * t->mods.  For readers after a death, which name addresses by the map: an
 * object dlopen'd since the map's last rescan was not in it.
 * Async-signal-safe (the sampler's handler calls it).
 */
void rip_pl_mod_note(struct rip_pl_thread *t, uintptr_t addr);

static inline __attribute__((always_inline)) void rip_pl_mod_seen(struct rip_pl_thread *t,
								  uintptr_t addr)
{
	if (RIP_UNLIKELY(addr - t->mods[0][0] >= t->mods[0][1] - t->mods[0][0]) &&
	    addr - t->mods[1][0] >= t->mods[1][1] - t->mods[1][0])
		rip_pl_mod_note(t, addr);
}

/*
 * rip_pl_enter - should this call be traced?  True when tracing is on,
 * category is enabled in the ring file and the thread is not already
 * inside a hook (librip, libunwind or a hook allocating on our behalf);
 * the guard is then up until rip_pl_leave().  A check and a branch when
 * no ring is open.
 */
static inline __attribute__((always_inline)) bool rip_pl_enter(unsigned category)
{
	struct rip_pl_thread *t = &rip_pl_self;

	/*
	 * Before anything started (no file yet), the first call starts it.
	 * Relaxed: a stale 0 only sends one more call to rip_pl_start_early,
	 * which finds it started.
	 */
	if (RIP_LIKELY(!rip_category_enabled(category))) {
		if (RIP_LIKELY(__atomic_load_n(&rip_pl_started, __ATOMIC_RELAXED)) ||
		    !rip_pl_start_early() || !rip_category_enabled(category))
			return false;
	} else if (RIP_UNLIKELY(rip_pl_off) &&
		   (__atomic_load_n(&rip_pl_started, __ATOMIC_RELAXED) || !rip_pl_start_early())) {
		return false; /* off for good, or not started and it cannot start now */
	}
	/* A child of a raw clone (its parent's file still mapped): set it up first. */
	if (RIP_UNLIKELY(!*rip_pl_alive) &&
	    (t->guard || !rip_pl_child_setup() || !rip_category_enabled(category)))
		return false;
	if (RIP_UNLIKELY(t->guard | t->vm)) {
		int odd = rip_pl_enter_odd(t, rip_pl_sp());

		if (odd != 1)
			return odd == 2; /* 2: a signal handler's hook, nested (guard as it was) */
	}
	if (RIP_UNLIKELY(rip_pl_off))
		return false;
	t->guard = rip_pl_guard_up();
	/* Guard up before any work: pairs with the check above in a signal handler. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (RIP_UNLIKELY(t->stack_ok == 0) && !rip_pl_thread_init()) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->guard = 0;
		return false;
	}
	return true;
}

/*
 * Nonzero once the constructor found a ring file and RIP_WAITS is not 0:
 * threads take slots at birth and the wait wrappers record (thread.c,
 * wait.c).  Set once, read relaxed.
 */
extern int rip_pl_waits;
/*
 * Nonzero once functions were patched in this process (fnpatch.c; set
 * before the patching, never cleared: calls under way keep their
 * trampolines): the wait wrappers then put the real return addresses back
 * around a blocking call, for a cancellation's unwinding (wait.h).  Read
 * relaxed: the patching's own system calls order it.
 */
extern int rip_pl_fn_live;
/* A slot for the calling thread, with a first snap at start (0: none); errno kept. */
void rip_pl_thread_born(uintptr_t start);

/* Nonzero: a pagemap snapshot was asked for while it could not be taken (pagemap.c). */
extern int rip_pl_pm_pending;
/* Take the snapshot rip_pl_pm_pending asks for (guard down). */
void rip_pl_pagemap_pending(void);

static inline __attribute__((always_inline)) void rip_pl_leave(void)
{
	struct rip_pl_thread *t = &rip_pl_self;

	/* All work done before the guard drops: pairs with the check in rip_pl_enter. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (RIP_UNLIKELY(t->nested)) {
		rip_pl_leave_slow(t);
		return;
	}
	t->guard = 0;
	/* Relaxed: pairs with the store of a signal handler that found us busy. */
	if (RIP_UNLIKELY(__atomic_load_n(&rip_pl_pm_pending, __ATOMIC_RELAXED)))
		rip_pl_pagemap_pending();
}

/* Is the calling thread inside a hook's own work? */
static inline bool rip_pl_busy(void)
{
	return rip_pl_self.guard != 0;
}

/*
 * The next definition of name (dlsym(RTLD_NEXT)), guard up while dlsym
 * runs; its allocations are served by the bootstrap allocator.  NULL if
 * there is none, and NULL without asking once the constructor has resolved
 * every hook (rip_pl_resolve_all): dlsym takes the loader's lock, which a
 * hook must never wait for.
 */
void *rip_pl_next(const char *name);

/*
 * Where a hook keeps its real function, and its name: one per RIP_PL_REAL
 * use, the record a module's RIP_REAL leaves (struct rip_modreal of
 * rip/module.h), in a section of our own.
 */
#define rip_pl_sym rip_modreal

/* Resolve the real function of every RIP_PL_REAL use at once (the constructor). */
void rip_pl_resolve_all(void);

/*
 * The one loop that resolves real functions, ours and the modules': each
 * record of [r, end) whose pointer is still NULL gets the next definition
 * of its name after the object whose dynamic section is dyn (a module's:
 * rip_pl_lookup_after), or after ours when dyn is NULL (rip_pl_next).
 */
void rip_pl_resolve_reals(const struct rip_modreal *r, const struct rip_modreal *end,
			  const void *dyn);

/*
 * RIP_PL_REAL(ptr, "name") - the real function in ptr (a static function
 * pointer of the hook).  Evaluates to ptr.  Each use leaves a record in the
 * rip_pl_syms section, so that the constructor resolves them all before
 * tracing starts; a hook called before that (from another library's
 * constructor) resolves its own, once.
 */
#define RIP_PL_REAL(PTR, NAME)                                                                     \
	(__extension__({                                                                           \
		static struct rip_pl_sym rip_pl_sym_                                               \
			__attribute__((section("rip_pl_syms"), used)) = { (void *)&(PTR), NAME };  \
		/* Relaxed both: the pointer is whole by itself, and it is all there is. */        \
		RIP_LIKELY(__atomic_load_n(&(PTR), __ATOMIC_RELAXED))                              \
		? (PTR)                                                                            \
		: (__atomic_store_n(&(PTR), (__typeof__(PTR))rip_pl_next(NAME), __ATOMIC_RELAXED), \
		   (PTR));                                                                         \
	}))

/*
 * RIP_PL_REAL_LATE(ptr, "name") - RIP_PL_REAL for a function of a library
 * that may come after our constructor resolved the hooks: a C++ runtime
 * that a C program's plugin brings along (dlopen, RTLD_LOCAL, out of
 * dlsym(RTLD_NEXT)'s scope too).  The hook's call shows it is loaded by
 * now: a real function still missing is looked up in the loaded objects'
 * symbol tables (rip_pl_lookup_next: no lock), and kept once found.
 */
#define RIP_PL_REAL_LATE(PTR, NAME)                                                                \
	(__extension__({                                                                           \
		if (RIP_UNLIKELY(!RIP_PL_REAL(PTR, NAME)))                                         \
			/* Relaxed: as in RIP_PL_REAL. */                                          \
			__atomic_store_n(&(PTR), (__typeof__(PTR))rip_pl_lookup_next(NAME),        \
					 __ATOMIC_RELAXED);                                        \
		(PTR);                                                                             \
	}))

/* For a hook whose real function is missing: sets errno to ENOSYS, returns -1. */
int rip_pl_enosys(void);

/*
 * rip_pl_backtrace_id - the interned backtrace id of the hooked call's
 * caller's stack (frames[0]: the return address of the hook), 0 if none.
 * Call it directly from the exported hook function (it skips exactly one
 * frame: its caller), with the guard up.  The first use of a new stack
 * emits its rip:bt event.
 */
uint32_t rip_pl_backtrace_id(void);

/*
 * rip_pl_backtrace_at - the same for a function that a hook calls directly
 * (rip_mod_acquire..., called by a module's wrapper): frame is that
 * function's own __builtin_frame_address(0), and frames[0] is the return
 * address of the hook that called it.
 */
uint32_t rip_pl_backtrace_at(const void *frame);

/*
 * RIP_PL_BT(frame) - the backtrace id for a recording step that an exported
 * hook and syscall(2)'s hook share (always inlined into both): frame NULL
 * in the exported hook (rip_pl_backtrace_id), or the frame of the function
 * that syscall()'s hook calls directly (rip_pl_backtrace_at).  Either way
 * frames[0] is the return address of the hooked call.
 */
#define RIP_PL_BT(FRAME) ((FRAME) ? rip_pl_backtrace_at(FRAME) : rip_pl_backtrace_id())

/*
 * Is ret (a hook's return address) in libunwind?  Its calls outside our
 * hooks (its per-thread cache, freed by a key destructor at thread exit)
 * are the tracer's own: the hooks forward them unrecorded.
 */
bool rip_pl_from_unwinder(const void *ret);

/* Bootstrap allocator: does p come from the static buffer dlsym's allocations used? */
bool rip_pl_boot_owns(const void *p);
/*
 * A free item of a pool of 64, a bit each in *busy: its index, taken
 * (acquire), or -1 when all are; rip_pl_bit_give hands it back (release:
 * the giver's uses of the item before the next taker's).  No lock, no
 * system call: from a hook, a signal handler or a CLONE_VM child.
 */
int rip_pl_bit_take(uint64_t *busy);
void rip_pl_bit_give(uint64_t *busy, unsigned i);
/* A zeroed block of the static buffer (align: a power of two); NULL when it is full. */
void *rip_pl_boot_alloc(size_t size, size_t align);
/* The size a bootstrap block was asked with. */
size_t rip_pl_boot_size(const void *p);
/*
 * Scratch: while a new thread takes its stack bounds (pthread_getattr_np
 * allocates a few small blocks), the allocator's hooks serve it from a
 * slot of the bootstrap buffer of its own, not from the real allocator,
 * whose first call on a thread gives it an arena.  begin: false when
 * every slot is taken; alloc: a zeroed block, NULL when the slot is full
 * (the caller fails as out of memory); free does nothing (boot_owns).
 */
bool rip_pl_scratch_begin(struct rip_pl_thread *t);
void rip_pl_scratch_end(struct rip_pl_thread *t);
void *rip_pl_scratch_alloc(struct rip_pl_thread *t, size_t size);

/* ---- emitters: one per event of rip/resource.h (category checks included) ---- */

void rip_pl_mem_alloc(const void *addr, uint64_t size, uint32_t bt, uint32_t kind);
void rip_pl_mem_free(const void *addr, uint32_t bt, uint32_t kind);
void rip_pl_mem_realloc(const void *old, const void *addr, uint64_t size, uint32_t bt);
void rip_pl_mem_unmap(const void *addr, uint64_t size, uint32_t bt, uint32_t kind);

void rip_pl_fd_open(int fd, uint32_t bt, uint32_t kind, int flags, const char *path);
void rip_pl_fd_close(int fd, uint32_t bt, uint32_t kind);
void rip_pl_fd_close_range(unsigned int first, unsigned int last, uint32_t bt, uint32_t kind);

void rip_pl_shm_create(int64_t id, uint64_t size, uint32_t bt, uint32_t kind, const char *name);
void rip_pl_shm_attach(const void *addr, uint64_t size, int64_t id, uint32_t bt, uint32_t kind);
void rip_pl_shm_detach(const void *addr, uint64_t size, uint32_t bt, uint32_t kind);
void rip_pl_shm_remove(int64_t id, uint32_t bt, uint32_t kind, const char *name);
void rip_pl_shm_resize(int64_t id, uint64_t size, uint32_t bt, uint32_t kind, const char *name);

void rip_pl_res_acquire(uint64_t id, uint64_t size, uint32_t bt, uint32_t kind);
void rip_pl_res_release(uint64_t id, uint32_t bt, uint32_t kind);
void rip_pl_res_ref(uint64_t id, uint32_t bt, uint32_t kind);
void rip_pl_res_unref(uint64_t id, uint32_t bt, uint32_t kind);
void rip_pl_res_transfer(uint64_t id, uint64_t size, uint32_t bt, uint32_t kind);

void rip_pl_mem_mapping(uint64_t start, uint64_t end, uint32_t seq, uint32_t prot,
			uint32_t flags, uint32_t page_size, const char *path);
void rip_pl_mem_pagemap(uint64_t start, uint32_t seq, uint32_t npages, const uint64_t *words,
			uint32_t nwords);
void rip_pl_mem_pagemap_end(uint32_t seq, uint32_t mappings, uint32_t reason, int error);

/* ---- mmap: mem.c owns the mmap, mremap and munmap symbols ---- */

#ifdef MREMAP_DONTUNMAP
#define RIP_PL_MREMAP_DONTUNMAP MREMAP_DONTUNMAP
#else
#define RIP_PL_MREMAP_DONTUNMAP 4 /* Linux 5.7 */
#endif

/*
 * Provided by shm.c (weak here: mem.c works without it).  mem.c calls them
 * from its mmap/mremap/munmap hooks, guard up, bt already taken:
 *
 * rip_pl_shm_mapped - a successful mmap that is not anonymous and private
 * (MAP_SHARED, or backed by a file): record shm:attach if it is shared
 * memory.  Called only when RIP_CAT_SHM is enabled.
 *
 * rip_pl_shm_unmapping - before the real munmap (or mremap, kind
 * RIP_SHM_MUNMAP either way) of [addr, addr + len): record shm:detach of
 * what of the range shm.c recorded, and return true if that was all of it;
 * false to let mem.c record it as mem:unmap RIP_MEM_MUNMAP (a range that
 * spans private and shared mappings is both).  Called whenever RIP_CAT_SHM
 * is enabled.
 */
void rip_pl_shm_mapped(void *addr, size_t len, int prot, int flags, int fd, off_t off,
		       uint32_t bt) __attribute__((weak));
bool rip_pl_shm_unmapping(void *addr, size_t len, uint32_t bt) __attribute__((weak));
/*
 * rip_pl_shm_remapped - after a successful mremap (flags its flags): if the
 * old range was a recorded shared mapping, record its move and return true.
 * With MREMAP_DONTUNMAP the old range stays attached.
 */
bool rip_pl_shm_remapped(void *old, size_t old_len, void *addr, size_t len, int flags, uint32_t bt)
	__attribute__((weak));

/*
 * rip_pl_maps_anon_private (thread.c) - is addr in anonymous private memory,
 * by /proc/self/maps read with raw system calls: 1 yes, 2 yes and PROT_NONE
 * (address space reserved), 0 no, -errno when the file cannot be read.  A
 * slow path: mremap's, to tell the mappings --mem records (its mmap saw the
 * flags) from files and shared memory.
 */
int rip_pl_maps_anon_private(uintptr_t addr);

/* ---- backtrace.c internals shared with common.c ---- */

/*
 * rip_pl_table_map - a private, lazily backed table of LEN zero bytes, or NULL.
 * A fork child gets it empty (MADV_WIPEONFORK) rather than a copy: fork
 * then neither copies its page tables nor write-protects the parent's pages
 * (a traced shell's fork cost twice as much with the copy).  *WIPED says
 * whether the kernel took the advice (Linux 4.14); if not, the child's copy
 * is the parent's, and the caller empties it itself.
 */
void *rip_pl_table_map(size_t len, bool *wiped);

/*
 * The tracer's own private mappings (its tables, the rows of unwind.c), so
 * that a pagemap snapshot leaves them out: they are not the program's
 * memory.  rip_pl_own_map_add records [p, p + len) (from the constructor or
 * a fork child: one thread); rip_pl_own_map_del forgets it again (a fork
 * child that remaps).  rip_pl_own_maps copies them, sorted by start, into
 * out (RIP_PL_OWN_MAPS at most) and returns how many.
 */
#define RIP_PL_OWN_MAPS 16
struct rip_pl_range {
	uintptr_t lo, hi;
};
void rip_pl_own_map_add(const void *p, size_t len);
void rip_pl_own_map_del(const void *p);
uint32_t rip_pl_own_maps(struct rip_pl_range *out);

/* Frames kept per stack (RIP_DEPTH, 1..RIP_BT_MAX_DEPTH; default 32). */
extern uint32_t rip_pl_depth;

int rip_pl_bt_init(void);	 /* once, from the constructor; 0 or -errno */
int rip_pl_bt_init_early(void); /* from rip_pl_start_early: the stack table only */
int rip_pl_bt_init_late(void);	 /* the constructor, after an early start: the rest */
void rip_pl_bt_fork_child(void); /* the child starts a fresh table (its trace is its own) */
/* rip:bt {id, frames}: the definition of a new stack. */
void rip_pl_bt_emit(uint32_t id, const uint64_t *frames, uint32_t n);

/* ---- pagemap.c internals shared with common.c ---- */

/* RIP_PAGEMAP, RIP_PAGEMAP_SIGNAL: from the constructor; 0 or -errno. */
int rip_pl_pagemap_init(void);
void rip_pl_pagemap_fork_child(void); /* no snapshot is in progress in the child */

/* ---- sample.c: CPU sampling for rip top (RIP_SAMPLE) ---- */

int rip_pl_sample_init(void);	       /* from the constructor; 0 (failures are counted) */
void rip_pl_sample_thread_start(void); /* a new thread's start, guard up: its timer */
/*
 * These read the program's set or mask only with rip_pl_peek, and give it
 * back as it is when it cannot be read: the call's EFAULT to give.
 */
/* in, or out holding it without the sampler's signal (signalfd) */
const sigset_t *rip_pl_sample_filter(const sigset_t *in, sigset_t *out);
/* set, or a per-thread copy of it without the sampler's signal (sigwait and family) */
const sigset_t *rip_pl_sample_set(const sigset_t *set);
/* mask, or a per-thread copy with the sampler's signal blocked (ppoll, sigsuspend...) */
const sigset_t *rip_pl_sample_mask(const sigset_t *mask);
/* The kernel's sigset_t (64 signals): the size a raw call's set or mask must have. */
#define RIP_PL_KSIGSET 8ul
/*
 * The same for a raw call's set (!mask: as rip_pl_sample_set) or mask (as
 * rip_pl_sample_mask), of size bytes at p as the kernel takes it: p, or
 * buf holding the changed copy (syscall(2)'s signalfd4, rt_sigtimedwait...)
 */
const void *rip_pl_sample_kset(const void *p, unsigned long size, bool mask, sigset_t *buf);
/* What a raw call's mask argument points at when the kernel takes it by a pointer of its own. */
struct rip_pl_ksigpack {
	const void *ss;	   /* the mask (a kernel sigset_t); NULL: none */
	unsigned long len; /* its size */
};
/*
 * The same for such an argument p (pselect6's, io_pgetevents's): p, or
 * pack holding its copy whose ss is buf, the changed mask.
 */
const void *rip_pl_sample_kpack(const void *p, struct rip_pl_ksigpack *pack, sigset_t *buf);
/*
 * The pending set a call just gave (size bytes at set, the kernel's
 * layout) without the sampler's signal, unless the program handles that
 * number itself: sigpending, syscall(SYS_rt_sigpending).
 */
void rip_pl_sample_pending(void *set, unsigned long size);
/*
 * Is a call (syscall(2)'s number n and its first two arguments, or prctl's
 * option and first argument with n = SYS_prctl) one that puts the thread in
 * seccomp strict mode?
 */
bool rip_pl_sample_is_strict(long n, long a0, long a1);
/*
 * The calling thread renamed th (0: itself, else its tid): if that is the
 * main thread, RIP_P_RENAMED in the process's file (the process's name then
 * says nothing of an exec: record/family.c).  A slow path: system calls.
 */
void rip_pl_renamed(int32_t tid);
/*
 * Around such a call: before it, the thread's sampling ends (in strict
 * mode a sample's system calls would kill the process); after it, ret the
 * call's result: when it failed, sampling starts again.
 */
void rip_pl_sample_strict_begin(void);
void rip_pl_sample_strict_end(long ret);

/* ---- mem.c internals shared with common.c ---- */

int rip_pl_mem_resolve(void); /* the real allocator, from the constructor; 0 or -errno */

/* ---- syscall(2): the calls of fd.c, mem.c and shm.c made through it ---- */

enum rip_pl_sys_class {
	RIP_PL_SYS_OTHER = 0,
	RIP_PL_SYS_FD,	/* rip_pl_fd_sys_before and _after record it */
	RIP_PL_SYS_MEM, /* rip_pl_mem_sys_before and _after record it */
	RIP_PL_SYS_SHM, /* rip_pl_shm_sys_before and _after record it */
};

/*
 * System V shared memory has calls of its own here (x86-64, arm64...);
 * elsewhere (i386...) glibc multiplexes it through SYS_ipc, not seen.
 */
#if defined(SYS_shmget) && defined(SYS_shmat) && defined(SYS_shmdt) && defined(SYS_shmctl)
#define RIP_PL_SYS_SYSV_SHM 1
#endif

/*
 * rip_pl_sys_resource - whether syscall(n, ...) makes or releases what a
 * hook of fd.c, mem.c or shm.c records (a switch: no call, no lock).  The
 * mmap family only where syscall(SYS_mmap) takes mmap's six arguments (64
 * bits).  memfd_secret has no wrapper: fd.c records it as a kind of its own.
 */
static inline enum rip_pl_sys_class rip_pl_sys_resource(long n)
{
	switch (n) {
#if __SIZEOF_LONG__ == 8
	case SYS_mmap:
	case SYS_munmap:
	case SYS_mremap:
		return RIP_PL_SYS_MEM;
#endif
#ifdef RIP_PL_SYS_SYSV_SHM
	case SYS_shmget:
	case SYS_shmat:
	case SYS_shmdt:
	case SYS_shmctl:
		return RIP_PL_SYS_SHM;
#endif
#ifdef SYS_memfd_secret
	case SYS_memfd_secret:
#endif
#ifdef SYS_open
	case SYS_open:
#endif
#ifdef SYS_creat
	case SYS_creat:
#endif
#ifdef SYS_openat2
	case SYS_openat2:
#endif
#ifdef SYS_dup2
	case SYS_dup2:
#endif
#ifdef SYS_pipe
	case SYS_pipe:
#endif
#ifdef SYS_accept
	case SYS_accept:
#endif
#ifdef SYS_eventfd
	case SYS_eventfd:
#endif
#ifdef SYS_signalfd
	case SYS_signalfd:
#endif
#ifdef SYS_epoll_create
	case SYS_epoll_create:
#endif
#ifdef SYS_inotify_init
	case SYS_inotify_init:
#endif
#ifdef SYS_pidfd_getfd
	case SYS_pidfd_getfd:
#endif
#ifdef SYS_io_uring_setup
	case SYS_io_uring_setup:
#endif
	case SYS_openat:
	case SYS_close:
	case SYS_close_range:
	case SYS_dup:
	case SYS_dup3:
	case SYS_fcntl:
	case SYS_pipe2:
	case SYS_socket:
	case SYS_socketpair:
	case SYS_accept4:
	case SYS_recvmsg:
	case SYS_recvmmsg:
	case SYS_eventfd2:
	case SYS_timerfd_create:
	case SYS_signalfd4:
	case SYS_epoll_create1:
	case SYS_inotify_init1:
	case SYS_memfd_create:
	case SYS_pidfd_open:
	case SYS_userfaultfd:
	case SYS_perf_event_open:
	case SYS_fanotify_init:
		return RIP_PL_SYS_FD;
	default:
		return RIP_PL_SYS_OTHER;
	}
}

/*
 * Called by syscall()'s hook only, directly (their frame starts the
 * backtrace), for the numbers of their class: _before the real call
 * (releases; fd's and shm's return what _after needs: dup2/dup3's probe,
 * shmget's kind, shmdt's detach), _after it with its return
 * (acquisitions).  ret_addr: syscall()'s return address
 * (mem.c forwards an allocator's or libunwind's calls unrecorded).  They
 * record only while their category is on, and leave errno as it was.
 */
int rip_pl_fd_sys_before(long n, const long *a);
void rip_pl_fd_sys_after(long n, const long *a, long ret, int before);
void rip_pl_mem_sys_before(long n, const long *a, const void *ret_addr);
void rip_pl_mem_sys_after(long n, const long *a, long ret, const void *ret_addr);
uint64_t rip_pl_shm_sys_before(long n, const long *a);
void rip_pl_shm_sys_after(long n, const long *a, long ret, uint64_t before);

#endif /* RIP_PRELOAD_COMMON_H */
