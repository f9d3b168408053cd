// SPDX-License-Identifier: Apache-2.0
/*
 * preload/ucontext.c - coroutines built on ucontext (makecontext,
 * swapcontext, setcontext) get slots of their own (issue 10, item 5), as
 * if their library called rip_coro_create and rip_coro_switch_in itself.
 *
 * makecontext gives the context a coroutine slot (once per ucontext_t
 * address; a context made again keeps its slot) whose first snap is the
 * context's function, for readers to name.  swapcontext and setcontext
 * switch the thread out of the coroutine it runs, if any, and into the
 * target's, if the target was made by makecontext; a context that was not
 * (the thread's own stack, saved by getcontext or swapcontext) is the
 * thread itself.  A context function that returns to its uc_link goes
 * there inside libc, unseen: the thread still shows that coroutine until
 * its next switch.
 *
 * The contexts are found in a fixed table of RIP_PL_CTX_MAX addresses,
 * filled with compare-and-swap (no lock, no allocation); contexts beyond
 * it, and their switches, are not recorded.  A context's slot is never
 * given back (nothing says when a ucontext_t dies).
 */
#include <errno.h>
#include <stdarg.h>
#include <ucontext.h>

#include "common.h"

#define RIP_PL_CTX_MAX 4096u /* a power of two */
#define RIP_PL_CTX_PROBES 64u

struct rip_pl_ctx {
	const ucontext_t *uc;	/* claimed with a compare-and-swap */
	struct rip_coro *co;	/* set once its slot is made (release) */
};

static struct rip_pl_ctx rip_pl_ctxs[RIP_PL_CTX_MAX];

static uint32_t rip_pl_ctx_hash(const ucontext_t *uc)
{
	uint64_t x = (uintptr_t)uc;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return (uint32_t)x;
}

/* The coroutine of uc; add: claim an entry (and make the slot) when it has none. */
static struct rip_coro *rip_pl_ctx_get(const ucontext_t *uc, bool add)
{
	uint32_t h = rip_pl_ctx_hash(uc);

	for (uint32_t i = 0; i < RIP_PL_CTX_PROBES; i++) {
		struct rip_pl_ctx *e = &rip_pl_ctxs[(h + i) & (RIP_PL_CTX_MAX - 1)];
		/* Relaxed: the address is all this entry says until co is published. */
		const ucontext_t *cur = __atomic_load_n(&e->uc, __ATOMIC_RELAXED);
		struct rip_coro *co = NULL;

		if (cur == uc)
			/* Acquire: pairs with the release store of co below. */
			return __atomic_load_n(&e->co, __ATOMIC_ACQUIRE);
		if (cur || !add)
			continue;
		if (!__atomic_compare_exchange_n(&e->uc, &cur, uc, false, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED)) {
			if (cur == uc)
				return __atomic_load_n(&e->co, __ATOMIC_ACQUIRE);
			continue;
		}
		if (__rip_coro_new("ucontext", &co))
			return NULL;
		/* Release: the slot is set up before another thread can switch to it. */
		__atomic_store_n(&e->co, co, __ATOMIC_RELEASE);
		return co;
	}
	return NULL;
}

/* Before a switch to uc: out of the running coroutine, into uc's if it has one. */
static void rip_pl_ctx_switch(const ucontext_t *uc)
{
	struct rip_coro *co;
	int err = errno;

	/* Relaxed: set once by the constructor. */
	if (!__atomic_load_n(&rip_pl_waits, __ATOMIC_RELAXED) || rip_pl_self.guard)
		return;
	co = rip_pl_ctx_get(uc, false);
	rip_coro_switch_out();
	if (co)
		rip_coro_switch_in(co);
	errno = err;
}

RIP_PL_EXPORT void makecontext(ucontext_t *uc, void (*fn)(void), int argc, ...)
{
	static void (*real)(ucontext_t *, void (*)(void), int, ...);
	struct rip_pl_thread *t = &rip_pl_self;
	int a[16] = { 0 }, n = argc < 0 ? 0 : argc > 16 ? 16 : argc;
	va_list ap;

	va_start(ap, argc);
	for (int i = 0; i < n; i++)
		a[i] = va_arg(ap, int);
	va_end(ap);
	if (!RIP_PL_REAL(real, "makecontext"))
		return;
	/* The real one reads argc ints: the rest are never looked at. */
	real(uc, fn, argc, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
	     a[11], a[12], a[13], a[14], a[15]);
	if (__atomic_load_n(&rip_pl_waits, __ATOMIC_RELAXED) && !t->guard) {
		struct rip_coro *co;
		int err = errno;

		t->guard = rip_pl_guard_up();
		/* Guard up before the work: pairs with rip_pl_enter's check in a signal handler. */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		co = rip_pl_ctx_get(uc, true);
		if (co)
			__rip_snap_store((struct rip_slot *)co, (uintptr_t)fn);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->guard = 0;
		errno = err;
	}
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
