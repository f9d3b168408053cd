#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: after fork in a multithreaded program, only
# async-signal-safe calls are allowed until exec, and librip's and the
# preload library's fork-child handlers run exactly then.  An interposer
# loaded first counts the calls the child makes between the start of its
# fork handlers and fork's return to functions that are not: malloc and
# family, pthread_create, qsort, snprintf and fopen.  trust_prog fork (300
# threads gone, one alive, then fork) under RIP_RING with the preload
# library and --mem's environment, fork followed: no such call.
. tests/data/common.sh
prog=$BUILD/tests/integ/trust_prog
need_bin "$prog" "$RIP"
CC=${CC:-cc}
need_cmd "$CC"

cat >"$TEST_TMP/count.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* set before fork in the parent, inherited by the child, cleared when fork returns */
static volatile int forking;
static pid_t parent;
static char calls[512];
static pid_t (*real_fork)(void);
extern void *__libc_malloc(size_t), *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static void note(const char *what)
{
	if (forking && getpid() != parent && strlen(calls) + strlen(what) + 2 < sizeof(calls)) {
		strcat(calls, " ");
		strcat(calls, what);
	}
}
void *malloc(size_t n) { note("malloc"); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { note("calloc"); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { note("realloc"); return __libc_realloc(p, n); }
int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	note("pthread_create");
	if (!real)
		real = dlsym(RTLD_NEXT, "pthread_create");
	return real(t, a, f, arg);
}
void qsort(void *b, size_t n, size_t sz, int (*cmp)(const void *, const void *))
{
	static void (*real)(void *, size_t, size_t, int (*)(const void *, const void *));
	note("qsort");
	if (!real)
		real = dlsym(RTLD_NEXT, "qsort");
	real(b, n, sz, cmp);
}
int snprintf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;
	note("snprintf");
	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n;
}
FILE *fopen(const char *p, const char *m)
{
	static FILE *(*real)(const char *, const char *);
	note("fopen");
	if (!real)
		real = dlsym(RTLD_NEXT, "fopen");
	return real(p, m);
}
pid_t fork(void)
{
	pid_t pid;
	if (!real_fork)
		real_fork = dlsym(RTLD_NEXT, "fork");
	parent = getpid();
	forking = 1;
	pid = real_fork();
	forking = 0;
	if (pid == 0) {
		char line[600];
		int n = snprintf(line, sizeof(line), "child calls:%s\n", calls);
		write(2, line, (size_t)n);
	}
	return pid;
}
C
$CC -O1 -shared -fPIC -o "$TEST_TMP/count.so" "$TEST_TMP/count.c" -ldl ||
	die "cannot build the interposer"

mkdir "$TEST_TMP/d"
for res in 0 1; do
	RIP_RING="$TEST_TMP/d/" RIP_FOLLOW=fork RIP_RESOURCES=$res RIP_MODE=overwrite \
		LD_PRELOAD="$TEST_TMP/count.so:$PWD/$BUILD/librip-preload.so" \
		"$prog" fork >"$TEST_TMP/out" 2>"$TEST_TMP/err" || fail "trust_prog fork failed"
	grep -q '^child calls:' "$TEST_TMP/err" || fail "the interposer saw no fork: $(cat "$TEST_TMP/err")"
	grep -q '^child calls:$' "$TEST_TMP/err" ||
		fail "RIP_RESOURCES=$res: the fork child called $(sed -n 's/^child calls://p' "$TEST_TMP/err")"
	# the child did get a ring file of its own
	[ "$(ls "$TEST_TMP"/d/rip-*.ring | wc -l)" -ge 2 ] || fail "RIP_RESOURCES=$res: no file for the child"
	rm -f "$TEST_TMP"/d/rip-*.ring
done
t_done
