// SPDX-License-Identifier: Apache-2.0
/*
 * preload/sample.c - opt-in CPU sampling for `rip top` (rip run --sample,
 * RIP_SAMPLE=HZ): each thread gets a timer on its own CPU-time clock
 * (timer_create, CLOCK_THREAD_CPUTIME_ID, SIGEV_THREAD_ID), and the timer's
 * signal handler stores the interrupted instruction pointer and a short
 * frame-pointer stack into the sample ring of the slot the thread runs
 * (its own, or the coroutine's: rip/abi.h, struct rip_sample_ring).  The
 * handler alone writes a sample ring, so it never races with anything:
 * the samples used to go into the slot's snap ring, whose sequence word
 * rip_snap() loads and stores without a fence, and a signal between the
 * two moved the sequence back (a snap lost, or samples hidden).  The ring's
 * pages are backed (MADV_POPULATE_WRITE, a system call) the first time a
 * sample lands in one, once per page and process.
 *
 * Only CPU time makes a timer fire: a thread blocked in epoll_wait, poll or
 * nanosleep uses none, so it is never interrupted by us (wall-clock signals
 * would make those calls return EINTR even with SA_RESTART).
 *
 * The signal is a realtime one nobody uses (the highest whose disposition is
 * the default at start), not SIGPROF: programs that profile themselves keep
 * SIGPROF to themselves.  The handler takes only signals with si_code
 * SI_TIMER and our cookie in si_value; any other signal of that number goes
 * to the handler the program installed for it, which the wrappers of
 * sigaction and signal below record instead of installing (ours stays).
 * fd.c's signalfd wrapper and wait.c's sigwait family take our signal out
 * of their sets (rip_pl_sample_filter, rip_pl_sample_set), so that a
 * program that blocks every signal and reads them from a signalfd or waits
 * for them never gets one of our timers'; and the masks that ppoll,
 * pselect, epoll_pwait, epoll_pwait2 and sigsuspend install for the wait
 * keep it blocked (rip_pl_sample_mask), so that a timer signal left pending
 * on a thread that blocked it does not end such a wait early with EINTR.
 * syscall()'s hook does the same to those calls made raw (wait.c:
 * signalfd4, signalfd, rt_sigtimedwait, ppoll, pselect6, epoll_pwait,
 * epoll_pwait2, rt_sigsuspend) and to io_pgetevents (which glibc does not
 * wrap), on a copy of the kernel's 8-byte set (rip_pl_sample_kset) and,
 * for pselect6 and io_pgetevents, of the pair that points at it
 * (rip_pl_sample_kpack).  Only sets that
 * treat our number as they treat its neighbours are changed (a full set, an
 * empty mask), and none once the program handles our number itself: a
 * program that singles it out gets exactly what it asked for.
 *
 * Nothing here fails loudly: no free signal, or timer_create refused
 * (EAGAIN once RLIMIT_SIGPENDING is used up by thousands of threads), leaves
 * the thread unsampled and is counted in the file's header (sample_fail,
 * sample_errno, sample_flags).  Timers are deleted at thread exit (a key
 * destructor) and made again in a fork child (timers are not inherited).
 */
#include <errno.h>
#include <pthread.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "common.h"
#include "watch.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define SP_HZ_MAX 1000u
#define SP_DEPTH 4u /* the IP and 3 return addresses: 8 samples fit a snap ring */

static int sp_sig;		/* our signal; 0: sampling off */
static uint32_t sp_hz;
static uint64_t sp_cookie;	/* in si_value of our timers' signals */
static struct rip_file_hdr *sp_hdr; /* the open file's header; NULL: none (relaxed) */
static pthread_key_t sp_key;	/* its destructor deletes the thread's timer */
static bool sp_key_ok;

/* Pages of the sample area known backed, a bit each (mapped at start; a fork child clears it). */
static uint64_t *sp_backed;
static size_t sp_backed_len;

/* The thread's timer: kernel id + 1; 0 when it has none. */
static __thread int sp_timer RIP_PL_TLS;
/* The thread is in seccomp strict mode, or entering it: its handler makes no system call. */
static __thread bool sp_strict RIP_PL_TLS;

/*
 * The program's own disposition of our signal, as its sigaction and signal
 * calls set it (never installed: ours stays).  Two copies and an index: a
 * writer fills the other copy, then publishes the index (release; pairs
 * with the acquire load in sp_chain).  Programs do not set one signal from
 * two threads at once; if they did, one of the two settings wins.
 */
