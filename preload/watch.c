// SPDX-License-Identifier: Apache-2.0
/*
 * preload/watch.c - the watcher thread: where the threads are that no
 * wrapper saw block (raw syscall(), io_uring, a library's own futex), read
 * from /proc/self inside the process, with no ptrace and no signal.
 *
 * One thread, every signal blocked, started lazily: at the program's first
 * pthread_create (after the program's thread exists), never in a
 * single-threaded program.  A single-threaded process may call
 * unshare(CLONE_NEWUSER) or setns() into a user namespace, which the
 * kernel refuses to a multithreaded one, even with the system call
 * instruction itself, which no wrapper sees: a thread of ours there would
 * break it.  A program that creates threads is multithreaded anyway, and
 * the wrappers of unshare and setns below (and of syscall(2) for
 * SYS_unshare and SYS_setns: wait.c) stop the watcher for the call and
 * start it again after, so that a program whose threads came and went
 * keeps working.  A fork child starts its own the same way, at its own
 * first pthread_create.  RIP_WATCH=0 turns it off.  Its thread counts
 * against the user's RLIMIT_NPROC: a pthread_create or fork of the program
 * that fails with EAGAIN stops it for good and tries again
 * (rip_pl_watch_yield).
 *
 * Its first act is unshare(CLONE_FS | CLONE_FILES): a descriptor table and
 * filesystem state of its own.  The program's close_range, closefrom or
 * dup2 can then never close or replace a descriptor of ours, ours never
 * take a number the program expects to get or sees in /proc/self/fd, and
 * the program's setns(CLONE_NEWNS), which the kernel refuses while another
 * thread shares the filesystem state, works as it does untraced.  The copy
 * of the table that unshare makes holds the program's files open for a
 * moment: the watcher closes every one of them at once (POSIX locks belong
 * to a table, so the program's stay).  A kernel that refuses the unshare
 * gets no watcher (its status says why): a watcher sharing the table could
 * close a number the program reused.
 *
 * A sweep reads, for each thread slot whose thread has no wait record,
 * /proc/self/task/TID/schedstat and syscall; for a thread blocked in the
 * kernel it reads stat (the state letter; only when the thread was not
 * blocked at the same place at the last sweep) and copies the top of its stack
 * (from the sp the syscall file gives, up to the buffer's 16 KiB less its
 * head) with process_vm_readv on our own pid (an unmapped page ends the
 * copy: no fault; under a seccomp filter, which may kill the process at
 * process_vm_readv, with a pread of /proc/self/mem instead), then reads
 * schedstat and syscall again through the same
 * descriptors: if either changed, the thread moved while being copied and
 * the copy is dropped.  A thread found as it was at its last copy (the
 * same syscall and schedstat text: it has not run since) keeps that copy
 * without a new one.  Copies live in the file's copy area, a pool of
 * buffers (doc/format.md, "Watcher"); a thread keeps its buffer while it
 * stays blocked and gives it back when it runs or goes.
 *
 * Sweeps happen when a reader asks (rip ps adds 1 to hdr.watch_req and
 * wakes the futex; the watcher stores the value it served in watch_done
 * and wakes it) and otherwise every watch_period_ms (RIP_WATCH_PERIOD,
 * default 5000 ms; at least 20 times the last sweep's duration, so that it
 * never takes more than 5% of a CPU), so that a file read after a crash
 * has a recent sweep.
 *
 * The watcher also reads /proc/self/maps for the program's threads
 * (rip_pl_watch_maps: the mremap hook, the stack of a thread no wrapper
 * started), the files of a pagemap snapshot (rip_pl_watch_pread:
 * /proc/self/maps, pagemap and mem, for pagemap.c) and the rule cache's
 * files (rip_pl_watch_file_read, rip_pl_watch_file_write, for
 * rulecache.c), so that their descriptors are never the program's: a
 * thread posts its request in a mailbox and waits on its word, the
 * watcher answers from its own table (it keeps a snapshot's files open
 * there until the next snapshot, and closes the others at once).
 *
 * The watcher holds its guard up for good (hooks only forward its calls),
 * allocates nothing from the program's allocator, opens files with
 * O_CLOEXEC in its own table and closes them before the next thread.
 * Every failure is counted or shown in the file, never raised in the
 * program.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <rip/abi.h>
#include <internal/clock.h>

#include "common.h"
#include "watch.h"

#define WATCH_STACK (256u << 10) /* the watcher's own stack */
#define WATCH_PERIOD_MS 5000u
#define WATCH_MAX_TASKS (1u << 22) /* tids one sweep can list (virtual: touched as used) */

enum {
	W_IDLE,
	W_STARTING,
	W_RUNNING
};

static struct {
	int enabled; /* RIP_WATCH is not 0 and a ring file is open */
	int state;   /* W_*: the watcher thread, by CAS */
	int stop;    /* set to make the watcher return (unshare, setns) */
	pthread_t th;
	int32_t tid;
	uint32_t period_ms;
	/* private to the watcher thread */
	uint32_t *owner;  /* per copy buffer: slot index + 1, 0: free */
	uint8_t *backed;  /* per copy buffer: its pages are backed */
	uint64_t *seen;	  /* per copy buffer: hash of the syscall and schedstat text it was
			      copied under (the thread has not run since if they are the same) */
	int32_t *tids;	  /* the tasks of this sweep, sorted */
	uint8_t *matched; /* per entry of tids: a slot names it */
	size_t ntids;
	uint32_t next_free; /* where to look for a free buffer first */
} W = { .period_ms = WATCH_PERIOD_MS };

/*
 * The mailbox of rip_pl_watch_maps, rip_pl_watch_pread and the rule
 * cache's rip_pl_watch_file_read and _write, one request at a time.
 * state is the futex word (private) of the requesters; the watcher is
 * woken through the file's watch_req, its own word, without
 * changing it: a wake that comes between the watcher's look at the box and
 * its sleep is lost, so a requester wakes it again at every slice of its
 * wait, the first ones short: a snapshot (pagemap.c) posts its requests
 * one after the other, each as the watcher goes back to sleep after the
 * last, and lost many (300 snapshots of a program with an idle second
 * thread took 4 to 9 s with a slice of 10 ms, against 0.7 to 1.8 s read in
 * place).
 */
enum {
	WM_FREE,
	WM_CLAIMED, /* a requester fills in the request */
	WM_POSTED,  /* for the watcher */
	WM_SERVING, /* the watcher reads */
	WM_DONE,    /* the answer is in, for the requester that posted */
};

