/* SPDX-License-Identifier: Apache-2.0 */
/*
 * preload/unwind.h - the unwind-table walk of unwind.c, for backtrace.c.
 */
#ifndef RIP_PRELOAD_UNWIND_H
#define RIP_PRELOAD_UNWIND_H

#include <link.h>
#include <stdbool.h>
#include <stdint.h>

/* Loads a walk may log (see struct rip_pl_wlog): 32 frames with rbp saved in each, and more. */
#define RIP_PL_WLOG 72u

/* In a logged offset: the value is a stack address (see struct rip_pl_wlog). */
#define RIP_PL_WLOG_REL 0x80000000u

/*
 * The loads a walk's frames depend on: each load's address less the
 * walk's starting stack pointer, and the value found there (every return
 * address read; an rbp read from the stack when a later step's CFA comes
 * from rbp).  A walk is a function of its starting state (pc, sp, fp), the
 * dlclose epoch (which rules), its bounds (sp and the thread's stack top),
 * max, and these values: a later walk from the same state that finds the
 * same values at the same places gives the same frames (backtrace.c's
 * stack cache).
 *
 * More: without a signal frame (sig false), the walk uses stack addresses
 * only as offsets from sp (its bounds are sp + 8 and the stack's top; each
 * CFA comes from sp or from an rbp, whose value is a stack address, and is
 * checked against them).  Its rbp values are logged with RIP_PL_WLOG_REL in
 * their offset.  So a walk in any thread from the same pc, with fp - sp,
 * top - sp, and every load the same (the rbp values as offsets from sp)
 * gives the same frames: the same code at the same depth in two threads.
 */
struct rip_pl_wlog {
	uint32_t n;	/* loads logged; RIP_PL_WLOG + 1: too many, not kept */
	uint32_t epoch; /* the dlclose epoch of the rules used */
	bool sig;	/* stepped through a signal frame: sp itself counts */
	bool patched;	/* a return address came from librip's return stack: not kept */
	uint32_t off[RIP_PL_WLOG]; /* from sp; RIP_PL_WLOG_REL: val is a stack address */
	uint64_t val[RIP_PL_WLOG];
};

/*
 * The address a patched function's return address holds while it runs
 * (librip's exit trampoline, __rip_fn_pexit_at; UINTPTR_MAX until the
 * constructor asks, and where nothing is patched ever).  The walks take
 * the real one from librip's return stack instead (__rip_fn_ret_at): the
 * stack is the same as unpatched.  Such a walk depends on more than the
 * loads it logs (the log says "patched"): the stack cache does not keep it.
 */
extern uintptr_t rip_pl_pexit;

/*
 * rip_pl_dwarf_walk - the return addresses above the frame of return
 * address pc whose caller's stack pointer (its CFA) is sp, rbp being fp
 * there: at most max into out.  The number of frames, or -1 when the walk
 * is not sure to give exactly what libunwind's unw_backtrace would (the
 * caller asks libunwind then), -2 when it declined after stepping through
 * a signal frame (the call is in a signal handler).  The loads it depends
 * on go to log (NULL: not logged).
 * Never allocates, locks, faults or makes a system call.  Always -1 but on
 * x86-64.
 */
int rip_pl_dwarf_walk(uintptr_t pc, uintptr_t sp, uintptr_t fp, uint64_t *out, uint32_t max,
		      struct rip_pl_wlog *log);

/*
 * The same, no log, except that a walk that fails gives the frames it had
 * (0 if none): past a signal frame (-2 above), the signal handler's part
 * of the stack, the trampoline and the interrupted code's first frames,
 * for a hook of a handler that interrupted our own work (nest.c), whose
 * caller is known but whose interrupted frames are ours; else those below
 * the first frame without a rule, before libunwind is loaded
 * (backtrace.c's rip_pl_bt_early).
 */
int rip_pl_dwarf_walk_partial(uintptr_t pc, uintptr_t sp, uintptr_t fp, uint64_t *out,
			      uint32_t max);

/*
 * rip_pl_dwarf_prefix - the first frames alone (at most max), as
 * rip_pl_dwarf_walk gives them, with the rules of dlclose epoch epoch
 * (rip_pl_unwind_epoch); -1 where that walk would have to do more than
 * the common step (a signal frame, a rule it declines, a read outside the
 * stack): ask it then.  Cheaper than it: for the stack cache's key.
 */
int rip_pl_dwarf_prefix(uintptr_t pc, uintptr_t sp, uintptr_t fp, uint64_t *out, uint32_t max,
			uint32_t epoch);

/*
 * Is a the signal return trampoline a handler returns to?  Reads code only
 * inside a readable segment of the object that holds a; no lock.  Always
 * false but on x86-64.
 */
bool rip_pl_sigret_at(uintptr_t a);

/* Bumped by each dlclose (unwind.c): read through rip_pl_unwind_epoch. */
extern uint32_t rip_pl_unw_epoch;

/*
 * The dlclose epoch now (rip_pl_wlog's): a walk's log holds the one it used.
 * Inline: every hook's lookup of the stack cache reads it.
 */
static inline uint32_t rip_pl_unwind_epoch(void)
{
#if defined(__x86_64__)
	/* Acquire: pairs with the release in dlclose (unwind.c). */
	return __atomic_load_n(&rip_pl_unw_epoch, __ATOMIC_ACQUIRE);
#else
	return 0; /* no walk of the tables: no rules to date */
#endif
}

/* From rip_pl_bt_init: the table of rules.  0 or -errno. */
int rip_pl_unwind_init(void);

/*
 * The rule cache shared through RIP_RULE_CACHE (rulecache.c).
 * rip_pl_rc_get - the kept rule of return address pc, or 0; *slot is what
 * rip_pl_rc_put then wants (NULL: nothing to keep it in).
 * rip_pl_rc_put - keep the rule computed for pc, for this process's file.
 * rip_pl_rc_init - from the constructor: read RIP_RULE_CACHE, map the arena.
 * No lock, no allocation; system calls on an object's first rule only.
 */
uint64_t rip_pl_rc_get(uintptr_t pc, void **slot);
/* The program headers (*n of them) of the object mapped at base, or NULL if it has none we trust. */
const ElfW(Phdr) * rip_pl_elf_phdrs(uintptr_t base, unsigned *n);
void rip_pl_rc_put(void *slot, uintptr_t pc, uint64_t rule);
int rip_pl_rc_init(void);

#endif /* RIP_PRELOAD_UNWIND_H */
