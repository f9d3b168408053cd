/* SPDX-License-Identifier: Apache-2.0 */
/*
 * preload/unwind.h - the unwind-table walk of unwind.c, for backtrace.c.
 */
#ifndef RIP_PRELOAD_UNWIND_H
#define RIP_PRELOAD_UNWIND_H

#include <stdint.h>

/*
 * rip_pl_dwarf_walk - the return addresses above the frame of return
 * address pc whose caller's stack pointer (its CFA) is sp, rbp being fp
 * there: at most max into out.  The number of frames, or -1 when the walk
 * is not sure to give exactly what libunwind's unw_backtrace would (the
 * caller asks libunwind then).  Never allocates, locks, faults or makes a
 * system call.  Always -1 but on x86-64.
 */
int rip_pl_dwarf_walk(uintptr_t pc, uintptr_t sp, uintptr_t fp, uint64_t *out, uint32_t max);

/* From rip_pl_bt_init: the table of rules.  0 or -errno. */
int rip_pl_unwind_init(void);

#endif /* RIP_PRELOAD_UNWIND_H */
