/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/packtypes.h - the event types the packed-block tests write with
 * (tests/unit/pack.c) and decode with (tests/fuzz/fuzz-pack.c): one of each
 * field type, strings and arrays, and an id past the compact header's.
 */
#ifndef RIP_TESTS_PACKTYPES_H
#define RIP_TESTS_PACKTYPES_H

#include <stdio.h>
#include <string.h>

#include "read/evread.h"

static inline int pt_type(struct ev_types *types, uint32_t id, const char *name, uint32_t n,
			  const char *const *fn, const uint32_t *ft)
{
	struct rip_evtype e;

	memset(&e, 0, sizeof(e));
	e.id = id;
	e.nfields = n;
	snprintf(e.name, sizeof(e.name), "%s", name);
	for (uint32_t i = 0; i < n; i++) {
		snprintf(e.fields[i].name, sizeof(e.fields[i].name), "%s", fn[i]);
		e.fields[i].type = ft[i];
	}
	types->count++;
	return ev_type_load(&e, &types->t[id]);
}

/* t:alloc 0, t:free 1, t:open 2, t:bt 3, t:none 4, t:pair 5, t:ext 40 into types (zeroed). */
static inline int pt_types(struct ev_types *types)
{
	static const char *const fa[] = { "a", "b", "addr", "size", "bt" };
	static const uint32_t ta[] = { RIP_FT_U8, RIP_FT_S16, RIP_FT_HEX64, RIP_FT_U64, RIP_FT_U32 };
	static const char *const ff[] = { "addr", "bt" };
	static const uint32_t tf[] = { RIP_FT_HEX64, RIP_FT_U32 };
	static const char *const fs[] = { "fd", "path" };
	static const uint32_t ts[] = { RIP_FT_S32, RIP_FT_STRING };
	static const char *const fr[] = { "id", "frames" };
	static const uint32_t tr[] = { RIP_FT_U32, RIP_FT_HEX64_ARRAY };
	static const char *const fp[] = { "a", "b", "d" };
	static const uint32_t tp[] = { RIP_FT_HEX64, RIP_FT_HEX64, RIP_FT_S32 };
	static const char *const fx[] = { "v", "w" };
	static const uint32_t tx[] = { RIP_FT_S64, RIP_FT_S8 };

	return pt_type(types, 0, "t:alloc", 5, fa, ta) ?: pt_type(types, 1, "t:free", 2, ff, tf) ?:
	       pt_type(types, 2, "t:open", 2, fs, ts) ?: pt_type(types, 3, "t:bt", 2, fr, tr) ?:
	       pt_type(types, 4, "t:none", 0, NULL, NULL) ?: pt_type(types, 5, "t:pair", 3, fp, tp) ?:
	       pt_type(types, 40, "t:ext", 2, fx, tx); /* past the compact header's ids */
}

#endif /* RIP_TESTS_PACKTYPES_H */
