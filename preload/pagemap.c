// SPDX-License-Identifier: Apache-2.0
/*
 * preload/pagemap.c - snapshots of the traced program's writable memory for
 * `rip pagemap`: for every private writable mapping, which of its pages are
 * present, swapped, or present and all zero, as the mem:mapping,
 * mem:pagemap and mem:pagemap_end events of rip/resource.h.  One snapshot
 * is taken at exit (a destructor of this library, which runs after the
 * program's atexit handlers) and one whenever the signal named by
 * RIP_PAGEMAP_SIGNAL arrives.
 *
 * A snapshot reads /proc/self/maps and /proc/self/pagemap with raw system
 * calls into a scratch area it maps and unmaps itself, and copies present
 * pages with process_vm_readv (or pread of /proc/self/mem, where that is
 * refused or a seccomp filter holds the thread: pm_sandboxed) to test them for
 * zero: a page that vanishes under us (another thread unmaps it) is a failed
 * copy, never a fault.  A process with one thread left reads its anonymous
 * memory in place instead: no other thread can unmap it.  No malloc, no stdio, no lock: the same code runs in
 * the signal handler.
 *
 * When the watcher thread runs (watch.c), it opens and reads those files
 * for the snapshot, in its own descriptor table (rip_pl_watch_pread): no
 * descriptor of ours may take a number the program's other threads
 * expect.  Without a watcher (a single-threaded program, RIP_WATCH=0) the
 * snapshot opens them itself, for as long as it runs.  A signal that interrupts this library's own work (a
 * hook, an event being written) or a thread that has no event ring yet is
 * remembered instead, and the next hook to leave takes the snapshot.
 *
 * Shared mappings are left out (they are not the program's private memory,
 * and the ring file itself is one of them), and so are mappings that are not
 * writable ([vvar], [vsyscall], PROT_NONE guard pages, code) and the
 * tracer's own tables (rip_pl_own_maps): tens of MiB reserved in every
 * traced process, which the program never asked for.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <internal/pagemap.h>

#include "common.h"
#include "watch.h"

/* u64 per mem:pagemap: an event of 64 fits the smallest packet librip allows (1 KiB) */
#define PM_CHUNK_WORDS 64u
#define PM_CHUNK_PAGES (PM_CHUNK_WORDS * 32u)
#define PM_WIN_PAGES (8u * PM_CHUNK_PAGES) /* pagemap entries one request to the watcher reads */
#define PM_MAX_PAGES (16u << 20) /* pages described per mapping at most (64 GiB of 4 KiB pages) */
#define PM_READ_PAGES 64u	 /* pages copied per process_vm_readv for the zero test */
#define PM_LINE_MAX 4352u	 /* a line of /proc/self/maps: PATH_MAX and the fields */
#define PM_MAPS_BUF 8192u

/* The scratch area of one snapshot, mapped for it and unmapped after. */
struct pm_scratch {
	uint64_t win[PM_WIN_PAGES]; /* pagemap entries of pages [win_pg, win_pg + win_n) */
	uint64_t win_pg;
	uint32_t win_n;
	uint64_t words[PM_CHUNK_WORDS];	 /* the chunk's 2-bit codes */
	struct iovec remote[PM_READ_PAGES];
	char line[PM_LINE_MAX];
	char maps[PM_MAPS_BUF];
	struct rip_pl_range own[RIP_PL_OWN_MAPS]; /* the tracer's own mappings, by start */
	uint32_t nown;
	/* then PM_READ_PAGES pages of copy buffer, page aligned */
};

static uint32_t pm_page_size;
static uint32_t pm_seq;	 /* snapshots started by this process */
static int pm_busy;	 /* a snapshot is being taken (by any thread) */
int rip_pl_pm_pending;	 /* a requested snapshot waits for the next rip_pl_leave */
static bool pm_at_exit = true;
static int pm_copy_way;	 /* 0 process_vm_readv, 1 /proc/self/mem, 2 none works */

/*
 * The files of one snapshot (RIP_PL_WF_*): open in the watcher's own
 * descriptor table when a watcher runs (remote), else in ours.
 */
struct pm_files {
	int fd[RIP_PL_WF_N]; /* ours (-1: not open) */
	bool remote;	     /* the watcher reads them (rip_pl_watch_pread) */
	int mem;	     /* /proc/self/mem is open: 1, it is not: 0, not tried yet: -1 */
	int err;	     /* the watcher stopped answering: the snapshot's error */
};

