// SPDX-License-Identifier: Apache-2.0
/*
 * preload/mem.c - the memory hooks: the C allocator (and glibc's __libc_
 * names of it), C++ operator new and delete (every variant, by mangled
 * name), and anonymous private mmap, mremap and munmap.  Each records
 * mem:alloc, mem:free, mem:realloc or mem:unmap (a range, which readers
 * cut out of the mappings they hold) with the caller's backtrace id when
 * the mem category is on, and otherwise only forwards.  A call of the C
 * allocator that fails (NULL for a request of one byte or more, a calloc
 * or reallocarray whose n * size overflows) is a mem:alloc of address 0
 * and the function's kind, its size UINT64_MAX on overflow.
 *
 * An allocation is recorded after the real call, a release before it, so
 * that the thread that is handed the address next records after us.
 * operator new calls the real malloc itself (so the allocation is seen
 * once, as new) and leaves the new-handler loop and std::bad_alloc to the
 * real operator new only when malloc fails.  Until the real functions are
 * known, the allocations of dlsym come from the bootstrap buffer, whose
 * blocks are never freed.  Shared and file mappings are shm.c's.
 *
 * An allocator that is a library of its own (jemalloc, tcmalloc, mimalloc:
 * the malloc we forward to is neither libc's nor the program's) maps its
 * arenas with mmap through the PLT, which is our hook: the mappings it
 * makes, moves and unmaps from its own code are not recorded.  They are
 * the memory the blocks it hands out are cut from: recorded, they counted
 * that memory twice and showed the arenas as leaks.  glibc's malloc maps
 * through internal calls that no hook sees, so both allocators give the
 * same answer.
 *
 * syscall(SYS_mmap), (SYS_munmap) and (SYS_mremap) record what the hooks of
 * mmap, munmap and mremap do, through the same steps (rip_pl_mem_sys_*).
 */
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);
static void *(*real_pvalloc)(size_t);
static size_t (*real_malloc_usable_size)(void *);

/* The code of an allocator that is a library of its own, [lo, hi); 0, 0: libc's or the program's. */
static uintptr_t rip_pl_alloc_lo, rip_pl_alloc_hi;
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static void *(*real_mmap64)(void *, size_t, int, int, int, off_t);
static void *(*real_mremap)(void *, size_t, size_t, int, ...);
static int (*real_munmap)(void *, size_t);

/*
 * The range of the object that defines malloc m, unless it is libc (the
 * object of getpid) or the program (the link map with no name).
 * _dl_find_object takes no lock: this runs from a hook's early start too.
 */
static void rip_pl_alloc_range(void *m)
{
	struct dl_find_object a, c;

	if (_dl_find_object(m, &a) != 0 || !a.dlfo_link_map || !a.dlfo_link_map->l_name ||
	    !a.dlfo_link_map->l_name[0])
		return;
	if (_dl_find_object((void *)(uintptr_t)&getpid, &c) == 0 &&
	    c.dlfo_link_map == a.dlfo_link_map)
		return;
	/* Relaxed: a hook that reads 0 records the allocator's mapping, as before. */
	__atomic_store_n(&rip_pl_alloc_lo, (uintptr_t)a.dlfo_map_start, __ATOMIC_RELAXED);
	__atomic_store_n(&rip_pl_alloc_hi, (uintptr_t)a.dlfo_map_end, __ATOMIC_RELAXED);
}

/* Is ret, a hook's return address, in the code of an allocator that is a library of its own? */
static inline bool rip_pl_from_allocator(const void *ret)
{
	/* Relaxed: the two are set once, together, at start (rip_pl_alloc_range). */
	return (uintptr_t)ret >= __atomic_load_n(&rip_pl_alloc_lo, __ATOMIC_RELAXED) &&
	       (uintptr_t)ret < __atomic_load_n(&rip_pl_alloc_hi, __ATOMIC_RELAXED);
}

