/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/data/funcnop-lib.c - the library of tests/integ/funcnop.sh, built
 * with -finstrument-functions and loaded at start: a chain of functions,
 * a function called through a pointer, and three hook calls librip must
 * leave alone (tests/data/funcnop.h); nop_lib_left counts the hook calls left in its text.
 */
#include "data/funcnop.h"

#define LIB __attribute__((section("noplib"), noinline))

NOP_BAD_SITES("noplib", "nopl");
extern const uint8_t nopl_enter_call[], nopl_exit_call[], nopl_fake_call[];
extern const uint8_t __start_noplib[], __stop_noplib[];
void nopl_bad(void);
void nopl_fake(void);

int nop_lib_chain(int x);
int nop_lib_left(int *bad);

static LIB int lib3(int x)
{
	return x * 7 + 1;
}

static LIB int lib2(int x)
{
	return lib3(x) ^ 0x55;
}

static int (*volatile lib_ptr)(int) = lib2;

LIB int nop_lib_chain(int x)
{
	nopl_bad();
	nopl_fake();
	return lib_ptr(x) + lib3(x + 1);
}

NOFN int nop_lib_left(int *bad)
{
	return nop_left(__start_noplib, __stop_noplib, nopl_enter_call, nopl_exit_call,
			nopl_fake_call, bad);
}
