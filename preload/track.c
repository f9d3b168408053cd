// SPDX-License-Identifier: Apache-2.0
/*
 * preload/track.c - librip-track.so, the LD_AUDIT library of rip run
 * --track='KIND=ACQUIRE(ID),RELEASE(ID)': pairs of functions chosen on the
 * command line, traced as a resource kind of rip/module.h with no code of
 * the user's.
 *
 * The loader calls us (rtld-audit(7)) for every object it loads and every
 * symbol it binds.  la_version reads the specs from RIP_TRACK (the parser
 * of internal/track.h); la_objopen looks each tracked function up in each
 * object of the program's namespace (marking it found: rip run names the
 * ones no object had) and finds librip-preload.so's rip_mod_* functions
 * the same way; la_symbind64, when a reference of the program or of a
 * library binds to a tracked function (at a PLT or GOT relocation, lazy or
 * not, or through dlsym), hands back a trampoline instead.  A trampoline
 * calls the real function with the registers and stack arguments its
 * caller passed, and reports rip_mod_release (id read before the call) or
 * rip_mod_acquire (after it) through the module interface: librip takes
 * the stack from the trampoline's frame, whose return address is the call
 * site, and writes the event.  Our kinds are registered with
 * rip_mod_register at la_preinit (before main and the program's
 * constructors), or at a trampoline's first call if that comes first.
 *
 * What a trampoline cannot see: calls inside the object that defines the
 * function (no PLT), static programs, and calls from librip's own objects
 * (left alone on purpose).  What it cannot forward: more than 64 bytes of
 * stack arguments, x87 (long double) results, the upper halves of AVX
 * registers (arguments or results wider than 128 bits); a function that returns
 * twice (setjmp, vfork) or looks at its caller (dlopen, dlsym) must not
 * be tracked.  rip-run(1) says so.
 *
 * We run in the loader's audit namespace, with a libc of our own: nothing
 * here allocates, and the only calls into the program's namespace are the
 * rip_mod_* functions, through the addresses read from librip-preload.so's
 * symbol table.  x86-64 only, as librip-preload.so.
 */
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <internal/elfhash.h>
#include <internal/track.h>
#include <rip/module.h>

#ifndef __x86_64__
#error "librip-track.so's trampolines are x86-64 code"
#endif

#define RIP_TRK_EXPORT __attribute__((visibility("default")))
#define RIP_TRK_STR_(x) #x
#define RIP_TRK_STR(x) RIP_TRK_STR_(x)
#define RIP_TRK_SLOTS 64 /* trampolines: (function, definition) pairs bound (the .rept's count) */
#define RIP_TRK_STUB 16u  /* bytes of each trampoline's stub */
#define RIP_TRK_SIZE 1u	  /* the size reported with each acquisition: one object */

static struct rip_track_spec rip_trk_specs[RIP_TRACK_MAX];
static unsigned rip_trk_nspecs;
/* Per spec, 1 << 0: its acquiring function was found in an object; 1 << 1: its releasing one. */
static uint8_t rip_trk_found[RIP_TRACK_MAX];
static char rip_trk_dir[PATH_MAX]; /* $RIP_RING/track/, where found functions are marked */

/* librip-preload.so's module interface, read from its symbol table (la_objopen). */
typedef int rip_trk_register_t(const struct rip_modinfo *, const struct rip_modinfo *,
			       const struct rip_modreal *, const struct rip_modreal *,
			       const void *);
typedef void rip_trk_acquire_t(uint32_t, uint64_t, uint64_t);
typedef void rip_trk_release_t(uint32_t, uint64_t);
static rip_trk_register_t *rip_trk_register_fn;
static rip_trk_acquire_t *rip_trk_acquire_fn;
static rip_trk_release_t *rip_trk_release_fn;

/* Our module and kinds, as RIP_MODULE and RIP_KIND would make them; ids set by registration. */
static struct rip_modinfo rip_trk_info[1 + RIP_TRACK_MAX];
static uint32_t rip_trk_kind[RIP_TRACK_MAX];
static int rip_trk_registered; /* 0: not yet, 1: under way, 2: done (whatever it said) */

