/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: role_decode of the heap events (mem:alloc, mem:free,
 * mem:realloc) reads the fields at fixed offsets only for a type laid out
 * as rip/resource.h says (role_std_types), and gives the same values as
 * the plan's read of each field (evs_fixed): a type with other field
 * types (U64 for bt and kind, signed), another order or fields missing
 * from the front is not std, and is decoded through its plan.
 */
#include <stdio.h>
#include <string.h>

#include "analysis/roles.h"
#include "helpers.h"

static struct ev_types types;
static struct evs_plan plans[EV_MAX_TYPES];

/* Type id named name with fields (type, name) in this order, and its plan as evsource.c makes it. */
static void def(uint32_t id, const char *name, unsigned n, const uint32_t *ft,
		const char *const *fn)
{
	struct ev_type *t = &types.t[id];
	struct evs_plan *pl = &plans[id];

	t->valid = true;
	t->id = id;
	t->nfields = n;
	snprintf(t->name, sizeof(t->name), "%s", name);
	for (unsigned i = 0; i < n; i++) {
		t->fields[i].type = ft[i];
		snprintf(t->fields[i].name, sizeof(t->fields[i].name), "%s", fn[i]);
		pl->size[i] = (uint8_t)rip_field_size(ft[i]);
		pl->sign[i] = ft[i] == RIP_FT_S8 || ft[i] == RIP_FT_S16 || ft[i] == RIP_FT_S32 ?
				      pl->size[i] :
				      0;
		pl->shift[i] = (uint8_t)(64 - 8 * pl->size[i]);
		pl->off[i] = (uint16_t)(i ? pl->off[i - 1] + pl->size[i - 1] : 0);
		pl->nfix++;
		t->fixed += pl->size[i];
	}
	pl->valid = true;
	pl->fixed = t->fixed;
	pl->type = t;
}

/* Decode type id from bytes raw (with room behind) through r. */
static struct role_res dec(const struct role_map *r, uint32_t id, const uint8_t *raw)
{
	struct evs_event e = { .type = &types.t[id], .plan = &plans[id], .raw = raw };
	struct role_res d;

	memset(&d, 0, sizeof(d));
	role_decode(r, &e, r->role[id], &d);
	return d;
}

static void put(uint8_t *b, unsigned off, uint64_t v, unsigned size)
{
	memcpy(b + off, &v, size); /* little-endian hosts only, as the reader */
}

int main(void)
{
	static const char *const alloc_f[] = { "addr", "size", "bt", "kind" };
	static const char *const alloc_swap[] = { "size", "addr", "bt", "kind" };
	static const char *const free_f[] = { "addr", "bt", "kind" };
	static const char *const realloc_f[] = { "old", "addr", "size", "bt" };
	const uint32_t std_alloc[] = { RIP_FT_HEX64, RIP_FT_U64, RIP_FT_U32, RIP_FT_U32 };
	const uint32_t wide_alloc[] = { RIP_FT_HEX64, RIP_FT_U64, RIP_FT_U64, RIP_FT_U64 };
	const uint32_t sign_alloc[] = { RIP_FT_HEX64, RIP_FT_U64, RIP_FT_U32, RIP_FT_S32 };
	const uint32_t std_free[] = { RIP_FT_HEX64, RIP_FT_U32, RIP_FT_U32 };
	const uint32_t std_realloc[] = { RIP_FT_HEX64, RIP_FT_HEX64, RIP_FT_U64, RIP_FT_U32 };
	static struct role_map r;
	uint8_t raw[64] = { 0 };
	struct role_res d;
	char err[256];

	/* ids 10.. are each bound alone: a trace has one type of a name */
	def(10, "mem:alloc", 4, std_alloc, alloc_f);
	def(11, "mem:free", 3, std_free, free_f);
	def(12, "mem:realloc", 4, std_realloc, realloc_f);
	T_EQ(role_bind(&r, &types, err, sizeof(err)), 0);
	T_CHECK(r.std[10] && r.std[11] && r.std[12]);

	/* mem:alloc {addr, size, bt u32, kind u32} */
	put(raw, 0, 0x7f0012345678ull, 8);
	put(raw, 8, 0x123456789ull, 8);
	put(raw, 16, 0xfffffff0u, 4);
	put(raw, 20, 0x80000003u, 4);
	d = dec(&r, 10, raw);
	T_EQ(d.key, 0x7f0012345678ull);
	T_EQ(d.size, 0x123456789ull);
	T_EQ(d.bt, 0xfffffff0u);
	T_EQ(d.kind, 0x80000003ull); /* unsigned: not sign-extended */
	T_EQ(d.old, 0);
	/* mem:free {addr, bt, kind} */
	d = dec(&r, 11, raw);
	T_EQ(d.key, 0x7f0012345678ull);
	/* mem:realloc {old, addr, size, bt} */
	put(raw, 16, 77, 8);
	put(raw, 24, 9, 4);
	d = dec(&r, 12, raw);
	T_EQ(d.old, 0x7f0012345678ull);
	T_EQ(d.key, 0x123456789ull);
	T_EQ(d.size, 77);
	T_EQ(d.bt, 9);
	T_EQ(d.kind, RIP_MEM_REALLOC);

	/* not std: wider fields, a signed kind, another order; decoded through the plan */
	memset(&types, 0, sizeof(types));
	memset(plans, 0, sizeof(plans));
	def(10, "mem:alloc", 4, wide_alloc, alloc_f);
	T_EQ(role_bind(&r, &types, err, sizeof(err)), 0);
	T_CHECK(!r.std[10]);
	memset(raw, 0, sizeof(raw));
	put(raw, 0, 0x1000, 8);
	put(raw, 8, 48, 8);
	put(raw, 16, 5, 8);
	put(raw, 24, 0x100000002ull, 8);
	d = dec(&r, 10, raw);
	T_EQ(d.key, 0x1000);
	T_EQ(d.size, 48);
	T_EQ(d.bt, 5);
	T_EQ(d.kind, 0x100000002ull);

	memset(&types, 0, sizeof(types));
	memset(plans, 0, sizeof(plans));
	def(10, "mem:alloc", 4, sign_alloc, alloc_f);
	T_EQ(role_bind(&r, &types, err, sizeof(err)), 0);
	T_CHECK(!r.std[10]);
	memset(raw, 0, sizeof(raw));
	put(raw, 20, 0xfffffffeu, 4);
	d = dec(&r, 10, raw);
	T_EQ(d.kind, (uint64_t)-2); /* S32: sign-extended, as the plan reads it */

	memset(&types, 0, sizeof(types));
	memset(plans, 0, sizeof(plans));
	def(10, "mem:alloc", 4, std_alloc, alloc_swap); /* size first, then addr */
	T_EQ(role_bind(&r, &types, err, sizeof(err)), 0);
	T_CHECK(!r.std[10]);
	memset(raw, 0, sizeof(raw));
	put(raw, 0, 0x123, 8);	/* size */
	put(raw, 8, 0x2000, 8); /* addr */
	d = dec(&r, 10, raw);
	T_EQ(d.key, 0x2000);
	T_EQ(d.size, 0x123);
	return t_result();
}
