/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rip/module.h - tracing modules: small shared objects that `rip run
 * --module=NAME|PATH.so` preloads next to librip-preload.so, each wrapping
 * the functions of one kind of resource (GObjects, database handles,
 * bytes copied...) and reporting what they acquire and release.  librip
 * takes the stack, writes the events and guards re-entry, exactly as for
 * its own memory, descriptor and shared memory hooks; `rip leaks`, `rip
 * report`, `rip calltree`, `rip dump` and the exports show the kinds by
 * their names, read from the trace.  See librip-module(3).
 *
 * A module:
 *
 *	#include <rip/module.h>
 *
 *	RIP_MODULE("regex", "POSIX regular expressions");
 *	RIP_KIND(regex_kind, "regex", "compiled regular expression", 0);
 *
 *	int regcomp(regex_t *re, const char *pat, int flags)
 *	{
 *		static int (*real)(regex_t *, const char *, int);
 *		int ret;
 *
 *		if (!RIP_REAL(real, "regcomp"))
 *			return REG_ESPACE;
 *		ret = real(re, pat, flags);
 *		if (!ret)
 *			rip_acquire(regex_kind, re, sizeof(*re));
 *		return ret;
 *	}
 *
 *	void regfree(regex_t *re)
 *	{
 *		static void (*real)(regex_t *);
 *
 *		if (!RIP_REAL(real, "regfree"))
 *			return;
 *		rip_release(regex_kind, re);
 *		real(re);
 *	}
 *
 * built with `cc -shared -fPIC $(pkg-config --cflags librip) -o regex.so
 * regex.c` (no library to link: librip-preload.so, preloaded first,
 * defines the rip_mod_* functions).
 *
 * Rules, as for the built-in hooks:
 *  - call the report macros directly from the exported wrapper (the stack
 *    recorded starts at the wrapper's caller);
 *  - report a release (or unref) before the real call and an acquire (or
 *    ref, transfer) after it, so that another thread handed the same id
 *    records after you;
 *  - find the real function with RIP_REAL, never dlsym: the module's
 *    constructor resolves every RIP_REAL at load, and a wrapper called
 *    before that resolves its own by reading the symbol tables (no lock);
 *  - a report made while librip is at work on this thread (a wrapped
 *    function called by the unwinder, by another hook, or by a signal
 *    handler that interrupted one) is dropped or deferred by librip: the
 *    wrapper never needs to know.
 *
 * Each report is one call into librip-preload.so; when the module's
 * category is off (`rip enable/disable PID res`) it returns after a load
 * and a branch.
 */
#ifndef RIP_MODULE_H
#define RIP_MODULE_H

#include <dlfcn.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
#define __RIP_MOD_ASSERT static_assert
#else
#define __RIP_MOD_ASSERT _Static_assert
#endif

#define RIP_MODULE_API 1u /* the version of this interface; a module records it */

/* Kind flags (RIP_KIND's last argument). */
/*
 * Reference-counted: an acquire makes the count 1, rip_ref adds one and
 * rip_unref takes one; the object is released when the count reaches 0
 * (or by rip_release, whatever the count).  Leaked when the count does not
 * reach 0: rip leaks shows the stack of the acquire and of every reference
 * still held.
 */
#define RIP_KIND_REFCOUNT 0x2u
/*
 * A counter: only rip_transfer is reported (bytes copied, calls made):
 * nothing is live, rip report sums the sizes per stack.
 */
#define RIP_KIND_COUNTER 0x4u

#define RIP_KIND_NAME_MAX 48u	/* bytes of a kind or module name, NUL included */
#define RIP_KIND_DESC_MAX 96u	/* bytes of a description, NUL included */
#define RIP_MODULE_KINDS_MAX 8u /* kinds per module at most */

/*
 * One record of a module's rip_modinfo section, made by RIP_MODULE and
 * RIP_KIND: what registration reads at load, and what `rip run
 * --list-modules` reads from the file without loading it.  Names are
 * [A-Za-z0-9_.-] only.
 */
struct rip_modinfo {
	uint32_t magic; /* RIP_MODINFO_MAGIC */
	uint32_t what;	/* RIP_MODINFO_MODULE or RIP_MODINFO_KIND */
	uint32_t api;	/* RIP_MODULE_API */
	uint32_t flags; /* a kind's RIP_KIND_* */
	uint32_t *id;	/* a kind's: where registration puts its id (0 until then) */
	char name[RIP_KIND_NAME_MAX];
	char desc[RIP_KIND_DESC_MAX];
};

#define RIP_MODINFO_MAGIC 0x4d504952u /* "RIPM" in little-endian bytes */
#define RIP_MODINFO_MODULE 1u
#define RIP_MODINFO_KIND 2u

/* One record of a module's rip_modreal section: a real function to resolve at load. */
struct rip_modreal {
	void *ptr;	  /* the address of the wrapper's static function pointer */
	const char *name; /* the symbol, or "name@VERSION" */
};

#ifndef RIP_MODULE_WEAK
#define RIP_MODULE_WEAK __attribute__((weak))
#endif

/*
 * The interface of librip-preload.so (weak: a module loaded without it
 * registers nothing and reports nothing).
 *
 * rip_mod_register - the module's constructor (RIP_MODULE makes it): its
 * kinds get their ids, its real functions are resolved.  dyn is the
 * module's _DYNAMIC, which tells it from the other loaded objects.  0 or
 * -errno (-EINVAL: a bad record; -ENOSPC: too many kinds).
 *
 * rip_mod_next - the next definition of name after the object whose
 * dynamic section is dyn, read from the loaded objects' symbol tables with
 * no lock and no allocation (what RIP_REAL uses); NULL if there is none.
 * Without librip-preload.so, RIP_REAL and the constructor use dlsym.
 *
 * rip_mod_acquire ... rip_mod_transfer - the reports; call them through
 * the macros below, directly from the wrapper.  kind is a kind's id (0:
 * not registered, nothing is recorded).
 */
RIP_MODULE_WEAK int rip_mod_register(const struct rip_modinfo *info,
				     const struct rip_modinfo *info_end,
				     const struct rip_modreal *real,
				     const struct rip_modreal *real_end, const void *dyn);
RIP_MODULE_WEAK void *rip_mod_next(const void *dyn, const char *name);
RIP_MODULE_WEAK void rip_mod_acquire(uint32_t kind, uint64_t id, uint64_t size);
RIP_MODULE_WEAK void rip_mod_release(uint32_t kind, uint64_t id);
RIP_MODULE_WEAK void rip_mod_ref(uint32_t kind, uint64_t id);
RIP_MODULE_WEAK void rip_mod_unref(uint32_t kind, uint64_t id);
RIP_MODULE_WEAK void rip_mod_transfer(uint32_t kind, uint64_t id, uint64_t size);

/* dlsym's RTLD_NEXT, which <dlfcn.h> defines only with _GNU_SOURCE. */
#ifdef RTLD_NEXT
#define __RIP_RTLD_NEXT RTLD_NEXT
#else
#define __RIP_RTLD_NEXT ((void *)-1l)
#endif

/*
 * The next definition of name after this module: librip-preload.so's
 * lookup (no lock), or without it (a module preloaded alone, which traces
 * nothing) dlsym.
 */
#define __RIP_MOD_NEXT(NAME)                                                                       \
	(rip_mod_next ? rip_mod_next(__rip_mod_dynamic, (NAME)) : dlsym(__RIP_RTLD_NEXT, (NAME)))

/* This object's dynamic section, whatever <link.h> calls it. */
extern const char __rip_mod_dynamic[] __asm__("_DYNAMIC") __attribute__((visibility("hidden")));

/* The bounds of this object's records (weak: a module may have no RIP_REAL). */
extern struct rip_modinfo __start_rip_modinfo[] __attribute__((weak, visibility("hidden")));
extern struct rip_modinfo __stop_rip_modinfo[] __attribute__((weak, visibility("hidden")));
extern const struct rip_modreal __start_rip_modreal[] __attribute__((weak, visibility("hidden")));
extern const struct rip_modreal __stop_rip_modreal[] __attribute__((weak, visibility("hidden")));

/*
 * RIP_MODULE("name", "description"); once per module, at file scope: its
 * record, and the constructor that registers it with librip-preload.so.
 */
#define RIP_MODULE(NAME, DESC)                                                                     \
	__attribute__((section("rip_modinfo"), used,                                               \
		       aligned(8))) static struct rip_modinfo __rip_module_info = {                \
		RIP_MODINFO_MAGIC, RIP_MODINFO_MODULE, RIP_MODULE_API, 0, 0, NAME, DESC            \
	};                                                                                         \
	__attribute__((constructor)) static void __rip_module_ctor(void)                           \
	{                                                                                          \
		if (rip_mod_register) {                                                            \
			rip_mod_register(__start_rip_modinfo, __stop_rip_modinfo,                  \
					 __start_rip_modreal, __stop_rip_modreal,                  \
					 __rip_mod_dynamic);                                       \
			return;                                                                    \
		}                                                                                  \
		/* alone: the real functions still, for the wrappers to forward to */              \
		for (const struct rip_modreal *r = __start_rip_modreal; r < __stop_rip_modreal;    \
		     r++)                                                                          \
			if (!*(void **)r->ptr)                                                     \
				*(void **)r->ptr = __RIP_MOD_NEXT(r->name);                        \
	}                                                                                          \
	__RIP_MOD_ASSERT(1, "RIP_MODULE")

/*
 * RIP_KIND(ident, "name", "description", flags); at file scope: declares
 * the kind, and a static uint32_t ident that holds its id once the module
 * is registered (what the report macros take).
 */
#define RIP_KIND(IDENT, NAME, DESC, FLAGS)                                                         \
	static uint32_t IDENT;                                                                     \
	__attribute__((section("rip_modinfo"), used,                                               \
		       aligned(8))) static struct rip_modinfo IDENT##__rip_info = {                \
		RIP_MODINFO_MAGIC, RIP_MODINFO_KIND, RIP_MODULE_API, (FLAGS), &IDENT, NAME, DESC   \
	};                                                                                         \
	__RIP_MOD_ASSERT(sizeof(NAME) <= RIP_KIND_NAME_MAX, "kind name too long")

