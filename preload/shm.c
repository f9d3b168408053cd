// SPDX-License-Identifier: Apache-2.0
/*
 * preload/shm.c - the shared-memory hooks of librip-preload.so: POSIX
 * shm_open / shm_unlink, System V shmget / shmat / shmdt / shmctl(IPC_RMID),
 * and the MAP_SHARED mappings that mem.c's mmap / munmap / mremap hooks
 * hand over (rip_pl_shm_mapped, rip_pl_shm_unmapping), recorded as the
 * shm:* events of rip/resource.h under RIP_CAT_SHM.
 *
 * shm:create means "this process got the object": shm_open (id = fd,
 * size = its size now, name), shmget (id = shmid, size = the segment's,
 * name = the key as 0x%08x, empty for IPC_PRIVATE); memfd_create's is in
 * fd.c.  Its kind says whether the call made the object (RIP_SHM_OPEN,
 * RIP_SHM_GET) or got one that existed (RIP_SHM_OPEN_EXISTING,
 * RIP_SHM_GET_EXISTING: a consumer's, which readers never call a leak of
 * its own): without O_CREAT / IPC_CREAT it existed, with O_EXCL /
 * IPC_EXCL (or IPC_PRIVATE) the call made it, and with O_CREAT / IPC_CREAT
 * alone a probe just before the call says whether it existed then (one
 * access(2) of /dev/shm/NAME, one shmget(key, 0, 0)); an object made or
 * removed by another process between the probe and the call is then
 * misnamed, a race no reader can see either.  shm_open's
 * descriptor is also an fd:open (kind OPEN, path /dev/shm/NAME): glibc
 * opens it internally, where the open hook cannot see it.  shm:remove is
 * shm_unlink (id -1, name) or IPC_RMID (id = shmid).  shm:resize is an
 * ftruncate of a POSIX object (its descriptor's file is in /dev/shm).
 *
 * Attachments (shmat, and every MAP_SHARED mmap: id = its fd, -1 if
 * anonymous) are kept in a lock-free table of address ranges, so that
 * munmap can tell shared mappings from private ones and shmdt knows the
 * size.  Mapping sizes are in whole pages, what the process really maps;
 * shmat's is the segment size (IPC_STAT, cached per shmid).  A munmap of
 * part of a mapping records a shm:detach of just that part, and the rest
 * stays in the table; a mapping placed over a recorded one (MAP_FIXED,
 * SHM_REMAP) detaches what it replaces first.
 *
 * syscall(SYS_shmget), (SYS_shmat), (SYS_shmdt) and (SYS_shmctl) record
 * what the hooks of shmget, shmat, shmdt and shmctl do, through the same
 * steps (rip_pl_shm_sys_*).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

#define SHM_INLINE static inline __attribute__((always_inline))

/* Enter for an event of either category (the emitters check their own). */
SHM_INLINE bool shm_enter(bool with_fd)
{
	if (with_fd && rip_category_enabled(RIP_CAT_FD))
		return rip_pl_enter(RIP_CAT_FD);
	return rip_pl_enter(RIP_CAT_SHM);
}

/* ---- the table of shared mappings ------------------------------------------------------------ */

/*
 * One entry per attached range [start, end) (end page-aligned).  start is
 * the entry's state: 0 free, 1 claimed (a thread is writing it), else in
 * use.  A thread claims an entry with a CAS on start, writes the other
 * fields, then publishes start with a release store; readers load start
 * with acquire.  Only the claimer writes an entry, so concurrent munmaps
 * of the same range (a racy program) record it once.
 *
 * Deliberate unclaimed reads: shm_map_cut's look at end before it claims
 * and rip_pl_shm_remapped's look at end, id and kind read an entry another
 * thread may be rewriting, so those fields are read and written with
 * relaxed atomics.  The look only picks candidates: shm_map_cut claims the
 * entry and reads it again before it acts, and rip_pl_shm_remapped's answer is
 * as good as the program's own race between mremap and munmap of one range.
 */
#define SHM_MAPS 4096u
#define SHM_CLAIMED ((uintptr_t)1)

struct shm_map {
	uintptr_t start;
	uintptr_t end;
	uint64_t len;  /* bytes recorded for [start, end): end - start, or the segment size */
	int64_t id;    /* fd, shmid, or -1 */
	uint32_t kind; /* RIP_SHM_MMAP or RIP_SHM_AT */
};

