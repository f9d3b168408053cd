/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/modules.c - the module map: every object loaded in the process, with
 * its load bias, address range, path and GNU build-id, so that readers
 * resolve addresses live and post-mortem without /proc.
 *
 * The map is append-only: an entry is written whole, then published by a
 * release store of hdr->mod_count; a dlclose'd object is flagged unloaded,
 * never removed, because snaps taken in it stay in the rings.  dlopen and
 * dlclose are wrapped to rescan right after the loader returns.  The scan
 * copies what dl_iterate_phdr reports into a private buffer first and takes
 * our lock only afterwards: no lock of ours is ever held inside the loader's.
 * And no fork happens while we iterate (rip_dl_iterate).
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/*
 * Our calls of dl_iterate_phdr, and fork.  dl_iterate_phdr holds the
 * loader's dl_load_write_lock while it runs, and glibc's fork resets
 * dl_load_lock in the child but not that one (2.36's posix/fork.c): a fork
 * by one thread while another iterated left the child with the lock held
 * by a thread it does not have, and the child's first dlopen, or
 * dl_iterate_phdr (an exception's unwinder on an older libgcc), hung for
 * ever.  The program's own calls carry that hazard; ours must not add one,
 * and a rescan runs at each thread's exit (__rip_modules_maybe_rescan).
 * So a fork waits in its prepare handler until none of ours is under way
 * (__rip_dl_fork_prepare), and none starts while a fork is: a rescan is
 * skipped (the next one finds what it missed), anything else waits for the
 * fork to be over.  The counters pair in sequential consistency: a call
 * counts itself busy, then looks for a fork; a fork counts itself, then
 * looks for a call; one of the two sees the other.  A thread's own calls
 * (a signal handler that forks while the thread it interrupted iterates)
 * are not waited for (rip_dl_mine).
 */
static unsigned rip_dl_busy, rip_dl_forks;
static __thread unsigned rip_dl_mine __attribute__((tls_model("initial-exec")));

#define RIP_DL_WAIT_NS 1000000000ull /* a fork waits this long at most */

static uint64_t rip_dl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * dl_iterate_phdr(cb, arg) when no fork is under way: its result, or
 * -EAGAIN without calling it when one is and !wait.
 */
static int rip_dl_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg, bool wait)
{
	int ret;

	for (;;) {
		/*
		 * A fork under way, seen first without counting busy (relaxed: a
		 * hint): calls that counted themselves only to find a fork kept
		 * busy above 0, and forks waited their whole bound.
		 */
		if (__atomic_load_n(&rip_dl_forks, __ATOMIC_RELAXED)) {
			if (!wait)
				return -EAGAIN;
			sched_yield();
			continue;
		}
		/* Busy, then the look for a fork: pairs with __rip_dl_fork_prepare's (seq_cst). */
		__atomic_add_fetch(&rip_dl_busy, 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&rip_dl_forks, __ATOMIC_SEQ_CST))
			break;
		__atomic_sub_fetch(&rip_dl_busy, 1, __ATOMIC_SEQ_CST);
		if (!wait)
			return -EAGAIN;
	}
	rip_dl_mine++;
	ret = dl_iterate_phdr(cb, arg);
	rip_dl_mine--;
	/* Release: the loader's lock was let go before a fork that sees 0 goes on. */
	__atomic_sub_fetch(&rip_dl_busy, 1, __ATOMIC_RELEASE);
	return ret;
}

int __rip_dl_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	return rip_dl_iterate(cb, arg, true);
}

void __rip_dl_fork_prepare(void)
{
	uint64_t t0 = 0;

	/* Pairs with rip_dl_iterate's busy count (seq_cst). */
	__atomic_add_fetch(&rip_dl_forks, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&rip_dl_busy, __ATOMIC_SEQ_CST) > rip_dl_mine) {
		/* Bounded: never a hang of the program's fork, whatever holds one of ours. */
		if (!t0)
			t0 = rip_dl_now();
		else if (rip_dl_now() - t0 > RIP_DL_WAIT_NS)
			break;
		sched_yield();
	}
}

