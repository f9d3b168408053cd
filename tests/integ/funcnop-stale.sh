#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a library whose file was replaced by another build after it
# was mapped, with the same program headers, is left alone by lib/nop.c
# (its symbols are not those of the code in memory).  The build mapped has
# a function g loading two constants, the second's immediate holding the
# bytes of a call of the entry hook; the build on disk, made of the same
# bytes but its first two, has there a function g2 whose rdi is g's address
# at that call, a true call of g2's.  A library whose constructor runs
# before librip's swaps the files; g must still return the byte 0xe8 of
# its immediate.  Without the swap, the library's true hook call (h) is a
# nop: the library is looked at.
. tests/data/common.sh

CC=${CC:-cc}
lib=$PWD/$BUILD
cd "$TEST_TMP" || die "no TEST_TMP"

# foo.S: V=1 is the build mapped, V=2 the one on disk
cat >foo.S <<'S'
	.text
	.globl g
	.type g,@function
g:
.Lg:
#if V == 1
	.byte 0x48, 0xb8		/* movabs $imm64, %rax: the lea and cmp below in it */
#else
	.byte 0x66, 0x90		/* xchg %ax, %ax */
	.size g, 2
	.type g2,@function
g2:
#endif
	lea .Lg(%rip), %rdi
	.byte 0x3d, 0x48, 0xb8, 0x90, 0x90	/* V=2: cmp $imm32, %eax; V=1: movabs $imm64, %rax */
	.byte 0x90
	call __cyg_profile_func_enter@PLT	/* V=1: bytes of the movabs's immediate */
	shr $24, %rax
	movzbl %al, %eax
	ret
#if V == 1
	.size g, .-g
#else
	.size g2, .-g2
#endif
	.globl h
	.type h,@function
h:
.Lh:
	push %rbx
	lea .Lh(%rip), %rdi
	mov 8(%rsp), %rsi
.Lh_call:
	call __cyg_profile_func_enter@PLT
	pop %rbx
	ret
	.size h, .-h
	.globl hb	/* the first byte of h's call */
	.type hb,@function
hb:
	movzbl .Lh_call(%rip), %eax
	ret
	.size hb, .-hb
	.section .note.GNU-stack,"",@progbits
S
cat >swap.c <<'C'
#include <stdio.h>
#include <stdlib.h>
/* before librip's constructor (the last DT_NEEDED is initialized first) */
__attribute__((constructor)) static void swap(void)
{
	const char *from = getenv("SWAP_FROM"), *to = getenv("SWAP_TO");

	if (from && to && rename(from, to))
		perror("rename");
}
C
cat >main.c <<'C'
#include <stdint.h>
#include <stdio.h>
int g(void);
void h(void);
int hb(void);
int main(void)
{
	h();
	printf("g %#x h %s\n", g(), hb() == 0xe8 ? "call" : "nop");
	return 0;
}
C
$CC -DV=1 -fPIC -shared -Wl,--build-id=none -o libfoo.so foo.S -L"$lib" -lrip ||
	die "cannot build libfoo.so"
$CC -DV=2 -fPIC -shared -Wl,--build-id=none -o libfoo2.so foo.S -L"$lib" -lrip ||
	die "cannot build libfoo2.so"
$CC -fPIC -shared -o libswap.so swap.c || die "cannot build libswap.so"
$CC -o main main.c -Wl,--no-as-needed -L"$lib" -lrip -L. -lfoo -lswap -Wl,-rpath,"$PWD" \
	-Wl,-rpath,"$lib" || die "cannot build main"
cp libfoo.so libfoo1.so
# the builds differ in their text, not in their program headers
[ "$(readelf -lW libfoo.so | grep -E 'LOAD|DYNAMIC')" = "$(readelf -lW libfoo2.so | grep -E 'LOAD|DYNAMIC')" ] ||
	die "the two builds' program headers differ: the test checks nothing"
cmp -s libfoo.so libfoo2.so && die "the two builds are the same"

RIP_FUNCTIONS=0 ./main >same.out 2>same.err || fail "RIP_FUNCTIONS=0: exit $?: $(cat same.err)"
[ "$(cat same.out)" = "g 0xe8 h nop" ] ||
	fail "RIP_FUNCTIONS=0, the file mapped: want 'g 0xe8 h nop', got: $(cat same.out)"

cp libfoo2.so new.so
SWAP_FROM=new.so SWAP_TO=libfoo.so RIP_FUNCTIONS=0 ./main >stale.out 2>stale.err ||
	fail "RIP_FUNCTIONS=0, another build on disk: exit $?: $(cat stale.err)"
cmp -s libfoo.so libfoo2.so || fail "the file was not replaced: $(cat stale.err)"
[ "$(cat stale.out)" = "g 0xe8 h call" ] ||
	fail "RIP_FUNCTIONS=0, another build on disk: want 'g 0xe8 h call' (left alone), got: $(cat stale.out)"
t_done