/* Our own dynamic section (what rip_mod_register tells modules apart by). */
extern const char rip_trk_dynamic[] __asm__("_DYNAMIC") __attribute__((visibility("hidden")));

/* One trampoline: the function it calls, and which spec and side it reports. */
struct rip_trk_slot {
	void *real;
	uint16_t spec;
	bool acquire;
	int ready; /* the fields above are whole (release; read with acquire) */
};

static struct rip_trk_slot rip_trk_slots[RIP_TRK_SLOTS];
static unsigned rip_trk_taken;	 /* slots taken, ready or being filled */
static unsigned rip_trk_dropped; /* bindings left untraced: no slot was free */

/*
 * What a trampoline keeps on its stack while it runs (rip_trk_common): the
 * caller's argument registers, and the report to make from the
 * trampoline's own frame (fn NULL: none).  Offsets are the assembly's.
 */
struct rip_trk_frame {
	uint64_t arg[6]; /* rdi, rsi, rdx, rcx, r8, r9 as the caller passed them */
	uint64_t rax;	 /* al: the vector registers a variadic call uses */
	uint64_t slot;
	uint64_t ret; /* the real function before the call; rax after it */
	uint64_t rdx;
	void *fn; /* rip_mod_release or rip_mod_acquire; NULL: nothing to report */
	uint64_t a[3];
};

_Static_assert(sizeof(struct rip_trk_frame) == 112, "the assembly's offsets");
_Static_assert(RIP_TRACK_KIND_MAX <= RIP_KIND_NAME_MAX, "a kind's name fits a module's");

/* The stubs: RIP_TRK_SLOTS of RIP_TRK_STUB bytes, slot i's at rip_trk_stubs + i * 16. */
extern const char rip_trk_stubs[] __attribute__((visibility("hidden")));
extern const char rip_trk_stubs_end[] __attribute__((visibility("hidden")));

/*
 * rip_trk_common: the frame is rbp's (so that librip's walk finds the call
 * site as this frame's return address), 304 bytes below it: [0, 64) the
 * stack arguments copied for the real call, [64, 192) xmm0-7 (the
 * results' xmm0-1 after the call), [192, 304) struct rip_trk_frame.
 */