static struct sigaction sp_prog[2];
static int sp_prog_cur;

static int (*sp_real_sigaction)(int, const struct sigaction *, struct sigaction *);

/* ---- the header's counters (relaxed: statistics, read by rip top) ---- */

static void sp_count_fail(int err)
{
	struct rip_file_hdr *h = __atomic_load_n(&sp_hdr, __ATOMIC_RELAXED);

	if (!h)
		return;
	__atomic_fetch_add(&h->sample_fail, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&h->sample_errno, err, __ATOMIC_RELAXED);
}

static void sp_flag(uint32_t f)
{
	struct rip_file_hdr *h = __atomic_load_n(&sp_hdr, __ATOMIC_RELAXED);

	if (h)
		__atomic_fetch_or(&h->sample_flags, f, __ATOMIC_RELAXED);
}

/* The header of the ring file open now, or NULL (not from a signal handler: a lock). */
static struct rip_file_hdr *sp_find_hdr(void)
{
	char path[8];
	int err = rip_ring_path(path, sizeof(path));
	uint64_t *en;

	if (err == -ENOENT)
		return NULL;
	/* A file is open: the enable words are its header's (acquire: pairs with lib/events.c). */
	en = __atomic_load_n(&__rip_enable, __ATOMIC_ACQUIRE);
	return (struct rip_file_hdr *)((char *)en - __builtin_offsetof(struct rip_file_hdr, enable));
}

/* ---- the handler ---- */

/*
 * A signal of our number that the program leaves at its default: what the
 * kernel would do, end the process (a realtime signal's default; no core).
 * The kernel's disposition goes back to the default and the signal is sent
 * again to this thread, where it waits until the handler returns and
 * unblocks it.  Sampling ends with the process.
 */
static void sp_default(int sig)
{
	struct sigaction a;

	memset(&a, 0, sizeof(a));
	a.sa_handler = SIG_DFL;
	sigemptyset(&a.sa_mask);
	if (sp_real_sigaction(sig, &a, NULL))
		return;
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
}

static void sp_prog_set(const struct sigaction *act);

