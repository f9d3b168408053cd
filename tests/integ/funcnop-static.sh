#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a program built with -finstrument-functions and linked with
# librip.a (the archive, not librip.so) gets lib/nop.c too: with
# RIP_FUNCTIONS=0 its hook calls are nops (it counts the calls to the hook
# left in its own functions' bytes), with RIP_FUNCTIONS_NOP=0 they stay,
# and it computes the same either way.  (The archive's func.o refers to
# nop.o; nothing else did, and the linker left it out.)
. tests/data/common.sh

CC=${CC:-cc}
[ "$(uname -m)" = x86_64 ] || skip "hook calls turned into nops on x86-64 only"
liba=$PWD/$BUILD/librip.a
[ -f "$liba" ] || die "$liba is missing: run make"
cd "$TEST_TMP" || die "no TEST_TMP"

cat >p.c <<'C'
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void __cyg_profile_func_enter(void *fn, void *site);

/* calls (e8 rel32) to the entry hook in the first n bytes of code at p */
__attribute__((no_instrument_function)) static int calls(const uint8_t *p, int n)
{
	const uint8_t *hook = (const uint8_t *)__cyg_profile_func_enter;
	int k = 0;

	for (int i = 0; i + 5 <= n; i++) {
		int32_t rel;

		memcpy(&rel, p + i + 1, 4);
		if (p[i] == 0xe8 && p + i + 5 + rel == hook)
			k++;
	}
	return k;
}

__attribute__((noinline)) int f(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int g(int x)
{
	return f(x) ^ f(x + 1);
}

int main(void)
{
	int s = 0;

	for (int i = 0; i < 1000; i++)
		s += g(i);
	printf("left %d %d sum %d\n", calls((const uint8_t *)f, 64), calls((const uint8_t *)g, 64), s);
	return 0;
}
C
$CC -O1 -finstrument-functions -o p p.c "$liba" -lpthread -ldl 2>cc.err ||
	die "cc: $(cat cc.err)"
RIP_FUNCTIONS=0 RIP_FUNCTIONS_NOP=0 ./p >keep.out 2>&1 || fail "calls kept: $(cat keep.out)"
RIP_FUNCTIONS=0 ./p >nop.out 2>&1 || fail "nops: $(cat nop.out)"
grep -q '^left 1 1 sum ' keep.out || fail "RIP_FUNCTIONS_NOP=0: want the calls kept, got: $(cat keep.out)"
grep -q '^left 0 0 sum ' nop.out || fail "RIP_FUNCTIONS=0 with librip.a: want nops, got: $(cat nop.out)"
[ "$(sed "s/.*sum //" nop.out)" = "$(sed "s/.*sum //" keep.out)" ] ||
	fail "the sums differ: $(cat nop.out) against $(cat keep.out)"
t_done
