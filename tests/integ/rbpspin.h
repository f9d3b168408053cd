/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/integ/rbpspin.h - rbp_spin(fp, n): n turns of a loop with rbp = fp,
 * as code built without frame pointers may keep anything there (x86-64;
 * RIP_TESTS_RBP_SPIN says it is there).  Used by the tests of the stack
 * walks that must not follow such an rbp (topprog.c's badfp,
 * stackhole.c).
 */
#ifndef RIP_TESTS_RBPSPIN_H
#define RIP_TESTS_RBPSPIN_H

#if defined(__x86_64__)
#define RIP_TESTS_RBP_SPIN 1
__attribute__((visibility("hidden"))) long rbp_spin(void *fp, long n);
__asm__(".text\n"
	".globl rbp_spin\n"
	".hidden rbp_spin\n"
	".type rbp_spin, @function\n"
	"rbp_spin:\n"
	"	push %rbp\n"
	"	mov %rdi, %rbp\n"
	"1:	dec %rsi\n"
	"	jnz 1b\n"
	"	pop %rbp\n"
	"	mov %rsi, %rax\n"
	"	ret\n"
	".size rbp_spin, .-rbp_spin\n");
#endif

#endif /* RIP_TESTS_RBPSPIN_H */
