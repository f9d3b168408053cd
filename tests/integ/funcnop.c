/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/integ/funcnop.c - the program of tests/integ/funcnop.sh, built with
 * -finstrument-functions (by gcc, and by clang as funcnop-clang) and
 * linked with a library built the same way (tests/data/funcnop-lib.c):
 *
 *   funcnop N   prints "left EXE BAD LIB LIBBAD": the hook calls left in
 *               its text and in the library's (e8 to the hooks' PLT
 *               entries), and how many of the three hand-written calls that
 *               must stay calls in each (tests/data/funcnop.h); then runs
 *               its functions (a chain, recursion, calls through pointers,
 *               a function whose address is taken, the library's chain) N
 *               times on this thread and on 4 threads, and prints "sum S"
 *               of what they computed, checked against the same
 *               computation written without calls: exit 1 when it differs.
 *
 * Built with -DNOP_OWN_HOOKS (funcnop-own), it defines the hooks itself,
 * and the library's calls bind to them too; it prints "own N" last: the
 * calls they saw.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "data/funcnop.h"

#define TXT __attribute__((section("noptext"), noinline))

NOP_BAD_SITES("noptext", "nopx");
extern const uint8_t nopx_enter_call[], nopx_exit_call[], nopx_fake_call[];
extern const uint8_t __start_noptext[], __stop_noptext[];
void nopx_bad(void);
void nopx_fake(void);

int nop_lib_chain(int x);
int nop_lib_left(int *bad);

#ifdef NOP_OWN_HOOKS
/* Hooks of its own (funcnop-own): librip must leave their calls alone. */
static unsigned long own_calls;
static void *volatile own_last; /* uses the arguments: the calls stay calls of the hooks */

NOFN void __cyg_profile_func_enter(void *fn, void *site);
NOFN __attribute__((noinline)) void __cyg_profile_func_enter(void *fn, void *site)
{
	own_last = site;
	__atomic_fetch_add(&own_calls, 1, __ATOMIC_RELAXED);
}

NOFN void __cyg_profile_func_exit(void *fn, void *site);
NOFN __attribute__((noinline)) void __cyg_profile_func_exit(void *fn, void *site)
{
	own_last = fn;
	__atomic_fetch_add(&own_calls, 1, __ATOMIC_RELAXED);
}
#endif

static TXT unsigned leaf(unsigned x)
{
	return x * 2654435761u + 7;
}

static TXT unsigned mid(unsigned x)
{
	return leaf(x) ^ (x >> 3);
}

static TXT unsigned top(unsigned x)
{
	return mid(x + 1) + mid(x);
}

static TXT unsigned rec(unsigned n)
{
	return n ? rec(n - 1) * 3 + n : 1;
}

/* Its address is taken, and called through it. */
TXT unsigned nop_taken(unsigned x);
TXT unsigned nop_taken(unsigned x)
{
	return x + 11;
}

static unsigned (*volatile ptrs[3])(unsigned) = { leaf, top, nop_taken };

static TXT unsigned one(unsigned i)
{
	unsigned s = top(i) + rec(i % 12) + ptrs[i % 3](i);

	if (i % 64 == 0)
		nopx_bad();
	if (i % 64 == 1)
		nopx_fake();
	return s + (unsigned)nop_lib_chain((int)i);
}

/* The same without a call. */
static NOFN unsigned want(unsigned i)
{
	unsigned l0 = (i + 1) * 2654435761u + 7, l1 = i * 2654435761u + 7;
	unsigned t = (l0 ^ ((i + 1) >> 3)) + (l1 ^ (i >> 3)), r = 1, p;
	int x = (int)i, lib;

	for (unsigned k = 1; k <= i % 12; k++)
		r = r * 3 + k;
	p = i % 3 == 0 ? i * 2654435761u + 7 : i % 3 == 1 ? t : i + 11;
	lib = (((x * 7 + 1) ^ 0x55) + (x + 1) * 7 + 1);
	return t + r + p + (unsigned)lib;
}

struct run {
	pthread_t t;
	unsigned from, n, sum;
	int bad;
};

static TXT void *run(void *arg)
{
	struct run *r = arg;

	for (unsigned i = r->from; i < r->from + r->n; i++) {
		unsigned s = one(i);

		r->bad |= s != want(i);
		r->sum += s;
	}
	return NULL;
}

NOFN int main(int argc, char **argv)
{
	struct run r[5] = { { 0 } };
	int bad, lbad, left, lleft, fail = 0;
	unsigned sum = 0, n = argc > 1 ? (unsigned)atoi(argv[1]) : 1000;

	left = nop_left(__start_noptext, __stop_noptext, nopx_enter_call, nopx_exit_call,
			nopx_fake_call, &bad);
	lleft = nop_lib_left(&lbad);
	printf("left %d %d %d %d\n", left, bad, lleft, lbad);
	fflush(stdout);
	for (int k = 0; k < 5; k++) {
		r[k].from = (unsigned)k * n;
		r[k].n = n;
	}
	run(&r[0]);
	for (int k = 1; k < 5; k++)
		if (pthread_create(&r[k].t, NULL, run, &r[k])) {
			fprintf(stderr, "funcnop: pthread_create failed\n");
			return 1;
		}
	for (int k = 1; k < 5; k++)
		pthread_join(r[k].t, NULL);
	for (int k = 0; k < 5; k++) {
		fail |= r[k].bad;
		sum += r[k].sum;
	}
	printf("sum %u\n", sum);
#ifdef NOP_OWN_HOOKS
	printf("own %lu\n", __atomic_load_n(&own_calls, __ATOMIC_RELAXED));
#endif
	if (fail)
		fprintf(stderr, "funcnop: a function computed a wrong value\n");
	return fail;
}