/*
 * RIP_REAL(ptr, "name") - the real function in ptr (the wrapper's static
 * function pointer), or NULL when no object after this module defines it.
 * Each use leaves a record for the constructor to resolve at load; a
 * wrapper called earlier (from another library's constructor) resolves
 * its own, without a lock.
 */
#define RIP_REAL(PTR, NAME)                                                                        \
	(__extension__({                                                                           \
		__attribute__((section("rip_modreal"), used,                                       \
			       aligned(8))) static const struct rip_modreal __rip_real_ = {        \
			(void *)&(PTR), NAME                                                       \
		};                                                                                 \
		/* Relaxed both: the pointer is whole by itself, and it is all there is. */        \
		__builtin_expect(__atomic_load_n(&(PTR), __ATOMIC_RELAXED) != 0, 1) ?              \
			(PTR) :                                                                    \
			(__atomic_store_n(&(PTR),                                                  \
					  (__typeof__(PTR))__RIP_MOD_NEXT(__rip_real_.name),       \
					  __ATOMIC_RELAXED),                                       \
			 (PTR));                                                                   \
	}))

/*
 * The reports.  KIND is a RIP_KIND ident, ID the resource (a pointer or an
 * integer: what release and ref name it by), SIZE its size in bytes (or
 * any count that adds up).  The empty asm after the call keeps it from
 * being a tail call: librip's stack starts at the wrapper's return address.
 *
 *	rip_acquire(k, id, size)  a new resource (refcounted: count 1)
 *	rip_release(k, id)        it is gone, whatever its count
 *	rip_ref(k, id)            one more reference (refcounted kinds)
 *	rip_unref(k, id)          one reference less; at 0 it is released
 *	rip_transfer(k, id, size) size bytes moved or used; nothing stays live
 */
