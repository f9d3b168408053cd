// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/fn_stacktop.c - traced functions at the very top of a stack
 * that a hand-made switch (no makecontext: assembly, as libcoro's CORO_ASM
 * or boost.context switch) runs them on, with an unmapped page just above
 * it, for func-stacktop.sh: built with -finstrument-functions and no frame
 * pointers (the hooks look for each function's return address), linked
 * with librip, run under rip run --functions.
 *
 *   fn_stacktop N
 *	main calls st_run N times; each switches to a stack of its own (two
 *	pages, mmap'd, the page above them PROT_NONE) and calls st_top right
 *	under its top.  st_top calls st_leaf, switches back to st_run's stack
 *	to call st_back there (the hooks pop st_top's frame then: the entry of
 *	a function above it on the stack they know), comes back and calls
 *	st_leaf again before it returns: its exit has no frame on the shadow
 *	stack.  Calls: main 1, st_run N, st_top N, st_back N, st_leaf 2 N.
 *	Exits 0 (1: no stack; 77: not x86-64, where no switch is written).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rip.h>

#define N __attribute__((noinline))

static volatile int sink;
static uintptr_t back_sp; /* st_run's stack pointer, for st_top's call of st_back there */

/*
 * Call fn with the stack pointer at sp (16-byte aligned) and restore it
 * after.  Every register the ABI lets fn change is clobbered; rbx keeps the
 * old stack pointer (callee-saved: fn gives it back).
 */
#if defined(__x86_64__)
#define CALL_ON(sp, fn)                                                                            \
	__asm__ volatile("mov %%rsp, %%rbx\n\t"                                                    \
			 "mov %0, %%rsp\n\t"                                                       \
			 "call *%1\n\t"                                                            \
			 "mov %%rbx, %%rsp"                                                        \
			 :                                                                         \
			 : "r"(sp), "r"(fn)                                                        \
			 : "rbx", "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",     \
			   "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", \
			   "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory", \
			   "cc")
#else
#define CALL_ON(sp, fn) ((void)(sp), (fn)()) /* (the test skips: no switch written here) */
#endif

N static void st_leaf(int x)
{
	sink += x;
}

N static void st_back(void)
{
	sink++;
}

N static void st_top(void)
{
	st_leaf(1);
	/* Back on st_run's stack, under its frame, as a coroutine switched out to its caller. */
	CALL_ON(back_sp, st_back);
	st_leaf(2);
}

N static int st_run(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t here;

	if (m == MAP_FAILED || mprotect(m + 2 * pg, pg, PROT_NONE))
		return 1;
	/* 1 KiB under this frame: st_back's calls there leave st_run's alone. */
	here = ((uintptr_t)__builtin_frame_address(0) - 1024) & ~(uintptr_t)15;
	back_sp = here;
	CALL_ON(m + 2 * pg, st_top);
	munmap(m, 3 * pg);
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;

#if !defined(__x86_64__)
	return 77;
#endif
	for (int i = 0; i < n; i++)
		if (st_run())
			return 1;
	return 0;
}