void __rip_dl_fork_parent(void)
{
	/* Release: pairs with the loads in rip_dl_iterate. */
	__atomic_sub_fetch(&rip_dl_forks, 1, __ATOMIC_RELEASE);
}

void __rip_dl_fork_child(void)
{
	/* Only this thread exists: none of the others' calls, nor forks, are under way. */
	__atomic_store_n(&rip_dl_forks, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&rip_dl_busy, rip_dl_mine, __ATOMIC_RELAXED);
}

struct rip_seen {
	uint64_t bias, lo, hi;
	uint32_t flags, build_id_len;
	uint8_t build_id[RIP_BUILD_ID_MAX];
	char name[RIP_MODULE_PATH_MAX];
	uint32_t name_trunc;
};

struct rip_scan {
	struct rip_seen *v;
	size_t n, cap;
};

static void rip_build_id(struct dl_phdr_info *info, struct rip_seen *m)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			size_t nsz = (nh->n_namesz + 3) & ~3u, dsz = (nh->n_descsz + 3) & ~3u;
			const char *name = p + sizeof(*nh), *desc = name + nsz;

			if (desc + dsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && nh->n_descsz <= RIP_BUILD_ID_MAX) {
				memcpy(m->build_id, desc, nh->n_descsz);
				m->build_id_len = nh->n_descsz;
				return;
			}
			p = desc + dsz;
		}
	}
}

static int rip_scan_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct rip_scan *sc = arg;
	struct rip_seen *m;
	uint64_t lo = UINT64_MAX, hi = 0;
	const char *name = info->dlpi_name;
	size_t n;

	(void)size;
	if (sc->n == sc->cap)
		return 1;
	m = &sc->v[sc->n];
	memset(m, 0, sizeof(*m));
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_vaddr < lo)
			lo = ph->p_vaddr;
		if (ph->p_vaddr + ph->p_memsz > hi)
			hi = ph->p_vaddr + ph->p_memsz;
	}
	if (hi <= lo)
		return 0;
	m->bias = info->dlpi_addr;
	m->lo = info->dlpi_addr + lo;
	m->hi = info->dlpi_addr + hi;
	if (sc->n == 0 && (!name || !*name)) {
		m->flags = RIP_MOD_EXE;
		name = "";
	} else if (!name || !*name || !strncmp(name, "linux-vdso", 10) ||
		   !strncmp(name, "linux-gate", 10)) {
		m->flags = RIP_MOD_VDSO;
		name = name && *name ? name : "[vdso]";
	}
	n = strlen(name);
	if (n >= sizeof(m->name)) {
		m->name_trunc = 1;
		n = sizeof(m->name) - 1;
	}
	memcpy(m->name, name, n);
	rip_build_id(info, m);
	sc->n++;
	return 0;
}

/*
 * Append the objects v[0..n) that map (h's module map) does not hold yet,
 * each published by a release store of mod_count.  Under __rip_proc.lock.
 */
static void rip_map_add(struct rip_file_hdr *h, struct rip_module *map, const struct rip_seen *v,
			size_t n)
{
	for (size_t j = 0; j < n; j++) {
		const struct rip_seen *m = &v[j];
		uint32_t count = h->mod_count;
		bool known = false;
		struct rip_module *e;

		for (uint32_t i = 0; i < count && !known; i++)
			known = !(map[i].flags & RIP_MOD_UNLOADED) && map[i].bias == m->bias &&
				map[i].lo == m->lo;
		if (known)
			continue;
		/* An entry is backed before it is written (tmpfs full: the map is full). */
		if (count >= h->mod_cap ||
		    __rip_commit(h, h->mod_off + (uint64_t)count * RIP_MODULE_SIZE,
				 RIP_MODULE_SIZE)) {
			/* Readers only test the bit: no ordering needed. */
			__atomic_fetch_or(&h->proc_flags, RIP_P_MOD_FULL, __ATOMIC_RELAXED);
			break;
		}
		e = &map[count];
		memset(e, 0, sizeof(*e));
		e->bias = m->bias;
		e->lo = m->lo;
		e->hi = m->hi;
		e->load_ts = count ? rip_clock_ticks() : 0;
		e->flags = m->flags | (m->name_trunc ? RIP_MOD_PATH_TRUNC : 0);
		e->build_id_len = m->build_id_len;
		memcpy(e->build_id, m->build_id, sizeof(e->build_id));
		if (m->flags & RIP_MOD_EXE)
			memcpy(e->path, h->exe, strnlen(h->exe, sizeof(e->path) - 1));
		else
			memcpy(e->path, m->name, sizeof(e->path));
		e->path[sizeof(e->path) - 1] = 0;
		/* Publish the entry: pairs with the acquire load of mod_count in readers. */
		__atomic_store_n(&h->mod_count, count + 1, __ATOMIC_RELEASE);
	}
}