#define __RIP_MOD_CALL(KIND, CALL)                                                                 \
	do {                                                                                       \
		uint32_t __rip_k = __atomic_load_n(&(KIND), __ATOMIC_RELAXED);                     \
		if (__rip_k) {                                                                     \
			CALL;                                                                      \
			__asm__ __volatile__("" ::: "memory");                                     \
		}                                                                                  \
	} while (0)
#define rip_acquire(KIND, ID, SIZE)                                                                \
	__RIP_MOD_CALL(KIND, rip_mod_acquire(__rip_k, (uint64_t)(uintptr_t)(ID), (SIZE)))
#define rip_release(KIND, ID)                                                                      \
	__RIP_MOD_CALL(KIND, rip_mod_release(__rip_k, (uint64_t)(uintptr_t)(ID)))
#define rip_ref(KIND, ID) __RIP_MOD_CALL(KIND, rip_mod_ref(__rip_k, (uint64_t)(uintptr_t)(ID)))
#define rip_unref(KIND, ID) __RIP_MOD_CALL(KIND, rip_mod_unref(__rip_k, (uint64_t)(uintptr_t)(ID)))
#define rip_transfer(KIND, ID, SIZE)                                                               \
	__RIP_MOD_CALL(KIND, rip_mod_transfer(__rip_k, (uint64_t)(uintptr_t)(ID), (SIZE)))

#ifdef __cplusplus
}
#endif

#endif /* RIP_MODULE_H */
