// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the C++ program of tests/integ/func-unwind.sh, built with
 * -fpatchable-function-entry=5 (fnbtx-patch) and -rdynamic
 * (backtrace_symbols names its functions): libgcc's unwinder through
 * patched frames, by the walks and the exceptions of a C++ program.
 *
 *   walk    fnx_top > fnx_mid > fnx_leaf prints its walk of
 *           _Unwind_Backtrace, whose callback keeps each frame through a
 *           patched function (fnx_note)
 *   throw   fnx_catch > fnx_pass > fnx_cleanup > fnx_throw throws 7 up to
 *           fnx_catch; on the way, the destructor of fnx_cleanup's local
 *           (fnx_guard::~fnx_guard) prints its own walk, then calls
 *           fnx_inner, which throws 1 and catches it itself: the exception
 *           of 7 must still land in fnx_catch ("caught 7")
 *
 * throw, twice, then walk: its frames after the exceptions.  Its output is
 * the same whether the functions are patched or not, and whether
 * librip-preload.so is loaded or not: the test compares them.
 */
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

#define N __attribute__((noinline))

static volatile int sink;

/* A walk of _Unwind_Backtrace: the return addresses seen, up to max. */
struct fnx_walk {
	void **a;
	int n, max;
};

N void fnx_note(fnx_walk *w, void *ip)
{
	w->a[w->n++] = ip;
}

N static _Unwind_Reason_Code fnx_step(_Unwind_Context *ctx, void *arg)
{
	fnx_walk *w = static_cast<fnx_walk *>(arg);

	if (w->n == w->max)
		return _URC_END_OF_STACK;
	fnx_note(w, reinterpret_cast<void *>(_Unwind_GetIP(ctx)));
	return _URC_NO_REASON;
}

/* The frames of the walk as backtrace_symbols says them, less their addresses (ASLR). */
N static void fnx_print(const char *what)
{
	void *a[64];
	fnx_walk w = { a, 0, 64 };
	char **s;

	_Unwind_Backtrace(fnx_step, &w);
	s = backtrace_symbols(a, w.n);
	printf("%s: _Unwind_Backtrace depth %d\n", what, w.n);
	for (int i = 0; s && i < w.n; i++) {
		char *at = strrchr(s[i], '[');

		if (at && at > s[i])
			at[-1] = '\0';
		printf("  %s\n", s[i]);
	}
	free(s);
	fflush(stdout);
}

N void fnx_leaf(const char *what)
{
	fnx_print(what);
	sink++;
}

N void fnx_mid(const char *what)
{
	fnx_leaf(what);
	sink++;
}

N void fnx_top(const char *what)
{
	fnx_mid(what);
	sink++;
}

N void fnx_inner_throw()
{
	throw 1;
}

/* An exception thrown and caught while another unwinds the frames above. */
N void fnx_inner()
{
	try {
		fnx_inner_throw();
	} catch (int e) {
		sink += e;
	}
}

struct fnx_guard {
	N ~fnx_guard()
	{
		fnx_print("cleanup");
		fnx_inner();
	}
};

N void fnx_throw()
{
	throw 7;
}

N void fnx_cleanup()
{
	fnx_guard g;

	fnx_throw();
	sink++;
}

N void fnx_pass()
{
	fnx_cleanup();
	sink++;
}

N void fnx_catch()
{
	try {
		fnx_pass();
	} catch (int e) {
		printf("caught %d\n", e);
	}
}

int main()
{
	fnx_catch();
	fnx_catch();
	fnx_top("after");
	return 0;
}
