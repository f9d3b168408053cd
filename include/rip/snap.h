/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rip/snap.h - the inline core that rip.h and librip.h share: the calling
 * thread's block __rip_self, the address of a call site, and the store of
 * one snap into a slot (the protocol of rip/abi.h).  Include rip.h (or the
 * original API's librip.h), not this file.
 */
#ifndef RIP_SNAP_H
#define RIP_SNAP_H

#include <stdint.h>
#include <rip/abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * no_instrument_function: the fast paths are librip's, not the program's;
 * with -finstrument-functions they would otherwise each call the hooks
 * (lib/func.c), and a coroutine switch would do it from one stack into the
 * other.
 */
#if defined(__cplusplus) && __cplusplus >= 202002L
#define RIP_INLINE inline __attribute__((always_inline, no_instrument_function))
#else
#define RIP_INLINE static inline __attribute__((always_inline, no_instrument_function))
#endif
#define RIP_API __attribute__((visibility("default")))
#define RIP_LIKELY(x) __builtin_expect(!!(x), 1)
#define RIP_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Where the calling thread writes events: its current packet. */
struct rip_evw {
	char *pos;		/* next byte to write; NULL: no ring yet */
	char *end;		/* end of the current packet */
	struct rip_packet *pkt; /* the current packet */
	uint64_t last;		/* clock of the last event written */
	uint32_t events;	/* events in the current packet */
	uint32_t ring;		/* ring index + 1; 0: none yet */
	uint8_t nest;		/* 1 while this thread writes an event (see rip.h) */
};

/*
 * The calling thread's view of the ring: where rip_snap() writes.  Whatever
 * sets cur clears fn_stack right after it (a signal fence between), so that
 * the function-tracing hooks (lib/func.c) work out the new slot's stack.
 */
struct rip_self {
	struct rip_slot *cur;	 /* running coroutine's slot, else the thread's; NULL: unattached */
	struct rip_slot *thread; /* this thread's own slot */
	int32_t tid;
	uint32_t flags;
	struct rip_evw ev;
	void *fn_stack; /* librip's: the shadow call stack of cur; NULL: to work out again */
};

extern __thread struct rip_self __rip_self RIP_API __attribute__((tls_model("initial-exec")));
extern int __rip_clock_tsc RIP_API;
RIP_API void __rip_attach_slow(void);

/*
 * RIP_HERE() - the address of this very point in the caller's code: the
 * address of the one instruction that computes it.  The asm is not volatile,
 * so a compiler may hoist it out of a loop (the value is the same on every
 * iteration), but each expansion carries its own __COUNTER__ in the text so
 * that no compiler merges two different call sites into one.  A statement
 * expression, a GNU extension: __extension__ says so to -pedantic.
 */
#define RIP_STR_(x) #x
#define RIP_HERE() RIP_HERE_(__COUNTER__)
#define RIP_HERE_(n) RIP_HERE__(n)
#if defined(__x86_64__)
#define RIP_HERE__(n)                                                                              \
	__extension__({                                                                            \
		uintptr_t __ip;                                                                    \
		__asm__("1: lea 1b(%%rip), %0 /* rip_snap " RIP_STR_(n) " */" : "=r"(__ip));       \
		__ip;                                                                              \
	})
#elif defined(__aarch64__)
#define RIP_HERE__(n)                                                                              \
	__extension__({                                                                            \
		uintptr_t __ip;                                                                    \
		__asm__("adr %0, . /* rip_snap " RIP_STR_(n) " */" : "=r"(__ip));                  \
		__ip;                                                                              \
	})
#else
#define RIP_HERE__(n)                                                                              \
	__extension__({                                                                            \
		__label__ __here;                                                                  \
__here:                                                                                            \
		(uintptr_t) && __here;                                                             \
	})
#endif

/* Store one snap into a slot: the whole protocol of rip/abi.h. */
RIP_INLINE void __rip_snap_store(struct rip_slot *s, uintptr_t ip)
{
	uint32_t i = s->snap_seq, next = i + 1;

	/* Compute i + 1 apart from the index (lea): saves gcc a register copy. */
	__asm__("" : "+r"(next));
	s->snap[i & (RIP_SNAP_DEPTH - 1)] = ip;
	/* Publish the entry: pairs with the acquire loads of snap_seq in the readers. */
	__atomic_store_n(&s->snap_seq, next, __ATOMIC_RELEASE);
}

RIP_INLINE void __rip_snap(uintptr_t ip)
{
	struct rip_slot *s = __rip_self.cur;

	if (RIP_UNLIKELY(!s)) {
		__rip_attach_slow();
		s = __rip_self.cur;
	}
	__rip_snap_store(s, ip);
}

/*
 * rip_snap() (rip.h, librip.h) - record where the calling thread or coroutine is.
 *
 * A handful of instructions: no atomics, no fences, no calls once the thread
 * is attached (the first snap of a thread attaches it).  Async-signal-safe:
 * a snap taken by a signal handler that interrupted another snap may
 * overwrite it, never corrupts the ring.  A macro, so that the recorded
 * address is the call site itself.
 *
 * A thread that snapped before rip_ring_open() (or when the pool was full)
 * writes into a scratch slot that is never read, until it calls
 * rip_thread_attach().
 */

#ifdef __cplusplus
}
#endif

#endif /* RIP_SNAP_H */
