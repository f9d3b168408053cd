// SPDX-License-Identifier: Apache-2.0
/*
 * preload/fnpatch.c - the preload library's part in tracing functions
 * built with -fpatchable-function-entry (librip's lib/patch.c does the
 * patching and holds the trampolines):
 *
 *  - the watcher thread serves the requests of rip enable and rip disable
 *    (rip_pl_fn_serve): hdr.patch_req moved past patch_done, the list of
 *    sites waits in PATH.patch next to the ring file; its answer is
 *    patch_err, patch_ok, patch_failed, patch_on, then patch_done (release)
 *    and a wake of its futex.  The list was made by rip with the symbols
 *    of the program's binaries (names are never read in the process);
 *    it must be a regular file of this user, of the size its header says.
 *
 *  - the unwinder's entry points (_Unwind_RaiseException,
 *    _Unwind_Resume_or_Rethrow, _Unwind_ForcedUnwind, which exceptions and
 *    thread cancellation go through) first put the thread's real return
 *    addresses back where librip put its trampoline, so that the unwinder
 *    walks real frames: the calls it unwinds are seen leaving by the
 *    repair of the shadow stack, not by the trampoline.  _Unwind_Resume,
 *    where the unwinding goes on after a cleanup, puts back those of the
 *    frames above it that a catch inside the cleanup gave the trampoline.
 *
 *  - a catch block's start (__cxa_begin_catch, which every C++ catch calls
 *    first): the frames below the catching one are gone, whether their
 *    exit hooks ran (C++ code built with -finstrument-functions) or not
 *    (C frames, patched functions): the shadow stack drops them now, and
 *    the patched frames that live on get the trampoline back.  The catch
 *    of another runtime's exception (Rust's catch_unwind), which calls no
 *    __cxa_begin_catch, is seen where its personality lands in the
 *    handler's frame (_Unwind_SetIP).
 *
 *  - backtrace(3) and _Unwind_Backtrace, the program's own walks of its
 *    stack: the real return addresses lent back for the time of the walk,
 *    then the trampoline again, so that the program gets the frames it
 *    would without librip.
 *
 *  - longjmp and its kin (_longjmp, siglongjmp, and __longjmp_chk, which
 *    _FORTIFY_SOURCE builds call): the frames between here and where the
 *    jump lands are gone; the shadow stack drops them before the jump,
 *    instead of at the thread's next traced entry, which may never come.
 */
#include <elf.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <unwind.h>

#include <rip.h>
#include <internal/patchwhy.h>

#include "common.h"
#include "wait.h"
#include "watch.h"

int rip_pl_fn_live;

/* Read the request's list; its addresses (a mapping to unmap) into *out.  0 or -errno. */
static int rip_pl_fn_list(const char *path, struct rip_patch_list *l, uint64_t **out, size_t *len)
{
	struct stat st;
	void *m;
	int fd, err = 0;

	*out = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (size_t)st.st_size < sizeof(*l) || pread(fd, l, sizeof(*l), 0) != (ssize_t)sizeof(*l) ||
	    memcmp(l->magic, RIP_PATCH_MAGIC, sizeof(l->magic)) || l->n > RIP_PATCH_MAX ||
	    (size_t)st.st_size != sizeof(*l) + (size_t)l->n * 8) {
		err = -EINVAL;
		goto out;
	}
	if (l->n) {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			err = -errno;
			goto out;
		}
		*out = (uint64_t *)((char *)m + sizeof(*l));
		*len = (size_t)st.st_size;
	}
out:
	close(fd);
	return err;
}

