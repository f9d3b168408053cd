/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/data/swap-open.c - a preload library for the tests of what a
 * reader opens (tests/integ/sym-swap.sh, ring-swap.sh, gc-swap.sh): at the
 * $SWAP_AT-th open(2) of the path $SWAP_PATH (1 if unset), by any code of
 * the process, it first renames $SWAP_FROM over that path, as another
 * user who can write the directory could do between a check and an open.
 * With SWAP_EXCHANGE=1 it exchanges the two instead (renameat2
 * RENAME_EXCHANGE: a directory for a symbolic link, say), and also watches
 * opendir(3), openat(2), unlink(2) and unlinkat(2) (a name under a
 * directory descriptor is taken as that directory's path, a slash, the
 * name); what it exchanges with $SWAP_FROM is then $SWAP_DIR if set (a
 * directory on the way to $SWAP_PATH), else $SWAP_PATH.
 * Built by the test that uses it:
 *
 *	cc -shared -fPIC -o swap.so tests/data/swap-open.c -ldl
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool exchange(void)
{
	const char *x = getenv("SWAP_EXCHANGE");

	return x && !strcmp(x, "1");
}

/* path is about to be opened: swap first if it is the one, at the count asked. */
static void swap_at(const char *path)
{
	static int seen;
	const char *swap = getenv("SWAP_PATH"), *from = getenv("SWAP_FROM");
	const char *at = getenv("SWAP_AT");

	if (!swap || !from || strcmp(path, swap) || ++seen != (at ? atoi(at) : 1))
		return;
	if (getenv("SWAP_DIR"))
		swap = getenv("SWAP_DIR");
	if (exchange() ? renameat2(AT_FDCWD, from, AT_FDCWD, swap, RENAME_EXCHANGE) :
			 rename(from, swap))
		perror("swap-open: rename");
}

/* The same for path under the directory descriptor dirfd. */
static void swap_at_fd(int dirfd, const char *path)
{
	char full[PATH_MAX], link[64];
	ssize_t n;

	if (path[0] == '/' || dirfd == AT_FDCWD) {
		swap_at(path);
		return;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
	n = readlink(link, full, sizeof(full) - 1);
	if (n > 0 && (size_t)n + 1 + strlen(path) < sizeof(full)) {
		full[n] = 0;
		strcat(strcat(full, "/"), path);
		swap_at(full);
	}
}

int open(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (!real)
		real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	swap_at(path);
	return real(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	static int (*real)(int, const char *, int, ...);
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (!real)
		real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
	if (exchange())
		swap_at_fd(dirfd, path);
	return real(dirfd, path, flags, mode);
}

int unlink(const char *path)
{
	static int (*real)(const char *);

	if (!real)
		real = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
	if (exchange())
		swap_at(path);
	return real(path);
}

int unlinkat(int dirfd, const char *path, int flags)
{
	static int (*real)(int, const char *, int);

	if (!real)
		real = (int (*)(int, const char *, int))dlsym(RTLD_NEXT, "unlinkat");
	if (exchange())
		swap_at_fd(dirfd, path);
	return real(dirfd, path, flags);
}

DIR *opendir(const char *path)
{
	static DIR *(*real)(const char *);

	if (!real)
		real = (DIR * (*)(const char *)) dlsym(RTLD_NEXT, "opendir");
	if (exchange())
		swap_at(path);
	return real(path);
}
