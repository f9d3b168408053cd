// SPDX-License-Identifier: Apache-2.0
/*
 * preload/wait.c - wrappers of the public blocking entry points of libc:
 * each writes into its thread's slot what it waits in and where it was
 * called from (struct rip_wait, the protocol of wait.h) before the real
 * call and clears it after, so that `rip ps` tells where every thread of
 * an uninstrumented program waits, live or after kill -9.
 *
 * Which entry points: calls inside libc bypass the PLT (sleep calls the
 * internal nanosleep, fread the internal read, system spawns through
 * internal calls), so the public ones are wrapped each, and so are the
 * _FORTIFY_SOURCE variants (__read_chk...), which programs built with it
 * call instead.  Mutexes and read-write locks try first: an uncontended
 * lock writes nothing and reads no clock.  glibc exports two
 * pthread_cond_wait and pthread_cond_timedwait on x86-64, GLIBC_2.2.5 (old
 * binaries, an older condition layout) and GLIBC_2.3.2; each of ours has
 * the version of the one it forwards to (.symver, preload/preload.map),
 * found as dlvsym finds it (RIP_PL_REAL with "name@VERSION").  futex waits
 * are seen through syscall() only; io_uring and raw system calls are not.
 * syscall()'s calls that make or release descriptors, mappings and System
 * V shared memory are recorded here too, by the recording steps of fd.c's,
 * mem.c's and shm.c's wrappers (rip_pl_syscall_resource).
 *
 * vfork: the child runs on its parent's thread, TLS and slot included.
 * vfork is wrapped by a jump that only marks the thread; a wrapper that
 * finds the mark asks getpid once: in the child it records nothing (the
 * parent's slot stays as it was), in the parent the mark goes.  posix_spawn
 * and system() spawn through libc's internal calls, which are not wrapped.
 */
/* glibc defines getline inline when optimizing (bits/stdio.h): ours must be the function. */
#include <features.h>
#undef __USE_EXTERN_INLINES
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "wait.h"
#include "watch.h"

#ifdef SYS_pkey_mprotect
#define RIP_PL_SYS_PKEY_MPROTECT SYS_pkey_mprotect
#else
#define RIP_PL_SYS_PKEY_MPROTECT (-1L) /* none here */
#endif

/* ---- threads without a slot, vfork ---- */

/*
 * A thread born before the constructor, or by a raw clone: its slot now,
 * once (later calls find it, or the scratch slot librip gives when the
 * pool is full).  NULL inside a hook's own work.
 */
struct rip_slot *rip_pl_wait_slot(void)
{
	struct rip_pl_thread *t = &rip_pl_self;

	if (t->guard)
		return NULL;
	t->guard = rip_pl_guard_up();
	/* Guard up before the work: pairs with rip_pl_enter's check in a signal handler. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rip_pl_thread_born(0);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->guard = 0;
	return __rip_self.thread;
}

static pid_t rip_pl_pid;

void rip_pl_wait_fork_child(void)
{
	rip_pl_pid = (pid_t)syscall(SYS_getpid);
}

__attribute__((constructor)) static void rip_pl_wait_init(void)
{
	if (rip_pl_secure())
		return; /* wait records stay off (common.c) */
	rip_pl_wait_fork_child();
	pthread_atfork(NULL, NULL, rip_pl_wait_fork_child);
}

bool rip_pl_vfork_child(void)
{
	struct rip_pl_thread *t = &rip_pl_self;
	int err = errno;
	bool child = (pid_t)syscall(SYS_getpid) != rip_pl_pid;

	errno = err;
	if (!child)
		t->vfork = 0; /* the parent, back from vfork */
	return child;
}

#if defined(__x86_64__)
/* vfork's real function, resolved with the others (a record of RIP_PL_REAL's section). */
void *rip_pl_vfork_real __attribute__((visibility("hidden")));
static struct rip_pl_sym rip_pl_vfork_sym __attribute__((section("rip_pl_syms"), used)) = {
	&rip_pl_vfork_real, "vfork"
};

/* Before it is known (a constructor that vforks before ours ran): fork does as well. */
pid_t rip_pl_vfork_fallback(void) __attribute__((visibility("hidden")));
pid_t rip_pl_vfork_fallback(void)
{
	return fork();
}

/*
 * vfork returns twice on one stack: no frame of ours may stay under it.
 * Mark the thread (rip_pl_self.vfork, offset 16) and jump to the real one.
 */
_Static_assert(__builtin_offsetof(struct rip_pl_thread, vfork) == 16, "vfork mark");
__asm__(".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	"vfork:\n"
	"	movq rip_pl_self@gottpoff(%rip), %rax\n"
	"	movl $1, %fs:16(%rax)\n"
	"	movq rip_pl_vfork_real(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	jmp *%rax\n"
	"1:	jmp rip_pl_vfork_fallback\n"
	".size vfork, .-vfork\n");
#endif

/* ---- wrappers ---- */

/*
 * RIP_PL_WRAP_W(ret, name, sym, fail, wait, (params), (args)): a wrapper
 * that runs the statement wait (an RIP_PL_WAIT...) and forwards to sym;
 * when sym is missing it runs the statement fail.
 */
#define RIP_PL_WRAP_W(RET, NAME, SYM, FAIL, WAIT, PARAMS, ARGS)                                    \
	RIP_PL_EXPORT RET NAME PARAMS                                                              \
	{                                                                                          \
		static RET(*real) PARAMS;                                                          \
                                                                                                   \
		if (!RIP_PL_REAL(real, SYM)) {                                                     \
			FAIL;                                                                      \
		}                                                                                  \
		WAIT;                                                                              \
		RET ret_ = real ARGS;                                                              \
		RIP_PL_UNBLOCKED();                                                                \
		return ret_;                                                                       \
	}

