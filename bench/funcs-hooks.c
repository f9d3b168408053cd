/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/funcs-hooks.c - the hooks of three builds of bench/funcs.c, in a
 * file of their own so that the compiler calls them as it calls any
 * library's (it would inline them into the instrumented functions of the
 * same file): BENCH_HOOKS=1 does nothing (the cost of the compiler's hook
 * calls; linked into the program, and in a shared library of its own, whose
 * hooks are called through the PLT as librip's are), BENCH_HOOKS=2 reads the
 * TSC and stores 8 bytes into a thread's buffer (the floor of a timed record).
 */
#include <stdint.h>

#define NOFN __attribute__((no_instrument_function))

void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

#if BENCH_HOOKS == 1
NOFN void __cyg_profile_func_enter(void *fn, void *site)
{
	__asm__ volatile("" ::"r"(fn), "r"(site));
}

NOFN void __cyg_profile_func_exit(void *fn, void *site)
{
	__asm__ volatile("" ::"r"(fn), "r"(site));
}
#else
static __thread uint64_t floor_buf[4096] __attribute__((tls_model("initial-exec")));
static __thread uint32_t floor_pos __attribute__((tls_model("initial-exec")));

NOFN static inline uint64_t floor_tsc(void)
{
	uint64_t a, d;

	__asm__ __volatile__("rdtsc\n\tshl $32, %1\n\tor %1, %0" : "=a"(a), "=d"(d));
	return a;
}

NOFN void __cyg_profile_func_enter(void *fn, void *site)
{
	uint32_t p = floor_pos;

	floor_buf[p & 4095] = floor_tsc() << 5 | 1;
	floor_pos = p + 1;
}

NOFN void __cyg_profile_func_exit(void *fn, void *site)
{
	uint32_t p = floor_pos;

	floor_buf[p & 4095] = floor_tsc() << 5 | 2;
	floor_pos = p + 1;
}
#endif
