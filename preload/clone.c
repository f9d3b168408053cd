// SPDX-License-Identifier: Apache-2.0
/*
 * preload/clone.c - processes and threads that fork handlers and the
 * pthread_create wrapper never see being made: a raw clone or clone3
 * (through syscall(2), or the instruction itself), and glibc's clone(3).
 *
 * A child made without CLONE_VM is a new process with a copy of our
 * memory, TLS included, and the parent's ring file still mapped shared:
 * left alone, its hooks write into the parent's event rings as the
 * parent's thread (and, its heap being a copy at the same addresses, its
 * frees cancel the parent's blocks in the parent's leak report).  It is
 * noticed by one word in a page advised MADV_WIPEONFORK (Linux 4.14): the
 * kernel gives such a child that page zeroed.  The word is 1 in every
 * process whose fork handlers ran (a handler registered first sets it
 * again in a fork child), 0 only in a child no handler ran in.  Every hook
 * (rip_pl_enter) and wait wrapper reads it, one load, before it writes;
 * librip's slow paths read a word of their own (lib/ring.c).  A child
 * that finds 0 runs librip's fork handler and ours right there
 * (rip_pl_child_setup): it gets a file of its own when forks are followed,
 * or none and untraced when not, as a fork child does.  Children made
 * through syscall(2) or clone(3) do it before their first instruction of
 * the program's, so that not even a rip_snap() reaches the parent's file.
 *
 * A child made with CLONE_VM and without CLONE_SETTLS (clone(3), as
 * container tools and old runtimes use it) shares the TLS of the thread
 * that made it: our per-thread state is that thread's, and nothing cheap
 * tells the two apart.  clone(3)'s wrapper counts such children on the
 * thread (rip_pl_thread.vm) while they run; while the count is up, every
 * hook on that TLS asks the kernel for its tid (a system call, only
 * then) and a call from the child is not recorded: it is counted as lost
 * in the thread's ring, so that every report says the trace is
 * incomplete.  A child given a TLS of its own (CLONE_SETTLS) is a thread
 * like any other to us.  Left: such a child made with the instruction
 * itself, and a child's own rip_snap() (inline in the program), still
 * write as the thread whose TLS they use.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

/* ---- the word ---- */

static uint32_t rip_pl_one = 1;
uint32_t *rip_pl_alive = &rip_pl_one;

/* First of the fork-child handlers: the handlers ran in this child. */
static void rip_pl_alive_set(void)
{
	/* Relaxed: only this thread exists in the child. */
	__atomic_store_n(rip_pl_alive, 1, __ATOMIC_RELAXED);
}