static struct shm_map shm_maps[SHM_MAPS];
static uint32_t shm_maps_top;  /* entries below this index may be in use */
static uint32_t shm_maps_live; /* entries in use: 0 makes munmap's check one load */
static uintptr_t shm_page_size;

static uintptr_t shm_page(void)
{
	uintptr_t p = __atomic_load_n(&shm_page_size, __ATOMIC_RELAXED);

	if (!p) {
		p = getauxval(AT_PAGESZ);
		if (!p)
			p = 4096;
		__atomic_store_n(&shm_page_size, p, __ATOMIC_RELAXED);
	}
	return p;
}

static uintptr_t shm_round(uintptr_t x)
{
	uintptr_t p = shm_page();

	return (x + p - 1) & ~(p - 1);
}

/* Add a range; false if the table is full (then munmap will not know it). */
static bool shm_map_add(uintptr_t start, uintptr_t end, uint64_t len, int64_t id, uint32_t kind)
{
	for (uint32_t i = 0; i < SHM_MAPS; i++) {
		struct shm_map *m = &shm_maps[i];
		uintptr_t free = 0;
		uint32_t top;

		if (__atomic_load_n(&m->start, __ATOMIC_RELAXED) != 0 ||
		    !__atomic_compare_exchange_n(&m->start, &free, SHM_CLAIMED, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&m->end, end, __ATOMIC_RELAXED); /* read unclaimed: see above */
		m->len = len;
		__atomic_store_n(&m->id, id, __ATOMIC_RELAXED);
		__atomic_store_n(&m->kind, kind, __ATOMIC_RELAXED);
		top = __atomic_load_n(&shm_maps_top, __ATOMIC_RELAXED);
		while (top < i + 1 &&
		       !__atomic_compare_exchange_n(&shm_maps_top, &top, i + 1, true,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
		__atomic_fetch_add(&shm_maps_live, 1, __ATOMIC_RELAXED);
		/* Publish: pairs with the acquire load of start in shm_map_cut. */
		__atomic_store_n(&m->start, start, __ATOMIC_RELEASE);
		return true;
	}
	return false;
}

/*
 * Take [a, b) out of every recorded range, recording a shm:detach of each
 * part taken (kind, or the entry's own for shmdt: see shm_detach_kind).
 * Parts left over on either side stay in the table.  Returns how many bytes
 * of [a, b) recorded ranges held (0: none overlapped; the ranges are
 * disjoint, so b - a: all of it).  only_start: take only the range that
 * starts at a (shmdt), whatever its length.
 */
static uint64_t shm_map_cut(uintptr_t a, uintptr_t b, uint32_t bt, uint32_t kind, bool only_start)
{
	uint32_t top = __atomic_load_n(&shm_maps_top, __ATOMIC_RELAXED);
	uint64_t hit = 0;

	for (uint32_t i = 0; i < top; i++) {
		struct shm_map *m = &shm_maps[i];
		uintptr_t s = __atomic_load_n(&m->start, __ATOMIC_ACQUIRE), e, cut_a, cut_b, bb;
		uint64_t len, counted;

		if (s <= SHM_CLAIMED)
			continue;
		/* Relaxed: a look before the claim (see above); re-read under it. */
		if (only_start ? s != a : (__atomic_load_n(&m->end, __ATOMIC_RELAXED) <= a || s >= b))
			continue;
		if (!__atomic_compare_exchange_n(&m->start, &s, SHM_CLAIMED, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue; /* another thread is changing it (or it moved) */
		e = __atomic_load_n(&m->end, __ATOMIC_RELAXED); /* ours now: the claim orders it */
		len = m->len;
		bb = only_start ? e : b;
		cut_a = a > s ? a : s;
		cut_b = bb < e ? bb : e;
		/* Bytes of the recorded length inside the cut (len may end mid-page). */
		counted = 0;
		if (s + len > cut_a)
			counted = (s + len < cut_b ? s + len : cut_b) - cut_a;
		rip_pl_shm_detach((void *)cut_a, counted, bt, kind);
		hit += cut_b - cut_a;
		if (cut_b < e) {
			/* The part after the cut: in this entry, or a new one if both sides stay. */
			uint64_t rest = s + len > cut_b ? s + len - cut_b : 0;

			if (cut_a > s)
				shm_map_add(cut_b, e, rest, m->id, m->kind);
			else {
				m->len = rest;
				__atomic_store_n(&m->start, cut_b, __ATOMIC_RELEASE);
				continue;
			}
		}
		if (cut_a > s) {
			__atomic_store_n(&m->end, cut_a, __ATOMIC_RELAXED);
			m->len = len < cut_a - s ? len : cut_a - s;
			__atomic_store_n(&m->start, s, __ATOMIC_RELEASE);
			continue;
		}
		__atomic_fetch_sub(&shm_maps_live, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&m->start, 0, __ATOMIC_RELEASE);
	}
	return hit;
}

static bool shm_maps_empty(void)
{
	return __atomic_load_n(&shm_maps_live, __ATOMIC_RELAXED) == 0;
}

/* ---- mmap / munmap, through mem.c's hooks ---------------------------------------------------- */

/*
 * mem.c's mmap and mremap hooks, after a successful call that is not an
 * anonymous private mapping (guard up, bt taken, RIP_CAT_SHM enabled).
 * Shared mappings (MAP_SHARED, MAP_SHARED_VALIDATE) are recorded; private
 * file mappings are not shared memory.
 */
void rip_pl_shm_mapped(void *addr, size_t len, int prot, int flags, int fd, off_t off, uint32_t bt)
{
	uintptr_t a = (uintptr_t)addr, b;
	int type = flags & MAP_TYPE;
	int err = errno;

	if ((type != MAP_SHARED && type != MAP_SHARED_VALIDATE) || !len || addr == MAP_FAILED)
		return;
	b = a + shm_round(len);
	if (flags & MAP_ANONYMOUS)
		fd = -1;
	/* Placed over ranges we recorded (MAP_FIXED): those parts are gone. */
	if (!shm_maps_empty())
		shm_map_cut(a, b, bt, RIP_SHM_MUNMAP, false);
	shm_map_add(a, b, b - a, fd, RIP_SHM_MMAP);
	rip_pl_shm_attach(addr, b - a, fd, bt, RIP_SHM_MMAP);
	errno = err;
}

/*
 * mem.c's munmap (and mremap) hook, before the real call: record and
 * forget what of [addr, addr + len) is a recorded shared mapping; true if
 * that was the whole range (a munmap over private and shared mappings
 * takes both: mem.c records the private part).  Arguments munmap would
 * reject record nothing.
 */
bool rip_pl_shm_unmapping(void *addr, size_t len, uint32_t bt)
{
	uintptr_t a = (uintptr_t)addr;
	int err = errno;
	uint64_t hit;

	if (shm_maps_empty() || !len || (a & (shm_page() - 1)) || a + shm_round(len) < a)
		return false;
	hit = shm_map_cut(a, a + shm_round(len), bt, RIP_SHM_MUNMAP, false);
	errno = err;
	return hit == shm_round(len);
}

/*
 * For mem.c's mremap hook, after a successful call (guard up, bt taken):
 * if [old, old + old_len) is a recorded shared mapping, record its
 * shm:detach and a shm:attach of [addr, addr + len) with the same id, and
 * return true; false: not shared memory (mem.c records it).  old_len 0
 * (a second mapping of the same shared pages) and MREMAP_DONTUNMAP (Linux
 * 5.13 takes it for shared mappings) keep the old one.
 */
bool rip_pl_shm_remapped(void *old, size_t old_len, void *addr, size_t len, int flags, uint32_t bt)
{
	uintptr_t o = (uintptr_t)old, a = (uintptr_t)addr, b = a + shm_round(len);
	uint32_t top = __atomic_load_n(&shm_maps_top, __ATOMIC_RELAXED);
	int64_t id = -1;
	uint32_t kind = 0;
	int err = errno;

	if (shm_maps_empty() || !len)
		return false;
	for (uint32_t i = 0; i < top && !kind; i++) {
		struct shm_map *m = &shm_maps[i];
		uintptr_t s = __atomic_load_n(&m->start, __ATOMIC_ACQUIRE);

		/* Unclaimed reads, relaxed: see the table's comment. */
		if (s > SHM_CLAIMED && s <= o && o < __atomic_load_n(&m->end, __ATOMIC_RELAXED)) {
			id = __atomic_load_n(&m->id, __ATOMIC_RELAXED);
			kind = __atomic_load_n(&m->kind, __ATOMIC_RELAXED);
		}
	}
	if (!kind)
		return false;
	if (old_len && !(flags & RIP_PL_MREMAP_DONTUNMAP))
		shm_map_cut(o, o + shm_round(old_len), bt, RIP_SHM_MUNMAP, false);
	shm_map_cut(a, b, bt, RIP_SHM_MUNMAP, false); /* MREMAP_FIXED replaced these */
	shm_map_add(a, b, b - a, id, kind);
	rip_pl_shm_attach(addr, b - a, id, bt, RIP_SHM_MMAP);
	errno = err;
	return true;
}

/* ---- the segment-size cache of shmat --------------------------------------------------------- */

/*
 * shmid -> size, direct-mapped.  key is shmid + 1 (0: empty, -1: being
 * written); a reader re-checks key after reading size, so a concurrent
 * writer only ever costs a miss.
 */
#define SHM_SIZES 64u

static struct {
	int64_t key;
	uint64_t size;
} shm_sizes[SHM_SIZES];

static uint32_t shm_size_slot(int shmid)
{
	return ((uint32_t)shmid * 2654435761u) >> 26; /* top 6 bits: SHM_SIZES == 64 */
}

static bool shm_size_get(int shmid, uint64_t *size)
{
	uint32_t i = shm_size_slot(shmid);
	int64_t key = __atomic_load_n(&shm_sizes[i].key, __ATOMIC_ACQUIRE);

	if (key != (int64_t)shmid + 1)
		return false;
	*size = __atomic_load_n(&shm_sizes[i].size, __ATOMIC_RELAXED);
	/* size before the re-check: pairs with the writer's release of key. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&shm_sizes[i].key, __ATOMIC_RELAXED) == key;
}

static void shm_size_put(int shmid, uint64_t size, bool drop)
{
	uint32_t i = shm_size_slot(shmid);
	int64_t key = __atomic_load_n(&shm_sizes[i].key, __ATOMIC_RELAXED);

	if (key == -1)
		return; /* another writer has it: a cache may forget */
	if (drop && key != (int64_t)shmid + 1)
		return;
	if (!__atomic_compare_exchange_n(&shm_sizes[i].key, &key, -1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&shm_sizes[i].size, size, __ATOMIC_RELAXED);
	/* size before key: pairs with the acquire in shm_size_get. */
	__atomic_store_n(&shm_sizes[i].key, drop ? 0 : (int64_t)shmid + 1, __ATOMIC_RELEASE);
}

/* shmctl without the hook (glibc's, not ours). */
static int shm_ctl_real(int shmid, int cmd, struct shmid_ds *buf)
{
	static int (*real)(int, int, struct shmid_ds *);

	if (!RIP_PL_REAL(real, "shmctl"))
		return rip_pl_enosys();
	return real(shmid, cmd, buf);
}

/* The segment's size: cached, else IPC_STAT (0 if that fails too).  errno kept. */
static uint64_t shm_segment_size(int shmid)
{
	struct shmid_ds ds;
	uint64_t size;
	int err = errno;

	if (shm_size_get(shmid, &size))
		return size;
	size = 0;
	if (shm_ctl_real(shmid, IPC_STAT, &ds) == 0) {
		size = ds.shm_segsz;
		shm_size_put(shmid, size, false);
	}
	errno = err;
	return size;
}

/* ---- POSIX shared memory --------------------------------------------------------------------- */

/*
 * The object's file as glibc opens it: /dev/shm/ and the name without its
 * leading slashes; path + 8 is then the name in its canonical "/NAME" form,
 * the same for shm_open and shm_unlink whatever slashes the program used.
 */
static void shm_path(char path[RIP_STRING_MAX], const char *name)
{
	size_t n;

	while (name && *name == '/')
		name++;
	n = name ? strnlen(name, RIP_STRING_MAX - 10) : 0;
	memcpy(path, "/dev/shm/", 9);
	memcpy(path + 9, name, n);
	path[9 + n] = 0;
}

RIP_PL_EXPORT int shm_open(const char *name, int oflag, mode_t mode)
{
	static int (*real)(const char *, int, mode_t);
	int fd;

	char path[RIP_STRING_MAX];
	uint32_t kind = oflag & O_CREAT ? RIP_SHM_OPEN : RIP_SHM_OPEN_EXISTING;

	if (!RIP_PL_REAL(real, "shm_open"))
		return rip_pl_enosys();
	path[0] = 0;
	if ((oflag & (O_CREAT | O_EXCL)) == O_CREAT && rip_category_enabled(RIP_CAT_SHM)) {
		int err = errno;

		/* made by this call or there already: ask before it (see the top) */
		shm_path(path, name);
		if (access(path, F_OK) == 0)
			kind = RIP_SHM_OPEN_EXISTING;
		errno = err;
	}
	fd = real(name, oflag, mode);
	if (fd >= 0 && shm_enter(true)) {
		int err = errno;
		uint32_t bt = rip_pl_backtrace_id();
		struct stat st;

		if (!path[0])
			shm_path(path, name);
		rip_pl_fd_open(fd, bt, RIP_FD_OPEN, oflag, path);
		if (rip_category_enabled(RIP_CAT_SHM))
			rip_pl_shm_create(fd, fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0, bt,
					  kind, path + 8);
		errno = err;
		rip_pl_leave();
	}
	return fd;
}

RIP_PL_EXPORT int shm_unlink(const char *name)
{
	static int (*real)(const char *);
	int ret;

	if (!RIP_PL_REAL(real, "shm_unlink"))
		return rip_pl_enosys();
	ret = real(name);
	if (ret == 0 && shm_enter(false)) {
		int err = errno;
		char path[RIP_STRING_MAX];

		shm_path(path, name);
		rip_pl_shm_remove(-1, rip_pl_backtrace_id(), RIP_SHM_UNLINK, path + 8);
		errno = err;
		rip_pl_leave();
	}
	return ret;
}

/*
 * ftruncate of a POSIX shared memory object sizes it (shm_open's
 * shm:create had the size of the moment, 0 for a new one): shm:resize
 * with its name.  Whether fd is one is read from /proc/self/fd/FD (one
 * readlink, no allocation, no lock): an object is a file of /dev/shm.
 * Other descriptors record nothing.
 */
SHM_INLINE void shm_truncated(int fd, uint64_t size)
{
	static const char pre[] = "/proc/self/fd/";
	char link[sizeof(pre) + 12], path[RIP_STRING_MAX];
	char digits[12];
	int n = 0, err, v = fd;
	ssize_t len;
	size_t at;

	if (fd < 0 || !shm_enter(false))
		return;
	err = errno;
	memcpy(link, pre, sizeof(pre) - 1);
	at = sizeof(pre) - 1;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof(digits));
	while (n)
		link[at++] = digits[--n];
	link[at] = 0;
	len = readlink(link, path, sizeof(path) - 1);
	if (len > 9 && (!memcmp(path, "/dev/shm/", 9) || !memcmp(path, "/run/shm/", 9))) {
		path[len] = 0;
		/* the canonical name: "/NAME", as shm:create has it */
		rip_pl_shm_resize(fd, size, rip_pl_backtrace_id(), RIP_SHM_FTRUNCATE, path + 8);
	}
	errno = err;
	rip_pl_leave();
}

#define SHM_FTRUNCATE_HOOK(NAME)                                                                   \
	RIP_PL_EXPORT int NAME(int fd, off_t len)                                                  \
	{                                                                                          \
		static int (*real)(int, off_t);                                                    \
		int ret;                                                                           \
                                                                                                   \
		if (!RIP_PL_REAL(real, #NAME))                                                     \
			return rip_pl_enosys();                                                    \
		ret = real(fd, len);                                                               \
		if (ret == 0 && RIP_UNLIKELY(rip_category_enabled(RIP_CAT_SHM)))                   \
			shm_truncated(fd, (uint64_t)len);                                          \
		return ret;                                                                        \
	}

SHM_FTRUNCATE_HOOK(ftruncate)
SHM_FTRUNCATE_HOOK(ftruncate64)

/* ---- System V shared memory ------------------------------------------------------------------ */

/*
 * The recording steps of shmget, shmat, shmdt and shmctl, always inlined:
 * into the exported hook (fr NULL) or into rip_pl_shm_sys_before and
 * _after (fr their frame), which syscall()'s hook calls for
 * syscall(SYS_shmget...): the backtrace is RIP_PL_BT(fr)'s, the hooked
 * call's caller's.
 */

/* glibc's shmget: the probe of shm_get_kind, either path. */
static int (*shm_get_real)(key_t, size_t, int);

/*
 * Before shmget(key, size, flags): the kind its shm:create will have, made
 * or got (see the top; the probe only while RIP_CAT_SHM is on).
 */
SHM_INLINE uint32_t shm_get_kind(key_t key, int flags)
{
	uint32_t kind = RIP_SHM_GET;

	if (key != IPC_PRIVATE && !(flags & IPC_CREAT))
		kind = RIP_SHM_GET_EXISTING;
	else if (key != IPC_PRIVATE && !(flags & IPC_EXCL) && rip_category_enabled(RIP_CAT_SHM) &&
		 RIP_PL_REAL(shm_get_real, "shmget")) {
		int err = errno;

		/* made by this call or there already: ask before it (see the top) */
		if (shm_get_real(key, 0, 0) >= 0)
			kind = RIP_SHM_GET_EXISTING;
		errno = err;
	}
	return kind;
}

/* After shmget(key, size, flags) returned id (< 0: it failed, nothing is recorded). */
SHM_INLINE void shm_rec_get(const void *fr, int id, key_t key, size_t size, int flags,
			    uint32_t kind)
{
	if (id >= 0 && shm_enter(false)) {
		int err = errno;
		uint32_t bt = RIP_PL_BT(fr);
		char name[16];
		uint64_t real_size = size;

		/* A new segment has the size asked for; an existing one its own. */
		if (kind == RIP_SHM_GET && (key == IPC_PRIVATE || (flags & IPC_EXCL)))
			shm_size_put(id, size, false);
		else
			real_size = shm_segment_size(id);
		name[0] = 0;
		if (key != IPC_PRIVATE) {
			static const char hex[] = "0123456789abcdef";

			name[0] = '0';
			name[1] = 'x';
			for (int i = 0; i < 8; i++)
				name[2 + i] = hex[((uint32_t)key >> (28 - 4 * i)) & 15];
			name[10] = 0;
		}
		rip_pl_shm_create(id, real_size, bt, kind, name);
		errno = err;
		rip_pl_leave();
	}
}

RIP_PL_EXPORT int shmget(key_t key, size_t size, int flags)
{
	uint32_t kind;
	int id;

	if (!RIP_PL_REAL(shm_get_real, "shmget"))
		return rip_pl_enosys();
	kind = shm_get_kind(key, flags);
	id = shm_get_real(key, size, flags);
	shm_rec_get(NULL, id, key, size, flags, kind);
	return id;
}

/* After shmat(shmid, ...) returned p ((void *)-1: it failed, nothing is recorded). */
SHM_INLINE void shm_rec_at(const void *fr, void *p, int shmid)
{
	if (p != (void *)-1 && shm_enter(false)) {
		int err = errno;
		uint32_t bt = RIP_PL_BT(fr);
		uint64_t size = shm_segment_size(shmid);
		uintptr_t a = (uintptr_t)p, b = a + shm_round(size ? size : 1);

		if (!shm_maps_empty())
			shm_map_cut(a, b, bt, RIP_SHM_MUNMAP, false); /* SHM_REMAP */
		shm_map_add(a, b, size, shmid, RIP_SHM_AT);
		rip_pl_shm_attach(p, size, shmid, bt, RIP_SHM_AT);
		errno = err;
		rip_pl_leave();
	}
}

RIP_PL_EXPORT void *shmat(int shmid, const void *addr, int flags)
{
	static void *(*real)(int, const void *, int);
	void *p;

	if (!RIP_PL_REAL(real, "shmat")) {
		rip_pl_enosys();
		return (void *)-1;
	}
	p = real(shmid, addr, flags);
	shm_rec_at(NULL, p, shmid);
	return p;
}

/*
 * shmdt: a recorded attachment is detached before the call (the table
 * says it is attached, so the call cannot fail); one we never saw only
 * after the call succeeds, with size 0 (unknown).  shm_dt_before returns
 * what shm_dt_after needs: the backtrace it took (0: none) and, in bit
 * 32, whether it recorded the detach.
 */
#define SHM_DT_KNOWN (1ull << 32)

SHM_INLINE uint64_t shm_dt_before(const void *fr, const void *addr)
{
	uint64_t st = 0;

	if (shm_enter(false)) {
		int err = errno;
		uint32_t bt = RIP_PL_BT(fr);

		st = bt;
		if (!shm_maps_empty() && shm_map_cut((uintptr_t)addr, 0, bt, RIP_SHM_DT, true))
			st |= SHM_DT_KNOWN;
		errno = err;
		rip_pl_leave();
	}
	return st;
}

/* After shmdt(addr) returned ret. */
SHM_INLINE void shm_dt_after(const void *fr, int ret, const void *addr, uint64_t st)
{
	if (ret == 0 && !(st & SHM_DT_KNOWN) && shm_enter(false)) {
		int err = errno;
		uint32_t bt = (uint32_t)st;

		if (!bt)
			bt = RIP_PL_BT(fr);
		rip_pl_shm_detach(addr, 0, bt, RIP_SHM_DT);
		errno = err;
		rip_pl_leave();
	}
}

RIP_PL_EXPORT int shmdt(const void *addr)
{
	static int (*real)(const void *);
	uint64_t st;
	int ret;

	if (!RIP_PL_REAL(real, "shmdt"))
		return rip_pl_enosys();
	st = shm_dt_before(NULL, addr);
	ret = real(addr);
	shm_dt_after(NULL, ret, addr, st);
	return ret;
}

/* After shmctl(shmid, cmd, ...) returned ret: IPC_RMID records shm:remove. */
SHM_INLINE void shm_rec_ctl(const void *fr, int ret, int shmid, int cmd)
{
	/* IPC_64 (0x100) is how glibc asks the kernel for the 64-bit layout */
	if (ret == 0 && (cmd & ~0x100) == IPC_RMID && shm_enter(false)) {
		int err = errno;

		shm_size_put(shmid, 0, true);
		rip_pl_shm_remove(shmid, RIP_PL_BT(fr), RIP_SHM_RMID, NULL);
		errno = err;
		rip_pl_leave();
	}
}

RIP_PL_EXPORT int shmctl(int shmid, int cmd, struct shmid_ds *buf)
{
	int ret = shm_ctl_real(shmid, cmd, buf);

	shm_rec_ctl(NULL, ret, shmid, cmd);
	return ret;
}

/*
 * syscall(SYS_shmget), (SYS_shmat), (SYS_shmdt) and (SYS_shmctl) (wait.c's
 * hook): the steps of the hooks above.  noinline, called directly from
 * syscall(): the backtrace starts at this frame's caller's caller
 * (RIP_PL_BT).  _before returns what _after needs (shmget's kind, shmdt's
 * state).
 */
__attribute__((noinline)) uint64_t rip_pl_shm_sys_before(long n, const long *a)
{
	uint64_t st = 0;

#ifdef RIP_PL_SYS_SYSV_SHM
	if (n == SYS_shmget)
		st = shm_get_kind((key_t)a[0], (int)a[2]);
	else if (n == SYS_shmdt)
		st = shm_dt_before(__builtin_frame_address(0), (const void *)a[0]);
#endif
	/* Not a tail call of anything that records: the recording above is done. */
	__asm__ __volatile__("" ::: "memory");
	return st;
}

__attribute__((noinline)) void rip_pl_shm_sys_after(long n, const long *a, long ret, uint64_t st)
{
	const void *fr = __builtin_frame_address(0);
	int r = ret < INT32_MIN || ret > INT32_MAX ? -1 : (int)ret;

	switch (n) {
#ifdef RIP_PL_SYS_SYSV_SHM
	case SYS_shmget:
		shm_rec_get(fr, r, (key_t)a[0], (size_t)a[1], (int)a[2], (uint32_t)st);
		break;
	case SYS_shmat:
		shm_rec_at(fr, (void *)ret, (int)a[0]);
		break;
	case SYS_shmdt:
		shm_dt_after(fr, r, (const void *)a[0], st);
		break;
	case SYS_shmctl:
		shm_rec_ctl(fr, r, (int)a[0], (int)a[1]);
		break;
#endif
	default:
		break;
	}
	__asm__ __volatile__("" ::: "memory");
}