enum {
	WM_MAPS, /* the mapping that holds addr (rip_pl_maps_read) */
	WM_FILE, /* a pread of a snapshot's file (rip_pl_watch_pread) */
	WM_READ, /* the start of a rule cache's file (rip_pl_watch_file_read) */
	WM_WRITE, /* a rule cache's file written anew (rip_pl_watch_file_write) */
};

#define WM_SLICE_MIN_NS 50000ull   /* a requester's first wait before it wakes the watcher again */
#define WM_SLICE_NS 10000000ull	   /* ... its longest (each twice the last) */
#define WM_CLAIM_NS 200000000ull   /* how long a requester waits for the box */
#define WM_ANSWER_NS 1000000000ull /* ... and for the answer, before it reads itself */

struct rip_pl_wm_req {
	uint32_t kind; /* WM_* */
	int file;      /* WM_FILE: RIP_PL_WF_* */
	void *buf;     /* WM_FILE, WM_READ: the requester's, written by the watcher */
	size_t len;
	uint64_t off;
	uintptr_t addr;	   /* WM_MAPS */
	const char *path;  /* WM_READ, WM_WRITE: the file (WM_WRITE: renamed to it) */
	const char *tmp;   /* WM_WRITE: the temporary name written */
	uint64_t *size;	   /* WM_READ: the requester's, for the file's size */
	const void *wb[2]; /* WM_WRITE: what is written, in this order */
	size_t wlen[2];
};

static struct {
	uint32_t state; /* WM_* */
	struct rip_pl_wm_req rq;
	long ret;
	struct rip_pl_maps_hit hit;
} WM;

/*
 * The snapshot's files, open in the watcher's table (-1: not open): only
 * the watcher thread touches them, and a watcher starts with none (a
 * number left by an earlier one means nothing in its table).
 */
static int rip_pl_wf[RIP_PL_WF_N];

/* Tells librip (a weak reference in lib/ring.c) that a watcher may need a copy area. */
const int __rip_preload_watch = 1;

static long rip_pl_futex(uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
	/* Not FUTEX_PRIVATE: the word is in a shared file that rip ps maps too. */
	return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

/* ---- the mailbox ---- */

static uint64_t rip_pl_mono_ns(void);

static void rip_pl_close(int fd);

/*
 * In the watcher: len bytes of fd from off, or fewer at its end: how many,
 * or -errno when the first read failed.
 */
static long rip_pl_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		long n = syscall(SYS_pread64, fd, (char *)buf + done, len - done, off + done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && !done)
			return -errno;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	return (long)done;
}

/* In the watcher: a pread of a snapshot's file (rip_pl_watch_pread). */
static long rip_pl_wf_pread(const struct rip_pl_wm_req *rq)
{
	static const char *const path[RIP_PL_WF_N] = {
		[RIP_PL_WF_MAPS] = "/proc/self/maps",
		[RIP_PL_WF_PAGEMAP] = "/proc/self/pagemap",
		[RIP_PL_WF_MEM] = "/proc/self/mem",
	};
	int *fd;

	if (rq->file < 0 || rq->file >= RIP_PL_WF_N)
		return -EINVAL;
	/*
	 * A snapshot starts with the maps at offset 0: the files of the last
	 * one are closed (it leaves them open, which saves it a request), and
	 * the maps read as they are now.
	 */
	if (rq->file == RIP_PL_WF_MAPS && rq->off == 0) {
		for (int i = 0; i < RIP_PL_WF_N; i++) {
			rip_pl_close(rip_pl_wf[i]);
			rip_pl_wf[i] = -1;
		}
	}
	fd = &rip_pl_wf[rq->file];
	if (*fd < 0) {
		long r = syscall(SYS_openat, AT_FDCWD, path[rq->file], O_RDONLY | O_CLOEXEC);

		if (r < 0)
			return -errno;
		*fd = (int)r;
	}
	return rip_pl_pread_all(*fd, rq->buf, rq->len, rq->off);
}

/*
 * In the watcher: the start of a rule cache's file (rip_pl_watch_file_read),
 * opened without following a link and closed at once.
 */
