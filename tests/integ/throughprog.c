// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/throughprog.c - leaks made through parse_a, through parse_b,
 * through both (parse_a calls parse_b) and through neither, for
 * tests/integ/leaks-through.sh (rip leaks/report/calltree/export
 * --through).  grab() is called at three depths (main, parse_a, parse_b);
 * mk_inl() is always inlined into parse_a.  Built by the test with -O0 -g:
 * every call keeps its frame.  The lines the test picks by FILE:LINE carry a
 * "TAG:" comment.
 *
 * What is never freed (blocks, bytes):
 *   through parse_a:  grab(100) x 3, mk_inl(1000), and parse_b's 2 x 20  (6, 1340)
 *   through parse_b:  2 x 20 from parse_a, 2 x 20 from main              (4, 80)
 *   through neither:  grab(7), malloc(5000), other()'s 4 x 64            (6, 5263)
 * and parse_a also allocates 50 bytes it frees.
 */
#include <stdlib.h>
#include <string.h>

void parse_a(void);
void parse_b(void);
void other(void);

static void *keep[64];
static int nkeep;

static __attribute__((noinline)) void *grab(size_t n)
{
	void *p = malloc(n);

	memset(p, 1, n);
	return p;
}

static inline __attribute__((always_inline)) void *mk_inl(size_t n)
{
	void *p = malloc(n); /* TAG:inl */

	memset(p, 2, n);
	return p;
}

__attribute__((noinline)) void parse_b(void)
{
	for (int i = 0; i < 2; i++)
		keep[nkeep++] = grab(20);
}

__attribute__((noinline)) void parse_a(void)
{
	void *t;

	for (int i = 0; i < 3; i++)
		keep[nkeep++] = grab(100); /* TAG:a100 */
	keep[nkeep++] = mk_inl(1000);
	t = malloc(50);
	memset(t, 3, 50);
	free(t);
	parse_b();
}

__attribute__((noinline)) void other(void)
{
	for (int i = 0; i < 4; i++)
		keep[nkeep++] = malloc(64);
}

int main(void)
{
	parse_a();
	parse_b();
	keep[nkeep++] = grab(7);
	keep[nkeep++] = malloc(5000);
	other();
	return keep[0] == NULL;
}
