/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/vgscrub.h - leave no stale copy of a leaked pointer where valgrind's
 * leak check looks, so that what valgrind calls "definitely lost" does not
 * depend on the run.
 *
 * The leak checker scans, at exit, the stack above the stack pointer and the
 * general-purpose registers.  A pointer a leaky function dropped can still sit
 * in a dead stack slot (of that function, of malloc's replacement, of a
 * lazy-binding trampoline) that the exit path later takes into a live frame
 * without writing it, or in a caller-saved register; valgrind then calls the
 * block reachable or possibly lost.  Whether it does depends on which slots
 * the exit path happens to write, which varies with the CPU (glibc picks its
 * string functions and saves vector state by CPU features), so the tests that
 * compare with valgrind failed on some machines and runs and not others.
 *
 * A program that compares with valgrind calls vg_scrub() from main after its
 * last leak and before it returns: it zeroes 64 KiB of stack under main's
 * frame (far deeper than any call the tests make, valgrind's replacements
 * included) and the caller-saved registers.  Callee-saved registers need no
 * scrubbing: every function restores its caller's values, and main's never
 * held a leaked pointer.  Build such programs with -Wl,-z,now too, so that no
 * lazy binding runs after the scrub.
 *
 * C and C++; header-only, for the programs the test scripts compile.
 */
#ifndef RIP_TESTS_VGSCRUB_H
#define RIP_TESTS_VGSCRUB_H

#include <stddef.h>

#define VG_SCRUB_BYTES (64 * 1024)

__attribute__((noinline, unused)) static void vg_scrub(void)
{
	volatile unsigned char pad[VG_SCRUB_BYTES];

	for (size_t i = 0; i < sizeof(pad); i++)
		pad[i] = 0;
#if defined(__x86_64__)
	__asm__ volatile("xor %%eax, %%eax\n\txor %%ecx, %%ecx\n\txor %%edx, %%edx\n\t"
			 "xor %%esi, %%esi\n\txor %%edi, %%edi\n\txor %%r8d, %%r8d\n\t"
			 "xor %%r9d, %%r9d\n\txor %%r10d, %%r10d\n\txor %%r11d, %%r11d"
			 ::: "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory");
#elif defined(__aarch64__)
	__asm__ volatile("mov x0, xzr\n\tmov x1, xzr\n\tmov x2, xzr\n\tmov x3, xzr\n\t"
			 "mov x4, xzr\n\tmov x5, xzr\n\tmov x6, xzr\n\tmov x7, xzr\n\t"
			 "mov x8, xzr\n\tmov x9, xzr\n\tmov x10, xzr\n\tmov x11, xzr\n\t"
			 "mov x12, xzr\n\tmov x13, xzr\n\tmov x14, xzr\n\tmov x15, xzr\n\t"
			 "mov x16, xzr\n\tmov x17, xzr" ::: "x0", "x1", "x2", "x3", "x4", "x5",
			 "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15", "x16",
			 "x17", "memory");
#endif
}

#endif /* RIP_TESTS_VGSCRUB_H */