/*
 * RIP_PL_WRAP_OR(ret, name, kind, arg, fail, (params), (args)): a wrapper
 * that records kind on arg and forwards; when the real function is missing
 * it sets errno to ENOSYS and returns fail.  RIP_PL_WRAP: fail is -1.
 * RIP_PL_WRAP_TMO: the same for a call with a timeout tmo (wait.h).
 */
#define RIP_PL_WRAP_OR(RET, NAME, KIND, ARG, FAIL, PARAMS, ARGS)                                  \
	RIP_PL_WRAP_W(RET, NAME, #NAME, rip_pl_enosys(); return FAIL,                              \
		      RIP_PL_WAIT(KIND, ARG, true), PARAMS, ARGS)
#define RIP_PL_WRAP(RET, NAME, KIND, ARG, PARAMS, ARGS)                                            \
	RIP_PL_WRAP_OR(RET, NAME, KIND, ARG, (RET)-1, PARAMS, ARGS)
#define RIP_PL_WRAP_TMO(RET, NAME, KIND, ARG, TMO, PARAMS, ARGS)                                  \
	RIP_PL_WRAP_W(RET, NAME, #NAME, rip_pl_enosys(); return (RET)-1,                           \
		      RIP_PL_WAIT_TMO(KIND, ARG, TMO), PARAMS, ARGS)

/* The same for the pthread functions, which return an error number. */
#define RIP_PL_WRAP_PT(NAME, SYM, KIND, ARG, PARAMS, ARGS)                                        \
	RIP_PL_WRAP_W(int, NAME, SYM, return ENOSYS, RIP_PL_WAIT(KIND, ARG, true), PARAMS, ARGS)
#define RIP_PL_WRAP_PT_TMO(NAME, SYM, KIND, ARG, TMO, PARAMS, ARGS)                               \
	RIP_PL_WRAP_W(int, NAME, SYM, return ENOSYS, RIP_PL_WAIT_TMO(KIND, ARG, TMO), PARAMS, ARGS)

/* A timeout in milliseconds (poll, epoll_wait): negative waits for ever. */
#define RIP_PL_TMO_MS(MS) RIP_PL_TMO_REL((MS) < 0 ? -1 : (int64_t)(MS) * 1000000)

/* The fortified variants are declared only under _FORTIFY_SOURCE. */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *restrict buf, size_t n, size_t buflen, int flags,
		       __SOCKADDR_ARG addr, socklen_t *restrict len);
int __poll_chk(struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen);
int __ppoll_chk(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
		const sigset_t *ss, size_t fdslen);
size_t __fread_chk(void *restrict buf, size_t buflen, size_t size, size_t n, FILE *restrict fp);
char *__fgets_chk(char *buf, size_t size, int n, FILE *fp);

/* read family */
RIP_PL_WRAP(ssize_t, read, RIP_WAIT_READ, fd, (int fd, void *buf, size_t n), (fd, buf, n))
RIP_PL_WRAP(ssize_t, readv, RIP_WAIT_READ, fd, (int fd, const struct iovec *iov, int n),
	    (fd, iov, n))
RIP_PL_WRAP(ssize_t, pread, RIP_WAIT_READ, fd, (int fd, void *buf, size_t n, off_t off),
	    (fd, buf, n, off))
RIP_PL_WRAP(ssize_t, pread64, RIP_WAIT_READ, fd, (int fd, void *buf, size_t n, off64_t off),
	    (fd, buf, n, off))
RIP_PL_WRAP(ssize_t, preadv, RIP_WAIT_READ, fd,
	    (int fd, const struct iovec *iov, int n, off_t off), (fd, iov, n, off))
RIP_PL_WRAP(ssize_t, preadv2, RIP_WAIT_READ, fd,
	    (int fd, const struct iovec *iov, int n, off_t off, int flags),
	    (fd, iov, n, off, flags))
RIP_PL_WRAP(ssize_t, __read_chk, RIP_WAIT_READ, fd, (int fd, void *buf, size_t n, size_t buflen),
	    (fd, buf, n, buflen))
RIP_PL_WRAP(ssize_t, __pread_chk, RIP_WAIT_READ, fd,
	    (int fd, void *buf, size_t n, off_t off, size_t buflen), (fd, buf, n, off, buflen))
RIP_PL_WRAP(ssize_t, __pread64_chk, RIP_WAIT_READ, fd,
	    (int fd, void *buf, size_t n, off64_t off, size_t buflen), (fd, buf, n, off, buflen))

/* write family: a full pipe or socket blocks too */
RIP_PL_WRAP(ssize_t, write, RIP_WAIT_WRITE, fd, (int fd, const void *buf, size_t n), (fd, buf, n))
RIP_PL_WRAP(ssize_t, writev, RIP_WAIT_WRITE, fd, (int fd, const struct iovec *iov, int n),
	    (fd, iov, n))
RIP_PL_WRAP(ssize_t, pwrite, RIP_WAIT_WRITE, fd, (int fd, const void *buf, size_t n, off_t off),
	    (fd, buf, n, off))
RIP_PL_WRAP(ssize_t, pwrite64, RIP_WAIT_WRITE, fd,
	    (int fd, const void *buf, size_t n, off64_t off), (fd, buf, n, off))

/* sockets (accept, accept4, recvmsg and recvmmsg are fd.c's, which record there) */
RIP_PL_WRAP(ssize_t, recv, RIP_WAIT_RECV, fd, (int fd, void *buf, size_t n, int flags),
	    (fd, buf, n, flags))
RIP_PL_WRAP(ssize_t, recvfrom, RIP_WAIT_RECV, fd,
	    (int fd, void *restrict buf, size_t n, int flags, __SOCKADDR_ARG addr,
	     socklen_t *restrict len),
	    (fd, buf, n, flags, addr, len))
