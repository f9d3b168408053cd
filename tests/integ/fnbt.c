// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the program of tests/integ/func-unwind.sh, built with
 * -fpatchable-function-entry=5 (fnbt-patch by gcc, fnbt-patch-clang) and
 * -rdynamic (backtrace_symbols_fd names its functions).  A chain
 * fnbt_top > fnbt_mid > fnbt_leaf, each a patched function when rip run
 * --functions=GLOB picks it, prints the program's own backtrace(3), whole
 * and cut to its first 3 frames, and its own walk of libgcc's
 * _Unwind_Backtrace, whole and stopped by its callback after 3 frames (the
 * callback, fnbt_step, keeps each frame through fnbt_note: patched
 * functions called while the walk runs), then leaks a block of 4321 bytes
 * (its stack is what rip leaks shows); fnbt_mid then leaks 3 blocks of
 * 5000 bytes and 3 of 6000 through fnbt_alloc, called at two places (the
 * second walk of a stack may come from a cache: it must tell the two).
 * Its output is the same whether the functions are patched or not, and
 * whether librip-preload.so is loaded or not: the test compares them.
 */
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

void *fnbt_keep, *fnbt_kept[6];
void fnbt_leaf(int n);
void fnbt_mid(int n);
void *fnbt_alloc(size_t size);
void fnbt_top(int n);

/* A walk of _Unwind_Backtrace: the return addresses seen, up to max. */
struct fnbt_walk {
	void **a;
	int n, max;
};

void fnbt_note(struct fnbt_walk *w, void *ip);

/* The frames as backtrace_symbols_fd says them, less their addresses, which ASLR moves. */
static void fnbt_print(const char *by, void **a, int n)
{
	char **s = backtrace_symbols(a, n);

	printf("%s depth %d\n", by, n);
	for (int i = 0; s && i < n; i++) {
		char *at = strrchr(s[i], '[');

		if (at && at > s[i])
			at[-1] = '\0';
		printf("  %s\n", s[i]);
	}
	free(s);
}

__attribute__((noinline)) void fnbt_note(struct fnbt_walk *w, void *ip)
{
	w->a[w->n++] = ip;
}

/* The callback of the walk: each frame's address through fnbt_note, then stop at max. */
__attribute__((noinline)) static _Unwind_Reason_Code fnbt_step(struct _Unwind_Context *ctx,
							       void *arg)
{
	struct fnbt_walk *w = arg;

	if (w->n == w->max)
		return _URC_END_OF_STACK;
	fnbt_note(w, (void *)_Unwind_GetIP(ctx));
	return _URC_NO_REASON;
}

/* The frames of _Unwind_Backtrace, at most max. */
static int fnbt_unwind(void **a, int max)
{
	struct fnbt_walk w = { a, 0, max };

	_Unwind_Backtrace(fnbt_step, &w);
	return w.n;
}

__attribute__((noinline)) void fnbt_leaf(int n)
{
	void *a[64];

	fnbt_print("backtrace", a, backtrace(a, 64));
	fnbt_print("backtrace", a, backtrace(a, 3));
	fnbt_print("_Unwind_Backtrace", a, fnbt_unwind(a, 64));
	fnbt_print("_Unwind_Backtrace", a, fnbt_unwind(a, 3));
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
