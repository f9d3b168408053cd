/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/ringfile.c - open, validate and copy ring files (rip/abi.h) from
 * outside the writing process, live or post-mortem.
 *
 * Validation comes first and is done on a private copy of the header read
 * with pread: magic, version, byte order, every size the layout fixes, and
 * every area inside the file's real size, computed without overflow.  Only
 * then is the file mapped read-only.  Reads of the mapping run under a
 * SIGBUS guard: a live file can be truncated under us by a hostile owner.
 *
 * Slot copies follow the writer's protocols: the gen seqlock for the slot's
 * fields, snap_seq before and after the entries for the ring (rip/abi.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <rip/proc.h>

#include <internal/clock.h>

#include "read/ringfile.h"
#include "read/ringname.h"
#include "read/trace.h"

#define RR_MAX_SLOTS (1u << 22)
#define RR_MAX_MODULES (1u << 20)
#define RR_MAX_FN_IDS (1u << 24)
#define RR_LEGACY_SLOT 320u /* 64-byte name + 32 entries */
#define RR_LEGACY_EXIT UINT64_MAX

int rr_mkdirs(char *path)
{
	struct stat st;

	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(path, 0700) && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	if (lstat(path, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022))
		return -EPERM;
	return 0;
}

int rr_fail(char *err, size_t len, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* ---- SIGBUS guard ------------------------------------------------------ */

/*
 * volatile, and the signal fences below: the compiler may neither drop the
 * stores (nothing else in this thread reads rr_jmp but the handler) nor move
 * the guarded reads of the mapping out from between them.
 */
static __thread sigjmp_buf *volatile rr_jmp;

static void rr_on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (rr_jmp)
		siglongjmp(*rr_jmp, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

void rr_guard_set(sigjmp_buf *jb)
{
	rr_jmp = jb;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* pairs with rr_on_sigbus's load */
}

void rr_guard_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* pairs with rr_on_sigbus's load */
	rr_jmp = NULL;
}

static void rr_guard_install(void)
{
	static bool done;
	struct sigaction sa;

	if (done)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = rr_on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	done = true;
}

/* ---- open and validate ---------------------------------------------------- */

static bool rr_in_file(uint64_t off, uint64_t count, uint64_t size, uint64_t file)
{
	if (count && size > UINT64_MAX / count)
		return false;
	return off <= file && count * size <= file - off;
}

int rr_check_clock(const struct rip_file_hdr *h, char *err, size_t len)
{
	if (h->clock_kind != RIP_CLOCK_TSC && h->clock_kind != RIP_CLOCK_MONO_RAW)
		return rr_fail(err, len, -EBADMSG, "corrupt header: unknown clock %u",
			       h->clock_kind);
	if (!h->clock_hz)
		return rr_fail(err, len, -EBADMSG, "corrupt header: clock rate 0");
	/* Bounds that leave room to add them to each other and to event times without overflow. */
	if (h->clock_base_ns > RR_MAX_CLOCK_NS)
		return rr_fail(err, len, -EBADMSG,
			       "corrupt header: clock base %llu ns out of range",
			       (unsigned long long)h->clock_base_ns);
	if (h->realtime_offset > RR_MAX_CLOCK_NS || h->realtime_offset < -RR_MAX_CLOCK_NS)
		return rr_fail(err, len, -EBADMSG,
			       "corrupt header: realtime offset %lld ns out of range",
			       (long long)h->realtime_offset);
	return 0;
}

/* The areas the reader loads 8-byte words from (atomics, packet headers) must be aligned. */
static bool rr_aligned(const struct rip_file_hdr *h)
{
	uint64_t any = h->fifo_off | h->mod_off | h->types_off | h->cats_off;

	if (h->ev_rings)
		any |= h->ev_fifo_off | h->ev_ctl_off | h->ev_off |
		       (h->ev_big ? h->ev_small_off : 0);
	return !(any & 7);
}

int rr_check_hdr(const struct rip_file_hdr *h, uint64_t st_size, char *err, size_t len)
{
	if (memcmp(h->magic, RIP_MAGIC, sizeof(h->magic))) {
		static const char zero[8];

		if (!memcmp(h->magic, zero, sizeof(zero)))
			return rr_fail(err, len, -EBADMSG,
				       "not a ring file: no magic (a file still being created, or "
				       "not ours)");
		return rr_fail(err, len, -EBADMSG, "not a librip ring file (bad magic)");
	}
	if (h->byte_order != RIP_BYTE_ORDER_MARK) {
		if (h->byte_order == __builtin_bswap64(RIP_BYTE_ORDER_MARK))
			return rr_fail(err, len, -EPROTO,
				       "written on a machine of the other byte order; read it there");
		return rr_fail(err, len, -EBADMSG, "corrupt header: bad byte-order mark");
	}
	if (h->version > RIP_FORMAT_VERSION)
		return rr_fail(err, len, -EPROTONOSUPPORT,
			       "format version %u is newer than this rip understands (%u): use a "
			       "newer rip",
			       h->version, RIP_FORMAT_VERSION);
	if (h->version == 0)
		return rr_fail(err, len, -EBADMSG, "corrupt header: format version 0");
	if (h->ptr_size != sizeof(void *))
		return rr_fail(err, len, -EPROTO,
			       "written by a %u-bit process; this rip reads %zu-bit files",
			       h->ptr_size * 8u, sizeof(void *) * 8);
	if (h->hdr_size != RIP_HDR_SIZE || h->slot_off != RIP_SLOTS_OFFSET ||
	    h->slot_size != RIP_SLOT_SIZE || h->snap_depth != RIP_SNAP_DEPTH ||
	    h->snap_off != RIP_SNAP_OFFSET || h->mod_size != RIP_MODULE_SIZE)
		return rr_fail(err, len, -EBADMSG,
			       "corrupt header: layout sizes differ from format version %u",
			       h->version);
	if (h->file_size != st_size)
		return rr_fail(err, len, -EBADMSG,
			       "truncated or corrupt: the header says %llu bytes, the file has "
			       "%llu",
			       (unsigned long long)h->file_size, (unsigned long long)st_size);
	if (!h->slot_count || h->slot_count > RR_MAX_SLOTS ||
	    !rr_in_file(h->slot_off, h->slot_count, RIP_SLOT_SIZE, st_size))
		return rr_fail(err, len, -EBADMSG, "corrupt header: %u slots do not fit the file",
			       h->slot_count);
	if (h->fifo_off < h->slot_off + (uint64_t)h->slot_count * RIP_SLOT_SIZE ||
	    !rr_in_file(h->fifo_off, h->slot_count, sizeof(struct rip_fifo_cell), st_size))
		return rr_fail(err, len, -EBADMSG, "corrupt header: free queue outside the file");
	if (h->mod_cap > RR_MAX_MODULES || !rr_in_file(h->mod_off, h->mod_cap, RIP_MODULE_SIZE,
						     st_size))
		return rr_fail(err, len, -EBADMSG, "corrupt header: module map outside the file");
	if (h->fresh > h->slot_count)
		return rr_fail(err, len, -EBADMSG, "corrupt header: %u slots used of %u",
			       h->fresh, h->slot_count);
	if (h->mod_count > h->mod_cap)
		return rr_fail(err, len, -EBADMSG, "corrupt header: %u modules in a map of %u",
			       h->mod_count, h->mod_cap);
	if (h->types_cap > 65536 || (h->types_cap && h->type_size != RIP_EVTYPE_SIZE) ||
	    !rr_in_file(h->types_off, h->types_cap, RIP_EVTYPE_SIZE, st_size) ||
	    !rr_in_file(h->cats_off, RIP_CATEGORIES, RIP_CATEGORY_NAME_MAX, st_size))
		return rr_fail(err, len, -EBADMSG, "corrupt header: event types outside the file");
	if (h->ev_rings) {
		uint32_t ps = h->ev_packet_size, rs = h->ev_ring_size;
		uint32_t sps = h->ev_small_packet_size, srs = h->ev_small_ring_size;
		uint32_t big = h->ev_big ? h->ev_big : h->ev_rings;

		if (h->ev_rings > 65536 || ps < 1024 || ps > (64u << 20) || (ps & (ps - 1)) ||
		    (rs & (rs - 1)) || (uint64_t)rs < 2ull * ps || h->ev_mode > RIP_MODE_BLOCK)
			return rr_fail(err, len, -EBADMSG, "corrupt header: bad event ring geometry");
		/* Small rings past the big ones (rip/abi.h); ev_big 0: none. */
		if (h->ev_big && (h->ev_big >= h->ev_rings || sps < 1024 || sps > (64u << 20) ||
				  (sps & (sps - 1)) || (srs & (srs - 1)) ||
				  (uint64_t)srs < 2ull * sps ||
				  !rr_in_file(h->ev_small_off, h->ev_rings - h->ev_big, srs, st_size)))
			return rr_fail(err, len, -EBADMSG,
				       "corrupt header: bad geometry of the small event rings");
		if (!rr_in_file(h->ev_fifo_off, h->ev_rings, sizeof(struct rip_fifo_cell), st_size) ||
		    !rr_in_file(h->ev_ctl_off, h->ev_rings, RIP_EVRING_SIZE, st_size) ||
		    !rr_in_file(h->ev_off, big, rs, st_size))
			return rr_fail(err, len, -EBADMSG, "corrupt header: event rings outside the file");
		if (h->ev_fresh > h->ev_rings)
			return rr_fail(err, len, -EBADMSG, "corrupt header: %u event rings used of %u",
				       h->ev_fresh, h->ev_rings);
	}
	if (h->types_count > h->types_cap)
		return rr_fail(err, len, -EBADMSG, "corrupt header: %u event types in a table of %u",
			       h->types_count, h->types_cap);
	if (h->sample_off && (h->sample_size != RIP_SAMPLE_RING_SIZE || (h->sample_off & 7) ||
			      !rr_in_file(h->sample_off, h->slot_count, RIP_SAMPLE_RING_SIZE,
					  st_size)))
		return rr_fail(err, len, -EBADMSG, "corrupt header: CPU sample area outside the file");
	if (h->fn_off && (h->fn_size != RIP_FN_STACK_SIZE || (h->fn_off & 7) ||
			  !rr_in_file(h->fn_off, h->slot_count, RIP_FN_STACK_SIZE, st_size)))
		return rr_fail(err, len, -EBADMSG,
			       "corrupt header: function stack area outside the file");
	if (h->fn_ids && (h->fn_ids > RR_MAX_FN_IDS || (h->fn_tab_off & 7) ||
			  !rr_in_file(h->fn_tab_off, h->fn_ids, sizeof(uint64_t), st_size)))
		return rr_fail(err, len, -EBADMSG, "corrupt header: function table outside the file");
	if (!rr_aligned(h))
		return rr_fail(err, len, -EBADMSG,
			       "corrupt header: an area's offset is not a multiple of 8");
	return rr_check_clock(h, err, len);
}

/* The end of an area of count entries of size bytes at off (0 for none). */
static uint64_t rr_area_end(uint64_t off, uint64_t count, uint64_t size)
{
	return count ? off + count * size : 0;
}

static uint64_t rr_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

uint64_t rr_hdr_extent(const struct rip_file_hdr *h)
{
	uint64_t end = rr_area_end(h->slot_off, h->slot_count, RIP_SLOT_SIZE);

	/* rr_check_hdr put every area inside file_size: no sum below overflows */
	end = rr_max(end, rr_area_end(h->fifo_off, h->slot_count, sizeof(struct rip_fifo_cell)));
	end = rr_max(end, rr_area_end(h->mod_off, h->mod_cap, RIP_MODULE_SIZE));
	end = rr_max(end, rr_area_end(h->types_off, h->types_cap, RIP_EVTYPE_SIZE));
	end = rr_max(end, rr_area_end(h->cats_off, RIP_CATEGORIES, RIP_CATEGORY_NAME_MAX));
	if (h->ev_rings) {
		uint32_t big = h->ev_big ? h->ev_big : h->ev_rings;

		end = rr_max(end, rr_area_end(h->ev_fifo_off, h->ev_rings,
					      sizeof(struct rip_fifo_cell)));
		end = rr_max(end, rr_area_end(h->ev_ctl_off, h->ev_rings, RIP_EVRING_SIZE));
		end = rr_max(end, rr_area_end(h->ev_off, big, h->ev_ring_size));
		if (h->ev_big)
			end = rr_max(end, rr_area_end(h->ev_small_off, h->ev_rings - h->ev_big,
						      h->ev_small_ring_size));
	}
	/* the watcher's copies: not checked by rr_check_hdr, counted only when in the file */
	if (h->watch_off && rr_in_file(h->watch_off, h->watch_copies, h->watch_copy_size,
				       h->file_size))
		end = rr_max(end, rr_area_end(h->watch_off, h->watch_copies, h->watch_copy_size));
	if (h->sample_off)
		end = rr_max(end, rr_area_end(h->sample_off, h->slot_count, RIP_SAMPLE_RING_SIZE));
	if (h->fn_off)
		end = rr_max(end, rr_area_end(h->fn_off, h->slot_count, RIP_FN_STACK_SIZE));
	if (h->fn_ids)
		end = rr_max(end, rr_area_end(h->fn_tab_off, h->fn_ids, sizeof(uint64_t)));
	return end;
}

/*
 * A compressed copy (.gz, .zst) is read through an unpacked memory copy:
 * of a ring file, or (raw_max not 0) of a raw file of at most raw_max bytes.
 */
static int rr_open_unpacked(struct rr_file *f, struct stat *st, uint64_t raw_max, char *err,
			    size_t len)
{
	int ret, mem;

	ret = rr_unpack(f->fd, f->path, raw_max, &mem, err, len);
	if (!ret && mem < 0)
		return 0;
	close(f->fd);
	f->fd = mem;
	if (ret)
		return ret;
	f->unpacked = true;
	if (fstat(f->fd, st)) {
		ret = rr_fail(err, len, -errno, "%s: %s", f->path, strerror(errno));
		close(f->fd);
		f->fd = -1;
	}
	return ret;
}

#define RR_ANY_OWNER ((uid_t)-1)

const char *rr_user_name(uid_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];

	if (!getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) && res && res->pw_name)
		snprintf(buf, len, "%s (uid %u)", res->pw_name, (unsigned)uid);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
	return buf;
}

