/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/prog.h - the program rip run is to run, before it runs: where
 * execvp will find it, whether LD_PRELOAD can reach it (not a statically
 * linked program; not one run in secure execution, whose loader ignores
 * LD_PRELOAD), whether a static one links librip itself, and the libraries
 * rip run preloads, found next to rip.
 */
#ifndef RIP_RECORD_PROG_H
#define RIP_RECORD_PROG_H

#include <stdbool.h>
#include <stddef.h>

/* PROG as execvp would find it (along $PATH when it has no slash).  0 or -errno. */
int prog_which(const char *prog, char *buf, size_t len);

enum {
	PROG_PRELOADABLE,
	PROG_STATIC,
	PROG_SECURE
};

/*
 * Can LD_PRELOAD reach PROG?  PROG_STATIC when it is statically linked,
 * PROG_SECURE when the loader will ignore LD_PRELOAD for it (secure
 * execution), with the message in why and the file in path (PATH_MAX
 * bytes).  A script is judged by its interpreter; what we cannot read or do
 * not understand is left to execve.
 */
int prog_preloadable(const char *prog, char *why, size_t len, char *path);

/*
 * Does the file at path hold librip's magic (a static program that links
 * librip)?  True too when it cannot be read: nothing is known then.
 */
bool prog_has_librip(const char *path);

/*
 * Does PROG (as execvp finds it, its path into path, PATH_MAX bytes) define
 * the C allocator itself, in its dynamic symbol table (a 64-bit ELF
 * executable linked with an allocator of its own)?  The name of the first
 * such function found, or NULL (none, or not known).  Its calls never reach
 * librip-preload.so's hooks.
 */
const char *prog_own_allocator(const char *prog, char *path);

/*
 * The library name next to the rip binary (the build tree), else in its
 * install libdir (../lib, ../lib64, ..): its real path into buf.  0 or
 * -ENOENT.
 */
int prog_find_lib(const char *name, char *buf, size_t len);

/*
 * The directories tracing modules are looked for in, in order (at most
 * PROG_MODULE_DIRS, each PATH_MAX bytes): next to the rip binary
 * (modules/: the build tree), its install libdir's rip/modules (../lib,
 * ../lib64), and RIP_MODULE_DIR as built.  Those that exist; their number.
 */
#define PROG_MODULE_DIRS 4
int prog_module_dirs(char dirs[][4096]);

/*
 * The module spec of rip run --module: a path (it has a slash) as it is,
 * else NAME.so in the first of prog_module_dirs that has it.  Its real path
 * into buf; 0 or -ENOENT.
 */
int prog_find_module(const char *spec, char *buf, size_t len);

/* What rip run preloads into PROG: prog_plan. */
enum {
	PROG_PLAN_OK,	       /* lib holds the library ("": none) */
	PROG_PLAN_NO_PRELOAD,  /* resource tracing needs librip-preload.so: not found */
	PROG_PLAN_NO_LIBRIP,   /* --preload: librip.so not found */
	PROG_PLAN_UNREACHABLE, /* resource tracing or --preload: LD_PRELOAD cannot reach PROG */
	PROG_PLAN_UNTRACED,    /* neither: PROG runs untraced for sure (static, secure) */
};

/*
 * The library rip run preloads into PROG (its path into lib, LIB_MAX
 * bytes; "" for none): librip-preload.so for resource tracing, librip.so
 * for --preload, else librip-preload.so for its slots and wait records
 * only (*waits) where it can reach PROG and no_waits does not say no.
 * PROG_PLAN_*; why (whylen bytes) says why LD_PRELOAD cannot reach PROG
 * whenever that was found, PROG_PLAN_OK included (a static program that
 * links librip), for a message later.
 */
int prog_plan(const char *prog, bool resources, bool preload, bool no_waits, char *lib,
	      size_t liblen, bool *waits, char *why, size_t whylen);

#endif /* RIP_RECORD_PROG_H */
