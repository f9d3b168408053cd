/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/roles.h - the event types of rip/resource.h as the passes read
 * them: one role per type, one table of the fields of each, in the order
 * resource.h gives them, and the binder that finds them in a trace.
 *
 * Types are found by name in a trace's type table (ids are assigned at
 * registration), and their fields by name in the type: a trace may add
 * fields, but may not lack these or give them another shape.
 *
 *	struct role_map r;
 *	role_bind(&r, evs_types(s), err, len);		once, before the events
 *	switch (role_of(&r, e)) {
 *	case ROLE_MEM_ALLOC:
 *		size = role_val(&r, e, ROLE_ALLOC_SIZE);
 *
 * or, for the resource events, role_decode: the fields by name in a struct.
 */
#ifndef RIP_ANALYSIS_ROLES_H
#define RIP_ANALYSIS_ROLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rip/resource.h>
#include <internal/hot.h>

#include "read/evsource.h"

/* The types of rip/resource.h; ROLE_NONE: any other type. */
enum role {
	ROLE_NONE,
	ROLE_BT,	     /* rip:bt */
	ROLE_MEM_ALLOC,	     /* mem:alloc */
	ROLE_MEM_FREE,	     /* mem:free */
	ROLE_MEM_REALLOC,    /* mem:realloc */
	ROLE_MEM_UNMAP,	     /* mem:unmap */
	ROLE_FD_OPEN,	     /* fd:open */
	ROLE_FD_CLOSE,	     /* fd:close */
	ROLE_FD_CLOSE_RANGE, /* fd:close_range */
	ROLE_SHM_CREATE,     /* shm:create */
	ROLE_SHM_ATTACH,     /* shm:attach */
	ROLE_SHM_DETACH,     /* shm:detach */
	ROLE_SHM_REMOVE,     /* shm:remove */
	ROLE_SHM_RESIZE,     /* shm:resize */
	ROLE_RES_ACQUIRE,    /* res:acquire (tracing modules: rip/module.h) */
	ROLE_RES_RELEASE,    /* res:release */
	ROLE_RES_REF,	     /* res:ref */
	ROLE_RES_UNREF,	     /* res:unref */
	ROLE_RES_TRANSFER,   /* res:transfer */
	ROLE_MEM_MAPPING,    /* mem:mapping */
	ROLE_MEM_PAGEMAP,    /* mem:pagemap */
	ROLE_MEM_PAGEMAP_END, /* mem:pagemap_end */
	ROLE_N,
};

/* Is role one of the resource events (made or released things), rip:bt and pagemaps not? */
static inline bool role_is_resource(int role)
{
	return role >= ROLE_MEM_ALLOC && role <= ROLE_RES_TRANSFER;
}

/* Is role one of the res:* events of the tracing modules? */
static inline bool role_is_module(int role)
{
	return role >= ROLE_RES_ACQUIRE && role <= ROLE_RES_TRANSFER;
}

/*
 * The fields of each role, by their index in role_specs (what role_val
 * takes): the order of rip/resource.h.
 */
enum { ROLE_BT_ID, ROLE_BT_FRAMES };
enum { ROLE_ALLOC_ADDR, ROLE_ALLOC_SIZE, ROLE_ALLOC_BT, ROLE_ALLOC_KIND };
enum { ROLE_FREE_ADDR, ROLE_FREE_BT, ROLE_FREE_KIND };
enum { ROLE_REALLOC_OLD, ROLE_REALLOC_ADDR, ROLE_REALLOC_SIZE, ROLE_REALLOC_BT };
enum { ROLE_UNMAP_ADDR, ROLE_UNMAP_SIZE, ROLE_UNMAP_BT, ROLE_UNMAP_KIND };
enum { ROLE_OPEN_FD, ROLE_OPEN_BT, ROLE_OPEN_KIND, ROLE_OPEN_FLAGS, ROLE_OPEN_PATH };
enum { ROLE_CLOSE_FD, ROLE_CLOSE_BT, ROLE_CLOSE_KIND };
enum { ROLE_CRANGE_FIRST, ROLE_CRANGE_LAST, ROLE_CRANGE_BT, ROLE_CRANGE_KIND };
enum { ROLE_CREATE_ID, ROLE_CREATE_SIZE, ROLE_CREATE_BT, ROLE_CREATE_KIND, ROLE_CREATE_NAME };
enum { ROLE_ATTACH_ADDR, ROLE_ATTACH_SIZE, ROLE_ATTACH_ID, ROLE_ATTACH_BT, ROLE_ATTACH_KIND };
enum { ROLE_DETACH_ADDR, ROLE_DETACH_SIZE, ROLE_DETACH_BT, ROLE_DETACH_KIND };
enum { ROLE_REMOVE_ID, ROLE_REMOVE_BT, ROLE_REMOVE_KIND, ROLE_REMOVE_NAME };
enum { ROLE_RESIZE_ID, ROLE_RESIZE_SIZE, ROLE_RESIZE_BT, ROLE_RESIZE_KIND, ROLE_RESIZE_NAME };
enum { ROLE_RACQ_ID, ROLE_RACQ_SIZE, ROLE_RACQ_BT, ROLE_RACQ_KIND }; /* and res:transfer */
enum { ROLE_RREL_ID, ROLE_RREL_BT, ROLE_RREL_KIND };		  /* and res:ref, res:unref */
enum {
	ROLE_MAPPING_START,
	ROLE_MAPPING_END,
	ROLE_MAPPING_SEQ,
	ROLE_MAPPING_PROT,
	ROLE_MAPPING_FLAGS,
	ROLE_MAPPING_PAGE_SIZE,
	ROLE_MAPPING_PATH,
};
enum { ROLE_PAGEMAP_START, ROLE_PAGEMAP_SEQ, ROLE_PAGEMAP_NPAGES, ROLE_PAGEMAP_PAGES };
enum { ROLE_END_SEQ, ROLE_END_MAPPINGS, ROLE_END_REASON, ROLE_END_ERROR };

#define ROLE_MAXF RIP_EVENT_MAX_FIELDS

/* A type and its fields: "$name" a string, "@name" a u64 array, anything else an integer. */
struct role_spec {
	const char *name;
	const char *fields[ROLE_MAXF];
};

/* By role: the fields of rip/resource.h, in its order ([ROLE_NONE] is empty). */
extern const struct role_spec role_specs[ROLE_N];

/* The types of one trace by role. */
struct role_map {
	uint8_t role[EV_MAX_TYPES];		/* by type id: enum role */
	uint8_t fi[EV_MAX_TYPES][ROLE_MAXF];	/* by type id: field index of each spec field */
	bool std[EV_MAX_TYPES]; /* by type id: a heap event laid out as role_std_types says */
};

/*
 * The heap events as rip/resource.h lays them out (the preload library
 * writes them so): by role, the type of each field, in order.  A type of
 * one of those roles whose fields are these, first and in this order, is
 * std (role_map): role_decode reads its fields at offsets known here, not
 * through fi and the plan.  Their values are the same: each is unsigned and
 * of its own size.
 */
extern const uint8_t role_std_types[ROLE_N][ROLE_MAXF];

/*
 * Bind the types of types to role_specs.  0, or -EBADMSG with a message in
 * err when a type of one of those names lacks a field or has it in another
 * shape.
 */
int role_bind(struct role_map *r, const struct ev_types *types, char *err, size_t errlen);

/* Does the trace have resource event types at all (role_is_resource)? */
bool role_has_resources(const struct role_map *r);

static inline int role_of(const struct role_map *r, const struct evs_event *e)
{
	return r->role[e->type->id];
}

/*
 * Field k (ROLE_ALLOC_SIZE...) of e, whose role has it: an integer field
 * (role_bind checked), so a fixed-size one (evs_fixed).
 */
static inline uint64_t role_val(const struct role_map *r, const struct evs_event *e, unsigned k)
{
	return evs_fixed(e, r->fi[e->type->id][k]);
}

/*
 * A resource event by field name, as the passes act on it: what it makes
 * (key, size, bt, kind, name) or releases (key; old for mem:realloc).  key
 * is the block's or mapping's address, the descriptor (sign-extended: < 0
 * as int64_t is no descriptor), or the segment's key (role_seg_key).  Of a
 * release (mem:free, fd:close, shm:detach, shm:remove) only the key is
 * decoded, but for mem:unmap, a range: key, size, kind and bt, and
 * fd:close_range: key the first descriptor, size the last; shm:resize is
 * the segment's key and its new size.  Of every res:* event: key (the id
 * and kind together), old the id itself, kind (the kind's type id) and bt,
 * and size for res:acquire and res:transfer.  Fields a role does not have are 0
 * (NULL).
 */
struct role_res {
	int role;
	uint32_t bt;
	uint64_t key;
	uint64_t old; /* mem:realloc: the block it releases, 0: none; fd:open: its flags */
	uint64_t size;
	uint64_t kind;	    /* enum rip_*_kind; mem:realloc's is RIP_MEM_REALLOC */
	const char *name;   /* fd:open's path, shm:create's name */
};

/*
 * The kind that a res:* event's kind field names: the trace's type of that
 * id, when it is a kind ("kind:NAME", RIP_EVTYPE_KIND); NULL otherwise.
 * Its name without "kind:" is role_kind_name's.
 */
const struct ev_type *role_kind(const struct ev_types *types, uint64_t kind);
/* The name of a module's kind ("gobject"), NULL when kind is none of the trace's kinds. */
const char *role_kind_name(const struct ev_types *types, uint64_t kind);

/*
 * The key of a module's resource in one table for all kinds: id and kind
 * together (ids are pointers or small integers: exact for those).
 */
static inline uint64_t role_res_key(uint64_t id, uint64_t kind)
{
	return ((id << 10) | (id >> 54)) ^ (kind & (EV_MAX_TYPES - 1));
}

/*
 * The key of a shared memory segment: shm_open's by name (a hash, odd),
 * shmget's by id (even).
 */
uint64_t role_seg_key(uint64_t kind, int64_t id, const char *name);

/* Bytes at p, little-endian as the host (a trace's byte order is checked at open). */
static inline uint64_t role_ld64(const uint8_t *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, 8);
	return v;
}