int __rip_modules_scan(void)
{
	struct rip_scan sc = { .cap = RIP_MOD_CAP };
	struct rip_file_hdr *h;
	struct rip_module *map;
	size_t bytes = sc.cap * sizeof(struct rip_seen);

	/*
	 * The system call, not malloc or mmap: this may run from inside a
	 * malloc hook's dlopen, and librip-preload.so's hooks must not record
	 * the tracer's own memory as the program's.
	 */
	sc.v = (struct rip_seen *)syscall(SYS_mmap, NULL, bytes, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (sc.v == MAP_FAILED)
		return -ENOMEM;
	if (rip_dl_iterate(rip_scan_one, &sc, false) < 0) {
		syscall(SYS_munmap, sc.v, bytes);
		return -EAGAIN; /* a fork under way */
	}

	pthread_mutex_lock(&__rip_proc.lock);
	h = __rip_proc.hdr;
	if (!h)
		goto out_unlock;
	map = (struct rip_module *)((char *)h + h->mod_off);
	/* Entries no longer loaded: flag them, keep them. */
	for (uint32_t i = 0; i < h->mod_count; i++) {
		struct rip_module *e = &map[i];
		bool present = false;

		if (e->flags & RIP_MOD_UNLOADED)
			continue;
		for (size_t j = 0; j < sc.n && !present; j++)
			present = sc.v[j].bias == e->bias && sc.v[j].lo == e->lo;
		if (!present) {
			e->unload_ts = rip_clock_ticks();
			e->flags |= RIP_MOD_UNLOADED;
		}
	}
	rip_map_add(h, map, sc.v, sc.n);
out_unlock:
	pthread_mutex_unlock(&__rip_proc.lock);
	syscall(SYS_munmap, sc.v, bytes);
	return 0;
}

/*
 * _dl_find_object (glibc 2.35), looked up once, at load: a reference to it
 * would have librip.so need glibc 2.35 where the rest of it needs 2.34
 * (RHEL 9's); without it, __rip_modules_note leaves new objects to the
 * next rescan.  dlsym takes the loader's lock: here, never in a wait.
 */
static int (*rip_find_object)(void *, struct dl_find_object *);

__attribute__((constructor)) static void rip_find_object_init(void)
{
	rip_find_object =
		(int (*)(void *, struct dl_find_object *))dlsym(RTLD_DEFAULT, "_dl_find_object");
}

/*
 * The object that holds addr, put in the map where the loader's lock may
 * not be taken (a wait wrapper: the caller may hold a lock that a thread
 * inside dl_iterate_phdr waits for).  The map is rescanned at safe points
 * only (a thread's exit, a coroutine's creation, a type's registration),
 * and a single-threaded program that dlopens a library and then blocks in
 * it (Python's socket or select module in accept or epoll_wait) reached
 * none: killed, its wait's address named no object, and rip ps could not
 * name its function.  _dl_find_object takes no lock; the object's program
 * headers are read from its ELF header, which its first segment maps at its
 * load address (an object mapped otherwise is left to the next rescan);
 * the entry goes in only if our lock is free (a signal handler may have
 * interrupted a scan on this thread).  *lo and *hi: the object's range when
 * it is in the map (the caller keeps it, and asks again only for an
 * address outside), else 0.
 */
void __rip_modules_note(uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	const struct link_map *lm;
	const ElfW(Ehdr) * eh;
	const struct rip_module *map;
	struct dl_find_object f;
	struct dl_phdr_info info;
	struct rip_seen m;
	struct rip_scan sc = { .v = &m, .cap = 1 };
	uint32_t count;

	*lo = *hi = 0;
	if (!h)
		return;
	map = (const struct rip_module *)((const char *)h + h->mod_off);
	/* Pairs with the release store of mod_count in rip_map_add. */
	count = __atomic_load_n(&h->mod_count, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < count && i < h->mod_cap; i++) {
		if (!(map[i].flags & RIP_MOD_UNLOADED) &&
		    addr - map[i].lo < map[i].hi - map[i].lo) {
			*lo = map[i].lo;
			*hi = map[i].hi;
			return;
		}
	}
	if (!rip_find_object || rip_find_object((void *)addr, &f) || !(lm = f.dlfo_link_map) ||
	    !lm->l_name || !*lm->l_name || (uintptr_t)f.dlfo_map_start != lm->l_addr)
		return;
	eh = (const ElfW(Ehdr) *)lm->l_addr;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_phentsize != sizeof(ElfW(Phdr)) ||
	    !eh->e_phnum || eh->e_phoff < sizeof(*eh) ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(ElfW(Phdr)) >
		    (uint64_t)((const char *)f.dlfo_map_end - (const char *)f.dlfo_map_start) ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(ElfW(Phdr)) > 4096)
		return; /* the headers outside the first page, which alone is sure to be mapped */
	info = (struct dl_phdr_info){
		.dlpi_addr = lm->l_addr,
		.dlpi_name = lm->l_name,
		.dlpi_phdr = (const ElfW(Phdr) *)(lm->l_addr + eh->e_phoff),
		.dlpi_phnum = eh->e_phnum,
	};
	rip_scan_one(&info, sizeof(info), &sc);
	if (!sc.n || addr - m.lo >= m.hi - m.lo || pthread_mutex_trylock(&__rip_proc.lock))
		return;
	h = __rip_proc.hdr; /* the file may have been closed meanwhile */
	if (h) {
		rip_map_add(h, (struct rip_module *)((char *)h + h->mod_off), &m, 1);
		*lo = m.lo;
		*hi = m.hi;
	}
	pthread_mutex_unlock(&__rip_proc.lock);
}