static long pm_sys(long nr, long a, long b, long c, long d)
{
	return syscall(nr, a, b, c, d);
}

static int pm_open(const char *path)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
}

static void pm_close(int fd)
{
	if (fd >= 0)
		syscall(SYS_close, fd);
}

/* pread until len or the end: bytes read, or -1. */
static ssize_t pm_pread(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		long n = pm_sys(SYS_pread64, fd, (long)((char *)buf + done), (long)(len - done),
				(long)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return done ? (ssize_t)done : n;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static bool pm_page_zero(const void *p, size_t len)
{
	const uint64_t *w = p;

	for (size_t i = 0; i < len / 8; i += 8) {
		uint64_t acc = w[i] | w[i + 1] | w[i + 2] | w[i + 3] | w[i + 4] | w[i + 5] |
			       w[i + 6] | w[i + 7];

		if (acc)
			return false;
	}
	return true;
}

/* pread of a snapshot's file until len or the end: bytes read, or -1 (errno set). */
static ssize_t pm_fread(struct pm_files *f, int file, void *buf, size_t len, uint64_t off)
{
	long n;

	if (!f->remote)
		return pm_pread(f->fd[file], buf, len, off);
	if (f->err) {
		errno = -f->err;
		return -1;
	}
	n = rip_pl_watch_pread(file, buf, len, off);
	/* Gone, or stuck for a second: the rest of the snapshot fails at once. */
	if (n == -EAGAIN)
		n = f->err = -ETIMEDOUT;
	if (n < 0) {
		errno = (int)-n;
		return -1;
	}
	return n;
}

/*
 * Open the files of a snapshot: in the watcher's table when one answers,
 * and then the maps' first bytes are in s->maps already (their count in
 * *have); else in ours, as the only way left (no watcher runs: a
 * single-threaded program, RIP_WATCH=0).  0 or -errno.
 */
static int pm_files_open(struct pm_files *f, struct pm_scratch *s, size_t *have)
{
	long n = rip_pl_watch_pread(RIP_PL_WF_MAPS, s->maps, PM_MAPS_BUF, 0);

	for (int i = 0; i < RIP_PL_WF_N; i++)
		f->fd[i] = -1;
	if (n != -EAGAIN) {
		f->remote = true;
		if (n < 0)
			return (int)n;
		*have = (size_t)n;
		n = rip_pl_watch_pread(RIP_PL_WF_PAGEMAP, NULL, 0, 0); /* opened only */
		if (n < 0)
			return n == -EAGAIN ? -ETIMEDOUT : (int)n;
		f->mem = -1; /* opened when process_vm_readv is refused */
		return 0;
	}
	f->fd[RIP_PL_WF_MAPS] = pm_open("/proc/self/maps");
	f->fd[RIP_PL_WF_PAGEMAP] = pm_open("/proc/self/pagemap");
	if (f->fd[RIP_PL_WF_MAPS] < 0 || f->fd[RIP_PL_WF_PAGEMAP] < 0)
		return -errno;
	if (pm_copy_way < 2)
		f->fd[RIP_PL_WF_MEM] = pm_open("/proc/self/mem");
	f->mem = f->fd[RIP_PL_WF_MEM] >= 0;
	return 0;
}

/* Ours are closed; the watcher keeps its own until the next snapshot starts. */
static void pm_files_close(struct pm_files *f)
{
	for (int i = 0; i < RIP_PL_WF_N; i++)
		pm_close(f->fd[i]);
}

/*
 * Copy the pages of remote[0..n) into buf: how many of the first pages were
 * copied whole (the one after them could not be read), or -1 when no way of
 * copying works in this process.
 */
static long pm_copy(struct pm_scratch *s, struct pm_files *f, char *buf, uint32_t n)
{
	size_t ps = pm_page_size;

	if (pm_copy_way == 0) {
		struct iovec local = { .iov_base = buf, .iov_len = n * ps };
		long r = syscall(SYS_process_vm_readv, (long)syscall(SYS_getpid), &local, 1L,
				 s->remote, (long)n, 0L);

		if (r >= 0)
			return r / (long)ps;
		if (errno != ENOSYS && errno != EPERM && errno != EACCES)
			return 0; /* the first page is gone */
		pm_copy_way = 1;
	}
	if (pm_copy_way == 1 && f->mem < 0)
		f->mem = !pm_fread(f, RIP_PL_WF_MEM, NULL, 0, 0);
	if (pm_copy_way == 1 && f->mem > 0) {
		uint32_t i;

		for (i = 0; i < n; i++)
			if (pm_fread(f, RIP_PL_WF_MEM, buf + i * ps, ps,
				     (uintptr_t)s->remote[i].iov_base) != (ssize_t)ps)
				break;
		return i;
	}
	pm_copy_way = 2;
	return -1;
}

/* Is page i of the chunk in s->words present (and not yet known zero)? */
static inline bool pm_present(const struct pm_scratch *s, uint32_t i)
{
	return ((s->words[i / 32] >> (i % 32 * 2)) & 3) == RIP_PM_PRESENT;
}

/* Page i of the chunk is present and all zero. */
static inline void pm_mark_zero(struct pm_scratch *s, uint32_t i)
{
	s->words[i / 32] |= (uint64_t)RIP_PM_ZERO << (i % 32 * 2);
}

/* Zero-test the present pages of the chunk in s->words; false when no copy works. */
static bool pm_zero_test(struct pm_scratch *s, struct pm_files *f, uint64_t start, uint32_t npages)
{
	char *buf = (char *)s + ((sizeof(*s) + pm_page_size - 1) & ~(size_t)(pm_page_size - 1));
	uint32_t idx[PM_READ_PAGES];
	uint32_t i = 0;

	while (i < npages) {
		uint32_t n = 0;
		long got;

		for (; i < npages && n < PM_READ_PAGES; i++) {
			if (!pm_present(s, i))
				continue;
			idx[n] = i;
			s->remote[n].iov_base =
				(void *)(uintptr_t)(start + (uint64_t)i * pm_page_size);
			s->remote[n].iov_len = pm_page_size;
			n++;
		}
		if (!n)
			break;
		got = pm_copy(s, f, buf, n);
		if (got < 0)
			return false;
		for (long k = 0; k < got; k++)
			if (pm_page_zero(buf + k * pm_page_size, pm_page_size))
				pm_mark_zero(s, idx[k]);
		/* Page idx[got] could not be read (it is left "present"): go on after it. */
		if ((uint32_t)got < n)
			i = idx[got] + 1;
	}
	return true;
}

/*
 * Zero-test the present pages of the chunk in place: only when no other
 * thread can unmap them meanwhile (pm_single_thread) and the mapping is
 * anonymous memory, where reading a present page has no effect but the read.
 * Copying them one page at a time (each pinned by the kernel) was most of
 * what the exit snapshot of a compiler's 100 MB heap cost.
 */
static void pm_zero_direct(struct pm_scratch *s, uint64_t start, uint32_t npages)
{
	for (uint32_t i = 0; i < npages; i++)
		if (pm_present(s, i) &&
		    pm_page_zero((const void *)(uintptr_t)(start + (uint64_t)i * pm_page_size),
				 pm_page_size))
			pm_mark_zero(s, i);
}

/*
 * Does a seccomp filter hold this thread (its /proc status)?  Then the
 * zero test reads /proc/self/mem, never process_vm_readv, at which a
 * sandbox's filter that does not list it kills the process (the exit
 * snapshot of every sandboxed program under rip run --mem).  Read by the
 * watcher when it reads for us, else here; s->line is used.  Unknown (a
 * non-dumpable process's files are root's): no.
 */
static bool pm_sandboxed(struct pm_scratch *s, const struct pm_files *f)
{
	char path[40] = "/proc/self/task/", *p = path + 16, d[12];
	long tid = syscall(SYS_gettid), n;
	uint64_t size;
	int k = 0, fd;

	if (!f->remote) {
		fd = pm_open("/proc/thread-self/status");
		if (fd < 0)
			return false;
		n = pm_pread(fd, s->line, PM_LINE_MAX - 1, 0);
		pm_close(fd);
	} else {
		do
			d[k++] = (char)('0' + tid % 10);
		while ((tid /= 10) && k < (int)sizeof(d));
		while (k)
			*p++ = d[--k];
		memcpy(p, "/status", 8);
		n = rip_pl_watch_file_read(path, s->line, PM_LINE_MAX - 1, &size);
	}
	if (n <= 0)
		return false;
	s->line[n] = 0;
	return rip_pl_status_seccomp(s->line);
}

/* Is this thread the process's only one (/proc/self/status)?  s->line is used. */
static bool pm_single_thread(struct pm_scratch *s)
{
	int fd = pm_open("/proc/self/status");
	const char *t;
	ssize_t n;

	if (fd < 0)
		return false;
	n = pm_pread(fd, s->line, PM_LINE_MAX - 1, 0);
	pm_close(fd);
	if (n <= 0)
		return false;
	s->line[n] = 0;
	t = strstr(s->line, "\nThreads:");
	if (!t)
		return false;
	t += 9;
	while (*t == ' ' || *t == '\t')
		t++;
	return t[0] == '1' && t[1] == '\n';
}

/*
 * The pagemap entries of pages [pg, pg + n), n <= PM_WIN_PAGES: from the
 * window an earlier read filled, or read now.  When the watcher reads for
 * us, a read takes PM_WIN_PAGES entries (64 MiB of 4 KiB pages) at once:
 * a request costs a wake of the watcher and switches, the kernel's walk
 * of a range where nothing is mapped almost nothing, and the small
 * mappings that follow a small one are mostly in its window.
 */
static const uint64_t *pm_entries(struct pm_scratch *s, struct pm_files *f, uint64_t pg, uint32_t n)
{
	uint32_t want = f->remote ? PM_WIN_PAGES : n;
	ssize_t got;

	if (pg >= s->win_pg && pg - s->win_pg + n <= s->win_n)
		return s->win + (pg - s->win_pg);
	got = pm_fread(f, RIP_PL_WF_PAGEMAP, s->win, (size_t)want * 8, pg * 8);
	/* What could not be read (the mapping went away, the end of the space) is not present. */
	if (got < 0)
		got = 0;
	memset((char *)s->win + got / 8 * 8, 0, (size_t)want * 8 - (size_t)got / 8 * 8);
	s->win_pg = pg;
	s->win_n = want;
	return s->win;
}

/*
 * Describe the mapping [start, end): its mem:mapping and mem:pagemap events.
 * direct: its pages may be read in place (pm_zero_direct).
 */
static void pm_mapping(struct pm_scratch *s, struct pm_files *f, uint32_t seq, uint64_t start,
		       uint64_t end, uint32_t prot, const char *path, bool direct)
{
	uint64_t npages = (end - start) / pm_page_size;
	uint32_t flags = 0;
	bool zero = (prot & PROT_READ) && pm_copy_way != 2;

	if (npages > PM_MAX_PAGES) {
		npages = PM_MAX_PAGES;
		flags |= RIP_PM_TRUNCATED;
	}
	if (zero)
		flags |= RIP_PM_ZERO_TESTED;
	rip_pl_mem_mapping(start, end, seq, prot, flags, pm_page_size, path);
	for (uint64_t first = 0; first < npages; first += PM_CHUNK_PAGES) {
		uint32_t n = (uint32_t)(npages - first < PM_CHUNK_PAGES ? npages - first
									: PM_CHUNK_PAGES);
		uint64_t addr = start + first * pm_page_size;
		const uint64_t *ent = pm_entries(s, f, addr / pm_page_size, n);
		bool any = false;

		memset(s->words, 0, sizeof(s->words));
		for (uint32_t i = 0; i < n; i++) {
			uint64_t code = ent[i] >> 63	   ? RIP_PM_PRESENT :
					(ent[i] >> 62) & 1 ? RIP_PM_SWAPPED :
							     RIP_PM_ABSENT;

			s->words[i / 32] |= code << (i % 32 * 2);
			any |= code != RIP_PM_ABSENT;
		}
		if (!any)
			continue; /* chunks with no page in memory or swap are left out */
		if (zero && direct)
			pm_zero_direct(s, addr, n);
		else if (zero && !pm_zero_test(s, f, addr, n))
			zero = false; /* the flag already went out: the tool sees fewer zeros */
		rip_pl_mem_pagemap(addr, seq, n, s->words, (n + 31) / 32);
	}
}

/* A hexadecimal number of a maps line; advances *p past it. */
static uint64_t pm_hex(const char **p)
{
	uint64_t v = 0;

	for (;; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uint64_t)(c - 'a' + 10);
		else
			return v;
	}
}

/*
 * One line of /proc/self/maps ("start-end perms offset dev inode   path"):
 * describe it if it is private and writable.  Returns the mappings
 * described (pieces, when the tracer's tables are cut out of it).
 */
static int pm_line(struct pm_scratch *s, struct pm_files *f, uint32_t seq, uintptr_t skip_lo,
		   uintptr_t skip_hi, bool single)
{
	const char *p = s->line;
	uint64_t start, end;
	uint32_t prot = 0;
	int n = 0;

	start = pm_hex(&p);
	if (*p++ != '-')
		return 0;
	end = pm_hex(&p);
	if (*p++ != ' ' || strlen(p) < 4 || end <= start)
		return 0;
	if (p[1] != 'w' || p[3] != 'p')
		return 0;
	if (start < skip_hi && end > skip_lo)
		return 0; /* our own scratch area */
	prot = (p[0] == 'r' ? PROT_READ : 0) | PROT_WRITE | (p[2] == 'x' ? PROT_EXEC : 0);
	/* offset, dev, inode, then spaces up to the path (empty for anonymous memory) */
	for (int field = 0; field < 4 && *p; field++) {
		while (*p && *p != ' ')
			p++;
		while (*p == ' ')
			p++;
	}
	/*
	 * anonymous: no path, or [heap], [stack], [anon:NAME].  The tracer's
	 * own tables are cut out (the kernel may have merged them with each
	 * other or with a mapping of the program's): the pieces left are the
	 * program's.
	 */
	for (uint32_t i = 0; i < s->nown && start < end; i++) {
		const struct rip_pl_range *o = &s->own[i];

		if (o->hi <= start || o->lo >= end)
			continue;
		if (o->lo > start)
			pm_mapping(s, f, seq, start, o->lo, prot, p, single && (!*p || *p == '['));
		n += o->lo > start;
		start = o->hi;
	}
	if (start >= end)
		return n;
	pm_mapping(s, f, seq, start, end, prot, p, single && (!*p || *p == '['));
	return n + 1;
}

/*
 * Take one snapshot, guard up; why is RIP_PM_EXIT or RIP_PM_SIGNAL.  Its
 * files are read by the watcher, in the watcher's own descriptor table,
 * when one runs: opened here, they took the lowest free numbers of the
 * program's table for as long as the snapshot ran, where another thread's
 * open, dup or close_range expects its own (tests/integ/trust-pagemapfd).
 */
static void pm_snapshot(uint32_t why)
{
	size_t len = ((sizeof(struct pm_scratch) + pm_page_size - 1) &
		      ~(size_t)(pm_page_size - 1)) + (size_t)PM_READ_PAGES * pm_page_size;
	struct pm_files f = { .remote = false };
	struct pm_scratch *s;
	uint32_t seq, nmaps = 0;
	size_t have = 0, used = 0;
	uint64_t all = ~0ull, held = 0, off; /* the kernel's signal sets (64 signals here) */
	bool single = false, masked = false, eof;
	int err = 0;
	long m;

	if (!pm_page_size || !rip_category_enabled(RIP_CAT_MEM))
		return;
	/* One snapshot at a time (scratch area, seq): acquire pairs with the release below. */
	if (__atomic_exchange_n(&pm_busy, 1, __ATOMIC_ACQUIRE))
		return;
	/* Relaxed: a request that comes in from now on is met by this snapshot or the next. */
	__atomic_store_n(&rip_pl_pm_pending, 0, __ATOMIC_RELAXED);
	seq = ++pm_seq;
	/*
	 * Between two inaccessible pages, so that the kernel cannot merge it
	 * with a mapping of the program's, which we would then have to cut.
	 */
	m = syscall(SYS_mmap, 0L, (long)(len + 2 * pm_page_size), (long)PROT_NONE,
		    (long)(MAP_PRIVATE | MAP_ANONYMOUS), -1L, 0L);
	if (m == -1) {
		err = -ENOMEM;
		goto out_end;
	}
	s = (struct pm_scratch *)(m + pm_page_size);
	if (syscall(SYS_mprotect, (long)s, (long)len, (long)(PROT_READ | PROT_WRITE))) {
		err = -ENOMEM;
		goto out_unmap;
	}
	s->nown = rip_pl_own_maps(s->own);
	err = pm_files_open(&f, s, &have);
	if (err)
		goto out_close;
	if (pm_copy_way == 0 && pm_sandboxed(s, &f))
		pm_copy_way = 1; /* for good: a filter is never taken off */
	off = have;
	eof = f.remote && have < PM_MAPS_BUF; /* a read stops short only at the end */
	/*
	 * In place only with every signal held: a handler that runs meanwhile
	 * on this thread may free memory, and free may give the heap's tail
	 * back to the kernel.  Held first, then the threads counted.  Never
	 * when the watcher reads for us: it is a thread of the process.
	 */
	masked = !f.remote && !pm_sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&held,
				      (long)sizeof(all));
	single = masked && pm_single_thread(s);
	if (masked && !single) {
		/* copies: signals may come as they would */
		pm_sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&held, 0, (long)sizeof(held));
		masked = false;
	}
	for (;;) {
		char *nl = memchr(s->maps + used, '\n', have - used);
		ssize_t n;

		if (nl) {
			size_t l = (size_t)(nl - (s->maps + used));

			if (l >= PM_LINE_MAX)
				l = PM_LINE_MAX - 1; /* a path cut short is still a path */
			memcpy(s->line, s->maps + used, l);
			s->line[l] = 0;
			used = (size_t)(nl - s->maps) + 1;
			nmaps += (uint32_t)pm_line(s, &f, seq, (uintptr_t)s, (uintptr_t)s + len,
						   single);
			continue;
		}
		/* Keep the partial line (at most a buffer's worth: longer ones are cut). */
		if (used == 0 && have == PM_MAPS_BUF)
			have = PM_MAPS_BUF / 2;
		memmove(s->maps, s->maps + used, have - used);
		have -= used;
		used = 0;
		if (eof)
			break;
		n = pm_fread(&f, RIP_PL_WF_MAPS, s->maps + have, PM_MAPS_BUF - have, off);
		if (n < 0)
			err = -errno;
		if (n <= 0)
			break;
		eof = (size_t)n < PM_MAPS_BUF - have;
		have += (size_t)n;
		off += (uint64_t)n;
	}
	if (f.err)
		err = f.err;
