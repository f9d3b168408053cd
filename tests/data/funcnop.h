/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/data/funcnop.h - what the program and the library of
 * tests/integ/funcnop.sh share: three calls of the -finstrument-functions
 * hooks that librip must leave alone (written by hand: rdi not a
 * function's address, or no instruction), and the count of the hook calls
 * left in a section.
 */
#ifndef RIP_TESTS_FUNCNOP_H
#define RIP_TESTS_FUNCNOP_H

#include <stdint.h>
#include <string.h>

#define NOFN __attribute__((no_instrument_function))

/*
 * In section sec, the function p_bad: calls the entry hook with rdi its
 * own address + 1, then the exit hook with rdi its return address (the
 * labels p_enter_call and p_exit_call are the calls); and p_fake: rdi set
 * to its address, then `movabs $imm64, %rax` whose immediate starts with
 * the bytes of a call of the entry hook (label p_fake_call), which is no
 * instruction.
 */
#define NOP_BAD_SITES(sec, p)                                                                     \
	__asm__(".pushsection " sec ",\"ax\",@progbits\n"                                        \
		".globl " p "_bad\n"                                                              \
		".hidden " p "_bad\n"                                                             \
		".type " p "_bad,@function\n" p "_bad:\n"                                        \
		"push %rbx\n"                                                                     \
		"lea " p "_bad+1(%rip), %rdi\n"                                                   \
		"mov 8(%rsp), %rsi\n"                                                             \
		".globl " p "_enter_call\n"                                                       \
		".hidden " p "_enter_call\n" p "_enter_call:\n"                                   \
		"call __cyg_profile_func_enter@PLT\n"                                             \
		"mov 8(%rsp), %rsi\n"                                                             \
		"mov %rsi, %rdi\n"                                                                \
		".globl " p "_exit_call\n"                                                        \
		".hidden " p "_exit_call\n" p "_exit_call:\n"                                     \
		"call __cyg_profile_func_exit@PLT\n"                                              \
		"pop %rbx\n"                                                                      \
		"ret\n"                                                                           \
		".size " p "_bad, .-" p "_bad\n"                                                  \
		".globl " p "_fake\n"                                                             \
		".hidden " p "_fake\n"                                                            \
		".type " p "_fake,@function\n" p "_fake:\n"                                      \
		"lea " p "_fake(%rip), %rdi\n"                                                    \
		".byte 0x48, 0xb8\n"                                                              \
		".globl " p "_fake_call\n"                                                        \
		".hidden " p "_fake_call\n" p "_fake_call:\n"                                    \
		".byte 0xe8\n"                                                                    \
		".reloc " p "_fake_call+1, R_X86_64_PLT32, __cyg_profile_func_enter-4\n"          \
		".long 0\n"                                                                       \
		".byte 0, 0, 0\n"                                                                 \
		"ret\n"                                                                           \
		".size " p "_fake, .-" p "_fake\n"                                                \
		".popsection\n")

/* Where the call at c goes. */
static inline NOFN const uint8_t *nop_target(const uint8_t *c)
{
	int32_t rel;

	memcpy(&rel, c + 1, 4);
	return c + 5 + rel;
}

/*
 * The calls of the hooks in [lo, hi) (e8 to the PLT entries the two bad
 * calls go through, the fake one included), and in *bad, how many of the
 * three bad calls are calls still.
 */
static inline NOFN int nop_left(const uint8_t *lo, const uint8_t *hi, const uint8_t *ecall,
				const uint8_t *xcall, const uint8_t *fcall, int *bad)
{
	const uint8_t *e = nop_target(ecall), *x = nop_target(xcall);
	int n = 0;

	for (const uint8_t *p = lo; p + 5 <= hi; p++)
		if (p[0] == 0xe8 && (nop_target(p) == e || nop_target(p) == x))
			n++;
	*bad = (ecall[0] == 0xe8) + (xcall[0] == 0xe8) + (fcall[0] == 0xe8 && nop_target(fcall) == e);
	return n;
}

#endif