RIP_PL_WRAP(ssize_t, __recv_chk, RIP_WAIT_RECV, fd,
	    (int fd, void *buf, size_t n, size_t buflen, int flags), (fd, buf, n, buflen, flags))
RIP_PL_WRAP(ssize_t, __recvfrom_chk, RIP_WAIT_RECV, fd,
	    (int fd, void *restrict buf, size_t n, size_t buflen, int flags, __SOCKADDR_ARG addr,
	     socklen_t *restrict len),
	    (fd, buf, n, buflen, flags, addr, len))
RIP_PL_WRAP(ssize_t, send, RIP_WAIT_SEND, fd, (int fd, const void *buf, size_t n, int flags),
	    (fd, buf, n, flags))
RIP_PL_WRAP(ssize_t, sendto, RIP_WAIT_SEND, fd,
	    (int fd, const void *buf, size_t n, int flags, __CONST_SOCKADDR_ARG addr,
	     socklen_t len),
	    (fd, buf, n, flags, addr, len))
RIP_PL_WRAP(ssize_t, sendmsg, RIP_WAIT_SEND, fd, (int fd, const struct msghdr *msg, int flags),
	    (fd, msg, flags))
RIP_PL_WRAP(int, connect, RIP_WAIT_CONNECT, fd,
	    (int fd, __CONST_SOCKADDR_ARG addr, socklen_t len), (fd, addr, len))

/* A select timeout, relative; -1 for none (or one select refuses). */
static int64_t rip_pl_tv_ns(const struct timeval *tv)
{
	if (!tv || tv->tv_sec < 0 || tv->tv_usec < 0 || tv->tv_usec >= 1000000)
		return -1;
	if ((uint64_t)tv->tv_sec >= (uint64_t)INT64_MAX / 1000000000u)
		return INT64_MAX;
	return (int64_t)tv->tv_sec * 1000000000 + (int64_t)tv->tv_usec * 1000;
}

/* multiplexing (the masks of the p-variants keep the CPU sampler's signal blocked: sample.c) */
RIP_PL_WRAP_TMO(int, poll, RIP_WAIT_POLL, nfds, RIP_PL_TMO_MS(timeout),
		(struct pollfd *fds, nfds_t nfds, int timeout), (fds, nfds, timeout))
RIP_PL_WRAP_TMO(int, ppoll, RIP_WAIT_POLL, nfds, RIP_PL_TMO_REL(rip_pl_ts_ns(timeout)),
		(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
		 const sigset_t *ss),
		(fds, nfds, timeout, rip_pl_sample_mask(ss)))
RIP_PL_WRAP_TMO(int, __poll_chk, RIP_WAIT_POLL, nfds, RIP_PL_TMO_MS(timeout),
		(struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen),
		(fds, nfds, timeout, fdslen))
RIP_PL_WRAP_TMO(int, __ppoll_chk, RIP_WAIT_POLL, nfds, RIP_PL_TMO_REL(rip_pl_ts_ns(timeout)),
		(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
		 const sigset_t *ss, size_t fdslen),
		(fds, nfds, timeout, rip_pl_sample_mask(ss), fdslen))
RIP_PL_WRAP_TMO(int, select, RIP_WAIT_SELECT, nfds, RIP_PL_TMO_REL(rip_pl_tv_ns(timeout)),
		(int nfds, fd_set *restrict r, fd_set *restrict w, fd_set *restrict x,
		 struct timeval *restrict timeout),
		(nfds, r, w, x, timeout))
RIP_PL_WRAP_TMO(int, pselect, RIP_WAIT_SELECT, nfds, RIP_PL_TMO_REL(rip_pl_ts_ns(timeout)),
		(int nfds, fd_set *restrict r, fd_set *restrict w, fd_set *restrict x,
		 const struct timespec *restrict timeout, const sigset_t *restrict ss),
		(nfds, r, w, x, timeout, rip_pl_sample_mask(ss)))
RIP_PL_WRAP_TMO(int, epoll_wait, RIP_WAIT_EPOLL, epfd, RIP_PL_TMO_MS(timeout),
		(int epfd, struct epoll_event *ev, int max, int timeout), (epfd, ev, max, timeout))
RIP_PL_WRAP_TMO(int, epoll_pwait, RIP_WAIT_EPOLL, epfd, RIP_PL_TMO_MS(timeout),
		(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *ss),
		(epfd, ev, max, timeout, rip_pl_sample_mask(ss)))
RIP_PL_WRAP_TMO(int, epoll_pwait2, RIP_WAIT_EPOLL, epfd, RIP_PL_TMO_REL(rip_pl_ts_ns(timeout)),
		(int epfd, struct epoll_event *ev, int max, const struct timespec *timeout,
		 const sigset_t *ss),
		(epfd, ev, max, timeout, rip_pl_sample_mask(ss)))

/*
 * sleeping: arg is the time to sleep, in nanoseconds, as the timeout; an
 * absolute clock_nanosleep (Python's time.sleep) records the time left
 * when it began, not the clock's value of its deadline.
 */
RIP_PL_WRAP_W(int, nanosleep, "nanosleep", rip_pl_enosys(); return -1,
	      RIP_PL_WAIT_SLEEP(RIP_PL_TMO_REL(rip_pl_ts_ns(req))),
	      (const struct timespec *req, struct timespec *rem), (req, rem))
RIP_PL_WRAP_W(int, clock_nanosleep, "clock_nanosleep", return ENOSYS,
	      RIP_PL_WAIT_SLEEP(flags & TIMER_ABSTIME ? RIP_PL_TMO_ABS(clk, req)
						      : RIP_PL_TMO_REL(rip_pl_ts_ns(req))),
	      (clockid_t clk, int flags, const struct timespec *req, struct timespec *rem),
	      (clk, flags, req, rem))
