// SPDX-License-Identifier: Apache-2.0
/*
 * preload/ucontext.c - coroutines built on ucontext (makecontext,
 * swapcontext, setcontext) get slots of their own, as if their library
 * called rip_coro_create and rip_coro_switch_in itself.
 *
 * makecontext gives the context a coroutine slot (once per ucontext_t
 * address: a context made again keeps its slot, unless its function ran
 * to its end) whose first snap is the context's function, for readers to
 * name.  swapcontext and setcontext switch the thread out of the
 * coroutine it runs, if any, and into the target's, if the target was
 * made by makecontext; a context that was not (the thread's own stack,
 * saved by getcontext or swapcontext) is the thread itself.
 *
 * A context function that returns goes to the context's uc_link inside
 * libc (__start_context calls setcontext there without the PLT), where
 * no hook sees it.  So makecontext starts the context at rip_pl_ctx_start
 * instead, which calls the function with the program's arguments and,
 * when it returns, does what a swapcontext into uc_link would (out of the
 * coroutine, into uc_link's if uc_link was made), gives the coroutine's
 * slot back as rip_coro_destroy does (its function has ended: its shadow
 * stack is empty), then returns into __start_context, which goes on as
 * without us.  What it needs (the function, its arguments, uc_link, the
 * context's entry) lies at the top of the context's own stack, above what
 * the real makecontext puts there: no allocation, and a context whose
 * stack is copied away and back (a shared stack) keeps it.
 *
 * The contexts are found in a fixed table of RIP_PL_CTX_MAX addresses,
 * filled with compare-and-swap (no lock, no allocation); contexts beyond
 * it, and their switches, are not recorded, and their functions are
 * started as the program made them.  A context that never runs to its
 * end keeps its slot (nothing says when a ucontext_t dies).
 *
 * A program that makes coroutines itself (rip_coro_create: __rip_coro_api)
 * keeps their slots itself: from then on the hooks make and switch none.
 */
#include <errno.h>
#include <stdarg.h>
#include <ucontext.h>

#include "common.h"

#define RIP_PL_CTX_MAX 4096u /* a power of two */
#define RIP_PL_CTX_PROBES 64u
/* The arguments makecontext forwards, through rip_pl_ctx_start or not: past these, none. */
#define RIP_PL_CTX_ARGS 16

struct rip_pl_ctx {
	const ucontext_t *uc; /* claimed with a compare-and-swap */
	struct rip_coro *co;  /* its slot (release), NULL: none yet, or its last run ended */
};

/* A context's start, at the top of its stack (rip_pl_ctx_start). */
struct rip_pl_run {
	void (*fn)(void);     /* the program's function */
	ucontext_t *link;     /* the uc_link makecontext saw, which __start_context goes to */
	struct rip_pl_ctx *e; /* the context's entry */
	long arg[RIP_PL_CTX_ARGS];
};

/* The top of a context's stack that rip_pl_run takes, aligned as the stack is. */
#define RIP_PL_RUN_SIZE ((sizeof(struct rip_pl_run) + 15) & ~(size_t)15)

static struct rip_pl_ctx rip_pl_ctxs[RIP_PL_CTX_MAX];

static uint32_t rip_pl_ctx_hash(const ucontext_t *uc)
{
	uint64_t x = (uintptr_t)uc;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return (uint32_t)x;
}

/* The entry of uc; add: claim one when it has none.  NULL: none (or the table is full). */
static struct rip_pl_ctx *rip_pl_ctx_find(const ucontext_t *uc, bool add)
{
	uint32_t h = rip_pl_ctx_hash(uc);

	for (uint32_t i = 0; i < RIP_PL_CTX_PROBES; i++) {
		struct rip_pl_ctx *e = &rip_pl_ctxs[(h + i) & (RIP_PL_CTX_MAX - 1)];
		/* Relaxed: the address is all this entry says until co is published. */
		const ucontext_t *cur = __atomic_load_n(&e->uc, __ATOMIC_RELAXED);

		if (cur == uc)
			return e;
		if (cur || !add)
			continue;
		if (__atomic_compare_exchange_n(&e->uc, &cur, uc, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED) ||
		    cur == uc)
			return e;
	}
	return NULL;
}