/*
 * Open path (extra open flags oflags) into f, its fstat in f->st and *st: a
 * regular file, of owner unless that is RR_ANY_OWNER.
 */
static pid_t rr_host_pid(const struct rip_file_hdr *h);

static int rr_open_fd(const char *path, struct rr_file *f, struct stat *st, uint64_t raw_max,
		      int oflags, uid_t owner, char *err, size_t len)
{
	char who[128];
	int e;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	if (strlen(path) >= sizeof(f->path))
		return rr_fail(err, len, -ENAMETOOLONG, "%s: path too long", path);
	snprintf(f->path, sizeof(f->path), "%s", path);
	/* a device is not opened, even one swapped in for the name: that may do something */
	f->fd = rr_open_regular(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | oflags);
	if (f->fd < 0) {
		e = errno;
		if (e == EINVAL)
			return rr_fail(err, len, -EINVAL, "%s: not a regular file", path);
		if (e == ELOOP && (oflags & O_NOFOLLOW))
			return rr_fail(err, len, -ELOOP, "%s: a symbolic link: not followed", path);
		return rr_fail(err, len, -e, "%s: %s", path, strerror(e));
	}
	if (fstat(f->fd, st)) {
		e = errno;
		close(f->fd);
		f->fd = -1;
		return rr_fail(err, len, -e, "%s: %s", path, strerror(e));
	}
	f->st = *st;
	if (!S_ISREG(st->st_mode)) {
		close(f->fd);
		f->fd = -1;
		return rr_fail(err, len, -EINVAL, "%s: not a regular file", path);
	}
	if (owner != RR_ANY_OWNER && st->st_uid != owner) {
		close(f->fd);
		f->fd = -1;
		return rr_fail(err, len, -EPERM,
			       "%s: owned by %s, not by %s: refused (in a shared directory, "
			       "anyone may put a file there)",
			       path, rr_user_name(st->st_uid, who, sizeof(who)),
			       owner == geteuid() ? "you" : "the process");
	}
	return rr_open_unpacked(f, st, raw_max, err, len);
}

static int rr_map(struct rr_file *f, size_t size, char *err, size_t len)
{
	void *m = mmap(NULL, size, PROT_READ, MAP_SHARED, f->fd, 0);

	if (m == MAP_FAILED)
		return rr_fail(err, len, -errno, "%s: cannot map: %s", f->path, strerror(errno));
	f->map = m;
	f->len = size;
	rr_guard_install();
	return 0;
}

/* rr_open and rr_open_owned: rr_open_fd's flags and owner. */
static int rr_open_how(const char *path, int oflags, uid_t owner, struct rr_file *f, char *err,
		       size_t errlen)
{
	struct stat st;
	ssize_t n;
	int ret;
	char why[RR_ERR_MAX];

	ret = rr_open_fd(path, f, &st, 0, oflags, owner, err, errlen);
	if (ret)
		return ret;
	if ((uint64_t)st.st_size < RIP_HDR_SIZE) {
		char magic[sizeof(RIP_MAGIC)];
		size_t have = (uint64_t)st.st_size < sizeof(magic) ? (size_t)st.st_size :
								     sizeof(magic);

		/*
		 * A short file that does not begin as one is no ring file at all;
		 * one cut inside the magic (empty, too) may have been one.
		 */
		if (pread(f->fd, magic, have, 0) != (ssize_t)have || memcmp(magic, RIP_MAGIC, have))
			ret = rr_fail(err, errlen, -EBADMSG,
				      "%s: not a librip ring file (%lld bytes, no magic)", path,
				      (long long)st.st_size);
		else
			ret = rr_fail(err, errlen, -EBADMSG,
				      "%s: truncated: %lld bytes, a ring file has at least %u", path,
				      (long long)st.st_size, RIP_HDR_SIZE);
		goto err_close;
	}
	n = pread(f->fd, &f->hdr, sizeof(f->hdr), 0);
	if (n != (ssize_t)sizeof(f->hdr)) {
		ret = rr_fail(err, errlen, -EIO, "%s: cannot read the header", path);
		goto err_close;
	}
	ret = rr_check_hdr(&f->hdr, (uint64_t)st.st_size, why, sizeof(why));
	if (ret) {
		rr_fail(err, errlen, ret, "%s: %s", path, why);
		goto err_close;
	}
	f->hdr.boot_id[sizeof(f->hdr.boot_id) - 1] = 0;
	f->hdr.comm[sizeof(f->hdr.comm) - 1] = 0;
	f->hdr.exe[sizeof(f->hdr.exe) - 1] = 0;
	f->hdr.host[sizeof(f->hdr.host) - 1] = 0;
	rr_printable(f->hdr.comm);
	rr_printable(f->hdr.exe);
	rr_printable(f->hdr.host);
	/*
	 * Written in another pid namespace (a container's process, read from
	 * the host): its pid here, so that it is found alive, its /proc read
	 * and its file not taken for a dead one's (rip gc removed it).
	 */
	if (f->hdr.pidns) {
		pid_t here = rr_host_pid(&f->hdr);

		if (here > 0)
			f->hdr.pid = here;
	}
	ret = rr_map(f, (size_t)st.st_size, err, errlen);
	if (ret)
		goto err_close;
	return 0;

err_close:
	close(f->fd);
	f->fd = -1;
	return ret;
}

/* Is path a /proc/PID/map_files/ entry (a link to the file a process maps)? */
static bool rr_is_map_files(const char *path)
{
	return !strncmp(path, "/proc/", 6) && strstr(path, "/map_files/");
}

int rr_open(const char *path, struct rr_file *f, char *err, size_t errlen)
{
	return rr_open_how(path, 0, RR_ANY_OWNER, f, err, errlen);
}

int rr_open_owned(const char *path, uid_t owner, struct rr_file *f, char *err, size_t errlen)
{
	return rr_open_how(path, O_NOFOLLOW, owner, f, err, errlen);
}

bool rr_all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int rr_path_join(char *buf, size_t len, const char *dir, const char *name)
{
	size_t n = strlen(dir);
	int w;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n > INT_MAX)
		return -ENAMETOOLONG;
	w = snprintf(buf, len, "%.*s%s%s", (int)n, dir, n && dir[n - 1] == '/' ? "" : "/", name);
	return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}

/*
 * How long rr_open_target waits for a file being created to get its
 * header: 300 x 10 ms (a second was too short on a loaded machine: a
 * program that writes its header 400 ms after making the file missed it).
 */
#define RR_CREATE_TRIES 300
#define RR_CREATE_WAIT_NS 10000000L

/*
 * Is the file at path one still being created: shorter than its magic, or
 * with none written yet (its creator writes the magic last)?
 */
static bool rr_no_magic_yet(const char *path)
{
	static const char zero[sizeof(((struct rip_file_hdr *)0)->magic)];
	char m[sizeof(zero)];
	int fd = rr_open_regular(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	ssize_t n;

	if (fd < 0)
		return false;
	n = pread(fd, m, sizeof(m), 0);
	close(fd);
	return n >= 0 && (n < (ssize_t)sizeof(m) || !memcmp(m, zero, sizeof(m)));
}

/*
 * Does live process pid have its ring file being created (by its name, in
 * the directories rip looks in), not ready to be read yet?
 */
static bool rr_pid_file_coming(pid_t pid)
{
	uint64_t start = rr_proc_start_ticks(pid);
	char dirs[4][PATH_MAX], path[PATH_MAX + 64];
	int n = rr_dirs(dirs, 4);

	for (int i = 0; start && i < n; i++)
		if (snprintf(path, sizeof(path), "%s/rip-%d-%llu.ring", dirs[i], (int)pid,
			     (unsigned long long)start) < (int)sizeof(path) &&
		    rr_no_magic_yet(path))
			return true;
	return false;
}

/* Does directory dir hold what a trace begins with (its metadata, index or first chunk)? */
static bool rr_looks_traced(const char *dir)
{
	static const char *const names[] = { "metadata", ".rip-index", "chunk-000000.rpk" };
	char p[PATH_MAX];
	struct stat st;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!rr_path_join(p, sizeof(p), dir, names[i]) && !lstat(p, &st))
			return true;
	return false;
}

/*
 * Trace directory dir, whose index was written while its recording went on
 * (TRACE_F_LIVE: rip run copies the ring file in at the end): the pid and
 * start time of its program, from the index's copy of the ring file's
 * header.  True when dir is such a trace.  The index is read as any reader
 * reads it: bounded, and what it says only names a process to look for.
 */
static bool rr_trace_live(const char *dir, pid_t *pid, uint64_t *start)
{
	struct trace_index_hdr h;
	char p[PATH_MAX];
	ssize_t n;
	int fd;

	if (rr_path_join(p, sizeof(p), dir, TRACE_INDEX) ||
	    (fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) < 0)
		return false;
	n = pread(fd, &h, sizeof(h), 0);
	close(fd);
	if (n != (ssize_t)sizeof(h) || memcmp(h.magic, TRACE_MAGIC, sizeof(h.magic)) ||
	    !(h.flags & TRACE_F_LIVE) || h.file.pid <= 0)
		return false;
	*pid = h.file.pid;
	*start = h.file.start_ticks;
	return true;
}

/*
 * A trace being recorded (or whose recorder was killed) named for its ring
 * file, which rip run copies in only at the end: the ring file of its
 * program (pid, started at start), when that still runs.  0, or -ENOENT
 * with the reason in err.
 */
static int rr_open_live_trace(const char *dir, pid_t pid, uint64_t start, struct rr_file *f,
			      char *err, size_t errlen)
{
	char num[16], why[RR_ERR_MAX];
	int ret;

	snprintf(num, sizeof(num), "%d", (int)pid);
	ret = rr_open_target(num, f, why, sizeof(why));
	if (!ret && f->hdr.start_ticks == start)
		return 0; /* the program itself, live */
	if (!ret)
		rr_close(f);
	return rr_fail(err, errlen, -ENOENT,
		       "%s: its recording goes on, or its recorder was killed (rip run copies its "
		       "program's ring file, %s, in at the end), and its program, pid %d, %s",
		       dir, RR_TRACE_RING, (int)pid,
		       ret ? "has no ring file in this ring directory (RIP_DIR: the program's "
			     "own, if it had one; or removed by rip gc)" :
			     "is gone (its pid is another's now)");
}

int rr_open_target(const char *target, struct rr_file *f, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct stat st;
	bool no_copy; /* a directory without rip run's copy of the ring file */
	uint64_t start;
	pid_t pid_live;
	uid_t owner;
	int ret;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	if (!*target)
		return rr_fail(err, errlen, -ENOENT,
			       "an empty name: give a pid, a ring file or a trace directory");
	if (rr_all_digits(target)) {
		long pid = strtol(target, NULL, 10);

		if (pid <= 0 || pid > 0x3fffffff)
			return rr_fail(err, errlen, -ERANGE, "bad pid '%s'", target);
		/* A file just made (a program that starts) gets its header soon: waited for. */
		for (int tries = 0;; tries++) {
			ret = rr_find_pid((pid_t)pid, path, sizeof(path), &owner, err, errlen);
			/*
			 * The file found, opened again: the same checks on what the
			 * descriptor is; an unlinked one through the process's
			 * map_files link (rr_find_mapped), which is followed.
			 */
			if (!ret)
				ret = rr_open_how(path, rr_is_map_files(path) ? 0 : O_NOFOLLOW,
						  owner, f, err, errlen);
			if ((ret != -EBADMSG && ret != -ENOENT) || tries == RR_CREATE_TRIES ||
			    !rr_pid_file_coming((pid_t)pid))
				break;
			nanosleep(&(struct timespec){ 0, RR_CREATE_WAIT_NS }, NULL);
		}
		if (!ret && f->hdr.pid != (pid_t)pid) {
			rr_close(f);
			ret = rr_fail(err, errlen, -EBADMSG,
				      "%s: refused: its header is of pid %d, not %ld (it changed "
				      "since it was found)",
				      path, (int)f->hdr.pid, pid);
		}
		return ret;
	} else if (!stat(target, &st) && S_ISDIR(st.st_mode)) {
		/* A trace directory: the copy of the ring file rip run kept there. */
		if (rr_path_join(path, sizeof(path), target, RR_TRACE_RING))
			return rr_fail(err, errlen, -ENAMETOOLONG, "%s: path too long", target);
		no_copy = lstat(path, &st) || !S_ISREG(st.st_mode);
		if (no_copy && rr_looks_traced(target) && rr_trace_live(target, &pid_live, &start))
			return rr_open_live_trace(target, pid_live, start, f, err, errlen);
		if (no_copy && rr_looks_traced(target))
			return rr_fail(err, errlen, -ENOENT,
				       "%s: a trace without a copy of its ring file (%s): rip run "
				       "keeps one in its program's trace and in each child's, rip "
				       "record and rip snapshot in none; give a pid or a ring file",
				       target, RR_TRACE_RING);
		if (no_copy)
			return rr_fail(
				err, errlen, -ENOENT,
				"%s: not a trace: a directory without metadata, index, chunk "
				"files or ring file (%s); give a trace of rip run, a pid or "
				"a ring file",
				target, RR_TRACE_RING);
		target = path;
	}
	return rr_open(target, f, err, errlen);
}