__asm__(".text\n"
	".p2align 4\n"
	".type rip_trk_common, @function\n"
	"rip_trk_common:\n"
	".cfi_startproc\n"
	"	pushq %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"	movq %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"	subq $304, %rsp\n"
	"	movq %rdi, 192(%rsp)\n"
	"	movq %rsi, 200(%rsp)\n"
	"	movq %rdx, 208(%rsp)\n"
	"	movq %rcx, 216(%rsp)\n"
	"	movq %r8, 224(%rsp)\n"
	"	movq %r9, 232(%rsp)\n"
	"	movq %rax, 240(%rsp)\n"
	"	movq %r11, 248(%rsp)\n"
	"	movaps %xmm0, 64(%rsp)\n"
	"	movaps %xmm1, 80(%rsp)\n"
	"	movaps %xmm2, 96(%rsp)\n"
	"	movaps %xmm3, 112(%rsp)\n"
	"	movaps %xmm4, 128(%rsp)\n"
	"	movaps %xmm5, 144(%rsp)\n"
	"	movaps %xmm6, 160(%rsp)\n"
	"	movaps %xmm7, 176(%rsp)\n"
	"	leaq 192(%rsp), %rdi\n"
	"	call rip_trk_before\n"
	"	movq 272(%rsp), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	movq 280(%rsp), %rdi\n"
	"	movq 288(%rsp), %rsi\n"
	"	movq 296(%rsp), %rdx\n"
	"	call *%rax\n"
	"1:\n"
	"	movdqu 16(%rbp), %xmm0\n"
	"	movaps %xmm0, 0(%rsp)\n"
	"	movdqu 32(%rbp), %xmm0\n"
	"	movaps %xmm0, 16(%rsp)\n"
	"	movdqu 48(%rbp), %xmm0\n"
	"	movaps %xmm0, 32(%rsp)\n"
	"	movdqu 64(%rbp), %xmm0\n"
	"	movaps %xmm0, 48(%rsp)\n"
	"	movaps 64(%rsp), %xmm0\n"
	"	movaps 80(%rsp), %xmm1\n"
	"	movaps 96(%rsp), %xmm2\n"
	"	movaps 112(%rsp), %xmm3\n"
	"	movaps 128(%rsp), %xmm4\n"
	"	movaps 144(%rsp), %xmm5\n"
	"	movaps 160(%rsp), %xmm6\n"
	"	movaps 176(%rsp), %xmm7\n"
	"	movq 192(%rsp), %rdi\n"
	"	movq 200(%rsp), %rsi\n"
	"	movq 208(%rsp), %rdx\n"
	"	movq 216(%rsp), %rcx\n"
	"	movq 224(%rsp), %r8\n"
	"	movq 232(%rsp), %r9\n"
	"	movq 240(%rsp), %rax\n"
	"	movq 256(%rsp), %r11\n"
	"	call *%r11\n"
	"	movq %rax, 256(%rsp)\n"
	"	movq %rdx, 264(%rsp)\n"
	"	movaps %xmm0, 64(%rsp)\n"
	"	movaps %xmm1, 80(%rsp)\n"
	"	leaq 192(%rsp), %rdi\n"
	"	call rip_trk_after\n"
	"	movq 272(%rsp), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 2f\n"
	"	movq 280(%rsp), %rdi\n"
	"	movq 288(%rsp), %rsi\n"
	"	movq 296(%rsp), %rdx\n"
	"	call *%rax\n"
	"2:\n"
	"	movq 256(%rsp), %rax\n"
	"	movq 264(%rsp), %rdx\n"
	"	movaps 64(%rsp), %xmm0\n"
	"	movaps 80(%rsp), %xmm1\n"
	"	leave\n"
	".cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size rip_trk_common, .-rip_trk_common\n"
	/*
	 * Each stub (reached by an indirect call: an IBT landing pad first):
	 * its slot's number in r11 (no argument's register), then the common
	 * part.  At most 4 + 6 + 5 bytes: 16 apart.
	 */
	".p2align 4\n"
	".hidden rip_trk_stubs\n"
	".hidden rip_trk_stubs_end\n"
	"rip_trk_stubs:\n"
	".cfi_startproc\n"
	".set rip_trk_i, 0\n"
	".rept " RIP_TRK_STR(RIP_TRK_SLOTS) "\n"
	"	endbr64\n"
	"	movl $rip_trk_i, %r11d\n"
	"	jmp rip_trk_common\n"
	"	.p2align 4\n"
	".set rip_trk_i, rip_trk_i + 1\n"
	".endr\n"
	".cfi_endproc\n"
	"rip_trk_stubs_end:\n");

