/* SPDX-License-Identifier: Apache-2.0 */
/*
 * preload/wait.h - the wait record a wrapper of a blocking call writes into
 * its thread's slot (struct rip_wait, rip/abi.h; doc/format.md "Wait
 * record"), shared by wait.c and the descriptor hooks of fd.c that block
 * (accept, recvmsg).
 *
 * A wrapper is written like this, in the exported function itself (the
 * caller's return address, stack and frame pointers are taken there):
 *
 *	RIP_PL_EXPORT ssize_t read(int fd, void *buf, size_t n)
 *	{
 *		static ssize_t (*real)(int, void *, size_t);
 *
 *		if (!RIP_PL_REAL(real, "read"))
 *			return rip_pl_enosys();
 *		RIP_PL_WAIT(RIP_WAIT_READ, fd, true);
 *		return real(fd, buf, n);
 *	}
 *
 * RIP_PL_WAIT writes the record and arranges, through a cleanup attribute
 * (the preload library is built with -fexceptions), that it is cleared when
 * the function returns or when a forced unwind (pthread_cancel, pthread_exit)
 * or an exception passes through it: the unwind goes on, never swallowed.
 * A call with a timeout records it too (RIP_PL_WAIT_TMO): how long the wait
 * may last from its start, an absolute deadline turned into the time left
 * against the clock the call measures it with.
 * A signal handler that calls a wrapped function while its thread is in one
 * saves the outer record and puts it back; one that interrupts the writing
 * of a record records nothing.  No lock, no allocation, no system call
 * beyond the wrapped one (a thread that has no slot yet takes one, once;
 * an absolute deadline's clock_gettime is one where the vDSO cannot read
 * that clock: a CPU-time clock, a clock source other than the TSC), errno
 * untouched.
 */
#ifndef RIP_PRELOAD_WAIT_H
#define RIP_PRELOAD_WAIT_H

#include <errno.h>
#include <time.h>

#include "common.h"

struct rip_pl_wt {
	struct rip_wait *w;	/* the record written; NULL: none */
	uint32_t nested;	/* 1: saved holds an outer record, put back at the end */
	uint32_t saved_tmo;	/* the outer record's timeout (slot.wait_tmo) */
	struct rip_wait saved;
};

/*
 * A wait's timeout as the wrapped call takes it: none, relative (ns), or an
 * absolute deadline abs on clock clk.  Read only when a record is written:
 * an absolute one costs a clock_gettime (the vDSO's, for the clocks the
 * calls use), turned into the time left when the wait begins
 * (slot.wait_tmo, rip/abi.h).
 */
struct rip_pl_tmo {
	const struct timespec *abs; /* a deadline on clk; NULL: ns is relative */
	clockid_t clk;
	int64_t ns;		    /* relative, in ns; < 0: no timeout */
};
#define RIP_PL_TMO_NONE ((struct rip_pl_tmo){ NULL, 0, -1 })
#define RIP_PL_TMO_REL(NS) ((struct rip_pl_tmo){ NULL, 0, (NS) })
/* An absolute deadline; a NULL one waits for ever. */
#define RIP_PL_TMO_ABS(CLK, TS) ((struct rip_pl_tmo){ (TS), (CLK), -1 })

/*
 * A relative timespec in ns, saturated; -1 for NULL, one the call refuses
 * or one it cannot read (its EFAULT: rip_pl_peek).
 */
