/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of the integ/preload-fd-*.sh tests: opens and closes
 * descriptors at known sites through every call the fd hooks of
 * librip-preload.so wrap, and checks the calls still do what they should
 * (variadic mode and fcntl arguments forwarded, errno untouched by the
 * hooks, received descriptors usable).
 *
 *	fdprog DIR            every site once, in a fixed order
 *	fdprog closeall DIR   close every descriptor from 3 to 1024 (the ring
 *	                      file's too), then open, close, start a thread
 *	                      and fork, all of which must still work
 *
 * The events the resource tracer must record are written, in order and in
 * the form `rip dump` prints them (bt=* for the backtrace id), to fd 9 if
 * it is open when the program starts.  stdout gets the same lines with
 * and without the preload library (no descriptor numbers); a failed check
 * goes to stderr and makes the exit status 1.  The program ends with
 * exit(), so the ring file stays for the test to read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rip/resource.h>

#define SENTINEL 4242 /* errno value the hooks must leave alone */

static int expect_fd = -1;
static int failures;
static const char *dir;

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "fdprog: FAIL: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	failures++;
}

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond))                                                                       \
			fail(__VA_ARGS__);                                                         \
	} while (0)

static void expect(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	if (expect_fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	line[n++] = '\n';
	if (write(expect_fd, line, (size_t)n) != n)
		fail("cannot write the expected events");
}

/* enum rip_fd_kind as rip dump names it (the test maps bare numbers to these too) */
#define KIND_NAME(suffix, name) [RIP_FD_##suffix] = name,
static const char *const kind_names[] = { RIP_FD_KINDS(KIND_NAME) };

static void ev_open(int fd, int kind, int flags, const char *path)
{
	expect("fd:open fd=%d bt=* kind=%s flags=%d path=\"%s\"", fd, kind_names[kind], flags,
	       path ? path : "");
}

static void ev_close(int fd, int kind)
{
	expect("fd:close fd=%d bt=* kind=%s", fd, kind_names[kind]);
}

static char *in_dir(const char *name)
{
	static char bufs[8][4096];
	static int next;
	char *b = bufs[next++ % 8];

	snprintf(b, sizeof(bufs[0]), "%s/%s", dir, name);
	return b;
}

/* A close that must succeed, and its event. */
static void do_close(int fd)
{
	errno = SENTINEL;
	CHECK(close(fd) == 0, "close(%d): %s", fd, strerror(errno));
	CHECK(errno == SENTINEL, "close changed errno to %d", errno);
	ev_close(fd, RIP_FD_CLOSE);
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
	ev_open(fd, RIP_FD_OPEN, O_WRONLY | O_CREAT | O_TRUNC, path);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write %s", path);
	do_close(fd);
}

/* ---- the sites ------------------------------------------------------------------------------- */

static int leaked;

static void sites_open(void)
{
	char *made = in_dir("made"), *other = in_dir("creat");
	struct stat st;
	int fd, dfd;

	/* a descriptor never closed: rip leaks must find it */
	errno = SENTINEL;
	leaked = open("/dev/null", O_RDONLY);
	CHECK(leaked >= 0, "open /dev/null: %s", strerror(errno));
	CHECK(errno == SENTINEL, "open changed errno to %d", errno);
	ev_open(leaked, RIP_FD_OPEN, O_RDONLY, "/dev/null");

	/* a failed call: errno is the call's, nothing recorded */
	errno = 0;
	CHECK(open("/nonexistent/fdprog", O_RDONLY) == -1 && errno == ENOENT,
	      "open of a missing file: errno %d", errno);
	errno = 0;
	CHECK(close(-1) == -1 && errno == EBADF, "close(-1): errno %d", errno);

	/* O_CREAT: the variadic mode reaches the kernel */
	umask(022);
	fd = open(made, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	CHECK(fd >= 0, "open O_CREAT: %s", strerror(errno));
	ev_open(fd, RIP_FD_OPEN, O_WRONLY | O_CREAT | O_TRUNC, made);
	CHECK(fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0640, "O_CREAT mode %o, want 640",
	      st.st_mode & 0777);
	do_close(fd);
	/* closing it again fails and records nothing */
	errno = 0;
	CHECK(close(fd) == -1 && errno == EBADF, "second close: errno %d", errno);

	/* O_TMPFILE (where the file system has it): the mode again */
	fd = open(dir, O_TMPFILE | O_RDWR, 0604);
	if (fd >= 0) {
		ev_open(fd, RIP_FD_OPEN, O_TMPFILE | O_RDWR, dir);
		CHECK(fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0604,
		      "O_TMPFILE mode %o, want 604", st.st_mode & 0777);
		do_close(fd);
	}

	fd = openat(AT_FDCWD, made, O_RDONLY);
	CHECK(fd >= 0, "openat: %s", strerror(errno));
	ev_open(fd, RIP_FD_OPENAT, O_RDONLY, made);
	do_close(fd);

	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0, "open dir: %s", strerror(errno));
	ev_open(dfd, RIP_FD_OPEN, O_RDONLY | O_DIRECTORY, dir);
	fd = openat(dfd, "made", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "openat dirfd: %s", strerror(errno));
	ev_open(fd, RIP_FD_OPENAT, O_RDONLY | O_CLOEXEC, "made");
	CHECK(fcntl(fd, F_GETFD) == FD_CLOEXEC, "openat O_CLOEXEC lost");
	do_close(fd);
	fd = openat(dfd, "new-at", O_WRONLY | O_CREAT | O_EXCL, 0604);
	CHECK(fd >= 0, "openat O_CREAT: %s", strerror(errno));
	ev_open(fd, RIP_FD_OPENAT, O_WRONLY | O_CREAT | O_EXCL, "new-at");
	CHECK(fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0604, "openat mode %o, want 604",
	      st.st_mode & 0777);
	do_close(fd);
	do_close(dfd);

	fd = creat(other, 0600);
	CHECK(fd >= 0, "creat: %s", strerror(errno));
	ev_open(fd, RIP_FD_CREAT, O_WRONLY | O_CREAT | O_TRUNC, other);
	do_close(fd);
	printf("ok open\n");
}

static void sites_dup(void)
{
	int d, t, n, r, p[2], flags;
	struct flock fl;

	d = dup(leaked);
	CHECK(d >= 0, "dup: %s", strerror(errno));
	ev_open(d, RIP_FD_DUP, 0, NULL);

	/* dup2 onto an open descriptor: it is closed first (REPLACED) */
	t = open("/dev/zero", O_RDONLY);
	ev_open(t, RIP_FD_OPEN, O_RDONLY, "/dev/zero");
	errno = SENTINEL;
	CHECK(dup2(d, t) == t, "dup2 onto an open fd: %s", strerror(errno));
	CHECK(errno == SENTINEL, "dup2 changed errno to %d", errno);
	ev_close(t, RIP_FD_REPLACED);
	ev_open(t, RIP_FD_DUP2, 0, NULL);

	/* dup2 onto a closed one: nothing replaced (and the probe's EBADF does not leak) */
	n = dup(d);
	ev_open(n, RIP_FD_DUP, 0, NULL);
	do_close(n);
	errno = SENTINEL;
	CHECK(dup2(d, n) == n, "dup2 onto a closed fd: %s", strerror(errno));
	CHECK(errno == SENTINEL, "dup2 onto a closed fd changed errno to %d", errno);
	ev_open(n, RIP_FD_DUP2, 0, NULL);

	/* dup2(fd, fd) changes nothing; dup2 of a bad fd fails */
	CHECK(dup2(d, d) == d, "dup2(d, d)");
	errno = 0;
	CHECK(dup2(-5, n) == -1 && errno == EBADF, "dup2 of a bad fd: errno %d", errno);

	CHECK(dup3(d, n, O_CLOEXEC) == n, "dup3: %s", strerror(errno));
	ev_close(n, RIP_FD_REPLACED);
	ev_open(n, RIP_FD_DUP3, O_CLOEXEC, NULL);
	CHECK(fcntl(n, F_GETFD) == FD_CLOEXEC, "dup3 O_CLOEXEC lost");

	r = fcntl(d, F_DUPFD, 100);
	CHECK(r >= 100, "F_DUPFD 100: %d", r);
	ev_open(r, RIP_FD_FCNTL_DUPFD, 0, NULL);
	do_close(r);
	r = fcntl(d, F_DUPFD_CLOEXEC, 200);
	CHECK(r >= 200, "F_DUPFD_CLOEXEC 200: %d", r);
	ev_open(r, RIP_FD_FCNTL_DUPFD, O_CLOEXEC, NULL);
	CHECK(fcntl(r, F_GETFD) == FD_CLOEXEC, "F_DUPFD_CLOEXEC: no FD_CLOEXEC");
	do_close(r);

	/* the third argument of the other commands: int, pointer, none */
	CHECK(pipe(p) == 0, "pipe: %s", strerror(errno));
	ev_open(p[0], RIP_FD_PIPE, O_RDONLY, NULL);
	ev_open(p[1], RIP_FD_PIPE, O_WRONLY, NULL);
	flags = fcntl(p[0], F_GETFL);
	CHECK(fcntl(p[0], F_SETFL, flags | O_NONBLOCK) == 0, "F_SETFL");
	CHECK(fcntl(p[0], F_GETFL) & O_NONBLOCK, "F_SETFL O_NONBLOCK lost");
	CHECK(fcntl(p[1], F_SETPIPE_SZ, 1 << 17) >= 1 << 17, "F_SETPIPE_SZ: %s", strerror(errno));
	CHECK(fcntl(p[1], F_GETPIPE_SZ) >= 1 << 17, "F_GETPIPE_SZ");
	CHECK(fcntl(p[1], F_SETFD, FD_CLOEXEC) == 0 && fcntl(p[1], F_GETFD) == FD_CLOEXEC,
	      "F_SETFD");
	t = open(in_dir("made"), O_RDWR);
	ev_open(t, RIP_FD_OPEN, O_RDWR, in_dir("made"));
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_len = 10;
	CHECK(fcntl(t, F_SETLK, &fl) == 0, "F_SETLK: %s", strerror(errno));
	fl.l_type = F_RDLCK;
	fl.l_pid = 0; /* F_OFD_* insist */
	CHECK(fcntl(t, F_OFD_GETLK, &fl) == 0 && fl.l_type == F_WRLCK && fl.l_pid == getpid(),
	      "F_OFD_GETLK does not see the lock (type %d pid %d)", fl.l_type, (int)fl.l_pid);
	do_close(t);
	do_close(p[0]);
	do_close(p[1]);

	CHECK(pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0, "pipe2: %s", strerror(errno));
	ev_open(p[0], RIP_FD_PIPE, O_RDONLY | O_CLOEXEC | O_NONBLOCK, NULL);
	ev_open(p[1], RIP_FD_PIPE, O_WRONLY | O_CLOEXEC | O_NONBLOCK, NULL);
	do_close(p[0]);
	do_close(p[1]);
	do_close(d);
	do_close(n);
	printf("ok dup fcntl pipe\n");
}

/* Send fds over sock in one SCM_RIGHTS message. */
static void send_fds(int sock, const int *fds, int n)
{
	char data = 'x';
	struct iovec iov = { &data, 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf };
	struct cmsghdr *c;

	memset(&u, 0, sizeof(u));
	m.msg_controllen = CMSG_SPACE(n * sizeof(int));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	CHECK(sendmsg(sock, &m, 0) == 1, "sendmsg: %s", strerror(errno));
}

/* The fds in a received message. */
static int got_fds(struct msghdr *m, int *fds, int max)
{
	int n = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int) && n < max; i++)
			memcpy(&fds[n++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
	}
	return n;
}

