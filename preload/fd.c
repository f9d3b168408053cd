// SPDX-License-Identifier: Apache-2.0
/*
 * preload/fd.c - the file-descriptor hooks of librip-preload.so: every libc
 * call that creates a descriptor records fd:open, every call that releases
 * one records fd:close (rip/resource.h), with the caller's backtrace;
 * close_range and closefrom record one fd:close_range for their range.
 *
 * Rules every hook here follows:
 *  - only while RIP_CAT_FD is enabled and the thread is not inside a hook
 *    (rip_pl_enter); otherwise the hook only forwards;
 *  - a failed call records nothing; errno is what the real call left;
 *  - acquisitions are recorded after the real call, releases before it
 *    (so that a thread handed the same number records after us), and a
 *    release is recorded only for a descriptor that is open (one
 *    fcntl(F_GETFD) probe while tracing: closing a closed fd records
 *    nothing);
 *  - flags is in open(2) terms whatever the call: the open flags for the
 *    open family, O_RDONLY/O_WRONLY for the two ends of a pipe, the access
 *    mode of a stdio mode string, and O_CLOEXEC / O_NONBLOCK translated
 *    from SOCK_*, EFD_*, TFD_*, MFD_CLOEXEC, MSG_CMSG_CLOEXEC...;
 *  - path is the path as passed (openat: relative to its dirfd), or
 *    "memfd:NAME", or empty when the call has none.
 *
 * Streams and directories record their underlying descriptor (fileno,
 * dirfd).  fdopen and fdopendir record nothing (the descriptor is open
 * already); the stream's fclose or closedir records the close.
 * memfd_create records an fd:open (kind MEMFD) and, since a memfd is
 * shared memory, a shm:create (kind RIP_SHM_MEMFD) as well; shm_open does
 * the same from shm.c.
 *
 * The same calls made through syscall(2) record the same events (wait.c's
 * hook calls rip_pl_fd_sys_before and _after, at the end of this file):
 * each wrapper's recording step is a function (fd_rec_*, or fd_opened with
 * the wrapper's kind) that both use.
 */
#undef _FORTIFY_SOURCE /* we define open() & co. ourselves */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common.h"
#include "wait.h"

/* Fortified entry points: _FORTIFY_SOURCE builds call these instead of open(). */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

/* ---- recording ------------------------------------------------------------------------------- */

/*
 * These are always inlined, so that the backtrace starts at the hooked
 * call's caller.  Each takes fr, where its backtrace comes from
 * (RIP_PL_BT): NULL in an exported hook (rip_pl_backtrace_id skips exactly
 * its caller), the frame of rip_pl_fd_sys_before or _after when syscall(2)
 * made the call (wait.c's hook calls those directly).  A call's recording
 * step is one function both paths use (fd_rec_*), so that syscall(SYS_x)
 * records what x's wrapper does.
 */
#define FD_INLINE static inline __attribute__((always_inline))

/*
 * Should this call's descriptors be recorded: rip_pl_enter's answer, and
 * never in a vfork child.  The child runs on its parent's thread and
 * writes to its parent's ring, but its descriptor table is its own copy:
 * what it opens, dup2s and closes between vfork and exec (CPython's
 * subprocess, a shell's redirections) is not the parent's, and recorded as
 * the parent's it hid the parent's real leaks behind the child's dup2s.
 * (Its allocations and mappings are the parent's own memory: recorded.)
 */
FD_INLINE bool fd_enter(void)
{
	if (RIP_UNLIKELY(rip_pl_self.vfork) && rip_pl_vfork_child())
		return false;
	return rip_pl_enter(RIP_CAT_FD);
}

/* One new descriptor (fd < 0: the call failed, nothing is recorded). */
FD_INLINE void fd_opened(const void *fr, int fd, uint32_t kind, int flags, const char *path)
{
	if (fd >= 0 && fd_enter()) {
		int err = errno;

		rip_pl_fd_open(fd, RIP_PL_BT(fr), kind, flags, path);
		errno = err;
		rip_pl_leave();
	}
}

/* Is fd an open descriptor?  errno unchanged. */
static bool fd_is_open(int fd)
{
	static int (*real)(int, int, ...);
	int err = errno;
	bool open;

	if (fd < 0 || !RIP_PL_REAL(real, "fcntl"))
		return false;
	open = real(fd, F_GETFD) >= 0;
	errno = err;
	return open;
}

/* fd is about to be released by the real call: record it if it is open. */
FD_INLINE void fd_closing(const void *fr, int fd, uint32_t kind)
{
	if (fd >= 0 && fd_enter()) {
		if (fd_is_open(fd)) {
			int err = errno;

			rip_pl_fd_close(fd, RIP_PL_BT(fr), kind);
			errno = err;
		}
		rip_pl_leave();
	}
}

/* SOCK_CLOEXEC and friends in open(2) terms. */
static int fd_cloexec_nonblock(int flags, int cloexec, int nonblock)
{
	return ((flags & cloexec) ? O_CLOEXEC : 0) | ((flags & nonblock) ? O_NONBLOCK : 0);
}

/* The open(2) flags a stdio mode string stands for ("r", "w+e", "ax", ...). */
static int fd_stdio_flags(const char *mode)
{
	int flags, plus = 0, extra = 0;

	if (!mode)
		return 0;
	switch (mode[0]) {
	case 'r':
		flags = O_RDONLY;
		break;
	case 'w':
		flags = O_WRONLY | O_CREAT | O_TRUNC;
		break;
	case 'a':
		flags = O_WRONLY | O_CREAT | O_APPEND;
		break;
	default:
		return 0;
	}
	/* glibc reads at most 6 more characters, and stops at ",ccs=". */
	for (int i = 1; i < 7 && mode[i] && mode[i] != ','; i++) {
		if (mode[i] == '+')
			plus = 1;
		else if (mode[i] == 'e')
			extra |= O_CLOEXEC;
		else if (mode[i] == 'x')
			extra |= O_EXCL;
	}
	if (plus)
		flags = (flags & ~O_ACCMODE) | O_RDWR;
	return flags | extra;
}

/* Does open(2) read a mode argument with these flags? */
static bool fd_has_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* ---- open, openat, creat --------------------------------------------------------------------- */