/* The coroutine of entry e (NULL: none). */
static struct rip_coro *rip_pl_ctx_co(struct rip_pl_ctx *e)
{
	/* Acquire: pairs with the release compare-and-swap of rip_pl_ctx_make. */
	return e ? __atomic_load_n(&e->co, __ATOMIC_ACQUIRE) : NULL;
}

/* The coroutine of entry e, made if it has none (NULL: no slot to be had). */
static struct rip_coro *rip_pl_ctx_make(struct rip_pl_ctx *e)
{
	struct rip_coro *co = rip_pl_ctx_co(e), *none = NULL;

	if (co)
		return co;
	if (__rip_coro_new("ucontext", &co))
		return NULL;
	/* Release: the slot is set up before another thread can switch to it. */
	if (__atomic_compare_exchange_n(&e->co, &none, co, false, __ATOMIC_RELEASE,
					__ATOMIC_ACQUIRE))
		return co;
	rip_coro_destroy(co); /* another thread made the same context at once: its slot */
	return none;
}

/* Before a switch to uc: out of the running coroutine, into uc's if it has one. */
static void rip_pl_ctx_switch(const ucontext_t *uc)
{
	struct rip_coro *co;
	int err = errno;

	/* Relaxed: set once by the constructor; the program's own coroutines: once, by it. */
	if (!__atomic_load_n(&rip_pl_waits, __ATOMIC_RELAXED) || rip_pl_self.guard ||
	    __atomic_load_n(&__rip_coro_api, __ATOMIC_RELAXED))
		return;
	co = rip_pl_ctx_co(rip_pl_ctx_find(uc, false));
	rip_coro_switch_out();
	if (co)
		rip_coro_switch_in(co);
	errno = err;
}

/*
 * The function of the context r was made for has returned: on to r's
 * uc_link, as rip_pl_ctx_switch would (a NULL uc_link ends the process:
 * back to the thread), and the coroutine that ran it, if it is the one the
 * thread runs, ends.
 */