/* Register our kinds with librip-preload.so, once (la_preinit, or a trampoline before it). */
static void rip_trk_register(void)
{
	int expect = 0;

	/* Acquire/release: the one that registers publishes the kinds' ids with the state. */
	if (__atomic_load_n(&rip_trk_registered, __ATOMIC_ACQUIRE) == 2 ||
	    !__atomic_compare_exchange_n(&rip_trk_registered, &expect, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	if (rip_trk_register_fn)
		rip_trk_register_fn(rip_trk_info, rip_trk_info + 1 + rip_trk_nspecs, NULL, NULL,
				    rip_trk_dynamic);
	__atomic_store_n(&rip_trk_registered, 2, __ATOMIC_RELEASE);
}

/* The id fn's spec says, from the frame (before or after the call); 0: none. */
static uint64_t rip_trk_id(const struct rip_track_fn *fn, const struct rip_trk_frame *f)
{
	uint64_t v;

	switch (fn->where) {
	case RIP_TRACK_RET:
		return f->ret;
	case RIP_TRACK_ARG:
		return f->arg[fn->arg - 1];
	case RIP_TRACK_DEREF:
		v = f->arg[fn->arg - 1];
		/* A null pointer: nothing was made (or is released) through it. */
		return v ? *(const uint64_t *)(uintptr_t)v : 0;
	}
	return 0;
}

/*
 * A slot's kind (0 while unregistered: nothing is reported).  Registering
 * here happens only for a call made before la_preinit (from a library's
 * constructor); the program's errno may then change (librip's, not ours).
 */
static uint32_t rip_trk_kind_of(const struct rip_trk_slot *s)
{
	if (__atomic_load_n(&rip_trk_registered, __ATOMIC_ACQUIRE) != 2)
		rip_trk_register();
	return __atomic_load_n(&rip_trk_kind[s->spec], __ATOMIC_RELAXED);
}

/* Before the real call: a release's report; the real function into f->ret. */
__attribute__((visibility("hidden"), used)) void rip_trk_before(struct rip_trk_frame *f);
void rip_trk_before(struct rip_trk_frame *f)
{
	const struct rip_trk_slot *s = &rip_trk_slots[f->slot];
	uint32_t kind;
	uint64_t id;

	f->ret = (uint64_t)(uintptr_t)s->real;
	f->fn = NULL;
	if (s->acquire || !rip_trk_release_fn)
		return;
	kind = rip_trk_kind_of(s);
	id = rip_trk_id(&rip_trk_specs[s->spec].rel, f);
	if (!kind || !id)
		return;
	f->fn = (void *)rip_trk_release_fn;
	f->a[0] = kind;
	f->a[1] = id;
}

/* After the real call (its result in f->ret): an acquisition's report. */
__attribute__((visibility("hidden"), used)) void rip_trk_after(struct rip_trk_frame *f);
void rip_trk_after(struct rip_trk_frame *f)
{
	const struct rip_trk_slot *s = &rip_trk_slots[f->slot];
	uint32_t kind;
	uint64_t id;

	f->fn = NULL;
	if (!s->acquire || !rip_trk_acquire_fn)
		return;
	kind = rip_trk_kind_of(s);
	id = rip_trk_id(&rip_trk_specs[s->spec].acq, f);
	if (!kind || !id)
		return;
	f->fn = (void *)rip_trk_acquire_fn;
	f->a[0] = kind;
	f->a[1] = id;
	f->a[2] = RIP_TRK_SIZE;
}

/* ---- the objects' symbol tables ---- */

struct rip_trk_obj {
	uintptr_t base;
	const ElfW(Sym) *sym;
	const char *str;
	const uint32_t *gnu, *hash;
};

/* glibc rewrites the dynamic section's addresses with the base added; other loaders do not. */
static uintptr_t rip_trk_dyn_addr(const struct rip_trk_obj *o, uintptr_t v)
{
	return v < o->base ? v + o->base : v;
}

static bool rip_trk_obj_init(const struct link_map *l, struct rip_trk_obj *o)
{
	memset(o, 0, sizeof(*o));
	o->base = l->l_addr;
	if (!l->l_ld)
		return false;
	for (const ElfW(Dyn) *d = l->l_ld; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_SYMTAB)
			o->sym = (const ElfW(Sym) *)rip_trk_dyn_addr(o, d->d_un.d_ptr);
		else if (d->d_tag == DT_STRTAB)
			o->str = (const char *)rip_trk_dyn_addr(o, d->d_un.d_ptr);
		else if (d->d_tag == DT_GNU_HASH)
			o->gnu = (const uint32_t *)rip_trk_dyn_addr(o, d->d_un.d_ptr);
		else if (d->d_tag == DT_HASH)
			o->hash = (const uint32_t *)rip_trk_dyn_addr(o, d->d_un.d_ptr);
	}
	return o->sym && o->str && (o->gnu || o->hash);
}

/* Is symbol i a function (or IFUNC) named name that o defines and exports? */
static bool rip_trk_sym_ok(const struct rip_trk_obj *o, uint32_t i, const char *name)
{
	const ElfW(Sym) *s = &o->sym[i];
	unsigned type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);

	return s->st_shndx != SHN_UNDEF && (bind == STB_GLOBAL || bind == STB_WEAK) &&
	       ELF64_ST_VISIBILITY(s->st_other) == STV_DEFAULT &&
	       (type == STT_FUNC || type == STT_GNU_IFUNC) && !strcmp(o->str + s->st_name, name);
}

