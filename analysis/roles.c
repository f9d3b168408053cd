/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/roles.c - the table of the event types of rip/resource.h, and
 * the binder that finds them in a trace (see roles.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "analysis/roles.h"

/*
 * The fields of rip/resource.h, in its order, each at the index of its
 * ROLE_<TYPE>_<FIELD> name.
 */
#define F(K, NAME) [ROLE_##K] = NAME
const struct role_spec role_specs[ROLE_N] = {
	[ROLE_BT] = { "rip:bt", { F(BT_ID, "id"), F(BT_FRAMES, "@frames") } },
	[ROLE_MEM_ALLOC] = { "mem:alloc",
			     { F(ALLOC_ADDR, "addr"), F(ALLOC_SIZE, "size"), F(ALLOC_BT, "bt"),
			       F(ALLOC_KIND, "kind") } },
	[ROLE_MEM_FREE] = { "mem:free",
			    { F(FREE_ADDR, "addr"), F(FREE_BT, "bt"), F(FREE_KIND, "kind") } },
	[ROLE_MEM_REALLOC] = { "mem:realloc",
			       { F(REALLOC_OLD, "old"), F(REALLOC_ADDR, "addr"),
				 F(REALLOC_SIZE, "size"), F(REALLOC_BT, "bt") } },
	[ROLE_MEM_UNMAP] = { "mem:unmap",
			     { F(UNMAP_ADDR, "addr"), F(UNMAP_SIZE, "size"), F(UNMAP_BT, "bt"),
			       F(UNMAP_KIND, "kind") } },
	[ROLE_FD_OPEN] = { "fd:open",
			   { F(OPEN_FD, "fd"), F(OPEN_BT, "bt"), F(OPEN_KIND, "kind"),
			     F(OPEN_FLAGS, "flags"), F(OPEN_PATH, "$path") } },
	[ROLE_FD_CLOSE] = { "fd:close",
			    { F(CLOSE_FD, "fd"), F(CLOSE_BT, "bt"), F(CLOSE_KIND, "kind") } },
	[ROLE_FD_CLOSE_RANGE] = { "fd:close_range",
				  { F(CRANGE_FIRST, "first"), F(CRANGE_LAST, "last"),
				    F(CRANGE_BT, "bt"), F(CRANGE_KIND, "kind") } },
	[ROLE_SHM_CREATE] = { "shm:create",
			      { F(CREATE_ID, "id"), F(CREATE_SIZE, "size"), F(CREATE_BT, "bt"),
				F(CREATE_KIND, "kind"), F(CREATE_NAME, "$name") } },
	[ROLE_SHM_ATTACH] = { "shm:attach",
			      { F(ATTACH_ADDR, "addr"), F(ATTACH_SIZE, "size"), F(ATTACH_ID, "id"),
				F(ATTACH_BT, "bt"), F(ATTACH_KIND, "kind") } },
	[ROLE_SHM_DETACH] = { "shm:detach",
			      { F(DETACH_ADDR, "addr"), F(DETACH_SIZE, "size"),
				F(DETACH_BT, "bt"), F(DETACH_KIND, "kind") } },
	[ROLE_SHM_REMOVE] = { "shm:remove",
			      { F(REMOVE_ID, "id"), F(REMOVE_BT, "bt"), F(REMOVE_KIND, "kind"),
				F(REMOVE_NAME, "$name") } },
	[ROLE_SHM_RESIZE] = { "shm:resize",
			      { F(RESIZE_ID, "id"), F(RESIZE_SIZE, "size"), F(RESIZE_BT, "bt"),
				F(RESIZE_KIND, "kind"), F(RESIZE_NAME, "$name") } },
	[ROLE_RES_ACQUIRE] = { "res:acquire",
			       { F(RACQ_ID, "id"), F(RACQ_SIZE, "size"), F(RACQ_BT, "bt"),
				 F(RACQ_KIND, "kind") } },
	[ROLE_RES_RELEASE] = { "res:release",
			       { F(RREL_ID, "id"), F(RREL_BT, "bt"), F(RREL_KIND, "kind") } },
	[ROLE_RES_REF] = { "res:ref",
			   { F(RREL_ID, "id"), F(RREL_BT, "bt"), F(RREL_KIND, "kind") } },
	[ROLE_RES_UNREF] = { "res:unref",
			     { F(RREL_ID, "id"), F(RREL_BT, "bt"), F(RREL_KIND, "kind") } },
	[ROLE_RES_TRANSFER] = { "res:transfer",
				{ F(RACQ_ID, "id"), F(RACQ_SIZE, "size"), F(RACQ_BT, "bt"),
				  F(RACQ_KIND, "kind") } },
	[ROLE_MEM_MAPPING] = { "mem:mapping",
			       { F(MAPPING_START, "start"), F(MAPPING_END, "end"),
				 F(MAPPING_SEQ, "seq"), F(MAPPING_PROT, "prot"),
				 F(MAPPING_FLAGS, "flags"), F(MAPPING_PAGE_SIZE, "page_size"),
				 F(MAPPING_PATH, "$path") } },
	[ROLE_MEM_PAGEMAP] = { "mem:pagemap",
			       { F(PAGEMAP_START, "start"), F(PAGEMAP_SEQ, "seq"),
				 F(PAGEMAP_NPAGES, "npages"), F(PAGEMAP_PAGES, "@pages") } },
	[ROLE_MEM_PAGEMAP_END] = { "mem:pagemap_end",
				   { F(END_SEQ, "seq"), F(END_MAPPINGS, "mappings"),
				     F(END_REASON, "reason"), F(END_ERROR, "error") } },
};
#undef F

const uint8_t role_std_types[ROLE_N][ROLE_MAXF] = {
	[ROLE_MEM_ALLOC] = { RIP_FT_HEX64, RIP_FT_U64, RIP_FT_U32, RIP_FT_U32 },
	[ROLE_MEM_FREE] = { RIP_FT_HEX64, RIP_FT_U32, RIP_FT_U32 },
	[ROLE_MEM_REALLOC] = { RIP_FT_HEX64, RIP_FT_HEX64, RIP_FT_U64, RIP_FT_U32 },
};

/* Is type t (of role role, bound in fi) laid out as role_std_types says? */
static bool role_std(const struct ev_type *t, int role, const uint8_t *fi)
{
	const uint8_t *want = role_std_types[role];

	if (!want[0])
		return false;
	for (unsigned k = 0; k < ROLE_MAXF && want[k]; k++)
		if (fi[k] != k || k >= t->nfields || t->fields[k].type != want[k])
			return false;
	return true;
}

int role_bind(struct role_map *r, const struct ev_types *types, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	for (uint32_t id = 0; id < EV_MAX_TYPES; id++) {
		const struct ev_type *t = &types->t[id];
		int role = 0;

		if (!t->valid)
			continue;
		for (int k = 1; k < ROLE_N; k++)
			if (role_specs[k].name && !strcmp(t->name, role_specs[k].name))
				role = k;
		if (!role)
			continue;
		for (unsigned k = 0; k < ROLE_MAXF && role_specs[role].fields[k]; k++) {
			const char *want = role_specs[role].fields[k];
			uint32_t wty = *want == '$' ? RIP_FT_STRING
				       : *want == '@' ? RIP_FT_HEX64_ARRAY
						      : 0;
			uint32_t i;

			want += wty != 0;
			for (i = 0; i < t->nfields; i++)
				if (!strcmp(t->fields[i].name, want))
					break;
			if (i == t->nfields ||
			    (wty ? t->fields[i].type != wty : RIP_FT_IS_TAIL(t->fields[i].type))) {
				snprintf(err, errlen,
					 "event type %s of this trace has no %s field %s: it is not "
					 "the one of rip/resource.h (written by another version of "
					 "the preload library?)",
					 t->name,
					 wty == RIP_FT_STRING	     ? "string"
					 : wty == RIP_FT_HEX64_ARRAY ? "array"
								     : "integer",
					 want);
				return -EBADMSG;
			}
			r->fi[id][k] = (uint8_t)i;
		}
		r->role[id] = (uint8_t)role;
		r->std[id] = role_std(t, role, r->fi[id]);
	}
	return 0;
}

bool role_has_resources(const struct role_map *r)
{
	for (uint32_t id = 0; id < EV_MAX_TYPES; id++)
		if (role_is_resource(r->role[id]))
			return true;
	return false;
}

uint64_t role_seg_key(uint64_t kind, int64_t id, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	if ((kind != RIP_SHM_OPEN && kind != RIP_SHM_OPEN_EXISTING && kind != RIP_SHM_UNLINK &&
	     kind != RIP_SHM_FTRUNCATE) ||
	    !name || !*name)
		return (uint64_t)id << 1;
	for (const unsigned char *s = (const unsigned char *)name; *s; s++)
		h = (h ^ *s) * 0x100000001b3ull;
	return (h << 1) | 1;
}

const struct ev_type *role_kind(const struct ev_types *types, uint64_t kind)
{
	const struct ev_type *t;

	if (!types || kind >= EV_MAX_TYPES)
		return NULL;
	t = &types->t[kind];
	return t->valid && (t->flags & RIP_EVTYPE_KIND) ? t : NULL;
}

const char *role_kind_name(const struct ev_types *types, uint64_t kind)
{
	const struct ev_type *t = role_kind(types, kind);

	return t ? t->name + 5 : NULL;
}