/* A signal of our number that is not our timers': the program's handler, as it asked. */
static void sp_chain(int sig, siginfo_t *si, void *uc)
{
	/* Acquire: pairs with the release store of the index in sp_prog_set. */
	const struct sigaction *a = &sp_prog[__atomic_load_n(&sp_prog_cur, __ATOMIC_ACQUIRE) & 1];
	struct rip_file_hdr *h = __atomic_load_n(&sp_hdr, __ATOMIC_RELAXED);
	struct sigaction act = *a;
	sigset_t old;

	if (h)
		__atomic_fetch_add(&h->sample_foreign, 1, __ATOMIC_RELAXED);
	if (!(act.sa_flags & SA_SIGINFO) && act.sa_handler == SIG_IGN)
		return; /* counted above */
	if (!(act.sa_flags & SA_SIGINFO) && act.sa_handler == SIG_DFL)
		return sp_default(sig);
	/* One delivery, then the default, as the kernel resets it before the handler runs. */
	if (act.sa_flags & SA_RESETHAND) {
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigemptyset(&dfl.sa_mask);
		sp_prog_set(&dfl);
	}
	pthread_sigmask(SIG_BLOCK, &act.sa_mask, &old);
	if (act.sa_flags & SA_SIGINFO)
		act.sa_sigaction(sig, si, uc);
	else
		act.sa_handler(sig);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Is s a slot of the file at h (not a dummy, not an older file's)? */
static bool sp_slot_of(const struct rip_file_hdr *h, const struct rip_slot *s)
{
	const char *lo = (const char *)h + RIP_SLOTS_OFFSET;
	const char *hi = lo + ((size_t)h->slot_count << RIP_SLOT_SHIFT);

	return (const char *)s >= lo && (const char *)s < hi &&
	       ((const char *)s - lo) % RIP_SLOT_SIZE == 0;
}

#if defined(__x86_64__)
/*
 * Can the 16 bytes at fp be read?  *okp: the last page found readable.
 * Code built without frame pointers keeps anything in rbp, and a program
 * may make a page of its own stack unreadable (a guard page, a test's
 * PROT_NONE page above its frames): read directly, the chain would then
 * kill the program with SIGSEGV.  One probe per new page, at most
 * SP_DEPTH - 1 a sample; a refused probe ends the walk.
 */
static bool sp_frame_readable(uintptr_t fp, uintptr_t *okp)
{
	for (uintptr_t x = fp;; x = (x | 4095) + 1) {
		if (x / 4096 != *okp) {
			if (rip_pl_readable(x) != 1)
				return false;
			*okp = x / 4096;
		}
		if ((x | 4095) >= fp + 15)
			return true;
	}
}
#endif

/*
 * The interrupted IP, then the return addresses of the frame-pointer chain
 * while it stays inside the part of the thread's stack in use: between the
 * interrupted stack pointer and the top of the stack thread.c found, on
 * pages that can be read.  A thread on another stack (a coroutine's, a
 * signal stack) gets its IP only.  errno changed (the handler restores it).
 */
static uint32_t sp_walk(const ucontext_t *uc, uint64_t *e)
{
#if defined(__x86_64__)
	const struct rip_pl_thread *t = &rip_pl_self;
	uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	uintptr_t okp = 0;
	uint32_t n = 0;

	if (ip > RIP_SAMPLE_ADDR_MASK)
		return 0;
	e[n++] = RIP_SAMPLE_ENTRY(0, ip);
	if (t->stack_ok != 1 || sp < t->stack_lo || sp >= t->stack_hi)
		return n;
	while (n < SP_DEPTH) {
		const uintptr_t *f = (const uintptr_t *)fp;
		uintptr_t ret, next;

		if (fp < sp || fp & 7 || fp > t->stack_hi - 16 || !sp_frame_readable(fp, &okp))
			break;
		next = f[0];
		ret = f[1];
		if (!ret || ret > RIP_SAMPLE_ADDR_MASK)
			break;
		e[n] = RIP_SAMPLE_ENTRY(n, ret);
		n++;
		if (next <= fp)
			break;
		fp = next;
	}
	return n;
#else
	(void)uc;
	(void)e;
	return 0;
#endif
}

/*
 * The sample ring of slot s, its page backed; NULL when the file has no
 * sample area or the page cannot be backed (a full tmpfs).  From the
 * handler: a system call, once per page.
 */
static struct rip_sample_ring *sp_ring(struct rip_file_hdr *h, const struct rip_slot *s)
{
	size_t i = (size_t)((const char *)s - ((const char *)h + RIP_SLOTS_OFFSET)) / RIP_SLOT_SIZE;
	uint64_t off = h->sample_off + (uint64_t)i * RIP_SAMPLE_RING_SIZE;
	size_t page = (size_t)(off - h->sample_off) / 4096, w = page / 64;
	uint64_t bit = 1ull << (page % 64);

	if (!h->sample_off || h->sample_size != RIP_SAMPLE_RING_SIZE || !sp_backed ||
	    w >= sp_backed_len)
		return NULL;
	/* Relaxed: a hint; a page backed twice costs one more system call. */
	if (!(__atomic_load_n(&sp_backed[w], __ATOMIC_RELAXED) & bit)) {
		if (__rip_file_commit(off, RIP_SAMPLE_RING_SIZE))
			return NULL;
		__atomic_fetch_or(&sp_backed[w], bit, __ATOMIC_RELAXED);
	}
	return (struct rip_sample_ring *)((char *)h + off);
}

static void sp_on_signal(int sig, siginfo_t *si, void *ucv)
{
	int saved = errno;
	struct rip_file_hdr *h;
	struct rip_sample_ring *r;
	struct rip_slot *s;
	uint64_t e[SP_DEPTH];
	uint32_t n, i;

	if (!si || si->si_code != SI_TIMER || (uintptr_t)si->si_value.sival_ptr != sp_cookie) {
		sp_chain(sig, si, ucv);
		goto out;
	}
	h = __atomic_load_n(&sp_hdr, __ATOMIC_RELAXED);
	s = __rip_self.cur;
	/* A signal of the timer deleted before seccomp strict mode, still pending: dropped. */
	if (!h || sp_strict)
		goto out;
	/* Periods the kernel merged into this signal while it was pending: not sampled, counted. */
	if (si->si_overrun > 0)
		__atomic_fetch_add(&h->sample_overrun, (uint64_t)si->si_overrun, __ATOMIC_RELAXED);
	if (!s || !sp_slot_of(h, s)) {
		__atomic_fetch_add(&h->sample_noslot, 1, __ATOMIC_RELAXED);
		goto out;
	}
	n = sp_walk(ucv, e);
	if (!n)
		goto out;
	/* the sampled code's object in the module map (it may have come with a dlopen) */
	rip_pl_mod_seen(&rip_pl_self, (uintptr_t)(e[0] & RIP_SAMPLE_ADDR_MASK));
	r = sp_ring(h, s);
	if (!r) {
		__atomic_fetch_add(&h->sample_noslot, 1, __ATOMIC_RELAXED);
		goto out;
	}
	/* The sample-ring protocol (rip/abi.h) with n entries: one publication for all. */
	i = r->seq;
	/* Relaxed: the slot's gen, as its owner set it; readers compare it with the slot's. */
	r->gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED);
	for (uint32_t k = 0; k < n; k++)
		r->e[(i + k) % RIP_SAMPLE_RING] = e[k];
	/* Publish the entries: pairs with the acquire loads of seq in the readers. */
	__atomic_store_n(&r->seq, i + n, __ATOMIC_RELEASE);
	__atomic_fetch_add(&h->samples, 1, __ATOMIC_RELAXED);
out:
	errno = saved;
}

/* ---- timers ---- */

static void sp_timer_delete(void)
{
	struct rip_file_hdr *h = __atomic_load_n(&sp_hdr, __ATOMIC_RELAXED);

	if (!sp_timer)
		return;
	syscall(SYS_timer_delete, sp_timer - 1);
	sp_timer = 0;
	if (h)
		__atomic_fetch_sub(&h->sample_timers, 1, __ATOMIC_RELAXED);
}

static void sp_thread_exit(void *arg)
{
	int err = errno;

	(void)arg;
	sp_timer_delete();
	errno = err;
}

/* A timer on the calling thread's CPU-time clock, sending our signal to it. */
static void sp_timer_start(void)
{
	struct rip_file_hdr *h = __atomic_load_n(&sp_hdr, __ATOMIC_RELAXED);
	struct sigevent sev;
	struct itimerspec its;
	int id = -1;

	if (!sp_sig || !h || sp_timer)
		return;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = sp_sig;
	sev.sigev_value.sival_ptr = (void *)(uintptr_t)sp_cookie;
	sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	if (syscall(SYS_timer_create, CLOCK_THREAD_CPUTIME_ID, &sev, &id)) {
		sp_count_fail(errno);
		return;
	}
	memset(&its, 0, sizeof(its));
	its.it_interval.tv_nsec = 1000000000L / sp_hz;
	its.it_value = its.it_interval;
	if (syscall(SYS_timer_settime, id, 0, &its, NULL)) {
		sp_count_fail(errno);
		syscall(SYS_timer_delete, id);
		return;
	}
	sp_timer = id + 1;
	__atomic_fetch_add(&h->sample_timers, 1, __ATOMIC_RELAXED);
	/* Our key is made first thing: it has a static slot, nothing is allocated. */
	if (sp_key_ok)
		pthread_setspecific(sp_key, (void *)1);
}

void rip_pl_sample_thread_start(void)
{
	int err = errno;

	if (!__atomic_load_n(&sp_sig, __ATOMIC_RELAXED))
		return;
	/* A slot to write into from the first sample (a no-op if the thread has one). */
	rip_thread_attach();
	sp_timer_start();
	errno = err;
}

/* ---- seccomp strict mode ---- */

bool rip_pl_sample_is_strict(long n, long a0, long a1)
{
	if (n == SYS_prctl)
		return a0 == PR_SET_SECCOMP && a1 == SECCOMP_MODE_STRICT;
	return n == SYS_seccomp && a0 == SECCOMP_SET_MODE_STRICT;
}

/*
 * In strict mode the thread may make no system call but read, write,
 * _exit and sigreturn: a sample (a page of the file backed, a probe of the
 * stack) or the timer's deletion at the thread's exit would have the
 * kernel kill the process.  The timer goes before the call (its last
 * signal, if one is pending, is dropped by the handler).
 */
void rip_pl_sample_strict_begin(void)
{
	int err = errno;

	sp_strict = true;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* the mark before the timer goes: the handler */
	sp_timer_delete();
	errno = err;
}

void rip_pl_sample_strict_end(long ret)
{
	int err;

	if (!ret) {
		/*
		 * In strict mode now: the thread is sampled no more, and records
		 * nothing more.  On x86 the kernel turns the TSC off for it too
		 * (TIF_NOTSC: rdtsc faults), and every record's time reads it, as
		 * clock_gettime's vDSO does: the write wrapper's wait record killed
		 * the program with SIGSEGV where librip's clock is the TSC (rip
		 * run's).  The guard up for good, at no frame (1): every hook
		 * forwards, and rip_pl_enter_odd finds no handler that interrupted
		 * work of ours (no system call: a frame of 0 is none).
		 */
		rip_pl_self.guard = 1;
		return;
	}
	err = errno;
	sp_strict = false;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sp_timer_start();
	errno = err;
}

RIP_PL_EXPORT int prctl(int option, ...)
{
	static int (*real)(int, ...);
	unsigned long a[4];
	bool strict;
	va_list ap;
	int ret;

	if (!RIP_PL_REAL(real, "prctl"))
		return rip_pl_enosys();
	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	strict = rip_pl_sample_is_strict(SYS_prctl, option, (long)a[0]);
	if (strict)
		rip_pl_sample_strict_begin();
	ret = real(option, a[0], a[1], a[2], a[3]);
	if (strict)
		rip_pl_sample_strict_end(ret);
	else if (option == PR_SET_NAME && !ret)
		rip_pl_renamed(0);
	return ret;
}

/* ---- the program's view of our signal ---- */

static void sp_prog_set(const struct sigaction *act)
{
	int next = !(__atomic_load_n(&sp_prog_cur, __ATOMIC_RELAXED) & 1);

	sp_prog[next] = *act;
	/* Release: the copy above before the index; pairs with the acquire in sp_chain. */
	__atomic_store_n(&sp_prog_cur, next, __ATOMIC_RELEASE);
	if ((act->sa_flags & SA_SIGINFO) ||
	    (act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN))
		sp_flag(RIP_SAMPLE_F_SIG_SHARED);
}

RIP_PL_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	static int (*real)(int, const struct sigaction *, struct sigaction *);

	if (!RIP_PL_REAL(real, "sigaction"))
		return rip_pl_enosys();
	if (!sig || sig != __atomic_load_n(&sp_sig, __ATOMIC_RELAXED))
		return real(sig, act, old);
	if (old)
		*old = sp_prog[__atomic_load_n(&sp_prog_cur, __ATOMIC_ACQUIRE) & 1];
	if (act)
		sp_prog_set(act);
	return 0;
}