void rip_pl_fn_serve(struct rip_file_hdr *h)
{
	uint32_t req = __atomic_load_n(&h->patch_req, __ATOMIC_ACQUIRE), ok = 0, failed = 0;
	struct rip_patch_list l;
	char path[PATH_MAX];
	uint64_t *addrs = NULL;
	size_t len = 0;
	int err;

	if (req == __atomic_load_n(&h->patch_done, __ATOMIC_RELAXED))
		return;
	err = rip_ring_path(path, sizeof(path) - 6);
	if (!err) {
		strcat(path, ".patch");
		err = rip_pl_fn_list(path, &l, &addrs, &len);
	}
	if (!err && l.op == 1)
		__atomic_store_n(&rip_pl_fn_live, 1, __ATOMIC_RELAXED);
	if (!err)
		err = __rip_fn_patch(addrs, l.n, l.op == 1, &ok, &failed);
	if (len)
		munmap((char *)addrs - sizeof(l), len);
	__atomic_store_n(&h->patch_err, -err, __ATOMIC_RELAXED);
	__atomic_store_n(&h->patch_ok, ok, __ATOMIC_RELAXED);
	__atomic_store_n(&h->patch_failed, failed, __ATOMIC_RELAXED);
	__atomic_store_n(&h->patch_on, __rip_fn_patched(), __ATOMIC_RELAXED);
	/* Release: the answer before the word the requester waits on (it acquires). */
	__atomic_store_n(&h->patch_done, req, __ATOMIC_RELEASE);
	syscall(SYS_futex, &h->patch_done, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

/* ---- the unwinder ---------------------------------------------------------------------- */

/*
 * The exceptions of other runtimes than C++'s (Rust's panics) in flight on
 * this thread, raised through the hooks below, the last on top: their
 * catches call no __cxa_begin_catch, and are seen where the personality
 * lands in the handler's frame (_Unwind_SetIP).  A C++ exception is not
 * kept (its catch is seen at __cxa_begin_catch), nor a forced unwinding
 * (its private_2 is the stop function's).  Past RIP_PL_EXC_MAX nested
 * ones, the deeper are not kept: their catches go unseen.
 */
#define RIP_PL_EXC_MAX 8
static __thread struct _Unwind_Exception *rip_pl_exc[RIP_PL_EXC_MAX] RIP_PL_TLS;
static __thread uint32_t rip_pl_nexc RIP_PL_TLS;

/* e raised: kept, unless it is C++'s or on top already (a rethrow raises it again). */
static void rip_pl_exc_raised(struct _Unwind_Exception *e)
{
	uint64_t cls = e->exception_class;
	uint32_t n = rip_pl_nexc;

	/* "GNUCC++" (libstdc++) or "CLNGC++" (libc++abi), then a version byte: big-endian */
	if (cls >> 8 == 0x474e5543432b2bull || cls >> 8 == 0x434c4e47432b2bull)
		return;
	if (n < RIP_PL_EXC_MAX && !(n && rip_pl_exc[n - 1] == e))
		rip_pl_exc[rip_pl_nexc++] = e;
}

/* e lands in a catch, or its raise returned (no handler): no more on top. */
static void rip_pl_exc_gone(const void *e)
{
	uint32_t n = rip_pl_nexc;

	if (n && rip_pl_exc[n - 1] == e)
		rip_pl_nexc = n - 1;
}

RIP_PL_EXPORT _Unwind_Reason_Code _Unwind_RaiseException(struct _Unwind_Exception *e)
{
	static _Unwind_Reason_Code (*real)(struct _Unwind_Exception *);
	_Unwind_Reason_Code rc;

	__rip_fn_unwinding();
	if (!RIP_PL_REAL(real, "_Unwind_RaiseException"))
		return _URC_FATAL_PHASE1_ERROR;
	rip_pl_exc_raised(e);
	rc = real(e);
	rip_pl_exc_gone(e);
	return rc;
}

RIP_PL_EXPORT _Unwind_Reason_Code _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *e)
{
	static _Unwind_Reason_Code (*real)(struct _Unwind_Exception *);
	_Unwind_Reason_Code rc;

	__rip_fn_unwinding();
	if (!RIP_PL_REAL(real, "_Unwind_Resume_or_Rethrow"))
		return _URC_FATAL_PHASE1_ERROR;
	if (!e->private_1)
		rip_pl_exc_raised(e); /* raised again; else a forced unwinding goes on */
	rc = real(e);
	rip_pl_exc_gone(e);
	return rc;
}

RIP_PL_EXPORT _Unwind_Reason_Code _Unwind_ForcedUnwind(struct _Unwind_Exception *e,
						       _Unwind_Stop_Fn stop, void *arg)
{
	static _Unwind_Reason_Code (*real)(struct _Unwind_Exception *, _Unwind_Stop_Fn, void *);

	__rip_fn_unwinding();
	if (!RIP_PL_REAL(real, "_Unwind_ForcedUnwind"))
		return _URC_FATAL_PHASE1_ERROR;
	return real(e, stop, arg);
}

/*
 * The end of a cleanup (a landing pad that ran a frame's destructors): the
 * unwinding goes on from its frame.  A catch inside the cleanup (a
 * destructor that catches an exception of its own) or a longjmp that
 * landed in it gave the frames above their trampoline back
 * (__rip_fn_rets_caught), which the unwinder cannot walk through (it would
 * find no handler and abort): their real return addresses again, as the
 * unwinding's start put them.  Only the frames above this hook's (the
 * cleanup's and its callers': the ones below are gone), and only the slots
 * that hold the trampoline; kept as __rip_fn_unwinding keeps them, for the
 * catch to give back (lent is not used).
 */
static __attribute__((noinline)) void rip_pl_resume_lend(uintptr_t sp)
{
	uint64_t lent[2];

	__rip_fn_rets_lend(sp, lent);
}

/*
 * The hook keeps no local whose address is taken (the lend is done in a
 * frame of its own, above), so that it jumps to the real one (a sibling
 * call; it never returns): libgcc starts the unwinding from the caller of
 * _Unwind_Resume, the cleanup's frame, as without this hook.  A call
 * instead would cost the unwinder one frame more to walk at every cleanup
 * (doc/design.md: +22% of user time on exceptions through five frames
 * with destructors, +6% with the jump).
 */
RIP_PL_EXPORT void _Unwind_Resume(struct _Unwind_Exception *e)
{
	static void (*real)(struct _Unwind_Exception *);

	rip_pl_resume_lend((uintptr_t)__builtin_frame_address(0));
	if (!RIP_PL_REAL(real, "_Unwind_Resume"))
		abort(); /* a landing pad with no unwinder: cannot be */
	real(e);
}

/*
 * A personality lands the unwinding in a frame: a cleanup (the unwinding
 * goes on at its _Unwind_Resume) or a handler.  The handler's frame of the
 * exception on top (rip_pl_exc_raised) is the one libgcc found in its
 * search (private_2: its cfa, the frame's sp at the call, less one for a
 * frame a signal interrupted; LLVM's libunwind sets it likewise): a catch of a
 * runtime that calls no __cxa_begin_catch, seen as one (__rip_fn_caught:
 * the frames below are gone, those above get their trampoline back).
 * Nothing else: a cleanup's frames above stay as the unwinding put them (a
 * cleanup of glibc's, which goes on without the hook of _Unwind_Resume,
 * could not walk past a trampoline).  The exception is alive: it is on its
 * way to this very catch.
 */
RIP_PL_EXPORT void _Unwind_SetIP(struct _Unwind_Context *ctx, _Unwind_Ptr ip)
{
	static void (*real)(struct _Unwind_Context *, _Unwind_Ptr);
	static _Unwind_Ptr (*cfa_of)(struct _Unwind_Context *);
	uint32_t n = rip_pl_nexc;

	if (!RIP_PL_REAL(real, "_Unwind_SetIP"))
		abort(); /* a personality with no unwinder: cannot be */
	if (n && RIP_PL_REAL(cfa_of, "_Unwind_GetCFA")) {
		uintptr_t cfa = cfa_of(ctx), h = rip_pl_exc[n - 1]->private_2;

		if (h == cfa || h == cfa - 1) {
			rip_pl_nexc = n - 1;
			__rip_fn_caught(cfa);
		}
	}
	real(ctx, ip);
}

/* The catching frame's sp: this hook's cfa (its caller's sp at the call). */
RIP_PL_EXPORT void *__cxa_begin_catch(void *e);
RIP_PL_EXPORT void *__cxa_begin_catch(void *e)
{
	static void *(*real)(void *);

	rip_pl_exc_gone(e);
	__rip_fn_caught((uintptr_t)__builtin_frame_address(0) + 2 * sizeof(void *));
	/* Late: the runtime of a C program's C++ plugin comes with the plugin. */
	if (!RIP_PL_REAL_LATE(real, "__cxa_begin_catch"))
		abort(); /* a catch with no C++ runtime: cannot be */
	return real(e);
}

/* ---- backtrace(3) ------------------------------------------------------------------------ */

#define RIP_PL_BT_LOCAL 256 /* frames asked for on this hook's stack; more: a mapping */

/*
 * The program's own backtrace: the real one, with the real return addresses
 * of the thread's patched frames lent back for the time of the walk
 * (__rip_fn_rets_lend: glibc's unwinder would stop at the trampoline's
 * frame, whose return address is undefined) and the trampoline again after
 * it (__rip_fn_rets_back), so that those frames' exits are seen.  The real
 * one counts this hook as its caller's frame: it is asked for one frame
 * more, and the first it gives is dropped, so that the program gets the
 * frames it would without librip.  No lock, no allocation but the
 * mapping of a buffer past RIP_PL_BT_LOCAL frames (a system call); lend
 * and back change nothing when the thread is inside a patched entry or exit
 * (__rip_fn_busy: a signal handler's backtrace), and nothing without
 * patched functions.
 */
RIP_PL_EXPORT int backtrace(void **buf, int size)
{
	static int (*real)(void **, int);
	void *local[RIP_PL_BT_LOCAL], **b = local;
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	int n, ask = size < INT_MAX ? size + 1 : size;
	size_t len = 0;
	uint64_t lent[2];

	if (!RIP_PL_REAL(real, "backtrace"))
		return 0;
	if (size <= 0)
		return 0;
	if (ask > RIP_PL_BT_LOCAL) {
		len = (size_t)ask * sizeof(*b);
		b = (void **)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (b == MAP_FAILED)
			return real(buf, size); /* frames still, this hook's first */
	}
	__rip_fn_rets_lend(sp, lent);
	n = real(b, ask);
	__rip_fn_rets_back(sp, lent);
	n = n > 0 ? n - 1 : 0;
	memcpy(buf, b + 1, (size_t)n * sizeof(*b));
	if (len)
		syscall(SYS_munmap, b, len);
	/* Not a tail call: the walk's first frame is this one's (it is not one). */
	__asm__ __volatile__("" ::: "memory");
	return n;
}

/* ---- _Unwind_Backtrace ------------------------------------------------------------------- */

/* The caller's walk: its callback and argument, and the frame to drop (this hook's). */
struct rip_pl_unw_trace {
	_Unwind_Trace_Fn fn;
	void *arg;
	int skip;
};

/*
 * Each frame of the real walk: the first is the hook's own, not the
 * program's (the walk starts at its caller); the others go to the caller's
 * callback as they would without librip.
 */
static _Unwind_Reason_Code rip_pl_unw_trace_step(struct _Unwind_Context *ctx, void *arg)
{
	struct rip_pl_unw_trace *w = arg;

	if (w->skip) {
		w->skip = 0;
		return _URC_NO_REASON;
	}
	return w->fn(ctx, w->arg);
}

/*
 * The program's own walk through libgcc's unwinder (Rust's and libstdc++'s
 * backtraces, boost::stacktrace, abseil, folly): as backtrace(3) above, the
 * real return addresses lent back for the time of the walk, the trampoline
 * again after it (glibc's backtrace finds libgcc's function by a handle of
 * its own: it never comes here).  The callback runs while they are lent:
 * a patched function it calls pushes its entry above the lent ones (its
 * frame is below sp) and pops it on return; a longjmp out of it or a catch
 * above it gives the lent frames their trampoline back
 * (__rip_fn_rets_caught), and rets_back then leaves them as they are; a
 * nested walk (backtrace(3), this) finds nothing to lend.  Nothing written
 * without patched functions; no lock, no allocation.
 */
RIP_PL_EXPORT _Unwind_Reason_Code _Unwind_Backtrace(_Unwind_Trace_Fn fn, void *arg)
{
	static _Unwind_Reason_Code (*real)(_Unwind_Trace_Fn, void *);
	struct rip_pl_unw_trace w = { fn, arg, 1 };
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	_Unwind_Reason_Code rc;
	uint64_t lent[2];

	if (!RIP_PL_REAL(real, "_Unwind_Backtrace"))
		return _URC_FATAL_PHASE1_ERROR;
	__rip_fn_rets_lend(sp, lent);
	rc = real(rip_pl_unw_trace_step, &w);
	__rip_fn_rets_back(sp, lent);
	/* Not a tail call: the walk's first frame is this one's (it drops it). */
	__asm__ __volatile__("" ::: "memory");
	return rc;
}

/* ---- longjmp ---------------------------------------------------------------------------- */

#if defined(__x86_64__)
/*
 * Where a longjmp to env lands: the sp setjmp saved (its caller's sp at the
 * call), which glibc keeps mangled with the thread's pointer guard
 * (PTR_MANGLE: xor with the guard at %fs:0x30 in its tcbhead_t, then
 * rotated left by 17 bits).  0 when it cannot be a frame's: unaligned.
 */
#define RIP_PL_JB_RSP 6
static uintptr_t rip_pl_jmp_sp(const struct __jmp_buf_tag *env)
{
	uintptr_t v = (uintptr_t)env->__jmpbuf[RIP_PL_JB_RSP], guard;

	__asm__("mov %%fs:0x30, %0" : "=r"(guard));
	v = (v >> 17 | v << (64 - 17)) ^ guard;
	return v % 16 ? 0 : v;
}

/*
 * Before the jump: the shadow stack drops what it jumps over (lib/func.c),
 * and so do the patched calls' entries when the jump starts and lands on
 * the thread's own stack (its bounds known: thread.c, from the maps file
 * at a first jump with functions patched); a jump to or from another stack
 * (a coroutine's, a signal handler's) leaves them to their slots' test.
 */
static void rip_pl_jumping(const struct __jmp_buf_tag *env)
{
	struct rip_pl_thread *t = &rip_pl_self;
	uintptr_t sp = rip_pl_jmp_sp(env), here = rip_pl_sp(), lo = 0;

	if (!sp)
		return;
	if (RIP_UNLIKELY(t->stack_ok == 0) && !t->guard && !t->vm &&
	    __atomic_load_n(&rip_pl_fn_live, __ATOMIC_RELAXED)) {
		t->guard = rip_pl_guard_up();
		/* Guard up before the work: pairs with rip_pl_enter's check in a signal handler. */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		rip_pl_thread_init();
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->guard = 0;
	}
	if (t->stack_ok == 1 && here >= t->stack_lo && here < sp && sp < t->stack_hi)
		lo = t->stack_lo;
	__rip_fn_jumped(sp, lo);
}

/* One hook a name: each jumps to the real one of its own name. */
#define RIP_PL_LONGJMP(NAME)                                                                       \
	RIP_PL_EXPORT __attribute__((noreturn)) void NAME(struct __jmp_buf_tag env[1], int val)    \
	{                                                                                          \
		static void (*real)(struct __jmp_buf_tag *, int);                                  \
                                                                                                   \
		rip_pl_jumping(env);                                                               \
		if (!RIP_PL_REAL(real, #NAME))                                                     \
			abort(); /* no libc: cannot be */                                          \
		real(env, val);                                                                    \
		__builtin_unreachable();                                                           \
	}

void __longjmp_chk(struct __jmp_buf_tag env[1], int val) __attribute__((noreturn));
RIP_PL_LONGJMP(longjmp)
RIP_PL_LONGJMP(_longjmp)
RIP_PL_LONGJMP(siglongjmp)
RIP_PL_LONGJMP(__longjmp_chk)
#endif

/* ---- pthread_exit ----------------------------------------------------------------------- */

/*
 * pthread_exit unwinds the thread (glibc's __pthread_unwind, which reaches
 * libgcc's unwinder through a handle of its own: the unwinder hooks above
 * never see it): the real return addresses first, or the unwinder stops at
 * the first patched frame and the cleanups and destructors above it do not
 * run.  The thread ends: the trampolines are not given back.
 */
RIP_PL_EXPORT __attribute__((noreturn)) void pthread_exit(void *ret)
{
	static void (*real)(void *);

	if (__atomic_load_n(&rip_pl_fn_live, __ATOMIC_RELAXED))
		__rip_fn_unwinding();
	if (!RIP_PL_REAL(real, "pthread_exit"))
		abort(); /* no libc: cannot be */
	real(ret);
	__builtin_unreachable();
}

/* A cancellation point of its own: as a blocking call's wrapper does (wait.h). */
RIP_PL_EXPORT void pthread_testcancel(void)
{
	static void (*real)(void);
	uint64_t lent[2];

	if (!RIP_PL_REAL(real, "pthread_testcancel"))
		return;
	rip_pl_fn_blocking(lent);
	real();
	rip_pl_fn_unblocked(lent);
}

/* ---- patching at start: RIP_FUNCTIONS=GLOB ---------------------------------------------- */

/*
 * RIP_FUNCTIONS=GLOB[,GLOB...] (rip run --functions=GLOB sets it): the
 * constructor patches, before main, the patchable entries of the objects
 * loaded at start whose function names a glob picks (fnmatch; "!GLOB"
 * leaves names out; only "!GLOB"s: every other function).  The names are
 * the symbol tables' (.symtab, else .dynsym): C++ names are mangled here,
 * unlike rip enable's, which rip demangles.  This is the one place the
 * process reads names; it does so once, in the constructor (no hook runs
 * it, no caller holds a lock of ours), reading its own binaries.  The
 * files are read through a private read-only mapping and treated as
 * hostile all the same: every offset is checked against the file's size.
 * The sites go to __rip_fn_patch as rip enable's do; the answer is left in
 * the header's patch words (patch_err, patch_ok, patch_failed, patch_on)
 * and said on stderr when nothing could be patched.  Objects loaded later
 * (dlopen) are not patched: rip enable patches them.
 */
#define RIP_PL_FN_GLOBS 32

struct rip_pl_fn_pick {
	char *globs[RIP_PL_FN_GLOBS];
	size_t n;
	bool any_plain;
	uint64_t *addr; /* the picked sites (malloc), runtime addresses */
	size_t len, cap;
};

static bool rip_pl_fn_glob_pick(const struct rip_pl_fn_pick *p, const char *name)
{
	bool hit = false;

	for (size_t i = 0; i < p->n; i++) {
		if (p->globs[i][0] == '!') {
			if (!fnmatch(p->globs[i] + 1, name, 0))
				return false;
			continue;
		}
		hit = hit || !fnmatch(p->globs[i], name, 0);
	}
	return hit || !p->any_plain;
}

/* Is [off, off + len) inside a file of size sz? */
static bool rip_pl_fn_in(uint64_t off, uint64_t len, uint64_t sz)
{
	return off <= sz && len <= sz - off;
}

#define RIP_PL_FN_PICKED 1u /* a site the globs pick */
#define RIP_PL_FN_START 2u  /* a site that is a function's start */

static int rip_pl_fn_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The sites of the ELF file mapped at f (sz bytes), loaded with bias, that
 * p's globs pick, appended to p->addr.  0, or -errno (-EBADMSG: not an ELF
 * file we read, or a corrupt one).
 */
static int rip_pl_fn_elf(const uint8_t *f, size_t sz, uintptr_t bias, struct rip_pl_fn_pick *p)
{
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)f;
	const ElfW(Shdr) * sh, *sec = NULL, *str;
	uint64_t *sites = NULL, *entry = NULL; /* entry: where a site is patched (0: there) */
	uint8_t *picked = NULL;		       /* RIP_PL_FN_* */
	size_t nsites = 0;
	int symtab = -1, err = 0;

	if (sz < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(ElfW(Shdr)) ||
	    !rip_pl_fn_in(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(ElfW(Shdr)), sz) ||
	    eh->e_shstrndx >= eh->e_shnum || eh->e_shoff % 8)
		return -EBADMSG;
	sh = (const ElfW(Shdr) *)(f + eh->e_shoff);
	str = &sh[eh->e_shstrndx];
	if (!rip_pl_fn_in(str->sh_offset, str->sh_size, sz))
		return -EBADMSG;
	for (int i = 0; i < eh->e_shnum; i++) {
		static const char want[] = "__patchable_function_entries";

		if (sh[i].sh_type == SHT_SYMTAB)
			symtab = i;
		else if (sh[i].sh_type == SHT_DYNSYM && symtab < 0)
			symtab = i;
		if (sh[i].sh_type == SHT_PROGBITS && (sh[i].sh_flags & SHF_ALLOC) &&
		    sh[i].sh_name < str->sh_size && str->sh_size - sh[i].sh_name >= sizeof(want) &&
		    !memcmp(f + str->sh_offset + sh[i].sh_name, want, sizeof(want)))
			sec = &sh[i];
	}
	if (!sec || symtab < 0 || !rip_pl_fn_in(sec->sh_offset, sec->sh_size, sz))
		return 0; /* no patchable entry, or no names to pick them by */
	nsites = sec->sh_size / 8;
	if (!nsites)
		return 0;
	sites = malloc(nsites * sizeof(*sites));
	entry = calloc(nsites, sizeof(*entry));
	picked = calloc(nsites, 1);
	if (!sites || !entry || !picked) {
		err = -ENOMEM;
		goto out_free;
	}
	memcpy(sites, f + sec->sh_offset, nsites * 8);
	/* A PIE or a shared object: 0 words, filled by R_X86_64_RELATIVE relocations. */
	for (int i = 0; i < eh->e_shnum; i++) {
		const ElfW(Rela) * r;

		if (sh[i].sh_type != SHT_RELA || sh[i].sh_entsize != sizeof(*r) ||
		    !rip_pl_fn_in(sh[i].sh_offset, sh[i].sh_size, sz) || sh[i].sh_offset % 8)
			continue;
		r = (const ElfW(Rela) *)(f + sh[i].sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*r); k++) {
			uint64_t at = r[k].r_offset - sec->sh_addr;

			if (ELF64_R_TYPE(r[k].r_info) == R_X86_64_RELATIVE &&
			    r[k].r_offset >= sec->sh_addr && at < nsites * 8 && !(at % 8) &&
			    !sites[at / 8])
				sites[at / 8] = (uint64_t)r[k].r_addend;
		}
	}
	qsort(sites, nsites, sizeof(*sites), rip_pl_fn_cmp);
	{
		const ElfW(Shdr) *st = &sh[symtab], *ss;
		const ElfW(Sym) * sym;

		if (st->sh_link >= eh->e_shnum || st->sh_entsize != sizeof(*sym) ||
		    !rip_pl_fn_in(st->sh_offset, st->sh_size, sz) || st->sh_offset % 8) {
			err = -EBADMSG;
			goto out_free;
		}
		ss = &sh[st->sh_link];
		if (!rip_pl_fn_in(ss->sh_offset, ss->sh_size, sz) || !ss->sh_size ||
		    f[ss->sh_offset + ss->sh_size - 1]) {
			err = -EBADMSG;
			goto out_free;
		}
		sym = (const ElfW(Sym) *)(f + st->sh_offset);
		/*
		 * Two passes: the sites that are a function's start, then those
		 * that are not, each for the next function's start at most
		 * RIP_PATCH_PREFIX_MAX bytes on (-fpatchable-function-entry=N,M
		 * lists where the nops begin, M bytes before the entry): such a
		 * site is patched at that entry (entry[]), not in its prefix,
		 * which never runs.
		 */
		for (int pass = 0; pass < 2; pass++) {
			for (size_t k = 0; k < st->sh_size / sizeof(*sym); k++) {
				uint64_t a = sym[k].st_value;
				size_t lo = 0, hi = nsites;

				if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC ||
				    sym[k].st_shndx == SHN_UNDEF || sym[k].st_name >= ss->sh_size)
					continue;
				while (lo < hi) { /* the first site at or above the symbol */
					size_t mid = lo + (hi - lo) / 2;

					if (sites[mid] < a)
						lo = mid + 1;
					else
						hi = mid;
				}
				if (!pass) {
					if (lo < nsites && sites[lo] == a)
						picked[lo] |= RIP_PL_FN_START;
					continue;
				}
				if (lo < nsites && sites[lo] == a)
					; /* a start, as pass 0 found */
				else if (lo && a - sites[lo - 1] <= RIP_PATCH_PREFIX_MAX &&
					 !(picked[lo - 1] & RIP_PL_FN_START) &&
					 (!entry[lo - 1] || entry[lo - 1] == a))
					entry[--lo] = a;
				else
					continue;
				if (!(picked[lo] & RIP_PL_FN_PICKED) &&
				    rip_pl_fn_glob_pick(p, (const char *)f + ss->sh_offset +
								   sym[k].st_name))
					picked[lo] |= RIP_PL_FN_PICKED;
			}
		}
	}
	for (size_t i = 0; i < nsites; i++) {
		if (!(picked[i] & RIP_PL_FN_PICKED) || (i && sites[i] == sites[i - 1]))
			continue;
		if (p->len == p->cap) {
			size_t nc = p->cap ? p->cap * 2 : 256;
			uint64_t *nv = realloc(p->addr, nc * sizeof(*nv));

			if (!nv) {
				err = -ENOMEM;
				goto out_free;
			}
			p->addr = nv;
			p->cap = nc;
		}
		p->addr[p->len++] =
			(entry[i] ? entry[i] : sites[i]) + (eh->e_type == ET_DYN ? bias : 0);
	}