int rr_open_legacy(const char *path, struct rr_file *f, char *err, size_t errlen)
{
	struct stat st;
	int ret;

	ret = rr_open_fd(path, f, &st, (uint64_t)RR_LEGACY_SLOT * RR_MAX_SLOTS, 0, RR_ANY_OWNER,
			 err, errlen);
	if (ret)
		return ret;
	if (st.st_size == 0 || st.st_size % RR_LEGACY_SLOT ||
	    (uint64_t)st.st_size / RR_LEGACY_SLOT > RR_MAX_SLOTS) {
		ret = rr_fail(err, errlen, -EBADMSG,
			      "%s: %lld bytes is not a whole number of %u-byte librip slots", path,
			      (long long)st.st_size, RR_LEGACY_SLOT);
		goto err_close;
	}
	ret = rr_map(f, (size_t)st.st_size, err, errlen);
	if (ret)
		goto err_close;
	f->legacy_raw = true;
	f->hdr.slot_count = (uint32_t)(st.st_size / RR_LEGACY_SLOT);
	f->hdr.fresh = f->hdr.slot_count;
	f->hdr.clock_kind = RIP_CLOCK_MONO_RAW;
	f->hdr.clock_hz = 1000000000u;
	return 0;

err_close:
	close(f->fd);
	f->fd = -1;
	return ret;
}

void rr_close(struct rr_file *f)
{
	if (f->wmap)
		munmap(f->wmap, f->len);
	f->wmap = NULL;
	if (f->map)
		munmap((void *)f->map, f->len);
	if (f->fd >= 0)
		close(f->fd);
	f->map = NULL;
	f->fd = -1;
}

int rr_map_writable(struct rr_file *f, char *err, size_t errlen)
{
	struct stat a, b;
	void *m;
	int fd, e;

	if (f->wmap)
		return 0;
	if (f->unpacked)
		return rr_fail(err, errlen, -EROFS,
			       "%s: a compressed copy is read-only (no live process writes it)",
			       f->path);
	/*
	 * By name again (the descriptor is read-only), but a regular file only:
	 * whoever owns a directory on the way (root runs this on any user's
	 * process) may have swapped it for a link since the check, to a device
	 * an open alone makes do something.
	 */
	fd = rr_open_regular(f->path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 && (errno == EINVAL || errno == ELOOP))
		return rr_fail(err, errlen, -ESTALE, "%s: the file changed since it was checked",
			       f->path);
	if (fd < 0) {
		e = errno;
		return rr_fail(err, errlen, -e, "%s: cannot open for writing: %s%s", f->path,
			       strerror(e),
			       e == EACCES ? " (run rip as the user who owns the process)" : "");
	}
	if (f->fd < 0 || fstat(fd, &a) || fstat(f->fd, &b) || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino || (uint64_t)a.st_size < f->len) {
		close(fd);
		return rr_fail(err, errlen, -ESTALE, "%s: the file changed since it was checked",
			       f->path);
	}
	m = mmap(NULL, f->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	e = errno;
	close(fd);
	if (m == MAP_FAILED)
		return rr_fail(err, errlen, -e, "%s: cannot map for writing: %s", f->path,
			       strerror(e));
	f->wmap = m;
	return 0;
}

int rr_enable_set(struct rr_file *f, const uint64_t *bits, bool on, uint64_t *before, char *err,
		  size_t errlen)
{
	struct rip_file_hdr *h;
	sigjmp_buf jb;
	int ret = rr_map_writable(f, err, errlen);

	if (ret)
		return ret;
	h = (struct rip_file_hdr *)f->wmap;
	if (rr_guard_enter(&jb))
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being written",
			       f->path);
	for (unsigned w = 0; w < RIP_CATEGORY_WORDS; w++) {
		uint64_t was;

		/* Relaxed: the fast path only tests the bit, no data depends on it. */
		if (on)
			was = __atomic_fetch_or(&h->enable[w], bits[w], __ATOMIC_RELAXED);
		else
			was = __atomic_fetch_and(&h->enable[w], ~bits[w], __ATOMIC_RELAXED);
		if (before)
			before[w] = was;
	}
	rr_guard_leave();
	return 0;
}

int rr_live_u32(const struct rr_file *f, size_t off, uint32_t *v, char *err, size_t errlen)
{
	sigjmp_buf jb;

	if (off + 4 > f->len || !f->map)
		return rr_fail(err, errlen, -EINVAL, "%s: no word at byte %zu", f->path, off);
	if (rr_guard_enter(&jb))
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being read", f->path);
	*v = __atomic_load_n((const uint32_t *)(f->map + off), __ATOMIC_ACQUIRE);
	rr_guard_leave();
	return 0;
}

int rr_live_u64(const struct rr_file *f, size_t off, uint64_t *v, char *err, size_t errlen)
{
	sigjmp_buf jb;

	if (off + 8 > f->len || !f->map)
		return rr_fail(err, errlen, -EINVAL, "%s: no word at byte %zu", f->path, off);
	if (rr_guard_enter(&jb))
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being read", f->path);
	*v = __atomic_load_n((const uint64_t *)(f->map + off), __ATOMIC_ACQUIRE);
	rr_guard_leave();
	return 0;
}

int rr_live_hdr(const struct rr_file *f, struct rip_file_hdr *out, char *err, size_t errlen)
{
	sigjmp_buf jb;

	*out = f->hdr;
	if (f->legacy_raw || !f->map || f->len < sizeof(*out))
		return rr_fail(err, errlen, -EINVAL, "%s: no header", f->path);
	if (rr_guard_enter(&jb)) {
		*out = f->hdr;
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being read", f->path);
	}
	memcpy(out, f->map, sizeof(*out));
	rr_guard_leave();
	out->pid = f->hdr.pid; /* as seen here (rr_open: another pid namespace's) */
	return 0;
}

int rr_live_clock(const struct rr_file *f, struct rip_file_hdr *h, char *err, size_t errlen)
{
	const struct rip_file_hdr *src = (const struct rip_file_hdr *)f->map;
	sigjmp_buf jb;

	if (f->legacy_raw || !f->map || f->len < sizeof(*h))
		return rr_fail(err, errlen, -EINVAL, "%s: no header", f->path);
	if (rr_guard_enter(&jb))
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being read", f->path);
	h->clock_npairs = __atomic_load_n(&src->clock_npairs, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < RIP_CLOCK_PAIRS; i++) {
		/* Pairs with the writer's release stores (internal/clock.h): ns before ticks. */
		h->clock_pairs[i].ticks = __atomic_load_n(&src->clock_pairs[i].ticks, __ATOMIC_ACQUIRE);
		h->clock_pairs[i].ns = __atomic_load_n(&src->clock_pairs[i].ns, __ATOMIC_RELAXED);
	}
	rr_guard_leave();
	return 0;
}

void rr_clock_pair(struct rr_file *f)
{
	sigjmp_buf jb;

	if (!f->wmap || rr_guard_enter(&jb))
		return; /* the file shrank: the next read says so */
	rip_clock_pair_add((struct rip_file_hdr *)f->wmap);
	rr_guard_leave();
}

void rr_beat(struct rr_file *f)
{
	sigjmp_buf jb;

	if (!f->wmap || rr_guard_enter(&jb))
		return; /* the file shrank: the next read says so */
	rip_file_beat((struct rip_file_hdr *)f->wmap);
	rr_guard_leave();
}

/* op(header, v) through the writable mapping, guarded.  0, -EINVAL or -EIO. */
static int rr_hdr_write(struct rr_file *f, void (*op)(struct rip_file_hdr *, uint32_t), uint32_t v,
			char *err, size_t errlen)
{
	sigjmp_buf jb;

	if (!f->wmap)
		return rr_fail(err, errlen, -EINVAL, "%s: not mapped for writing", f->path);
	if (rr_guard_enter(&jb))
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being written",
			       f->path);
	op((struct rip_file_hdr *)f->wmap, v);
	rr_guard_leave();
	return 0;
}

int rr_set_consumer(struct rr_file *f, uint32_t pid, char *err, size_t errlen)
{
	return rr_hdr_write(f, rip_file_set_consumer, pid, err, errlen);
}

static void rr_bt_gen_op(struct rip_file_hdr *h, uint32_t n)
{
	/* Relaxed: a hint, which the preload library's stack hook loads relaxed (abi.h). */
	__atomic_fetch_add(&h->bt_gen, n, __ATOMIC_RELAXED);
}

int rr_bt_gen_add(struct rr_file *f, char *err, size_t errlen)
{
	return rr_hdr_write(f, rr_bt_gen_op, 1, err, errlen);
}

/* ---- slots ---------------------------------------------------------------- */

static const char *rr_slot_invalid(const struct rr_slot *s, uint32_t i)
{
	if (s->index != i)
		return "wrong self-index";
	if (s->state > RIP_SLOT_EXITED)
		return "unknown state";
	if (s->kind > RIP_KIND_CORO || (s->state != RIP_SLOT_FREE && s->kind == RIP_KIND_NONE))
		return "unknown kind";
	return NULL;
}

/* One consistent copy of a live slot; 1 if it was changing the whole time. */
/*
 * The wait record (preload/wait.h writes it): seqlock read side, a few
 * tries.  A record still odd or moving is left out and marked torn.
 */
