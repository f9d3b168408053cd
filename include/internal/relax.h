/* SPDX-License-Identifier: Apache-2.0 */
/*
 * internal/relax.h - what a thread does between two polls of a word another
 * thread will change: tell the processor it spins (x86 pause, arm yield), so
 * that it saves power and yields to a sibling hyperthread.  Shared by librip
 * (lib/ring.c, a writer waiting for its consumer) and the passes' reader
 * thread (analysis/live.c).  Not installed, like internal/clock.h.
 */
#ifndef RIP_INTERNAL_RELAX_H
#define RIP_INTERNAL_RELAX_H

static inline void rip_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif /* RIP_INTERNAL_RELAX_H */
