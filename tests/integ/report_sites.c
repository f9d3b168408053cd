/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/integ/report_sites.c - allocation sites that look the same for
 * their first frames: grab() allocates, mid() calls it, and from_a() and
 * from_b() call mid(), each a different number of times and sizes, so that
 * rip report's tables hold two sites whose function and caller are the same
 * (grab, mid) and which differ only in the third frame.  Every block is
 * freed.  For tests/integ/report-deep-sites.sh.
 */
#include <stdlib.h>

static void *volatile sink;

__attribute__((noinline)) static void grab(size_t n)
{
	sink = malloc(n);
	free(sink);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) static void mid(size_t n)
{
	grab(n);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void from_a(void)
{
	for (int i = 0; i < 3000; i++)
		mid(100);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void from_b(void)
{
	for (int i = 0; i < 2000; i++)
		mid(200);
	__asm__ volatile("" ::: "memory");
}

int main(void)
{
	from_a();
	from_b();
	return 0;
}