static void rr_copy_wait(const struct rip_slot *slot, struct rr_slot *d)
{
	const struct rip_wait *src = &slot->wait;

	for (int tries = 0; tries < 4; tries++) {
		/* Pairs with the wrapper's closing increment of seq (a release). */
		uint32_t q1 = __atomic_load_n(&src->seq, __ATOMIC_ACQUIRE), q2, tmo;
		struct rip_wait w;

		w.kind = __atomic_load_n(&src->kind, __ATOMIC_RELAXED);
		w.since = __atomic_load_n(&src->since, __ATOMIC_RELAXED);
		w.ra = __atomic_load_n(&src->ra, __ATOMIC_RELAXED);
		w.cfa = __atomic_load_n(&src->cfa, __ATOMIC_RELAXED);
		w.fp = __atomic_load_n(&src->fp, __ATOMIC_RELAXED);
		w.arg = __atomic_load_n(&src->arg, __ATOMIC_RELAXED);
		tmo = __atomic_load_n(&slot->wait_tmo, __ATOMIC_RELAXED);
		/* The fields are read before seq is read again. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		q2 = __atomic_load_n(&src->seq, __ATOMIC_RELAXED);
		if (q1 == q2 && !(q1 & 1)) {
			w.seq = q1;
			d->wait = w;
			d->wait_tmo = tmo;
			d->wait_torn = false;
			return;
		}
	}
	memset(&d->wait, 0, sizeof(d->wait));
	d->wait_tmo = 0;
	d->wait_torn = true;
}

/* What a ring that is a hole in the file reads as. */
static const struct rip_sample_ring rr_no_samples;

/* Slot i's sample ring (rip/abi.h), NULL when the file has no sample area. */
static const struct rip_sample_ring *rr_sample_ring(const struct rr_file *f, uint32_t i)
{
	if (!f->hdr.sample_off)
		return NULL;
	/* rr_check_hdr: slot_count rings fit the file from sample_off */
	return (const struct rip_sample_ring *)(f->map + f->hdr.sample_off +
						(size_t)i * RIP_SAMPLE_RING_SIZE);
}

/*
 * Of a ring of depth entries whose sequence was s1 before its entries were
 * read and s2 after: how many of the newest before s1 are intact.  Entry s
 * is, if its overwriter (s + depth) had not started: s > s2 - depth; one
 * entry is kept free for the write under way.
 */
static uint32_t rr_intact(uint32_t s1, uint32_t s2, uint32_t depth)
{
	uint32_t lo = s2 >= depth - 1 ? s2 - (depth - 1) : 0, n = s1 - lo;

	if ((int32_t)n < 0)
		n = 0;
	if (n > s1)
		n = s1;
	return n > depth - 1 ? depth - 1 : n;
}

/*
 * The CPU samples of a slot from its sample ring (rip/abi.h; NULL: the file
 * has none), into d->samp[] with their positions, when they are the samples
 * of the slot's current owner (gen).  The snap-ring protocol's read side.
 */
static void rr_copy_samples(const struct rip_sample_ring *r, struct rr_slot *d)
{
	uint64_t raw[RIP_SAMPLE_RING];
	uint32_t s1, s2, n, gen;

	if (!r)
		return;
	/* The samples are in the ring, not the snap ring (whatever tagged entries it holds). */
	d->nsamp = 0;
	d->samp_seq = 0;
	/* Pairs with the release store of seq in the sampler's handler. */
	s1 = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);
	gen = __atomic_load_n(&r->gen, __ATOMIC_RELAXED);
	for (uint32_t k = 0; k < RIP_SAMPLE_RING; k++)
		raw[k] = __atomic_load_n(&r->e[k], __ATOMIC_RELAXED);
	/* The entries above are read before seq is read again. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	s2 = __atomic_load_n(&r->seq, __ATOMIC_RELAXED);
	if (gen != d->gen)
		return; /* an earlier owner's, or none yet */
	d->samp_seq = s1;
	n = rr_intact(s1, s2, RIP_SAMPLE_RING);
	for (uint32_t k = 0; k < n; k++) {
		uint64_t e = raw[(s1 - n + k) % RIP_SAMPLE_RING];

		if (!RIP_SAMPLE_IS(e))
			continue; /* not a sample entry: a damaged file */
		d->samp_pos[d->nsamp] = s1 - n + k;
		d->samp[d->nsamp++] = e;
	}
}

/*
 * The snap ring of src into raw: how many of its newest entries are intact,
 * the ring's sequence in *seq.  A thread that snaps in a tight loop (a few
 * ns a snap) overwrites entries while they are read: the read is made
 * again, up to RR_SNAP_TRIES times, until every entry is intact, and the
 * read that kept the most is taken (a single read lost all 31 to such a
 * thread in one look of 5 to 25, and rip ps said "no snap yet").
 */
#define RR_SNAP_TRIES 16
static uint32_t rr_copy_snaps(const struct rip_slot *src, uint64_t raw[RIP_SNAP_DEPTH],
			      uint32_t *seq)
{
	uint64_t got[RIP_SNAP_DEPTH];
	uint32_t best = 0;

	*seq = 0;

	for (int t = 0; t < RR_SNAP_TRIES; t++) {
		/* Snap ring read side: pairs with the release store in __rip_snap_store. */
		uint32_t s1 = __atomic_load_n(&src->snap_seq, __ATOMIC_ACQUIRE), s2, n, want;

		for (uint32_t k = 0; k < RIP_SNAP_DEPTH; k++)
			got[k] = __atomic_load_n(&src->snap[k], __ATOMIC_RELAXED);
		/* The entries above are read before seq is read again. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&src->snap_seq, __ATOMIC_RELAXED);
		n = rr_intact(s1, s2, RIP_SNAP_DEPTH);
		if (!t || n > best) {
			memcpy(raw, got, sizeof(got));
			*seq = s1;
			best = n;
		}
		want = s1 < RIP_SNAP_DEPTH - 1 ? s1 : RIP_SNAP_DEPTH - 1;
		if (n >= want)
			break;
	}
	return best;
}

static int rr_copy_slot(const struct rip_slot *src, const struct rip_sample_ring *sr,
			struct rr_slot *d)
{
	for (int tries = 0; tries < 4; tries++) {
		/* Seqlock read side: pairs with the gen stores in __rip_slot_setup. */
		uint32_t g1 = __atomic_load_n(&src->gen, __ATOMIC_ACQUIRE), g2;
		uint32_t s1, n;

		if (g1 & 1)
			continue;
		d->gen = g1;
		d->state = __atomic_load_n(&src->state, __ATOMIC_ACQUIRE);
		d->kind = __atomic_load_n(&src->kind, __ATOMIC_RELAXED);
		d->tid = __atomic_load_n(&src->tid, __ATOMIC_RELAXED);
		d->coro = __atomic_load_n(&src->coro, __ATOMIC_RELAXED);
		d->switches = __atomic_load_n(&src->switches, __ATOMIC_RELAXED);
		d->user_id = __atomic_load_n(&src->user_id, __ATOMIC_RELAXED);
		d->switch_ts = __atomic_load_n(&src->switch_ts, __ATOMIC_RELAXED);
		d->attach_ts = __atomic_load_n(&src->attach_ts, __ATOMIC_RELAXED);
		d->exit_ts = __atomic_load_n(&src->exit_ts, __ATOMIC_RELAXED);
		d->index = __atomic_load_n(&src->index, __ATOMIC_RELAXED);
		for (size_t k = 0; k < RIP_NAME_MAX; k++)
			d->name[k] = __atomic_load_n(&src->name[k], __ATOMIC_RELAXED);
		d->name[RIP_NAME_MAX - 1] = 0;
		rr_printable(d->name);
		rr_copy_wait(src, d);

		uint64_t raw[RIP_SNAP_DEPTH];

		n = rr_copy_snaps(src, raw, &s1);
		d->seq = s1;
		d->samp_seq = s1; /* a file without sample rings: the samples are in this one */
		d->n = 0;
		d->nsamp = 0;
		/* CPU samples (tagged) apart from the program's own snaps. */
		for (uint32_t k = 0; k < n; k++) {
			uint64_t e = raw[(s1 - n + k) & (RIP_SNAP_DEPTH - 1)];

			if (RIP_SAMPLE_IS(e)) {
				d->samp_pos[d->nsamp] = s1 - n + k;
				d->samp[d->nsamp++] = e;
			} else {
				d->ip[d->n++] = e;
			}
		}

		rr_copy_samples(sr, d);
		g2 = __atomic_load_n(&src->gen, __ATOMIC_RELAXED);
		if (g1 == g2)
			return 0;
	}
	return 1;
}

/* Slot i of a raw file of the original header into d (zeroed): false when never used. */
static bool rr_legacy_slot(const struct rr_file *f, uint32_t i, struct rr_slot *d)
{
	const uint8_t *p = f->map + (size_t)i * RR_LEGACY_SLOT;
	uint64_t e[RIP_SNAP_DEPTH];
	bool used = false, exited = false;
	int newest = -1;

	memcpy(e, p + 64, sizeof(e));
	for (int k = 0; k < (int)RIP_SNAP_DEPTH; k++) {
		if (e[k] == RR_LEGACY_EXIT)
			exited = true;
		else if (e[k])
			used = true;
	}
	if (!used && !exited && !p[0])
		return false;
	memcpy(d->name, p, 63);
	d->name[63] = 0;
	rr_printable(d->name); /* as a ring file's: whatever the program named it */
	d->index = i;
	d->tid = (int32_t)i;
	d->kind = RIP_KIND_THREAD;
	d->state = exited ? RIP_SLOT_EXITED : RIP_SLOT_RUNNING;
	/* Counters go up by one along the ring; the newest entry is where that breaks. */
	for (int k = 0; k < (int)RIP_SNAP_DEPTH && newest < 0; k++) {
		uint64_t a = e[k], b = e[(k + 1) % RIP_SNAP_DEPTH];

		if (!a || a == RR_LEGACY_EXIT)
			continue;
		if (!b || b == RR_LEGACY_EXIT || ((a >> 56) + 1) % 256 != (b >> 56))
			newest = k;
	}
	if (newest < 0) {
		for (int k = 0; k < (int)RIP_SNAP_DEPTH; k++)
			if (e[k] && e[k] != RR_LEGACY_EXIT)
				newest = k;
	}
	for (int k = 1; newest >= 0 && k <= (int)RIP_SNAP_DEPTH; k++) {
		uint64_t v = e[(newest + k) % RIP_SNAP_DEPTH];

		if (v && v != RR_LEGACY_EXIT)
			d->ip[d->n++] = v & ((1ull << 56) - 1);
	}
	d->seq = d->n;
	return true;
}

/* ---- the cursor: slots one at a time ------------------------------------------ */

/* Bytes of an area read before the cursor gives their pages back. */
#define RR_CUR_WINDOW (4u << 20)

static size_t rr_page_size(void)
{
	static size_t page;

	if (!page) {
		long p = sysconf(_SC_PAGESIZE);

		page = p > 0 ? (size_t)p : 4096;
	}
	return page;
}

/*
 * Give back the pages of the mapping in [lo, hi) (byte offsets; outward:
 * the pages that hold any of it, else only those wholly inside).  The
 * mapping is shared and read-only: MADV_DONTNEED drops our page table
 * entries and the file keeps its pages, so a later read faults them in
 * again with the same bytes.  MADV_COLD would leave them mapped (they count
 * in our RSS until reclaim); MADV_PAGEOUT would push the writer's pages out
 * too.  A failure only leaves them mapped.
 */
static void rr_give_back(const struct rr_file *f, uint64_t lo, uint64_t hi, bool outward)
{
	uint64_t page = rr_page_size(), a, b;

	if (hi > f->len)
		hi = f->len;
	a = outward ? lo & ~(page - 1) : (lo + page - 1) & ~(page - 1);
	b = outward ? (hi + page - 1) & ~(page - 1) : hi & ~(page - 1);
	if (a < b)
		madvise((void *)(f->map + a), b - a, MADV_DONTNEED);
}

/* The slot area of the file (a raw file's slots included) and the size of a slot. */
static uint64_t rr_slot_area(const struct rr_file *f, uint32_t *size)
{
	*size = f->legacy_raw ? RR_LEGACY_SLOT : RIP_SLOT_SIZE;
	return f->legacy_raw ? 0 : f->hdr.slot_off;
}

/*
 * Is the sample ring at byte off in a hole of the file?  A read of a hole
 * through a tmpfs mapping allocates its page: rings never sampled (most of
 * a million coroutines') are holes, and reading them would grow the traced
 * program's file by a page per 16 of them.  lseek(SEEK_DATA) says where the
 * next data is; the answer is kept for the range it covers ([lo, hi)).  A
 * ring whose first word (seq, gen) is in a hole reads as no samples, which
 * is what reading its zeros gives.  When the file system cannot tell, the
 * ring is read.
 */
static bool rr_cur_hole(struct rr_cursor *c, uint64_t off)
{
	off_t d, h;

	if (off >= c->seg_lo && off < c->seg_hi)
		return c->seg_hole;
	c->seg_lo = off;
	d = lseek(c->f->fd, (off_t)off, SEEK_DATA);
	if (d < 0) {
		c->seg_hole = errno == ENXIO; /* no data from off on */
		c->seg_hi = c->seg_hole ? c->f->len : off + RIP_SAMPLE_RING_SIZE;
	} else if ((uint64_t)d > off) {
		c->seg_hole = true;
		c->seg_hi = (uint64_t)d;
	} else {
		h = lseek(c->f->fd, (off_t)off, SEEK_HOLE);
		c->seg_hole = false;
		c->seg_hi = h > d ? (uint64_t)h : off + RIP_SAMPLE_RING_SIZE;
	}
	return c->seg_hole;
}

int rr_cursor_open(struct rr_file *f, struct rr_cursor *c, char *err, size_t errlen)
{
	uint32_t used;

	memset(c, 0, sizeof(*c));
	c->f = f;
	c->first_bad = -1;
	if (f->legacy_raw) {
		c->end = f->hdr.slot_count;
	} else {
		/* The live counter, not the header copy: slots keep being taken. */
		if (rr_live_u32(f, offsetof(struct rip_file_hdr, fresh), &used, err, errlen))
			return -EIO;
		if (used > f->hdr.slot_count)
			return rr_fail(err, errlen, -EBADMSG,
				       "%s: corrupt header: %u slots used of %u", f->path, used,
				       f->hdr.slot_count);
		c->end = used;
	}
	c->slot_lo = rr_slot_area(f, &used);
	c->samp_lo = f->hdr.sample_off;
	return 0;
}

/* rr_copy_slot under the guard: -1 when the file shrank. */
static int rr_guarded_copy(const struct rip_slot *src, const struct rip_sample_ring *sr,
			   struct rr_slot *d)
{
	sigjmp_buf jb;
	int busy;

	if (rr_guard_enter(&jb))
		return -1;
	busy = rr_copy_slot(src, sr, d);
	rr_guard_leave();
	return busy;
}

/*
 * Copy slot i into d (zeroed first): 1 when it is a slot in use, 0 when it
 * is not (free, never set up, or changing: *changing set; corrupt: the
 * reason in *why), -1 when the file shrank.  The filter of rr_read_slots.
 */
static int rr_cur_copy(struct rr_cursor *c, uint32_t i, struct rr_slot *d, bool *changing,
		       const char **why)
{
	struct rr_file *f = c->f;
	const struct rip_slot *src;
	const struct rip_sample_ring *sr = NULL;
	sigjmp_buf jb;
	int busy;

	memset(d, 0, sizeof(*d));
	*changing = false;
	*why = NULL;
	if (f->legacy_raw) {
		bool used;

		if (rr_guard_enter(&jb))
			return -1;
		used = rr_legacy_slot(f, i, d);
		rr_guard_leave();
		return used;
	}
	src = (const struct rip_slot *)(f->map + f->hdr.slot_off + (size_t)i * RIP_SLOT_SIZE);
	if (f->hdr.sample_off)
		sr = rr_cur_hole(c, f->hdr.sample_off + (uint64_t)i * RIP_SAMPLE_RING_SIZE)
			     ? &rr_no_samples
			     : rr_sample_ring(f, i);
	busy = rr_guarded_copy(src, sr, d);
	if (busy < 0)
		return -1;
	if (busy) {
		*changing = true;
		return 0;
	}
	if (d->state == RIP_SLOT_FREE && d->kind == RIP_KIND_NONE && d->index == i)
		return 0;
	/*
	 * Taken (fresh moved past it) but not set up yet: librip backs a
	 * slot and writes its index only after it took it, so a slot still
	 * all zero is free, not corrupt (live, or a process killed then).
	 */
	if (d->gen == 0 && d->state == RIP_SLOT_FREE && d->kind == RIP_KIND_NONE && d->index == 0)
		return 0;
	*why = rr_slot_invalid(d, i);
	if (*why)
		return 0;
	return d->state != RIP_SLOT_FREE; /* free: the sink of librip.h files */
}

int rr_cursor_next(struct rr_cursor *c, struct rr_slot *d, char *err, size_t errlen)
{
	uint32_t size;
	uint64_t area = rr_slot_area(c->f, &size);

	while (c->next < c->end) {
		uint32_t i = c->next++;
		uint64_t hi = area + (uint64_t)c->next * size;
		const char *why;
		bool changing;
		int r = rr_cur_copy(c, i, d, &changing, &why);

		if (r < 0)
			return rr_fail(err, errlen, -EIO, "%s: the file shrank while being read",
				       c->f->path);
		/* What is behind the cursor goes back once a window of it was read. */
		if (hi - c->slot_lo >= RR_CUR_WINDOW) {
			rr_give_back(c->f, c->slot_lo, hi, false);
			c->slot_lo = hi & ~(uint64_t)(rr_page_size() - 1);
		}
		if (c->f->hdr.sample_off) {
			uint64_t shi = c->f->hdr.sample_off + (uint64_t)c->next * RIP_SAMPLE_RING_SIZE;

			if (shi - c->samp_lo >= RR_CUR_WINDOW) {
				rr_give_back(c->f, c->samp_lo, shi, false);
				c->samp_lo = shi & ~(uint64_t)(rr_page_size() - 1);
			}
		}
		c->changing += changing;
		if (why) {
			if (c->first_bad < 0) {
				c->first_bad = (int)i;
				snprintf(c->why, sizeof(c->why), "%s", why);
			}
			c->corrupt++;
		}
		if (r)
			return 1;
	}
	return 0;
}

/*
 * Give back the pages of [off, off + size) that a random read touched,
 * unless the cursor's window ([lo, hi), which it reads on from) holds them.
 */
static void rr_cur_drop_one(const struct rr_file *f, uint64_t off, uint64_t size, uint64_t lo,
			    uint64_t hi)
{
	uint64_t mask = ~(uint64_t)(rr_page_size() - 1);
	uint64_t a = off & mask, b = (off + size - 1) & mask;

	if (b < (lo & mask) || a > ((hi - 1) & mask))
		rr_give_back(f, off, off + size, true);
}

int rr_cursor_get(struct rr_cursor *c, uint32_t i, struct rr_slot *d, char *err, size_t errlen)
{
	const struct rr_file *f = c->f;
	uint32_t size;
	uint64_t area = rr_slot_area(f, &size);
	const char *why;
	bool changing;
	int r;

	if (i >= f->hdr.slot_count)
		return rr_fail(err, errlen, -EINVAL, "%s: no slot %u", f->path, i);
	r = rr_cur_copy(c, i, d, &changing, &why);
	if (r < 0)
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being read", f->path);
	rr_cur_drop_one(f, area + (uint64_t)i * size, size, c->slot_lo,
			area + (uint64_t)c->next * size + 1);
	if (f->hdr.sample_off)
		rr_cur_drop_one(f, f->hdr.sample_off + (uint64_t)i * RIP_SAMPLE_RING_SIZE,
				RIP_SAMPLE_RING_SIZE, c->samp_lo,
				f->hdr.sample_off + (uint64_t)c->next * RIP_SAMPLE_RING_SIZE + 1);
	return r;
}

void rr_cursor_close(struct rr_cursor *c)
{
	uint32_t size;
	uint64_t area;

	if (!c->f)
		return;
	area = rr_slot_area(c->f, &size);
	rr_give_back(c->f, c->slot_lo, area + (uint64_t)c->next * size, true);
	if (c->f->hdr.sample_off)
		rr_give_back(c->f, c->samp_lo,
			     c->f->hdr.sample_off + (uint64_t)c->next * RIP_SAMPLE_RING_SIZE, true);
	c->f = NULL;
}

int rr_read_slots(struct rr_file *f, struct rr_slots *out, char *err, size_t errlen)
{
	struct rr_cursor c;
	int ret;

	memset(out, 0, sizeof(*out));
	out->first_bad = -1;
	ret = rr_cursor_open(f, &c, err, errlen);
	if (ret)
		return ret;
	out->v = calloc(c.end ? c.end : 1, sizeof(*out->v));
	if (!out->v) {
		rr_cursor_close(&c);
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	}
	while ((ret = rr_cursor_next(&c, &out->v[out->n], err, errlen)) == 1)
		out->n++;
	rr_cursor_close(&c);
	if (ret < 0) {
		rr_slots_free(out);
		return ret;
	}
	out->corrupt = c.corrupt;
	out->changing = c.changing;
	out->first_bad = c.first_bad;
	memcpy(out->why, c.why, sizeof(out->why));
	return 0;
}

int rr_slot_marks(struct rr_file *f, uint64_t *marks, uint32_t n, char *err, size_t errlen)
{
	sigjmp_buf jb;

	if (f->legacy_raw || n > f->hdr.slot_count)
		return rr_fail(err, errlen, -EINVAL, "%s: no such slots", f->path);
	if (rr_guard_enter(&jb))
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being read", f->path);
	for (uint32_t i = 0; i < n; i++) {
		const struct rip_slot *src =
			(const struct rip_slot *)(f->map + f->hdr.slot_off + (size_t)i * RIP_SLOT_SIZE);
		const struct rip_sample_ring *sr = rr_sample_ring(f, i);
		/* Marks only: whoever acts on a change copies the slot (rr_read_slot) with the protocol. */
		uint32_t gen = __atomic_load_n(&src->gen, __ATOMIC_RELAXED);
		/* the samples' own sequence, or the snap ring's in a file without sample rings */
		uint32_t seq = sr ? __atomic_load_n(&sr->seq, __ATOMIC_RELAXED)
				  : __atomic_load_n(&src->snap_seq, __ATOMIC_RELAXED);

		marks[i] = (uint64_t)gen << 32 | seq;
	}
	rr_guard_leave();
	return 0;
}

int rr_read_slot(struct rr_file *f, uint32_t i, struct rr_slot *d, char *err, size_t errlen)
{
	const struct rip_slot *src;
	const char *why;
	sigjmp_buf jb;
	int changing;

	memset(d, 0, sizeof(*d));
	if (f->legacy_raw || i >= f->hdr.slot_count)
		return rr_fail(err, errlen, -EINVAL, "%s: no slot %u", f->path, i);
	src = (const struct rip_slot *)(f->map + f->hdr.slot_off + (size_t)i * RIP_SLOT_SIZE);
	if (rr_guard_enter(&jb))
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being read", f->path);
	changing = rr_copy_slot(src, rr_sample_ring(f, i), d);
	rr_guard_leave();
	if (changing || (d->state == RIP_SLOT_FREE && d->kind == RIP_KIND_NONE))
		return 1; /* free (as rr_read_slots: never used, or taken and not set up yet) */
	why = rr_slot_invalid(d, i);
	if (why)
		return rr_fail(err, errlen, -EBADMSG, "%s: slot %u: %s", f->path, i, why);
	return d->state == RIP_SLOT_FREE;
}

void rr_slots_free(struct rr_slots *s)
{
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

int rr_read_modules(struct rr_file *f, struct rip_module **out, size_t *n, char *err,
		    size_t errlen)
{
	struct rip_module *v;
	uint32_t count;
	sigjmp_buf jb;

	*out = NULL;
	*n = 0;
	if (f->legacy_raw)
		return 0;
	/* Pairs with the release store of mod_count in __rip_modules_scan. */
	if (rr_live_u32(f, offsetof(struct rip_file_hdr, mod_count), &count, err, errlen))
		return -EIO;
	if (count > f->hdr.mod_cap)
		return rr_fail(err, errlen, -EBADMSG, "%s: corrupt header: %u modules in a map of %u",
			       f->path, count, f->hdr.mod_cap);
	v = calloc(count ? count : 1, sizeof(*v));
	if (!v)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	if (rr_guard_enter(&jb)) {
		free(v);
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being read", f->path);
	}
	memcpy(v, f->map + f->hdr.mod_off, (size_t)count * sizeof(*v));
	rr_guard_leave();
	for (uint32_t i = 0; i < count; i++) {
		v[i].path[sizeof(v[i].path) - 1] = 0;
		rr_printable(v[i].path);
		if (v[i].build_id_len > RIP_BUILD_ID_MAX)
			v[i].build_id_len = 0;
	}
	*out = v;
	*n = count;
	return 0;
}

/* ---- liveness and clock ------------------------------------------------------- */

/* The start of /proc/PID/NAME into buf, NUL-terminated: its length, 0 when it cannot be read. */
static size_t rr_proc_read(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n > 0 ? (size_t)n : 0;
}

/* Threads of pid still running, from its status file (0: cannot be read). */
static unsigned rr_proc_threads(pid_t pid)
{
	char buf[4096], *p;

	if (!rr_proc_read(pid, "status", buf, sizeof(buf)))
		return 0;
	p = strstr(buf, "\nThreads:");
	return p ? (unsigned)strtoul(p + 9, NULL, 10) : 0;
}

uint64_t rr_proc_start_ticks(pid_t pid)
{
	char state;
	uint64_t start = rip_proc_start((int)pid, &state);

	/*
	 * A zombie has released everything: it is dead for our purposes, unless
	 * only its main thread is (it left by pthread_exit, the others run on:
	 * the process is a zombie by its main thread's state, with more threads).
	 */
	if (state == 'Z')
		return rr_proc_threads(pid) > 1 ? start : 0;
	return state && state != 'X' && state != 'x' ? start : 0;
}

int64_t rr_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void rr_boot_id(char *buf, size_t len)
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 0)
		n = 0;
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n] = 0;
}

