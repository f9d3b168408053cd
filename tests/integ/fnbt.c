// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the program of tests/integ/func-unwind.sh, built with
 * -fpatchable-function-entry=5 (fnbt-patch by gcc, fnbt-patch-clang) and
 * -rdynamic (backtrace_symbols_fd names its functions).  A chain
 * fnbt_top > fnbt_mid > fnbt_leaf, each a patched function when rip run
 * --functions=GLOB picks it, prints the program's own backtrace(3), whole
 * and cut to its first 3 frames, then leaks a block of 4321 bytes (its
 * stack is what rip leaks shows); fnbt_mid then leaks 3 blocks of 5000
 * bytes and 3 of 6000 through fnbt_alloc, called at two places (the
 * second walk of a stack may come from a cache: it must tell the two).  Its output is the same whether the
 * functions are patched or not: the test compares the two.
 */
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *fnbt_keep, *fnbt_kept[6];
void fnbt_leaf(int n);
void fnbt_mid(int n);
void *fnbt_alloc(size_t size);
void fnbt_top(int n);

/* The frames as backtrace_symbols_fd says them, less their addresses, which ASLR moves. */
static void fnbt_print(void **a, int n)
{
	char **s = backtrace_symbols(a, n);

	printf("backtrace depth %d\n", n);
	for (int i = 0; s && i < n; i++) {
		char *at = strrchr(s[i], '[');

		if (at && at > s[i])
			at[-1] = '\0';
		printf("  %s\n", s[i]);
	}
	free(s);
}

__attribute__((noinline)) void fnbt_leaf(int n)
{
	void *a[64];

	fnbt_print(a, backtrace(a, 64));
	fnbt_print(a, backtrace(a, 3));
	fflush(stdout);
	fnbt_keep = malloc(4300 + (size_t)n);
}

/* A block of size bytes, leaked (its stack is where it was called from). */
__attribute__((noinline)) void *fnbt_alloc(size_t size)
{
	void *p = malloc(size);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) void fnbt_mid(int n)
{
	fnbt_leaf(n + 1);
	/* two call sites, each three times: their stacks differ in the caller's line only */
	for (int i = 0; i < 3; i++) {
		fnbt_kept[2 * i] = fnbt_alloc(5000);
		fnbt_kept[2 * i + 1] = fnbt_alloc(6000);
	}
	__asm__ volatile("");
}

__attribute__((noinline)) void fnbt_top(int n)
{
	fnbt_mid(n + 10);
	__asm__ volatile("");
}

int main(void)
{
	fnbt_top(10);
	return 0;
}
