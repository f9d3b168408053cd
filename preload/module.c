// SPDX-License-Identifier: Apache-2.0
/*
 * preload/module.c - the side of rip/module.h that librip-preload.so
 * implements: the registration of tracing modules and of their resource
 * kinds, the lookup of their real functions, and the reports their
 * wrappers make (res:* events of rip/resource.h).
 *
 * A kind is an event type "kind:NAME" with no fields, registered with its
 * flags and description (__rip_kind_register): the type table of the ring
 * file, and so every trace, describes the kinds, and the res:* events name
 * a kind by that type's id.  librip-preload.so's own resources are kinds
 * too (kind:mem, kind:fd, kind:shm, kind:shm-map), declared with the same
 * records a module uses and registered by the same function.
 *
 * A report is what a built-in hook does: rip_pl_enter (the category, the
 * recursion guard, the fail-open switch), the stack of the wrapper's caller
 * (rip_pl_backtrace_at), one event, rip_pl_leave.  Registration runs in
 * constructors (the loader's lock is held, no hook is running): it may
 * take a mutex.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "common.h" /* and rip/module.h, its functions declared as ours */

/* Kinds of all modules together, at most; each one type of the table. */
#define RIP_PL_KINDS 64u

static struct {
	pthread_mutex_t lock;
	uint32_t n;
	struct rip_event_type type[RIP_PL_KINDS];
	uint32_t id[RIP_PL_KINDS]; /* the types' ids (UINT32_MAX until registered) */
	char name[RIP_PL_KINDS][RIP_EVTYPE_NAME_MAX];
} rip_pl_kinds = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Is s a NUL-terminated name of [A-Za-z0-9_.-] in len bytes? */
static bool rip_pl_kind_name_ok(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-' || s[i] == '.'))
			return false;
	return i > 0 && i < len;
}

/*
 * The type id of kind name (registered now if new, with flags and desc), or
 * UINT32_MAX.  Two modules that declare the same name share the kind.
 */
static uint32_t rip_pl_kind(const char *name, uint32_t flags, const char *desc)
{
	struct rip_event_type *t;
	uint32_t id = UINT32_MAX, i;

	if (!rip_pl_kind_name_ok(name, RIP_KIND_NAME_MAX))
		return UINT32_MAX;
	pthread_mutex_lock(&rip_pl_kinds.lock);
	for (i = 0; i < rip_pl_kinds.n; i++)
		if (!strcmp(rip_pl_kinds.name[i] + 5, name))
			break;
	if (i == rip_pl_kinds.n) {
		if (i == RIP_PL_KINDS)
			goto out_unlock;
		t = &rip_pl_kinds.type[i];
		/* names are shorter than RIP_KIND_NAME_MAX: "kind:" and the name fit */
		memcpy(rip_pl_kinds.name[i], "kind:", 5);
		memcpy(rip_pl_kinds.name[i] + 5, name, strnlen(name, RIP_KIND_NAME_MAX - 1));
		rip_pl_kinds.id[i] = UINT32_MAX;
		t->name = rip_pl_kinds.name[i];
		t->category = RIP_CAT_RES;
		t->nfields = 0;
		t->id = &rip_pl_kinds.id[i];
		if (__rip_kind_register(t, flags, desc))
			goto out_unlock;
		rip_pl_kinds.n++;
	}
	/* Acquire: pairs with the release store of the id at registration. */
	id = __atomic_load_n(&rip_pl_kinds.id[i], __ATOMIC_ACQUIRE);
out_unlock:
	pthread_mutex_unlock(&rip_pl_kinds.lock);
	return id;
}