/* 1 if pid maps the file open at fd, 0 if not; 1 when its maps cannot be read. */
/* Does maps file path list the file of st?  1, 0 (-1: it lists nothing), or 1 if unreadable. */
static int rr_maps_lists(const char *path, const struct stat *st)
{
	char line[PATH_MAX + 256];
	int found = -1;
	FILE *fp = fopen(path, "re");

	if (!fp)
		return 1;
	while (found < 1 && fgets(line, sizeof(line), fp)) {
		unsigned maj, min;
		unsigned long long ino;

		found = 0;
		if (sscanf(line, "%*s %*s %*s %x:%x %llu", &maj, &min, &ino) == 3)
			found = ino == (unsigned long long)st->st_ino && maj == major(st->st_dev) &&
				min == minor(st->st_dev);
	}
	fclose(fp);
	return found;
}

static int rr_maps_file(pid_t pid, int fd)
{
	char path[96];
	struct dirent *e;
	struct stat st;
	int found;
	DIR *d;

	if (fstat(fd, &st))
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	found = rr_maps_lists(path, &st);
	if (found >= 0)
		return found;
	/*
	 * Nothing mapped: exiting (its memory gone), or its main thread left
	 * (pthread_exit) and the others run on, whose maps are the process's.
	 */
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	found = 0;
	while (found < 1 && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9' || atoi(e->d_name) == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/maps", (int)pid, e->d_name);
		found = rr_maps_lists(path, &st) > 0;
	}
	closedir(d);
	return found;
}

/* Does the process that wrote f still exist (same pid, start time and boot)? */
static bool rr_same_process(const struct rr_file *f)
{
	char boot[64];

	if (f->legacy_raw || f->unpacked)
		return false;
	/* The writer keeps no descriptor nor lock (lib/ring.c): the process itself tells. */
	if (f->hdr.pid <= 0 || rr_proc_start_ticks(f->hdr.pid) != f->hdr.start_ticks)
		return false;
	rr_boot_id(boot, sizeof(boot));
	return !strcmp(boot, f->hdr.boot_id);
}

/*
 * Has the image that wrote f exec'd?  Its successor marks the file (it maps
 * the header for a moment to do so, so that /proc/PID/maps may show the file
 * mapped then: the mark is what tells).
 */
static bool rr_execed(const struct rr_file *f)
{
	uint32_t flags;

	return !rr_live_u32(f, offsetof(struct rip_file_hdr, proc_flags), &flags, NULL, 0) &&
	       (flags & RIP_P_EXECED);
}

int rr_alive(struct rr_file *f)
{
	if (!rr_same_process(f) || rr_execed(f))
		return 0;
	/* Same process: is this file still mapped by it (not a pre-exec image's)? */
	return rr_maps_file(f->hdr.pid, f->fd);
}

bool rr_replaced(const struct rr_file *f)
{
	return rr_same_process(f) && (rr_execed(f) || rr_maps_file(f->hdr.pid, f->fd) == 0);
}

