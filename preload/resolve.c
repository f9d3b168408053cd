// SPDX-License-Identifier: Apache-2.0
/*
 * preload/resolve.c - the next definition of a symbol after this library,
 * found by reading the loaded objects' dynamic symbol tables ourselves.
 *
 * This is what dlsym(RTLD_NEXT, name) answers, without the loader's lock:
 * the hooks that run before our constructor (another library's constructor
 * allocates; see doc/design.md, "Before our constructor") must find the
 * real functions from inside any call, and dlsym takes the loader's lock,
 * which the calling thread or another may hold.  The objects are walked in
 * the order of _r_debug's list (the program, the preloaded objects, their
 * dependencies breadth first: the global search order at start), from the
 * one after ours; in each, the GNU hash table (else the SysV one) finds the
 * name, and a definition counts when it is global or weak, defined, of
 * default visibility and of the default version.  An IFUNC is resolved by
 * calling its resolver, as the loader does.  Only reads: no lock, no
 * allocation.  NULL when nothing is found: the caller asks dlsym then.
 *
 * "name@VERSION" asks for that version of name, as dlvsym does (the two
 * pthread_cond_wait of glibc): a definition counts when its version index
 * names VERSION in the object's version definitions, hidden or not.
 */
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>

#include <internal/elfhash.h>

#include "common.h"

/* Our own dynamic section: tells our link map from the others. */
extern ElfW(Dyn) _DYNAMIC[] __attribute__((visibility("hidden")));

struct rip_pl_obj {
	uintptr_t base;
	const ElfW(Sym) *sym;
	const char *str;
	const uint32_t *gnu, *hash;
	const ElfW(Half) *versym;
	const ElfW(Verdef) *verdef;
	size_t verdefnum;
};

/*
 * An address in the dynamic section: glibc rewrites these entries with the
 * load address added on most targets, other loaders leave them relative.
 */
static uintptr_t rip_pl_dyn_addr(const struct rip_pl_obj *o, uintptr_t v)
{
	return v < o->base ? v + o->base : v;
}

static bool rip_pl_obj_init(const struct link_map *l, struct rip_pl_obj *o)
{
	memset(o, 0, sizeof(*o));
	o->base = l->l_addr;
	if (!l->l_ld)
		return false;
	for (const ElfW(Dyn) *d = l->l_ld; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB:
			o->sym = (const ElfW(Sym) *)rip_pl_dyn_addr(o, d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			o->str = (const char *)rip_pl_dyn_addr(o, d->d_un.d_ptr);
			break;
		case DT_GNU_HASH:
			o->gnu = (const uint32_t *)rip_pl_dyn_addr(o, d->d_un.d_ptr);
			break;
		case DT_HASH:
			o->hash = (const uint32_t *)rip_pl_dyn_addr(o, d->d_un.d_ptr);
			break;
		case DT_VERSYM:
			o->versym = (const ElfW(Half) *)rip_pl_dyn_addr(o, d->d_un.d_ptr);
			break;
		case DT_VERDEF:
			o->verdef = (const ElfW(Verdef) *)rip_pl_dyn_addr(o, d->d_un.d_ptr);
			break;
		case DT_VERDEFNUM:
			o->verdefnum = d->d_un.d_val;
			break;
		}
	}
	return o->sym && o->str && (o->gnu || o->hash);
}

/* The index of version ver in o's version definitions; 0 if it has none of that name. */
static unsigned rip_pl_ver_index(const struct rip_pl_obj *o, const char *ver)
{
	const ElfW(Verdef) *d = o->verdef;

	for (size_t k = 0; d && k < o->verdefnum && k < 4096; k++) {
		const ElfW(Verdaux) *a = (const ElfW(Verdaux) *)((const char *)d + d->vd_aux);

		if (d->vd_cnt && !(d->vd_flags & VER_FLG_BASE) && strcmp(o->str + a->vda_name, ver) == 0)
			return d->vd_ndx & 0x7fff;
		if (!d->vd_next)
			break;
		d = (const ElfW(Verdef) *)((const char *)d + d->vd_next);
	}
	return 0;
}

/*
 * Is symbol i a definition of name that a lookup without a version would
 * bind to (ver 0), or of version index ver?
 */
static bool rip_pl_sym_ok(const struct rip_pl_obj *o, uint32_t i, const char *name, unsigned ver)
{
	const ElfW(Sym) *s = &o->sym[i];
	unsigned type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);

	if (s->st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK) ||
	    ELF64_ST_VISIBILITY(s->st_other) != STV_DEFAULT ||
	    (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT && type != STT_NOTYPE))
		return false;
	if (ver) {
		if (!o->versym || (o->versym[i] & 0x7fff) != ver)
			return false;
	} else if (o->versym && ((o->versym[i] & 0x8000) || (o->versym[i] & 0x7fff) == 0)) {
		/* 0: local; the hidden bit: an older version kept for old binaries. */
		return false;
	}
	return strcmp(o->str + s->st_name, name) == 0;
}

/* rip_pl_sym_ok for rip_elf_hash_find. */
static bool rip_pl_sym_ok_cb(const void *o, uint32_t i, const char *name, unsigned ver)
{
	return rip_pl_sym_ok(o, i, name, ver);
}

static const ElfW(Sym) *rip_pl_obj_find(const struct rip_pl_obj *o, const char *name,
					unsigned ver)
{
	uint32_t i = rip_elf_hash_find(o->gnu, o->hash, name, rip_pl_sym_ok_cb, o, ver);

	return i ? &o->sym[i] : NULL;
}

void *rip_pl_lookup_next(const char *name)
{
	return rip_pl_lookup_after(_DYNAMIC, name);
}

void *rip_pl_lookup_after(const void *dyn, const char *name)
{
	const char *at = strchr(name, '@');
	char base[64];
	bool after = false;

	if (at) {
		/* name@VERSION: the bare name, and the version asked for */
		if ((size_t)(at - name) >= sizeof(base))
			return NULL;
		memcpy(base, name, (size_t)(at - name));
		base[at - name] = 0;
		name = base;
		at++;
	}

	for (const struct link_map *l = _r_debug.r_map; l; l = l->l_next) {
		struct rip_pl_obj o;
		const ElfW(Sym) *s;
		uintptr_t addr;

		if (!after) {
			after = (const void *)l->l_ld == dyn;
			continue;
		}
		unsigned ver = 0;

		if (!rip_pl_obj_init(l, &o))
			continue;
		if (at && !(ver = rip_pl_ver_index(&o, at)))
			continue;
		if (!(s = rip_pl_obj_find(&o, name, ver)))
			continue;
		addr = o.base + s->st_value;
		if (ELF64_ST_TYPE(s->st_info) == STT_GNU_IFUNC)
			addr = (uintptr_t)((void *(*)(unsigned long))addr)(getauxval(AT_HWCAP));
		return (void *)addr;
	}
	return NULL;
}
