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
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

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

int rip_pl_enosys(void)
{
	errno = ENOSYS;
	return -1;
}

/* ---- the real functions ---- */

/* Set once the constructor has resolved every hook: no dlsym after that. */
static int rip_pl_resolved;

void *rip_pl_next(const char *name)
{
	struct rip_pl_thread *t = &rip_pl_self;
	uint32_t guard = t->guard, boot = t->boot;
	void *fn;

	/* Acquire: pairs with the release store in rip_pl_resolve_all. */
	if (__atomic_load_n(&rip_pl_resolved, __ATOMIC_ACQUIRE))
		return NULL; /* resolved then, so missing for good */
	/* dlsym may calloc (its error state): the guard and boot send that to the buffer. */
	t->guard = 1;
	t->boot = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* pairs with the hooks' checks */
	fn = dlsym(RTLD_NEXT, name);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->boot = boot;
	t->guard = guard;
	return fn;
}

/* The records of RIP_PL_REAL (the linker makes these for a section named like a C identifier). */
extern struct rip_pl_sym __start_rip_pl_syms[] __attribute__((visibility("hidden")));
extern struct rip_pl_sym __stop_rip_pl_syms[] __attribute__((visibility("hidden")));

void rip_pl_resolve_all(void)
{
	for (struct rip_pl_sym *s = __start_rip_pl_syms; s < __stop_rip_pl_syms; s++) {
		void **ptr = s->ptr;
		void *fn;

		/* Relaxed: as in RIP_PL_REAL (a function pointer stored as the void * it came as). */
		if (__atomic_load_n(ptr, __ATOMIC_RELAXED))
			continue;
		fn = rip_pl_next(s->name);
		if (fn)
			__atomic_store_n(ptr, fn, __ATOMIC_RELAXED);
	}
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

static char rip_pl_boot_buf[RIP_PL_BOOT_SIZE] __attribute__((aligned(64)));
static size_t rip_pl_boot_used;

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
	       (const char *)p < rip_pl_boot_buf + RIP_PL_BOOT_SIZE;
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
static __thread uint32_t rip_pl_fork_guard RIP_PL_TLS;

static void rip_pl_atfork_prepare(void)
{
	rip_pl_fork_guard = rip_pl_self.guard;
	rip_pl_self.guard = 1;
}

static void rip_pl_atfork_parent(void)
{
	rip_pl_self.guard = rip_pl_fork_guard;
}

static void rip_pl_atfork_child(void)
{
	/* The child's trace is its own: new stacks are defined again there. */
	rip_pl_bt_fork_child();
	rip_pl_pagemap_fork_child();
	rip_pl_self.guard = rip_pl_fork_guard;
}

/*
 * After the event types' constructors (same object, earlier in the
 * file): resolve the real functions, then turn tracing on.
 */
__attribute__((constructor)) static void rip_pl_init(void)
{
	char path[PATH_MAX];
	int err;

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
	if (!err)
		err = rip_pl_bt_init();
	if (!err)
		err = rip_pl_pagemap_init();
	if (!err && pthread_atfork(rip_pl_atfork_prepare, rip_pl_atfork_parent, rip_pl_atfork_child))
		err = -ENOMEM;
	if (err) {
		rip_pl_fail(err);
		return;
	}
	/* Relaxed: hooks that see 0 late only miss the first calls. */
	__atomic_store_n(&rip_pl_off, 0, __ATOMIC_RELAXED);
}
