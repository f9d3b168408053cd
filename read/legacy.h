/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/legacy.h - where the executable that wrote a raw file of the original
 * librip header was loaded.
 *
 * The original stored absolute addresses (counter << 56 | the address after
 * the snap's `lea 0(%rip)`) and no load address, so a position-independent
 * executable, as every distribution builds by default, resolves only once its
 * load bias is known: given by the user, read from /proc/PID/maps while the
 * writer runs, or found from the addresses themselves.  The last works
 * because every snapped address lies just after the 7 bytes of such a lea
 * in the executable's code (REX.W 8D, ModRM 00 reg 101, displacement 0), and
 * a load bias is a multiple of the page size: the bias that puts most of the
 * addresses there is nearly always unique.  When it is not, or when none
 * does, the search says so rather than pick one.
 *
 * The executable is read with libelf; its bytes are bounds-checked as any
 * input.  The addresses come from a hostile file: any value is fine.
 */
#ifndef RIP_READ_LEGACY_H
#define RIP_READ_LEGACY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Load biases are multiples of this (the smallest page of x86-64). */
#define LG_PAGE 4096u
/* Candidate bases an ambiguous search names. */
#define LG_SHOW 4

struct lg_exe {
	char *path;
	bool pie;	 /* ET_DYN: loaded anywhere, at a multiple of LG_PAGE */
	uint64_t lo, hi; /* the PT_LOAD segments' span, page-rounded, ELF addresses */
	uint64_t *sites; /* ELF addresses just after a snap's lea, by page offset */
	size_t nsites;
	struct lg_func *funcs; /* function symbols, by start, with the running end */
	size_t nfuncs;
	struct lg_load *loads; /* PT_LOAD segments: for /proc/PID/maps lines */
	size_t nloads;
};

/* How addresses fit one bias. */
struct lg_fit {
	size_t n;     /* distinct addresses */
	size_t snaps; /* just after a snap's lea */
	size_t funcs; /* inside a function symbol */
};

/* The outcome of lg_infer. */
struct lg_guess {
	uint64_t bias;		/* the one found (0 when none) */
	struct lg_fit fit;	/* how the addresses fit it */
	bool by_funcs;		/* no bias puts them after snaps: function bounds decided */
	size_t ncand;		/* biases that fit equally well */
	uint64_t cand[LG_SHOW]; /* the first of them, lowest first */
};

/*
 * Read the executable at path: its type, its PT_LOAD span, where the snaps'
 * leas end in its executable segments and its function symbols.  0, or
 * -errno with the reason in err (not an ELF file, no PT_LOAD, ...).
 */
int lg_exe_open(const char *path, struct lg_exe *e, char *err, size_t errlen);
void lg_exe_close(struct lg_exe *e);

/* How the n addresses (any order, repeats counted once) fit bias. */
int lg_fit(const struct lg_exe *e, uint64_t bias, const uint64_t *addr, size_t n,
	   struct lg_fit *out);

/*
 * Find the load bias of a position-independent e from the n snapped
 * addresses of a raw file: the multiple of LG_PAGE that puts the most of
 * them just after a snap's lea, if that is more than half of them and no
 * other bias does as well; else, if exactly one bias puts every address
 * inside a function symbol, that one (g->by_funcs).  0 with g filled;
 * -ENOENT when no bias fits and -ENOTUNIQ when several do (g->ncand of
 * them), both with a message in err; -E2BIG when the addresses are too many
 * to check every bias; -ENOMEM.
 */
int lg_infer(const struct lg_exe *e, const uint64_t *addr, size_t n, struct lg_guess *g, char *err,
	     size_t errlen);

/*
 * The load bias of e in running process pid, from /proc/PID/maps (the file
 * is recognised by device and inode, or by path).  0, or -errno with the
 * reason in err (-ENOENT: pid does not map e).
 */
int lg_maps_bias(pid_t pid, const struct lg_exe *e, uint64_t *bias, char *err, size_t errlen);

/*
 * Is a process other than this one running with the raw file at file mapped
 * shared and writable (its writer, or the writer's forks)?  Then *pid is the
 * lowest such pid and *bias e's load bias in it: 0.  -ENOENT when there is
 * none, silently; -ENOTUNIQ when writers disagree on the bias and -ENOEXEC
 * when the writer does not map e, with a message in err.
 */
int lg_writer_bias(const char *file, const struct lg_exe *e, pid_t *pid, uint64_t *bias, char *err,
		   size_t errlen);

#endif /* RIP_READ_LEGACY_H */
