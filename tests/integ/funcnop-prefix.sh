#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the instructions lib/nop.c decodes around a hook call, as the
# CPU does (functions written by hand, rdi their own address at the call):
# a call of the entry hook with a prefix (`cs call`: 6 bytes) is no 5-byte
# site, and stays a call that works (turned into the nop at its prefix, its
# last byte would be run as code).  RIP_FUNCTIONS_NOP=0 keeps it.
. tests/data/common.sh

CC=${CC:-cc}
lib=$PWD/$BUILD
cd "$TEST_TMP" || die "no TEST_TMP"

cat >prefix.c <<'C'
#include <stdint.h>
#include <stdio.h>
#include <string.h>
__asm__(".pushsection .text.pfx,\"ax\",@progbits\n"
	/* pfx_cs: the call with a cs prefix; returns 7 */
	".type pfx_cs,@function\npfx_cs:\n"
	"push %rbx\n"
	"lea pfx_cs(%rip), %rdi\n"
	"mov 8(%rsp), %rsi\n"
	"pfx_cs_call: .byte 0x2e\n"
	"call __cyg_profile_func_enter@PLT\n"
	"mov $7, %eax\n"
	"pop %rbx\n"
	"ret\n"
	".size pfx_cs, .-pfx_cs\n"
	".popsection\n");
extern const uint8_t pfx_cs_call[];
int pfx_cs(void);

int main(void)
{
	int r = pfx_cs();

	printf("ran %d cs %s\n", r,
	       pfx_cs_call[0] == 0x2e && pfx_cs_call[1] == 0xe8 ? "call" :
	       !memcmp(pfx_cs_call, "\x0f\x1f\x44\x00\x00", 5) ? "nop@prefix" : "other");
	return 0;
}
C
$CC -O2 -o prefix prefix.c -Wl,--no-as-needed -L"$lib" -lrip -Wl,-rpath,"$lib" ||
	die "cannot build the program"

RIP_FUNCTIONS=0 RIP_FUNCTIONS_NOP=0 ./prefix >keep.out 2>keep.err ||
	fail "RIP_FUNCTIONS_NOP=0: exit $?: $(cat keep.err)"
[ "$(cat keep.out)" = "ran 7 cs call" ] ||
	fail "RIP_FUNCTIONS_NOP=0: want 'ran 7 cs call', got: $(cat keep.out)"
RIP_FUNCTIONS=0 ./prefix >off.out 2>off.err || fail "RIP_FUNCTIONS=0: exit $?: $(cat off.err)"
[ "$(cat off.out)" = "ran 7 cs call" ] ||
	fail "RIP_FUNCTIONS=0: want 'ran 7 cs call', got: $(cat off.out)"
t_done
