/* SPDX-License-Identifier: Apache-2.0 */
/*
 * internal/elfhash.h - a symbol of a loaded object found by name through
 * the object's own hash table, GNU's (DT_GNU_HASH) or else SysV's
 * (DT_HASH), as the loader finds it: for librip-preload.so's resolver
 * (preload/resolve.c) and librip-track.so's (preload/track.c), which may
 * not call the loader's lookups (a hook that may run under the loader's
 * lock; the audit namespace).  Which candidate is the one is the caller's
 * to say: ok(obj, i, name, ver) on each symbol i whose hash matches.  Not
 * installed.
 */
#ifndef RIP_INTERNAL_ELFHASH_H
#define RIP_INTERNAL_ELFHASH_H

#include <link.h>
#include <stdbool.h>
#include <stdint.h>

typedef bool rip_elf_sym_ok_fn(const void *obj, uint32_t i, const char *name, unsigned ver);

/*
 * The index of name's symbol in the dynamic symbol table that gnu (the GNU
 * hash table, if not NULL) or else hash (SysV's) indexes: the first that
 * ok accepts, or 0 (STN_UNDEF) when none does.  Inline, so that ok is a
 * direct call.
 */
static inline uint32_t rip_elf_hash_find(const uint32_t *gnu, const uint32_t *hash,
					 const char *name, rip_elf_sym_ok_fn *ok, const void *obj,
					 unsigned ver)
{
	const unsigned char *p;

	if (gnu) {
		const uint32_t nbuckets = gnu[0], symoff = gnu[1], nbloom = gnu[2], shift = gnu[3];
		const ElfW(Addr) *bloom = (const ElfW(Addr) *)(gnu + 4);
		const uint32_t *buckets = (const uint32_t *)(bloom + nbloom), *chain;
		const unsigned bits = sizeof(ElfW(Addr)) * 8;
		uint32_t h = 5381, i;
		ElfW(Addr) mask;

		if (!nbuckets || !nbloom)
			return 0;
		for (p = (const unsigned char *)name; *p; p++)
			h = h * 33 + *p;
		mask = ((ElfW(Addr))1 << (h % bits)) | ((ElfW(Addr))1 << ((h >> shift) % bits));
		if ((bloom[(h / bits) % nbloom] & mask) != mask)
			return 0;
		i = buckets[h % nbuckets];
		if (i < symoff)
			return 0;
		chain = buckets + nbuckets;
		for (;; i++) {
			uint32_t h2 = chain[i - symoff];

			if ((h | 1) == (h2 | 1) && ok(obj, i, name, ver))
				return i;
			if (h2 & 1)
				return 0;
		}
	}
	if (hash) {
		const uint32_t nbuckets = hash[0], *buckets = hash + 2;
		const uint32_t *chain = buckets + nbuckets;
		uint32_t h = 0, g;

		if (!nbuckets)
			return 0;
		for (p = (const unsigned char *)name; *p; p++) {
			h = (h << 4) + *p;
			g = h & 0xf0000000u;
			if (g)
				h ^= g >> 24;
			h &= ~g;
		}
		for (uint32_t i = buckets[h % nbuckets]; i; i = chain[i])
			if (ok(obj, i, name, ver))
				return i;
	}
	return 0;
}

#endif /* RIP_INTERNAL_ELFHASH_H */