out_close:
	if (masked)
		pm_sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&held, 0, (long)sizeof(held));
	pm_files_close(&f);
out_unmap:
	syscall(SYS_munmap, m, (long)(len + 2 * pm_page_size));
out_end:
	rip_pl_mem_pagemap_end(seq, nmaps, why, err);
	/* The scratch area and seq are free again: pairs with the acquire exchange above. */
	__atomic_store_n(&pm_busy, 0, __ATOMIC_RELEASE);
}

/* Can this thread write events right now, from a signal handler? */
static bool pm_thread_ready(void)
{
	const struct rip_evw *w = &__rip_self.ev;

	/* Read now, not earlier: pairs with the fences of rip_pl_enter and of rip.h (nest). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return !rip_pl_self.guard && !w->nest && w->ring && w->ring != UINT32_MAX &&
	       __rip_self.thread;
}

static void pm_on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	(void)sig;
	(void)si;
	(void)uc;
	if (rip_pl_off || !rip_category_enabled(RIP_CAT_MEM))
		goto out;
	if (!pm_thread_ready()) {
		/* Relaxed: the flag alone is the message; pairs with the load in rip_pl_leave. */
		__atomic_store_n(&rip_pl_pm_pending, 1, __ATOMIC_RELAXED);
		goto out;
	}
	rip_pl_self.guard = rip_pl_guard_up();
	/* Guard up before the work: pairs with the check of a hook this handler may run into. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pm_snapshot(RIP_PM_SIGNAL);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rip_pl_self.guard = 0;
out:
	errno = saved;
}

void rip_pl_pagemap_pending(void)
{
	/* Taken once: pairs with the store in pm_on_signal. */
	if (!__atomic_exchange_n(&rip_pl_pm_pending, 0, __ATOMIC_RELAXED))
		return;
	if (rip_pl_enter(RIP_CAT_MEM)) {
		pm_snapshot(RIP_PM_SIGNAL);
		rip_pl_leave();
	}
}