RIP_PL_WRAP_W(unsigned int, sleep, "sleep", rip_pl_enosys(); return s,
	      RIP_PL_WAIT_SLEEP(RIP_PL_TMO_REL((int64_t)s * 1000000000)), (unsigned int s), (s))
RIP_PL_WRAP_W(int, usleep, "usleep", rip_pl_enosys(); return -1,
	      RIP_PL_WAIT_SLEEP(RIP_PL_TMO_REL((int64_t)us * 1000)), (useconds_t us), (us))

/* signals: arg is the first word of the set (signals 1 to 64); 0 when it cannot be read */
static uint64_t rip_pl_set_word(const sigset_t *ss)
{
	uint64_t v = 0;

	if (ss && !rip_pl_peek(&v, ss, sizeof(v) < sizeof(*ss) ? sizeof(v) : sizeof(*ss)))
		v = 0;
	return v;
}

/* The CPU sampler's signal is never waited for: it stays pending (sample.c). */
RIP_PL_WRAP_PT(sigwait, "sigwait", RIP_WAIT_SIGNAL, rip_pl_set_word(set),
	       (const sigset_t *restrict set, int *restrict sig), (rip_pl_sample_set(set), sig))
RIP_PL_WRAP(int, sigwaitinfo, RIP_WAIT_SIGNAL, rip_pl_set_word(set),
	    (const sigset_t *restrict set, siginfo_t *restrict info),
	    (rip_pl_sample_set(set), info))
RIP_PL_WRAP_TMO(int, sigtimedwait, RIP_WAIT_SIGNAL, rip_pl_set_word(set),
		RIP_PL_TMO_REL(rip_pl_ts_ns(timeout)),
		(const sigset_t *restrict set, siginfo_t *restrict info,
		 const struct timespec *restrict timeout),
		(rip_pl_sample_set(set), info, timeout))
RIP_PL_WRAP(int, sigsuspend, RIP_WAIT_SIGNAL, rip_pl_set_word(set), (const sigset_t *set),
	    (rip_pl_sample_mask(set)))
RIP_PL_WRAP(int, pause, RIP_WAIT_PAUSE, 0, (void), ())

/* children: arg is the pid (or id) asked for */
RIP_PL_WRAP(pid_t, wait, RIP_WAIT_CHILD, -1, (int *status), (status))
RIP_PL_WRAP(pid_t, waitpid, RIP_WAIT_CHILD, pid, (pid_t pid, int *status, int options),
	    (pid, status, options))
RIP_PL_WRAP(pid_t, wait4, RIP_WAIT_CHILD, pid,
	    (pid_t pid, int *status, int options, struct rusage *ru), (pid, status, options, ru))
RIP_PL_WRAP(int, waitid, RIP_WAIT_CHILD, id,
	    (idtype_t type, id_t id, siginfo_t *info, int options), (type, id, info, options))

/* stdio: arg is the FILE's descriptor */
static int64_t rip_pl_file_fd(FILE *fp)
{
#ifdef __GLIBC__
	return fp ? fp->_fileno : -1; /* what fileno returns, without a call */
#else
	return -1;
#endif
}

RIP_PL_WRAP_OR(size_t, fread, RIP_WAIT_STDIO, rip_pl_file_fd(fp), 0,
	    (void *restrict buf, size_t size, size_t n, FILE *restrict fp), (buf, size, n, fp))
RIP_PL_WRAP_OR(size_t, __fread_chk, RIP_WAIT_STDIO, rip_pl_file_fd(fp), 0,
	    (void *restrict buf, size_t buflen, size_t size, size_t n, FILE *restrict fp),
	    (buf, buflen, size, n, fp))
RIP_PL_WRAP_OR(char *, fgets, RIP_WAIT_STDIO, rip_pl_file_fd(fp), NULL,
	    (char *restrict buf, int n, FILE *restrict fp), (buf, n, fp))
RIP_PL_WRAP_OR(char *, __fgets_chk, RIP_WAIT_STDIO, rip_pl_file_fd(fp), NULL,
	    (char *buf, size_t size, int n, FILE *fp), (buf, size, n, fp))
RIP_PL_WRAP(ssize_t, getline, RIP_WAIT_STDIO, rip_pl_file_fd(fp),
	    (char **restrict line, size_t *restrict n, FILE *restrict fp), (line, n, fp))
RIP_PL_WRAP(ssize_t, getdelim, RIP_WAIT_STDIO, rip_pl_file_fd(fp),
	    (char **restrict line, size_t *restrict n, int delim, FILE *restrict fp),
	    (line, n, delim, fp))

/* processes */
RIP_PL_WRAP(int, system, RIP_WAIT_SYSTEM, 0, (const char *cmd), (cmd))
RIP_PL_WRAP(int, pclose, RIP_WAIT_SYSTEM, rip_pl_file_fd(fp), (FILE *fp), (fp))

/* ---- pthread ---- */

/*
 * Locks try first: taken at once, nothing is written and no clock read.
 * trylock answers as lock would for every kind of mutex, except that it
 * says EBUSY where lock would wait (or, for an error-checking mutex the
 * caller holds, EDEADLK: lock then says so).
 *
 * RIP_PL_WRAP_TRY(name, try, type, kind, tmo, (params), (args)): a lock
 * wrapper whose first parameter is the lock l; try is its trylock, called
 * first; tmo its timeout.  The timed ones measure an absolute deadline on
 * CLOCK_REALTIME, the clock ones on the clock given.
 */
