// SPDX-License-Identifier: Apache-2.0
/*
 * modules/memtransfer.c - the memtransfer tracing module (rip run
 * --module=memtransfer): the bytes that memcpy, memmove, memset, the string
 * copies and their wide twins move, per stack, as sp-rtrace's memtransfer
 * module counted them.  Each call is one res:transfer of the bytes written
 * (the destination is the id; a string's copy counts its terminating NUL),
 * a counter: nothing stays live, and rip report lists the sites that copied
 * most.
 *
 * What it cannot see: copies the compiler inlines (small fixed sizes),
 * those inside libc (its own calls do not go through the PLT), and the
 * loader's.  Written against <rip/module.h> alone; built with -fno-builtin,
 * so that nothing here becomes a call of the functions it defines.  Calls
 * made by the tracer itself (the unwinder's copies) are dropped by librip's
 * re-entry guard.
 */
#include <stddef.h>
#include <string.h>
#include <wchar.h>

#include <rip/module.h>

RIP_MODULE("memtransfer", "bytes moved by memcpy, memmove, memset, strcpy and friends");
RIP_KIND(copy_kind, "memtransfer", "bytes copied or set, per stack", RIP_KIND_COUNTER);

#define EXPORT __attribute__((visibility("default")))

/* The real function of a wrapper, or the wrapper returns FAIL (the loader's copy is gone). */
#define REAL(NAME, FAIL)                                                                           \
	if (!RIP_REAL(real, #NAME))                                                                \
	return FAIL

EXPORT void *memcpy(void *dst, const void *src, size_t n)
{
	static void *(*real)(void *, const void *, size_t);
	void *ret;

	REAL(memcpy, dst);
	ret = real(dst, src, n);
	rip_transfer(copy_kind, dst, n);
	return ret;
}

EXPORT void *mempcpy(void *dst, const void *src, size_t n)
{
	static void *(*real)(void *, const void *, size_t);
	void *ret;

	REAL(mempcpy, dst);
	ret = real(dst, src, n);
	rip_transfer(copy_kind, dst, n);
	return ret;
}

EXPORT void *memmove(void *dst, const void *src, size_t n)
{
	static void *(*real)(void *, const void *, size_t);
	void *ret;

	REAL(memmove, dst);
	ret = real(dst, src, n);
	rip_transfer(copy_kind, dst, n);
	return ret;
}

EXPORT void *memset(void *dst, int c, size_t n)
{
	static void *(*real)(void *, int, size_t);
	void *ret;

	REAL(memset, dst);
	ret = real(dst, c, n);
	rip_transfer(copy_kind, dst, n);
	return ret;
}

EXPORT void bcopy(const void *src, void *dst, size_t n)
{
	static void (*real)(const void *, void *, size_t);

	REAL(bcopy, );
	real(src, dst, n);
	rip_transfer(copy_kind, dst, n);
}

EXPORT void bzero(void *dst, size_t n)
{
	static void (*real)(void *, size_t);

	REAL(bzero, );
	real(dst, n);
	rip_transfer(copy_kind, dst, n);
}

EXPORT char *strcpy(char *dst, const char *src)
{
	static char *(*real)(char *, const char *);
	size_t n = strlen(src) + 1;
	char *ret;

	REAL(strcpy, dst);
	ret = real(dst, src);
	rip_transfer(copy_kind, dst, n);
	return ret;
}

EXPORT char *stpcpy(char *dst, const char *src)
{
	static char *(*real)(char *, const char *);
	size_t n = strlen(src) + 1;
	char *ret;

	REAL(stpcpy, dst);
	ret = real(dst, src);
	rip_transfer(copy_kind, dst, n);
	return ret;
}

EXPORT char *strncpy(char *dst, const char *src, size_t n)
{
	static char *(*real)(char *, const char *, size_t);
	char *ret;

	REAL(strncpy, dst);
	ret = real(dst, src, n);
	rip_transfer(copy_kind, dst, n); /* strncpy writes n bytes, padding with NULs */
	return ret;
}

EXPORT char *strcat(char *dst, const char *src)
{
	static char *(*real)(char *, const char *);
	size_t n = strlen(src) + 1;
	char *ret;

	REAL(strcat, dst);
	ret = real(dst, src);
	rip_transfer(copy_kind, dst, n);
	return ret;
}

EXPORT char *strncat(char *dst, const char *src, size_t n)
{
	static char *(*real)(char *, const char *, size_t);
	size_t k = strnlen(src, n) + 1;
	char *ret;

	REAL(strncat, dst);
	ret = real(dst, src, n);
	rip_transfer(copy_kind, dst, k);
	return ret;
}

EXPORT char *strdup(const char *s)
{
	static char *(*real)(const char *);
	char *ret;

	REAL(strdup, NULL);
	ret = real(s);
	if (ret)
		rip_transfer(copy_kind, ret, strlen(ret) + 1);
	return ret;
}

EXPORT char *strndup(const char *s, size_t n)
{
	static char *(*real)(const char *, size_t);
	char *ret;

	REAL(strndup, NULL);
	ret = real(s, n);
	if (ret)
		rip_transfer(copy_kind, ret, strlen(ret) + 1);
	return ret;
}

EXPORT wchar_t *wmemcpy(wchar_t *dst, const wchar_t *src, size_t n)
{
	static wchar_t *(*real)(wchar_t *, const wchar_t *, size_t);
	wchar_t *ret;

	REAL(wmemcpy, dst);
	ret = real(dst, src, n);
	rip_transfer(copy_kind, dst, n * sizeof(wchar_t));
	return ret;
}

EXPORT wchar_t *wmemmove(wchar_t *dst, const wchar_t *src, size_t n)
{
	static wchar_t *(*real)(wchar_t *, const wchar_t *, size_t);
	wchar_t *ret;

	REAL(wmemmove, dst);
	ret = real(dst, src, n);
	rip_transfer(copy_kind, dst, n * sizeof(wchar_t));
	return ret;
}

EXPORT wchar_t *wmemset(wchar_t *dst, wchar_t c, size_t n)
{
	static wchar_t *(*real)(wchar_t *, wchar_t, size_t);
	wchar_t *ret;

	REAL(wmemset, dst);
	ret = real(dst, c, n);
	rip_transfer(copy_kind, dst, n * sizeof(wchar_t));
	return ret;
}

EXPORT wchar_t *wcscpy(wchar_t *dst, const wchar_t *src)
{
	static wchar_t *(*real)(wchar_t *, const wchar_t *);
	size_t n = (wcslen(src) + 1) * sizeof(wchar_t);
	wchar_t *ret;

	REAL(wcscpy, dst);
	ret = real(dst, src);
	rip_transfer(copy_kind, dst, n);
	return ret;
}

EXPORT wchar_t *wcsncpy(wchar_t *dst, const wchar_t *src, size_t n)
{
	static wchar_t *(*real)(wchar_t *, const wchar_t *, size_t);
	wchar_t *ret;

	REAL(wcsncpy, dst);
	ret = real(dst, src, n);
	rip_transfer(copy_kind, dst, n * sizeof(wchar_t));
	return ret;
}

EXPORT wchar_t *wcscat(wchar_t *dst, const wchar_t *src)
{
	static wchar_t *(*real)(wchar_t *, const wchar_t *);
	size_t n = (wcslen(src) + 1) * sizeof(wchar_t);
	wchar_t *ret;

	REAL(wcscat, dst);
	ret = real(dst, src);
	rip_transfer(copy_kind, dst, n);
	return ret;
}

EXPORT wchar_t *wcsdup(const wchar_t *s)
{
	static wchar_t *(*real)(const wchar_t *);
	wchar_t *ret;

	REAL(wcsdup, NULL);
	ret = real(s);
	if (ret)
		rip_transfer(copy_kind, ret, (wcslen(ret) + 1) * sizeof(wchar_t));
	return ret;
}