RIP_PL_EXPORT __sighandler_t signal(int sig, __sighandler_t fn)
{
	static __sighandler_t (*real)(int, __sighandler_t);
	struct sigaction a;
	__sighandler_t old;

	if (!RIP_PL_REAL(real, "signal")) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	if (!sig || sig != __atomic_load_n(&sp_sig, __ATOMIC_RELAXED))
		return real(sig, fn);
	old = sp_prog[__atomic_load_n(&sp_prog_cur, __ATOMIC_ACQUIRE) & 1].sa_handler;
	memset(&a, 0, sizeof(a));
	a.sa_handler = fn;
	a.sa_flags = SA_RESTART; /* glibc's signal() is BSD's */
	sigemptyset(&a.sa_mask);
	sp_prog_set(&a);
	return old;
}

/*
 * sigpending: a timer signal left pending on a thread that blocks every
 * signal is ours, never the program's (its default would end the process,
 * and sp_chain drops it): taken out of the answer, unless the program
 * handles our number itself.  syscall(SYS_rt_sigpending) gets the same
 * (wait.c, rip_pl_sample_pending).
 */
void rip_pl_sample_pending(void *set, unsigned long size)
{
	int sig = __atomic_load_n(&sp_sig, __ATOMIC_RELAXED);
	struct rip_file_hdr *h = __atomic_load_n(&sp_hdr, __ATOMIC_RELAXED);

	if (!sig || !set || size < RIP_PL_KSIGSET ||
	    (h && (__atomic_load_n(&h->sample_flags, __ATOMIC_RELAXED) & RIP_SAMPLE_F_SIG_SHARED)))
		return;
	/* The kernel's layout, glibc's too: bit sig - 1, in words of unsigned long. */
	((unsigned long *)set)[(sig - 1) / (8 * sizeof(long))] &=
		~(1UL << ((sig - 1) % (8 * sizeof(long))));
}