#define RIP_PL_WRAP_TRY(NAME, TRY, TYPE, KIND, TMO, PARAMS, ARGS)                                  \
	RIP_PL_EXPORT int NAME PARAMS                                                              \
	{                                                                                          \
		static int(*real) PARAMS;                                                          \
		static int (*try)(TYPE *);                                                         \
		int ret;                                                                           \
                                                                                                   \
		if (!RIP_PL_REAL(real, #NAME))                                                     \
			return ENOSYS;                                                             \
		if (RIP_LIKELY(RIP_PL_REAL(try, TRY))) {                                           \
			ret = try(l);                                                              \
			if (RIP_LIKELY(ret != EBUSY))                                              \
				return ret;                                                        \
		}                                                                                  \
		RIP_PL_WAIT_TMO(KIND, (uintptr_t)l, TMO);                                          \
		ret = real ARGS;                                                                   \
		RIP_PL_UNBLOCKED();                                                                \
		return ret;                                                                        \
	}

RIP_PL_WRAP_TRY(pthread_mutex_lock, "pthread_mutex_trylock", pthread_mutex_t, RIP_WAIT_MUTEX,
		RIP_PL_TMO_NONE, (pthread_mutex_t * l), (l))
RIP_PL_WRAP_TRY(pthread_mutex_timedlock, "pthread_mutex_trylock", pthread_mutex_t,
		RIP_WAIT_MUTEX, RIP_PL_TMO_ABS(CLOCK_REALTIME, ts),
		(pthread_mutex_t *restrict l, const struct timespec *restrict ts), (l, ts))
RIP_PL_WRAP_TRY(pthread_mutex_clocklock, "pthread_mutex_trylock", pthread_mutex_t,
		RIP_WAIT_MUTEX, RIP_PL_TMO_ABS(clk, ts),
		(pthread_mutex_t *restrict l, clockid_t clk, const struct timespec *restrict ts),
		(l, clk, ts))
RIP_PL_WRAP_TRY(pthread_rwlock_rdlock, "pthread_rwlock_tryrdlock", pthread_rwlock_t,
		RIP_WAIT_RWLOCK, RIP_PL_TMO_NONE, (pthread_rwlock_t * l), (l))
RIP_PL_WRAP_TRY(pthread_rwlock_wrlock, "pthread_rwlock_trywrlock", pthread_rwlock_t,
		RIP_WAIT_RWLOCK, RIP_PL_TMO_NONE, (pthread_rwlock_t * l), (l))
RIP_PL_WRAP_TRY(pthread_rwlock_timedrdlock, "pthread_rwlock_tryrdlock", pthread_rwlock_t,
		RIP_WAIT_RWLOCK, RIP_PL_TMO_ABS(CLOCK_REALTIME, ts),
		(pthread_rwlock_t *restrict l, const struct timespec *restrict ts), (l, ts))
RIP_PL_WRAP_TRY(pthread_rwlock_timedwrlock, "pthread_rwlock_trywrlock", pthread_rwlock_t,
		RIP_WAIT_RWLOCK, RIP_PL_TMO_ABS(CLOCK_REALTIME, ts),
		(pthread_rwlock_t *restrict l, const struct timespec *restrict ts), (l, ts))
RIP_PL_WRAP_TRY(pthread_rwlock_clockrdlock, "pthread_rwlock_tryrdlock", pthread_rwlock_t,
		RIP_WAIT_RWLOCK, RIP_PL_TMO_ABS(clk, ts),
		(pthread_rwlock_t *restrict l, clockid_t clk, const struct timespec *restrict ts),
		(l, clk, ts))
RIP_PL_WRAP_TRY(pthread_rwlock_clockwrlock, "pthread_rwlock_trywrlock", pthread_rwlock_t,
		RIP_WAIT_RWLOCK, RIP_PL_TMO_ABS(clk, ts),
		(pthread_rwlock_t *restrict l, clockid_t clk, const struct timespec *restrict ts),
		(l, clk, ts))

RIP_PL_WRAP_PT(pthread_barrier_wait, "pthread_barrier_wait", RIP_WAIT_BARRIER, (uintptr_t)b,
	       (pthread_barrier_t *b), (b))

/*
 * The clock of a condition's timed wait: CLOCK_REALTIME unless its
 * attributes chose another (pthread_condattr_setclock), which glibc keeps
 * in a bit of the condition (__wrefs & 2: CLOCK_MONOTONIC; set when the
 * condition is made, read without a lock as glibc does).
 */
static clockid_t rip_pl_cond_clock(pthread_cond_t *c)
{
#ifdef __GLIBC__
	return __atomic_load_n(&c->__data.__wrefs, __ATOMIC_RELAXED) & 2 ? CLOCK_MONOTONIC
									 : CLOCK_REALTIME;
#else
	return CLOCK_REALTIME;
#endif
}

/*
 * Condition variables: one wrapper per version glibc exports, each
 * forwarding to the real function of its own version.  The old version's
 * conditions always measure on CLOCK_REALTIME (glibc makes each one with
 * the default attributes).
 */
#if defined(__x86_64__)
#define RIP_PL_COND_OLD "GLIBC_2.2.5"
#define RIP_PL_COND_NEW "GLIBC_2.3.2"

int rip_pl_cond_wait_new(pthread_cond_t *c, pthread_mutex_t *m);
int rip_pl_cond_wait_old(pthread_cond_t *c, pthread_mutex_t *m);
int rip_pl_cond_timedwait_new(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts);
int rip_pl_cond_timedwait_old(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts);

__asm__(".symver rip_pl_cond_wait_new, pthread_cond_wait@@" RIP_PL_COND_NEW);
__asm__(".symver rip_pl_cond_wait_old, pthread_cond_wait@" RIP_PL_COND_OLD);
__asm__(".symver rip_pl_cond_timedwait_new, pthread_cond_timedwait@@" RIP_PL_COND_NEW);
__asm__(".symver rip_pl_cond_timedwait_old, pthread_cond_timedwait@" RIP_PL_COND_OLD);

RIP_PL_WRAP_PT(rip_pl_cond_wait_new, "pthread_cond_wait@" RIP_PL_COND_NEW, RIP_WAIT_COND,
	       (uintptr_t)c, (pthread_cond_t *c, pthread_mutex_t *m), (c, m))
RIP_PL_WRAP_PT(rip_pl_cond_wait_old, "pthread_cond_wait@" RIP_PL_COND_OLD, RIP_WAIT_COND,
	       (uintptr_t)c, (pthread_cond_t *c, pthread_mutex_t *m), (c, m))
RIP_PL_WRAP_PT_TMO(rip_pl_cond_timedwait_new, "pthread_cond_timedwait@" RIP_PL_COND_NEW,
		   RIP_WAIT_COND, (uintptr_t)c, RIP_PL_TMO_ABS(rip_pl_cond_clock(c), ts),
		   (pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts), (c, m, ts))
RIP_PL_WRAP_PT_TMO(rip_pl_cond_timedwait_old, "pthread_cond_timedwait@" RIP_PL_COND_OLD,
		   RIP_WAIT_COND, (uintptr_t)c, RIP_PL_TMO_ABS(CLOCK_REALTIME, ts),
		   (pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts), (c, m, ts))
#else
RIP_PL_WRAP_PT(pthread_cond_wait, "pthread_cond_wait", RIP_WAIT_COND, (uintptr_t)c,
	       (pthread_cond_t *restrict c, pthread_mutex_t *restrict m), (c, m))
RIP_PL_WRAP_PT_TMO(pthread_cond_timedwait, "pthread_cond_timedwait", RIP_WAIT_COND, (uintptr_t)c,
		   RIP_PL_TMO_ABS(rip_pl_cond_clock(c), ts),
		   (pthread_cond_t *restrict c, pthread_mutex_t *restrict m,
		    const struct timespec *restrict ts),
		   (c, m, ts))
#endif
RIP_PL_WRAP_PT_TMO(pthread_cond_clockwait, "pthread_cond_clockwait", RIP_WAIT_COND, (uintptr_t)c,
		   RIP_PL_TMO_ABS(clk, ts),
		   (pthread_cond_t *restrict c, pthread_mutex_t *restrict m, clockid_t clk,
		    const struct timespec *restrict ts),
		   (c, m, clk, ts))

RIP_PL_WRAP_PT(pthread_join, "pthread_join", RIP_WAIT_JOIN, (uintptr_t)th,
	       (pthread_t th, void **ret), (th, ret))
RIP_PL_WRAP_PT_TMO(pthread_timedjoin_np, "pthread_timedjoin_np", RIP_WAIT_JOIN, (uintptr_t)th,
		   RIP_PL_TMO_ABS(CLOCK_REALTIME, ts),
		   (pthread_t th, void **ret, const struct timespec *ts), (th, ret, ts))
RIP_PL_WRAP_PT_TMO(pthread_clockjoin_np, "pthread_clockjoin_np", RIP_WAIT_JOIN, (uintptr_t)th,
		   RIP_PL_TMO_ABS(clk, ts),
		   (pthread_t th, void **ret, clockid_t clk, const struct timespec *ts),
		   (th, ret, clk, ts))

/* semaphores: sem_timedwait measures on CLOCK_REALTIME */
RIP_PL_WRAP(int, sem_wait, RIP_WAIT_SEM, (uintptr_t)s, (sem_t *s), (s))
RIP_PL_WRAP_TMO(int, sem_timedwait, RIP_WAIT_SEM, (uintptr_t)s, RIP_PL_TMO_ABS(CLOCK_REALTIME, ts),
		(sem_t *restrict s, const struct timespec *restrict ts), (s, ts))
RIP_PL_WRAP_TMO(int, sem_clockwait, RIP_WAIT_SEM, (uintptr_t)s, RIP_PL_TMO_ABS(clk, ts),
		(sem_t *restrict s, clockid_t clk, const struct timespec *restrict ts),
		(s, clk, ts))

/* ---- syscall(SYS_futex, ...) ---- */

/* Does this futex operation wait? */
static bool rip_pl_futex_waits(long op)
{
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
	case FUTEX_LOCK_PI:
	case FUTEX_WAIT_REQUEUE_PI:
#ifdef FUTEX_LOCK_PI2
	case FUTEX_LOCK_PI2:
#endif
		return true;
	default:
		return false;
	}
}

/*
 * Does system call n get a wait record (RIP_WAIT_SYSCALL)?  Not the ones
 * that never block, which our own code makes through syscall(2) too (the
 * vfork check's getpid would come back here), nor those that do not
 * return (exit, exit_group, a successful execve, rt_sigreturn, vfork).
 */
static bool rip_pl_syscall_waits(long n)
{
	switch (n) {
	case SYS_getpid:
	case SYS_gettid:
	case SYS_getppid:
	case SYS_tgkill:
	case SYS_tkill:
	case SYS_kill:
	case SYS_mmap:
	case SYS_munmap:
	case SYS_mprotect:
	case SYS_madvise:
	case SYS_mremap:
	case SYS_brk:
	case SYS_close:
	case SYS_close_range:
	case SYS_dup:
	case SYS_dup3:
	case SYS_fcntl:
	case SYS_clock_gettime:
	case SYS_gettimeofday:
	case SYS_rt_sigprocmask:
	case SYS_rt_sigaction:
	case SYS_sigaltstack:
	case SYS_prctl:
	case SYS_sched_yield:
	case SYS_sched_getaffinity:
	case SYS_set_robust_list:
	case SYS_set_tid_address:
	case SYS_rseq:
	case SYS_membarrier:
	case SYS_timer_create:
	case SYS_timer_settime:
	case SYS_timer_delete:
	case SYS_prlimit64:
	case SYS_exit:
	case SYS_exit_group:
	case SYS_execve:
	case SYS_execveat:
	case SYS_rt_sigreturn:
	case SYS_vfork:
		return false;
	default:
		return true;
	}
}

/*
 * The timeout of a futex wait (its fourth argument): FUTEX_WAIT's is
 * relative; FUTEX_LOCK_PI's an absolute CLOCK_REALTIME deadline; the
 * others' (WAIT_BITSET, WAIT_REQUEUE_PI, LOCK_PI2) absolute, on
 * CLOCK_MONOTONIC unless FUTEX_CLOCK_REALTIME is in op.
 */
static struct rip_pl_tmo rip_pl_futex_tmo(long op, const struct timespec *ts)
{
	if (!ts)
		return RIP_PL_TMO_NONE;
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAIT:
		return RIP_PL_TMO_REL(rip_pl_ts_ns(ts));
	case FUTEX_LOCK_PI:
		return RIP_PL_TMO_ABS(CLOCK_REALTIME, ts);
	default:
		return RIP_PL_TMO_ABS(op & FUTEX_CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC,
				      ts);
	}
}

