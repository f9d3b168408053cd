// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/fngen.c - a generator switched by the program's own code (an
 * assembly switch of stack pointers, as libcoro's CORO_ASM or
 * boost.context do, no makecontext), for func-gen.sh: built with
 * -fpatchable-function-entry, its functions patched by rip run
 * --functions='*'.
 *
 *   fngen N
 *	gen_sum calls gen_next N times; each switches to the generator's
 *	stack, where gen_body's chain gen_a -> gen_b -> gen_c yields from
 *	gen_c, back to gen_next, which returns while the generator's three
 *	frames live on, hijacked, on the other stack.  The next gen_next
 *	resumes gen_c, which returns to gen_b, and so on.  Prints the sum of
 *	the values; exits 0 when it is right (1: wrong, 2: no stack; 77: not
 *	x86-64, where no switch is written).
 *	Calls: gen_sum 1, gen_next N, gen_body 1, gen_a, gen_b, gen_c about N / 3 each.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define N __attribute__((noinline))

#if defined(__x86_64__)
/* Save the callee-saved registers on this stack, *from = its pointer, switch to to. */
void gen_switch(void **from, void *to);
__asm__(".text\n"
	".globl gen_switch\n"
	".type gen_switch, @function\n"
	"gen_switch:\n\t"
	"push %rbp\n\tpush %rbx\n\tpush %r12\n\tpush %r13\n\tpush %r14\n\tpush %r15\n\t"
	"mov %rsp, (%rdi)\n\t"
	"mov %rsi, %rsp\n\t"
	"pop %r15\n\tpop %r14\n\tpop %r13\n\tpop %r12\n\tpop %rbx\n\tpop %rbp\n\t"
	"ret\n"
	".size gen_switch, . - gen_switch\n");

static void *main_sp, *gen_sp;
static long value, rounds;
static volatile int sink;

N static void gen_yield(long v)
{
	value = v;
	gen_switch(&gen_sp, main_sp);
}

N static void gen_c(long i)
{
	gen_yield(i);
	sink++;
}

N static void gen_b(long i)
{
	gen_c(i);
	gen_yield(i + 1);
	sink++;
}

N static void gen_a(long i)
{
	gen_b(i);
	gen_yield(i + 2);
	sink++;
}

N static void gen_body(void)
{
	for (long i = 0;; i += 3)
		gen_a(i);
}

N static long gen_next(void)
{
	gen_switch(&main_sp, gen_sp);
	return value;
}

N static long gen_sum(long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += gen_next();
	return s;
}

int main(int argc, char **argv)
{
	const size_t len = 256 << 10;
	long n = argc > 1 ? atol(argv[1]) : 1000, s;
	char *stk = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void **sp;

	if (stk == MAP_FAILED)
		return 2;
	/* The first switch to it pops six registers and returns into gen_body. */
	sp = (void **)(stk + len) - 8;
	sp[6] = (void *)gen_body;
	sp[7] = NULL; /* gen_body's return address: it never returns */
	for (int i = 0; i < 6; i++)
		sp[i] = NULL;
	gen_sp = sp;
	s = gen_sum(n);
	(void)rounds;
	printf("sum %ld\n", s);
	return s == n * (n - 1) / 2 ? 0 : 1;
}
#else
int main(void)
{
	return 77;
}
#endif