RIP_PL_EXPORT int sigpending(sigset_t *set)
{
	static int (*real)(sigset_t *);
	int r;

	if (!RIP_PL_REAL(real, "sigpending"))
		return rip_pl_enosys();
	r = real(set);
	if (!r)
		rip_pl_sample_pending(set, RIP_PL_KSIGSET);
	return r;
}

/* Per thread: a wait that takes its set from here returns before it is needed again. */
static __thread sigset_t sp_set RIP_PL_TLS;

/*
 * Does set treat our signal as it treats its neighbours (the one below it
 * and SIGRTMIN)?  A full or empty set does; a program that singles our
 * number out (waits for it alone) means that very signal, and gets it.
 */
static bool sp_like_neighbours(const sigset_t *set, int sig)
{
	int m = sigismember(set, sig);

	return sigismember(set, sig - 1) == m && sigismember(set, SIGRTMIN) == m;
}

/* Our signal, if the wait masks and sets should leave it out; 0 otherwise. */
static int sp_sig_to_hide(const sigset_t *set)
{
	int sig = __atomic_load_n(&sp_sig, __ATOMIC_RELAXED);
	struct rip_file_hdr *h = __atomic_load_n(&sp_hdr, __ATOMIC_RELAXED);

	if (!sig || !set || !sp_like_neighbours(set, sig))
		return 0;
	/* A program that handles our number itself may wait for it: leave it be. */
	if (h && (__atomic_load_n(&h->sample_flags, __ATOMIC_RELAXED) & RIP_SAMPLE_F_SIG_SHARED))
		return 0;
	return sig;
}