static inline uint32_t role_ld32(const uint8_t *p)
{
	uint32_t v;

	__builtin_memcpy(&v, p, 4);
	return v;
}

/* Resource event e (role_is_resource(role)) into d. */
static inline RIP_HOT void role_decode(const struct role_map *r, const struct evs_event *e, int role,
				struct role_res *d)
{
	const uint32_t id = e->type->id;
	const uint8_t *fi = r->fi[id], *raw = e->raw;

#define V(k) evs_fixed(e, fi[k]) /* integer fields: role_bind checked */
#define RES(KEY, OLD, SIZE, KIND, BT, NAME)                                                        \
	(struct role_res){ .role = role, .key = (KEY), .old = (OLD), .size = (SIZE),               \
			   .kind = (KIND), .bt = (uint32_t)(BT), .name = (NAME) }
	switch (role) {
	case ROLE_MEM_ALLOC:
		/* std: addr, size (8 bytes each), bt, kind (4 each) */
		if (__builtin_expect(r->std[id], 1))
			*d = RES(role_ld64(raw), 0, role_ld64(raw + 8), role_ld32(raw + 20),
				 role_ld32(raw + 16), NULL);
		else
			*d = RES(V(ROLE_ALLOC_ADDR), 0, V(ROLE_ALLOC_SIZE), V(ROLE_ALLOC_KIND),
				 V(ROLE_ALLOC_BT), NULL);
		break;
	case ROLE_MEM_FREE:
		*d = RES(__builtin_expect(r->std[id], 1) ? role_ld64(raw) : V(ROLE_FREE_ADDR), 0, 0,
			 0, 0, NULL);
		break;
	case ROLE_MEM_REALLOC:
		/* std: old, addr, size (8 bytes each), bt (4) */
		if (__builtin_expect(r->std[id], 1))
			*d = RES(role_ld64(raw + 8), role_ld64(raw), role_ld64(raw + 16),
				 RIP_MEM_REALLOC, role_ld32(raw + 24), NULL);
		else
			*d = RES(V(ROLE_REALLOC_ADDR), V(ROLE_REALLOC_OLD), V(ROLE_REALLOC_SIZE),
				 RIP_MEM_REALLOC, V(ROLE_REALLOC_BT), NULL);
		break;
	case ROLE_MEM_UNMAP:
		*d = RES(V(ROLE_UNMAP_ADDR), 0, V(ROLE_UNMAP_SIZE), V(ROLE_UNMAP_KIND),
			 V(ROLE_UNMAP_BT), NULL);
		break;
	case ROLE_FD_OPEN:
		/* old: the open's flags (open(2)'s, whatever the call: preload/fd.c) */
		*d = RES(V(ROLE_OPEN_FD), (uint32_t)V(ROLE_OPEN_FLAGS), 0, V(ROLE_OPEN_KIND),
			 V(ROLE_OPEN_BT), e->str);
		break;
	case ROLE_FD_CLOSE:
		*d = RES(V(ROLE_CLOSE_FD), 0, 0, 0, 0, NULL);
		break;
	case ROLE_FD_CLOSE_RANGE:
		/* key the first descriptor, size the last */
		*d = RES(V(ROLE_CRANGE_FIRST), 0, V(ROLE_CRANGE_LAST), V(ROLE_CRANGE_KIND),
			 V(ROLE_CRANGE_BT), NULL);
		break;
	case ROLE_SHM_CREATE:
		*d = RES(role_seg_key(V(ROLE_CREATE_KIND), (int64_t)V(ROLE_CREATE_ID), e->str), 0,
			 V(ROLE_CREATE_SIZE), V(ROLE_CREATE_KIND), V(ROLE_CREATE_BT), e->str);
		break;
	case ROLE_SHM_ATTACH:
		*d = RES(V(ROLE_ATTACH_ADDR), 0, V(ROLE_ATTACH_SIZE), V(ROLE_ATTACH_KIND),
			 V(ROLE_ATTACH_BT), NULL);
		break;
	case ROLE_SHM_DETACH:
		*d = RES(V(ROLE_DETACH_ADDR), 0, V(ROLE_DETACH_SIZE), V(ROLE_DETACH_KIND),
			 V(ROLE_DETACH_BT), NULL);
		break;
	case ROLE_SHM_REMOVE:
		*d = RES(role_seg_key(V(ROLE_REMOVE_KIND), (int64_t)V(ROLE_REMOVE_ID), e->str), 0,
			 0, 0, 0, NULL);
		break;
	case ROLE_SHM_RESIZE:
		*d = RES(role_seg_key(V(ROLE_RESIZE_KIND), (int64_t)V(ROLE_RESIZE_ID), e->str), 0,
			 V(ROLE_RESIZE_SIZE), V(ROLE_RESIZE_KIND), V(ROLE_RESIZE_BT), e->str);
		break;
	case ROLE_RES_ACQUIRE:
	case ROLE_RES_TRANSFER:
		/* key: the module's id and kind together (role_res_key); old: the id itself */
		*d = RES(role_res_key(V(ROLE_RACQ_ID), V(ROLE_RACQ_KIND)), V(ROLE_RACQ_ID),
			 V(ROLE_RACQ_SIZE), V(ROLE_RACQ_KIND), V(ROLE_RACQ_BT), NULL);
		break;
	case ROLE_RES_RELEASE:
	case ROLE_RES_REF:
	case ROLE_RES_UNREF:
		*d = RES(role_res_key(V(ROLE_RREL_ID), V(ROLE_RREL_KIND)), V(ROLE_RREL_ID), 0,
			 V(ROLE_RREL_KIND), V(ROLE_RREL_BT), NULL);
		break;
	}
#undef RES
#undef V
}

#endif /* RIP_ANALYSIS_ROLES_H */
