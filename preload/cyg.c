// SPDX-License-Identifier: Apache-2.0
/*
 * preload/cyg.c - the hooks of -finstrument-functions for programs not
 * linked with librip.
 *
 * A program built with -finstrument-functions and linked the ordinary way
 * (no -lrip) binds its calls of __cyg_profile_func_enter and _exit to
 * glibc's no-op hooks, at their version GLIBC_2.2.5 (x86-64).  ld.so passes
 * over librip's, whose version is LIBRIP_0.1, and librip.so comes after
 * libc in the global scope anyway (it is a need of this library, not
 * preloaded itself): under rip run --functions such a program recorded no
 * call and rip ps --stacks showed no stack, without a word.  This library
 * is preloaded, so it comes before libc: it defines both hooks at
 * GLIBC_2.2.5 (preload/preload.map), and each jumps to librip's, which then
 * sees the stack as it would have seen it called directly (a jump: no frame
 * of ours in between, the same return address and canonical frame
 * address).  A program linked with librip asks for LIBRIP_0.1 and binds to
 * librip's at once, as before; one with hooks of its own keeps them.
 */
#include "common.h"

#if defined(__x86_64__)
__asm__(".symver rip_pl_cyg_enter, __cyg_profile_func_enter@GLIBC_2.2.5\n"
	".symver rip_pl_cyg_exit, __cyg_profile_func_exit@GLIBC_2.2.5\n"
	".text\n"
	".globl rip_pl_cyg_enter\n"
	".type rip_pl_cyg_enter, @function\n"
	"rip_pl_cyg_enter:\n"
	"	.cfi_startproc\n"
	"	endbr64\n"
	"	jmp __cyg_profile_func_enter@PLT\n"
	"	.cfi_endproc\n"
	".size rip_pl_cyg_enter, .-rip_pl_cyg_enter\n"
	".globl rip_pl_cyg_exit\n"
	".type rip_pl_cyg_exit, @function\n"
	"rip_pl_cyg_exit:\n"
	"	.cfi_startproc\n"
	"	endbr64\n"
	"	jmp __cyg_profile_func_exit@PLT\n"
	"	.cfi_endproc\n"
	".size rip_pl_cyg_exit, .-rip_pl_cyg_exit\n");
#endif