/*
 * The tracer's own code: this library and librip.so (a shared object, not
 * the program), whose raw system calls (their rings' mappings, their
 * reads of /proc) come through this hook too, some with no guard up (a
 * constructor).  Their ranges, once, from _dl_find_object (no lock); a
 * race finds them twice, the same.
 */
static uintptr_t rip_pl_own_lo[2], rip_pl_own_hi[2];
static int rip_pl_own_ready;

static void rip_pl_own_range(int i, const void *fn)
{
	struct dl_find_object o;

	if (_dl_find_object((void *)fn, &o) == 0 && o.dlfo_link_map &&
	    o.dlfo_link_map->l_name && o.dlfo_link_map->l_name[0]) {
		/* Relaxed: published by the release store of rip_pl_own_ready. */
		__atomic_store_n(&rip_pl_own_lo[i], (uintptr_t)o.dlfo_map_start, __ATOMIC_RELAXED);
		__atomic_store_n(&rip_pl_own_hi[i], (uintptr_t)o.dlfo_map_end, __ATOMIC_RELAXED);
	}
}

/* Is ret, syscall()'s return address, in the tracer's code? */
static bool rip_pl_from_tracer(const void *ret)
{
	uintptr_t a = (uintptr_t)ret;

	/* Acquire: pairs with the release store below, after the ranges. */
	if (RIP_UNLIKELY(!__atomic_load_n(&rip_pl_own_ready, __ATOMIC_ACQUIRE))) {
		rip_pl_own_range(0, (const void *)&rip_pl_wait_slot);
		rip_pl_own_range(1, (const void *)&__rip_fn_pexit_at);
		__atomic_store_n(&rip_pl_own_ready, 1, __ATOMIC_RELEASE);
	}
	for (int i = 0; i < 2; i++)
		if (a >= __atomic_load_n(&rip_pl_own_lo[i], __ATOMIC_RELAXED) &&
		    a < __atomic_load_n(&rip_pl_own_hi[i], __ATOMIC_RELAXED))
			return true;
	return false;
}

