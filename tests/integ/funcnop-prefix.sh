#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the instructions lib/nop.c decodes around a hook call, as the
# CPU does (functions written by hand, rdi their own address at the call):
# a call of the entry hook with a prefix (`cs call`: 6 bytes) is no 5-byte
# site, and stays a call that works (turned into the nop at its prefix, its
# last byte would be run as code); `add $imm32, %rax` with both 66 and
# REX.W has a 4-byte immediate (REX.W wins), so the call after it is
# reached and becomes a nop; a REX before 66 is ignored (and then the
# bytes of a call in the immediate of a movabs after are no call), and so
# is 66 0f 78 (extrq, two immediates) before such a movabs.
# RIP_FUNCTIONS_NOP=0 keeps them all.
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
	/* pfx_imm: 66 REX.W add $imm32, %rax (0f 04 in its immediate: no
	   instruction, were it read as imm16), then the call; returns 9 */
	".type pfx_imm,@function\npfx_imm:\n"
	"push %rbx\n"
	"lea pfx_imm(%rip), %rdi\n"
	"mov 8(%rsp), %rsi\n"
	".byte 0x66, 0x48, 0x81, 0xc0, 0x90, 0x90, 0x0f, 0x04\n"
	"pfx_imm_call: call __cyg_profile_func_enter@PLT\n"
	"mov $9, %eax\n"
	"pop %rbx\n"
	"ret\n"
	".size pfx_imm, .-pfx_imm\n"
	/* pfx_rex: REX then 66 (the REX is ignored: add $imm16, %ax), then
	   movabs $imm64, %rax whose immediate starts with the bytes of a call
	   (no instruction: were the REX taken, the add would end inside the
	   movabs, on them); returns the immediate's last byte, 0x5c */
	".type pfx_rex,@function\npfx_rex:\n"
	"push %rbx\n"
	"lea pfx_rex(%rip), %rdi\n"
	"mov 8(%rsp), %rsi\n"
	".byte 0x48, 0x66, 0x81, 0xc0, 0x90, 0x90\n"
	".byte 0x48, 0xb8\n"
	"pfx_rex_call: call __cyg_profile_func_enter@PLT\n"
	".byte 0x90, 0x90, 0x5c\n"
	"movzbl %al, %eax\n"
	"pop %rbx\n"
	"ret\n"
	".size pfx_rex, .-pfx_rex\n"
	/* pfx_xq: 66 0f 78 is extrq (AMD's SSE4a) with two immediates, here
	   66 3d: were they not, cmp $imm16, %ax would end on the bytes of a
	   call in the immediate of the movabs after; never run (an Intel CPU
	   has no extrq), only read */
	".type pfx_xq,@function\npfx_xq:\n"
	"lea pfx_xq(%rip), %rdi\n"
	".byte 0x66, 0x0f, 0x78, 0xc0, 0x66, 0x3d\n"
	".byte 0x48, 0xb8\n"
	"pfx_xq_call: call __cyg_profile_func_enter@PLT\n"
	".byte 0x90, 0x90, 0x90\n"
	"ret\n"
	".size pfx_xq, .-pfx_xq\n"
	".popsection\n");
extern const uint8_t pfx_cs_call[], pfx_imm_call[], pfx_rex_call[], pfx_xq_call[];
int pfx_cs(void), pfx_imm(void), pfx_rex(void);

int main(void)
{
	int r = pfx_cs() * 10 + pfx_imm();

	printf("ran %d rex %#x %s xq %s cs %s imm %s\n", r, pfx_rex(),
	       pfx_rex_call[0] == 0xe8 ? "call" : "other", pfx_xq_call[0] == 0xe8 ? "call" : "other",
	       pfx_cs_call[0] == 0x2e && pfx_cs_call[1] == 0xe8 ? "call" :
	       !memcmp(pfx_cs_call, "\x0f\x1f\x44\x00\x00", 5) ? "nop@prefix" : "other",
	       pfx_imm_call[0] == 0xe8 ? "call" :
	       !memcmp(pfx_imm_call, "\x0f\x1f\x44\x00\x00", 5) ? "nop" : "other");
	return 0;
}
C
$CC -O2 -o prefix prefix.c -Wl,--no-as-needed -L"$lib" -lrip -Wl,-rpath,"$lib" ||
	die "cannot build the program"

RIP_FUNCTIONS=0 RIP_FUNCTIONS_NOP=0 ./prefix >keep.out 2>keep.err ||
	fail "RIP_FUNCTIONS_NOP=0: exit $?: $(cat keep.err)"
[ "$(cat keep.out)" = "ran 79 rex 0xe8 call xq call cs call imm call" ] ||
	fail "RIP_FUNCTIONS_NOP=0: want 'ran 79 rex 0xe8 call xq call cs call imm call', got: $(cat keep.out)"
RIP_FUNCTIONS=0 ./prefix >off.out 2>off.err || fail "RIP_FUNCTIONS=0: exit $?: $(cat off.err)"
[ "$(cat off.out)" = "ran 79 rex 0xe8 call xq call cs call imm nop" ] ||
	fail "RIP_FUNCTIONS=0: want 'ran 79 rex 0xe8 call xq call cs call imm nop', got: $(cat off.out)"
t_done
