// SPDX-License-Identifier: Apache-2.0
/*
 * preload/nest.c - calls into the hooks made while the thread's guard is
 * up: our own work, which only forwards, and a signal handler that
 * interrupted our work, whose calls are the program's and are recorded.
 *
 * The guard keeps what the tracer itself allocates or opens out of the
 * trace (libunwind's blocks, glibc's for our ring file).  But a signal
 * handler may run while the guard is up, and then its malloc is the
 * program's: forwarding it, as every call under the guard was, dropped it
 * without a trace (a SIGALRM handler that leaked a block per signal while
 * the main loop churned malloc/free: 21 to 31 of 500 found, and "complete,
 * 0 lost").  Most of a hook's time is its backtrace, so most handlers that
 * allocate land there.
 *
 * Telling the two apart: the guard holds the stack pointer of the frame
 * that raised it (rip_pl_guard_up: one store, so that a handler never
 * finds the guard up with another frame's address).  Our own work runs
 * below that frame and never switches stacks; a handler's frames sit
 * below a signal frame that the kernel pushed under the interrupted code.
 * So a call is a handler's when a signal frame lies between its stack
 * pointer and the guard's frame (or, on an alternate signal stack, on
 * that stack) whose saved stack pointer is near the guard's frame or under
 * it: the handler interrupted the guarded work.  A guard raised with no frame
 * (1: the constructor's) says nothing: calls under it forward.  A signal frame is the address of glibc's trampoline
 * (__restore_rt, learned once from the kernel's record of an installed
 * handler) followed by the ucontext the kernel saved.  The scan reads
 * only stack in use between two of our own frames, costs a microsecond or
 * so, and runs only on calls made under the guard.
 *
 * Such a call is traced "nested": t->nested is 1, the guard stays as it
 * was, and the hook runs as any other, except that libunwind is not used
 * when it is what was interrupted (then the unwind tables' walk, which a
 * handler may run, gives the handler's frames at least).  Its events go straight into the
 * thread's ring when the interrupted work was not writing one
 * (__rip_self.ev.nest clear): the ring is whole between two events.  When
 * it was, librip's nested writer hands them to rip_pl_keep, they wait in a
 * small buffer, and the interrupted hook writes them before its guard
 * drops (rip_pl_leave_slow), with their own times (never before the last
 * event of the stream).  No check on any emitter's path: the decision is
 * made on librip's cold nested branch.  A handler that
 * interrupts a nested hook, or a full buffer, loses its event and counts it
 * in the thread's ring, so that reports say the trace is incomplete.
 *
 * x86-64 only (the frame layout); elsewhere calls under the guard forward
 * as before.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "common.h"
#include "unwind.h"

/* How far below its guard's frame a nested call may be (handler frames, the signal frame). */
#define RIP_PL_NEST_SCAN (1u << 20)
/*
 * How far above the guard's frame the interrupted code's sp may be: the
 * guard's stack pointer is read where the hook raises it, and the hook may
 * pop some of its frame (pushes around a call, shrink-wrapped saves) before
 * it drops the guard.  Seen: 32 bytes.
 */
#define RIP_PL_NEST_SLACK 4096u

/* ---- is it a signal handler? ---- */

#if defined(__x86_64__)
/* The kernel's struct sigaction, as rt_sigaction reads it. */
struct rip_pl_ksigaction {
	uintptr_t handler;
	unsigned long flags;
	uintptr_t restorer;
	uint64_t mask;
};

#define RIP_PL_SA_RESTORER 0x04000000ul

static uintptr_t rip_pl_restorer;

/*
 * glibc's signal trampoline: the restorer of any handler installed through
 * it (the one running now is).  Asked once; 0 if none is known.
 */
static uintptr_t rip_pl_restorer_get(void)
{
	/* Relaxed: the same value whoever finds it. */
	uintptr_t r = __atomic_load_n(&rip_pl_restorer, __ATOMIC_RELAXED);
	int err = errno;

	if (r)
		return r;
	for (int sig = 1; sig <= 64 && !r; sig++) {
		struct rip_pl_ksigaction k;

		if (syscall(SYS_rt_sigaction, sig, NULL, &k, sizeof(k.mask)) || k.handler <= 1 ||
		    !(k.flags & RIP_PL_SA_RESTORER) || !rip_pl_sigret_at(k.restorer))
			continue;
		r = k.restorer;
		__atomic_store_n(&rip_pl_restorer, r, __ATOMIC_RELAXED);
	}
	errno = err;
	return r;
}