static inline int64_t rip_pl_ts_ns(const struct timespec *p)
{
	struct timespec ts;

	if (!p || !rip_pl_peek(&ts, p, sizeof(ts)) || ts.tv_sec < 0 || ts.tv_nsec < 0 ||
	    ts.tv_nsec >= 1000000000)
		return -1;
	if ((uint64_t)ts.tv_sec >= (uint64_t)INT64_MAX / 1000000000u)
		return INT64_MAX;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* slot.wait_tmo for t: 0 for none (rip/abi.h).  errno untouched. */
static inline uint32_t rip_pl_tmo_get(const struct rip_pl_tmo *t)
{
	struct timespec now, dl, *d = &dl;
	int64_t s, ns;
	int err;

	if (!t->abs)
		return t->ns < 0 ? 0 : rip_wait_tmo_pack((uint64_t)t->ns);
	if (!rip_pl_peek(&dl, t->abs, sizeof(dl)))
		return 0; /* the call says EFAULT */
	if (d->tv_nsec < 0 || d->tv_nsec >= 1000000000)
		return 0; /* the call says EINVAL */
	err = errno;
	if (clock_gettime(t->clk, &now)) {
		errno = err;
		return 0;
	}
	errno = err;
	if (d->tv_sec < now.tv_sec || (d->tv_sec == now.tv_sec && d->tv_nsec <= now.tv_nsec))
		return rip_wait_tmo_pack(0); /* already past */
	/* both in range: no overflow below 2^63 ns */
	s = (int64_t)((uint64_t)d->tv_sec - (uint64_t)now.tv_sec);
	if (s >= INT64_MAX / 1000000000 - 1)
		return RIP_WAIT_TMO_MAX;
	ns = s * 1000000000 + (d->tv_nsec - now.tv_nsec);
	return rip_wait_tmo_pack((uint64_t)ns);
}

/* The slot of a thread that has none yet (NULL: not now); see wait.c. */
struct rip_slot *rip_pl_wait_slot(void);
/* Is this a vfork child, in its parent's thread (wait.c)? */
bool rip_pl_vfork_child(void);

/*
 * The seqlock of the record (rip/abi.h).  One read-modify-write instruction
 * where there is one, so that a signal handler on this thread sees the
 * increment whole; stores stay in order on x86, so no fence instruction is
 * needed there for the reader on another CPU.
 */
static inline __attribute__((always_inline)) void rip_pl_seq_open(uint32_t *seq)
{
#if defined(__x86_64__) || defined(__i386__)
	/* Odd before the fields: pairs with the readers' acquire fence and second load. */
	__asm__ __volatile__("addl $1, %0" : "+m"(*seq) : : "memory");
#else
	__atomic_fetch_add(seq, 1, __ATOMIC_RELAXED);
	/* Odd before the fields: pairs with the readers' acquire fence and second load. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
#endif
}

static inline __attribute__((always_inline)) void rip_pl_seq_close(uint32_t *seq)
{
#if defined(__x86_64__) || defined(__i386__)
	/* A store-release on x86: pairs with the readers' acquire load of seq. */
	__asm__ __volatile__("addl $1, %0" : "+m"(*seq) : : "memory");
#else
	/* The fields before the even seq: pairs with the readers' acquire load of seq. */
	__atomic_fetch_add(seq, 1, __ATOMIC_RELEASE);
#endif
}

/*
 * Write the record: kind on arg (arg_tmo: arg is the timeout's ns, the
 * sleeps'), timeout tmo; timed: read the clock for since.
 */
static inline __attribute__((always_inline)) void
rip_pl_wait_begin(struct rip_pl_wt *c, uint32_t kind, uint64_t arg, bool arg_tmo,
		  struct rip_pl_tmo tmo, bool timed, uintptr_t ra, uintptr_t frame)
{
	struct rip_pl_thread *t = &rip_pl_self;
	struct rip_slot *s;
	struct rip_wait *w;
	uint32_t tv;

	c->w = NULL;
	/* Relaxed: set once by the constructor. */
	if (RIP_UNLIKELY(!__atomic_load_n(&rip_pl_waits, __ATOMIC_RELAXED)))
		return;
	/* A child of a raw clone (its parent's file still mapped): set it up first. */
	if (RIP_UNLIKELY(!*rip_pl_alive) && (t->guard || !rip_pl_child_setup()))
		return;
	/*
	 * Inside a hook's own work (not the program's wait), a vfork child, or
	 * a CLONE_VM child of clone(3) on this thread's TLS.
	 */
	if (RIP_UNLIKELY(t->guard | t->vfork | t->vm) &&
	    (t->guard || (t->vfork && rip_pl_vfork_child()) || (t->vm && rip_pl_wait_foreign(t))))
		return;
	s = __rip_self.thread;
	if (RIP_UNLIKELY(!s) && !(s = rip_pl_wait_slot()))
		return;
	/* The call site's object in the module map (it may have come with a dlopen). */
	rip_pl_mod_seen(t, ra);
	w = &s->wait;
	/* A signal handler that interrupted this thread writing its record: leave it be. */
	if (RIP_UNLIKELY(w->seq & 1))
		return;
	c->nested = w->kind != RIP_WAIT_NONE;
	if (RIP_UNLIKELY(c->nested)) {
		c->saved = *w; /* ours, complete (even seq): a handler inside a wait */
		c->saved_tmo = s->wait_tmo;
	}
	/* the clock of an absolute deadline is read outside the seqlock */
	tv = rip_pl_tmo_get(&tmo);
	if (arg_tmo)
		arg = tv ? rip_wait_tmo_ns(tv) : 0;
	rip_pl_seq_open(&w->seq);
	w->since = timed ? rip_clock_ticks() : 0;
	s->wait_tmo = tv;
	w->ra = ra;
	/* x86-64 and aarch64 frame records: saved fp at frame[0], return address above. */
	w->cfa = frame + 2 * sizeof(uintptr_t);
	w->fp = *(const uintptr_t *)frame;
	w->arg = arg;
	/* The fields before kind, for a signal handler reading it on this thread. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	w->kind = kind;
	rip_pl_seq_close(&w->seq);
	c->w = w;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
/* saved is read only when nested says begin filled it: gcc cannot tell. */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
static inline __attribute__((always_inline)) void rip_pl_wait_end(struct rip_pl_wt *c)
{
	struct rip_wait *w = c->w;

	if (!w)
		return;
	rip_pl_seq_open(&w->seq);
	if (RIP_UNLIKELY(c->nested)) {
		w->since = c->saved.since;
		w->ra = c->saved.ra;
		w->cfa = c->saved.cfa;
		w->fp = c->saved.fp;
		w->arg = c->saved.arg;
		/* the slot around the record */
		((struct rip_slot *)((char *)w - __builtin_offsetof(struct rip_slot, wait)))
			->wait_tmo = c->saved_tmo;
		__atomic_signal_fence(__ATOMIC_SEQ_CST); /* as in rip_pl_wait_begin */
		w->kind = c->saved.kind;
	} else {
		w->kind = RIP_WAIT_NONE;
	}
	rip_pl_seq_close(&w->seq);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/*
 * A blocking call may be a cancellation point: with patched functions in
 * the process, the thread's real return addresses go back around it (lent:
 * which), so that a cancellation's unwinding walks its patched frames.
 */
static inline __attribute__((always_inline)) void rip_pl_fn_blocking(uint64_t lent[2])
{
	lent[0] = lent[1] = 0;
	if (RIP_UNLIKELY(__atomic_load_n(&rip_pl_fn_live, __ATOMIC_RELAXED)))
		__rip_fn_rets_lend(0, lent);
}

/*
 * The call returned: the trampolines back where rip_pl_fn_blocking took
 * them away.  Not a cleanup of the scope: built with -fexceptions, the
 * preload library runs cleanups in a cancellation's unwinding too, which
 * would give the frames it is about to walk their trampolines back.
 */
static inline __attribute__((always_inline)) void rip_pl_fn_unblocked(const uint64_t lent[2])
{
	if (RIP_UNLIKELY(lent[0] | lent[1])) {
		int err = errno;

		__rip_fn_rets_back(0, lent);
		errno = err;
	}
}

/*
 * RIP_PL_WAIT(kind, arg, timed) - record, until the end of the enclosing
 * block, that this thread waits in kind on arg; timed: read the clock for
 * since (false: since is 0).  Use it in the exported function, after the
 * real function is known, and RIP_PL_UNBLOCKED() right after the real call
 * returns.
 */
#define RIP_PL_UNBLOCKED() rip_pl_fn_unblocked(rip_pl_lent_)

#define RIP_PL_WAIT(KIND, ARG, TIMED) RIP_PL_WAIT_(KIND, ARG, false, RIP_PL_TMO_NONE, TIMED)

/* The same for a call with a timeout (struct rip_pl_tmo); since is read. */
#define RIP_PL_WAIT_TMO(KIND, ARG, TMO) RIP_PL_WAIT_(KIND, ARG, false, TMO, true)

/* A sleep: its arg is its timeout. */
#define RIP_PL_WAIT_SLEEP(TMO) RIP_PL_WAIT_(RIP_WAIT_SLEEP, 0, true, TMO, true)

#define RIP_PL_WAIT_(KIND, ARG, ARG_TMO, TMO, TIMED)                                               \
	uint64_t rip_pl_lent_[2];                                                                  \
	rip_pl_fn_blocking(rip_pl_lent_);                                                          \
	struct rip_pl_wt rip_pl_wt_ __attribute__((cleanup(rip_pl_wait_end)));                     \
	rip_pl_wait_begin(&rip_pl_wt_, (KIND), (uint64_t)(ARG), (ARG_TMO), (TMO), (TIMED),         \
			  (uintptr_t)__builtin_return_address(0),                                  \
			  (uintptr_t)__builtin_frame_address(0))

#endif /* RIP_PRELOAD_WAIT_H */