#define FD_OPEN_HOOK(NAME)                                                                         \
	RIP_PL_EXPORT int NAME(const char *path, int flags, ...)                                   \
	{                                                                                          \
		static int (*real)(const char *, int, ...);                                        \
		mode_t mode = 0;                                                                   \
		int fd;                                                                            \
                                                                                                   \
		if (fd_has_mode(flags)) {                                                          \
			va_list ap;                                                                \
                                                                                                   \
			va_start(ap, flags);                                                       \
			mode = va_arg(ap, mode_t);                                                 \
			va_end(ap);                                                                \
		}                                                                                  \
		if (!RIP_PL_REAL(real, #NAME))                                                     \
			return rip_pl_enosys();                                                    \
		fd = real(path, flags, mode);                                                      \
		fd_opened(NULL, fd, RIP_FD_OPEN, flags, path);                                           \
		return fd;                                                                         \
	}

FD_OPEN_HOOK(open)
FD_OPEN_HOOK(open64)

#define FD_OPENAT_HOOK(NAME)                                                                       \
	RIP_PL_EXPORT int NAME(int dirfd, const char *path, int flags, ...)                        \
	{                                                                                          \
		static int (*real)(int, const char *, int, ...);                                   \
		mode_t mode = 0;                                                                   \
		int fd;                                                                            \
                                                                                                   \
		if (fd_has_mode(flags)) {                                                          \
			va_list ap;                                                                \
                                                                                                   \
			va_start(ap, flags);                                                       \
			mode = va_arg(ap, mode_t);                                                 \
			va_end(ap);                                                                \
		}                                                                                  \
		if (!RIP_PL_REAL(real, #NAME))                                                     \
			return rip_pl_enosys();                                                    \
		fd = real(dirfd, path, flags, mode);                                               \
		fd_opened(NULL, fd, RIP_FD_OPENAT, flags, path);                                         \
		return fd;                                                                         \
	}

FD_OPENAT_HOOK(openat)
FD_OPENAT_HOOK(openat64)

/*
 * The calls with fixed arguments: NAME PARAMS calls the real one with ARGS,
 * and what it opened is an open of kind KIND with flags FLAGS of PATH.
 */
#define FD_OPENED_HOOK(NAME, PARAMS, ARGS, KIND, FLAGS, PATH)                                      \
	RIP_PL_EXPORT int NAME PARAMS                                                              \
	{                                                                                          \
		static int(*real) PARAMS;                                                          \
		int fd;                                                                            \
                                                                                                   \
		if (!RIP_PL_REAL(real, #NAME))                                                     \
			return rip_pl_enosys();                                                    \
		fd = real ARGS;                                                                    \
		fd_opened(NULL, fd, KIND, FLAGS, PATH);                                            \
		return fd;                                                                         \
	}

/* The fortified variants take no mode (they abort on O_CREAT without one). */
FD_OPENED_HOOK(__open_2, (const char *path, int flags), (path, flags), RIP_FD_OPEN, flags, path)
FD_OPENED_HOOK(__open64_2, (const char *path, int flags), (path, flags), RIP_FD_OPEN, flags, path)
FD_OPENED_HOOK(__openat_2, (int dirfd, const char *path, int flags), (dirfd, path, flags),
	       RIP_FD_OPENAT, flags, path)
FD_OPENED_HOOK(__openat64_2, (int dirfd, const char *path, int flags), (dirfd, path, flags),
	       RIP_FD_OPENAT, flags, path)

/* A pseudo-terminal's master: glibc opens /dev/ptmx inside, out of our hooks' sight. */
FD_OPENED_HOOK(posix_openpt, (int flags), (flags), RIP_FD_OPEN, flags, "/dev/ptmx")
FD_OPENED_HOOK(getpt, (void), (), RIP_FD_OPEN, O_RDWR | O_NOCTTY, "/dev/ptmx")

#define FD_CREAT_FLAGS (O_WRONLY | O_CREAT | O_TRUNC)
FD_OPENED_HOOK(creat, (const char *path, mode_t mode), (path, mode), RIP_FD_CREAT, FD_CREAT_FLAGS,
	       path)
FD_OPENED_HOOK(creat64, (const char *path, mode_t mode), (path, mode), RIP_FD_CREAT, FD_CREAT_FLAGS,
	       path)

/*
 * mkstemp and its variants open the file they create with glibc's internal
 * open, which no hook sees: each is an open (O_RDWR | O_CREAT | O_EXCL and
 * the caller's flags) of the name the call filled in.
 */
#define FD_MKSTEMP_HOOK(NAME, PARAMS, ARGS, FLAGS)                                                 \
	FD_OPENED_HOOK(NAME, PARAMS, ARGS, RIP_FD_OPEN, O_RDWR | O_CREAT | O_EXCL | (FLAGS), tmpl)

FD_MKSTEMP_HOOK(mkstemp, (char *tmpl), (tmpl), 0)
FD_MKSTEMP_HOOK(mkstemp64, (char *tmpl), (tmpl), 0)
FD_MKSTEMP_HOOK(mkostemp, (char *tmpl, int flags), (tmpl, flags), flags)
FD_MKSTEMP_HOOK(mkostemp64, (char *tmpl, int flags), (tmpl, flags), flags)
FD_MKSTEMP_HOOK(mkstemps, (char *tmpl, int suffixlen), (tmpl, suffixlen), 0)
FD_MKSTEMP_HOOK(mkstemps64, (char *tmpl, int suffixlen), (tmpl, suffixlen), 0)
FD_MKSTEMP_HOOK(mkostemps, (char *tmpl, int suffixlen, int flags), (tmpl, suffixlen, flags), flags)
FD_MKSTEMP_HOOK(mkostemps64, (char *tmpl, int suffixlen, int flags), (tmpl, suffixlen, flags),
		flags)

/* ---- close, dup, dup2, dup3, fcntl ----------------------------------------------------------- */

RIP_PL_EXPORT int close(int fd)
{
	static int (*real)(int);

	if (!RIP_PL_REAL(real, "close"))
		return rip_pl_enosys();
	fd_closing(NULL, fd, RIP_FD_CLOSE);
	return real(fd);
}

RIP_PL_EXPORT int dup(int oldfd)
{
	static int (*real)(int);
	int fd;

	if (!RIP_PL_REAL(real, "dup"))
		return rip_pl_enosys();
	fd = real(oldfd);
	fd_opened(NULL, fd, RIP_FD_DUP, 0, NULL);
	return fd;
}

/* Would dup2/dup3 onto newfd replace an open descriptor (recorded as REPLACED)? */
FD_INLINE bool fd_replacing(int oldfd, int newfd)
{
	bool open = false;

	if (oldfd != newfd && fd_enter()) {
		open = fd_is_open(newfd);
		rip_pl_leave();
	}
	return open;
}

/* dup2/dup3 succeeded: the implicit close of the old newfd, then the new one. */
FD_INLINE void fd_duped(const void *fr, int fd, bool replaced, uint32_t kind, int flags)
{
	if (fd >= 0 && fd_enter()) {
		int err = errno;
		uint32_t bt = RIP_PL_BT(fr);

		if (replaced)
			rip_pl_fd_close(fd, bt, RIP_FD_REPLACED);
		rip_pl_fd_open(fd, bt, kind, flags, NULL);
		errno = err;
		rip_pl_leave();
	}
}

/* dup2(fd, fd) only checks fd: nothing changes hands. */
FD_INLINE void fd_rec_dup2(const void *fr, int fd, bool replaced, int oldfd, int newfd)
{
	if (oldfd != newfd)
		fd_duped(fr, fd, replaced, RIP_FD_DUP2, 0);
}

FD_INLINE void fd_rec_dup3(const void *fr, int fd, bool replaced, int flags)
{
	fd_duped(fr, fd, replaced, RIP_FD_DUP3, flags & O_CLOEXEC);
}

RIP_PL_EXPORT int dup2(int oldfd, int newfd)
{
	static int (*real)(int, int);
	bool replaced;
	int fd;

	if (!RIP_PL_REAL(real, "dup2"))
		return rip_pl_enosys();
	replaced = fd_replacing(oldfd, newfd);
	fd = real(oldfd, newfd);
	fd_rec_dup2(NULL, fd, replaced, oldfd, newfd);
	return fd;
}

RIP_PL_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	static int (*real)(int, int, int);
	bool replaced;
	int fd;

	if (!RIP_PL_REAL(real, "dup3"))
		return rip_pl_enosys();
	replaced = fd_replacing(oldfd, newfd);
	fd = real(oldfd, newfd, flags);
	fd_rec_dup3(NULL, fd, replaced, flags);
	return fd;
}

FD_INLINE void fd_rec_dupfd(const void *fr, int fd, int cmd)
{
	fd_opened(fr, fd, RIP_FD_FCNTL_DUPFD, cmd == F_DUPFD_CLOEXEC ? O_CLOEXEC : 0, NULL);
}

/*
 * fcntl's third argument is an int, a pointer, or absent, by command;
 * each is forwarded as what it is (unknown commands as a pointer-sized
 * value, as glibc itself reads them).
 */
FD_INLINE int fd_fcntl(int (*real)(int, int, ...), int fd, int cmd, va_list ap)
{
	int ret;

	switch (cmd) {
	case F_GETFD:
	case F_GETFL:
	case F_GETOWN:
	case F_GETSIG:
	case F_GETLEASE:
#ifdef F_GETPIPE_SZ
	case F_GETPIPE_SZ:
#endif
#ifdef F_GET_SEALS
	case F_GET_SEALS:
#endif
		return real(fd, cmd);
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		ret = real(fd, cmd, va_arg(ap, int));
		fd_rec_dupfd(NULL, ret, cmd);
		return ret;
	case F_SETFD:
	case F_SETFL:
	case F_SETOWN:
	case F_SETSIG:
	case F_SETLEASE:
	case F_NOTIFY:
#ifdef F_SETPIPE_SZ
	case F_SETPIPE_SZ:
#endif
#ifdef F_ADD_SEALS
	case F_ADD_SEALS:
#endif
		return real(fd, cmd, va_arg(ap, int));
	default:
		/* struct flock *, struct f_owner_ex *, uint64_t * (F_*_RW_HINT), ... */
		return real(fd, cmd, va_arg(ap, void *));
	}
}

#define FD_FCNTL_HOOK(NAME)                                                                        \
	RIP_PL_EXPORT int NAME(int fd, int cmd, ...)                                               \
	{                                                                                          \
		static int (*real)(int, int, ...);                                                 \
		va_list ap;                                                                        \
		int ret;                                                                           \
                                                                                                   \
		if (!RIP_PL_REAL(real, #NAME))                                                     \
			return rip_pl_enosys();                                                    \
		va_start(ap, cmd);                                                                 \
		ret = fd_fcntl(real, fd, cmd, ap);                                                 \
		va_end(ap);                                                                        \
		return ret;                                                                        \
	}

FD_FCNTL_HOOK(fcntl)
FD_FCNTL_HOOK(fcntl64) /* what -D_FILE_OFFSET_BITS=64 builds call */

/* ---- pipes and sockets ----------------------------------------------------------------------- */

/* Two new descriptors from one call (pipe: read end O_RDONLY, write end O_WRONLY). */
FD_INLINE void fd_opened2(const void *fr, int ret, const int fds[2], uint32_t kind, int flags0,
			  int flags1)
{
	if (ret == 0 && fd_enter()) {
		int err = errno;
		uint32_t bt = RIP_PL_BT(fr);

		rip_pl_fd_open(fds[0], bt, kind, flags0, NULL);
		rip_pl_fd_open(fds[1], bt, kind, flags1, NULL);
		errno = err;
		rip_pl_leave();
	}
}

/* pipe is pipe2 with no flags. */
FD_INLINE void fd_rec_pipe(const void *fr, int ret, const int fds[2], int flags)
{
	fd_opened2(fr, ret, fds, RIP_FD_PIPE, O_RDONLY | flags, O_WRONLY | flags);
}

FD_INLINE void fd_rec_socket(const void *fr, int fd, int type)
{
	fd_opened(fr, fd, RIP_FD_SOCKET, fd_cloexec_nonblock(type, SOCK_CLOEXEC, SOCK_NONBLOCK),
		  NULL);
}

FD_INLINE void fd_rec_socketpair(const void *fr, int ret, const int fds[2], int type)
{
	int flags = fd_cloexec_nonblock(type, SOCK_CLOEXEC, SOCK_NONBLOCK);

	fd_opened2(fr, ret, fds, RIP_FD_SOCKETPAIR, flags, flags);
}

/* accept is accept4 with no flags. */
FD_INLINE void fd_rec_accept(const void *fr, int fd, int flags)
{
	fd_opened(fr, fd, RIP_FD_ACCEPT, fd_cloexec_nonblock(flags, SOCK_CLOEXEC, SOCK_NONBLOCK),
		  NULL);
}

/*
 * libunwind makes a pipe the first time it unwinds, and again whenever a
 * read of it fails, to check that memory is readable (it writes a byte of
 * it there).  Made inside our walk of a stack (backtrace.c's in_unw), it
 * took the program's lowest free descriptors, and every descriptor the
 * program opened after had another number than untraced, for its whole
 * life.  So it moves high: to the lowest free from seven eighths of the
 * program's limit (of 1024 at most, so that a large limit does not grow
 * the descriptor table), close-on-exec as libunwind asks; where it cannot,
 * it stays.  Raw system calls: no hook sees them.  The pipe is still there
 * for /proc/PID/fd and for a program that closes every descriptor (then
 * libunwind's next check fails and it makes the pipe again, high again).
 */
static void fd_unw_high(int fds[2])
{
	struct rlimit rl;
	long lim = 1024, h;
	int saved = errno;

	if (!syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) && rl.rlim_cur < (rlim_t)lim)
		lim = (long)rl.rlim_cur;
	for (int i = 0; i < 2; i++) {
		h = syscall(SYS_fcntl, fds[i], F_DUPFD_CLOEXEC, lim - lim / 8);
		if (h > fds[i]) {
			syscall(SYS_close, fds[i]);
			fds[i] = (int)h;
		} else if (h >= 0) {
			syscall(SYS_close, h);
		}
	}
	errno = saved;
}

RIP_PL_EXPORT int pipe(int fds[2])
{
	static int (*real)(int *);
	int ret;

	if (!RIP_PL_REAL(real, "pipe"))
		return rip_pl_enosys();
	ret = real(fds);
	if (RIP_UNLIKELY(rip_pl_self.in_unw) && !ret)
		fd_unw_high(fds);
	fd_rec_pipe(NULL, ret, fds, 0);
	return ret;
}

RIP_PL_EXPORT int pipe2(int fds[2], int flags)
{
	static int (*real)(int *, int);
	int ret;

	if (!RIP_PL_REAL(real, "pipe2"))
		return rip_pl_enosys();
	ret = real(fds, flags);
	if (RIP_UNLIKELY(rip_pl_self.in_unw) && !ret)
		fd_unw_high(fds);
	fd_rec_pipe(NULL, ret, fds, flags);
	return ret;
}

RIP_PL_EXPORT int socket(int domain, int type, int protocol)
{
	static int (*real)(int, int, int);
	int fd;

	if (!RIP_PL_REAL(real, "socket"))
		return rip_pl_enosys();
	fd = real(domain, type, protocol);
	fd_rec_socket(NULL, fd, type);
	return fd;
}

RIP_PL_EXPORT int socketpair(int domain, int type, int protocol, int fds[2])
{
	static int (*real)(int, int, int, int *);
	int ret;

	if (!RIP_PL_REAL(real, "socketpair"))
		return rip_pl_enosys();
	ret = real(domain, type, protocol, fds);
	fd_rec_socketpair(NULL, ret, fds, type);
	return ret;
}

/* glibc declares accept with a transparent union for the address under _GNU_SOURCE. */
RIP_PL_EXPORT int accept(int sockfd, __SOCKADDR_ARG addr, socklen_t *restrict len)
{
	static int (*real)(int, __SOCKADDR_ARG, socklen_t *restrict);
	int fd;

	if (!RIP_PL_REAL(real, "accept"))
		return rip_pl_enosys();
	RIP_PL_WAIT(RIP_WAIT_ACCEPT, sockfd, true); /* wait.h: until the hook returns */
	fd = real(sockfd, addr, len);
	RIP_PL_UNBLOCKED();
	fd_rec_accept(NULL, fd, 0);
	return fd;
}

RIP_PL_EXPORT int accept4(int sockfd, __SOCKADDR_ARG addr, socklen_t *restrict len, int flags)
{
	static int (*real)(int, __SOCKADDR_ARG, socklen_t *restrict, int);
	int fd;

	if (!RIP_PL_REAL(real, "accept4"))
		return rip_pl_enosys();
	RIP_PL_WAIT(RIP_WAIT_ACCEPT, sockfd, true);
	fd = real(sockfd, addr, len, flags);
	RIP_PL_UNBLOCKED();
	fd_rec_accept(NULL, fd, flags);
	return fd;
}

/* Descriptors received in SCM_RIGHTS control messages: one fd:open each. */
static void fd_scm_rights(const struct msghdr *msg, uint32_t bt, int flags)
{
	struct cmsghdr *c;

	if (!msg || !msg->msg_control || msg->msg_controllen < sizeof(struct cmsghdr))
		return;
	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR((struct msghdr *)msg, c)) {
		const unsigned char *data = CMSG_DATA(c);
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, data + i * sizeof(int), sizeof(fd));
			rip_pl_fd_open(fd, bt, RIP_FD_SCM_RIGHTS, flags, NULL);
		}
	}
}

/* Could this message carry descriptors?  (Cheap test before the guard.) */
static bool fd_has_control(const struct msghdr *msg)
{
	return msg && msg->msg_control && msg->msg_controllen >= CMSG_LEN(sizeof(int));
}

FD_INLINE void fd_rec_recvmsg(const void *fr, ssize_t ret, const struct msghdr *msg, int flags)
{
	if (ret >= 0 && fd_has_control(msg) && fd_enter()) {
		int err = errno;

		fd_scm_rights(msg, RIP_PL_BT(fr), (flags & MSG_CMSG_CLOEXEC) ? O_CLOEXEC : 0);
		errno = err;
		rip_pl_leave();
	}
}

FD_INLINE void fd_rec_recvmmsg(const void *fr, int ret, const struct mmsghdr *vec, int flags)
{
	if (ret > 0 && fd_enter()) {
		int err = errno;
		uint32_t bt = 0;

		for (int i = 0; i < ret; i++) {
			if (!fd_has_control(&vec[i].msg_hdr))
				continue;
			if (!bt)
				bt = RIP_PL_BT(fr);
			fd_scm_rights(&vec[i].msg_hdr, bt,
				      (flags & MSG_CMSG_CLOEXEC) ? O_CLOEXEC : 0);
		}
		errno = err;
		rip_pl_leave();
	}
}

RIP_PL_EXPORT ssize_t recvmsg(int sockfd, struct msghdr *msg, int flags)
{
	static ssize_t (*real)(int, struct msghdr *, int);
	ssize_t ret;

	if (!RIP_PL_REAL(real, "recvmsg"))
		return rip_pl_enosys();
	RIP_PL_WAIT(RIP_WAIT_RECV, sockfd, true);
	ret = real(sockfd, msg, flags);
	RIP_PL_UNBLOCKED();
	fd_rec_recvmsg(NULL, ret, msg, flags);
	return ret;
}

RIP_PL_EXPORT int recvmmsg(int sockfd, struct mmsghdr *vec, unsigned int vlen, int flags,
			   struct timespec *timeout)
{
	static int (*real)(int, struct mmsghdr *, unsigned int, int, struct timespec *);
	int ret;

	if (!RIP_PL_REAL(real, "recvmmsg"))
		return rip_pl_enosys();
	RIP_PL_WAIT(RIP_WAIT_RECV, sockfd, true);
	ret = real(sockfd, vec, vlen, flags, timeout);
	RIP_PL_UNBLOCKED();
	fd_rec_recvmmsg(NULL, ret, vec, flags);
	return ret;
}

/* ---- event, timer, signal, epoll, inotify and memory descriptors ----------------------------- */

FD_INLINE void fd_rec_eventfd(const void *fr, int fd, int flags)
{
	fd_opened(fr, fd, RIP_FD_EVENTFD, fd_cloexec_nonblock(flags, EFD_CLOEXEC, EFD_NONBLOCK), NULL);
}

FD_INLINE void fd_rec_timerfd(const void *fr, int fd, int flags)
{
	fd_opened(fr, fd, RIP_FD_TIMERFD, fd_cloexec_nonblock(flags, TFD_CLOEXEC, TFD_NONBLOCK), NULL);
}

/* With an existing signalfd (fd != -1) it only changes the mask: nothing new. */
FD_INLINE void fd_rec_signalfd(const void *fr, int ret, int fd, int flags)
{
	if (fd == -1)
		fd_opened(fr, ret, RIP_FD_SIGNALFD,
			  fd_cloexec_nonblock(flags, SFD_CLOEXEC, SFD_NONBLOCK), NULL);
}

/* epoll_create is epoll_create1 with no flags. */
FD_INLINE void fd_rec_epoll(const void *fr, int fd, int flags)
{
	fd_opened(fr, fd, RIP_FD_EPOLL, fd_cloexec_nonblock(flags, EPOLL_CLOEXEC, 0), NULL);
}

/* inotify_init is inotify_init1 with no flags. */
FD_INLINE void fd_rec_inotify(const void *fr, int fd, int flags)
{
	fd_opened(fr, fd, RIP_FD_INOTIFY, fd_cloexec_nonblock(flags, IN_CLOEXEC, IN_NONBLOCK), NULL);
}

RIP_PL_EXPORT int eventfd(unsigned int initval, int flags)
{
	static int (*real)(unsigned int, int);
	int fd;

	if (!RIP_PL_REAL(real, "eventfd"))
		return rip_pl_enosys();
	fd = real(initval, flags);
	fd_rec_eventfd(NULL, fd, flags);
	return fd;
}

RIP_PL_EXPORT int timerfd_create(int clockid, int flags)
{
	static int (*real)(int, int);
	int fd;

	if (!RIP_PL_REAL(real, "timerfd_create"))
		return rip_pl_enosys();
	fd = real(clockid, flags);
	fd_rec_timerfd(NULL, fd, flags);
	return fd;
}

RIP_PL_EXPORT int signalfd(int fd, const sigset_t *mask, int flags)
{
	static int (*real)(int, const sigset_t *, int);
	const sigset_t *p = mask;
	sigset_t m;
	int ret;

	if (!RIP_PL_REAL(real, "signalfd"))
		return rip_pl_enosys();
	/* Declared nonnull, but a bad mask is the kernel's EFAULT to give, not our fault. */
	__asm__("" : "+r"(p));
	/* Never the CPU sampler's signal: it stays pending, unread (sample.c). */
	ret = real(fd, rip_pl_sample_filter(p, &m), flags);
	fd_rec_signalfd(NULL, ret, fd, flags);
	return ret;
}

RIP_PL_EXPORT int epoll_create(int size)
{
	static int (*real)(int);
	int fd;

	if (!RIP_PL_REAL(real, "epoll_create"))
		return rip_pl_enosys();
	fd = real(size);
	fd_rec_epoll(NULL, fd, 0);
	return fd;
}

RIP_PL_EXPORT int epoll_create1(int flags)
{
	static int (*real)(int);
	int fd;

	if (!RIP_PL_REAL(real, "epoll_create1"))
		return rip_pl_enosys();
	fd = real(flags);
	fd_rec_epoll(NULL, fd, flags);
	return fd;
}

RIP_PL_EXPORT int inotify_init(void)
{
	static int (*real)(void);
	int fd;

	if (!RIP_PL_REAL(real, "inotify_init"))
		return rip_pl_enosys();
	fd = real();
	fd_rec_inotify(NULL, fd, 0);
	return fd;
}

RIP_PL_EXPORT int inotify_init1(int flags)
{
	static int (*real)(int);
	int fd;

	if (!RIP_PL_REAL(real, "inotify_init1"))
		return rip_pl_enosys();
	fd = real(flags);
	fd_rec_inotify(NULL, fd, flags);
	return fd;
}

/*
 * memfd_create: a descriptor and a shared-memory object at once, so both
 * an fd:open (kind MEMFD, path "memfd:NAME" as /proc/self/fd shows it)
 * and a shm:create (kind RIP_SHM_MEMFD, id = the fd, size 0: ftruncate
 * sizes it later), each under its own category.
 */
FD_INLINE void fd_rec_memfd(const void *fr, int fd, const char *name, unsigned int flags)
{
	bool fd_on, shm_on;

	if (fd < 0 || (RIP_UNLIKELY(rip_pl_self.vfork) && rip_pl_vfork_child()))
		return; /* a vfork child's (fd_enter) */
	fd_on = rip_category_enabled(RIP_CAT_FD);
	shm_on = rip_category_enabled(RIP_CAT_SHM);
	if ((fd_on || shm_on) && rip_pl_enter(fd_on ? RIP_CAT_FD : RIP_CAT_SHM)) {
		int err = errno;
		uint32_t bt = RIP_PL_BT(fr);
		char path[RIP_STRING_MAX];
		size_t n = name ? strnlen(name, sizeof(path) - 7) : 0;

		memcpy(path, "memfd:", 6);
		if (n)
			memcpy(path + 6, name, n);
		path[6 + n] = 0;
		rip_pl_fd_open(fd, bt, RIP_FD_MEMFD,
			       O_RDWR | ((flags & MFD_CLOEXEC) ? O_CLOEXEC : 0), path);
		rip_pl_shm_create(fd, 0, bt, RIP_SHM_MEMFD, name);
		errno = err;
		rip_pl_leave();
	}
}

RIP_PL_EXPORT int memfd_create(const char *name, unsigned int flags)
{
	static int (*real)(const char *, unsigned int);
	int fd;

	if (!RIP_PL_REAL(real, "memfd_create"))
		return rip_pl_enosys();
	fd = real(name, flags);
	fd_rec_memfd(NULL, fd, name, flags);
	return fd;
}

/* ---- close_range, closefrom, pidfd_open, pidfd_getfd ---------------------------------------- */

/* Declared here too: older headers lack them (glibc 2.34, 2.36). */
int close_range(unsigned int first, unsigned int last, int flags);
void closefrom(int lowfd);
int pidfd_open(pid_t pid, unsigned int flags);
int pidfd_getfd(int pidfd, int targetfd, unsigned int flags);

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1u << 1)
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1u << 2)
#endif
#ifndef PIDFD_NONBLOCK
#define PIDFD_NONBLOCK O_NONBLOCK
#endif

/*
 * The descriptors of [first, last] are about to be closed: one
 * fd:close_range, which readers expand against the descriptors they hold
 * open (the preload library keeps no table).  Recorded before the call,
 * as a release, and only when the call will close: not with
 * CLOSE_RANGE_CLOEXEC (it only marks them), nor with arguments the kernel
 * refuses.
 */
FD_INLINE void fd_closing_range(const void *fr, unsigned int first, unsigned int last,
				 uint32_t kind)
{
	if (fd_enter()) {
		int err = errno;

		rip_pl_fd_close_range(first, last, RIP_PL_BT(fr), kind);
		errno = err;
		rip_pl_leave();
	}
}

FD_INLINE void fd_rec_close_range(const void *fr, unsigned int first, unsigned int last,
				   unsigned int flags)
{
	if (first <= last && !(flags & ~(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)) &&
	    !(flags & CLOSE_RANGE_CLOEXEC))
		fd_closing_range(fr, first, last, RIP_FD_CLOSE_RANGE);
}

RIP_PL_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	static int (*real)(unsigned int, unsigned int, int);

	if (!RIP_PL_REAL(real, "close_range"))
		return rip_pl_enosys();
	fd_rec_close_range(NULL, first, last, (unsigned int)flags);
	return real(first, last, flags);
}