/*
 * A signal frame in [from, to) whose saved stack pointer lies in
 * [isp_lo, isp_hi], and above the frame itself when below says so (one
 * stack): every word read lies inside [from, to).
 */
static bool rip_pl_sigframe_in(uintptr_t from, uintptr_t to, uintptr_t r, uintptr_t isp_lo,
			       uintptr_t isp_hi, bool below)
{
	for (uintptr_t a = (from + 7) & ~(uintptr_t)7; a + 8 + sizeof(ucontext_t) <= to; a += 8) {
		const ucontext_t *uc;
		uintptr_t isp;

		if (*(const uintptr_t *)a != r)
			continue;
		uc = (const ucontext_t *)(a + 8);
		isp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
		if (isp >= isp_lo && isp <= isp_hi && (!below || isp >= a + 8 + sizeof(*uc)))
			return true;
	}
	return false;
}

/* Did a signal handler, whose call is at sp, interrupt the work guarded from gsp? */
static bool rip_pl_interrupted(uintptr_t sp, uintptr_t gsp)
{
	uintptr_t r, lo;
	stack_t ss;

	if (!gsp || !(r = rip_pl_restorer_get()))
		return false;
	/* One stack: the handler's frames and the signal frame lie between. */
	if (sp < gsp && gsp - sp <= RIP_PL_NEST_SCAN)
		return rip_pl_sigframe_in(sp, gsp, r, sp, gsp + RIP_PL_NEST_SLACK, true);
	/* An alternate signal stack: the frame is on it, the interrupted sp under gsp. */
	if (syscall(SYS_sigaltstack, NULL, &ss) || (ss.ss_flags & SS_DISABLE))
		return false;
	lo = (uintptr_t)ss.ss_sp;
	if (sp < lo || sp - lo >= ss.ss_size)
		return false;
	return rip_pl_sigframe_in(sp, lo + ss.ss_size, r,
				  gsp > RIP_PL_NEST_SCAN ? gsp - RIP_PL_NEST_SCAN : 0,
				  gsp + RIP_PL_NEST_SLACK, false);
}
#else
static bool rip_pl_interrupted(uintptr_t sp, uintptr_t gsp)
{
	(void)sp;
	(void)gsp;
	return false;
}
#endif