/* rip_trk_sym_ok for rip_elf_hash_find. */
static bool rip_trk_sym_ok_cb(const void *o, uint32_t i, const char *name, unsigned ver)
{
	(void)ver;
	return rip_trk_sym_ok(o, i, name);
}

/* The address of o's definition of name (not for an IFUNC: its resolver's), 0 if none. */
static uintptr_t rip_trk_lookup(const struct rip_trk_obj *o, const char *name)
{
	uint32_t i = rip_elf_hash_find(o->gnu, o->hash, name, rip_trk_sym_ok_cb, o, 0);

	return i ? o->base + o->sym[i].st_value : 0;
}

/*
 * Mark name found: the directory $RIP_RING/track/NAME, which rip run looks
 * for at the end (a directory: no descriptor is ever open in the program).
 */
static void rip_trk_mark(const char *name)
{
	char path[PATH_MAX];
	int saved = errno;

	if (rip_trk_dir[0] &&
	    snprintf(path, sizeof(path), "%s%s", rip_trk_dir, name) < (int)sizeof(path))
		mkdir(path, 0700);
	errno = saved;
}

static void rip_trk_found_fn(unsigned i, unsigned side)
{
	const struct rip_track_spec *t = &rip_trk_specs[i];

	/* Relaxed: a flag alone; two threads that both mark it make the same directory. */
	if (__atomic_fetch_or(&rip_trk_found[i], (uint8_t)(1u << side), __ATOMIC_RELAXED) &
	    (1u << side))
		return;
	rip_trk_mark(side ? t->rel.name : t->acq.name);
}

/* librip's own objects: their calls are never redirected. */
static bool rip_trk_ours(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, "librip.so", 9) || !strncmp(b, "librip-preload.so", 17);
}

/* ---- the audit interface (rtld-audit(7)) ---- */

RIP_TRK_EXPORT unsigned int la_version(unsigned int version)
{
	const char *s, *ring;
	char err[256];

	/* Secure execution: nothing, whatever the environment says (0: the loader drops us). */
	if (getauxval(AT_SECURE) || version < 1)
		return 0;
	if (rip_trk_stubs_end - rip_trk_stubs != RIP_TRK_SLOTS * RIP_TRK_STUB)
		return 0;
	s = secure_getenv(RIP_TRACK_ENV);
	if (!s || !*s)
		return 0;
	if (rip_track_parse_list(s, rip_trk_specs, RIP_TRACK_MAX, &rip_trk_nspecs, err,
				 sizeof(err))) {
		dprintf(2, "librip-track.so: %s: %s; nothing is tracked\n", RIP_TRACK_ENV, err);
		return 0;
	}
	ring = secure_getenv("RIP_RING");
	if (ring && ring[0] == '/' &&
	    snprintf(rip_trk_dir, sizeof(rip_trk_dir), "%s%strack/", ring,
		     ring[strlen(ring) - 1] == '/' ? "" : "/") >= (int)sizeof(rip_trk_dir))
		rip_trk_dir[0] = '\0';
	rip_trk_info[0] = (struct rip_modinfo){ .magic = RIP_MODINFO_MAGIC,
						.what = RIP_MODINFO_MODULE,
						.api = RIP_MODULE_API,
						.name = "track",
						.desc = "functions traced by rip run --track" };
	for (unsigned i = 0; i < rip_trk_nspecs; i++) {
		struct rip_modinfo *k = &rip_trk_info[1 + i];
		const struct rip_track_spec *t = &rip_trk_specs[i];

		*k = (struct rip_modinfo){ .magic = RIP_MODINFO_MAGIC,
					   .what = RIP_MODINFO_KIND,
					   .api = RIP_MODULE_API,
					   .id = &rip_trk_kind[i] };
		memcpy(k->name, t->kind, sizeof(t->kind));
		snprintf(k->desc, sizeof(k->desc), "%.40s() to %.40s()", t->acq.name, t->rel.name);
	}
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}