/*
 * Keep the map current without wrapping dlopen: glibc resolves a bare name
 * with the RUNPATH of whoever calls dlopen, and a wrapper would make that
 * librip.  Instead, callers that may run dl_iterate_phdr (never a signal
 * handler) ask here; the loader's own counters of objects added and
 * removed say, in O(1), whether a rescan is due.
 */
static unsigned long long rip_mod_adds, rip_mod_subs;

static int rip_mod_counters(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *c = arg;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		c[0] = info->dlpi_adds;
		c[1] = info->dlpi_subs;
	}
	return 1; /* the first object is enough */
}

void __rip_modules_maybe_rescan(void)
{
	unsigned long long c[2] = { 0, 0 };

	if (!__atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE))
		return;
	if (rip_dl_iterate(rip_mod_counters, c, false) < 0)
		return; /* a fork under way: the next call looks again */
	/* Relaxed: a rescan too many is harmless, and the scan itself takes the lock. */
	if (c[0] == __atomic_load_n(&rip_mod_adds, __ATOMIC_RELAXED) &&
	    c[1] == __atomic_load_n(&rip_mod_subs, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&rip_mod_adds, c[0], __ATOMIC_RELAXED);
	__atomic_store_n(&rip_mod_subs, c[1], __ATOMIC_RELAXED);
	if (__rip_modules_scan()) /* not done: the next call scans */
		__atomic_store_n(&rip_mod_adds, 0, __ATOMIC_RELAXED);
}