static void rip_pl_ctx_end(const struct rip_pl_run *r)
{
	struct rip_pl_thread *t = &rip_pl_self;
	struct rip_slot *cur = __rip_self.cur;
	struct rip_coro *co;
	int err = errno;

	if (t->guard)
		return;
	co = rip_pl_ctx_co(r->e);
	rip_pl_ctx_switch(r->link);
	/*
	 * Relaxed: only this run's end takes the slot out of the entry (a
	 * makecontext of the same context while it runs is the program's bug).
	 */
	if (!co || (struct rip_slot *)co != cur ||
	    !__atomic_compare_exchange_n(&r->e->co, &co, NULL, false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		goto out_errno;
	t->guard = rip_pl_guard_up();
	/* Guard up before the work: pairs with rip_pl_enter's check in a signal handler. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rip_coro_destroy(co);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->guard = 0;
out_errno:
	errno = err;
}

/*
 * Where every context made while tracing starts: the program's function,
 * with its arguments (glibc's x86-64 makecontext passes each in a whole
 * register or stack word, as a call with RIP_PL_CTX_ARGS longs does: the
 * function takes what it declares), then the end of the coroutine, then
 * back into __start_context.  The address of r comes in two ints, as
 * makecontext's arguments are.
 */
static void rip_pl_ctx_start(unsigned lo, unsigned hi)
{
	const struct rip_pl_run *r =
		(const struct rip_pl_run *)(uintptr_t)((uint64_t)hi << 32 | lo);
	const long *a = r->arg;

	((void (*)(long, long, long, long, long, long, long, long, long, long, long, long, long,
		   long, long, long))r->fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8],
					    a[9], a[10], a[11], a[12], a[13], a[14], a[15]);
	rip_pl_ctx_end(r);
}

/*
 * Make uc start at rip_pl_ctx_start (true), its rip_pl_run at the top of
 * its stack, which the real makecontext is told ends below it.
 */
static bool rip_pl_ctx_wrap(void (*real)(ucontext_t *, void (*)(void), int, ...), ucontext_t *uc,
			    struct rip_pl_ctx *e, void (*fn)(void), int argc, const long *arg)
{
	stack_t st = uc->uc_stack;
	uintptr_t top = (uintptr_t)st.ss_sp + st.ss_size;
	struct rip_pl_run *r;

	if (!fn || argc > RIP_PL_CTX_ARGS || !st.ss_sp || st.ss_size < 4 * RIP_PL_RUN_SIZE ||
	    top < (uintptr_t)st.ss_sp)
		return false;
	r = (struct rip_pl_run *)((top - RIP_PL_RUN_SIZE) & ~(uintptr_t)15);
	r->fn = fn;
	r->link = uc->uc_link;
	r->e = e;
	for (int i = 0; i < RIP_PL_CTX_ARGS; i++)
		r->arg[i] = i < argc ? arg[i] : 0;
	uc->uc_stack.ss_size = (uintptr_t)r - (uintptr_t)st.ss_sp;
	real(uc, (void (*)(void))rip_pl_ctx_start, 2, (unsigned)(uintptr_t)r,
	     (unsigned)((uint64_t)(uintptr_t)r >> 32));
	uc->uc_stack = st;
	return true;
}

RIP_PL_EXPORT void makecontext(ucontext_t *uc, void (*fn)(void), int argc, ...)
{
	static void (*real)(ucontext_t *, void (*)(void), int, ...);
	struct rip_pl_thread *t = &rip_pl_self;
	long a[RIP_PL_CTX_ARGS] = { 0 };
	int n = argc < 0 ? 0 : argc > RIP_PL_CTX_ARGS ? RIP_PL_CTX_ARGS : argc;
	struct rip_pl_ctx *e = NULL;
	struct rip_coro *co = NULL;
	va_list ap;

	/* As glibc's x86-64 makecontext reads them: a whole word each (programs pass pointers). */
	va_start(ap, argc);
	for (int i = 0; i < n; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!RIP_PL_REAL(real, "makecontext"))
		return;
	if (__atomic_load_n(&rip_pl_waits, __ATOMIC_RELAXED) && !t->guard &&
	    !__atomic_load_n(&__rip_coro_api, __ATOMIC_RELAXED)) {
		int err = errno;

		t->guard = rip_pl_guard_up();
		/* Guard up before the work: pairs with rip_pl_enter's check in a signal handler. */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		e = rip_pl_ctx_find(uc, true);
		if (e)
			co = rip_pl_ctx_make(e);
		if (co)
			__rip_snap_store((struct rip_slot *)co, (uintptr_t)fn);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->guard = 0;
		errno = err;
	}
	if (co && rip_pl_ctx_wrap(real, uc, e, fn, argc, a))
		return;
	/* The real one reads argc words: the rest are never looked at. */
	real(uc, fn, argc, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11],
	     a[12], a[13], a[14], a[15]);
}

RIP_PL_EXPORT int swapcontext(ucontext_t *restrict oucp, const ucontext_t *restrict ucp)
{
	static int (*real)(ucontext_t *restrict, const ucontext_t *restrict);

	if (!RIP_PL_REAL(real, "swapcontext"))
		return rip_pl_enosys();
	rip_pl_ctx_switch(ucp);
	return real(oucp, ucp);
}

RIP_PL_EXPORT int setcontext(const ucontext_t *ucp)
{
	static int (*real)(const ucontext_t *);

	if (!RIP_PL_REAL(real, "setcontext"))
		return rip_pl_enosys();
	rip_pl_ctx_switch(ucp);
	return real(ucp);
}