static void sites_socket(void)
{
	int sv[2], fd, r[4], got, lsn, cli, acc, p[2];
	char data, buf[64];
	struct iovec iov = { &data, 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct mmsghdr mm;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	ssize_t n;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair: %s",
	      strerror(errno));
	ev_open(sv[0], RIP_FD_SOCKETPAIR, O_CLOEXEC, NULL);
	ev_open(sv[1], RIP_FD_SOCKETPAIR, O_CLOEXEC, NULL);

	/* a file descriptor passed over SCM_RIGHTS (recvmsg) */
	write_file(in_dir("scm"), "scm-data");
	fd = open(in_dir("scm"), O_RDONLY);
	ev_open(fd, RIP_FD_OPEN, O_RDONLY, in_dir("scm"));
	send_fds(sv[0], &fd, 1);
	do_close(fd);
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	errno = SENTINEL;
	CHECK(recvmsg(sv[1], &m, MSG_CMSG_CLOEXEC) == 1, "recvmsg: %s", strerror(errno));
	CHECK(errno == SENTINEL, "recvmsg changed errno to %d", errno);
	got = got_fds(&m, r, 4);
	CHECK(got == 1, "recvmsg: %d fds, want 1", got);
	if (got == 1) {
		ev_open(r[0], RIP_FD_SCM_RIGHTS, O_CLOEXEC, NULL);
		n = read(r[0], buf, sizeof(buf) - 1);
		CHECK(n == 8 && !memcmp(buf, "scm-data", 8), "read of the received fd");
		do_close(r[0]);
	}

	/* two at once, through recvmmsg */
	CHECK(pipe(p) == 0, "pipe");
	ev_open(p[0], RIP_FD_PIPE, O_RDONLY, NULL);
	ev_open(p[1], RIP_FD_PIPE, O_WRONLY, NULL);
	send_fds(sv[1], p, 2);
	do_close(p[0]);
	do_close(p[1]);
	memset(&mm, 0, sizeof(mm));
	mm.msg_hdr = m;
	mm.msg_hdr.msg_control = u.buf;
	mm.msg_hdr.msg_controllen = sizeof(u.buf);
	CHECK(recvmmsg(sv[0], &mm, 1, 0, NULL) == 1, "recvmmsg: %s", strerror(errno));
	got = got_fds(&mm.msg_hdr, r, 4);
	CHECK(got == 2, "recvmmsg: %d fds, want 2", got);
	if (got == 2) {
		ev_open(r[0], RIP_FD_SCM_RIGHTS, 0, NULL);
		ev_open(r[1], RIP_FD_SCM_RIGHTS, 0, NULL);
		CHECK(write(r[1], "p", 1) == 1 && read(r[0], buf, 1) == 1 && buf[0] == 'p',
		      "the received pipe does not carry data");
		do_close(r[0]);
		do_close(r[1]);
	}
	/* a message with no descriptors records nothing */
	CHECK(write(sv[0], "y", 1) == 1, "write");
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	CHECK(recvmsg(sv[1], &m, 0) == 1 && got_fds(&m, r, 4) == 0, "recvmsg without fds");
	do_close(sv[0]);
	do_close(sv[1]);

	/* socket, accept, accept4 */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", in_dir("sock"));
	lsn = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(lsn >= 0, "socket: %s", strerror(errno));
	ev_open(lsn, RIP_FD_SOCKET, 0, NULL);
	CHECK(bind(lsn, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(lsn, 4) == 0,
	      "bind/listen: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		cli = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		ev_open(cli, RIP_FD_SOCKET, O_NONBLOCK, NULL);
		CHECK(connect(cli, (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect: %s",
		      strerror(errno));
		if (i == 0) {
			acc = accept(lsn, NULL, NULL);
			ev_open(acc, RIP_FD_ACCEPT, 0, NULL);
		} else {
			acc = accept4(lsn, NULL, NULL, SOCK_CLOEXEC);
			ev_open(acc, RIP_FD_ACCEPT, O_CLOEXEC, NULL);
			CHECK(fcntl(acc, F_GETFD) == FD_CLOEXEC, "accept4 SOCK_CLOEXEC lost");
		}
		CHECK(acc >= 0, "accept: %s", strerror(errno));
		do_close(acc);
		do_close(cli);
	}
	do_close(lsn);
	printf("ok sockets and SCM_RIGHTS\n");
}

static void sites_special(void)
{
	int fd, sfd;
	sigset_t mask;

	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd >= 0, "eventfd: %s", strerror(errno));
	ev_open(fd, RIP_FD_EVENTFD, O_CLOEXEC, NULL);
	do_close(fd);
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	CHECK(fd >= 0, "timerfd_create: %s", strerror(errno));
	ev_open(fd, RIP_FD_TIMERFD, O_NONBLOCK, NULL);
	do_close(fd);

	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sfd = signalfd(-1, &mask, 0);
	CHECK(sfd >= 0, "signalfd: %s", strerror(errno));
	ev_open(sfd, RIP_FD_SIGNALFD, 0, NULL);
	sigaddset(&mask, SIGUSR2);
	CHECK(signalfd(sfd, &mask, 0) == sfd, "signalfd on an existing fd"); /* nothing new */
	do_close(sfd);

	fd = epoll_create(4);
	CHECK(fd >= 0, "epoll_create: %s", strerror(errno));
	ev_open(fd, RIP_FD_EPOLL, 0, NULL);
	do_close(fd);
	fd = epoll_create1(EPOLL_CLOEXEC);
	CHECK(fd >= 0, "epoll_create1: %s", strerror(errno));
	ev_open(fd, RIP_FD_EPOLL, O_CLOEXEC, NULL);
	do_close(fd);
	fd = inotify_init();
	CHECK(fd >= 0, "inotify_init: %s", strerror(errno));
	ev_open(fd, RIP_FD_INOTIFY, 0, NULL);
	do_close(fd);
	fd = inotify_init1(IN_NONBLOCK);
	CHECK(fd >= 0, "inotify_init1: %s", strerror(errno));
	ev_open(fd, RIP_FD_INOTIFY, O_NONBLOCK, NULL);
	do_close(fd);
	fd = memfd_create("fdprog", MFD_CLOEXEC);
	CHECK(fd >= 0, "memfd_create: %s", strerror(errno));
	ev_open(fd, RIP_FD_MEMFD, O_RDWR | O_CLOEXEC, "memfd:fdprog");
	do_close(fd);
	printf("ok eventfd timerfd signalfd epoll inotify memfd\n");
}

static void sites_stdio(void)
{
	char *made = in_dir("made"), *other = in_dir("freopened");
	FILE *fp, *fp2;
	DIR *d;
	struct dirent *e;
	char buf[16];
	int fd, fd2, found = 0;

	fp = fopen(made, "r");
	CHECK(fp != NULL, "fopen: %s", strerror(errno));
	ev_open(fileno(fp), RIP_FD_FOPEN, O_RDONLY, made);
	fd = fileno(fp);
	errno = SENTINEL;
	CHECK(fclose(fp) == 0, "fclose");
	CHECK(errno == SENTINEL, "fclose changed errno to %d", errno);
	ev_close(fd, RIP_FD_FCLOSE);

	fp = fopen64(made, "a+e");
	CHECK(fp != NULL, "fopen64: %s", strerror(errno));
	ev_open(fileno(fp), RIP_FD_FOPEN, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, made);
	fd = fileno(fp);
	fp2 = freopen(other, "w", fp);
	CHECK(fp2 != NULL, "freopen: %s", strerror(errno));
	ev_close(fd, RIP_FD_FREOPEN);
	ev_open(fileno(fp2), RIP_FD_FREOPEN, O_WRONLY | O_CREAT | O_TRUNC, other);
	CHECK(fputs("freopened\n", fp2) >= 0, "fputs");
	fd = fileno(fp2);
	CHECK(fclose(fp2) == 0, "fclose after freopen");
	ev_close(fd, RIP_FD_FCLOSE);

	fd = dup(leaked);
	ev_open(fd, RIP_FD_DUP, 0, NULL);
	fp = fdopen(fd, "r");
	CHECK(fp != NULL, "fdopen: %s", strerror(errno));
	/* fdopen records nothing: fd is open already */
	CHECK(fclose(fp) == 0, "fclose of fdopen");
	ev_close(fd, RIP_FD_FCLOSE);

	/* streams without a descriptor record nothing */
	fp = fmemopen(buf, sizeof(buf), "w");
	CHECK(fp != NULL, "fmemopen");
	CHECK(fclose(fp) == 0, "fclose of fmemopen");

	fp = tmpfile();
	CHECK(fp != NULL, "tmpfile: %s", strerror(errno));
	ev_open(fileno(fp), RIP_FD_FOPEN, O_RDWR | O_CREAT | O_EXCL, NULL);
	fd = fileno(fp);
	CHECK(fclose(fp) == 0, "fclose of tmpfile");
	ev_close(fd, RIP_FD_FCLOSE);

	d = opendir(dir);
	CHECK(d != NULL, "opendir: %s", strerror(errno));
	ev_open(dirfd(d), RIP_FD_OPENDIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC, dir);
	while ((e = readdir(d)))
		found += !strcmp(e->d_name, "made");
	CHECK(found == 1, "readdir did not find the file");
	fd = dirfd(d);
	errno = SENTINEL;
	CHECK(closedir(d) == 0, "closedir");
	CHECK(errno == SENTINEL, "closedir changed errno to %d", errno);
	ev_close(fd, RIP_FD_CLOSEDIR);

	fd2 = open(dir, O_RDONLY | O_DIRECTORY);
	ev_open(fd2, RIP_FD_OPEN, O_RDONLY | O_DIRECTORY, dir);
	d = fdopendir(fd2);
	CHECK(d != NULL, "fdopendir: %s", strerror(errno));
	/* fdopendir records nothing either */
	CHECK(closedir(d) == 0, "closedir of fdopendir");
	ev_close(fd2, RIP_FD_CLOSEDIR);
	printf("ok stdio and directories\n");
}

/* ---- closeall -------------------------------------------------------------------------------- */

static void *closeall_thread(void *arg)
{
	int fd = open(in_dir("thread-marker"), O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(fd >= 0, "open in a new thread: %s", strerror(errno));
	CHECK(close(fd) == 0, "close in a new thread");
	return arg;
}

/*
 * Close everything (librip's ring file too: it is mapped, tracing goes
 * on), then use descriptors, a new thread and fork.  The descriptor the
 * ring had may be handed out again here: the child of the fork must not
 * lose it to the library.
 */
static int closeall(void)
{
	char link[4096], target[4096];
	int closed = 0, ring_fd = -1, fd, p[2], status;
	pthread_t th;
	pid_t pid;

	for (int i = 3; i <= 1024; i++) {
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", i);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = 0;
			if (strstr(target, ".ring"))
				ring_fd = i;
		}
		if (close(i) == 0)
			closed++;
	}
	fprintf(stderr, "closed %d ring-fd %d pid %d\n", closed, ring_fd, (int)getpid());

	fd = open(in_dir("marker"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd == 3, "open after closing all: fd %d, want 3", fd);
	CHECK(pipe(p) == 0, "pipe after closing all");
	CHECK(close(p[0]) == 0 && close(p[1]) == 0, "close after closing all");
	CHECK(pthread_create(&th, NULL, closeall_thread, NULL) == 0, "pthread_create");
	CHECK(pthread_join(th, NULL) == 0, "pthread_join");

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/* fd 3 is the program's own file now, whatever it was before */
		if (write(fd, "child\n", 6) != 6) {
			fprintf(stderr, "fdprog: FAIL: the forked child lost fd 3: %s\n",
				strerror(errno));
			_exit(1);
		}
		_exit(0);
	}
	CHECK(pid > 0, "fork: %s", strerror(errno));
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the forked child failed");
	CHECK(write(fd, "parent\n", 7) == 7, "write to fd 3: %s", strerror(errno));
	printf("ok closeall\n");
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (fcntl(9, F_GETFD) >= 0)
		expect_fd = 9;
	if (argc == 3 && !strcmp(argv[1], "closeall")) {
		dir = argv[2];
		exit(closeall());
	}
	if (argc != 2) {
		fprintf(stderr, "usage: fdprog [closeall] DIR\n");
		return 2;
	}
	dir = argv[1];
	sites_open();
	sites_dup();
	sites_socket();
	sites_special();
	sites_stdio();
	printf("%s\n", failures ? "FAILED" : "all checks passed");
	fflush(stdout);
	exit(failures ? 1 : 0);
}