/*
 * Our signal, if it is to be changed in s: taken out of a set waited for
 * (it is a member) or added to a mask (it is not blocked); 0 otherwise.
 */
static int sp_to_change(const sigset_t *s, bool mask)
{
	int sig = sp_sig_to_hide(s);

	return sig && sigismember(s, sig) == !mask ? sig : 0;
}

/* *out: s with our signal changed (sp_to_change gave sig). */
static void sp_change(const sigset_t *s, bool mask, int sig, sigset_t *out)
{
	*out = *s;
	if (mask)
		sigaddset(out, sig);
	else
		sigdelset(out, sig);
}

/*
 * The set (!mask) or mask at p with our signal changed, in *out: its first
 * RIP_PL_KSIGSET bytes (the kernel's sigset_t, all the calls read), the
 * rest empty; p itself when nothing is to change, and when p cannot be
 * read (the call's EFAULT to give: rip_pl_peek), or when we do not sample.
 */
static const void *sp_hide(const void *p, bool mask, sigset_t *out)
{
	sigset_t k;
	int sig;

	if (!p || !__atomic_load_n(&sp_sig, __ATOMIC_RELAXED))
		return p;
	sigemptyset(&k);
	if (!rip_pl_peek(&k, p, RIP_PL_KSIGSET))
		return p;
	sig = sp_to_change(&k, mask);
	if (!sig)
		return p;
	sp_change(&k, mask, sig, out);
	return out;
}

const sigset_t *rip_pl_sample_set(const sigset_t *set)
{
	return sp_hide(set, false, &sp_set);
}

const sigset_t *rip_pl_sample_mask(const sigset_t *mask)
{
	return sp_hide(mask, true, &sp_set);
}

const sigset_t *rip_pl_sample_filter(const sigset_t *in, sigset_t *out)
{
	return sp_hide(in, false, out);
}

/*
 * A raw system call's set or mask (syscall(2)): the kernel's sigset_t,
 * size bytes at p, changed only of the kernel's size (any other is its
 * EINVAL).
 */
const void *rip_pl_sample_kset(const void *p, unsigned long size, bool mask, sigset_t *buf)
{
	return size == RIP_PL_KSIGSET ? sp_hide(p, mask, buf) : p;
}

/*
 * A raw call's mask behind a pointer of its own (pselect6, io_pgetevents):
 * the pair at p, then its mask, read as rip_pl_sample_kset reads one, each
 * once and only while we sample.
 */