void rip_pl_alive_init(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uint32_t *w;

	if (rip_pl_alive != &rip_pl_one || page <= 0)
		return;
	/* The system calls: our own mmap hook must not record the tracer's page. */
	w = (uint32_t *)syscall(SYS_mmap, NULL, (size_t)page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED)
		return;
	if (syscall(SYS_madvise, w, (size_t)page, MADV_WIPEONFORK)) {
		syscall(SYS_munmap, w, (size_t)page);
		return; /* before Linux 4.14: such children are not noticed */
	}
	*w = 1;
	rip_pl_own_map_add(w, (size_t)page);
	rip_pl_self.guard++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* pairs with the hooks' checks */
	if (pthread_atfork(NULL, NULL, rip_pl_alive_set) == 0)
		/* Release: the 1 before the pointer; the hooks' plain loads are ordered by it on x86. */
		__atomic_store_n(&rip_pl_alive, w, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rip_pl_self.guard--;
}

bool rip_pl_child_setup(void)
{
	struct rip_pl_thread *t = &rip_pl_self;
	uintptr_t guard = t->guard;
	int err = errno;

	/* Relaxed: the child has one thread until this returns. */
	if (!__atomic_load_n(rip_pl_alive, __ATOMIC_RELAXED)) {
		t->guard = rip_pl_guard_up();
		__atomic_signal_fence(__ATOMIC_SEQ_CST); /* pairs with the hooks' checks */
		/* In the order fork runs them: librip's handler, then ours. */
		__rip_fork_check();
		rip_pl_wait_fork_child();
		rip_pl_watch_fork_child();
		rip_pl_sample_fork_child();
		rip_pl_res_fork_child();
		__atomic_store_n(rip_pl_alive, 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->guard = guard;
	}
	errno = err;
	return !__atomic_load_n(&rip_pl_off, __ATOMIC_RELAXED);
}

/* ---- _exit ---- */

/*
 * _exit and _Exit end the process without its destructors, so librip's
 * never marks the file exited: a fork child that ends so (a shell's
 * subshell, a worker after its job, a server's quick exit in a signal
 * handler) read as killed or crashed, and rip run kept its file as a
 * death's.  Mark it here; a vfork child's call (the parent's file) marks
 * nothing (__rip_exit_mark compares the pids).  glibc's exit() reaches its
 * _exit without the PLT: these hooks see only the program's calls.
 */
static void rip_pl_exit_mark(void)
{
	int err = errno;

	/*
	 * A child of a raw clone whose handlers never ran has no file of its
	 * own (it sees its parent's, which __rip_exit_mark leaves alone): none
	 * is made for it now, at its end.
	 */
	if (__atomic_load_n(rip_pl_alive, __ATOMIC_RELAXED))
		__rip_exit_mark();
	errno = err;
}

RIP_PL_EXPORT __attribute__((noreturn)) void _exit(int status)
{
	static void (*real)(int);

	rip_pl_exit_mark();
	if (RIP_PL_REAL(real, "_exit"))
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

RIP_PL_EXPORT __attribute__((noreturn)) void _Exit(int status)
{
	static void (*real)(int);

	rip_pl_exit_mark();
	if (RIP_PL_REAL(real, "_Exit"))
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

/* ---- CLONE_VM children on a thread's TLS ---- */

bool rip_pl_vm_child(const struct rip_pl_thread *t)
{
	int err = errno;
	bool child = (int32_t)syscall(SYS_gettid) != __atomic_load_n(&t->vm_owner, __ATOMIC_RELAXED);

	errno = err;
	return child;
}

bool rip_pl_wait_foreign(struct rip_pl_thread *t)
{
	return __atomic_load_n(&t->vm, __ATOMIC_RELAXED) && rip_pl_vm_child(t);
}

/* ---- clone(3) ---- */

/* What a child of clone(3) starts with; from a small pool (no allocation here). */
struct rip_pl_clone_rec {
	int (*fn)(void *);
	void *arg;
};

#define RIP_PL_CLONE_RECS 64u
static struct rip_pl_clone_rec rip_pl_clone_recs[RIP_PL_CLONE_RECS];
static uint64_t rip_pl_clone_busy; /* bit i: record i is in use */

static struct rip_pl_clone_rec *rip_pl_clone_rec_get(void)
{
	int i = rip_pl_bit_take(&rip_pl_clone_busy);

	/* -1: 64 children starting at once: the last ones go untouched */
	return i < 0 ? NULL : &rip_pl_clone_recs[i];
}

static void rip_pl_clone_rec_put(struct rip_pl_clone_rec *r)
{
	/* The child's reads of the record before another clone reuses it. */
	rip_pl_bit_give(&rip_pl_clone_busy, (unsigned)(r - rip_pl_clone_recs));
}

/* A CLONE_VM child: the record is shared memory, given back here; the count drops at its end. */
static int rip_pl_clone_vm_start(void *p)
{
	struct rip_pl_clone_rec *r = p;
	int (*fn)(void *) = r->fn;
	void *arg = r->arg;
	int ret;

	rip_pl_clone_rec_put(r);
	ret = fn(arg);
	/* Our TLS is the thread's that made us: its count, as that thread's wrapper raised it. */
	__atomic_fetch_sub(&rip_pl_self.vm, 1, __ATOMIC_RELAXED);
	return ret;
}

/* A child without CLONE_VM: its own file (or none) before any of the program's code. */
static int rip_pl_clone_fork_start(void *p)
{
	struct rip_pl_clone_rec r = *(struct rip_pl_clone_rec *)p;

	rip_pl_child_setup();
	return r.fn(r.arg);
}

RIP_PL_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	static int (*real)(int (*)(void *), void *, int, void *, ...);
	struct rip_pl_thread *t = &rip_pl_self;
	struct rip_pl_clone_rec *r;
	pid_t *ptid, *ctid;
	void *tls;
	va_list ap;
	int ret, e;

	/* Read whether given or not, as glibc's own clone does: only the flags say which count. */
	va_start(ap, arg);
	ptid = va_arg(ap, pid_t *);
	tls = va_arg(ap, void *);
	ctid = va_arg(ap, pid_t *);
	va_end(ap);
	if (!RIP_PL_REAL(real, "clone"))
		return rip_pl_enosys();
	/* A TLS of its own (a thread to us), or nothing to start: as it is. */
	if (!fn || (flags & CLONE_SETTLS) || !(r = rip_pl_clone_rec_get()))
		return real(fn, stack, flags, arg, ptid, tls, ctid);
	r->fn = fn;
	r->arg = arg;
	if (flags & CLONE_VM) {
		e = errno;
		__atomic_store_n(&t->vm_owner, (int32_t)syscall(SYS_gettid), __ATOMIC_RELAXED);
		errno = e;
		__atomic_fetch_add(&t->vm, 1, __ATOMIC_RELAXED);
		ret = real(rip_pl_clone_vm_start, stack, flags, r, ptid, tls, ctid);
		if (ret < 0) {
			e = errno;
			__atomic_fetch_sub(&t->vm, 1, __ATOMIC_RELAXED);
			rip_pl_clone_rec_put(r);
			errno = e;
		}
		return ret;
	}
	ret = real(rip_pl_clone_fork_start, stack, flags, r, ptid, tls, ctid);
	e = errno;
	rip_pl_clone_rec_put(r); /* the child has its own copy of it */
	errno = e;
	return ret;
}

/* ---- syscall(2) ---- */

void rip_pl_syscall_cloned(long ret)
{
	/* The child of a clone without CLONE_VM (the word says which): set up at once. */
	if (ret == 0 && !__atomic_load_n(rip_pl_alive, __ATOMIC_RELAXED))
		rip_pl_child_setup();
}