int rip_pl_enter_odd(struct rip_pl_thread *t, uintptr_t sp)
{
	int err = errno, ret = 0;

	/* Relaxed: the count is written before the clone system call that makes the child. */
	if (__atomic_load_n(&t->vm, __ATOMIC_RELAXED) && rip_pl_vm_child(t)) {
		__rip_event_nested(); /* a CLONE_VM child's call: not recorded, counted lost */
		goto out;
	}
	if (!t->guard) {
		ret = 1;
		goto out;
	}
	if (t->nested & RIP_PL_NESTED) {
		/* A nested hook's own work forwards; a second handler inside it is lost, counted. */
		if (rip_pl_interrupted(sp, t->nest_sp))
			__rip_event_nested();
		goto out;
	}
	if (__atomic_load_n(&rip_pl_off, __ATOMIC_RELAXED) ||
	    !rip_pl_interrupted(sp, t->guard & ~(uintptr_t)1))
		goto out; /* our own work */
	t->nest_sp = sp;
	/* One instruction: a handler of this thread sees the word whole.  Before the hook's work. */
	__atomic_fetch_or(&t->nested, RIP_PL_NESTED, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ret = 2;
out:
	errno = err;
	return ret;
}

/* ---- events left for the interrupted hook ---- */

#define RIP_PL_PEND_BUFS 64u
#define RIP_PL_PEND_SIZE 8192u

struct rip_pl_pendbuf {
	uint32_t used; /* bytes of data in use */
	uint32_t pad;
	unsigned char data[RIP_PL_PEND_SIZE - 8];
};

/* One record: this head, the fields, then the tail, padded to 8 bytes. */
struct rip_pl_pendrec {
	uint32_t len; /* of the whole record */
	uint32_t nv;
	uint32_t tlen;
	uint32_t pad;
	const struct rip_event_type *type;
	uint64_t ts;
};

/* Buffers for the threads that have events waiting (untouched memory until used). */
static struct rip_pl_pendbuf rip_pl_pendbufs[RIP_PL_PEND_BUFS];
static uint64_t rip_pl_pend_busy; /* bit i: buffer i is a thread's */

static struct rip_pl_pendbuf *rip_pl_pend_get(void)
{
	int i = rip_pl_bit_take(&rip_pl_pend_busy);

	if (i < 0)
		return NULL;
	rip_pl_pendbufs[i].used = 0;
	return &rip_pl_pendbufs[i];
}

static void rip_pl_pend_put(struct rip_pl_pendbuf *b)
{
	/* This thread's reads of it before another thread takes it. */
	rip_pl_bit_give(&rip_pl_pend_busy, (unsigned)(b - rip_pl_pendbufs));
}

bool rip_pl_keep(const struct rip_event_type *type, const uint64_t *v, uint32_t nv,
		 const void *tail, uint32_t tlen)
{
	struct rip_pl_thread *t = &rip_pl_self;
	struct rip_pl_pendbuf *b = t->pend;
	struct rip_pl_pendrec r = { 0 };
	size_t len;

	if (!(t->nested & RIP_PL_NESTED))
		return false; /* not one of our nested hooks: librip counts it */
	if (nv > RIP_EVENT_MAX_FIELDS)
		nv = RIP_EVENT_MAX_FIELDS;
	len = sizeof(r) + (size_t)nv * 8 + (((size_t)tlen + 7) & ~(size_t)7);
	if (!b) {
		b = rip_pl_pend_get();
		if (!b)
			goto lost;
		t->pend = b;
	}
	if (len > sizeof(b->data) - b->used)
		goto lost;
	r.len = (uint32_t)len;
	r.nv = nv;
	r.tlen = tlen;
	r.type = type;
	r.ts = rip_clock_ticks();
	memcpy(b->data + b->used, &r, sizeof(r));
	memcpy(b->data + b->used + sizeof(r), v, (size_t)nv * 8);
	if (tlen)
		memcpy(b->data + b->used + sizeof(r) + (size_t)nv * 8, tail, tlen);
	/* The record whole before it counts: pairs with the flush's signal fence on this thread. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	b->used += (uint32_t)len;
	__atomic_fetch_or(&t->nested, RIP_PL_PENDING, __ATOMIC_RELAXED);
	return true;
lost:
	__rip_event_nested(); /* counted in the thread's ring: reports say so */
	return true;
}

/* Write every event nested hooks left; guard up, no nested hook running. */
static void rip_pl_pend_flush(struct rip_pl_thread *t)
{
	struct rip_pl_pendbuf *b;

	__atomic_fetch_and(&t->nested, ~RIP_PL_PENDING, __ATOMIC_RELAXED);
	while ((b = t->pend)) {
		uint32_t off = 0;

		for (;;) {
			struct rip_pl_pendrec r;
			uint64_t v[RIP_EVENT_MAX_FIELDS];

			/* Pairs with rip_pl_keep's fence: a handler may append while we write. */
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			if (off >= b->used)
				break;
			memcpy(&r, b->data + off, sizeof(r));
			memcpy(v, b->data + off + sizeof(r), (size_t)r.nv * 8);
			__rip_event_replay(r.type, v, r.nv,
					   r.tlen ? b->data + off + sizeof(r) + (size_t)r.nv * 8 : NULL,
					   r.tlen, r.ts);
			off += r.len;
		}
		t->pend = NULL;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		/* A handler that appended after the last check and before the line above: its turn. */
		if (off < b->used) {
			t->pend = b;
			continue;
		}
		rip_pl_pend_put(b);
	}
}

void rip_pl_leave_slow(struct rip_pl_thread *t)
{
	if (t->nested & RIP_PL_NESTED) {
		/* A handler's hook ends: the interrupted work goes on, its guard up. */
		__atomic_fetch_and(&t->nested, ~RIP_PL_NESTED, __ATOMIC_RELAXED);
		return;
	}
	rip_pl_pend_flush(t);
	/* The events written before the guard drops: pairs with rip_pl_enter's check. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->guard = 0;
	/* Relaxed: pairs with the store of a signal handler that found us busy. */
	if (RIP_UNLIKELY(__atomic_load_n(&rip_pl_pm_pending, __ATOMIC_RELAXED)))
		rip_pl_pagemap_pending();
}
