// SPDX-License-Identifier: Apache-2.0
/*
 * tests/data/module-memtransfer.c - the program of
 * tests/integ/module-memtransfer.sh: copies of known sizes from known
 * functions (built with -fno-builtin: every one is a call).
 *
 *   copy_big:   10 memcpy of 100,000 bytes
 *   copy_wide:  4 wmemcpy of 1,000 wide characters
 *   copy_small: 3 strcpy of "hello" (6 bytes with the NUL)
 *   fill:       1 memset of 4,096 bytes
 */
#include <string.h>
#include <wchar.h>

#define NOINLINE __attribute__((noinline))

static char src[100000], dst[100000];
static wchar_t wsrc[1000], wdst[1000];

static NOINLINE void copy_big(void)
{
	memcpy(dst, src, sizeof(src));
}

static NOINLINE void copy_wide(void)
{
	wmemcpy(wdst, wsrc, 1000);
}

static NOINLINE void copy_small(void)
{
	strcpy(dst, "hello");
}

static NOINLINE void fill(void)
{
	memset(dst, 1, 4096);
}

int main(void)
{
	for (int i = 0; i < 10; i++)
		copy_big();
	for (int i = 0; i < 4; i++)
		copy_wide();
	for (int i = 0; i < 3; i++)
		copy_small();
	fill();
	return dst[0] == 1 ? 0 : 1;
}