void rip_pl_pagemap_fork_child(void)
{
	/* Only this thread exists: no snapshot is in progress in the child. */
	pm_busy = 0;
	rip_pl_pm_pending = 0;
}

int rip_pl_pagemap_init(void)
{
	const char *on = secure_getenv("RIP_PAGEMAP"), *sig = secure_getenv("RIP_PAGEMAP_SIGNAL");
	long ps = sysconf(_SC_PAGESIZE);
	struct sigaction sa;
	int n;

	if (ps < 4096 || ps > (1l << 20) || (ps & (ps - 1)))
		return 0; /* no snapshots, the rest traces on */
	pm_page_size = (uint32_t)ps;
	if (on && !strcmp(on, "0"))
		pm_at_exit = false;
	if (!sig || !*sig)
		return 0;
	n = rip_pagemap_signal(sig);
	if (!n)
		return 0; /* rip run checked it; a hand-set bad value only loses the feature */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = pm_on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(n, &sa, NULL);
	return 0;
}

/* After the program's atexit handlers and destructors (ours run after theirs). */
__attribute__((destructor)) static void pm_at_exit_snapshot(void)
{
	if (!pm_at_exit || !rip_pl_enter(RIP_CAT_MEM))
		return;
	pm_snapshot(RIP_PM_EXIT);
	rip_pl_leave();
}
