// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/waits_ucontext.c - coroutines on ucontext, for
 * waits-ucontext.sh: three contexts made with makecontext on co_a, co_b and
 * co_c, run round-robin from main with swapcontext three times each; then
 * co_b is entered once more and blocks in read of a pipe nobody writes,
 * after READY gets the pid.  No librip call.
 */
#include <stdio.h>
#include <ucontext.h>
#include <unistd.h>

static ucontext_t sched, ctx[3];
static char stacks[3][64 * 1024];
static int fds[2];
static const char *ready;

static void co_a(void)
{
	for (;;)
		swapcontext(&ctx[0], &sched);
}

static void co_b(void)
{
	char c;

	for (int i = 0; i < 3; i++)
		swapcontext(&ctx[1], &sched);
	FILE *f = fopen(ready, "w");

	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	if (read(fds[0], &c, 1) < 0)
		return;
}

static void co_c(void)
{
	for (;;)
		swapcontext(&ctx[2], &sched);
}

int main(int argc, char **argv)
{
	void (*fn[3])(void) = { co_a, co_b, co_c };

	if (argc != 2 || pipe(fds))
		return 2;
	ready = argv[1];
	for (int i = 0; i < 3; i++) {
		getcontext(&ctx[i]);
		ctx[i].uc_stack.ss_sp = stacks[i];
		ctx[i].uc_stack.ss_size = sizeof(stacks[i]);
		ctx[i].uc_link = &sched;
		makecontext(&ctx[i], fn[i], 0);
	}
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 3; i++)
			swapcontext(&sched, &ctx[i]);
	swapcontext(&sched, &ctx[1]);
	return 0;
}