int rr_exec_image(const struct rr_file *f, pid_t pid, bool exited, char *buf, size_t len)
{
	char path[64], img[PATH_MAX];
	ssize_t n = -1;
	int fd;

	if (!exited) {
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
		n = readlink(path, img, sizeof(img) - 1);
		/* exiting (or exited) meanwhile: its name alone would not say whose it is */
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
	}
	if (n > 0) {
		img[n] = 0;
		rr_printable(img); /* as the header's, read so */
		if (strcmp(img, f->hdr.exe)) {
			snprintf(buf, len, "%s", img);
			return 1;
		}
	}
	/*
	 * Its name: exited, all that is left of its image until it is reaped;
	 * alive in f's image, the name it has now (it may have set its own).
	 */
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, img, 64);
	close(fd);
	if (n <= 0)
		return -EIO;
	img[n] = 0;
	img[strcspn(img, "\n")] = 0;
	rr_printable(img);
	snprintf(buf, len, "%s", img);
	return exited && strcmp(img, f->hdr.comm);
}

int rr_mark_execed(struct rr_file *f, char *err, size_t errlen)
{
	struct rip_file_hdr *h = (struct rip_file_hdr *)f->wmap;
	sigjmp_buf jb;

	if (!h)
		return rr_fail(err, errlen, -EINVAL, "%s: not mapped for writing", f->path);
	if (rr_guard_enter(&jb))
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being written",
			       f->path);
	/* Readers only test the bit (its process is gone: nobody else writes the word). */
	__atomic_fetch_or(&h->proc_flags, RIP_P_EXECED, __ATOMIC_RELAXED);
	rr_guard_leave();
	return 0;
}

/* ---- the clock -------------------------------------------------------------- */

struct rr_point {
	uint64_t ticks;
	int64_t ns;
};

/*
 * The header's base and its calibration pairs, sorted by ticks, each
 * strictly after the one before in both ticks and time, at a rate within a
 * factor of two of clock_hz (a pair torn by a writer, or any hostile
 * value, is left out).  How many, into p (RIP_CLOCK_PAIRS + 1 room).
 */
static uint32_t rr_clock_points(const struct rip_file_hdr *h, struct rr_point *p)
{
	uint32_t n = 0, m = 0, pairs = h->clock_npairs < RIP_CLOCK_PAIRS ? h->clock_npairs
									  : RIP_CLOCK_PAIRS;

	if (!h->clock_hz || h->clock_kind != RIP_CLOCK_TSC || h->clock_base_ns > INT64_MAX)
		return 0;
	p[n++] = (struct rr_point){ h->clock_base_ticks, (int64_t)h->clock_base_ns };
	for (uint32_t i = 0; i < pairs; i++) {
		struct rr_point q = { h->clock_pairs[i].ticks, (int64_t)h->clock_pairs[i].ns };
		uint32_t j = n++;

		if (!q.ticks || h->clock_pairs[i].ns > INT64_MAX) {
			n--;
			continue;
		}
		for (; j && p[j - 1].ticks > q.ticks; j--)
			p[j] = p[j - 1];
		p[j] = q;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (m) {
			uint64_t dt = p[i].ticks - p[m - 1].ticks;
			int64_t dn = p[i].ns - p[m - 1].ns;
			/* ticks per second over this stretch, against the header's rate */
			unsigned __int128 rate = dn > 0 ? (unsigned __int128)dt * 1000000000u / (uint64_t)dn : 0;

			if (!dt || dn <= 0 || rate < h->clock_hz / 2 || rate > (unsigned __int128)h->clock_hz * 2)
				continue;
		}
		p[m++] = p[i];
	}
	return m;
}

/* The slope from a to b: ns per tick, 32.32 fixed point. */
static unsigned __int128 rr_slope(const struct rr_point *a, const struct rr_point *b)
{
	return ((unsigned __int128)(uint64_t)(b->ns - a->ns) << 32) / (b->ticks - a->ticks);
}

static void rr_clock_init1(struct rr_clock *c, const struct rip_file_hdr *h)
{
	struct rr_point p[RIP_CLOCK_PAIRS + 1];
	uint32_t n = rr_clock_points(h, p);
	unsigned __int128 mult;
	bool line = true;

	memset(c, 0, sizeof(*c));
	c->base_ticks = h->clock_hz ? h->clock_base_ticks : 0;
	c->base_ns = h->clock_hz ? (int64_t)h->clock_base_ns : 0;
	c->mult = h->clock_hz ? ((unsigned __int128)1000000000u << 32) / h->clock_hz : 0;
	if (n < 2)
		return;
	/* One line through the first and the last, if every pair lies near it. */
	mult = rr_slope(&p[0], &p[n - 1]);
	for (uint32_t i = 1; i + 1 < n && line; i++) {
		int64_t d = rr_line_ns(p[0].ticks, p[0].ns, mult, p[i].ticks) - p[i].ns;

		line = d >= -RR_CLOCK_FIT_NS && d <= RR_CLOCK_FIT_NS;
	}
	if (line) {
		c->base_ticks = p[0].ticks;
		c->base_ns = p[0].ns;
		c->mult = mult;
		return;
	}
	/* A segment per stretch; the last one's rate goes on past it. */
	for (uint32_t i = 0; i < n; i++) {
		c->seg[i].ticks = p[i].ticks;
		c->seg[i].ns = p[i].ns;
		c->seg[i].mult = i + 1 < n ? rr_slope(&p[i], &p[i + 1]) : c->seg[i - 1].mult;
	}
	c->nseg = n;
}

/* Is the ns of base_ticks + d on c's line (mult64) INT64_MAX, or past it (saturated)? */
static bool rr_clock_sat(const struct rr_clock *c, uint64_t d)
{
	unsigned __int128 p = (unsigned __int128)d * c->mult64;
	int64_t r;

	return (uint64_t)(p >> 95) != 0 || __builtin_add_overflow(c->base_ns, (int64_t)(p >> 32), &r) ||
	       r == INT64_MAX;
}

void rr_clock_init(struct rr_clock *c, const struct rip_file_hdr *h)
{
	uint64_t lo = 0, hi;

	rr_clock_init1(c, h);
	c->mult64 = !c->nseg && !(c->mult >> 64) ? (uint64_t)c->mult : 0;
	c->span = 0;
	if (!c->mult64 || rr_clock_sat(c, 0))
		return;
	/*
	 * The first d that saturates (the line rises with d), searched; none up
	 * to the last tick: span ends there, that one tick left to the checked
	 * path.  span is at most 2^64 - base_ticks, so a tick before the base
	 * (d wrapped) is never below it.
	 */
	hi = UINT64_MAX - c->base_ticks;
	if (!rr_clock_sat(c, hi)) {
		c->span = hi;
		return;
	}
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (rr_clock_sat(c, mid))
			hi = mid;
		else
			lo = mid;
	}
	c->span = hi;
}

int64_t rr_clock_seg_ns(const struct rr_clock *c, uint64_t ticks)
{
	uint32_t lo = 0, hi = c->nseg;

	/* the last segment that starts at or before ticks (the first one before it all) */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c->seg[mid].ticks <= ticks)
			lo = mid;
		else
			hi = mid;
	}
	return rr_line_ns(c->seg[lo].ticks, c->seg[lo].ns, c->seg[lo].mult, ticks);
}

int rr_clock_line(const struct rip_file_hdr *h, uint64_t *hz, uint64_t *base_ticks,
		  uint64_t *base_ns)
{
	struct rr_clock c;

	*hz = h->clock_hz;
	*base_ticks = h->clock_base_ticks;
	*base_ns = h->clock_base_ns;
	rr_clock_init(&c, h);
	if (c.nseg)
		return -EDOM;
	if (c.mult) {
		/* ticks per second: 1e9 * 2^32 / mult, rounded */
		unsigned __int128 r = (((unsigned __int128)1000000000u << 33) / c.mult + 1) / 2;

		if (r >= RIP_CLOCK_HZ_MIN_READ && r <= RIP_CLOCK_HZ_MAX_READ) {
			*hz = (uint64_t)r;
			*base_ticks = c.base_ticks;
			*base_ns = (uint64_t)c.base_ns;
		}
	}
	return 0;
}

/*
 * Ticks to ns as a multiply and a shift (ns = d * mult >> 32, mult =
 * 1e9 * 2^32 / hz): readers convert every event, and a 128-bit division
 * each time showed in their profiles.  The clock is kept per thread for the
 * last header seen (its rate, base and pairs).
 */
int64_t rr_ticks_to_ns(const struct rip_file_hdr *h, uint64_t ticks)
{
	/* the clock of the last file asked about: no 128-bit division per call */
	static __thread uint64_t hz, base_ticks, base_ns, last_pair;
	static __thread uint32_t npairs;
	static __thread struct rr_clock c;
	uint64_t lp = h->clock_npairs ? h->clock_pairs[(h->clock_npairs - 1) % RIP_CLOCK_PAIRS].ticks
				      : 0;

	if (h->clock_hz != hz || h->clock_base_ticks != base_ticks ||
	    h->clock_base_ns != base_ns || h->clock_npairs != npairs || lp != last_pair) {
		rr_clock_init(&c, h);
		hz = h->clock_hz;
		base_ticks = h->clock_base_ticks;
		base_ns = h->clock_base_ns;
		npairs = h->clock_npairs;
		last_pair = lp;
	}
	return rr_clock_ns(&c, ticks);
}

uint64_t rr_now_ticks(const struct rip_file_hdr *h)
{
	struct timespec ts;

#if defined(__x86_64__)
	if (h->clock_kind == RIP_CLOCK_TSC) {
		uint32_t lo, hi;

		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	}
#endif
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- finding files --------------------------------------------------------------- */

/* Does RIP_DIR name the one directory of ring files (rr_dirs)? */
static bool rr_dir_named(void)
{
	const char *d = getenv("RIP_DIR");

	return d && *d;
}

int rr_dirs(char dirs[][PATH_MAX], int max)
{
	const char *d = getenv("RIP_DIR"), *x = getenv("XDG_RUNTIME_DIR");
	int n = 0;

	if (d && *d && n < max)
		snprintf(dirs[n++], PATH_MAX, "%s", d);
	if (!(d && *d) && x && *x && n < max)
		snprintf(dirs[n++], PATH_MAX, "%s/rip", x);
	if (!(d && *d) && n < max)
		snprintf(dirs[n++], PATH_MAX, "/dev/shm");
	return n;
}

int rr_open_regular(const char *path, int flags)
{
	char proc[40];
	struct stat st;
	int pfd = open(path, O_PATH | O_CLOEXEC | (flags & O_NOFOLLOW)), fd, e;

	if (pfd < 0)
		return -1;
	if (fstat(pfd, &st)) {
		e = errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		e = S_ISLNK(st.st_mode) ? ELOOP : EINVAL;
		goto out_close;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, (flags & ~O_NOFOLLOW) | O_CLOEXEC);
	e = errno;
	if (fd < 0 && e == ENOENT && access("/proc/self/fd", F_OK)) {
		/* no /proc: the name again, and a check after the fact */
		fd = open(path, flags | O_CLOEXEC | O_NONBLOCK);
		e = errno;
		if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
			close(fd);
			fd = -1;
			e = EINVAL;
		}
	}
	close(pfd);
	errno = e;
	return fd;
out_close:
	close(pfd);
	errno = e;
	return -1;
}

/* A C1 control in UTF-8 (U+0080..U+009F): c2 80..c2 9f. */
static bool rr_c1(const unsigned char *p)
{
	return p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
}

bool rr_has_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
		if (*p < 0x20 || *p == 0x7f || rr_c1(p))
			return true;
	return false;
}

void rr_printable(char *s)
{
	for (unsigned char *p = (unsigned char *)s; *p; p++) {
		if (rr_c1(p)) {
			p[0] = p[1] = '?';
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			*p = '?';
		}
	}
}

bool rr_is_ring(const char *path)
{
	char magic[8];
	int fd = rr_open_regular(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	bool ok;

	if (fd < 0)
		return false;
	ok = pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
	     !memcmp(magic, RIP_MAGIC, sizeof(magic));
	close(fd);
	return ok;
}

bool rr_run_dir_held(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	bool held;

	if (fd < 0)
		return true;
	held = flock(fd, LOCK_EX | LOCK_NB) != 0;
	close(fd); /* and the lock we may have taken with it */
	return held;
}

/* Is name one of rip run's directories? */
static bool rr_run_dir_name(const char *name)
{
	return !strncmp(name, RR_RUN_DIR_PREFIX, strlen(RR_RUN_DIR_PREFIX)) &&
	       name[strlen(RR_RUN_DIR_PREFIX)] && !strchr(name, '/');
}

/*
 * The caller's regular files of dir, and (depth 0) of its rip run
 * directories; every user's with RR_EACH_ALL_USERS.
 */
static int rr_each_in(const char *dir, int depth, unsigned flags, rr_file_cb cb, void *arg)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort), ret = 0;
	uid_t me = geteuid();
	bool all = flags & RR_EACH_ALL_USERS;

	if (n < 0)
		return -errno;
	for (int k = 0; k < n; k++) {
		char path[PATH_MAX];
		struct stat st;
		int len;

		if (ret)
			goto next;
		len = snprintf(path, sizeof(path), "%s/%s", dir, names[k]->d_name);
		if (len < 0 || (size_t)len >= sizeof(path) || lstat(path, &st) ||
		    (st.st_uid != me && !all))
			goto next;
		if (S_ISREG(st.st_mode)) {
			ret = cb(path, &st, arg);
		} else if (S_ISDIR(st.st_mode) && depth == 0 && rr_run_dir_name(names[k]->d_name) &&
			   !(st.st_mode & 022)) {
			int e = rr_each_in(path, 1, flags, cb, arg);

			if (e > 0)
				ret = e; /* the callback's: stop; an unreadable directory is skipped */
			else if (e < 0 && e != -ENOENT && e != -EACCES && e != -ENOTDIR)
				ret = e;
			else
				ret = cb(path, &st, arg); /* the directory itself, after its files */
		}
	next:
		free(names[k]);
	}
	free(names);
	return ret;
}

