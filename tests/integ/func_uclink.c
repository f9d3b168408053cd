// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/func_uclink.c - ucontext coroutines whose functions return
 * through uc_link, for func-uclink.sh: built with -finstrument-functions,
 * linked with librip, run under rip run (librip-preload.so's hooks of
 * makecontext and swapcontext give the contexts their slots).
 *
 *   func_uclink N [READY]
 *	uc_run makes a context N times (the same ucontext_t, on one stack)
 *	with uc_link back to itself and 8 int arguments (2 of them on the
 *	stack), and resumes it until it returns: uc_co checks its arguments
 *	and calls uc_leaf; in odd rounds it swaps back to uc_run once first,
 *	and uc_run resumes it.  After each return uc_run calls uc_check on
 *	its own stack.  Then a chain: chain_a, whose uc_link is chain_b's
 *	context, made with one pointer argument (as x86-64 programs pass
 *	them), whose uc_link is uc_run's; each calls uc_leaf and returns.
 *	Calls: main 1, uc_run 1, uc_make N + 2, uc_co N, uc_leaf 2 N + 2,
 *	uc_check N + 1, chain_a 1, chain_b 1.  With READY, main then parks
 *	in uc_park (main > uc_run > uc_park), READY is written and the
 *	program waits to be killed; else it exits 0 (1: an argument came
 *	wrong).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include <rip.h>

#define N __attribute__((noinline))

static ucontext_t back, ctx, ctx_b;
static char stack[64 * 1024] __attribute__((aligned(16)));
static char stack_b[64 * 1024] __attribute__((aligned(16)));
static volatile int sink;
static int bad;

N static void uc_leaf(int x)
{
	sink += x;
}

N static void uc_co(int round, int a1, int a2, int a3, int a4, int a5, int a6, int a7)
{
	if (a1 != 11 || a2 != 12 || a3 != 13 || a4 != 14 || a5 != 15 || a6 != 16 ||
	    a7 != 17 * round)
		bad = 1;
	if (round % 2)
		swapcontext(&ctx, &back);
	uc_leaf(round);
	uc_leaf(a7);
}

N static void uc_check(int round)
{
	sink += round;
}

N static void chain_b(int *check)
{
	if (check != &bad)
		bad = 1;
	uc_leaf(2);
}

N static void chain_a(void)
{
	uc_leaf(1);
}

N static void uc_park(const char *ready)
{
	int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || write(fd, "ready\n", 6) != 6)
		exit(3);
	close(fd);
	for (;;)
		pause();
}

/* ctx (or c) to start fn on s, going on at link when fn returns. */
static void uc_make(ucontext_t *c, char *s, size_t size, ucontext_t *link)
{
	if (getcontext(c))
		exit(3);
	c->uc_stack.ss_sp = s;
	c->uc_stack.ss_size = size;
	c->uc_link = link;
}

N static void uc_run(int n, const char *ready)
{
	for (int round = 0; round < n; round++) {
		uc_make(&ctx, stack, sizeof(stack), &back);
		makecontext(&ctx, (void (*)(void))uc_co, 8, round, 11, 12, 13, 14, 15, 16,
			    17 * round);
		if (swapcontext(&back, &ctx))
			exit(3);
		if (round % 2 && swapcontext(&back, &ctx))
			exit(3);
		uc_check(round);
	}
	uc_make(&ctx_b, stack_b, sizeof(stack_b), &back);
	makecontext(&ctx_b, (void (*)(void))chain_b, 1, &bad);
	uc_make(&ctx, stack, sizeof(stack), &ctx_b);
	makecontext(&ctx, chain_a, 0);
	if (swapcontext(&back, &ctx))
		exit(3);
	uc_check(n);
	if (ready)
		uc_park(ready);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 0;

	if (argc < 2 || argc > 3 || n < 1)
		return 2;
	rip_thread_set_name("main");
	uc_run(n, argc > 2 ? argv[2] : NULL);
	return bad;
}
