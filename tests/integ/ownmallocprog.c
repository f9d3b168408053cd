// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/ownmallocprog.c - a program with an allocator of its own
 * (tests/integ/run-own-malloc.sh): it defines malloc, calloc, realloc and
 * free, a bump allocator in a static arena, so every call of them, its own
 * and libc's, goes here and never to librip-preload.so's hooks, as with a
 * program linked with jemalloc or tcmalloc statically.  It allocates 100
 * blocks of 100 bytes, frees none, and prints "done".
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static _Alignas(16) char arena[1 << 20];
static size_t used;

void *malloc(size_t n);
void *calloc(size_t k, size_t n);
void *realloc(void *old, size_t n);
void free(void *p);

/* A block is its size in the 16 bytes before it. */
void *malloc(size_t n)
{
	char *p;

	n = (n + 15) & ~(size_t)15;
	if (n > sizeof(arena) - 16 || used > sizeof(arena) - 16 - n)
		return NULL;
	p = arena + used + 16;
	used += n + 16;
	memcpy(p - 16, &n, sizeof(n));
	return p;
}

void *calloc(size_t k, size_t n)
{
	void *p = n && k > (size_t)-1 / n ? NULL : malloc(k * n);

	if (p)
		memset(p, 0, k * n);
	return p;
}

void *realloc(void *old, size_t n)
{
	void *p = malloc(n);
	size_t had;

	if (p && old) {
		memcpy(&had, (char *)old - 16, sizeof(had));
		memcpy(p, old, had < n ? had : n);
	}
	return p;
}

void free(void *p)
{
	(void)p;
}

int main(void)
{
	for (int i = 0; i < 100; i++) {
		volatile char *p = malloc(100);

		if (!p)
			return 1;
		p[0] = 1;
	}
	puts("done");
	return 0;
}
