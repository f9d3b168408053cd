/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/sym.c - the symbolizer: runtime addresses from a ring file to
 * function, file:line and inline chains, with elfutils, in the reader only.
 *
 * Every module gets a Dwfl of its own holding one module reported at the
 * recorded load bias, so that overlapping or reused ranges (a dlclose'd
 * library and its successor) never confuse libdwfl; our own sorted table
 * picks the module, first added wins.  A file is opened on the first lookup
 * that lands in it.  An address is translated as ELF vaddr = addr - bias,
 * then into libdwfl's view of the module by its own bias, so non-PIE
 * executables (whose recorded bias libdwfl ignores) map the same way.
 *
 * Names come from DWARF when there is any, else from .symtab/.dynsym.  Three
 * lazily built, sorted indexes keep a lookup logarithmic: function symbols
 * (dwfl_module_addrinfo scans the whole table per call), CUs by range
 * (libdw before 0.191 finds CUs only through .debug_aranges, which clang
 * does not emit) and, per CU, its subprograms (dwarf_getscopes walks the
 * whole CU per call); the inline chain then descends one function's subtree.
 * Results are cached per address; strings point into libdw's own data,
 * which lives until rip_sym_free, except demangled names, kept in an arena.
 * C++ names are demangled by libstdc++'s __cxa_demangle, Rust names (v0
 * and legacy) by read/demangle.c.
 *
 * Not thread-safe: use one struct rip_sym per thread.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <rip/abi.h>
#include <internal/grow.h>

#include "read/demangle.h"
#include "read/ringfile.h"
#include "read/sym.h"
#include "read/symcache.h"

#define SYM_MAX_FRAMES 64	    /* deepest inline chain kept per address */
#define SYM_MAX_SCOPES 256	    /* deepest DIE nesting walked */
#define SYM_MAX_SIBLINGS (1u << 22) /* bound on a sibling walk in hostile DWARF */
#define SYM_BUILD_ID_MAX 256
#define SYM_CHUNK (1u << 20)
#define SYM_NEAREST_MAX 0x10000 /* furthest past a symbol's end still named after it */
#define SYM_RUST_MAX 4096	/* longest demangled Rust name kept (longer: the mangled one) */

static const char why_not_found[] = "not found";
static const char why_unreadable[] = "cannot be read";
static const char why_not_elf[] = "not an ELF file";
static const char why_no_syms[] = "no symbols";
static const char why_no_dwarf[] = "no debug info (function names only)";
static const char why_build_id[] = "build-id differs: rebuilt since the trace?";
static const char sym_sigframe_name[] = "<signal handler>";

/* Open addressing, linear probing; a NULL value marks an empty slot. */
struct sym_map {
	uint64_t *keys;
	void **vals;
	size_t cap; /* a power of two, or 0 */
	size_t n;
};

struct sym_chunk {
	struct sym_chunk *next;
	size_t used, size;
	max_align_t data[];
};

struct sym_fn_range {
	Dwarf_Addr lo, hi;
	Dwarf_Die die;
	unsigned rank; /* of its name (sym_rank): among aliases, the best is found */
};

/* The subprograms of one CU, sorted by lo. */
struct sym_cu_fns {
	size_t n;
	struct sym_fn_range r[];
};

enum {
	MOD_NEW,
	MOD_OPEN,
	MOD_FAILED
};

struct sym_elf {
	Dwarf_Addr lo;
	uint64_t size;
	Dwarf_Addr end; /* where its section ends (0: not known): a symbol never covers past it */
	const char *name;
	unsigned rank; /* lower is better among symbols at one address */
	unsigned order;
};

struct sym_mod {
	uint64_t lo, hi, bias;
	size_t order; /* position in add order: first added wins */
	char *path;   /* as recorded; "[vdso]" for the vDSO */
	uint8_t *build_id;
	size_t build_id_len;
	uint32_t flags;
	int state;
	const char *why; /* problem, or NULL */
	unsigned hits;	 /* distinct addresses that landed here while why != NULL */
	Dwfl *dwfl;
	Dwfl_Module *dm;
	Dwarf_Addr dwbias; /* libdwfl's bias for the main file */
	bool dwarf;
	struct sym_elf *syms; /* function symbols by address */
	size_t nsyms;
	bool symtab;	      /* they come from a .symtab (else .dynsym: exported ones only) */
	struct sym_fn_range *cu_ranges; /* CU DIEs by address, built on first use */
	size_t ncu_ranges;
	Dwarf_Addr cu_bias;
	bool cu_indexed;
	struct sym_map cus; /* CU DIE address -> struct sym_cu_fns */
};

struct sym_cframe {
	const char *func, *file;
	uint64_t offset;
	int32_t line;
	uint16_t column;
	uint8_t inlined;
	uint8_t sigframe; /* the signal trampoline (rip_frame.sigframe) */
};

#define SYM_JIT_MAX (4u << 20)		 /* functions of a perf map read at most */
#define SYM_JIT_MAX_BYTES (256ull << 20) /* nor a longer map */
#define SYM_JIT_BACK 64			 /* entries looked at before an address (overlaps) */

/*
 * How many of v[0 .. n), sorted by their field lo, start at or before a:
 * the index of the first that starts after it (a binary search).
 */
#define SYM_UPPER(v, n, a)                                                                         \
	({                                                                                         \
		size_t lo_ = 0, hi_ = (n);                                                         \
                                                                                                   \
		while (lo_ < hi_) {                                                                \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;                                       \
                                                                                                   \
			if ((v)[mid_].lo <= (a))                                                   \
				lo_ = mid_ + 1;                                                    \
			else                                                                       \
				hi_ = mid_;                                                        \
		}                                                                                  \
		lo_;                                                                               \
	})

/* A function a JIT compiled, as its perf map names it. */
struct sym_jit {
	uint64_t lo, hi;
	uint32_t seq; /* its line: a later one for the same code wins */
	const char *name;
};

struct sym_entry {
	struct sym_mod *mod;
	unsigned gen; /* for entries in no module: sym->gen when resolved */
	bool counted; /* in its module's hits (by a lookup that was not quiet) */
	unsigned n;
	struct sym_cframe f[];
};

struct rip_sym {
	bool quiet; /* rip_sym_set_quiet */
	char *sysroot; /* "" when none */
	char *debuginfo_path;
	Dwfl_Callbacks cb;
	struct sym_mod **mods; /* add order */
	size_t nmods, capmods;
	struct sym_mod **sorted; /* by lo, rebuilt when nsorted != nmods */
	uint64_t *maxhi;	 /* maxhi[i]: highest hi among sorted[0..i] */
	size_t nsorted;
	unsigned gen;		  /* bumped by every module added */
	struct sym_map cache;	  /* addr -> struct sym_entry */
	struct sym_map demangled; /* libdw/libelf string address -> name */
	struct sym_map cleaned;	  /* a name with control bytes -> its printable copy */
	struct sym_chunk *arena;
	/* a JIT's code, from its perf map (rip_sym_add_perfmap), by lo; jit_path: the map's */
	struct sym_jit *jit;
	size_t njit;
	char *jit_path;
};

