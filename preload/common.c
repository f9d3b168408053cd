// SPDX-License-Identifier: Apache-2.0
/*
 * preload/common.c - the plumbing of librip-preload.so: the event types of
 * rip/resource.h and their emitters, the lookup of the real functions, the
 * bootstrap allocator dlsym's own allocations come from, the per-thread
 * guard, and the fail-open switch (stack bounds are thread.c's).
 *
 * Tracing starts off (rip_pl_off) and the constructor turns it on once the
 * real functions are known; any failure turns it off again for good, and
 * every hook then only forwards.  Nothing here uses stdio or holds a lock.
 *
 * The constructors of the program's other libraries run before ours (see
 * doc/design.md, "Before our constructor"): the first hook called then
 * starts tracing itself (rip_pl_start_early), taking no lock and calling
 * nothing that does, and the constructor finishes the start.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"
#include "watch.h"

/* ---- event types: exactly rip/resource.h ---- */

RIP_EVENT_TYPE(rip_ev_mem_alloc, "mem:alloc", RIP_CAT_MEM, RIP_FIELD(HEX64, "addr"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(rip_ev_mem_free, "mem:free", RIP_CAT_MEM, RIP_FIELD(HEX64, "addr"),
	       RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(rip_ev_mem_realloc, "mem:realloc", RIP_CAT_MEM, RIP_FIELD(HEX64, "old"),
	       RIP_FIELD(HEX64, "addr"), RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"));
RIP_EVENT_TYPE(rip_ev_bt, "rip:bt", RIP_CAT_BT, RIP_FIELD(U32, "id"),
	       RIP_FIELD(HEX64_ARRAY, "frames"));
RIP_EVENT_TYPE(rip_ev_fd_open, "fd:open", RIP_CAT_FD, RIP_FIELD(S32, "fd"), RIP_FIELD(U32, "bt"),
	       RIP_FIELD(U32, "kind"), RIP_FIELD(S32, "flags"), RIP_FIELD(STRING, "path"));
RIP_EVENT_TYPE(rip_ev_fd_close, "fd:close", RIP_CAT_FD, RIP_FIELD(S32, "fd"),
	       RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(rip_ev_shm_create, "shm:create", RIP_CAT_SHM, RIP_FIELD(S64, "id"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"),
	       RIP_FIELD(STRING, "name"));
RIP_EVENT_TYPE(rip_ev_shm_attach, "shm:attach", RIP_CAT_SHM, RIP_FIELD(HEX64, "addr"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(S64, "id"), RIP_FIELD(U32, "bt"),
	       RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(rip_ev_shm_detach, "shm:detach", RIP_CAT_SHM, RIP_FIELD(HEX64, "addr"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(rip_ev_shm_remove, "shm:remove", RIP_CAT_SHM, RIP_FIELD(S64, "id"),
	       RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"), RIP_FIELD(STRING, "name"));

RIP_EVENT_TYPE(rip_ev_mem_unmap, "mem:unmap", RIP_CAT_MEM, RIP_FIELD(HEX64, "addr"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));

RIP_EVENT_TYPE(rip_ev_fd_close_range, "fd:close_range", RIP_CAT_FD, RIP_FIELD(U32, "first"),
	       RIP_FIELD(U32, "last"), RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(rip_ev_shm_resize, "shm:resize", RIP_CAT_SHM, RIP_FIELD(S64, "id"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"),
	       RIP_FIELD(STRING, "name"));

RIP_EVENT_TYPE(rip_ev_mem_mapping, "mem:mapping", RIP_CAT_MEM, RIP_FIELD(HEX64, "start"),
	       RIP_FIELD(HEX64, "end"), RIP_FIELD(U32, "seq"), RIP_FIELD(U32, "prot"),
	       RIP_FIELD(U32, "flags"), RIP_FIELD(U32, "page_size"), RIP_FIELD(STRING, "path"));
RIP_EVENT_TYPE(rip_ev_mem_pagemap, "mem:pagemap", RIP_CAT_MEM, RIP_FIELD(HEX64, "start"),
	       RIP_FIELD(U32, "seq"), RIP_FIELD(U32, "npages"), RIP_FIELD(HEX64_ARRAY, "pages"));
RIP_EVENT_TYPE(rip_ev_mem_pagemap_end, "mem:pagemap_end", RIP_CAT_MEM, RIP_FIELD(U32, "seq"),
	       RIP_FIELD(U32, "mappings"), RIP_FIELD(U32, "reason"), RIP_FIELD(S32, "error"));

RIP_EVENT_TYPE(rip_ev_res_acquire, "res:acquire", RIP_CAT_RES, RIP_FIELD(HEX64, "id"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(rip_ev_res_release, "res:release", RIP_CAT_RES, RIP_FIELD(HEX64, "id"),
	       RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(rip_ev_res_ref, "res:ref", RIP_CAT_RES, RIP_FIELD(HEX64, "id"),
	       RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(rip_ev_res_unref, "res:unref", RIP_CAT_RES, RIP_FIELD(HEX64, "id"),
	       RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(rip_ev_res_transfer, "res:transfer", RIP_CAT_RES, RIP_FIELD(HEX64, "id"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));

/*
 * Every type above, for a hook that starts before our constructors ran
 * (rip_pl_start_early registers them through __rip_auto_open_early).  A
 * type missing here only has its events before the constructor dropped
 * (and counted).
 */
static const struct rip_event_type *const rip_pl_types[] = {
	&rip_ev_mem_alloc,	&rip_ev_mem_free,    &rip_ev_mem_realloc, &rip_ev_bt,
	&rip_ev_fd_open,	&rip_ev_fd_close,    &rip_ev_shm_create,  &rip_ev_shm_attach,
	&rip_ev_shm_detach,	&rip_ev_shm_remove,  &rip_ev_mem_mapping, &rip_ev_mem_pagemap,
	&rip_ev_mem_pagemap_end, &rip_ev_mem_unmap, &rip_ev_fd_close_range, &rip_ev_shm_resize,
	&rip_ev_res_acquire, &rip_ev_res_release, &rip_ev_res_ref, &rip_ev_res_unref,
	&rip_ev_res_transfer,
};

__thread struct rip_pl_thread rip_pl_self RIP_PL_TLS;

/* Off until the constructor has the real functions; written with relaxed stores. */
int rip_pl_off = 1;
static int rip_pl_err;

void rip_pl_fail(int err)
{
	/* Relaxed: a hook that still sees 0 traces one more call, harmlessly. */
	__atomic_store_n(&rip_pl_err, err, __ATOMIC_RELAXED);
	__atomic_store_n(&rip_pl_off, 1, __ATOMIC_RELAXED);
}

/*
 * The tracer's own mappings: entries with hi 0 are free.  Written by one
 * thread at a time (the constructor, a fork child); a snapshot may read
 * them from another thread or a signal handler, entry by entry, relaxed: an
 * entry read half-written leaves out a range that is ours or keeps one in,
 * never more.
 */
static struct rip_pl_range rip_pl_own[RIP_PL_OWN_MAPS];

void rip_pl_own_map_add(const void *p, size_t len)
{
	for (unsigned i = 0; i < RIP_PL_OWN_MAPS; i++) {
		if (__atomic_load_n(&rip_pl_own[i].hi, __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&rip_pl_own[i].lo, (uintptr_t)p, __ATOMIC_RELAXED);
		__atomic_store_n(&rip_pl_own[i].hi, (uintptr_t)p + len, __ATOMIC_RELAXED);
		return;
	}
	/* more than RIP_PL_OWN_MAPS: the rest shows in snapshots, as all did before */
}

void rip_pl_own_map_del(const void *p)
{
	for (unsigned i = 0; i < RIP_PL_OWN_MAPS; i++)
		if (__atomic_load_n(&rip_pl_own[i].lo, __ATOMIC_RELAXED) == (uintptr_t)p)
			__atomic_store_n(&rip_pl_own[i].hi, 0, __ATOMIC_RELAXED);
}

uint32_t rip_pl_own_maps(struct rip_pl_range *out)
{
	uint32_t n = 0;

	for (unsigned i = 0; i < RIP_PL_OWN_MAPS; i++) {
		struct rip_pl_range r = {
			__atomic_load_n(&rip_pl_own[i].lo, __ATOMIC_RELAXED),
			__atomic_load_n(&rip_pl_own[i].hi, __ATOMIC_RELAXED),
		};
		uint32_t j = n++;

		if (r.hi <= r.lo) {
			n--;
			continue;
		}
		/* insertion by start: a handful of entries */
		for (; j && out[j - 1].lo > r.lo; j--)
			out[j] = out[j - 1];
		out[j] = r;
	}
	return n;
}

void *rip_pl_table_map(size_t len, bool *wiped)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	/* whole pages, as the kernel maps them: the range kept out of snapshots is all of it */
	len = (len + page - 1) & ~(page - 1);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
		 0);
	if (p == MAP_FAILED)
		return NULL;
	*wiped = !madvise(p, len, MADV_WIPEONFORK);
	rip_pl_own_map_add(p, len);
	return p;
}

/*
 * rt_sigprocmask copies its set in (8 aligned bytes: never across a page)
 * before it looks at how, which is invalid here: EINVAL for memory it read,
 * EFAULT for memory it could not, the mask untouched.  Sandboxes allow it
 * (the C library itself makes it), where process_vm_readv is often the
 * call that kills the process.
 */
int rip_pl_readable(uintptr_t x)
{
	long r = syscall(SYS_rt_sigprocmask, -1L, (long)(x & ~(uintptr_t)7), 0L,
			 (long)RIP_PL_KSIGSET);

	if (!r)
		return 1; /* no kernel takes that how: a readable set, as far as we know */
	return errno == EINVAL ? 1 : errno == EFAULT ? 0 : -1;
}

bool rip_pl_peek(void *dst, const void *src, size_t n)
{
	uintptr_t a = (uintptr_t)src, sp = rip_pl_sp(), end = a + n - 1, x;
	int err, ok = 1;

	if (!n)
		return true;
	if (end < a)
		return false; /* past the end of the address space */
	/*
	 * Above our frame in the page we run on: mapped and readable.  Not
	 * the rest of the stack: a program may make a page of its own stack
	 * unreadable, above the frames of a call it passes a pointer into it.
	 */
	if (a >= sp && end / 4096 == sp / 4096) {
		memcpy(dst, src, n);
		return true;
	}
	/* Each page it is on, then a direct read (as before where the probe is refused). */
	err = errno;
	for (x = a; ok > 0; x = (x | 4095) + 1) {
		ok = rip_pl_readable(x);
		if ((x | 4095) >= end)
			break;
	}
	errno = err;
	if (!ok)
		return false;
	memcpy(dst, src, n);
	return true;
}

bool rip_pl_status_seccomp(const char *buf)
{
	const char *t = strstr(buf, "\nSeccomp:");

	if (!t)
		return false; /* a kernel without seccomp */
	t += 9;
	while (*t == ' ' || *t == '\t')
		t++;
	return *t >= '1' && *t <= '9';
}

int rip_pl_enosys(void)
{
	errno = ENOSYS;
	return -1;
}

/* ---- the real functions ---- */

/* Set once the constructor has resolved every hook: no dlsym after that. */
static int rip_pl_resolved;

/* The start: RIP_PL_UNSTARTED until the first hook or the constructor begins it. */
enum {
	RIP_PL_UNSTARTED,
	RIP_PL_STARTING, /* one thread is in rip_pl_start_early */
	RIP_PL_EARLY,	 /* started early; the constructor finishes */
	RIP_PL_CTOR,	 /* the constructor has begun: dlsym is safe from here on */
};
static int rip_pl_state;
int rip_pl_started;

void *rip_pl_next(const char *name)
{
	struct rip_pl_thread *t = &rip_pl_self;
	uintptr_t guard = t->guard;
	uint32_t boot = t->boot;
	void *fn;

	/* Acquire: pairs with the release store in rip_pl_resolve_all. */
	if (__atomic_load_n(&rip_pl_resolved, __ATOMIC_ACQUIRE))
		return NULL; /* resolved then, so missing for good */
	/*
	 * Before the constructor, from a hook anywhere: read the symbol tables
	 * ourselves (no lock); dlsym only if that finds nothing.
	 */
	if (__atomic_load_n(&rip_pl_state, __ATOMIC_ACQUIRE) < RIP_PL_CTOR) {
		fn = rip_pl_lookup_next(name);
		if (fn)
			return fn;
	}
	/* dlsym may calloc (its error state): the guard and boot send that to the buffer. */
	t->guard = rip_pl_guard_up();
	t->boot = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* pairs with the hooks' checks */
	if (strchr(name, '@')) {
		/* name@VERSION (wait.c's two pthread_cond_wait): that version, as dlvsym finds it */
		char base[64];
		const char *at = strchr(name, '@');

		fn = NULL;
		if ((size_t)(at - name) < sizeof(base)) {
			memcpy(base, name, (size_t)(at - name));
			base[at - name] = 0;
			fn = dlvsym(RTLD_NEXT, base, at + 1);
		}
	} else {
		fn = dlsym(RTLD_NEXT, name);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->boot = boot;
	t->guard = guard;
	return fn;
}

/* The records of RIP_PL_REAL (the linker makes these for a section named like a C identifier). */
extern struct rip_pl_sym __start_rip_pl_syms[] __attribute__((visibility("hidden")));
extern struct rip_pl_sym __stop_rip_pl_syms[] __attribute__((visibility("hidden")));

void rip_pl_resolve_reals(const struct rip_modreal *r, const struct rip_modreal *end,
			  const void *dyn)
{
	for (; r && r < end; r++) {
		void **ptr = r->ptr;
		void *fn;

		/* Relaxed: as in RIP_PL_REAL (a function pointer stored as the void * it came as). */
		if (!ptr || !r->name || __atomic_load_n(ptr, __ATOMIC_RELAXED))
			continue;
		fn = dyn ? rip_pl_lookup_after(dyn, r->name) : rip_pl_next(r->name);
		if (fn)
			__atomic_store_n(ptr, fn, __ATOMIC_RELAXED);
	}
}

void rip_pl_resolve_all(void)
{
	rip_pl_resolve_reals(__start_rip_pl_syms, __stop_rip_pl_syms, NULL);
	/* Release: every pointer above is set before a hook can see the flag. */
	__atomic_store_n(&rip_pl_resolved, 1, __ATOMIC_RELEASE);
}

/* ---- bootstrap allocator ---- */

/*
 * A bump allocator in a static buffer for the few allocations dlsym makes
 * before the real malloc is known.  Each block has a 16-byte header with
 * its size (for realloc); free of a block does nothing.
 */
#define RIP_PL_BOOT_SIZE (64u << 10)

/*
 * After it, the scratch slots (rip_pl_scratch_begin): the same buffer, so
 * that the hooks' one range check (rip_pl_boot_owns) covers both and free
 * of a scratch block does nothing either.
 */
#define RIP_PL_SCRATCH_SLOTS 64u
#define RIP_PL_SCRATCH_SLOT 1024u

static char rip_pl_boot_buf[RIP_PL_BOOT_SIZE + RIP_PL_SCRATCH_SLOTS * RIP_PL_SCRATCH_SLOT]
	__attribute__((aligned(64)));
static size_t rip_pl_boot_used;
static uint64_t rip_pl_scratch_busy; /* bit i: scratch slot i is a thread's */

void *rip_pl_boot_alloc(size_t size, size_t align)
{
	size_t old, start, end;

	if (align < 16)
		align = 16;
	if (align > 4096 || (align & (align - 1)) || size > RIP_PL_BOOT_SIZE)
		return NULL;
	/* Relaxed: the CAS only hands out disjoint ranges; contents are the caller's. */
	old = __atomic_load_n(&rip_pl_boot_used, __ATOMIC_RELAXED);
	do {
		start = (old + 16 + align - 1) & ~(align - 1);
		end = start + ((size + 15) & ~(size_t)15);
		if (end > RIP_PL_BOOT_SIZE)
			return NULL;
	} while (!__atomic_compare_exchange_n(&rip_pl_boot_used, &old, end, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	memcpy(rip_pl_boot_buf + start - 16, &size, sizeof(size));
	return rip_pl_boot_buf + start; /* zero: the buffer is never reused */
}

bool rip_pl_boot_owns(const void *p)
{
	return (const char *)p >= rip_pl_boot_buf &&
	       (const char *)p < rip_pl_boot_buf + sizeof(rip_pl_boot_buf);
}

int rip_pl_bit_take(uint64_t *busy)
{
	/* Relaxed: the CAS's acquire, when it takes a bit, pairs with rip_pl_bit_give's release. */
	uint64_t b = __atomic_load_n(busy, __ATOMIC_RELAXED);

	for (;;) {
		unsigned i;

		if (b == UINT64_MAX)
			return -1;
		i = (unsigned)__builtin_ctzll(~b);
		if (__atomic_compare_exchange_n(busy, &b, b | 1ull << i, true, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return (int)i;
	}
}

void rip_pl_bit_give(uint64_t *busy, unsigned i)
{
	/* Release: pairs with the acquire of rip_pl_bit_take in the item's next taker. */
	__atomic_fetch_and(busy, ~(1ull << i), __ATOMIC_RELEASE);
}

bool rip_pl_scratch_begin(struct rip_pl_thread *t)
{
	int i = rip_pl_bit_take(&rip_pl_scratch_busy);

	if (i < 0)
		return false;
	t->scratch_used = 0;
	t->scratch = (uint32_t)i + 1;
	return true;
}

void rip_pl_scratch_end(struct rip_pl_thread *t)
{
	unsigned i = t->scratch - 1;

	t->scratch = 0;
	rip_pl_bit_give(&rip_pl_scratch_busy, i);
}

void *rip_pl_scratch_alloc(struct rip_pl_thread *t, size_t size)
{
	char *slot =
		rip_pl_boot_buf + RIP_PL_BOOT_SIZE + (size_t)(t->scratch - 1) * RIP_PL_SCRATCH_SLOT;
	size_t start = t->scratch_used + 16, len;

	if (size > RIP_PL_SCRATCH_SLOT)
		return NULL;
	len = (size + 15) & ~(size_t)15;
	if (start + len > RIP_PL_SCRATCH_SLOT)
		return NULL; /* the caller fails as out of memory: never the real allocator */
	t->scratch_used = (uint32_t)(start + len);
	memset(slot + start, 0, len); /* a slot is used again: calloc's zero */
	memcpy(slot + start - 16, &size, sizeof(size));
	return slot + start;
}

size_t rip_pl_boot_size(const void *p)
{
	size_t n;

	memcpy(&n, (const char *)p - 16, sizeof(n));
	return n;
}

/* ---- emitters ---- */

void rip_pl_mem_alloc(const void *addr, uint64_t size, uint32_t bt, uint32_t kind)
{
	rip_event4(&rip_ev_mem_alloc, (uintptr_t)addr, size, bt, kind);
}

void rip_pl_mem_free(const void *addr, uint32_t bt, uint32_t kind)
{
	rip_event3(&rip_ev_mem_free, (uintptr_t)addr, bt, kind);
}

void rip_pl_mem_realloc(const void *old, const void *addr, uint64_t size, uint32_t bt)
{
	rip_event4(&rip_ev_mem_realloc, (uintptr_t)old, (uintptr_t)addr, size, bt);
}

void rip_pl_res_acquire(uint64_t id, uint64_t size, uint32_t bt, uint32_t kind)
{
	rip_event4(&rip_ev_res_acquire, id, size, bt, kind);
}

void rip_pl_res_release(uint64_t id, uint32_t bt, uint32_t kind)
{
	rip_event3(&rip_ev_res_release, id, bt, kind);
}

void rip_pl_res_ref(uint64_t id, uint32_t bt, uint32_t kind)
{
	rip_event3(&rip_ev_res_ref, id, bt, kind);
}

void rip_pl_res_unref(uint64_t id, uint32_t bt, uint32_t kind)
{
	rip_event3(&rip_ev_res_unref, id, bt, kind);
}

void rip_pl_res_transfer(uint64_t id, uint64_t size, uint32_t bt, uint32_t kind)
{
	rip_event4(&rip_ev_res_transfer, id, size, bt, kind);
}

void rip_pl_mem_unmap(const void *addr, uint64_t size, uint32_t bt, uint32_t kind)
{
	rip_event4(&rip_ev_mem_unmap, (uintptr_t)addr, size, bt, kind);
}

void rip_pl_fd_close_range(unsigned int first, unsigned int last, uint32_t bt, uint32_t kind)
{
	rip_event4(&rip_ev_fd_close_range, first, last, bt, kind);
}

void rip_pl_shm_resize(int64_t id, uint64_t size, uint32_t bt, uint32_t kind, const char *name)
{
	const uint64_t v[4] = { (uint64_t)id, size, bt, kind };

	rip_event_str(&rip_ev_shm_resize, v, name ? name : "");
}

void rip_pl_bt_emit(uint32_t id, const uint64_t *frames, uint32_t n)
{
	const uint64_t v[1] = { id };

	rip_event_array(&rip_ev_bt, v, frames, n);
}

void rip_pl_fd_open(int fd, uint32_t bt, uint32_t kind, int flags, const char *path)
{
	const uint64_t v[4] = { (uint64_t)(int64_t)fd, bt, kind, (uint64_t)(int64_t)flags };

	rip_event_str(&rip_ev_fd_open, v, path ? path : "");
}

void rip_pl_fd_close(int fd, uint32_t bt, uint32_t kind)
{
	rip_event3(&rip_ev_fd_close, (uint64_t)(int64_t)fd, bt, kind);
}

void rip_pl_shm_create(int64_t id, uint64_t size, uint32_t bt, uint32_t kind, const char *name)
{
	const uint64_t v[4] = { (uint64_t)id, size, bt, kind };

	rip_event_str(&rip_ev_shm_create, v, name ? name : "");
}

void rip_pl_shm_attach(const void *addr, uint64_t size, int64_t id, uint32_t bt, uint32_t kind)
{
	if (rip_category_enabled(RIP_CAT_SHM)) {
		const uint64_t v[5] = { (uintptr_t)addr, size, (uint64_t)id, bt, kind };

		__rip_event_emit(&rip_ev_shm_attach, v, 5, __rip_event_clock());
	}
}

void rip_pl_shm_detach(const void *addr, uint64_t size, uint32_t bt, uint32_t kind)
{
	rip_event4(&rip_ev_shm_detach, (uintptr_t)addr, size, bt, kind);
}

void rip_pl_shm_remove(int64_t id, uint32_t bt, uint32_t kind, const char *name)
{
	const uint64_t v[3] = { (uint64_t)id, bt, kind };

	rip_event_str(&rip_ev_shm_remove, v, name ? name : "");
}

void rip_pl_mem_mapping(uint64_t start, uint64_t end, uint32_t seq, uint32_t prot,
			uint32_t flags, uint32_t page_size, const char *path)
{
	const uint64_t v[6] = { start, end, seq, prot, flags, page_size };

	rip_event_str(&rip_ev_mem_mapping, v, path ? path : "");
}

void rip_pl_mem_pagemap(uint64_t start, uint32_t seq, uint32_t npages, const uint64_t *words,
			uint32_t nwords)
{
	const uint64_t v[3] = { start, seq, npages };

	rip_event_array(&rip_ev_mem_pagemap, v, words, nwords);
}

void rip_pl_mem_pagemap_end(uint32_t seq, uint32_t mappings, uint32_t reason, int error)
{
	rip_event4(&rip_ev_mem_pagemap_end, seq, mappings, reason, (uint64_t)(int64_t)error);
}

/* ---- start ---- */

/*
 * Around fork the guard is up: librip's own work in the child (its new
 * ring file) is not the program's.  Prepare handlers run in reverse order
 * of registration and child handlers in order, and ours are registered
 * after librip's: the guard is up before librip's handler runs and goes
 * down after it.
 */
static __thread uintptr_t rip_pl_fork_guard RIP_PL_TLS;

static void rip_pl_atfork_prepare(void)
{
	rip_pl_fork_guard = rip_pl_self.guard;
	rip_pl_self.guard = rip_pl_guard_up();
}

static void rip_pl_atfork_parent(void)
{
	rip_pl_self.guard = rip_pl_fork_guard;
}

void rip_pl_renamed(int32_t tid)
{
	struct rip_file_hdr *h = __rip_file_hdr();
	int32_t pid = (int32_t)syscall(SYS_getpid);

	if (!tid)
		tid = (int32_t)syscall(SYS_gettid);
	/* Readers only test the bit; the file of this process only (not a vfork parent's). */
	if (h && tid == pid && h->pid == pid)
		__atomic_fetch_or(&h->proc_flags, RIP_P_RENAMED, __ATOMIC_RELAXED);
}

/* Resource tracing started (the stack table, the pagemap signal): set once, by the constructor. */
static bool rip_pl_res_started;

void rip_pl_res_fork_child(void)
{
	if (rip_pl_res_started) {
		if (__rip_file_hdr()) {
			/* The child's trace is its own: new stacks are defined again there. */
			rip_pl_bt_fork_child();
			rip_pl_pagemap_fork_child();
		} else {
			/*
			 * A child rip run does not follow (librip's handler, which ran
			 * first, left it no file): nothing is recorded, so the hooks
			 * forward from now on, and the stack table stays as it is.
			 */
			__atomic_store_n(&rip_pl_off, 1, __ATOMIC_RELAXED);
		}
	}
}

static void rip_pl_atfork_child(void)
{
	rip_pl_res_fork_child();
	rip_pl_self.guard = rip_pl_fork_guard;
}

/*
 * The guard stays up across fork until our child handler, which runs after
 * librip's: librip's handler writes the child's ring file through write(),
 * whose wrapper would otherwise record a wait in the slot the child still
 * shares with its parent.  0 or -ENOMEM.
 */
static int rip_pl_atfork_init(void)
{
	int ret;

	rip_pl_self.guard++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* pairs with the hooks' checks */
	ret = pthread_atfork(rip_pl_atfork_prepare, rip_pl_atfork_parent, rip_pl_atfork_child);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rip_pl_self.guard--;
	return ret ? -ENOMEM : 0;
}

/*
 * RIP_RESOURCES=0 (plain rip run): the resource hooks only forward, the
 * costly start (libunwind, the stack table, pagemap) is skipped, and the
 * ring file's categories stay as the program sets them, for its own
 * events; threads' slots and wait records work all the same.
 * secure_getenv only reads environ and libc's flag: no lock.
 */
static bool rip_pl_no_resources(void)
{
	const char *v = secure_getenv("RIP_RESOURCES");

	return v && strcmp(v, "0") == 0;
}

/*
 * The first hook called before our constructor (another library's
 * constructor allocates): start tracing now, so that the call is recorded.
 * Only what takes no lock a caller may hold: the allocator found by reading
 * symbol tables (rip_pl_lookup_next), the ring file opened with a trylock
 * (__rip_auto_open_early), the stack table mapped; libunwind, the fork
 * handlers and the pagemap signal wait for the constructor (frame pointers
 * only until then).  Event types are registered here, as their
 * constructors would.  True when tracing is on; false to forward.
 */
bool rip_pl_start_early(void)
{
	struct rip_pl_thread *t = &rip_pl_self;
	int expect = RIP_PL_UNSTARTED, err;

	if (rip_pl_secure()) {
		/* Release: as below; tracing stays off (rip_pl_off), the hooks only forward. */
		__atomic_store_n(&rip_pl_started, 1, __ATOMIC_RELEASE);
		return false;
	}

	/*
	 * Inside a hook, or before libc's constructor has set environ (the
	 * loader's own allocations): not yet, the environment says nothing.
	 */
	if (t->guard || t->boot || !environ)
		return false;
	/* Slots and waits only (plain rip run): resources are never traced, not even early. */
	if (rip_pl_no_resources())
		return false;
	/* Acquire: pairs with the release stores of the state below and in the constructor. */
	if (!__atomic_compare_exchange_n(&rip_pl_state, &expect, RIP_PL_STARTING, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
		return false; /* another thread starts, or it is done: this call forwards */
	t->guard = rip_pl_guard_up();
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* pairs with the hooks' checks */
	err = rip_pl_mem_resolve();
	if (!err)
		err = __rip_auto_open_early(rip_pl_types, sizeof(rip_pl_types) / sizeof(rip_pl_types[0]));
	if (err == -EBUSY) {
		/* librip is opening it (its constructor allocates): a later call starts. */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->guard = 0;
		/* Release: pairs with the acquire of the compare-and-swap above. */
		__atomic_store_n(&rip_pl_state, RIP_PL_UNSTARTED, __ATOMIC_RELEASE);
		return false;
	}
	if (!err && !rip_pl_bt_init_early())
		/* Relaxed: as in the constructor. */
		__atomic_store_n(&rip_pl_off, 0, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->guard = 0;
	/* Release: the state above before the flag that stops the next hooks from coming here. */
	__atomic_store_n(&rip_pl_state, RIP_PL_EARLY, __ATOMIC_RELEASE);
	__atomic_store_n(&rip_pl_started, 1, __ATOMIC_RELEASE);
	return !__atomic_load_n(&rip_pl_off, __ATOMIC_RELAXED);
}

/*
 * After the event types' constructors (same object, earlier in the
 * file): resolve the real functions, then turn tracing on.  If a hook
 * started early, finish what it left.
 */
__attribute__((constructor)) static void rip_pl_init(void)
{
	char path[PATH_MAX];
	int err, state = RIP_PL_UNSTARTED;
	bool early;

	/* Wait out an early start on another thread (it takes no lock: it ends). */
	while (!__atomic_compare_exchange_n(&rip_pl_state, &state, RIP_PL_CTOR, false,
					    __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
		if (state == RIP_PL_STARTING) {
			state = RIP_PL_UNSTARTED;
			sched_yield();
			continue;
		}
		/* RIP_PL_EARLY: take it over. */
	}
	if (rip_pl_secure()) {
		/*
		 * Secure execution (a set-user-ID or set-group-ID program, file
		 * capabilities): whoever runs it may not steer it through RIP_*,
		 * and glibc lets a preload library into such a program only from
		 * a trusted place.  Whatever let us in, we do nothing: the hooks
		 * only forward to the real functions, for good.
		 */
		rip_pl_mem_resolve();
		rip_pl_resolve_all();
		/* Release: pairs with the hooks' loads; rip_pl_off stays 1. */
		__atomic_store_n(&rip_pl_started, 1, __ATOMIC_RELEASE);
		return;
	}
	early = state == RIP_PL_EARLY;
	rip_pl_alive_init();
	__rip_event_set_keeper(rip_pl_keep);
	/* Release: hooks that see it never start early again. */
	__atomic_store_n(&rip_pl_started, 1, __ATOMIC_RELEASE);
	err = rip_pl_mem_resolve();
	rip_pl_resolve_all();
	/*
	 * No ring file (a child or an image rip run does not follow: librip's
	 * constructor, which runs before ours, opened none): nothing will ever be
	 * recorded, so the hooks only forward and the costly start (libunwind,
	 * the stack table) is skipped.  An untraced exec'd program then costs
	 * little more than loading the two libraries.
	 */
	if (rip_ring_path(path, sizeof(path)) == -ENOENT)
		return;
	{
		/* Slots at thread birth and wait records, unless RIP_WAITS=0 (thread.c, wait.c). */
		const char *w = secure_getenv("RIP_WAITS");

		if (!w || strcmp(w, "0") != 0) {
			/* Relaxed: threads that see 0 only miss their slot at birth. */
			__atomic_store_n(&rip_pl_waits, 1, __ATOMIC_RELAXED);
			rip_pl_self.guard++;
			__atomic_signal_fence(__ATOMIC_SEQ_CST); /* pairs with the hooks' checks */
			rip_pl_thread_born(0); /* the main thread (the one running constructors) */
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			rip_pl_self.guard--;
		}
	}
	/* Functions RIP_FUNCTIONS=GLOB picks patched before main (fnpatch.c); our own work. */
	rip_pl_self.guard++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* pairs with the hooks' checks */
	rip_pl_fn_start();
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rip_pl_self.guard--;
	rip_pl_watch_init();
	if (early && __atomic_load_n(&rip_pl_off, __ATOMIC_RELAXED))
		return; /* the early start failed: it said why */
	if (rip_pl_no_resources()) {
		/* slots and waits only: the hooks keep forwarding */
		if (__atomic_load_n(&rip_pl_waits, __ATOMIC_RELAXED))
			rip_pl_atfork_init(); /* else the fork child's wait records go astray */
		return;
	}
	/* Tracing may be on already (early): our own work (dlopen of libunwind) is not traced. */
	rip_pl_self.guard++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* pairs with the hooks' checks */
	if (!err)
		err = early ? rip_pl_bt_init_late() : rip_pl_bt_init();
	if (!err)
		err = rip_pl_pagemap_init();
	if (!err)
		err = rip_pl_sample_init();
	rip_pl_res_started = !err;
	if (!err)
		err = rip_pl_atfork_init();
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rip_pl_self.guard--;
	if (err) {
		rip_pl_fail(err);
		return;
	}
	/* Relaxed: hooks that see 0 late only miss the first calls. */
	__atomic_store_n(&rip_pl_off, 0, __ATOMIC_RELAXED);
}

void rip_pl_mod_note(struct rip_pl_thread *t, uintptr_t addr)
{
	uintptr_t lo, hi;
	int err = errno;
	stack_t ss;

	/* Not on a signal stack, which may be small: the look takes about a KiB. */
	if (!syscall(SYS_sigaltstack, NULL, &ss) && (ss.ss_flags & SS_ONSTACK)) {
		errno = err;
		return;
	}
	__rip_modules_note(addr, &lo, &hi);
	errno = err;
	if (hi <= lo)
		return; /* in no object (JIT code), or not now: asked again at the next look */
	t->mods[t->mods_next][0] = lo;
	t->mods[t->mods_next][1] = hi;
	t->mods_next ^= 1;
}