const void *rip_pl_sample_kpack(const void *p, struct rip_pl_ksigpack *pack, sigset_t *buf)
{
	struct rip_pl_ksigpack k;

	if (!p || !__atomic_load_n(&sp_sig, __ATOMIC_RELAXED) || !rip_pl_peek(&k, p, sizeof(k)))
		return p;
	if (rip_pl_sample_kset(k.ss, k.len, true, buf) != buf)
		return p;
	pack->ss = buf;
	pack->len = k.len;
	return pack;
}

/* ---- start ---- */

void rip_pl_sample_fork_child(void)
{
	if (!sp_sig)
		return; /* sampling is off */
	/* Timers are not inherited: the one thread of the child starts its own, in its file. */
	sp_timer = 0;
	/* The child's file is new: none of its sample pages is backed yet. */
	if (sp_backed)
		memset(sp_backed, 0, sp_backed_len * 8);
	__atomic_store_n(&sp_hdr, sp_find_hdr(), __ATOMIC_RELAXED);
	if (sp_hdr) {
		__atomic_store_n(&sp_hdr->sample_timers, 0, __ATOMIC_RELAXED);
		sp_timer_start();
	}
}

/* The highest realtime signal whose disposition is still the default, or 0. */
static int sp_pick_signal(void)
{
	for (int s = SIGRTMAX; s > SIGRTMIN + 2; s--) {
		struct sigaction a;

		if (sp_real_sigaction(s, NULL, &a))
			continue;
		if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_DFL)
			return s;
	}
	return 0;
}

int rip_pl_sample_init(void)
{
	const char *env = secure_getenv("RIP_SAMPLE");
	struct rip_file_hdr *h;
	struct sigaction sa;
	unsigned long hz;
	char *end;
	int sig;

	if (!env || !*env)
		return 0;
	hz = strtoul(env, &end, 10);
	if (*end || hz == 0)
		return 0; /* rip run checked it; a hand-set bad value only loses sampling */
	if (hz > SP_HZ_MAX)
		hz = SP_HZ_MAX;
	h = sp_find_hdr();
	if (!h)
		return 0;
	if (h->sample_off) {
		/* A bit per 4 KiB page of the area, each page RIP_SAMPLE_RING_SIZE-aligned rings. */
		size_t pages = ((size_t)h->slot_count * RIP_SAMPLE_RING_SIZE + 4095) / 4096;

		sp_backed_len = (pages + 63) / 64;
		sp_backed = (uint64_t *)syscall(SYS_mmap, NULL, sp_backed_len * 8,
						PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
						-1, 0);
		if (sp_backed == MAP_FAILED)
			sp_backed = NULL;
	}
	__atomic_store_n(&sp_hdr, h, __ATOMIC_RELAXED);
	h->sample_hz = (uint32_t)hz;
	h->sample_depth = SP_DEPTH;
#if !defined(__x86_64__)
	/* No frame walk written for this architecture yet: nothing is sampled. */
	sp_flag(RIP_SAMPLE_F_NO_FP);
	return 0;
#endif
	if (!RIP_PL_REAL(sp_real_sigaction, "sigaction"))
		return 0;
	if (getrandom(&sp_cookie, sizeof(sp_cookie), GRND_NONBLOCK) != sizeof(sp_cookie))
		sp_cookie = (uint64_t)rip_clock_ticks() * 0x9E3779B97F4A7C15ull;
	sp_cookie |= 1; /* never NULL */
	sig = sp_pick_signal();
	if (!sig) {
		sp_flag(RIP_SAMPLE_F_NO_SIGNAL);
		return 0;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sp_on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sp_real_sigaction(sig, &sa, NULL))
		return 0;
	sigemptyset(&sp_prog[0].sa_mask);
	sp_prog[0].sa_handler = SIG_DFL;
	sp_prog[1] = sp_prog[0];
	sp_key_ok = pthread_key_create(&sp_key, sp_thread_exit) == 0;
	if (pthread_atfork(NULL, NULL, rip_pl_sample_fork_child))
		return 0;
	h->sample_sig = (uint32_t)sig;
	sp_hz = (uint32_t)hz;
	/* Relaxed: the wrappers and new threads that see it late miss only their start. */
	__atomic_store_n(&sp_sig, sig, __ATOMIC_RELAXED);
	sp_flag(RIP_SAMPLE_F_ON);
	/* The thread that runs the constructor (the main thread, as a rule). */
	if (!rip_pl_self.stack_ok)
		rip_pl_thread_init();
	rip_pl_sample_thread_start();
	return 0;
}
