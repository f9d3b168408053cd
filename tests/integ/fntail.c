// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the program of func-patch's sibling-call part (not a test
 * itself), built with -fpatchable-function-entry=5 and sibling calls on:
 * tail_1 jumps to tail_2, which jumps to tail_leaf, so one return goes
 * through three patched entries' trampolines; and gcc calls tail_1 from
 * tail_top with the stack 8 bytes off the ABI's alignment (it knows that
 * the chain needs none), so the trampolines get such a stack.  A longjmp
 * over 10 patched frames too; floating-point arguments in all eight
 * vector argument registers, and a pair of doubles returned in two (the
 * trampolines' fast paths never touch them: lib/func.c is built without
 * vector registers); a recursion 200 deep, past the 128 entries of a
 * slot's return stack (the calls past them are not seen leaving, and come
 * back right); a timer's signal every 200 us in each thread, whose
 * handler calls patched functions too, wherever the thread stands (inside
 * the trampolines' fast paths among others).  fntail READY
 * SECONDS: 4 threads call them all
 * for SECONDS, checking every result (the handler's too); READY is
 * written once they run; prints "bad N" and "signals N", and exits 1 when
 * a result was wrong.
 */
#include <errno.h>
#include <setjmp.h>

#include "fnsigrun.h"

static volatile int sink;
static __thread jmp_buf jb;

// clang-format off
N static int tail_leaf(int x) { return x * 3 + 1; }
N static int tail_2(int x) { return tail_leaf(x + 1); }
N static int tail_1(int x) { return tail_2(x ^ 5); }
N static int tail_top(int x) { return tail_1(x) + 1; }
N static void jump_down(int d) { if (!d) longjmp(jb, 1); if (d > 0) jump_down(d - 1); sink++; }
N static int jump_top(int x) { if (!setjmp(jb)) jump_down(10); return x + 2; }
// clang-format on

/* d + 1 through d + 1 frames (the local escapes: no loop made of the recursion) */
N static int deep(int d, volatile int *up)
{
	volatile int here = *up + 1;

	return d ? deep(d - 1, &here) : here;
}

struct pair {
	double a, b;
};

N static struct pair vec_sum(double a, double b, double c, double d, double e, double f, double g,
			     double h)
{
	struct pair p = { a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h, h - a };

	return p;
}

/* 36 x + 168 (the sum of k (x + k - 1), k = 1..8) and 7, in both halves of a pair */
N static int vec_top(int x)
{
	double v = x;
	struct pair p = vec_sum(v, v + 1, v + 2, v + 3, v + 4, v + 5, v + 6, v + 7);

	return p.a == 36.0 * x + 168.0 && p.b == 7.0;
}

/* SIGRTMIN: patched calls from a handler, on top of whatever the thread was doing */
UNTRACED static void on_timer(int sig)
{
	int e = errno, x = (int)(sig_n++ & 63);

	sig_bad += tail_top(x) != ((x ^ 5) + 1) * 3 + 2;
	sig_bad += !vec_top(x);
	errno = e;
}

UNTRACED static void *worker(void *arg)
{
	long bad = 0;
	timer_t tm;

	if (sig_timer(200000, &tm))
		return (void *)1000000L;

	/* Batches with pauses: the calls go on throughout, the trace stays small. */
	while (!stop) {
		for (int x = 0; x < 100; x++) {
			bad += tail_top(x) != ((x ^ 5) + 1) * 3 + 2;
			bad += jump_top(x) != x + 2;
			bad += !vec_top(x);
			if (x % 10 == 0) {
				volatile int zero = 0;

				bad += deep(200, &zero) != 201;
			}
		}
		usleep(2000);
	}
	timer_delete(tm);
	return (void *)bad;
}

UNTRACED int main(int argc, char **argv)
{
	return sig_main(argc, argv, "fntail", on_timer, worker);
}