int rr_each_file(const char *only_dir, unsigned flags, rr_file_cb cb, void *arg, char *err,
		 size_t errlen)
{
	char dirs[3][PATH_MAX];
	int nd, ret = 0;

	if (only_dir) {
		ret = rr_each_in(only_dir, 0, flags, cb, arg);
		if (ret < 0 && ret != -ENOMEM)
			return rr_fail(err, errlen, ret, "%s: %s", only_dir, strerror(-ret));
		return ret;
	}
	nd = rr_dirs(dirs, 3);
	for (int i = 0; i < nd && !ret; i++) {
		ret = rr_each_in(dirs[i], 0, flags, cb, arg);
		/*
		 * The defaults need not be there; RIP_DIR, the one directory
		 * when set, was asked for: one missing or not a directory is the
		 * mistake to name, not an empty list.
		 */
		if (ret < 0 && ret != -ENOMEM && rr_dir_named())
			return rr_fail(err, errlen, ret, "RIP_DIR=%s: %s", dirs[i], strerror(-ret));
		if (ret < 0 && ret != -ENOMEM)
			ret = 0; /* a directory that is not there */
	}
	if (ret == -ENOMEM)
		rr_fail(err, errlen, ret, "out of memory");
	return ret;
}

/* ---- pid namespaces --------------------------------------------------------------- */

/* The inode of pid's pid namespace (0: this process's), 0 when it cannot be read. */
static uint64_t rr_pidns(pid_t pid)
{
	char path[64];
	struct stat st;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/pid");
	return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

/* pid's pid in its own namespace: the last of its NSpid; 0 when unknown. */
static pid_t rr_ns_pid(pid_t pid)
{
	char path[64], line[256];
	pid_t last = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fp = fopen(path, "re");
	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp)) {
		char *p = line + 6, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (;;) {
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			if (v > 0 && v <= INT32_MAX)
				last = (pid_t)v;
			p = end;
		}
		break;
	}
	fclose(fp);
	return last;
}

/*
 * The pid here of the process that wrote h: h->pid, unless h says it was
 * written in another pid namespace than ours (a container's process, read
 * from the host); then the process found in /proc whose namespace, last
 * NSpid and start time are h's, or 0 when none is (gone, or out of sight).
 * The last one found is remembered: rip ls reads a container's files in a
 * row.
 */
static pid_t rr_host_pid(const struct rip_file_hdr *h)
{
	static uint64_t last_ns, last_start;
	static pid_t last_pid, last_host;
	struct dirent *e;
	pid_t found = 0;
	DIR *d;

	if (!h->pidns || h->pid <= 0 || h->pidns == rr_pidns(0))
		return h->pid;
	if (last_ns == h->pidns && last_pid == h->pid && last_start == h->start_ticks &&
	    rr_pidns(last_host) == h->pidns && rr_proc_start_ticks(last_host) == h->start_ticks)
		return last_host;
	d = opendir("/proc");
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		long v = atol(e->d_name);

		if (e->d_name[0] < '1' || e->d_name[0] > '9' || v <= 0 || v > INT32_MAX)
			continue;
		if (rr_pidns((pid_t)v) == h->pidns && rr_ns_pid((pid_t)v) == h->pid &&
		    rr_proc_start_ticks((pid_t)v) == h->start_ticks)
			found = (pid_t)v;
	}
	closedir(d);
	if (found) {
		last_ns = h->pidns;
		last_pid = h->pid;
		last_start = h->start_ticks;
		last_host = found;
	}
	return found;
}

/*
 * Is path, opened without following a link and checked on its descriptor,
 * a regular file of owner (unless RR_ANY_OWNER) whose header (magic) has pid
 * and start?  1 or 0, with the header in h and the owner in *uid; -2 for
 * another owner; -1 when it cannot be read or has no magic.
 */
static int rr_hdr_is_at(const char *path, int nofollow, pid_t pid, uint64_t start, uid_t owner,
			uid_t *uid, struct rip_file_hdr *h);

static int rr_hdr_is(const char *path, pid_t pid, uint64_t start, uid_t owner, uid_t *uid,
		     struct rip_file_hdr *h)
{
	return rr_hdr_is_at(path, O_NOFOLLOW, pid, start, owner, uid, h);
}

/* rr_hdr_is, nofollow 0: path is a link to follow (a /proc/PID/map_files entry). */
static int rr_hdr_is_at(const char *path, int nofollow, pid_t pid, uint64_t start, uid_t owner,
			uid_t *uid, struct rip_file_hdr *h)
{
	/*
	 * A regular file only, never even opened otherwise: the path may be a
	 * line of another user's /proc/PID/maps, a name in their mount
	 * namespace, where a device may be in ours (an open alone of some does
	 * something).
	 */
	int fd = rr_open_regular(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | nofollow);
	struct stat st;
	int ok = -1;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto out_close;
	*uid = st.st_uid;
	if (owner != RR_ANY_OWNER && st.st_uid != owner) {
		ok = -2;
		goto out_close;
	}
	if (pread(fd, h, sizeof(*h), 0) != (ssize_t)sizeof(*h) ||
	    memcmp(h->magic, RIP_MAGIC, sizeof(h->magic)))
		goto out_close;
	ok = (h->pid == pid || (h->pidns && rr_host_pid(h) == pid)) && h->start_ticks == start;
out_close:
	close(fd);
	return ok;
}

struct rr_find {
	pid_t pid;
	uint64_t now;	     /* the start time of the process that has pid now, or 0 */
	char best[PATH_MAX]; /* the newest of ours whose header matches */
	time_t mtime;
	uint64_t best_start; /* best's process start time and image (rn_name) */
	unsigned best_gen;
	char theirs[PATH_MAX]; /* another user's, refused */
	uid_t their_uid;
	char bad[PATH_MAX]; /* ours, but its header is another process's */
	pid_t bad_pid;
	uint64_t bad_start, bad_name_start;
	char earlier[PATH_MAX]; /* ours, of an earlier process with the same pid */
	uint64_t earlier_start;
};

/*
 * Is the file named n, of status st, newer than the best found so far?  Of
 * one process (its pid and start time), the later image: execve keeps both,
 * the old image's file is written last (marked replaced) and the files come
 * in name order, rip-P-S.1.ring before rip-P-S.ring.  Of different
 * processes, the one written last.
 */
static bool rr_find_newer(const struct rr_find *fd, const struct rn_name *n, const struct stat *st)
{
	if (!fd->best[0])
		return true;
	if (n->start == fd->best_start)
		return n->gen > fd->best_gen;
	return st->st_mtime >= fd->mtime;
}

static int rr_find_one(const char *path, const struct stat *st, void *arg)
{
	struct rr_find *fd = arg;
	const char *base = strrchr(path, '/');
	struct rip_file_hdr h;
	struct rn_name n;
	uid_t uid;
	int ok;

	if (!S_ISREG(st->st_mode) || rn_parse(base ? base + 1 : path, &n) || n.pid != fd->pid)
		return 0;
	if (st->st_uid != geteuid()) {
		snprintf(fd->theirs, sizeof(fd->theirs), "%s", path);
		fd->their_uid = st->st_uid;
		return 0;
	}
	ok = rr_hdr_is(path, n.pid, n.start, geteuid(), &uid, &h);
	if (ok == -2) { /* swapped since the scan's lstat */
		snprintf(fd->theirs, sizeof(fd->theirs), "%s", path);
		fd->their_uid = uid;
		return 0;
	}
	if (ok == 0) {
		snprintf(fd->bad, sizeof(fd->bad), "%s", path);
		fd->bad_pid = h.pid;
		fd->bad_start = h.start_ticks;
		fd->bad_name_start = n.start;
		return 0;
	}
	/*
	 * ok < 0: no magic (a file being created, or broken): a candidate all
	 * the same, so that rr_open tells what is wrong with it; rr_open_target
	 * checks its pid once it is valid.
	 */
	if (fd->now && n.start != fd->now) {
		snprintf(fd->earlier, sizeof(fd->earlier), "%s", path);
		fd->earlier_start = n.start;
		return 0;
	}
	if (rr_find_newer(fd, &n, st)) {
		snprintf(fd->best, sizeof(fd->best), "%s", path);
		fd->mtime = st->st_mtime;
		fd->best_start = n.start;
		fd->best_gen = n.gen;
	}
	return 0;
}

/*
 * The file of a line of /proc/PID/maps (the path trimmed in place) when the
 * line is a shared mapping of a file, with rw one mapped read-write too;
 * else NULL.  A file unlinked since (" (deleted)") is NULL too, unless
 * deleted is given: then *deleted says so.
 */
static char *rr_maps_shared_file(char *line, bool rw, bool *deleted)
{
	char *p = strchr(line, '/'), *perm = strchr(line, ' ');
	size_t l;

	/* perms "r?-s" (rw: "rw-s") */
	if (!p || !perm || perm > p || strlen(perm) < 6 || perm[4] != 's' ||
	    (rw && strncmp(perm + 1, "rw-s ", 5)))
		return NULL;
	l = strlen(p);
	if (l && p[l - 1] == '\n')
		p[--l] = 0;
	if (l >= 10 && !strcmp(p + l - 10, " (deleted)")) {
		if (!deleted)
			return NULL;
		*deleted = true;
	} else if (deleted) {
		*deleted = false;
	}
	return p;
}

/* The ring file the live process pid maps whose header is its own: 0, or -ENOENT. */
static int rr_find_mapped(pid_t pid, uint64_t start, char *path, size_t len, uid_t *owner)
{
	char maps[64], line[PATH_MAX + 256];
	struct stat pst;
	bool gone;
	FILE *fp;
	int ret = -ENOENT;

	snprintf(maps, sizeof(maps), "/proc/%d", (int)pid);
	if (stat(maps, &pst))
		return -ENOENT;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	fp = fopen(maps, "re");
	if (!fp)
		return -ENOENT;
	while (ret && fgets(line, sizeof(line), fp)) {
		char mf[96], *p = rr_maps_shared_file(line, true, &gone);
		struct rip_file_hdr h;
		uid_t uid;

		if (!p)
			continue;
		/*
		 * Unlinked (a cleaner, logind's RemoveIPC at logout): the process's
		 * map_files link to the mapping still reaches the file, followed.
		 */
		if (gone) {
			snprintf(mf, sizeof(mf), "/proc/%d/map_files/%.*s", (int)pid,
				 (int)strcspn(line, " "), line);
			p = mf;
		}
		/*
		 * Its own file, the caller's or the process's user's: not one it
		 * maps of another process (rip record maps its target's).
		 */
		if (rr_hdr_is_at(p, gone ? 0 : O_NOFOLLOW, pid, start, RR_ANY_OWNER, &uid, &h) ==
			    1 &&
		    (uid == geteuid() || uid == pst.st_uid)) {
			if (strlen(p) >= len) {
				ret = -ENAMETOOLONG;
				break;
			}
			snprintf(path, len, "%s", p);
			*owner = uid;
			ret = 0;
		}
	}
	fclose(fp);
	return ret;
}

/* Add t to v (max of them, *n so far) unless its pid is there. */
static void rr_traced_add(struct rr_traced *v, size_t max, size_t *n, const struct rr_traced *t)
{
	for (size_t i = 0; i < *n && i < max; i++)
		if (v[i].pid == t->pid)
			return;
	if (*n < max)
		v[*n] = *t;
	++*n;
}

/* The children of pid, from /proc/PID/task/TID/children of each thread. */
static void rr_children(pid_t pid, struct rr_traced *v, size_t max, size_t *n)
{
	char path[96], buf[4096];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *p, *end;
		ssize_t got;
		int fd;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' || strlen(de->d_name) > 10)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children", (int)pid, de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		got = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (got <= 0)
			continue;
		buf[got] = 0;
		for (p = buf;; p = end) {
			struct rr_traced t = { 0 };
			long c = strtol(p, &end, 10);

			if (end == p || c <= 0 || c > INT32_MAX)
				break;
			t.pid = (pid_t)c;
			snprintf(path, sizeof(path), "/proc/%ld/comm", c);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				ssize_t k = read(fd, t.comm, sizeof(t.comm) - 1);

				close(fd);
				t.comm[k > 0 ? k : 0] = 0;
				t.comm[strcspn(t.comm, "\n")] = 0;
			}
			rr_traced_add(v, max, n, &t);
		}
	}
	closedir(d);
}

