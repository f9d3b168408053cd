/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/sym.h - turn addresses from a ring file into function, file:line and
 * inline chains, with elfutils (libdw/libelf), in the reader only.
 *
 * Modules are added with their runtime range and load bias as the ring
 * file's module map recorded them; lookups are cached per address.  Build-ids
 * are checked: a binary on disk whose build-id differs from the recorded one
 * is reported, not silently misresolved.  Separate debug files are found by
 * build-id (/usr/lib/debug/.build-id/xx/yyyy.debug) and .gnu_debuglink, under
 * the debug directories given and /usr/lib/debug.  C++ and Rust names are demangled.
 */
#ifndef RIP_READ_SYM_H
#define RIP_READ_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rip_sym;

struct rip_sym_opts {
	const char *sysroot;   /* prefix for every module path (resolving on another host) */
	const char *debug_dir; /* extra debug-file root, searched before /usr/lib/debug */
};

struct rip_frame {
	const char *func;   /* demangled function name; NULL when unknown */
	const char *file;   /* source file (as in DWARF, may be absolute); NULL when unknown */
	int line;	    /* 0 when unknown */
	int column;	    /* 0 when unknown */
	const char *module; /* path of the module the address is in; NULL: in no module */
	uint64_t offset;    /* addr - function start, or addr - bias without a function */
	bool inlined;	    /* this frame was inlined into frames[i + 1] */
	bool sigframe;	    /* the signal trampoline a handler returns to (func is
			       "<signal handler>"; no file, line or offset to show) */
};

/* 0 or -errno; *out is freed with rip_sym_free. opts may be NULL. */
int rip_sym_new(const struct rip_sym_opts *opts, struct rip_sym **out);
void rip_sym_free(struct rip_sym *sym);

/*
 * Add a module: runtime range [lo, hi), load bias (runtime address - ELF
 * address), path on the traced host, recorded build-id (NULL/0 if none),
 * RIP_MOD_* flags (RIP_MOD_VDSO modules resolve to "[vdso]" only).
 * Opening the ELF file is deferred until an address in it is looked up.
 */
int rip_sym_add_module(struct rip_sym *sym, uint64_t lo, uint64_t hi, uint64_t bias,
		       const char *path, const uint8_t *build_id, size_t build_id_len,
		       uint32_t flags);

/*
 * Add every module of a ring file's (or trace's) module map: those still
 * mapped first, so their ranges win over unloaded ones at the same place;
 * entries with an empty range or a bad build-id length are passed over.
 */
struct rip_module;
void rip_sym_add_modules(struct rip_sym *sym, const struct rip_module *mods, size_t n);

/*
 * Resolve addr.  frames[0] is the innermost (inlined) frame, the last one the
 * real function; the signal trampoline (the return address of a signal
 * handler, looked up as itself or minus one) is one frame, "<signal handler>"; returns how many frames were filled (at least 1, at most
 * max), or -errno.  An address in no module, or in a module without symbols,
 * gives one frame with func == NULL.  Strings stay valid until rip_sym_free.
 */
int rip_sym_lookup(struct rip_sym *sym, uint64_t addr, struct rip_frame *frames, int max);

/*
 * Lookups from now on only warm the cache (quiet true): the addresses they
 * resolve count for rip_sym_problems when a lookup that is not quiet asks
 * for them, so that the counts do not depend on how far a warm-up got.
 */
void rip_sym_set_quiet(struct rip_sym *sym, bool quiet);

/*
 * Names for code a JIT compiled (node --perf-basic-prof, Java's perf-map
 * agent, Erlang +JPperf, LuaJIT, ...): the perf map /tmp/perf-PID.map
 * ("START SIZE NAME" lines, hexadecimal), read now, for addresses in no
 * module (their frames name the function, with the map as their module).
 * Only a regular file owned by owner (the process's) or by the caller,
 * not writable by others, and not older than the process (start_ticks,
 * 0: unknown) is read.  The number of functions read, 0 with no map,
 * -errno when the map is refused or unreadable.
 */
int rip_sym_add_perfmap(struct rip_sym *sym, int pid, uint64_t start_ticks, uid_t owner);

/*
 * The objects a live process has mapped now (/proc/PID/maps, read only if
 * PID's start time is still start_ticks; 0: not checked), added as
 * modules after the ring file's, whose entries win where they overlap: a
 * library dlopen'd since the process last brought its module map up to
 * date (a program with one thread has no watcher that does it) resolves
 * all the same.  Their build-ids are not known: the files are taken as
 * they are on disk.  The number added, or -errno.
 */
int rip_sym_add_proc_maps(struct rip_sym *sym, int pid, uint64_t start_ticks);

/*
 * Is fr librip's own: rip_snap and what it inlines (rip.h, librip.h), the
 * coroutine switches?  rip ps and the profiles leave such frames out.
 */
bool rip_sym_frame_internal(const struct rip_frame *fr);

/*
 * Modules that lookups touched but that could not be resolved (missing file,
 * no symbols, no debug info for lines, build-id mismatch): one call each,
 * with the path, a short reason ("not found", "no symbols", "no debug info
 * (function names only)", "build-id differs: rebuilt since the trace?") and
 * how many distinct addresses landed there.  Returns the number of such modules.
 */
int rip_sym_problems(struct rip_sym *sym,
		     void (*cb)(const char *path, const char *why, unsigned hits, void *arg),
		     void *arg);

#endif /* RIP_READ_SYM_H */
