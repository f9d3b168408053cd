/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/data/swap-open.c - a preload library for the tests of what a
 * reader opens (tests/integ/sym-swap.sh, ring-swap.sh): at the
 * $SWAP_AT-th open(2) of the path $SWAP_PATH (1 if unset), by any code of
 * the process, it first renames $SWAP_FROM over that path, as another
 * user who can write the directory could do between a check and an open.
 * Built by the test that uses it:
 *
 *	cc -shared -fPIC -o swap.so tests/data/swap-open.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int open(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	static int seen;
	const char *swap = getenv("SWAP_PATH"), *from = getenv("SWAP_FROM");
	const char *at = getenv("SWAP_AT");
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (!real)
		real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	if (swap && from && !strcmp(path, swap) && ++seen == (at ? atoi(at) : 1) &&
	    rename(from, swap))
		perror("swap-open: rename");
	return real(path, flags, mode);
}