RIP_TRK_EXPORT unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	struct rip_trk_obj o;
	bool ours;

	(void)cookie;
	/* Our own namespace (this library and its libc) is not the program's. */
	if (lmid != LM_ID_BASE)
		return 0;
	ours = map->l_name && rip_trk_ours(map->l_name);
	if (rip_trk_obj_init(map, &o)) {
		uintptr_t reg = rip_trk_lookup(&o, "rip_mod_register");

		if (reg && !rip_trk_register_fn) {
			rip_trk_acquire_fn =
				(rip_trk_acquire_t *)rip_trk_lookup(&o, "rip_mod_acquire");
			rip_trk_release_fn =
				(rip_trk_release_t *)rip_trk_lookup(&o, "rip_mod_release");
			if (rip_trk_acquire_fn && rip_trk_release_fn)
				rip_trk_register_fn = (rip_trk_register_t *)reg;
		}
		for (unsigned i = 0; i < rip_trk_nspecs; i++) {
			if (rip_trk_lookup(&o, rip_trk_specs[i].acq.name))
				rip_trk_found_fn(i, 0);
			if (rip_trk_lookup(&o, rip_trk_specs[i].rel.name))
				rip_trk_found_fn(i, 1);
		}
	}
	return ours ? LA_FLG_BINDTO : LA_FLG_BINDTO | LA_FLG_BINDFROM;
}

RIP_TRK_EXPORT void la_preinit(uintptr_t *cookie)
{
	(void)cookie;
	rip_trk_register();
}

/*
 * The trampoline for the function of spec i, side acquire, defined at real;
 * NULL when none is free.  Lazy bindings of two threads can come at once
 * (the loader takes no lock for them): a slot is taken with an atomic add
 * and published by its ready flag, and two threads binding the same
 * function at once may each fill one (both work).
 */
static void *rip_trk_tramp(unsigned i, bool acquire, void *real)
{
	unsigned n = __atomic_load_n(&rip_trk_taken, __ATOMIC_RELAXED);
	struct rip_trk_slot *s;

	for (unsigned k = 0; k < n && k < RIP_TRK_SLOTS; k++) {
		s = &rip_trk_slots[k];
		/* Acquire: pairs with the release below, the fields are whole. */
		if (__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE) && s->real == real &&
		    s->spec == i && s->acquire == acquire)
			return (void *)(rip_trk_stubs + k * RIP_TRK_STUB);
	}
	n = __atomic_fetch_add(&rip_trk_taken, 1, __ATOMIC_RELAXED);
	if (n >= RIP_TRK_SLOTS) {
		if (!__atomic_fetch_add(&rip_trk_dropped, 1, __ATOMIC_RELAXED))
			dprintf(2,
				"librip-track.so: more than %u definitions of tracked functions: "
				"calls of the rest are not traced\n",
				(unsigned)RIP_TRK_SLOTS);
		return NULL;
	}
	s = &rip_trk_slots[n];
	s->real = real;
	s->spec = (uint16_t)i;
	s->acquire = acquire;
	/*
	 * Release: the slot is whole before its trampoline is handed out (and
	 * before the scan above takes it); the trampoline itself is reached
	 * only through the address we return, after this.
	 */
	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
	return (void *)(rip_trk_stubs + n * RIP_TRK_STUB);
}

RIP_TRK_EXPORT uintptr_t la_symbind64(Elf64_Sym *sym, unsigned int ndx, uintptr_t *refcook,
				      uintptr_t *defcook, unsigned int *flags, const char *symname)
{
	unsigned type = ELF64_ST_TYPE(sym->st_info);

	(void)ndx, (void)refcook, (void)defcook, (void)flags;
	/* Functions only: a variable of a tracked name is bound as it is. */
	if (type != STT_FUNC && type != STT_GNU_IFUNC)
		return sym->st_value;
	for (unsigned i = 0; i < rip_trk_nspecs; i++) {
		const struct rip_track_spec *t = &rip_trk_specs[i];
		bool acq = !strcmp(symname, t->acq.name);
		void *tramp;

		if (!acq && strcmp(symname, t->rel.name))
			continue;
		rip_trk_found_fn(i, !acq);
		tramp = rip_trk_tramp(i, acq, (void *)(uintptr_t)sym->st_value);
		return tramp ? (uintptr_t)tramp : sym->st_value;
	}
	return sym->st_value;
}