/* glibc's closefrom closes with its own close_range, never through the hook. */
RIP_PL_EXPORT void closefrom(int lowfd)
{
	static void (*real)(int);

	if (!RIP_PL_REAL(real, "closefrom"))
		return;
	fd_closing_range(NULL, lowfd < 0 ? 0u : (unsigned int)lowfd, ~0u, RIP_FD_CLOSEFROM);
	real(lowfd);
}

/* A pidfd is always close-on-exec. */
FD_INLINE void fd_rec_pidfd_open(const void *fr, int fd, unsigned int flags)
{
	fd_opened(fr, fd, RIP_FD_PIDFD_OPEN,
		  O_RDWR | O_CLOEXEC | ((flags & PIDFD_NONBLOCK) ? O_NONBLOCK : 0), NULL);
}

/* A copy of another process's descriptor, close-on-exec. */
FD_INLINE void fd_rec_pidfd_getfd(const void *fr, int fd)
{
	fd_opened(fr, fd, RIP_FD_PIDFD_GETFD, O_CLOEXEC, NULL);
}

RIP_PL_EXPORT int pidfd_open(pid_t pid, unsigned int flags)
{
	static int (*real)(pid_t, unsigned int);
	int fd;

	if (!RIP_PL_REAL(real, "pidfd_open"))
		return rip_pl_enosys();
	fd = real(pid, flags);
	fd_rec_pidfd_open(NULL, fd, flags);
	return fd;
}