/* ---- hash map, arena ---- */

static inline size_t sym_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return (size_t)k;
}

static void *map_get(const struct sym_map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = sym_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->vals[i])
			return NULL;
		if (m->keys[i] == key)
			return m->vals[i];
	}
}

static int map_grow(struct sym_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	void **vals = calloc(cap, sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t j = 0; j < m->cap; j++) {
		size_t i;

		if (!m->vals[j])
			continue;
		for (i = sym_hash(m->keys[j]) & (cap - 1); vals[i]; i = (i + 1) & (cap - 1))
			;
		keys[i] = m->keys[j];
		vals[i] = m->vals[j];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

/* Insert or replace; val must not be NULL. */
static int map_put(struct sym_map *m, uint64_t key, void *val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		int err = map_grow(m);

		if (err)
			return err;
	}
	for (i = sym_hash(key) & (m->cap - 1); m->vals[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return 0;
		}
	}
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

static void map_free(struct sym_map *m, bool free_vals)
{
	for (size_t i = 0; free_vals && i < m->cap; i++)
		free(m->vals[i]);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static void *arena_alloc(struct rip_sym *s, size_t n)
{
	struct sym_chunk *c = s->arena;
	void *p;

	n = (n + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1);
	if (!c || c->size - c->used < n) {
		size_t size = n > SYM_CHUNK / 4 ? n : SYM_CHUNK;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = s->arena;
		s->arena = c;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

static char *str_join(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	char *r = malloc(la + lb + lc + 1);

	if (!r)
		return NULL;
	memcpy(r, a, la);
	memcpy(r + la, b, lb);
	memcpy(r + la + lb, c, lc + 1);
	return r;
}

/* ---- demangling: Rust here (read/demangle.c), C++ through libstdc++, loaded when first needed ---- */

typedef char *(*sym_demangle_fn)(const char *, char *, size_t *, int *);
static sym_demangle_fn sym_demangler;
static pthread_once_t sym_demangler_once = PTHREAD_ONCE_INIT;

static void sym_demangler_load(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

	if (h)
		sym_demangler = (sym_demangle_fn)dlsym(h, "__cxa_demangle");
}

/*
 * name points into data libdw or libelf keep until rip_sym_free, so its
 * address is the cache key.  Returns name itself when it is not mangled or
 * cannot be demangled.
 */
static const char *sym_demangle(struct rip_sym *s, const char *name)
{
	const char *hit;
	char *d, rust[SYM_RUST_MAX];
	size_t len;
	int status = -1;

	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R' && name[1] != '_'))
		return name;
	hit = map_get(&s->demangled, (uintptr_t)name);
	if (hit)
		return hit;
	hit = name;
	/* Rust first: a legacy Rust name is a C++ name too, with its hash as a last element */
	if (!dm_rust(name, rust, sizeof(rust))) {
		len = strlen(rust) + 1;
		d = arena_alloc(s, len);
		if (d) {
			memcpy(d, rust, len);
			hit = d;
		}
		map_put(&s->demangled, (uintptr_t)name, (void *)hit);
		return hit;
	}
	/* gfortran's module procedures (__MODULE_MOD_NAME), or the name as it is */
	if (name[1] != 'Z') {
		if (name[1] == '_' && !dm_fortran(name, rust, sizeof(rust))) {
			len = strlen(rust) + 1;
			d = arena_alloc(s, len);
			if (d) {
				memcpy(d, rust, len);
				hit = d;
			}
		}
		map_put(&s->demangled, (uintptr_t)name, (void *)hit);
		return hit;
	}
	pthread_once(&sym_demangler_once, sym_demangler_load);
	d = sym_demangler ? sym_demangler(name, NULL, NULL, &status) : NULL;
	if (d && status == 0) {
		char *copy;

		len = strlen(d) + 1;
		copy = arena_alloc(s, len);
		if (copy) {
			memcpy(copy, d, len);
			hit = copy;
		}
	}
	free(d);
	map_put(&s->demangled, (uintptr_t)name, (void *)hit); /* on failure: retry next time */
	return hit;
}

/*
 * A name or path of a binary, its DWARF or the ring file, printable: itself,
 * or a copy with its control bytes made '?' (rr_printable: whoever built the
 * binary chose them, and they would drive the terminal of whoever reads).
 */
static const char *sym_clean(struct rip_sym *s, const char *name)
{
	const char *hit;
	char *c;
	size_t len;

	if (!name || !rr_has_control(name))
		return name;
	hit = map_get(&s->cleaned, (uintptr_t)name);
	if (hit)
		return hit;
	len = strlen(name) + 1;
	c = arena_alloc(s, len);
	if (!c)
		return "?";
	memcpy(c, name, len);
	rr_printable(c);
	map_put(&s->cleaned, (uintptr_t)name, c);
	return c;
}

/* ---- setup ---- */

static int sym_find_elf_none(Dwfl_Module *mod, void **userdata, const char *modname,
			     Dwarf_Addr base, char **file_name, Elf **elfp)
{
	/* Every module is reported with its file; nothing to find. */
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name, (void)elfp;
	return -1;
}

static char *sym_abs_dir(const char *dir)
{
	char cwd[4096];

	if (dir[0] == '/')
		return strdup(dir);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	return str_join(cwd, "/", dir);
}

int rip_sym_new(const struct rip_sym_opts *opts, struct rip_sym **out)
{
	const char *debug_dir = opts ? opts->debug_dir : NULL;
	const char *sysroot = opts ? opts->sysroot : NULL;
	char *dd = NULL, *root_debug = NULL;
	struct rip_sym *s;
	size_t n;

	if (!out)
		return -EINVAL;
	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (sysroot && *sysroot) {
		s->sysroot = sym_abs_dir(sysroot);
		if (!s->sysroot)
			goto err_free;
		for (n = strlen(s->sysroot); n > 1 && s->sysroot[n - 1] == '/'; n--)
			s->sysroot[n - 1] = 0;
	} else {
		s->sysroot = strdup("");
		if (!s->sysroot)
			goto err_free;
	}
	if (debug_dir && *debug_dir) {
		dd = sym_abs_dir(debug_dir);
		if (!dd)
			goto err_free;
	}
	if (*s->sysroot) {
		root_debug = str_join(s->sysroot, "/usr/lib/debug", ":");
		if (!root_debug)
			goto err_dd;
	}
	/*
	 * libdwfl's search path: the binary's directory and its .debug/, then
	 * the absolute roots, which are also where build-id links are looked
	 * for (see dwfl_standard_find_debuginfo in libdwfl.h).
	 */
	s->debuginfo_path = malloc(strlen(dd ? dd : "") + strlen(root_debug ? root_debug : "") +
				   sizeof(":.debug::/usr/lib/debug"));
	if (!s->debuginfo_path)
		goto err_root;
	strcpy(s->debuginfo_path, ":.debug:");
	if (dd) {
		strcat(s->debuginfo_path, dd);
		strcat(s->debuginfo_path, ":");
	}
	if (root_debug)
		strcat(s->debuginfo_path, root_debug);
	strcat(s->debuginfo_path, "/usr/lib/debug");
	free(root_debug);
	free(dd);

	s->cb.find_elf = sym_find_elf_none;
	s->cb.find_debuginfo = symcache_find_debuginfo;
	s->cb.section_address = dwfl_offline_section_address;
	s->cb.debuginfo_path = &s->debuginfo_path;
	*out = s;
	return 0;

err_root:
	free(root_debug);
err_dd:
	free(dd);
err_free:
	free(s->sysroot);
	free(s);
	return -ENOMEM;
}

static void sym_mod_free(struct sym_mod *m)
{
	if (m->dwfl)
		dwfl_end(m->dwfl);
	map_free(&m->cus, true);
	free(m->syms);
	free(m->cu_ranges);
	free(m->build_id);
	free(m->path);
	free(m);
}

void rip_sym_free(struct rip_sym *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nmods; i++)
		sym_mod_free(s->mods[i]);
	free(s->mods);
	free(s->sorted);
	free(s->maxhi);
	free(s->jit);
	free(s->jit_path);
	map_free(&s->cache, false);
	map_free(&s->demangled, false);
	map_free(&s->cleaned, false);
	while (s->arena) {
		struct sym_chunk *c = s->arena;

		s->arena = c->next;
		free(c);
	}
	free(s->debuginfo_path);
	free(s->sysroot);
	free(s);
}

int rip_sym_add_module(struct rip_sym *s, uint64_t lo, uint64_t hi, uint64_t bias, const char *path,
		       const uint8_t *build_id, size_t build_id_len, uint32_t flags)
{
	struct sym_mod *m;

	if (!s || lo >= hi || (!path && !(flags & RIP_MOD_VDSO)) || (build_id_len && !build_id) ||
	    build_id_len > SYM_BUILD_ID_MAX)
		return -EINVAL;
	if (RIP_GROW(s->mods, s->capmods, s->nmods + 1, 32))
		return -ENOMEM;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->lo = lo;
	m->hi = hi;
	m->bias = bias;
	m->flags = flags;
	m->order = s->nmods;
	m->path = strdup(flags & RIP_MOD_VDSO ? "[vdso]" : path);
	if (!m->path)
		goto err_free;
	if (build_id_len) {
		m->build_id = malloc(build_id_len);
		if (!m->build_id)
			goto err_free;
		memcpy(m->build_id, build_id, build_id_len);
		m->build_id_len = build_id_len;
	}
	s->mods[s->nmods++] = m;
	s->gen++;
	return 0;

err_free:
	sym_mod_free(m);
	return -ENOMEM;
}

/* ---- modules ---- */

static int sym_mod_cmp(const void *a, const void *b)
{
	const struct sym_mod *x = *(struct sym_mod *const *)a, *y = *(struct sym_mod *const *)b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int sym_sort(struct rip_sym *s)
{
	struct sym_mod **v = realloc(s->sorted, s->nmods * sizeof(*v));
	uint64_t *maxhi;

	if (!v)
		return -ENOMEM;
	s->sorted = v;
	maxhi = realloc(s->maxhi, s->nmods * sizeof(*maxhi));
	if (!maxhi)
		return -ENOMEM;
	s->maxhi = maxhi;
	memcpy(v, s->mods, s->nmods * sizeof(*v));
	qsort(v, s->nmods, sizeof(*v), sym_mod_cmp);
	for (size_t i = 0; i < s->nmods; i++)
		maxhi[i] = i && maxhi[i - 1] > v[i]->hi ? maxhi[i - 1] : v[i]->hi;
	s->nsorted = s->nmods;
	return 0;
}

/* The module holding addr; of overlapping ones, the first added. */
static int sym_find_mod(struct rip_sym *s, uint64_t addr, struct sym_mod **out)
{
	struct sym_mod *best = NULL;
	size_t a = 0, b;

	if (s->nsorted != s->nmods) {
		int err = sym_sort(s);

		if (err)
			return err;
	}
	b = s->nsorted;
	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (s->sorted[mid]->lo <= addr)
			a = mid + 1;
		else
			b = mid;
	}
	/* sorted[0..a) start at or below addr; stop once none reaches it */
	while (a-- > 0 && s->maxhi[a] > addr) {
		struct sym_mod *m = s->sorted[a];

		if (addr < m->hi && (!best || m->order < best->order))
			best = m;
	}
	*out = best;
	return 0;
}

static int sym_elf_cmp(const void *a, const void *b)
{
	const struct sym_elf *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Leading underscores: getpid is a better name than __getpid. */
static unsigned sym_rank(const char *name, int bind)
{
	unsigned r = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;

	while (*name == '_')
		name++, r += 4;
	return r;
}

/* Has elf a .symtab (libdwfl reads it, from the object or its debug file, before .dynsym)? */
static bool sym_has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while (elf && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB)
			return true;
	return false;
}

/*
 * Index the function symbols (.symtab, else .dynsym) by address: libdwfl's
 * dwfl_module_addrinfo scans the whole table on every call.
 */
static int sym_elf_index(struct sym_mod *m)
{
	int nsyms = dwfl_module_getsymtab(m->dm);
	struct sym_elf *v;
	size_t n = 0;

	if (nsyms <= 1)
		return 0;
	v = malloc((size_t)nsyms * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		GElf_Shdr shdr;
		Dwarf_Addr b;
		Elf *elf;
		const char *name = dwfl_module_getsym_info(m->dm, i, &sym, &addr, &shndx, &elf, &b);
		int type = GELF_ST_TYPE(sym.st_info);
		Elf_Scn *scn;
		bool sec;

		if (!name || !*name || sym.st_shndx == SHN_UNDEF || shndx == SHN_UNDEF ||
		    shndx == SHN_ABS)
			continue;
		if (!n)
			m->symtab = sym_has_symtab(elf);
		scn = elf ? elf_getscn(elf, shndx) : NULL;
		sec = scn && gelf_getshdr(scn, &shdr);
		if (type == STT_NOTYPE) {
			if (!sec || !(shdr.sh_flags & SHF_EXECINSTR))
				continue;
		} else if (type != STT_FUNC && type != STT_GNU_IFUNC) {
			continue;
		}
		v[n++] = (struct sym_elf){
			.lo = addr,
			.size = sym.st_size,
			/*
			 * Its section's end, in the same address space: _init
			 * (no size, in .init) covered the .plt after it, so
			 * samples of PLT stubs were all named _init.
			 */
			.end = sec && shdr.sh_size && addr >= shdr.sh_addr + b &&
					       addr < shdr.sh_addr + b + shdr.sh_size ?
				       shdr.sh_addr + b + shdr.sh_size :
				       0,
			.name = name,
			.rank = sym_rank(name, GELF_ST_BIND(sym.st_info)),
			.order = (unsigned)i,
		};
	}
	if (!n) {
		free(v);
		return 0;
	}
	qsort(v, n, sizeof(*v), sym_elf_cmp);
	m->syms = v;
	m->nsyms = n;
	return 0;
}

/* The function symbol around a (libdwfl's address space), or NULL. */
static const struct sym_elf *sym_elf_find(const struct sym_mod *m, Dwarf_Addr a)
{
	const struct sym_elf *best = NULL;
	size_t lo = SYM_UPPER(m->syms, m->nsyms, a);

	if (!lo)
		return NULL;
	/* the best-ranked symbol at the closest start below a */
	for (size_t i = lo; i-- > 0 && m->syms[i].lo == m->syms[lo - 1].lo;)
		best = &m->syms[i];
	if (best->end && a >= best->end)
		return NULL; /* past its section: in another one, which has no symbol there */
	if (!best->size || a - best->lo < best->size)
		return best;
	/*
	 * A sized symbol ends before a: one that starts earlier may enclose
	 * it, the best-ranked of those that start there (the scan meets the
	 * worst first: munmap was named by its alias __GI_munmap).
	 */
	for (size_t i = lo - 1, k = 0; i-- > 0 && k < 8; k++)
		if (m->syms[i].size && a - m->syms[i].lo < m->syms[i].size) {
			size_t first = i;

			for (size_t j = i; j-- > 0 && m->syms[j].lo == m->syms[i].lo;)
				if (m->syms[j].size && a - m->syms[j].lo < m->syms[j].size)
					first = j;
			return &m->syms[first];
		}
	/*
	 * Hand-written code often runs past its symbol's size: take the closest.
	 * Not in a stripped object (.dynsym only): there the gap after an
	 * exported function is most often a static one, which has no name.
	 */
	return m->symtab && a - best->lo < SYM_NEAREST_MAX ? best : NULL;
}

static void sym_mod_close(struct sym_mod *m)
{
	if (m->dwfl)
		dwfl_end(m->dwfl);
	m->dwfl = NULL;
	m->dm = NULL;
}

/* Report file as m's ELF at the recorded bias; NULL or why not. */
static const char *sym_mod_report(struct rip_sym *s, struct sym_mod *m, const char *file)
{
	const unsigned char *bits;
	unsigned char magic[SELFMAG];
	GElf_Addr vaddr;
	void **ud;
	ssize_t got;
	int fd, len;

	/*
	 * O_NONBLOCK: a FIFO in the path must not hang the reader.  The
	 * descriptor checked is the one libdw reads: a name opened again could
	 * have been swapped for a FIFO in between.  A device named by a
	 * module's path (a trace's index says what it likes) is not opened,
	 * even one swapped in for the name after it was looked at.
	 */
	fd = rr_open_regular(file, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 && errno == EINVAL)
		return why_not_elf;
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? why_not_found : why_unreadable;
	got = pread(fd, magic, sizeof(magic), 0);
	if (got != (ssize_t)sizeof(magic) || memcmp(magic, ELFMAG, SELFMAG))
		goto err_fd;

	m->dwfl = dwfl_begin(&s->cb);
	if (!m->dwfl) {
		close(fd);
		return why_unreadable;
	}
	dwfl_report_begin(m->dwfl);
	/* ET_DYN: placed at bias + p_vaddr; ET_EXEC: at its own p_vaddr.  fd is libdw's if taken. */
	m->dm = dwfl_report_elf(m->dwfl, m->path, file, fd, m->bias, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->dm)
		close(fd);
	/* The search path, for symcache_find_safe. */
	if (m->dm && dwfl_module_info(m->dm, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
		*ud = s->debuginfo_path;
	if (!m->dm || !dwfl_module_getelf(m->dm, &m->dwbias))
		goto err_close;
	if (m->build_id_len) {
		len = dwfl_module_build_id(m->dm, &bits, &vaddr);
		if (len != (int)m->build_id_len || memcmp(bits, m->build_id, m->build_id_len)) {
			sym_mod_close(m);
			return why_build_id;
		}
	}
	return NULL;

err_close:
	sym_mod_close(m);
	return why_not_elf;

err_fd:
	close(fd);
	return why_not_elf;
}

/*
 * The debug file named by the recorded build-id under each debug root: it
 * stands in for a binary that is missing or was rebuilt since the trace.
 */
static const char *sym_mod_by_build_id(struct rip_sym *s, struct sym_mod *m)
{
	char *paths = strdup(s->debuginfo_path), *save = NULL;
	const char *ret = why_not_found;
	char *hex;

	hex = malloc(m->build_id_len * 2 + sizeof("/.build-id/x/.debug"));
	if (!paths || !hex)
		goto out_free;
	for (char *dir = strtok_r(paths, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *p = hex, *file;

		if (dir[0] == '+' || dir[0] == '-')
			dir++;
		if (dir[0] != '/')
			continue;
		p += sprintf(p, "/.build-id/%02x/", m->build_id[0]);
		for (size_t i = 1; i < m->build_id_len; i++)
			p += sprintf(p, "%02x", m->build_id[i]);
		strcpy(p, ".debug");
		file = str_join(dir, hex, "");
		if (!file)
			break;
		if (!access(file, R_OK) && !sym_mod_report(s, m, file))
			ret = NULL;
		free(file);
		if (!ret)
			break;
	}
out_free:
	free(hex);
	free(paths);
	return ret;
}

static void sym_mod_open(struct rip_sym *s, struct sym_mod *m)
{
	const char *why;
	char *file;
	Dwarf_Addr b;

	m->state = MOD_FAILED;
	file = str_join(s->sysroot, m->path[0] == '/' || !*s->sysroot ? "" : "/", m->path);
	if (!file) {
		m->why = why_unreadable;
		return;
	}
	why = *m->path ? sym_mod_report(s, m, file) : why_not_found;
	free(file);
	if (why && m->build_id_len && sym_mod_by_build_id(s, m) == NULL)
		why = NULL;
	if (why) {
		m->why = why;
		return;
	}
	m->state = MOD_OPEN;
	m->dwarf = dwfl_module_getdwarf(m->dm, &b) != NULL;
	if (sym_elf_index(m))
		m->why = why_unreadable;
	else if (!m->dwarf)
		m->why = m->nsyms ? why_no_dwarf : why_no_syms;
}

/* ---- the signal trampoline ---- */

/*
 * The code the kernel returns to from a signal handler (sa_restorer, glibc's
 * __restore_rt, musl's __restore_rt): rt_sigreturn and nothing else.  A
 * handler's return address is its first byte, so the lookup of that address
 * - 1 lands in whatever precedes it (glibc: "sigaction+0x3f").
 */
static const uint8_t sym_sigret_x86_64[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, /* mov $15,%rax */
					     0x0f, 0x05 };			    /* syscall */
static const uint8_t sym_sigret_aarch64[] = { 0x68, 0x11, 0x80, 0xd2,  /* mov x8, #139 */
					      0x01, 0x00, 0x00, 0xd4 }; /* svc #0 */

/* Does the code at ELF address a of m's file start with rt_sigreturn? */
static bool sym_sigret_code(struct sym_mod *m, GElf_Addr a)
{
	const uint8_t *want, *raw;
	size_t len, phnum, size;
	Dwarf_Addr b;
	GElf_Ehdr eh;
	Elf *elf = dwfl_module_getelf(m->dm, &b);

	if (!elf || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &phnum))
		return false;
	if (eh.e_machine == EM_X86_64) {
		want = sym_sigret_x86_64;
		len = sizeof(sym_sigret_x86_64);
	} else if (eh.e_machine == EM_AARCH64) {
		want = sym_sigret_aarch64;
		len = sizeof(sym_sigret_aarch64);
	} else {
		return false;
	}
	/* the file as libelf mapped it: no copy, no allocation per lookup */
	raw = (const uint8_t *)elf_rawfile(elf, &size);
	if (!raw)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		uint64_t off;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    a < ph.p_vaddr || a - ph.p_vaddr > ph.p_filesz ||
		    ph.p_filesz - (a - ph.p_vaddr) < len)
			continue;
		off = ph.p_offset + (a - ph.p_vaddr);
		return off >= ph.p_offset && off <= size && size - off >= len &&
		       !memcmp(raw + off, want, len);
	}
	return false;
}

/*
 * Is address a (libdwfl's), looked up as a return address - 1 or as an exact
 * address, the signal trampoline?  By its code, or by glibc's name for it
 * when the code is not in the file (a separate debug file stands in).
 */
static bool sym_sigtramp(struct sym_mod *m, Dwarf_Addr a)
{
	for (int k = 1; k >= 0; k--) {
		const struct sym_elf *es = sym_elf_find(m, a + (Dwarf_Addr)k);

		if (es && es->lo == a + (Dwarf_Addr)k && !strcmp(es->name, "__restore_rt"))
			return true;
		if (a + (Dwarf_Addr)k >= m->dwbias && sym_sigret_code(m, a + (Dwarf_Addr)k - m->dwbias))
			return true;
	}
	return false;
}

/* ---- DWARF ---- */

struct sym_fn_vec {
	struct sym_fn_range *v;
	size_t n, cap;
	bool oom;
};

/*
 * The rank of a subprogram's name, as of a symbol's (sym_rank): the
 * assembler gives each alias of an assembly function a subprogram of the
 * same range (glibc's munmap, __munmap, __GI_munmap, __GI___munmap).
 */
static unsigned sym_die_rank(Dwarf_Die *die)
{
	const char *name = dwarf_diename(die);
	Dwarf_Attribute a;
	bool ext = false;

	if (!name)
		return UINT_MAX;
	if (dwarf_attr_integrate(die, DW_AT_external, &a))
		dwarf_formflag(&a, &ext);
	return sym_rank(name, ext ? STB_GLOBAL : STB_LOCAL);
}

static void sym_fn_add(struct sym_fn_vec *fv, Dwarf_Die *die)
{
	const unsigned rank = sym_die_rank(die);
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		if (RIP_GROW(fv->v, fv->cap, fv->n + 1, 64)) {
			fv->oom = true;
			return;
		}

		fv->v[fv->n++] =
			(struct sym_fn_range){ .lo = lo, .hi = hi, .die = *die, .rank = rank };
	}
}

/* Subprograms with code, at CU level or inside namespaces and classes. */
static void sym_fn_collect(struct sym_fn_vec *fv, Dwarf_Die *parent, int depth)
{
	unsigned steps = 0;
	Dwarf_Die c;

	if (depth > 32 || dwarf_child(parent, &c) != 0)
		return;
	do {
		switch (dwarf_tag(&c)) {
		case DW_TAG_subprogram:
			sym_fn_add(fv, &c);
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_interface_type:
			sym_fn_collect(fv, &c, depth + 1);
			break;
		default:
			break;
		}
	} while (!fv->oom && ++steps < SYM_MAX_SIBLINGS && dwarf_siblingof(&c, &c) == 0);
}

static int sym_fn_cmp(const void *a, const void *b)
{
	const struct sym_fn_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	/* the same range: the best name last, where sym_fn_find looks first */
	return x->rank > y->rank ? -1 : x->rank < y->rank;
}

static struct sym_cu_fns *sym_cu_index(struct sym_mod *m, Dwarf_Die *cu)
{
	struct sym_fn_vec fv = { 0 };
	struct sym_cu_fns *fns;

	fns = map_get(&m->cus, (uintptr_t)cu->addr);
	if (fns)
		return fns;
	sym_fn_collect(&fv, cu, 0);
	if (fv.oom)
		goto out_free;
	fns = malloc(sizeof(*fns) + fv.n * sizeof(fns->r[0]));
	if (!fns)
		goto out_free;
	fns->n = fv.n;
	if (fv.n)
		memcpy(fns->r, fv.v, fv.n * sizeof(fns->r[0]));
	qsort(fns->r, fns->n, sizeof(fns->r[0]), sym_fn_cmp);
	if (map_put(&m->cus, (uintptr_t)cu->addr, fns)) {
		free(fns);
		fns = NULL;
	}
out_free:
	free(fv.v);
	return fns;
}

static bool sym_fn_find(struct sym_cu_fns *fns, Dwarf_Addr pc, Dwarf_Die *out)
{
	size_t a = 0, b = fns->n;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (fns->r[mid].lo <= pc)
			a = mid + 1;
		else
			b = mid;
	}
	/* ranges rarely overlap; look back a little for an enclosing one */
	for (size_t k = 0; a > 0 && k < 16; a--, k++) {
		if (pc < fns->r[a - 1].hi) {
			*out = fns->r[a - 1].die;
			return true;
		}
	}
	return false;
}

/*
 * Whether the CU that dwfl_module_addrdie gave holds dwaddr.  libdwfl takes
 * the gap after one CU's .debug_aranges up to the next CU's as the first
 * one's: where the CUs between have no entry there (Go's, beside the C of
 * cgo that has them; objects of clang) it names a CU whose lines and
 * functions are elsewhere, and every frame got its file and line (or none).
 * A CU that gives no ranges at all is taken at its word.
 */
static bool sym_cu_holds(Dwarf_Die *cu, Dwarf_Addr bias, Dwarf_Addr dwaddr)
{
	Dwarf_Addr base, lo, hi, pc = dwaddr - bias;
	ptrdiff_t off = 0;
	bool any = false;

	while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0) {
		if (pc >= lo && pc < hi)
			return true;
		any = true;
	}
	return !any;
}

/*
 * The CU around pc.  Not through dwfl_module_addrdie alone: elfutils before
 * 0.191 finds CUs only through .debug_aranges, which clang does not emit;
 * when it finds none (or one that does not hold pc), our own index of every
 * CU's ranges does.
 */
static bool sym_cu_find(struct sym_mod *m, Dwarf_Addr dwaddr, Dwarf_Die *cu, Dwarf_Addr *bias)
{
	Dwarf_Die *hit;

	/*
	 * .debug_aranges first, when it has the address: indexing every CU
	 * reads each one's abbreviations (glibc's debug info: 2,175 CUs, 17 MB
	 * and 6-8 ms, for one address in libc).
	 */
	if (!m->cu_indexed && (hit = dwfl_module_addrdie(m->dm, dwaddr, bias)) &&
	    sym_cu_holds(hit, *bias, dwaddr)) {
		*cu = *hit;
		return true;
	}
	if (!m->cu_indexed) {
		struct sym_fn_vec fv = { 0 };
		Dwarf_Die *d = NULL;
		Dwarf_Addr b;

		m->cu_indexed = true;
		while ((d = dwfl_module_nextcu(m->dm, d, &b)) && !fv.oom) {
			m->cu_bias = b;
			sym_fn_add(&fv, d);
		}
		if (fv.oom) {
			free(fv.v);
		} else {
			if (fv.n) /* qsort's array may not be NULL: no CU found */
				qsort(fv.v, fv.n, sizeof(fv.v[0]), sym_fn_cmp);
			m->cu_ranges = fv.v;
			m->ncu_ranges = fv.n;
		}
	}
	if (m->ncu_ranges && dwaddr >= m->cu_bias) {
		size_t a = 0, b = m->ncu_ranges;
		Dwarf_Addr pc = dwaddr - m->cu_bias;

		while (a < b) {
			size_t mid = a + (b - a) / 2;

			if (m->cu_ranges[mid].lo <= pc)
				a = mid + 1;
			else
				b = mid;
		}
		for (size_t k = 0; a > 0 && k < 16; a--, k++) {
			if (pc < m->cu_ranges[a - 1].hi) {
				*cu = m->cu_ranges[a - 1].die;
				*bias = m->cu_bias;
				return true;
			}
		}
	}
	hit = dwfl_module_addrdie(m->dm, dwaddr, bias);
	if (!hit || !sym_cu_holds(hit, *bias, dwaddr))
		return false;
	*cu = *hit;
	return true;
}

/*
 * chain[0] = the function, chain[1..n) the inlined subroutines around pc,
 * outermost first.  Only the function's subtree is walked.
 */
static int sym_chain(Dwarf_Die *fn, Dwarf_Addr pc, Dwarf_Die *chain, int max)
{
	Dwarf_Die cur = *fn, c;
	int n = 1;

	chain[0] = *fn;
	for (int depth = 0; depth < SYM_MAX_SCOPES; depth++) {
		unsigned steps = 0;
		int tag = 0;
		bool found = false;

		if (dwarf_child(&cur, &c) != 0)
			break;
		do {
			tag = dwarf_tag(&c);
			switch (tag) {
			case DW_TAG_inlined_subroutine:
			case DW_TAG_lexical_block:
			case DW_TAG_subprogram:
			case DW_TAG_try_block:
			case DW_TAG_catch_block:
			case DW_TAG_with_stmt:
			case DW_TAG_common_block:
				found = dwarf_haspc(&c, pc) == 1;
				break;
			default:
				break;
			}
		} while (!found && ++steps < SYM_MAX_SIBLINGS && dwarf_siblingof(&c, &c) == 0);
		if (!found)
			break;
		if (tag == DW_TAG_subprogram) {
			/* a nested function: it is the real frame */
			chain[0] = c;
			n = 1;
		} else if (tag == DW_TAG_inlined_subroutine && n < max) {
			chain[n++] = c;
		}
		cur = c;
	}
	return n;
}

/* Is name a mangled one (C++, Rust: _Z..., _R..., __Z...)? */
static bool sym_mangled(const char *name)
{
	return name[0] == '_' &&
	       (name[1] == 'Z' || name[1] == 'R' || (name[1] == '_' && name[2] == 'Z'));
}

/*
 * A function's name: its linkage name demangled when it is a mangled one
 * (C++'s scope and parameters), else its own.  A C function's linkage name
 * is the symbol an asm label gave it: glibc declares its functions under
 * __GI_ names for its own calls (hidden_proto), so that libc's frames read
 * __GI__IO_file_doallocate where gdb and heaptrack say _IO_file_doallocate.
 */
static const char *sym_die_name(struct rip_sym *s, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *link = NULL, *name = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		link = dwarf_formstring(&a);
	if (link && sym_mangled(link))
		return sym_demangle(s, link);
	if (dwarf_attr_integrate(die, DW_AT_name, &a))
		name = dwarf_formstring(&a);
	return name ? name : link;
}

/*
 * Is the ELF symbol sym a copy gcc made of the function of die, under its
 * name and a suffix (foo.part.0, foo.constprop.0, foo.isra.0,
 * _Z3fooi.part.0)?  Its DWARF says foo (an abstract origin), as it does for
 * the original: the symbol is what tells the two functions apart, as perf
 * and uftrace name them.  Not the cold part of foo itself (foo.cold,
 * foo.cold.1): that is foo's own code, with no entry of its own, and stays
 * foo, as gdb names it.
 */
static bool sym_is_clone(const char *sym, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *raw = NULL, *suffix;
	size_t n;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_name, &a))
		raw = dwarf_formstring(&a);
	if (!raw || !sym)
		return false;
	n = strlen(raw);
	if (!n || strncmp(sym, raw, n) || sym[n] != '.' || !sym[n + 1])
		return false;
	suffix = sym + n;
	if (!strncmp(suffix, ".cold", 5) &&
	    (!suffix[5] ||
	     (suffix[5] == '.' && strspn(suffix + 6, "0123456789") == strlen(suffix + 6))))
		return false;
	return true;
}