/* Resolve the C allocator (constructor, or the first call made before it).  0 or -errno. */
int rip_pl_mem_resolve(void)
{
	void *m, *c, *r, *f;

	m = rip_pl_next("malloc");
	c = rip_pl_next("calloc");
	r = rip_pl_next("realloc");
	f = rip_pl_next("free");
	if (!m || !c || !r || !f)
		return -ENOSYS;
	rip_pl_alloc_range(m);
	/* Relaxed: each pointer is whole by itself; malloc last, it tells the rest are set. */
	__atomic_store_n(&real_calloc, (__typeof__(real_calloc))c, __ATOMIC_RELAXED);
	__atomic_store_n(&real_realloc, (__typeof__(real_realloc))r, __ATOMIC_RELAXED);
	__atomic_store_n(&real_free, (__typeof__(real_free))f, __ATOMIC_RELAXED);
	/* Release: pairs with the acquire load in rip_pl_mem_ready. */
	__atomic_store_n(&real_malloc, (__typeof__(real_malloc))m, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Is the real allocator known?  False only inside dlsym (the bootstrap
 * buffer serves it) or when there is no allocator to forward to at all.
 */
static inline bool rip_pl_mem_ready(void)
{
	/* Pairs with the release store in rip_pl_mem_resolve. */
	if (RIP_LIKELY(__atomic_load_n(&real_malloc, __ATOMIC_ACQUIRE)))
		return true;
	if (rip_pl_self.boot)
		return false;
	return rip_pl_mem_resolve() == 0;
}

/*
 * Before a real allocation on a thread that has not traced yet: take its
 * stack bounds now, not later from a signal handler that interrupted the
 * real allocator (pthread_getattr_np allocates).
 */
static inline void rip_pl_mem_prepare(void)
{
	if (RIP_UNLIKELY(rip_pl_self.stack_ok == 0) && rip_pl_enter(RIP_CAT_MEM))
		rip_pl_leave();
}

/* ---- the tracer's blocks that others free ---- */

/*
 * Blocks allocated while the guard is up are the tracer's, and not
 * recorded.  Most are freed by the tracer, guard up again; but some are
 * freed by code that runs for the program, unguarded: the dynamic TLS
 * block of libunwind (loaded by dlopen, general-dynamic TLS), which
 * __tls_get_addr mallocs on a thread's first backtrace through libunwind
 * and glibc frees when the thread's stack is freed or reused
 * (_dl_deallocate_tls, or pthread_create taking a cached stack); the DTV
 * when ld.so resizes it for that block; libunwind's per-thread cache,
 * freed by a key destructor; dlerror's strings from the constructor's
 * dlsym, freed by the program's next dl* call.  Recorded, those frees
 * were "never seen made", one per thread.
 *
 * So every block allocated guard up (with the mem category on) goes into
 * this set, and every free looks for its block there first: found, it is
 * removed and the free forwarded unrecorded.  The set is a table of
 * buckets of 8 addresses, one cache line each, claimed by CAS, no lock: an
 * address has one bucket, a lookup reads that line only, and only when
 * the bucket's count (a small array of its own, which stays in cache) says
 * it holds anything: a free pays nothing while the set is empty, and a
 * count's load while it is not (the tracer's blocks of a few threads stay
 * there for the program's life); a removal writes 0 back (no
 * tombstones, so lookups never get longer).  A full bucket drops the block
 * (its free is then counted as never seen made, as before): with 2048
 * buckets, that starts to happen past a few thousand threads alive at once.
 */
#define RIP_PL_OWN_WAYS 8u
#define RIP_PL_OWN_BUCKETS 2048u

struct rip_pl_own_bucket {
	uintptr_t a[RIP_PL_OWN_WAYS]; /* 0: empty */
} __attribute__((aligned(64)));

static struct rip_pl_own_bucket rip_pl_own[RIP_PL_OWN_BUCKETS];
static uint32_t rip_pl_own_cnt[RIP_PL_OWN_BUCKETS]; /* blocks in each bucket */
static uint32_t rip_pl_own_n; /* blocks in the set: 0 spares every free the lookup */

static inline uint32_t rip_pl_own_index(uintptr_t a)
{
	return (uint32_t)((((uint64_t)a * 0x9e3779b97f4a7c15ull) >> 40) % RIP_PL_OWN_BUCKETS);
}

/* p was allocated guard up: the tracer's. */
static void rip_pl_own_add(void *p)
{
	uint32_t x = rip_pl_own_index((uintptr_t)p);
	struct rip_pl_own_bucket *b = &rip_pl_own[x];

	if (!p || !rip_category_enabled(RIP_CAT_MEM))
		return;
	for (uint32_t i = 0; i < RIP_PL_OWN_WAYS; i++) {
		uintptr_t v = 0;

		/*
		 * Release: the block is in the set before the pointer leaves this
		 * thread; pairs with the acquire loads of rip_pl_own_take in the
		 * thread that frees it (which got the pointer through its own
		 * synchronisation with us: a join, a lock, the DTV of a dead thread).
		 */
		if (__atomic_load_n(&b->a[i], __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&b->a[i], &v, (uintptr_t)p, false, __ATOMIC_RELEASE,
						__ATOMIC_RELAXED)) {
			/* Release both: pair with the acquire loads in rip_pl_own_take. */
			__atomic_fetch_add(&rip_pl_own_cnt[x], 1, __ATOMIC_RELEASE);
			__atomic_fetch_add(&rip_pl_own_n, 1, __ATOMIC_RELEASE);
			return;
		}
	}
}

/* Is p one of the tracer's blocks?  If so it leaves the set (it is being freed). */
static inline bool rip_pl_own_take(void *p)
{
	struct rip_pl_own_bucket *b;
	uint32_t x;

	/* Acquire: pairs with the release increment in rip_pl_own_add. */
	if (RIP_LIKELY(!__atomic_load_n(&rip_pl_own_n, __ATOMIC_ACQUIRE)))
		return false;
	x = rip_pl_own_index((uintptr_t)p);
	/* Acquire: pairs with the release increment of the bucket's count in rip_pl_own_add. */
	if (RIP_LIKELY(!__atomic_load_n(&rip_pl_own_cnt[x], __ATOMIC_ACQUIRE)))
		return false;
	b = &rip_pl_own[x];
	for (uint32_t i = 0; i < RIP_PL_OWN_WAYS; i++) {
		/* Acquire: pairs with the release CAS of rip_pl_own_add. */
		uintptr_t v = __atomic_load_n(&b->a[i], __ATOMIC_ACQUIRE);

		/* Relaxed: only the thread that frees p removes it. */
		if (v == (uintptr_t)p && __atomic_compare_exchange_n(&b->a[i], &v, 0, false,
								    __ATOMIC_RELAXED,
								    __ATOMIC_RELAXED)) {
			__atomic_fetch_sub(&rip_pl_own_cnt[x], 1, __ATOMIC_RELAXED);
			__atomic_fetch_sub(&rip_pl_own_n, 1, __ATOMIC_RELAXED);
			return true;
		}
	}
	return false;
}

/*
 * Record an allocation p of size bytes made by the caller of the hook; one
 * made guard up (the tracer's) goes into the set of the tracer's blocks.
 * P NULL for a request of SIZE bytes (not 0) is a failed call: recorded
 * with address 0, so that readers count the failures of each function.
 */
#define RIP_PL_ALLOC(P, SIZE, KIND) RIP_PL_ALLOC_AT(NULL, P, SIZE, KIND)

/* The same, the backtrace as RIP_PL_BT(FR) takes it. */
#define RIP_PL_ALLOC_AT(FR, P, SIZE, KIND)                                                         \
	do {                                                                                       \
		if (RIP_UNLIKELY(rip_pl_enter(RIP_CAT_MEM))) {                                     \
			if ((P) || (SIZE))                                                         \
				rip_pl_mem_alloc(P, SIZE, RIP_PL_BT(FR), KIND);                    \
			rip_pl_leave();                                                            \
		} else if (RIP_UNLIKELY(rip_pl_self.guard) && (P)) {                               \
			rip_pl_own_add(P);                                                         \
		}                                                                                  \
	} while (0)

/* n * size, or UINT64_MAX when that overflows: the size a failed calloc asked for. */
static inline uint64_t rip_pl_mul_sat(size_t n, size_t size)
{
	uint64_t total;

	return __builtin_mul_overflow((uint64_t)n, (uint64_t)size, &total) ? UINT64_MAX : total;
}

/* Record a free of P (not NULL), unless P is one of the tracer's blocks. */
#define RIP_PL_FREE(P, KIND)                                                                       \
	do {                                                                                       \
		if (RIP_UNLIKELY(rip_pl_own_take(P)))                                              \
			break;                                                                     \
		if (RIP_UNLIKELY(rip_pl_enter(RIP_CAT_MEM))) {                                     \
			rip_pl_mem_free(P, rip_pl_backtrace_id(), KIND);                           \
			rip_pl_leave();                                                            \
		}                                                                                  \
	} while (0)

/* ---- C ---- */

RIP_PL_EXPORT void *malloc(size_t size)
{
	void *p;

	if (RIP_UNLIKELY(!rip_pl_mem_ready()))
		return rip_pl_boot_alloc(size, 16);
	if (RIP_UNLIKELY(rip_pl_self.stack_ok == 0) && rip_pl_self.scratch)
		return rip_pl_scratch_alloc(&rip_pl_self, size);
	rip_pl_mem_prepare();
	p = real_malloc(size);
	RIP_PL_ALLOC(p, size, RIP_MEM_MALLOC);
	return p;
}

RIP_PL_EXPORT void free(void *p)
{
	if (!p || RIP_UNLIKELY(rip_pl_boot_owns(p)))
		return;
	if (RIP_UNLIKELY(!rip_pl_mem_ready()))
		return; /* nothing to forward to: leak rather than crash */
	RIP_PL_FREE(p, RIP_MEM_FREE);
	real_free(p);
}

RIP_PL_EXPORT void *calloc(size_t n, size_t size)
{
	void *p;

	if (RIP_UNLIKELY(!rip_pl_mem_ready())) {
		size_t total;

		if (__builtin_mul_overflow(n, size, &total))
			return NULL;
		return rip_pl_boot_alloc(total, 16); /* zeroed */
	}
	if (RIP_UNLIKELY(rip_pl_self.stack_ok == 0) && rip_pl_self.scratch)
		return rip_pl_scratch_alloc(&rip_pl_self, rip_pl_mul_sat(n, size));
	rip_pl_mem_prepare();
	p = real_calloc(n, size);
	RIP_PL_ALLOC(p, rip_pl_mul_sat(n, size), RIP_MEM_CALLOC);
	return p;
}

/* realloc of a bootstrap block: a new real block with its contents. */
static void *rip_pl_boot_realloc(void *old, size_t size)
{
	size_t n = rip_pl_boot_size(old);
	void *p = rip_pl_self.scratch ? rip_pl_scratch_alloc(&rip_pl_self, size) :
		  rip_pl_mem_ready()  ? real_malloc(size) :
					rip_pl_boot_alloc(size, 16);

	if (p)
		memcpy(p, old, n < size ? n : size);
	return p;
}

/*
 * After realloc(old, size) returned p: record it.  Always inlined into the
 * exported hook (the backtrace skips exactly its caller).  A block of the
 * tracer's (rip_pl_own) is not the program's: its realloc guard up stays
 * the tracer's, and unguarded (ld.so resizing a DTV it made for us) it is
 * an allocation of p.  A failure (NULL for size bytes, not 0) is a mem:alloc
 * of address 0 and kind kind: old stays, and no reader releases it.
 */
static inline __attribute__((always_inline)) void *rip_pl_realloc_record(void *old, void *p,
									   uint64_t size, uint32_t kind)
{
	bool own = old && (p || !size) && rip_pl_own_take(old);

	if (RIP_UNLIKELY(rip_pl_enter(RIP_CAT_MEM))) {
		if (p || (old && !size && !own))
			rip_pl_mem_realloc(own ? NULL : old, p, p ? size : 0,
					   rip_pl_backtrace_id());
		else if (size)
			rip_pl_mem_alloc(NULL, size, rip_pl_backtrace_id(), kind);
		rip_pl_leave();
	} else if (RIP_UNLIKELY(rip_pl_self.guard) && p) {
		rip_pl_own_add(p);
	}
	return p;
}

RIP_PL_EXPORT void *realloc(void *old, size_t size)
{
	void *p;

	if (RIP_UNLIKELY(old && rip_pl_boot_owns(old))) {
		p = rip_pl_boot_realloc(old, size);
		if (p && !rip_pl_boot_owns(p) && RIP_UNLIKELY(rip_pl_enter(RIP_CAT_MEM))) {
			rip_pl_mem_realloc(NULL, p, size, rip_pl_backtrace_id());
			rip_pl_leave();
		}
		return p;
	}
	if (RIP_UNLIKELY(!rip_pl_mem_ready()))
		return old ? NULL : rip_pl_boot_alloc(size, 16);
	if (RIP_UNLIKELY(rip_pl_self.stack_ok == 0) && rip_pl_self.scratch && !old)
		return rip_pl_scratch_alloc(&rip_pl_self, size);
	rip_pl_mem_prepare();
	return rip_pl_realloc_record(old, real_realloc(old, size), size, RIP_MEM_REALLOC);
}

/*
 * reallocarray is realloc after an overflow check, done here: glibc's own
 * calls realloc through the PLT, which is our hook, so calling it recorded
 * the block twice.
 */
RIP_PL_EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		/* failed: recorded as a failed allocation of every byte there is */
		if (RIP_UNLIKELY(rip_pl_enter(RIP_CAT_MEM))) {
			rip_pl_mem_alloc(NULL, UINT64_MAX, rip_pl_backtrace_id(),
					 RIP_MEM_REALLOCARRAY);
			rip_pl_leave();
		}
		errno = ENOMEM;
		return NULL;
	}
	if (RIP_UNLIKELY(old && rip_pl_boot_owns(old)) || RIP_UNLIKELY(!rip_pl_mem_ready()))
		return realloc(old, total);
	rip_pl_mem_prepare();
	return rip_pl_realloc_record(old, real_realloc(old, total), total, RIP_MEM_REALLOCARRAY);
}