RIP_PL_EXPORT int pidfd_getfd(int pidfd, int targetfd, unsigned int flags)
{
	static int (*real)(int, int, unsigned int);
	int fd;

	if (!RIP_PL_REAL(real, "pidfd_getfd"))
		return rip_pl_enosys();
	fd = real(pidfd, targetfd, flags);
	fd_rec_pidfd_getfd(NULL, fd);
	return fd;
}

/*
 * posix_spawn and posix_spawnp are not hooked: their file actions
 * (addclose, adddup2, addopen, addchdir, addclosefrom) run in the child,
 * between its clone and its exec, through glibc's internal calls, and
 * change only the child's table; the parent's descriptors are what they
 * were.  The child is a process of its own: traced after its exec when
 * rip follows it (--follow-exec), with the descriptors it inherited as
 * releases never seen made.
 */

/* ---- stdio streams and directories ----------------------------------------------------------- */

/* A stream's descriptor (-1 for fmemopen, fopencookie and the like). */
static int fd_of_stream(FILE *fp)
{
	return fp ? fileno_unlocked(fp) : -1;
}

#define FD_FOPEN_HOOK(NAME)                                                                        \
	RIP_PL_EXPORT FILE *NAME(const char *restrict path, const char *restrict mode)             \
	{                                                                                          \
		static FILE *(*real)(const char *restrict, const char *restrict);                  \
		FILE *fp;                                                                          \
                                                                                                   \
		if (!RIP_PL_REAL(real, #NAME)) {                                                   \
			rip_pl_enosys();                                                           \
			return NULL;                                                               \
		}                                                                                  \
		fp = real(path, mode);                                                             \
		if (fp)                                                                            \
			fd_opened(NULL, fd_of_stream(fp), RIP_FD_FOPEN, fd_stdio_flags(mode), path);     \
		return fp;                                                                         \
	}

FD_FOPEN_HOOK(fopen)
FD_FOPEN_HOOK(fopen64)

#define FD_TMPFILE_HOOK(NAME)                                                                      \
	RIP_PL_EXPORT FILE *NAME(void)                                                             \
	{                                                                                          \
		static FILE *(*real)(void);                                                        \
		FILE *fp;                                                                          \
                                                                                                   \
		if (!RIP_PL_REAL(real, #NAME)) {                                                   \
			rip_pl_enosys();                                                           \
			return NULL;                                                               \
		}                                                                                  \
		fp = real();                                                                       \
		if (fp)                                                                            \
			fd_opened(NULL, fd_of_stream(fp), RIP_FD_FOPEN, O_RDWR | O_CREAT | O_EXCL,       \
				  NULL);                                                           \
		return fp;                                                                         \
	}

FD_TMPFILE_HOOK(tmpfile)
FD_TMPFILE_HOOK(tmpfile64)

/*
 * fdopen and fdopendir are not hooked: they make a stream or a directory
 * of a descriptor that is already open (its fd:open was recorded where it
 * was made, or it was inherited), so they record nothing.  The stream's
 * fclose or closedir closes the descriptor: that is recorded.
 */

/*
 * freopen closes the stream's descriptor whether or not it then manages
 * to open the new file: the close is recorded first, the open on success.
 */
#define FD_FREOPEN_HOOK(NAME)                                                                      \
	RIP_PL_EXPORT FILE *NAME(const char *restrict path, const char *restrict mode,             \
				 FILE *restrict stream)                                            \
	{                                                                                          \
		static FILE *(*real)(const char *restrict, const char *restrict, FILE *restrict);  \
		FILE *fp;                                                                          \
                                                                                                   \
		if (!RIP_PL_REAL(real, #NAME)) {                                                   \
			rip_pl_enosys();                                                           \
			return NULL;                                                               \
		}                                                                                  \
		fd_closing(NULL, fd_of_stream(stream), RIP_FD_FREOPEN);                                  \
		fp = real(path, mode, stream);                                                     \
		if (fp)                                                                            \
			fd_opened(NULL, fd_of_stream(fp), RIP_FD_FREOPEN, fd_stdio_flags(mode), path);   \
		return fp;                                                                         \
	}

FD_FREOPEN_HOOK(freopen)
FD_FREOPEN_HOOK(freopen64)

/* fclose releases the descriptor even when it fails: recorded before, as close. */
RIP_PL_EXPORT int fclose(FILE *fp)
{
	static int (*real)(FILE *);

	if (!RIP_PL_REAL(real, "fclose"))
		return rip_pl_enosys();
	fd_closing(NULL, fd_of_stream(fp), RIP_FD_FCLOSE);
	return real(fp);
}

RIP_PL_EXPORT DIR *opendir(const char *path)
{
	static DIR *(*real)(const char *);
	DIR *d;

	if (!RIP_PL_REAL(real, "opendir")) {
		rip_pl_enosys();
		return NULL;
	}
	d = real(path);
	if (d)
		fd_opened(NULL, dirfd(d), RIP_FD_OPENDIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC, path);
	return d;
}

RIP_PL_EXPORT int closedir(DIR *d)
{
	static int (*real)(DIR *);

	DIR *dp = d;

	if (!RIP_PL_REAL(real, "closedir"))
		return rip_pl_enosys();
	/* glibc declares d nonnull yet returns EINVAL for NULL: keep the test. */
	__asm__("" : "+r"(dp));
	fd_closing(NULL, dp ? dirfd(dp) : -1, RIP_FD_CLOSEDIR);
	return real(d);
}

/* ---- syscall(2) ------------------------------------------------------------------------------ */

/*
 * What a call through syscall(2) records (wait.c's hook, for the numbers
 * rip_pl_sys_resource calls RIP_PL_SYS_FD): the step of the call's
 * wrapper above, with the wrapper's kind and flags, and the backtrace of
 * syscall()'s caller.  Calls that glibc has no wrapper for, or that
 * nothing hooks (openat2, io_uring_setup, userfaultfd, perf_event_open,
 * fanotify_init), are seen here only, each with a kind of its own; their
 * descriptors are O_RDWR (fanotify's: its event_f_flags are for the
 * descriptors of its events) and close-on-exec or nonblocking as their
 * flags say.
 *
 * Both are called directly from syscall(), never inlined (their own frame
 * is where the backtrace starts, RIP_PL_BT) nor tail-called into (each
 * records before it returns).  _before: the releases, before the real
 * call (close, close_range), and dup2/dup3's probe of the descriptor they
 * replace (returned, for _after).  _after: the acquisitions, after the
 * call, with ret as syscall() returns it (-1 and errno on failure; errno
 * survives either).
 */

#ifndef PERF_FLAG_FD_CLOEXEC
#define PERF_FLAG_FD_CLOEXEC (1ul << 3)
#endif
#ifndef FAN_CLOEXEC
#define FAN_CLOEXEC 0x00000001
#define FAN_NONBLOCK 0x00000002
#endif

/* open_how's flags: the first of its fields (struct open_how, Linux 5.6). */
static int fd_open_how_flags(const void *how)
{
	uint64_t flags = 0;

	if (how)
		memcpy(&flags, how, sizeof(flags));
	return (int)flags;
}

__attribute__((noinline)) int rip_pl_fd_sys_before(long n, const long *a)
{
	const void *fr = __builtin_frame_address(0);

	switch (n) {
	case SYS_close:
		fd_closing(fr, (int)a[0], RIP_FD_CLOSE);
		break;
	case SYS_close_range:
		fd_rec_close_range(fr, (unsigned int)a[0], (unsigned int)a[1], (unsigned int)a[2]);
		break;
#ifdef SYS_dup2
	case SYS_dup2:
#endif
	case SYS_dup3:
		return fd_replacing((int)a[0], (int)a[1]);
	default:
		break;
	}
	/* Not a tail call of anything that records: the recording above is done. */
	__asm__ __volatile__("" ::: "memory");
	return 0;
}

__attribute__((noinline)) void rip_pl_fd_sys_after(long n, const long *a, long ret, int replaced)
{
	const void *fr = __builtin_frame_address(0);
	int fd = ret < 0 || ret > INT32_MAX ? -1 : (int)ret;

	switch (n) {
#ifdef SYS_open
	case SYS_open:
		fd_opened(fr, fd, RIP_FD_OPEN, (int)a[1], (const char *)a[0]);
		break;
#endif
#ifdef SYS_creat
	case SYS_creat:
		fd_opened(fr, fd, RIP_FD_CREAT, O_WRONLY | O_CREAT | O_TRUNC, (const char *)a[0]);
		break;
#endif
	case SYS_openat:
		fd_opened(fr, fd, RIP_FD_OPENAT, (int)a[2], (const char *)a[1]);
		break;
#ifdef SYS_openat2
	case SYS_openat2:
		if (fd >= 0)
			fd_opened(fr, fd, RIP_FD_OPENAT2, fd_open_how_flags((const void *)a[2]),
				  (const char *)a[1]);
		break;
#endif
	case SYS_dup:
		fd_opened(fr, fd, RIP_FD_DUP, 0, NULL);
		break;
#ifdef SYS_dup2
	case SYS_dup2:
		fd_rec_dup2(fr, fd, replaced, (int)a[0], (int)a[1]);
		break;
#endif
	case SYS_dup3:
		fd_rec_dup3(fr, fd, replaced, (int)a[2]);
		break;
	case SYS_fcntl:
		if ((int)a[1] == F_DUPFD || (int)a[1] == F_DUPFD_CLOEXEC)
			fd_rec_dupfd(fr, fd, (int)a[1]);
		break;
#ifdef SYS_pipe
	case SYS_pipe:
		fd_rec_pipe(fr, ret == 0 ? 0 : -1, (const int *)a[0], 0);
		break;
#endif
	case SYS_pipe2:
		fd_rec_pipe(fr, ret == 0 ? 0 : -1, (const int *)a[0], (int)a[1]);
		break;
	case SYS_socket:
		fd_rec_socket(fr, fd, (int)a[1]);
		break;
	case SYS_socketpair:
		fd_rec_socketpair(fr, ret == 0 ? 0 : -1, (const int *)a[3], (int)a[1]);
		break;
#ifdef SYS_accept
	case SYS_accept:
		fd_rec_accept(fr, fd, 0);
		break;
#endif
	case SYS_accept4:
		fd_rec_accept(fr, fd, (int)a[3]);
		break;
	case SYS_recvmsg:
		fd_rec_recvmsg(fr, ret, (const struct msghdr *)a[1], (int)a[2]);
		break;
	case SYS_recvmmsg:
		fd_rec_recvmmsg(fr, ret < 0 || ret > INT32_MAX ? -1 : (int)ret,
				(const struct mmsghdr *)a[1], (int)a[3]);
		break;
#ifdef SYS_eventfd
	case SYS_eventfd:
		fd_rec_eventfd(fr, fd, 0);
		break;
#endif
	case SYS_eventfd2:
		fd_rec_eventfd(fr, fd, (int)a[1]);
		break;
	case SYS_timerfd_create:
		fd_rec_timerfd(fr, fd, (int)a[1]);
		break;
#ifdef SYS_signalfd
	case SYS_signalfd:
		fd_rec_signalfd(fr, fd, (int)a[0], 0);
		break;
#endif
	case SYS_signalfd4:
		fd_rec_signalfd(fr, fd, (int)a[0], (int)a[3]);
		break;
#ifdef SYS_epoll_create
	case SYS_epoll_create:
		fd_rec_epoll(fr, fd, 0);
		break;
#endif
	case SYS_epoll_create1:
		fd_rec_epoll(fr, fd, (int)a[0]);
		break;
#ifdef SYS_inotify_init
	case SYS_inotify_init:
		fd_rec_inotify(fr, fd, 0);
		break;
#endif
	case SYS_inotify_init1:
		fd_rec_inotify(fr, fd, (int)a[0]);
		break;
	case SYS_memfd_create:
		fd_rec_memfd(fr, fd, (const char *)a[0], (unsigned int)a[1]);
		break;
	case SYS_pidfd_open:
		fd_rec_pidfd_open(fr, fd, (unsigned int)a[1]);
		break;
#ifdef SYS_pidfd_getfd
	case SYS_pidfd_getfd:
		fd_rec_pidfd_getfd(fr, fd);
		break;
#endif
#ifdef SYS_io_uring_setup
	/* An io_uring's descriptor is always O_RDWR | O_CLOEXEC. */
	case SYS_io_uring_setup:
		fd_opened(fr, fd, RIP_FD_IO_URING, O_RDWR | O_CLOEXEC, NULL);
		break;
#endif
	/* UFFD_CLOEXEC and UFFD_NONBLOCK are O_CLOEXEC and O_NONBLOCK. */
	case SYS_userfaultfd:
		fd_opened(fr, fd, RIP_FD_USERFAULTFD, O_RDWR | ((int)a[0] & (O_CLOEXEC | O_NONBLOCK)),
			  NULL);
		break;
	case SYS_perf_event_open:
		fd_opened(fr, fd, RIP_FD_PERF_EVENT,
			  O_RDWR | (((unsigned long)a[4] & PERF_FLAG_FD_CLOEXEC) ? O_CLOEXEC : 0), NULL);
		break;
	case SYS_fanotify_init:
		fd_opened(fr, fd, RIP_FD_FANOTIFY,
			  O_RDWR | fd_cloexec_nonblock((int)a[0], FAN_CLOEXEC, FAN_NONBLOCK), NULL);
		break;
#ifdef SYS_memfd_secret
	/* O_CLOEXEC is the only flag it takes; its mappings are shared (shm.c's, by mmap's hook). */
	case SYS_memfd_secret:
		fd_opened(fr, fd, RIP_FD_MEMFD_SECRET, O_RDWR | ((int)a[0] & O_CLOEXEC), NULL);
		break;
#endif
	default:
		break;
	}
	/* Not a tail call of anything that records: the recording above is done. */
	__asm__ __volatile__("" ::: "memory");
}