/*
 * A call that makes or releases a descriptor, a mapping or shared memory
 * (rip_pl_sys_resource): recorded as its wrapper records it, by fd.c's,
 * mem.c's or shm.c's functions, called from here directly (inlined into
 * syscall(): their frame is where the backtrace starts), before the call
 * (releases) and after it (acquisitions), with its wait record as any
 * other call's.  errno is what the real call left.
 */
static inline __attribute__((always_inline)) long
rip_pl_syscall_resource(long (*real)(long, ...), long n, const long *a)
{
	enum rip_pl_sys_class cls = rip_pl_sys_resource(n);
	const void *ret_addr = __builtin_return_address(0);
	uint64_t before = 0;
	int e;
	long ret;

	if (cls == RIP_PL_SYS_FD)
		before = (uint64_t)rip_pl_fd_sys_before(n, a);
	else if (cls == RIP_PL_SYS_MEM)
		rip_pl_mem_sys_before(n, a, ret_addr);
	else
		before = rip_pl_shm_sys_before(n, a);
	if (rip_pl_syscall_waits(n)) {
		RIP_PL_WAIT(RIP_WAIT_SYSCALL, (uint64_t)n, true);
		ret = real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
		RIP_PL_UNBLOCKED();
	} else {
		ret = real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
	e = errno;
	if (cls == RIP_PL_SYS_FD)
		rip_pl_fd_sys_after(n, a, ret, (int)before);
	else if (cls == RIP_PL_SYS_MEM)
		rip_pl_mem_sys_after(n, a, ret, ret_addr);
	else
		rip_pl_shm_sys_after(n, a, ret, before);
	errno = e;
	return ret;
}

/*
 * The set or mask of a raw call whose wrapper leaves the CPU sampler's
 * signal out (fd.c's signalfd; the sigwait family; ppoll, pselect,
 * epoll_pwait, epoll_pwait2 and sigsuspend: sample.c), left out the same
 * way: the argument then points at a copy in *buf.  pselect6 and
 * io_pgetevents (which has no wrapper in glibc) take the mask and its size
 * through a pointer to a pair of their own: the argument then points at a
 * copy of that pair in *pack, whose mask is *buf.
 */
static inline __attribute__((always_inline)) void
rip_pl_syscall_sigs(long n, long *a, sigset_t *buf, struct rip_pl_ksigpack *pack)
{
	int i, sz;
	bool mask;

	switch (n) {
	case SYS_pselect6:
#ifdef SYS_io_pgetevents
	case SYS_io_pgetevents:
#endif
		a[5] = (long)rip_pl_sample_kpack((const void *)a[5], pack, buf);
		return;
#ifdef SYS_signalfd
	case SYS_signalfd:
#endif
	case SYS_signalfd4:
		i = 1, sz = 2, mask = false;
		break;
	case SYS_rt_sigtimedwait:
		i = 0, sz = 3, mask = false;
		break;
	case SYS_rt_sigsuspend:
		i = 0, sz = 1, mask = true;
		break;
	case SYS_ppoll:
		i = 3, sz = 4, mask = true;
		break;
	case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
		i = 4, sz = 5, mask = true;
		break;
	default:
		return;
	}
	a[i] = (long)rip_pl_sample_kset((const void *)a[i], (unsigned long)a[sz], mask, buf);
}

/*
 * Six arguments are passed on whatever the call takes, as glibc's own
 * syscall() reads them: the ones not given are whatever the registers
 * and stack hold, and the kernel ignores them.
 *
 * Any other system call made here gets a wait record of its own
 * (RIP_WAIT_SYSCALL, its number): a thread blocked in one was left to the
 * watcher, whose copy of the stack unwinds with sp and pc alone (/proc
 * gives no frame pointer), and stopped at this function, whose frame is
 * found from its frame pointer.  The record names the caller exactly
 * (rip_pl_syscall_waits says which calls).
 */
RIP_PL_EXPORT long syscall(long n, ...)
{
	static long (*real)(long, ...);
	struct rip_pl_ksigpack kp;
	sigset_t ks;
	long a[6];
	va_list ap;

	if (!RIP_PL_REAL(real, "syscall"))
		return rip_pl_enosys();
	va_start(ap, n);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n == SYS_futex && rip_pl_futex_waits(a[1])) {
		RIP_PL_WAIT_TMO(RIP_WAIT_FUTEX, (uintptr_t)a[0],
				rip_pl_futex_tmo(a[1], (const struct timespec *)a[3]));
		long ret = real(n, a[0], a[1], a[2], a[3], a[4], a[5]);

		RIP_PL_UNBLOCKED();
		return ret;
	}
	if (RIP_UNLIKELY(n == SYS_clone || n == SYS_clone3 || n == SYS_fork)) {
		long ret = real(n, a[0], a[1], a[2], a[3], a[4], a[5]);

		rip_pl_syscall_cloned(ret); /* a child no fork handler ran in: set it up */
		return ret;
	}
	if (RIP_UNLIKELY((n == SYS_prctl || n == SYS_seccomp) &&
			 rip_pl_sample_is_strict(n, a[0], a[1]))) {
		/* As the prctl wrapper (sample.c): no sample in seccomp strict mode. */
		rip_pl_sample_strict_begin();
		long ret = real(n, a[0], a[1], a[2], a[3], a[4], a[5]);

		rip_pl_sample_strict_end(ret);
		return ret;
	}
	if (RIP_UNLIKELY(n == SYS_unshare || n == SYS_setns)) {
		/* As the unshare and setns wrappers (watch.c): no thread of ours in the way. */
		bool stopped = rip_pl_watch_pause(n == SYS_setns, n == SYS_setns ? a[1] : a[0]);
		long ret = real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
		int e = errno;

		if (stopped)
			rip_pl_watch_resume();
		errno = e;
		return ret;
	}
	if (RIP_UNLIKELY(n == SYS_mprotect || n == RIP_PL_SYS_PKEY_MPROTECT)) {
		/* As the mprotect wrappers (thread.c): walks stay out of a stack's holes. */
		int prot = n == SYS_mprotect ? (int)a[2] : rip_pl_pkey_prot((int)a[2], a[3]);

		rip_pl_stack_prot((uintptr_t)a[0], (size_t)a[1], prot, false);
		long ret = real(n, a[0], a[1], a[2], a[3], a[4], a[5]);

		if (!ret) {
			int e = errno;

			rip_pl_stack_prot((uintptr_t)a[0], (size_t)a[1], prot, true);
			/* as the wrappers: what it makes accessible of a reservation */
			if (!rip_pl_from_tracer(__builtin_return_address(0)))
				rip_pl_mprotect_record(__builtin_return_address(0), (void *)a[0],
						       (size_t)a[1], (int)a[2]);
			errno = e;
		}
		return ret;
	}
	/* An unmapping, a fixed mapping over the stack: a hole until a wrapper says otherwise. */
	if (RIP_UNLIKELY(n == SYS_munmap))
		rip_pl_stack_prot((uintptr_t)a[0], (size_t)a[1], PROT_NONE, false);
#if __SIZEOF_LONG__ == 8
	else if (RIP_UNLIKELY(n == SYS_mmap && (a[3] & MAP_FIXED)))
		rip_pl_stack_prot((uintptr_t)a[0], (size_t)a[1], (int)a[2], false);
#endif
	rip_pl_syscall_sigs(n, a, &ks, &kp);
	if (RIP_UNLIKELY(rip_pl_sys_resource(n) != RIP_PL_SYS_OTHER) &&
	    !rip_pl_from_tracer(__builtin_return_address(0)))
		return rip_pl_syscall_resource(real, n, a);
	if (RIP_UNLIKELY(n == SYS_rt_sigpending)) {
		long ret = real(n, a[0], a[1], a[2], a[3], a[4], a[5]);

		if (!ret)
			rip_pl_sample_pending((void *)a[0], (unsigned long)a[1]);
		return ret;
	}
	if (!rip_pl_syscall_waits(n))
		return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
	RIP_PL_WAIT(RIP_WAIT_SYSCALL, (uint64_t)n, true);
	long ret = real(n, a[0], a[1], a[2], a[3], a[4], a[5]);

	RIP_PL_UNBLOCKED();
	return ret;
}