RIP_PL_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	int err;

	if (RIP_UNLIKELY(!rip_pl_mem_ready())) {
		*out = rip_pl_boot_alloc(size, align);
		return *out ? 0 : ENOMEM;
	}
	if (!RIP_PL_REAL(real_posix_memalign, "posix_memalign"))
		return ENOMEM;
	rip_pl_mem_prepare();
	err = real_posix_memalign(out, align, size);
	RIP_PL_ALLOC(err ? NULL : *out, size, RIP_MEM_POSIX_MEMALIGN);
	return err;
}

/* The aligned family: fn the real one (NULL: posix_memalign does it). */
static inline void *rip_pl_aligned(void *(*fn)(size_t, size_t), size_t align, size_t size)
{
	void *p = NULL;

	if (fn)
		return fn(align, size);
	if (!RIP_PL_REAL(real_posix_memalign, "posix_memalign"))
		return NULL;
	if (align < sizeof(void *))
		align = sizeof(void *);
	if (real_posix_memalign(&p, align, size)) {
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

RIP_PL_EXPORT void *aligned_alloc(size_t align, size_t size)
{
	void *p;

	if (RIP_UNLIKELY(!rip_pl_mem_ready()))
		return rip_pl_boot_alloc(size, align);
	rip_pl_mem_prepare();
	p = rip_pl_aligned(RIP_PL_REAL(real_aligned_alloc, "aligned_alloc"), align, size);
	RIP_PL_ALLOC(p, size, RIP_MEM_ALIGNED_ALLOC);
	return p;
}

RIP_PL_EXPORT void *memalign(size_t align, size_t size)
{
	void *p;

	if (RIP_UNLIKELY(!rip_pl_mem_ready()))
		return rip_pl_boot_alloc(size, align);
	rip_pl_mem_prepare();
	p = rip_pl_aligned(RIP_PL_REAL(real_memalign, "memalign"), align, size);
	RIP_PL_ALLOC(p, size, RIP_MEM_MEMALIGN);
	return p;
}

RIP_PL_EXPORT void *valloc(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	if (RIP_UNLIKELY(!rip_pl_mem_ready()))
		return rip_pl_boot_alloc(size, page);
	rip_pl_mem_prepare();
	if (RIP_PL_REAL(real_valloc, "valloc"))
		p = real_valloc(size);
	else
		p = rip_pl_aligned(NULL, page, size);
	RIP_PL_ALLOC(p, size, RIP_MEM_VALLOC);
	return p;
}

RIP_PL_EXPORT void *pvalloc(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	if (RIP_UNLIKELY(!rip_pl_mem_ready()))
		return rip_pl_boot_alloc((size + page - 1) & ~(page - 1), page);
	rip_pl_mem_prepare();
	if (RIP_PL_REAL(real_pvalloc, "pvalloc"))
		p = real_pvalloc(size);
	else
		p = rip_pl_aligned(NULL, page, (size + page - 1) & ~(page - 1));
	RIP_PL_ALLOC(p, size, RIP_MEM_PVALLOC);
	return p;
}

/*
 * glibc's own names of its allocator, which a program may call directly
 * (to reach glibc's malloc from under an allocator of its own, or mixed
 * with malloc and free: a block from malloc freed by __libc_free was a
 * leak, one from __libc_malloc freed by free a free never seen made).  Each
 * forwards to the same name of the next object, glibc's, never to the
 * program's malloc, and records as its standard name does.
 */
static void *(*real_libc_malloc)(size_t);
static void *(*real_libc_calloc)(size_t, size_t);
static void *(*real_libc_realloc)(void *, size_t);
static void (*real_libc_free)(void *);
static void *(*real_libc_memalign)(size_t, size_t);

RIP_PL_EXPORT void *__libc_malloc(size_t size);
RIP_PL_EXPORT void *__libc_malloc(size_t size)
{
	void *p;

	if (RIP_UNLIKELY(!rip_pl_mem_ready()))
		return malloc(size); /* the bootstrap buffer */
	if (!RIP_PL_REAL(real_libc_malloc, "__libc_malloc"))
		return NULL;
	rip_pl_mem_prepare();
	p = real_libc_malloc(size);
	RIP_PL_ALLOC(p, size, RIP_MEM_MALLOC);
	return p;
}

RIP_PL_EXPORT void __libc_free(void *p);
RIP_PL_EXPORT void __libc_free(void *p)
{
	if (!p || RIP_UNLIKELY(rip_pl_boot_owns(p)))
		return;
	if (RIP_UNLIKELY(!rip_pl_mem_ready()) || !RIP_PL_REAL(real_libc_free, "__libc_free"))
		return; /* nothing to forward to: leak rather than crash */
	RIP_PL_FREE(p, RIP_MEM_FREE);
	real_libc_free(p);
}

RIP_PL_EXPORT void *__libc_calloc(size_t n, size_t size);
RIP_PL_EXPORT void *__libc_calloc(size_t n, size_t size)
{
	void *p;

	if (RIP_UNLIKELY(!rip_pl_mem_ready()))
		return calloc(n, size);
	if (!RIP_PL_REAL(real_libc_calloc, "__libc_calloc"))
		return NULL;
	rip_pl_mem_prepare();
	p = real_libc_calloc(n, size);
	RIP_PL_ALLOC(p, rip_pl_mul_sat(n, size), RIP_MEM_CALLOC);
	return p;
}

RIP_PL_EXPORT void *__libc_realloc(void *old, size_t size);
RIP_PL_EXPORT void *__libc_realloc(void *old, size_t size)
{
	if (RIP_UNLIKELY(old && rip_pl_boot_owns(old)) || RIP_UNLIKELY(!rip_pl_mem_ready()))
		return realloc(old, size);
	if (!RIP_PL_REAL(real_libc_realloc, "__libc_realloc"))
		return NULL;
	rip_pl_mem_prepare();
	return rip_pl_realloc_record(old, real_libc_realloc(old, size), size, RIP_MEM_REALLOC);
}

RIP_PL_EXPORT void *__libc_memalign(size_t align, size_t size);
RIP_PL_EXPORT void *__libc_memalign(size_t align, size_t size)
{
	void *p;

	if (RIP_UNLIKELY(!rip_pl_mem_ready()))
		return memalign(align, size);
	if (!RIP_PL_REAL(real_libc_memalign, "__libc_memalign"))
		return NULL;
	rip_pl_mem_prepare();
	p = real_libc_memalign(align, size);
	RIP_PL_ALLOC(p, size, RIP_MEM_MEMALIGN);
	return p;
}

RIP_PL_EXPORT size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (RIP_UNLIKELY(rip_pl_boot_owns(p)))
		return rip_pl_boot_size(p);
	if (!RIP_PL_REAL(real_malloc_usable_size, "malloc_usable_size"))
		return 0;
	return real_malloc_usable_size(p);
}

/* ---- C++: operator new and delete, by their mangled names ---- */

/*
 * operator new: malloc (or posix_memalign) directly; when that fails, the
 * real operator runs the new-handler loop and throws std::bad_alloc (or
 * returns NULL, nothrow).  Its own malloc is recorded by the malloc hook,
 * so nothing more is recorded then.  No C++ runtime to fall back on: abort,
 * as std::terminate would.
 */
#define RIP_PL_NEW_FAST(P, SIZE, ALIGN, KIND)                                                      \
	do {                                                                                       \
		if (RIP_LIKELY(rip_pl_mem_ready())) {                                              \
			rip_pl_mem_prepare();                                                      \
			if ((ALIGN) == 0)                                                          \
				P = real_malloc((SIZE) ? (SIZE) : 1);                              \
			else if (!RIP_PL_REAL(real_posix_memalign, "posix_memalign") ||            \
				 real_posix_memalign(&P,                                           \
						     (ALIGN) < sizeof(void *) ? sizeof(void *)     \
									      : (ALIGN),           \
						     (SIZE) ? (SIZE) : 1))                         \
				P = NULL;                                                          \
			if (RIP_LIKELY(P)) {                                                       \
				RIP_PL_ALLOC(P, SIZE, KIND);                                       \
				return P;                                                          \
			}                                                                          \
		}                                                                                  \
	} while (0)

#define RIP_PL_NEW_REAL(NAME, TYPE, ...)                                                           \
	do {                                                                                       \
		static __typeof__(TYPE) real;                                                      \
                                                                                                   \
		/* Late: the runtime of a C program's C++ plugin comes with the plugin. */         \
		if (!RIP_PL_REAL_LATE(real, #NAME))                                                \
			abort();                                                                   \
		return real(__VA_ARGS__);                                                          \
	} while (0)

/* Not in a header: these are C++'s, under their mangled names (nt: std::nothrow_t const &). */
#define RIP_PL_NEW(NAME, KIND)                                                                     \
	void *NAME(size_t size);                                                                   \
	RIP_PL_EXPORT void *NAME(size_t size)                                                      \
	{                                                                                          \
		void *p = NULL;                                                                    \
                                                                                                   \
		RIP_PL_NEW_FAST(p, size, 0, KIND);                                                 \
		RIP_PL_NEW_REAL(NAME, void *(*)(size_t), size);                                    \
	}

#define RIP_PL_NEW_NT(NAME, KIND)                                                                  \
	void *NAME(size_t size, const void *nt);                                                   \
	RIP_PL_EXPORT void *NAME(size_t size, const void *nt)                                      \
	{                                                                                          \
		void *p = NULL;                                                                    \
                                                                                                   \
		RIP_PL_NEW_FAST(p, size, 0, KIND);                                                 \
		RIP_PL_NEW_REAL(NAME, void *(*)(size_t, const void *), size, nt);                  \
	}

#define RIP_PL_NEW_AL(NAME, KIND)                                                                  \
	void *NAME(size_t size, size_t align);                                                     \
	RIP_PL_EXPORT void *NAME(size_t size, size_t align)                                        \
	{                                                                                          \
		void *p = NULL;                                                                    \
                                                                                                   \
		RIP_PL_NEW_FAST(p, size, align, KIND);                                             \
		RIP_PL_NEW_REAL(NAME, void *(*)(size_t, size_t), size, align);                     \
	}

#define RIP_PL_NEW_AL_NT(NAME, KIND)                                                               \
	void *NAME(size_t size, size_t align, const void *nt);                                     \
	RIP_PL_EXPORT void *NAME(size_t size, size_t align, const void *nt)                        \
	{                                                                                          \
		void *p = NULL;                                                                    \
                                                                                                   \
		RIP_PL_NEW_FAST(p, size, align, KIND);                                             \
		RIP_PL_NEW_REAL(NAME, void *(*)(size_t, size_t, const void *), size, align, nt);   \
	}

RIP_PL_NEW(_Znwm, RIP_MEM_NEW)
RIP_PL_NEW(_Znam, RIP_MEM_NEW_ARRAY)
RIP_PL_NEW_NT(_ZnwmRKSt9nothrow_t, RIP_MEM_NEW)
RIP_PL_NEW_NT(_ZnamRKSt9nothrow_t, RIP_MEM_NEW_ARRAY)
RIP_PL_NEW_AL(_ZnwmSt11align_val_t, RIP_MEM_NEW)
RIP_PL_NEW_AL(_ZnamSt11align_val_t, RIP_MEM_NEW_ARRAY)
RIP_PL_NEW_AL_NT(_ZnwmSt11align_val_tRKSt9nothrow_t, RIP_MEM_NEW)
RIP_PL_NEW_AL_NT(_ZnamSt11align_val_tRKSt9nothrow_t, RIP_MEM_NEW_ARRAY)

/* Every operator delete frees what our new (malloc, posix_memalign) allocated. */
#define RIP_PL_DELETE(NAME, KIND, ...)                                                             \
	void NAME(void *p, ##__VA_ARGS__);                                                         \
	RIP_PL_EXPORT void NAME(void *p, ##__VA_ARGS__)                                            \
	{                                                                                          \
		if (!p || RIP_UNLIKELY(rip_pl_boot_owns(p)) || RIP_UNLIKELY(!rip_pl_mem_ready()))  \
			return;                                                                    \
		RIP_PL_FREE(p, KIND);                                                              \
		real_free(p);                                                                      \
	}

RIP_PL_DELETE(_ZdlPv, RIP_MEM_DELETE)
RIP_PL_DELETE(_ZdaPv, RIP_MEM_DELETE_ARRAY)
RIP_PL_DELETE(_ZdlPvm, RIP_MEM_DELETE, size_t size)
RIP_PL_DELETE(_ZdaPvm, RIP_MEM_DELETE_ARRAY, size_t size)
RIP_PL_DELETE(_ZdlPvRKSt9nothrow_t, RIP_MEM_DELETE, const void *nt)
RIP_PL_DELETE(_ZdaPvRKSt9nothrow_t, RIP_MEM_DELETE_ARRAY, const void *nt)
RIP_PL_DELETE(_ZdlPvSt11align_val_t, RIP_MEM_DELETE, size_t align)
RIP_PL_DELETE(_ZdaPvSt11align_val_t, RIP_MEM_DELETE_ARRAY, size_t align)
RIP_PL_DELETE(_ZdlPvmSt11align_val_t, RIP_MEM_DELETE, size_t size, size_t align)
RIP_PL_DELETE(_ZdaPvmSt11align_val_t, RIP_MEM_DELETE_ARRAY, size_t size, size_t align)
RIP_PL_DELETE(_ZdlPvSt11align_val_tRKSt9nothrow_t, RIP_MEM_DELETE, size_t align, const void *nt)
RIP_PL_DELETE(_ZdaPvSt11align_val_tRKSt9nothrow_t, RIP_MEM_DELETE_ARRAY, size_t align,
	      const void *nt)

/* ---- mappings ---- */

static inline bool rip_pl_anon_private(int flags)
{
	return (flags & MAP_ANONYMOUS) && (flags & MAP_TYPE) == MAP_PRIVATE;
}

/*
 * The recording steps of mmap, munmap and mremap, always inlined: into
 * the exported hook (fr NULL) or into rip_pl_mem_sys_before and _after
 * (fr their frame), which syscall()'s hook calls for syscall(SYS_mmap...):
 * the backtrace is RIP_PL_BT(fr)'s, the hooked call's caller's.  ret: the
 * hooked call's return address.
 */
#define MEM_INLINE static inline __attribute__((always_inline))

/* Has the program reserved address space (a mmap with PROT_NONE) yet? */
static bool rip_pl_reserved;

/* noinline, called from the hooks: the backtrace starts at this frame's caller's caller. */
__attribute__((noinline)) void rip_pl_mprotect_record(const void *ret, void *addr, size_t len,
						      int prot)
{
	/* no reservation made yet, or not made accessible: nothing of memory changes */
	if (prot == PROT_NONE || !__atomic_load_n(&rip_pl_reserved, __ATOMIC_RELAXED) ||
	    rip_pl_from_allocator(ret))
		return;
	if (RIP_UNLIKELY(rip_pl_enter(RIP_CAT_MEM))) {
		rip_pl_mem_alloc(addr, len, RIP_PL_BT(__builtin_frame_address(0)),
				 RIP_MEM_MPROTECT);
		rip_pl_leave();
	}
	/* Not a tail call of anything that records: the recording above is done. */
	__asm__ __volatile__("" ::: "memory");
}

/*
 * After a successful mmap: mem:alloc for anonymous private, shm.c for the
 * rest.  A mapping placed over others (MAP_FIXED) replaces what it covers:
 * readers unmap that range before a mem:alloc of kind mmap or mremap, and
 * for any other mapping a mem:unmap of kind mmap says it.
 */
MEM_INLINE void rip_pl_mmap_record(const void *fr, const void *ret, void *p, size_t len, int prot,
				   int flags, int fd, off_t off)
{
	if (p == MAP_FAILED || rip_pl_from_allocator(ret))
		return;
	/* MAP_FIXED over a recorded shared mapping replaces (part of) it */
	if ((flags & MAP_FIXED) && rip_pl_shm_unmapping && RIP_UNLIKELY(rip_pl_enter(RIP_CAT_SHM))) {
		rip_pl_shm_unmapping(p, len, RIP_PL_BT(fr));
		rip_pl_leave();
	}
	if (rip_pl_anon_private(flags)) {
		if (prot == PROT_NONE) {
			/* address space only; relaxed: a hint for rip_pl_mprotect_record */
			if (!__atomic_load_n(&rip_pl_reserved, __ATOMIC_RELAXED))
				__atomic_store_n(&rip_pl_reserved, true, __ATOMIC_RELAXED);
			RIP_PL_ALLOC_AT(fr, p, len, RIP_MEM_RESERVE);
			return;
		}
		RIP_PL_ALLOC_AT(fr, p, len, RIP_MEM_MMAP);
		return; /* readers unmap what a mapping is placed over */
	}
	/* MAP_FIXED over a private mapping: mem:unmap kind mmap of the range */
	if ((flags & MAP_FIXED) && RIP_UNLIKELY(rip_pl_enter(RIP_CAT_MEM))) {
		rip_pl_mem_unmap(p, len, RIP_PL_BT(fr), RIP_MEM_MMAP);
		rip_pl_leave();
	}
	if (rip_pl_shm_mapped && RIP_UNLIKELY(rip_pl_enter(RIP_CAT_SHM))) {
		rip_pl_shm_mapped(p, len, prot, flags, fd, off, RIP_PL_BT(fr));
		rip_pl_leave();
	}
}

/* A mapping that replaces what was at addr: in the thread's stack, a hole (thread.c) or not. */
static inline void rip_pl_stack_fixed(void *addr, size_t len, int prot, int flags, bool done)
{
	if (RIP_UNLIKELY(flags & MAP_FIXED))
		rip_pl_stack_prot((uintptr_t)addr, len, prot, done);
}

RIP_PL_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;

	if (!RIP_PL_REAL(real_mmap, "mmap"))
		return (void *)(intptr_t)rip_pl_enosys();
	rip_pl_stack_fixed(addr, len, prot, flags, false);
	p = real_mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED)
		rip_pl_stack_fixed(addr, len, prot, flags, true);
	rip_pl_mmap_record(NULL, __builtin_return_address(0), p, len, prot, flags, fd, off);
	return p;
}

RIP_PL_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;

	if (!RIP_PL_REAL(real_mmap64, "mmap64") && !RIP_PL_REAL(real_mmap64, "mmap"))
		return (void *)(intptr_t)rip_pl_enosys();
	rip_pl_stack_fixed(addr, len, prot, flags, false);
	p = real_mmap64(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED)
		rip_pl_stack_fixed(addr, len, prot, flags, true);
	rip_pl_mmap_record(NULL, __builtin_return_address(0), p, len, prot, flags, fd, off);
	return p;
}

/* The category a release of [addr, addr + len) may belong to, guard up; false: untraced. */
static inline bool rip_pl_unmap_enter(void)
{
	return rip_pl_enter(RIP_CAT_MEM) || rip_pl_enter(RIP_CAT_SHM);
}

/*
 * Guard up: record the release of [addr, addr + len), as shm.c's (true) or
 * as ours: a mem:unmap of the range, which may be any part of one or more
 * mappings (trimming the head or the tail of one, or punching a hole in
 * it, leaves the rest mapped: readers keep the pieces).
 */
static bool rip_pl_unmap_record(void *addr, size_t len, uint32_t bt, uint32_t kind)
{
	if (rip_pl_shm_unmapping && rip_category_enabled(RIP_CAT_SHM) &&
	    rip_pl_shm_unmapping(addr, len, bt))
		return true;
	rip_pl_mem_unmap(addr, len, bt, kind);
	return false;
}

/* Before a munmap of [addr, addr + len). */
MEM_INLINE void rip_pl_munmap_record(const void *fr, const void *ret, void *addr, size_t len)
{
	if (RIP_UNLIKELY(rip_pl_from_unwinder(ret)))
		return; /* the tracer's own (libunwind's cache) */
	if (rip_pl_from_allocator(ret))
		return; /* an allocator's arena */
	if (RIP_UNLIKELY(rip_pl_unmap_enter())) {
		rip_pl_unmap_record(addr, len, RIP_PL_BT(fr), RIP_MEM_MUNMAP);
		rip_pl_leave();
	}
}

RIP_PL_EXPORT int munmap(void *addr, size_t len)
{
	if (!RIP_PL_REAL(real_munmap, "munmap"))
		return rip_pl_enosys();
	rip_pl_munmap_record(NULL, __builtin_return_address(0), addr, len);
	rip_pl_stack_prot((uintptr_t)addr, len, PROT_NONE, false);
	return real_munmap(addr, len);
}

/* After an mremap of [old, old + old_len) to [p, p + len) (MAP_FAILED: it failed). */
MEM_INLINE void rip_pl_mremap_record(const void *fr, const void *ret, void *old, size_t old_len,
				     void *p, size_t len, int flags)
{
	if (p != MAP_FAILED && !rip_pl_from_allocator(ret) && RIP_UNLIKELY(rip_pl_unmap_enter())) {
		uint32_t bt = RIP_PL_BT(fr);
		int anon = 1; /* 2: PROT_NONE, a reservation moved or grown, still one */

		bool shm = rip_pl_shm_unmapping && rip_category_enabled(RIP_CAT_SHM);

		/*
		 * Moved or resized: the old range goes (unless old_len 0, a second
		 * mapping of shared pages, or MREMAP_DONTUNMAP, which leaves it
		 * mapped), the new one comes.  The old range may be part of a
		 * mapping: the rest of it stays.  Moved to a fixed address, the new
		 * range replaces what was mapped there, as mmap's MAP_FIXED does.
		 */
		if (shm && rip_pl_shm_remapped(old, old_len, p, len, flags, bt)) {
			/* a shared mapping: shm.c recorded the detach and the attach */
			if (flags & MREMAP_FIXED)
				rip_pl_mem_unmap(p, len, bt, RIP_MEM_MMAP);
		} else if (rip_category_enabled(RIP_CAT_MEM) &&
			   !(anon = rip_pl_maps_anon_private((uintptr_t)p))) {
			/*
			 * A file mapping, or shared memory shm.c did not record:
			 * its mmap was not a mem:alloc, so neither is its move.
			 */
			if ((flags & MREMAP_FIXED) && !(shm && rip_pl_shm_unmapping(p, len, bt)))
				rip_pl_mem_unmap(p, len, bt, RIP_MEM_MMAP);
		} else {
			if ((flags & MREMAP_FIXED) && shm)
				rip_pl_shm_unmapping(p, len, bt);
			if (!old_len || (flags & RIP_PL_MREMAP_DONTUNMAP) ||
			    !rip_pl_unmap_record(old, old_len, bt, RIP_MEM_MREMAP))
				rip_pl_mem_alloc(p, len, bt,
						 anon == 2 ? RIP_MEM_RESERVE : RIP_MEM_MREMAP);
		}
		rip_pl_leave();
	}
}

RIP_PL_EXPORT void *mremap(void *old, size_t old_len, size_t len, int flags, ...)
{
	void *p, *want = NULL;

	if (flags & MREMAP_FIXED) {
		va_list ap;

		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	if (!RIP_PL_REAL(real_mremap, "mremap"))
		return (void *)(intptr_t)rip_pl_enosys();
	p = real_mremap(old, old_len, len, flags, want);
	rip_pl_mremap_record(NULL, __builtin_return_address(0), old, old_len, p, len, flags);
	return p;
}

/*
 * syscall(SYS_munmap), (SYS_mmap) and (SYS_mremap) (wait.c's hook): the
 * steps of the hooks above.  noinline, called directly from syscall(): the
 * backtrace starts at this frame's caller's caller (RIP_PL_BT).
 */
__attribute__((noinline)) void rip_pl_mem_sys_before(long n, const long *a, const void *ret_addr)
{
	if (n == SYS_munmap)
		rip_pl_munmap_record(__builtin_frame_address(0), ret_addr, (void *)a[0],
				     (size_t)a[1]);
	/* Not a tail call of anything that records: the recording above is done. */
	__asm__ __volatile__("" ::: "memory");
}

__attribute__((noinline)) void rip_pl_mem_sys_after(long n, const long *a, long ret,
						    const void *ret_addr)
{
	const void *fr = __builtin_frame_address(0);

	switch (n) {
#if __SIZEOF_LONG__ == 8 /* rip_pl_sys_resource: mmap's six arguments */
	case SYS_mmap:
		rip_pl_mmap_record(fr, ret_addr, (void *)ret, (size_t)a[1], (int)a[2], (int)a[3],
				   (int)a[4], (off_t)a[5]);
		break;
#endif
	case SYS_mremap:
		rip_pl_mremap_record(fr, ret_addr, (void *)a[0], (size_t)a[1], (void *)ret,
				     (size_t)a[2], (int)a[3]);
		break;
	default:
		break;
	}
	/* Not a tail call of anything that records: the recording above is done. */
	__asm__ __volatile__("" ::: "memory");
}