RIP_PL_EXPORT int rip_mod_register(const struct rip_modinfo *info,
				   const struct rip_modinfo *info_end,
				   const struct rip_modreal *real,
				   const struct rip_modreal *real_end, const void *dyn)
{
	/* our own records (the built-in kinds) may say so */
	const uint32_t kflags = RIP_KIND_REFCOUNT | RIP_KIND_COUNTER |
				(dyn == (const void *)__rip_mod_dynamic ? RIP_EVTYPE_BUILTIN : 0);
	int ret = 0;

	if (rip_pl_secure())
		return -EPERM;
	/* The real functions first, as ours are: a wrapper may run once a kind has its id. */
	if (dyn)
		rip_pl_resolve_reals(real, real_end, dyn);
	for (const struct rip_modinfo *m = info; m && m < info_end; m++) {
		uint32_t id;

		/* the linker may pad the section between records: zeros */
		if (m->magic != RIP_MODINFO_MAGIC)
			continue;
		if (m->api != RIP_MODULE_API || !rip_pl_kind_name_ok(m->name, sizeof(m->name)) ||
		    !memchr(m->desc, 0, sizeof(m->desc))) {
			ret = -EINVAL;
			continue;
		}
		if (m->what != RIP_MODINFO_KIND)
			continue;
		if (!m->id || (m->flags & ~kflags) ||
		    (m->flags & (RIP_KIND_REFCOUNT | RIP_KIND_COUNTER)) ==
			    (RIP_KIND_REFCOUNT | RIP_KIND_COUNTER)) {
			ret = -EINVAL;
			continue;
		}
		id = rip_pl_kind(m->name, m->flags, m->desc);
		if (id == UINT32_MAX) {
			ret = -ENOSPC;
			continue;
		}
		/* Relaxed: the report macros read it so; the type is in the file before it. */
		__atomic_store_n(m->id, id, __ATOMIC_RELAXED);
	}
	return ret;
}

RIP_PL_EXPORT void *rip_mod_next(const void *dyn, const char *name)
{
	return name ? rip_pl_lookup_after(dyn, name) : NULL;
}

/*
 * The reports: noinline with their own frame (the stack is taken from it,
 * rip_pl_backtrace_at), called directly from a module's wrapper.
 */
#define RIP_PL_REPORT(CALL)                                                                        \
	do {                                                                                       \
		uint32_t bt;                                                                       \
                                                                                                   \
		if (!rip_pl_enter(RIP_CAT_RES))                                                    \
			return;                                                                    \
		bt = rip_pl_backtrace_at(__builtin_frame_address(0));                              \
		CALL;                                                                              \
		rip_pl_leave();                                                                    \
	} while (0)

RIP_PL_EXPORT __attribute__((noinline)) void rip_mod_acquire(uint32_t kind, uint64_t id,
							     uint64_t size)
{
	RIP_PL_REPORT(rip_pl_res_acquire(id, size, bt, kind));
}

RIP_PL_EXPORT __attribute__((noinline)) void rip_mod_release(uint32_t kind, uint64_t id)
{
	RIP_PL_REPORT(rip_pl_res_release(id, bt, kind));
}

RIP_PL_EXPORT __attribute__((noinline)) void rip_mod_ref(uint32_t kind, uint64_t id)
{
	RIP_PL_REPORT(rip_pl_res_ref(id, bt, kind));
}

RIP_PL_EXPORT __attribute__((noinline)) void rip_mod_unref(uint32_t kind, uint64_t id)
{
	RIP_PL_REPORT(rip_pl_res_unref(id, bt, kind));
}

RIP_PL_EXPORT __attribute__((noinline)) void rip_mod_transfer(uint32_t kind, uint64_t id,
							      uint64_t size)
{
	RIP_PL_REPORT(rip_pl_res_transfer(id, size, bt, kind));
}

/* ---- the built-in kinds: declared and registered as a module's are ---- */

RIP_KIND(rip_pl_kind_mem, "mem", "heap blocks and anonymous mappings (rip run --mem)",
	 RIP_EVTYPE_BUILTIN);
RIP_KIND(rip_pl_kind_fd, "fd", "file descriptors (rip run --fd)", RIP_EVTYPE_BUILTIN);
RIP_KIND(rip_pl_kind_shm, "shm", "shared memory segments (rip run --shm)", RIP_EVTYPE_BUILTIN);
RIP_KIND(rip_pl_kind_shm_map, "shm-map", "attachments of shared memory (rip run --shm)",
	 RIP_EVTYPE_BUILTIN);

/*
 * Their records, in our own rip_modinfo section, go through rip_mod_register
 * like any module's (the ids are not used: the built-in hooks write the
 * events of their own resources, mem:*, fd:*, shm:*).
 */
__attribute__((constructor)) static void rip_pl_kinds_builtin(void)
{
	(void)rip_pl_kind_mem;
	(void)rip_pl_kind_fd;
	(void)rip_pl_kind_shm;
	(void)rip_pl_kind_shm_map;
	rip_mod_register(__start_rip_modinfo, __stop_rip_modinfo, NULL, NULL, __rip_mod_dynamic);
}