/*
 * Is ELF symbol es the C++ function of die, which DWARF names by its name
 * alone (no linkage name: gcc gives none to a function of internal
 * linkage), while the symbol's mangled name has its scope and parameters?
 * The symbol must begin where one of the function's ranges does (a
 * function split in a hot and a cold part has two; cubias: the CU's).
 */
static bool sym_is_local_cxx(const struct sym_elf *es, Dwarf_Die *die, Dwarf_Addr cubias)
{
	Dwarf_Addr base, lo, hi;
	Dwarf_Attribute a;
	ptrdiff_t off = 0;

	if (!es->name || strncmp(es->name, "_Z", 2) ||
	    dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		return false;
	for (int n = 0; n < 64 && (off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0; n++)
		if (lo + cubias == es->lo)
			return true;
	return false;
}

static void sym_call_site(Dwarf_Die *inl, struct sym_cframe *f)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Files *files;
	Dwarf_Die cu;
	size_t nfiles;

	if (dwarf_attr(inl, DW_AT_call_line, &a) && !dwarf_formudata(&a, &idx) && idx <= INT32_MAX)
		f->line = (int32_t)idx;
	if (dwarf_attr(inl, DW_AT_call_column, &a) && !dwarf_formudata(&a, &idx))
		f->column = idx > UINT16_MAX ? 0 : (uint16_t)idx;
	if (dwarf_attr(inl, DW_AT_call_file, &a) && !dwarf_formudata(&a, &idx) &&
	    dwarf_diecu(inl, &cu, NULL, NULL) && !dwarf_getsrcfiles(&cu, &files, &nfiles) &&
	    idx < nfiles) {
		const char *file = dwarf_filesrc(files, idx, NULL, NULL);

		if (file && strcmp(file, "???"))
			f->file = file;
	}
}

static uint64_t sym_entry_off(Dwarf_Die *die, Dwarf_Addr pc)
{
	Dwarf_Addr entry;

	if (dwarf_entrypc(die, &entry) || entry > pc)
		return 0;
	return pc - entry;
}

/* ---- lookups ---- */

static struct sym_entry *sym_entry_new(struct rip_sym *s, struct sym_mod *m, unsigned n)
{
	struct sym_entry *e = arena_alloc(s, sizeof(*e) + n * sizeof(e->f[0]));

	if (!e)
		return NULL;
	memset(e, 0, sizeof(*e) + n * sizeof(e->f[0]));
	e->mod = m;
	e->gen = s->gen;
	e->n = n;
	return e;
}

/*
 * The JIT's function at addr, from the perf map: its name and the offset
 * into it in f; false when none holds it.  Of those that do (code freed
 * and compiled again in the same place), the latest line.
 */
static bool sym_jit_find(const struct rip_sym *s, uint64_t addr, struct sym_cframe *f)
{
	const struct sym_jit *best = NULL;
	/* the first entry past addr, then back over those that start at or before it */
	size_t lo = SYM_UPPER(s->jit, s->njit, addr);

	for (size_t i = lo, k = 0; i-- > 0 && k < SYM_JIT_BACK; k++)
		if (addr < s->jit[i].hi && (!best || s->jit[i].seq > best->seq))
			best = &s->jit[i];
	if (!best)
		return false;
	f->func = best->name;
	f->offset = addr - best->lo;
	return true;
}

static struct sym_entry *sym_resolve(struct rip_sym *s, struct sym_mod *m, uint64_t addr)
{
	Dwarf_Die chain[SYM_MAX_SCOPES], cu, fn;
	const char *symname = NULL;
	const struct sym_elf *es;
	struct sym_cframe inner = { 0 };
	struct sym_cu_fns *fns;
	struct sym_entry *e;
	Dwarf_Addr dwaddr, cubias, pc;
	Dwarf_Line *line;
	uint64_t symoff = 0;
	int n = 0, first;

	if (!m)
		goto one_frame;
	if (m->state == MOD_NEW && !(m->flags & RIP_MOD_VDSO))
		sym_mod_open(s, m);
	inner.offset = addr - m->bias;
	if (m->state != MOD_OPEN)
		goto one_frame;

	dwaddr = addr - m->bias + m->dwbias;
	if (sym_sigtramp(m, dwaddr)) {
		inner.func = sym_sigframe_name;
		inner.offset = 0;
		inner.sigframe = 1;
		goto one_frame;
	}
	es = sym_elf_find(m, dwaddr);
	if (es) {
		symname = sym_demangle(s, es->name);
		symoff = dwaddr - es->lo;
		inner.offset = symoff;
	}
	inner.func = symname;
	if (!m->dwarf || !sym_cu_find(m, dwaddr, &cu, &cubias))
		goto one_frame;
	pc = dwaddr - cubias;
	line = dwarf_getsrc_die(&cu, pc);
	if (line) {
		int l = 0, col = 0;

		inner.file = dwarf_linesrc(line, NULL, NULL);
		dwarf_lineno(line, &l);
		dwarf_linecol(line, &col);
		inner.line = l > 0 ? l : 0;
		inner.column = col > 0 && col <= UINT16_MAX ? (uint16_t)col : 0;
	}
	fns = sym_cu_index(m, &cu);
	if (!fns || !sym_fn_find(fns, pc, &fn))
		goto one_frame;
	n = sym_chain(&fn, pc, chain, SYM_MAX_SCOPES);

	/* frames[0] is chain[n - 1]; keep the innermost SYM_MAX_FRAMES */
	first = n > SYM_MAX_FRAMES ? n - SYM_MAX_FRAMES : 0;
	e = sym_entry_new(s, m, n - first);
	if (!e)
		return NULL;
	for (int i = n - 1, k = 0; i >= first; i--, k++) {
		struct sym_cframe *f = &e->f[k];

		f->func = sym_die_name(s, &chain[i]);
		if (k == 0) {
			f->file = inner.file;
			f->line = inner.line;
			f->column = inner.column;
		} else {
			sym_call_site(&chain[i + 1], f);
		}
		f->inlined = i > 0;
		f->offset = sym_entry_off(&chain[i], pc);
	}
	if (first == 0) {
		struct sym_cframe *f = &e->f[e->n - 1];

		/*
		 * A clone of the function (foo.part.0): its symbol's name, which
		 * says so.  So too a C++ function of internal linkage (static, or
		 * in an anonymous namespace): its DWARF has no linkage name, and
		 * names it without its scope and parameters.
		 */
		if (!f->func || (symname && (sym_is_clone(es->name, &chain[0]) ||
					     sym_is_local_cxx(es, &chain[0], cubias))))
			f->func = symname;
		if (symname)
			f->offset = symoff;
	}
	return e;

one_frame:
	e = sym_entry_new(s, m, 1);
	if (!e)
		return NULL;
	e->f[0] = inner;
	if (!m && !sym_jit_find(s, addr, &e->f[0]))
		e->f[0].offset = addr;
	return e;
}

int rip_sym_lookup(struct rip_sym *s, uint64_t addr, struct rip_frame *frames, int max)
{
	struct sym_entry *e;
	struct sym_mod *m;
	unsigned n;
	int err;

	if (!s || !frames || max < 1)
		return -EINVAL;
	e = map_get(&s->cache, addr);
	if (e && !e->mod && e->gen != s->gen)
		e = NULL; /* was in no module: one may have been added since */
	if (!e) {
		err = sym_find_mod(s, addr, &m);
		if (err)
			return err;
		e = sym_resolve(s, m, addr);
		if (!e)
			return -ENOMEM;
		err = map_put(&s->cache, addr, e);
		if (err)
			return err;
	}
	/* Distinct addresses asked for; not those a warm-up resolved ahead (however many). */
	if (!e->counted && !s->quiet) {
		e->counted = true;
		if (e->mod && e->mod->why)
			e->mod->hits++;
	}
	m = e->mod;
	n = e->n < (unsigned)max ? e->n : (unsigned)max;
	for (unsigned i = 0; i < n; i++) {
		const struct sym_cframe *f = &e->f[i];

		frames[i] = (struct rip_frame){
			.func = sym_clean(s, f->func),
			.file = sym_clean(s, f->file),
			.line = f->line,
			.column = f->column,
			.module = m	  ? sym_clean(s, m->path) :
				  f->func ? s->jit_path :
					    NULL,
			.offset = f->offset,
			.inlined = f->inlined,
			.sigframe = f->sigframe,
		};
	}
	return (int)n;
}

/* ---- a JIT's perf map ---- */

static int sym_jit_cmp(const void *a, const void *b)
{
	const struct sym_jit *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The wall-clock second process start_ticks (since boot, in clock ticks) began at; 0: unknown. */
static time_t sym_proc_wall_start(uint64_t start_ticks)
{
	long hz = sysconf(_SC_CLK_TCK);
	char buf[4096], *p;
	unsigned long long btime;
	ssize_t n;
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || hz <= 0)
		return 0;
	buf[n] = 0;
	p = strstr(buf, "\nbtime ");
	if (!p || sscanf(p + 7, "%llu", &btime) != 1)
		return 0;
	return (time_t)(btime + start_ticks / (uint64_t)hz);
}

/* One line of a perf map, "START SIZE NAME" (hexadecimal, 0x or not), into *j: 0, or -1. */
static int sym_jit_line(struct rip_sym *s, char *line, uint32_t seq, struct sym_jit *j)
{
	char *end, *name;
	uint64_t lo, size;
	size_t len;

	errno = 0;
	lo = strtoull(line, &end, 16);
	if (end == line || *end != ' ' || errno)
		return -1;
	size = strtoull(end + 1, &name, 16);
	if (name == end + 1 || *name != ' ' || errno || !size || lo + size < lo)
		return -1;
	name++;
	len = strlen(name);
	if (!len)
		return -1;
	j->name = arena_alloc(s, len + 1);
	if (!j->name)
		return -1;
	memcpy((char *)j->name, name, len + 1);
	rr_printable((char *)j->name);
	j->lo = lo;
	j->hi = lo + size;
	j->seq = seq;
	return 0;
}

int rip_sym_add_perfmap(struct rip_sym *s, int pid, uint64_t start_ticks, uid_t owner)
{
	char path[64], *line = NULL;
	size_t cap = 0, cap_jit = 0;
	time_t started;
	struct stat st;
	ssize_t got;
	FILE *f;
	int fd;

	if (!s || pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
	/* /tmp is everyone's: a regular file of the process's owner (or ours), nothing else */
	fd = rr_open_regular(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	if (fstat(fd, &st) || (st.st_uid != owner && st.st_uid != geteuid()) ||
	    (st.st_mode & S_IWOTH) || (uint64_t)st.st_size > SYM_JIT_MAX_BYTES) {
		close(fd);
		return -EPERM;
	}
	/* written before the process began: another process's of the same pid */
	started = start_ticks ? sym_proc_wall_start(start_ticks) : 0;
	if (started && st.st_mtime < started) {
		close(fd);
		return -ESTALE;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -errno;
	}
	free(s->jit);
	s->jit = NULL;
	s->njit = 0;
	while ((got = getline(&line, &cap, f)) > 0 && s->njit < SYM_JIT_MAX) {
		struct sym_jit j;

		if (line[got - 1] == '\n')
			line[got - 1] = 0;
		if (sym_jit_line(s, line, (uint32_t)s->njit, &j))
			continue;
		if (RIP_GROW(s->jit, cap_jit, s->njit + 1, 1024))
			break;
		s->jit[s->njit++] = j;
	}
	free(line);
	fclose(f);
	qsort(s->jit, s->njit, sizeof(*s->jit), sym_jit_cmp);
	free(s->jit_path);
	s->jit_path = strdup(path);
	s->gen++; /* entries resolved in no module before: again */
	return (int)s->njit;
}

/* The load bias of the ELF object at path mapped from offset 0 at base, or false. */
static bool sym_maps_bias(const char *path, uint64_t base, uint64_t *bias)
{
	GElf_Ehdr eh;
	GElf_Phdr ph;
	bool ok = false;
	Elf *elf;
	size_t n;
	int fd = rr_open_regular(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT); /* libelf's set-up, if libdwfl has not made it yet */
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &eh) &&
	    !elf_getphdrnum(elf, &n)) {
		for (size_t i = 0; i < n && !ok; i++)
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    !ph.p_offset) {
				*bias = base - (ph.p_vaddr & ~(GElf_Addr)0xfff);
				ok = true;
			}
	}
	elf_end(elf);
	close(fd);
	return ok;
}