size_t rr_consumed_by(pid_t pid, struct rr_traced *v, size_t max)
{
	char maps[64], line[PATH_MAX + 256];
	size_t n = 0;
	FILE *fp;

	if (pid <= 0 || !rr_proc_start_ticks(pid))
		return 0;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	fp = fopen(maps, "re");
	if (fp) {
		while (fgets(line, sizeof(line), fp)) {
			char *p = rr_maps_shared_file(line, false, NULL);
			struct rr_traced t = { .ring = true };
			struct rip_file_hdr h;
			uid_t uid;

			if (!p)
				continue;
			/* any header (asked for pid 0: 0 or 1 once read); its pid another's */
			if (rr_hdr_is(p, 0, 0, RR_ANY_OWNER, &uid, &h) < 0 || h.pid <= 0 ||
			    h.pid == pid || h.ev_consumer != (uint32_t)pid)
				continue;
			t.pid = (pid_t)h.pid;
			memcpy(t.comm, h.comm, sizeof(h.comm) < sizeof(t.comm) - 1 ? sizeof(h.comm)
										: sizeof(t.comm) - 1);
			rr_traced_add(v, max, &n, &t);
		}
		fclose(fp);
	}
	if (!n)
		rr_children(pid, v, max, &n);
	return n;
}

/* rr_find_gone's search: the copy a note of rip run's names, of pid started at start. */
struct rr_gone {
	pid_t pid;
	uint64_t now; /* the start time of the process that has pid now, or 0 */
	char copy[PATH_MAX];
};

/*
 * A note RING.gone of rip run's (record/family.c fam_note_gone) in one of
 * its directories, on a followed child that died while it runs: the path
 * of the copy of RING in the child's trace, taken when that file is the
 * caller's and its header has the pid and start time of the note's name.
 */
static int rr_find_gone(const char *path, const struct stat *st, void *arg)
{
	struct rr_gone *g = arg;
	const char *base = strrchr(path, '/'), *dir;
	char copy[PATH_MAX];
	struct rip_file_hdr h;
	struct rn_name n;
	ssize_t len;
	uid_t uid;
	int fd;

	if (!S_ISREG(st->st_mode) || !base || rn_parse_gone(base + 1, &n) || n.pid != g->pid ||
	    (g->now && n.start != g->now) || st->st_uid != geteuid() ||
	    st->st_size >= (off_t)sizeof(copy))
		return 0;
	/* only in rip run's own directories: PARENT/rip-run.XXXXXX/NOTE */
	for (dir = base - 1; dir > path && *dir != '/'; dir--)
		;
	if (strncmp(dir + (*dir == '/'), RR_RUN_DIR_PREFIX, strlen(RR_RUN_DIR_PREFIX)))
		return 0;
	fd = rr_open_regular(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	len = pread(fd, copy, sizeof(copy) - 1, 0);
	close(fd);
	if (len <= 0 || copy[0] != '/')
		return 0;
	copy[len] = 0;
	if (rr_hdr_is(copy, n.pid, n.start, geteuid(), &uid, &h) == 1)
		snprintf(g->copy, sizeof(g->copy), "%s", copy);
	return 0;
}

/* The parent of live process pid, from /proc/PID/stat; 0 if it cannot be read. */
static pid_t rr_proc_ppid(pid_t pid)
{
	char buf[512], *p;
	int ppid;

	if (!rr_proc_read(pid, "stat", buf, sizeof(buf)))
		return 0;
	/* "PID (COMM) STATE PPID ...": the name may hold anything, the last ')' ends it */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1 || ppid <= 0)
		return 0;
	return (pid_t)ppid;
}

/* The effective user and group of live process pid, from /proc/PID/status; 0 or -errno. */
static int rr_proc_ids(pid_t pid, uid_t *uid, gid_t *gid)
{
	char path[64], line[256];
	unsigned long u = 0, g = 0;
	int got = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fp = fopen(path, "re");
	if (!fp)
		return -errno;
	/* "Uid:\tREAL\tEFFECTIVE\tSAVED\tFS" */
	while (fgets(line, sizeof(line), fp) && got != 3) {
		if (sscanf(line, "Uid: %*u %lu", &u) == 1)
			got |= 1;
		else if (sscanf(line, "Gid: %*u %lu", &g) == 1)
			got |= 2;
	}
	fclose(fp);
	if (got != 3)
		return -EINVAL;
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	return 0;
}

/*
 * Does live process pid's family follow forks: RIP_FOLLOW in its
 * environment (as it started: /proc/PID/environ), read as librip reads it
 * (lib/ring.c rip_follows)?  1 or 0; -1 when it cannot be read.
 */
static int rr_proc_follows_fork(pid_t pid)
{
	char path[64], *env = NULL, *p, *end;
	size_t cap = 0, n = 0;
	int fd, ret = 1;
	ssize_t got;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	do {
		if (n + 4096 + 1 > cap) {
			char *e = realloc(env, cap = n + 65536);

			if (!e) {
				free(env);
				close(fd);
				return -1;
			}
			env = e;
		}
		got = read(fd, env + n, cap - n - 1);
		n += got > 0 ? (size_t)got : 0;
	} while (got > 0 && n < (1u << 20));
	close(fd);
	if (got < 0 || !env) {
		free(env);
		return -1;
	}
	env[n] = 0;
	for (p = env, end = env + n; p < end; p += strlen(p) + 1) {
		const char *s = p + strlen("RIP_FOLLOW=");

		if (strncmp(p, "RIP_FOLLOW=", strlen("RIP_FOLLOW=")))
			continue;
		if (!*s || !strcmp(s, "1") || !strcmp(s, "all"))
			break;
		ret = 0;
		while (*s) {
			size_t len = strcspn(s, ",");

			if (len == 4 && !strncmp(s, "fork", 4)) {
				ret = 1;
				break;
			}
			s += len + (s[len] == ',');
		}
		break;
	}
	free(env);
	return ret;
}

/*
 * Can live process pid make a file in the directory of the ring file at
 * ring (by its mode bits: a process that dropped privileges cannot make one
 * in rip run's private directory, its user's and mode 0700)?  false with
 * the directory in dir, its owner in *owner and pid's user in *uid when it
 * cannot; true when it can or that cannot be told.
 */
static bool rr_can_create_beside(pid_t pid, const char *ring, char *dir, size_t len, uid_t *owner,
				 uid_t *uid)
{
	const char *slash = strrchr(ring, '/');
	struct stat st;
	gid_t gid = 0;
	unsigned bits;

	if (!slash || slash == ring || (size_t)(slash - ring) >= len || rr_proc_ids(pid, uid, &gid))
		return true;
	snprintf(dir, len, "%.*s", (int)(slash - ring), ring);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode) || *uid == 0)
		return true;
	bits = *uid == st.st_uid ? st.st_mode >> 6 :
	       gid == st.st_gid	 ? st.st_mode >> 3 :
				   st.st_mode;
	*owner = st.st_uid;
	return (bits & 3) == 3; /* write and search */
}

int rr_find_pid(pid_t pid, char *path, size_t len, uid_t *owner, char *err, size_t errlen)
{
	struct rr_find fd = { .pid = pid, .now = rr_proc_start_ticks(pid) };
	char who[128];
	int ret;

	/* A live process: whatever ring file of its own it has mapped, wherever it is. */
	if (fd.now) {
		ret = rr_find_mapped(pid, fd.now, path, len, owner);
		if (ret != -ENOENT)
			return ret ? rr_fail(err, errlen, ret, "path too long") : 0;
	}
	/* A dead one (or one we cannot inspect): its file by name, the newest of ours. */
	ret = rr_each_file(NULL, 0, rr_find_one, &fd, err, errlen);
	if (ret < 0)
		return ret;
	/* Others' files are not read, but named: the user sees why there is none. */
	if (!fd.best[0])
		ret = rr_each_file(NULL, RR_EACH_ALL_USERS, rr_find_one, &fd, err, errlen);
	if (ret < 0)
		return ret;
	if (fd.best[0]) {
		if (strlen(fd.best) >= len)
			return rr_fail(err, errlen, -ENAMETOOLONG, "path too long");
		snprintf(path, len, "%s", fd.best);
		*owner = geteuid();
		return 0;
	}
	if (fd.bad[0])
		return rr_fail(err, errlen, -EBADMSG,
			       "%s: refused: its header is of pid %d started at %llu, not of pid %d "
			       "started at %llu as its name says (a file made to look like another "
			       "process's?)",
			       fd.bad, (int)fd.bad_pid, (unsigned long long)fd.bad_start, (int)pid,
			       (unsigned long long)fd.bad_name_start);
	if (fd.earlier[0])
		return rr_fail(err, errlen, -ENOENT,
			       "pid %d is a process started at %llu without a ring file; %s is of "
			       "an earlier process with that pid (started at %llu): name the file "
			       "to read it",
			       (int)pid, (unsigned long long)fd.now, fd.earlier,
			       (unsigned long long)fd.earlier_start);
	if (fd.theirs[0])
		return rr_fail(err, errlen, -EPERM,
			       "%s: owned by %s, not by you: refused (in a shared directory, anyone "
			       "may put a file there)%s",
			       fd.theirs, rr_user_name(fd.their_uid, who, sizeof(who)),
			       geteuid() == 0 ? "; name the file to read it anyway" : "");
	/* A followed child that died under a rip run that still runs: its trace's copy. */
	{
		struct rr_gone g = { .pid = pid, .now = fd.now };

		if (!rr_each_file(NULL, 0, rr_find_gone, &g, err, errlen) && g.copy[0]) {
			if (strlen(g.copy) >= len)
				return rr_fail(err, errlen, -ENAMETOOLONG, "path too long");
			snprintf(path, len, "%s", g.copy);
			*owner = geteuid();
			return 0;
		}
	}
	/* A fork child of a traced process (a server's worker): forks are followed on request. */
	if (fd.now) {
		pid_t ppid = rr_proc_ppid(pid);
		uint64_t pstart = ppid > 1 ? rr_proc_start_ticks(ppid) : 0;
		char ppath[PATH_MAX];
		uid_t puid, downer = 0, uid = 0;
		char dir[PATH_MAX], whom[128], whose[128];
		int follows = rr_proc_follows_fork(pid);

		if (!pstart || rr_find_mapped(ppid, pstart, ppath, sizeof(ppath), &puid))
			goto none;
		if (follows && !rr_can_create_beside(pid, ppath, dir, sizeof(dir), &downer, &uid))
			return rr_fail(err, errlen, -ENOENT,
				       "no ring file for pid %d: its parent %d is traced (%s), but "
				       "pid %d runs as %s, who cannot create files in %s (%s's): "
				       "a program that changes its user (drops privileges) before "
				       "it forks or execs has those children untraced%s",
				       (int)pid, (int)ppid, ppath, (int)pid,
				       rr_user_name(uid, whom, sizeof(whom)), dir,
				       rr_user_name(downer, whose, sizeof(whose)),
				       follows < 0 ? " (and without rip run --follow-fork, every "
						     "child is)" :
						     "");
		return rr_fail(err, errlen, -ENOENT,
			       "no ring file for pid %d: its parent %d is traced (%s), but "
			       "not the children it forks (rip run --follow-fork traces them)",
			       (int)pid, (int)ppid, ppath);
	}
none:
	/* Gone: a run that ended removed its file, and left its copy in the trace. */
	if (!fd.now)
		return rr_fail(err, errlen, -ENOENT,
			       "no ring file for pid %d, which is not running (a program "
			       "that ended under rip run left its file in the trace: rip ps "
			       "TRACE; else was it linked with librip and run with RIP_RING=1? "
			       "is RIP_DIR the same?)",
			       (int)pid);
	return rr_fail(err, errlen, -ENOENT,
		       "no ring file for pid %d (is it linked with librip and run with "
		       "RIP_RING=1? is RIP_DIR the same?)",
		       (int)pid);
}

/* ---- durations -------------------------------------------------------------------- */

const char *rr_fmt_duration(int64_t ns, char *buf, size_t len)
{
	uint64_t v = ns < 0 ? 0 : (uint64_t)ns;
	uint64_t s = v / 1000000000u;

	if (v < 1000000u)
		snprintf(buf, len, "%lluus", (unsigned long long)(v / 1000u));
	else if (v < 1000000000u)
		snprintf(buf, len, "%llums", (unsigned long long)(v / 1000000u));
	else if (s < 60)
		snprintf(buf, len, "%llu.%llus", (unsigned long long)s,
			 (unsigned long long)(v % 1000000000u / 100000000u));
	else if (s < 3600)
		snprintf(buf, len, "%llum%02llus", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
	else if (s < 86400)
		snprintf(buf, len, "%lluh%02llum", (unsigned long long)(s / 3600),
			 (unsigned long long)(s % 3600 / 60));
	else
		snprintf(buf, len, "%llud%02lluh", (unsigned long long)(s / 86400),
			 (unsigned long long)(s % 86400 / 3600));
	return buf;
}

int rr_parse_duration(const char *s, int64_t *ns)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0 || v > 86400.0 * 365)
		return -EINVAL;
	if (!*end || !strcmp(end, "s"))
		v *= 1e9;
	else if (!strcmp(end, "ms"))
		v *= 1e6;
	else if (!strcmp(end, "us"))
		v *= 1e3;
	else if (!strcmp(end, "m"))
		v *= 60e9;
	else if (!strcmp(end, "h"))
		v *= 3600e9;
	else
		return -EINVAL;
	*ns = (int64_t)v;
	return 0;
}
