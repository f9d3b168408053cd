/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/data/churn.h - for the test programs of traces in chunks
 * (leaks-chunk-defs, leaks-chunk-stacks): churn(n) allocates and frees n
 * blocks of random sizes in random order, so that a trace fills chunks
 * with events whose blocks are all freed.  Include after <stdlib.h>.
 */
#ifndef RIP_TESTS_CHURN_H
#define RIP_TESTS_CHURN_H

static void *pool[4096];

/* n blocks of random sizes, each freed later, in random order: chunks fill up */
__attribute__((noinline)) static void churn(int n)
{
	unsigned long x = 88172645463325252ul;

	for (int i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		free(pool[x % 4096]);
		pool[x % 4096] = malloc(16 + (x >> 20) % 3000);
	}
	for (int i = 0; i < 4096; i++)
		free(pool[i]);
}

#endif