int rip_sym_add_proc_maps(struct rip_sym *s, int pid, uint64_t start_ticks)
{
	char path[64], *line = NULL, *obj = NULL;
	uint64_t olo = 0, ohi = 0, oino = 0, bias;
	size_t cap = 0;
	int added = 0;
	FILE *f;

	if (!s || pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	/* read after the open: the maps are those of the process asked for, not of a new one */
	if (start_ticks && rr_proc_start_ticks(pid) != start_ticks) {
		fclose(f);
		return -ESRCH;
	}
	for (;;) {
		unsigned long long lo, hi, off, ino;
		ssize_t got = getline(&line, &cap, f);
		int name = 0;
		char *p = NULL;

		if (got > 0 && line[got - 1] == '\n')
			line[got - 1] = 0;
		if (got > 0 &&
		    sscanf(line, "%llx-%llx %*s %llx %*s %llu %n", &lo, &hi, &off, &ino, &name) >=
			    4 &&
		    name > 0)
			p = line + name;
		/* the next mapping of the object being read: its range grows */
		if (p && obj && ino == oino && !strcmp(p, obj)) {
			ohi = hi;
			continue;
		}
		if (obj && sym_maps_bias(obj, olo, &bias) &&
		    !rip_sym_add_module(s, olo, ohi, bias, obj, NULL, 0, 0))
			added++;
		free(obj);
		obj = NULL;
		if (got <= 0)
			break;
		/* an object starts with its mapping of offset 0, from a file that is still there */
		if (p && *p == '/' && ino && !off && !strstr(p, " (deleted)")) {
			obj = strdup(p);
			olo = lo;
			ohi = hi;
			oino = ino;
		}
	}
	free(line);
	fclose(f);
	return added;
}

void rip_sym_set_quiet(struct rip_sym *s, bool quiet)
{
	s->quiet = quiet;
}

int rip_sym_problems(struct rip_sym *s,
		     void (*cb)(const char *path, const char *why, unsigned hits, void *arg),
		     void *arg)
{
	int count = 0;

	if (!s)
		return -EINVAL;
	for (size_t i = 0; i < s->nmods; i++) {
		struct sym_mod *m = s->mods[i];

		if (!m->why || !m->hits)
			continue;
		if (cb)
			cb(m->path, m->why, m->hits, arg);
		count++;
	}
	return count;
}

void rip_sym_add_modules(struct rip_sym *sym, const struct rip_module *mods, size_t n)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			const struct rip_module *m = &mods[i];
			bool bid = m->build_id_len && m->build_id_len <= RIP_BUILD_ID_MAX;
			char path[RIP_MODULE_PATH_MAX];

			if (!!(m->flags & RIP_MOD_UNLOADED) != pass || m->lo >= m->hi)
				continue;
			memcpy(path, m->path, sizeof(path));
			path[sizeof(path) - 1] = 0;
			rip_sym_add_module(sym, m->lo, m->hi, m->bias, path, bid ? m->build_id : NULL,
					   bid ? m->build_id_len : 0, m->flags);
		}
	}
}

bool rip_sym_frame_internal(const struct rip_frame *fr)
{
	const char *b = fr->file ? strrchr(fr->file, '/') : NULL;

	b = b ? b + 1 : fr->file;
	if (fr->func && (!strncmp(fr->func, "rip_snap", 8) || !strncmp(fr->func, "__rip_", 6) ||
			 !strncmp(fr->func, "rip_coro_switch", 15)))
		return true;
	return b && (!strcmp(b, "rip.h") || !strcmp(b, "librip.h"));
}