out_free:
	free(picked);
	free(entry);
	free(sites);
	return err;
}

static int rip_pl_fn_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct rip_pl_fn_pick *p = arg;
	const char *path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name :
								   "/proc/self/exe";
	struct stat st;
	void *m;
	int fd;

	(void)size;
	if (info->dlpi_name && info->dlpi_name[0] && info->dlpi_name[0] != '/')
		return 0; /* the vDSO ("linux-vdso.so.1"), nothing on disk */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(ElfW(Ehdr))) {
		close(fd);
		return 0;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return 0;
	/* A file changed under us since the loader mapped it: its sites are checked as nops. */
	rip_pl_fn_elf(m, (size_t)st.st_size, (uintptr_t)info->dlpi_addr, p);
	munmap(m, (size_t)st.st_size);
	return 0;
}

void rip_pl_fn_start(void)
{
	const char *v = secure_getenv("RIP_FUNCTIONS");
	struct rip_file_hdr *h = __rip_file_hdr();
	struct rip_pl_fn_pick p = { .n = 0 };
	uint32_t ok = 0, failed = 0;
	char *list, *save = NULL;
	int err = 0;

	if (!v || !*v || !strcmp(v, "0") || !strcmp(v, "1") || !h)
		return;
	list = strdup(v);
	if (!list)
		return;
	for (char *g = strtok_r(list, ",", &save); g && p.n < RIP_PL_FN_GLOBS;
	     g = strtok_r(NULL, ",", &save)) {
		p.globs[p.n++] = g;
		p.any_plain = p.any_plain || g[0] != '!';
	}
	dl_iterate_phdr(rip_pl_fn_object, &p);
	if (p.len) {
		qsort(p.addr, p.len, sizeof(*p.addr), rip_pl_fn_cmp);
		__atomic_store_n(&rip_pl_fn_live, 1, __ATOMIC_RELAXED);
		err = __rip_fn_patch(p.addr,
				     (uint32_t)(p.len < RIP_PATCH_MAX ? p.len : RIP_PATCH_MAX),
				     true, &ok, &failed);
	}
	__atomic_store_n(&h->patch_err, -err, __ATOMIC_RELAXED);
	__atomic_store_n(&h->patch_ok, ok, __ATOMIC_RELAXED);
	__atomic_store_n(&h->patch_failed, failed, __ATOMIC_RELAXED);
	__atomic_store_n(&h->patch_on, __rip_fn_patched(), __ATOMIC_RELAXED);
	if (!ok) {
		char msg[768], why[256];
		int len = snprintf(msg, sizeof(msg),
				   "librip-preload.so: RIP_FUNCTIONS=%s: no function patched: %s\n",
				   v,
				   !p.len ? "it picks no function built with "
					    "-fpatchable-function-entry" :
					    rip_patch_why(-err, why, sizeof(why)));

		if (len > 0 &&
		    write(2, msg, (size_t)len < sizeof(msg) ? (size_t)len : sizeof(msg) - 1) < 0)
			(void)0; /* nowhere to say it */
	}
	free(p.addr);
	free(list);
}