static long rip_pl_wm_read(const struct rip_pl_wm_req *rq)
{
	long fd = syscall(SYS_openat, AT_FDCWD, rq->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	long ret;

	if (fd < 0)
		return -errno;
	if (syscall(SYS_fstat, fd, &st)) {
		ret = -errno;
		goto out;
	}
	ret = -EPERM;
	if (!S_ISREG(st.st_mode) || st.st_uid != (uid_t)syscall(SYS_geteuid))
		goto out;
	*rq->size = (uint64_t)st.st_size;
	ret = rip_pl_pread_all((int)fd, rq->buf, rq->len, 0);
out:
	rip_pl_close((int)fd);
	return ret;
}

/* In the watcher: a rule cache's file written anew (rip_pl_watch_file_write). */
static long rip_pl_wm_write(const struct rip_pl_wm_req *rq)
{
	long fd = syscall(SYS_openat, AT_FDCWD, rq->tmp,
			  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	long ret = 0;

	if (fd < 0)
		return -errno;
	for (int i = 0; i < 2 && !ret; i++) {
		for (size_t done = 0; done < rq->wlen[i];) {
			long n = syscall(SYS_write, fd, (const char *)rq->wb[i] + done,
					 rq->wlen[i] - done);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				ret = n < 0 ? -errno : -EIO;
				break;
			}
			done += (size_t)n;
		}
	}
	rip_pl_close((int)fd);
	if (!ret && syscall(SYS_rename, rq->tmp, rq->path))
		ret = -errno;
	if (ret)
		syscall(SYS_unlink, rq->tmp);
	return ret;
}

/* In the watcher: answer the request posted in the box, if one is. */
static void rip_pl_box_serve(void)
{
	uint32_t st = WM_POSTED;
	long ret;

	/* Acquire: pairs with the requester's release store of WM_POSTED (rq before it). */
	if (__atomic_load_n(&WM.state, __ATOMIC_RELAXED) != WM_POSTED ||
	    !__atomic_compare_exchange_n(&WM.state, &st, WM_SERVING, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	WM.hit = (struct rip_pl_maps_hit){ 0 };
	if (WM.rq.kind == WM_MAPS)
		ret = rip_pl_maps_read(WM.rq.addr, &WM.hit);
	else if (WM.rq.kind == WM_READ)
		ret = rip_pl_wm_read(&WM.rq);
	else if (WM.rq.kind == WM_WRITE)
		ret = rip_pl_wm_write(&WM.rq);
	else
		ret = rip_pl_wf_pread(&WM.rq);
	/* -EAGAIN says "not answered" to the requester. */
	WM.ret = ret == -EAGAIN ? -EIO : ret;
	/* Release: the answer before the state (pairs with the requester's acquire load). */
	__atomic_store_n(&WM.state, WM_DONE, __ATOMIC_RELEASE);
	rip_pl_futex(&WM.state, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
}

/* Wait on the box's word while it is st, for at most ns (a futex wait: no spinning). */
static void rip_pl_maps_nap(uint32_t st, uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	rip_pl_futex(&WM.state, FUTEX_WAIT_PRIVATE, st, &ts);
}

/*
 * Is a watcher there to answer, or about to be?  Started (W_RUNNING) and not
 * failed: while it sets up its own table (the status still PENDING, or
 * STOPPED after an unshare or setns) a request waits in the box, which it
 * looks at first; read by the thread instead, the program's other threads,
 * just created, took the wrong numbers (tests/integ/trust-mapsfd, now and
 * then hundreds of opens in a run).
 */
static bool rip_pl_watch_up(const struct rip_file_hdr *hdr)
{
	uint32_t st;

	/* Acquire: pairs with the release store of W_RUNNING once the thread exists. */
	if (__atomic_load_n(&W.state, __ATOMIC_ACQUIRE) != W_RUNNING)
		return false;
	/* Relaxed: only whether it failed; the box's own words order the rest. */
	st = __atomic_load_n(&hdr->watch_status, __ATOMIC_RELAXED);
	return st == RIP_WATCHER_RUNNING || st == RIP_WATCHER_DENIED || st == RIP_WATCHER_PENDING ||
	       st == RIP_WATCHER_STOPPED;
}

/*
 * Post rq in the box and wait for the watcher's answer: its return value
 * (and, for WM_MAPS, *hit), or -EAGAIN (no watcher, or none answered in
 * time: nothing was done).  errno unchanged.
 */
static long rip_pl_box_ask(const struct rip_pl_wm_req *rq, struct rip_pl_maps_hit *hit)
{
	struct rip_file_hdr *hdr = __rip_file_hdr();
	uint64_t t0, now, slice;
	uint32_t st;
	int err = errno;
	long ret;

	if (!hdr || !rip_pl_watch_up(hdr))
		return -EAGAIN;
	t0 = rip_pl_mono_ns();
	for (;;) {
		st = WM_FREE;
		/* Acquire: pairs with the release store of WM_FREE by the box's last user. */
		if (__atomic_compare_exchange_n(&WM.state, &st, WM_CLAIMED, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			break;
		if (rip_pl_mono_ns() - t0 >= WM_CLAIM_NS)
			goto again;
		rip_pl_maps_nap(st, WM_SLICE_NS);
	}
	WM.rq = *rq;
	/* Release: the request before the state (pairs with the watcher's acquire CAS). */
	__atomic_store_n(&WM.state, WM_POSTED, __ATOMIC_RELEASE);
	t0 = rip_pl_mono_ns();
	for (st = WM_POSTED, slice = WM_SLICE_MIN_NS;;) {
		if (st == WM_POSTED) {
			now = rip_pl_mono_ns();
			/* Not taken in time, or the watcher stopped: take the request back. */
			if ((now - t0 >= WM_ANSWER_NS || !rip_pl_watch_up(hdr)) &&
			    __atomic_compare_exchange_n(&WM.state, &st, WM_FREE, false,
							__ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
				rip_pl_futex(&WM.state, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
				goto again;
			}
			/* Not a new value of watch_req: that asks for a sweep. */
			rip_pl_futex(&hdr->watch_req, FUTEX_WAKE, INT32_MAX, NULL);
		}
		/* WM_SERVING: the watcher reads, and its answer wakes us (no spinning meanwhile). */
		rip_pl_maps_nap(st, st == WM_POSTED ? slice : WM_SLICE_NS);
		if (slice < WM_SLICE_NS)
			slice *= 2;
		/* Acquire: pairs with the watcher's release store of WM_DONE (the answer). */
		st = __atomic_load_n(&WM.state, __ATOMIC_ACQUIRE);
		if (st == WM_DONE)
			break;
	}
	if (hit)
		*hit = WM.hit;
	ret = WM.ret;
	/* Release: our reads of the answer before the box is free (pairs with the claim). */
	__atomic_store_n(&WM.state, WM_FREE, __ATOMIC_RELEASE);
	rip_pl_futex(&WM.state, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
	errno = err;
	return ret;
again:
	errno = err;
	return -EAGAIN;
}

int rip_pl_watch_maps(uintptr_t addr, struct rip_pl_maps_hit *h)
{
	struct rip_pl_wm_req rq = { .kind = WM_MAPS, .addr = addr };

	return (int)rip_pl_box_ask(&rq, h);
}

long rip_pl_watch_pread(int file, void *buf, size_t len, uint64_t off)
{
	struct rip_pl_wm_req rq = {
		.kind = WM_FILE, .file = file, .buf = buf, .len = len, .off = off
	};

	return rip_pl_box_ask(&rq, NULL);
}

long rip_pl_watch_file_read(const char *path, void *buf, size_t len, uint64_t *size)
{
	struct rip_pl_wm_req rq = {
		.kind = WM_READ, .path = path, .buf = buf, .len = len, .size = size
	};

	return rip_pl_box_ask(&rq, NULL);
}

int rip_pl_watch_file_write(const char *path, const char *tmp, const void *a, size_t alen,
			    const void *b, size_t blen)
{
	struct rip_pl_wm_req rq = {
		.kind = WM_WRITE, .path = path, .tmp = tmp, .wb = { a, b }, .wlen = { alen, blen }
	};

	return (int)rip_pl_box_ask(&rq, NULL);
}

/* ---- small helpers on raw descriptors ---- */

static char *rip_pl_utoa(char *p, unsigned long v)
{
	char tmp[24];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* "TID/NAME" into buf: a path under /proc/self/task. */
static void rip_pl_task_path(char *buf, int32_t tid, const char *name)
{
	char *p = rip_pl_utoa(buf, (unsigned long)tid);

	*p++ = '/';
	while (*name)
		*p++ = *name++;
	*p = 0;
}

/* pread the whole (small) file into buf, NUL-terminated: bytes, or -errno. */
static long rip_pl_pread(int fd, char *buf, size_t len)
{
	long n;

	if (fd < 0)
		return -EBADF;
	do
		n = syscall(SYS_pread64, fd, buf, len - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return n;
}

static void rip_pl_close(int fd)
{
	if (fd >= 0)
		syscall(SYS_close, fd);
}

/* The sweep's descriptor of /proc/self/task: files are opened relative to it (shorter walks). */
static int rip_pl_taskdir = -1;

/*
 * The watcher runs under a seccomp filter (its own status says so; sticky:
 * a filter is never taken off), and its descriptor of /proc/self/mem then
 * (-1: not open; closed at the end of each sweep).  A sandbox's filter that
 * does not list process_vm_readv (systemd's SystemCallFilter= without
 * @debug, most hand-made ones) kills the whole process at that call: a
 * copy made by `rip ps PID` would end the program.  Reads of files are
 * what every sandbox allows.
 */
static bool rip_pl_sandboxed;
static int rip_pl_memfd = -1;

/* Look at the watcher's own status for a seccomp filter, until one is found. */
static void rip_pl_sandbox_look(void)
{
	char buf[4096];
	long fd, n;

	if (rip_pl_sandboxed)
		return;
	fd = syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = rip_pl_pread_all((int)fd, buf, sizeof(buf) - 1, 0);
	rip_pl_close((int)fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	rip_pl_sandboxed = rip_pl_status_seccomp(buf);
}

/* len bytes of our own memory at addr into buf, fewer before a page that cannot be read. */
static long rip_pl_self_read(void *buf, size_t len, uint64_t addr)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	if (!rip_pl_sandboxed)
		return syscall(SYS_process_vm_readv, getpid(), &local, 1UL, &remote, 1UL, 0UL);
	if (rip_pl_memfd < 0) {
		long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/mem", O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return -1;
		rip_pl_memfd = (int)fd;
	}
	return syscall(SYS_pread64, rip_pl_memfd, buf, len, (long)addr);
}

static int rip_pl_open(int32_t tid, const char *name)
{
	char path[64];
	long fd;

	rip_pl_task_path(path, tid, name);
	fd = syscall(SYS_openat, rip_pl_taskdir, path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

static const char *rip_pl_num(const char *p, uint64_t *out)
{
	uint64_t v = 0;
	bool neg = false;

	while (*p == ' ')
		p++;
	if (*p == '-') {
		neg = true;
		p++;
	}
	if (p[0] == '0' && p[1] == 'x') {
		for (p += 2;; p++) {
			unsigned d;

			if (*p >= '0' && *p <= '9')
				d = (unsigned)(*p - '0');
			else if (*p >= 'a' && *p <= 'f')
				d = (unsigned)(*p - 'a' + 10);
			else
				break;
			v = v << 4 | d;
		}
	} else {
		for (; *p >= '0' && *p <= '9'; p++)
			v = v * 10 + (uint64_t)(*p - '0');
	}
	*out = neg ? (uint64_t) - (int64_t)v : v;
	return p;
}

/* A syscall file's text: nr, args[6], sp, pc.  1 blocked, 0 running, -1 unreadable. */
struct rip_pl_sys {
	int64_t nr;
	uint64_t args[6];
	uint64_t sp, pc;
};

static int rip_pl_parse_syscall(const char *s, struct rip_pl_sys *o)
{
	uint64_t v;

	if (!strncmp(s, "running", 7))
		return 0;
	if (!((*s >= '0' && *s <= '9') || *s == '-'))
		return -1;
	memset(o, 0, sizeof(*o));
	s = rip_pl_num(s, &v);
	o->nr = (int64_t)v;
	if (o->nr >= 0)
		for (int i = 0; i < 6; i++)
			s = rip_pl_num(s, &o->args[i]);
	s = rip_pl_num(s, &o->sp);
	rip_pl_num(s, &o->pc);
	return o->sp ? 1 : -1;
}

/* FNV-1a of two strings: what a thread's syscall and schedstat files said. */
static uint64_t rip_pl_hash2(const char *a, const char *b)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *a; a++)
		h = (h ^ (uint8_t)*a) * 0x100000001b3ull;
	h = (h ^ 0xff) * 0x100000001b3ull;
	for (; *b; b++)
		h = (h ^ (uint8_t)*b) * 0x100000001b3ull;
	return h;
}

/* ---- records ---- */

/*
 * Seqlock writes (the watcher is the only writer): seq odd, fields, seq
 * even.  The release fence orders the odd seq before the fields; the
 * release store of the even seq orders the fields before it.  Both pair
 * with the reader's acquire load of seq and its acquire fence before the
 * second load (read/watch.c).
 */
static void rip_pl_seq_begin(uint32_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void rip_pl_seq_end(uint32_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE);
}

static struct rip_slot *rip_pl_slot(struct rip_file_hdr *h, uint32_t i)
{
	return (struct rip_slot *)((char *)h + h->slot_off + (size_t)i * RIP_SLOT_SIZE);
}

static struct rip_watch_copy *rip_pl_copy(struct rip_file_hdr *h, uint32_t i)
{
	return (struct rip_watch_copy *)((char *)h + h->watch_off + (size_t)i * h->watch_copy_size);
}

static void rip_pl_copy_free(struct rip_file_hdr *h, uint32_t i)
{
	struct rip_watch_copy *c = rip_pl_copy(h, i);

	if (W.backed[i]) {
		rip_pl_seq_begin(&c->seq);
		c->slot = 0;
		c->len = 0;
		rip_pl_seq_end(&c->seq);
	}
	W.owner[i] = 0;
}

/* The buffer slot si holds, or a free one (backed); UINT32_MAX when none is left. */
static uint32_t rip_pl_copy_get(struct rip_file_hdr *h, uint32_t si, uint32_t have)
{
	uint32_t n = h->watch_copies;

	if (have && have <= n && W.owner[have - 1] == si + 1)
		return have - 1;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = (W.next_free + k) % n;

		if (W.owner[i])
			continue;
		/*
		 * Back the page of the head only: process_vm_readv writes the stack
		 * as a kernel copy, which backs the pages it fills (a full tmpfs
		 * ends the copy short, with no SIGBUS): a buffer costs the pages its
		 * copy fills, not 16 KiB.
		 */
		if (!W.backed[i]) {
			if (__rip_file_commit(h->watch_off + (uint64_t)i * h->watch_copy_size,
					      RIP_WATCH_COPY_HDR))
				return UINT32_MAX; /* the tmpfs is full: no more copies */
			W.backed[i] = 1;
		}
		W.owner[i] = si + 1;
		W.next_free = (i + 1) % n;
		return i;
	}
	return UINT32_MAX;
}

static void rip_pl_watch_write(struct rip_slot *s, const struct rip_watch *w)
{
	struct rip_watch *d = &s->watch;

	rip_pl_seq_begin(&d->seq);
	d->flags = w->flags;
	d->nr = w->nr;
	d->copy = w->copy;
	d->sweep_ts = w->sweep_ts;
	d->since_ts = w->since_ts;
	d->sp = w->sp;
	d->pc = w->pc;
	memcpy(d->args, w->args, sizeof(d->args));
	d->copy_len = w->copy_len;
	d->state = w->state;
	rip_pl_seq_end(&d->seq);
}

/* ---- one sweep ---- */

struct rip_pl_sweep {
	uint64_t ts;
	uint32_t blocked, copied, moved, nocopy, denied;
};

static char rip_pl_state_letter(int32_t tid)
{
	char buf[512], *p;
	int fd = rip_pl_open(tid, "stat");
	long n = rip_pl_pread(fd, buf, sizeof(buf));

	rip_pl_close(fd);
	if (n <= 0 || !(p = strrchr(buf, ')')) || p[1] != ' ')
		return 0;
	return p[2];
}

/* Look at one thread that has no wait record; fill w (its old record on entry). */
static void rip_pl_probe(struct rip_file_hdr *h, uint32_t si, int32_t tid, struct rip_watch *w,
			 struct rip_pl_sweep *sw)
{
	char sys1[256], sys2[256], sch1[128], sch2[128];
	struct rip_watch old = *w;
	struct rip_pl_sys sc;
	int fsys, fsch, r;
	uint32_t ci = UINT32_MAX;

	memset(w, 0, sizeof(*w));
	w->flags = RIP_WATCH_SEEN;
	w->sweep_ts = sw->ts;
	fsys = rip_pl_open(tid, "syscall");
	if (fsys < 0) {
		if (fsys == -EACCES || fsys == -EPERM) {
			w->flags |= RIP_WATCH_DENIED;
			sw->denied++;
		} else {
			w->flags |= RIP_WATCH_GONE;
		}
		goto out_free;
	}
	fsch = rip_pl_open(tid, "schedstat");
	if (rip_pl_pread(fsch, sch1, sizeof(sch1)) < 0)
		sch1[0] = 0;
	if (rip_pl_pread(fsys, sys1, sizeof(sys1)) < 0) {
		w->flags |= RIP_WATCH_GONE; /* ESRCH: it exited under us */
		goto out_close;
	}
	r = rip_pl_parse_syscall(sys1, &sc);
	if (r <= 0) {
		w->flags |= r == 0 ? RIP_WATCH_RUNNING : RIP_WATCH_GONE;
		goto out_close;
	}
	sw->blocked++;
	w->flags |= RIP_WATCH_BLOCKED;
	w->nr = (int32_t)sc.nr;
	w->sp = sc.sp;
	w->pc = sc.pc;
	memcpy(w->args, sc.args, sizeof(w->args));
	/*
	 * Blocked at the same place as last time: since then, and in the same
	 * state (stat costs as much as the two other files together: read it
	 * only for a thread newly blocked here).
	 */
	if ((old.flags & RIP_WATCH_BLOCKED) && old.nr == w->nr && old.sp == w->sp &&
	    old.pc == w->pc && old.since_ts && old.state) {
		w->since_ts = old.since_ts;
		w->state = old.state;
	} else {
		w->since_ts = sw->ts;
		w->state = rip_pl_state_letter(tid);
	}
	/*
	 * Not run since its stack was copied (same syscall text, same run and
	 * wait times and switch count): the copy still holds; keep it uncopied.
	 */
	if (sch1[0] && (old.flags & RIP_WATCH_COPY) && old.copy && old.copy <= h->watch_copies &&
	    W.owner[old.copy - 1] == si + 1 && W.seen[old.copy - 1] == rip_pl_hash2(sys1, sch1) &&
	    old.sp == w->sp && old.pc == w->pc) {
		ci = old.copy - 1;
		w->flags |= RIP_WATCH_COPY;
		w->copy = old.copy;
		w->copy_len = old.copy_len;
		sw->copied++;
		goto out_close;
	}
	ci = h->watch_copies ? rip_pl_copy_get(h, si, old.copy) : UINT32_MAX;
	if (ci == UINT32_MAX) {
		w->flags |= RIP_WATCH_NOPOOL;
		sw->nocopy++;
	} else {
		struct rip_watch_copy *c = rip_pl_copy(h, ci);
		long n;

		rip_pl_seq_begin(&c->seq);
		n = rip_pl_self_read((char *)c + RIP_WATCH_COPY_HDR,
				     h->watch_copy_size - RIP_WATCH_COPY_HDR, sc.sp);
		c->slot = si + 1;
		c->tid = tid;
		c->len = n > 0 ? (uint32_t)n : 0;
		c->sweep_ts = sw->ts;
		c->sp = sc.sp;
		c->pc = sc.pc;
		c->nr = sc.nr;
		memcpy(c->args, sc.args, sizeof(c->args));
		/* Did it move while we copied?  Its syscall file and its switch counts say. */
		if (n <= 0 || rip_pl_pread(fsys, sys2, sizeof(sys2)) < 0 ||
		    strcmp(sys1, sys2) ||
		    (sch1[0] &&
		     (rip_pl_pread(fsch, sch2, sizeof(sch2)) < 0 || strcmp(sch1, sch2)))) {
			c->slot = 0;
			c->len = 0;
			rip_pl_seq_end(&c->seq);
			W.owner[ci] = 0;
			ci = UINT32_MAX;
			w->flags |= RIP_WATCH_MOVED;
			sw->moved++;
		} else {
			rip_pl_seq_end(&c->seq);
			W.seen[ci] = sch1[0] ? rip_pl_hash2(sys1, sch1) : 0;
			w->flags |= RIP_WATCH_COPY;
			w->copy = ci + 1;
			w->copy_len = c->len;
			sw->copied++;
		}
	}
out_close:
	rip_pl_close(fsch);
	rip_pl_close(fsys);
out_free:
	if (old.copy && old.copy <= h->watch_copies && old.copy - 1 != ci &&
	    W.owner[old.copy - 1] == si + 1)
		rip_pl_copy_free(h, old.copy - 1);
}

static int rip_pl_tid_cmp(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* The tasks of the process, sorted, into W.tids.  0 or -errno. */
static int rip_pl_list_tasks(void)
{
	char buf[8192];
	long fd, n;

	W.ntids = 0;
	fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((n = syscall(SYS_getdents64, (int)fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);
			uint64_t v;

			off += d->reclen;
			if (d->name[0] < '0' || d->name[0] > '9' || W.ntids >= WATCH_MAX_TASKS)
				continue;
			rip_pl_num(d->name, &v);
			W.tids[W.ntids++] = (int32_t)v;
		}
	}
	rip_pl_taskdir = (int)fd; /* closed at the end of the sweep */
	qsort(W.tids, W.ntids, sizeof(*W.tids), rip_pl_tid_cmp);
	return 0;
}

static int64_t rip_pl_tid_find(int32_t tid)
{
	size_t lo = 0, hi = W.ntids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (W.tids[mid] < tid)
			lo = mid + 1;
		else if (W.tids[mid] > tid)
			hi = mid;
		else
			return (int64_t)mid;
	}
	return -1;
}

static uint64_t rip_pl_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void rip_pl_sweep(struct rip_file_hdr *h)
{
	struct rip_pl_sweep sw = { .ts = rip_clock_ticks() };
	uint64_t t0 = rip_pl_mono_ns();
	uint32_t used = __atomic_load_n(&h->fresh, __ATOMIC_ACQUIRE), noslot = 0;

	if (used > h->slot_count)
		used = h->slot_count;
	if (rip_pl_list_tasks())
		return; /* no /proc: nothing to see (status stays as it was) */
	rip_pl_sandbox_look();
	memset(W.matched, 0, W.ntids);
	for (uint32_t i = 0; i < used; i++) {
		struct rip_slot *s = rip_pl_slot(h, i);
		struct rip_watch w;
		uint32_t seq1, seq2, kind;
		int32_t tid;
		int64_t at;

		rip_pl_box_serve(); /* a thread waits on it: not until the sweep's end */
		/* Relaxed: only a hint which slots to look at; the seqlock below decides. */
		if (__atomic_load_n(&s->kind, __ATOMIC_RELAXED) != RIP_KIND_THREAD ||
		    __atomic_load_n(&s->state, __ATOMIC_RELAXED) != RIP_SLOT_RUNNING)
			goto idle;
		tid = __atomic_load_n(&s->tid, __ATOMIC_RELAXED);
		if (tid <= 0 || tid == W.tid)
			goto idle;
		at = rip_pl_tid_find(tid);
		if (at >= 0)
			W.matched[at] = 1;
		/* A wait record (the wrappers' seqlock: pairs with their release of seq). */
		seq1 = __atomic_load_n(&s->wait.seq, __ATOMIC_ACQUIRE);
		kind = __atomic_load_n(&s->wait.kind, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		seq2 = __atomic_load_n(&s->wait.seq, __ATOMIC_RELAXED);
		w = s->watch;
		if (kind && seq1 == seq2 && !(seq1 & 1)) {
			if (w.copy && w.copy <= h->watch_copies && W.owner[w.copy - 1] == i + 1)
				rip_pl_copy_free(h, w.copy - 1);
			memset(&w, 0, sizeof(w));
			w.flags = RIP_WATCH_SEEN | RIP_WATCH_WAITREC;
			w.sweep_ts = sw.ts;
		} else if (at < 0) {
			if (w.copy && w.copy <= h->watch_copies && W.owner[w.copy - 1] == i + 1)
				rip_pl_copy_free(h, w.copy - 1);
			memset(&w, 0, sizeof(w));
			w.flags = RIP_WATCH_SEEN | RIP_WATCH_GONE;
			w.sweep_ts = sw.ts;
		} else {
			rip_pl_probe(h, i, tid, &w, &sw);
		}
		rip_pl_watch_write(s, &w);
		continue;
idle:
		/* A slot that is no thread's any more gives its buffer back. */
		if (s->watch.copy && s->watch.copy <= h->watch_copies &&
		    W.owner[s->watch.copy - 1] == i + 1) {
			rip_pl_copy_free(h, s->watch.copy - 1);
			rip_pl_seq_begin(&s->watch.seq);
			s->watch.copy = 0;
			s->watch.flags &= ~RIP_WATCH_COPY;
			rip_pl_seq_end(&s->watch.seq);
		}
	}
	rip_pl_close(rip_pl_taskdir);
	rip_pl_taskdir = -1;
	rip_pl_close(rip_pl_memfd);
	rip_pl_memfd = -1;
	for (size_t k = 0; k < W.ntids; k++)
		if (!W.matched[k] && W.tids[k] != W.tid)
			noslot++;
	/* Relaxed: counters for display, published by the release store of watch_done. */
	__atomic_store_n(&h->watch_tasks, (uint32_t)W.ntids, __ATOMIC_RELAXED);
	__atomic_store_n(&h->watch_blocked, sw.blocked, __ATOMIC_RELAXED);
	__atomic_store_n(&h->watch_copied, sw.copied, __ATOMIC_RELAXED);
	__atomic_store_n(&h->watch_moved, sw.moved, __ATOMIC_RELAXED);
	__atomic_store_n(&h->watch_nocopy, sw.nocopy, __ATOMIC_RELAXED);
	__atomic_store_n(&h->watch_noslot, noslot, __ATOMIC_RELAXED);
	__atomic_store_n(&h->watch_denied, sw.denied, __ATOMIC_RELAXED);
	/* Some thread's files refused us: a non-dumpable process (say so, keep trying). */
	if (sw.denied)
		__atomic_store_n(&h->watch_err, EACCES, __ATOMIC_RELAXED);
	__atomic_store_n(&h->watch_status, sw.denied ? RIP_WATCHER_DENIED : RIP_WATCHER_RUNNING,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&h->watch_sweep_ns, rip_pl_mono_ns() - t0, __ATOMIC_RELAXED);
	__atomic_store_n(&h->watch_sweep_ts, rip_clock_ticks(), __ATOMIC_RELAXED);
	__atomic_store_n(&h->watch_sweeps, h->watch_sweeps + 1, __ATOMIC_RELAXED);
}

/* ---- the thread ---- */

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/*
 * A descriptor table and filesystem state of the watcher's own, emptied of
 * the program's files that unshare copied into it (see the top of the
 * file).  Raw system calls: the wrappers must not see them.  0 or -errno.
 */
static int rip_pl_watch_private(void)
{
	char buf[4096];
	long dir, n;

	if (syscall(SYS_unshare, CLONE_FILES | CLONE_FS))
		return -errno;
	if (syscall(SYS_close_range, 0U, ~0U, 0U) == 0)
		return 0;
	/* Before Linux 5.9: the numbers the table holds, from /proc/self/fd (ours now). */
	dir = syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	while ((n = syscall(SYS_getdents64, (int)dir, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			const struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (const void *)(buf + off);
			uint64_t fd;

			off += d->reclen;
			if (d->name[0] < '0' || d->name[0] > '9')
				continue;
			rip_pl_num(d->name, &fd);
			if (fd != (uint64_t)dir)
				syscall(SYS_close, (int)fd);
		}
	}
	syscall(SYS_close, (int)dir);
	return n < 0 ? -errno : 0;
}

static void *rip_pl_watch_main(void *arg)
{
	struct rip_file_hdr *h = arg;
	size_t slots = h->watch_copies ? h->watch_copies : 1;
	int err;

	rip_pl_self.guard = 1; /* for good: the hooks forward our calls */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	err = rip_pl_watch_private();
	if (err) {
		__atomic_store_n(&h->watch_err, -err, __ATOMIC_RELAXED);
		__atomic_store_n(&h->watch_status, RIP_WATCHER_FAILED, __ATOMIC_RELEASE);
		return NULL;
	}
	prctl(PR_SET_NAME, "rip-watch", 0, 0, 0);
	for (int i = 0; i < RIP_PL_WF_N; i++)
		rip_pl_wf[i] = -1;
	rip_pl_taskdir = rip_pl_memfd = -1; /* numbers of an earlier watcher's table */
	W.tid = (int32_t)syscall(SYS_gettid);
	W.seen = mmap(NULL, slots * (sizeof(uint32_t) + sizeof(uint64_t) + 1),
		      PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	W.tids = mmap(NULL, (size_t)WATCH_MAX_TASKS * (sizeof(int32_t) + 1), PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (W.seen == MAP_FAILED || W.tids == MAP_FAILED) {
		__atomic_store_n(&h->watch_err, ENOMEM, __ATOMIC_RELAXED);
		__atomic_store_n(&h->watch_status, RIP_WATCHER_FAILED, __ATOMIC_RELEASE);
		return NULL;
	}
	W.owner = (uint32_t *)(W.seen + slots);
	W.backed = (uint8_t *)(W.owner + slots);
	W.matched = (uint8_t *)(W.tids + WATCH_MAX_TASKS);
	W.next_free = 0;
	/* Buffers named in the file by an earlier watcher (before a fork or unshare) are dropped. */
	for (uint32_t i = 0, used = h->fresh < h->slot_count ? h->fresh : h->slot_count; i < used;
	     i++) {
		struct rip_slot *s = rip_pl_slot(h, i);

		if (s->watch.copy) {
			rip_pl_seq_begin(&s->watch.seq);
			s->watch.copy = 0;
			s->watch.flags &= ~RIP_WATCH_COPY;
			rip_pl_seq_end(&s->watch.seq);
		}
	}
	__atomic_store_n(&h->watch_tid, W.tid, __ATOMIC_RELAXED);
	__atomic_store_n(&h->watch_period_ms, W.period_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&h->watch_status, RIP_WATCHER_RUNNING, __ATOMIC_RELEASE);
	for (;;) {
		uint32_t req = __atomic_load_n(&h->watch_req, __ATOMIC_ACQUIRE);
		uint64_t wait_ms, end;

		if (__atomic_load_n(&W.stop, __ATOMIC_ACQUIRE) ||
		    (__atomic_load_n(&h->proc_flags, __ATOMIC_ACQUIRE) & RIP_P_CLOSED))
			break;
		rip_pl_box_serve();
		rip_pl_fn_serve(h); /* a request to patch functions (fnpatch.c), if one waits */
		rip_pl_sweep(h);
		/* A calibration pair every sweep: readers correct the TSC's rate with them. */
		rip_clock_pair_add(h);
		/* Release: the records and counters of the sweep before the word (rip ps acquires). */
		__atomic_store_n(&h->watch_done, req, __ATOMIC_RELEASE);
		rip_pl_futex(&h->watch_done, FUTEX_WAKE, INT32_MAX, NULL);
		wait_ms = h->watch_sweep_ns / 50000u; /* 20 times the sweep, in ms */
		if (wait_ms < W.period_ms)
			wait_ms = W.period_ms;
		end = rip_pl_mono_ns() + wait_ms * 1000000u;
		/*
		 * Asked again meanwhile: at once.  Else sleep until asked, stopped or
		 * the period; a wake with watch_req as it was is a request in the
		 * maps mailbox, answered without a sweep.
		 */
		for (;;) {
			uint64_t now = rip_pl_mono_ns(), left = end - now;
			struct timespec ts = { (time_t)(left / 1000000000u),
					       (long)(left % 1000000000u) };

			rip_pl_box_serve();
			if (now >= end || __atomic_load_n(&h->watch_req, __ATOMIC_ACQUIRE) != req ||
			    __atomic_load_n(&W.stop, __ATOMIC_ACQUIRE))
				break;
			rip_pl_futex(&h->watch_req, FUTEX_WAIT, req, &ts);
		}
	}
	rip_pl_box_serve(); /* one posted before the stop was seen */
	__atomic_store_n(&h->watch_tid, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&h->watch_status, RIP_WATCHER_STOPPED, __ATOMIC_RELEASE);
	munmap(W.seen, slots * (sizeof(uint32_t) + sizeof(uint64_t) + 1));
	munmap(W.tids, (size_t)WATCH_MAX_TASKS * (sizeof(int32_t) + 1));
	return NULL;
}

void rip_pl_watch_start(void)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	struct rip_file_hdr *h;
	pthread_attr_t attr;
	sigset_t all, old;
	int expect = W_IDLE, err;

	/* Relaxed: enabled is set once by the constructor, before any thread of the program. */
	if (RIP_LIKELY(!__atomic_load_n(&W.enabled, __ATOMIC_RELAXED)) ||
	    RIP_LIKELY(__atomic_load_n(&W.state, __ATOMIC_RELAXED) != W_IDLE))
		return;
	/* One caller starts it: acquire/release pair with the store of W_IDLE in the stops. */
	if (!__atomic_compare_exchange_n(&W.state, &expect, W_STARTING, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	h = __rip_file_hdr();
	if (!h || !RIP_PL_REAL(real, "pthread_create")) {
		__atomic_store_n(&W.state, W_IDLE, __ATOMIC_RELEASE);
		return;
	}
	W.stop = 0;
	/* Every signal blocked in the new thread from its first instruction: it inherits the mask. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_attr_init(&attr);
	if (!err) {
		struct rip_pl_thread *t = &rip_pl_self;
		uintptr_t guard = t->guard;

		pthread_attr_setstacksize(&attr, WATCH_STACK);
		/*
		 * Guard up: what pthread_create allocates for the new thread (its
		 * DTV) is ours, not the program's (a block its leak report showed).
		 */
		t->guard = rip_pl_guard_up();
		__atomic_signal_fence(__ATOMIC_SEQ_CST); /* pairs with rip_pl_enter's check */
		err = real(&W.th, &attr, rip_pl_watch_main, h);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->guard = guard;
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		__atomic_store_n(&h->watch_err, err, __ATOMIC_RELAXED);
		__atomic_store_n(&h->watch_status, RIP_WATCHER_FAILED, __ATOMIC_RELEASE);
		__atomic_store_n(&W.state, W_IDLE, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&W.state, W_RUNNING, __ATOMIC_RELEASE);
}

/*
 * Stop the watcher and wait until the kernel no longer counts its thread
 * (pthread_join returns when its tid is cleared, a little before the
 * kernel unlists it: tgkill says when it is gone).  True when it ran.
 */
static bool rip_pl_watch_stop(void)
{
	struct rip_file_hdr *h = __rip_file_hdr();
	int expect = W_RUNNING;
	int32_t tid;

	if (!__atomic_compare_exchange_n(&W.state, &expect, W_STARTING, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return false;
	/* Release: pairs with the watcher's acquire loads of stop. */
	__atomic_store_n(&W.stop, 1, __ATOMIC_RELEASE);
	if (h) {
		/* A new value, so that a watcher about to sleep on the old one does not. */
		__atomic_fetch_add(&h->watch_req, 1, __ATOMIC_SEQ_CST);
		rip_pl_futex(&h->watch_req, FUTEX_WAKE, INT32_MAX, NULL);
	}
	tid = W.tid;
	pthread_join(W.th, NULL);
	for (int i = 0; tid > 0 && i < 10000; i++) {
		struct timespec ts = { 0, 100000 };

		if (syscall(SYS_tgkill, getpid(), tid, 0) && errno == ESRCH)
			break;
		nanosleep(&ts, NULL);
	}
	W.tid = 0;
	return true;
}

/*
 * The program's thread or process could not be made (EAGAIN): when the
 * watcher runs, its thread counts against the user's RLIMIT_NPROC, and the
 * program would have had it untraced.  Stop it for good (a restart would
 * take the slot back): the file says stopped, with EAGAIN.  True when it
 * ran, and the caller may try again.
 */
bool rip_pl_watch_yield(void)
{
	struct rip_file_hdr *h = __rip_file_hdr();

	if (!rip_pl_watch_stop())
		return false;
	/* W.state stays W_STARTING: no one starts it again. */
	if (h) {
		__atomic_store_n(&h->watch_err, EAGAIN, __ATOMIC_RELAXED);
		/* After the watcher's own store of STOPPED (it was joined); readers load it relaxed. */
		__atomic_store_n(&h->watch_status, RIP_WATCHER_STOPPED, __ATOMIC_RELEASE);
	}
	return true;
}

void rip_pl_watch_resume(void)
{
	__atomic_store_n(&W.state, W_IDLE, __ATOMIC_RELEASE);
	rip_pl_watch_start();
}

/*
 * In a fork child: the watcher did not come along, and the child is
 * single-threaded.  Its own first pthread_create starts one, as in the
 * parent (starting one here made the child multithreaded: setns and
 * unshare(CLONE_NEWUSER) then failed in it, and pthread_create is no call
 * for a fork child of a multithreaded program).
 */
void rip_pl_watch_fork_child(void)
{
	struct rip_file_hdr *h = __rip_file_hdr();

	if (!__atomic_load_n(&W.enabled, __ATOMIC_RELAXED))
		return;
	W.state = W_IDLE;
	W.tid = 0;
	W.stop = 0;
	/* A request of a thread the child does not have: the box is the child's. */
	WM.state = WM_FREE;
	if (!h)
		return;
	/* The child's copy of the parent's words: no watcher until ours runs. */
	h->watch_tid = 0;
	h->watch_status = W.enabled ? RIP_WATCHER_PENDING : RIP_WATCHER_OFF;
}

void rip_pl_watch_init(void)
{
	const char *v = secure_getenv("RIP_WATCH"), *p = secure_getenv("RIP_WATCH_PERIOD");
	struct rip_file_hdr *h = __rip_file_hdr();

	if (!h)
		return;
	if (p && *p) {
		char *end;
		unsigned long ms = strtoul(p, &end, 10);

		if (!*end && ms >= 10 && ms <= 3600000)
			W.period_ms = (uint32_t)ms;
	}
	if (v && !strcmp(v, "0")) {
		h->watch_status = RIP_WATCHER_OFF;
		return;
	}
	h->watch_status = RIP_WATCHER_PENDING;
	/* Before the program's threads exist: rip_pl_watch_start reads it relaxed. */
	__atomic_store_n(&W.enabled, 1, __ATOMIC_RELEASE);
	pthread_atfork(NULL, NULL, rip_pl_watch_fork_child);
}

/* ---- calls the kernel refuses to a multithreaded process ---- */

bool rip_pl_watch_pause(bool is_setns, long flags)
{
	/* setns type 0: any kind, a user namespace maybe. */
	if (is_setns ? flags && !(flags & CLONE_NEWUSER) : !(flags & CLONE_NEWUSER))
		return false;
	return rip_pl_watch_stop();
}

/*
 * fork at the user's RLIMIT_NPROC: as pthread_create's wrapper (thread.c),
 * the watcher's thread gives way and the call is made again.
 */
RIP_PL_EXPORT pid_t fork(void)
{
	static pid_t (*real)(void);
	pid_t pid;

	if (!RIP_PL_REAL(real, "fork"))
		return rip_pl_enosys();
	pid = real();
	if (pid < 0 && errno == EAGAIN && rip_pl_watch_yield())
		pid = real();
	return pid;
}

RIP_PL_EXPORT int unshare(int flags)
{
	static int (*real)(int);
	bool stopped;
	int ret, e;

	if (!RIP_PL_REAL(real, "unshare"))
		return rip_pl_enosys();
	stopped = rip_pl_watch_pause(false, flags);
	ret = real(flags);
	e = errno;
	if (stopped)
		rip_pl_watch_resume();
	errno = e;
	return ret;
}

RIP_PL_EXPORT int setns(int fd, int nstype)
{
	static int (*real)(int, int);
	bool stopped;
	int ret, e;

	if (!RIP_PL_REAL(real, "setns"))
		return rip_pl_enosys();
	stopped = rip_pl_watch_pause(true, nstype);
	ret = real(fd, nstype);
	e = errno;
	if (stopped)
		rip_pl_watch_resume();
	errno = e;
	return ret;
}
