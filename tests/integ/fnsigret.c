// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the program of func-sigret (not a test itself), built with
 * -fpatchable-function-entry=5: threads recurse 120 deep, past the 63
 * frames a shadow stack keeps (so the patched exits past them take the
 * exit trampoline's slow path, __rip_fn_pexit_c) and within the 128
 * entries of a slot's return stack (so every one of them is hijacked),
 * over and over, while a timer's signal every 20 us in each thread runs a
 * handler, on_timer, that calls patched functions, wherever the thread
 * stands (func-sigret also runs it from gdb at one chosen instruction).
 * fnsigret READY SECONDS [DONE]: 4 threads for SECONDS, every result checked
 * (the handler's too); READY is written once they run; the run ends early,
 * within a second, once a file DONE exists (func-sigret makes it when gdb is
 * done: the threads need not spin on for the rest of SECONDS); prints "bad N"
 * and "signals N", and exits 1 when a result was wrong.
 */
#include <errno.h>

#include "fnsigrun.h"

/* d + 1 through d + 1 frames (the local escapes: no loop made of the recursion) */
N static int down(int d, volatile int *up)
{
	volatile int here = *up + 1;

	return d ? down(d - 1, &here) : here;
}

N static int leaf(int x)
{
	return x * 3 + 1;
}

N static int twice(int x)
{
	return leaf(x) + leaf(x + 1);
}

/* SIGRTMIN: patched calls from a handler, on top of whatever the thread was doing */
UNTRACED static void on_timer(int sig)
{
	int e = errno, x = (int)(sig_n++ & 63);

	sig_bad += twice(x) != 6 * x + 5;
	errno = e;
}

UNTRACED static void *worker(void *arg)
{
	long bad = 0;
	timer_t tm;

	if (sig_timer(20000, &tm))
		return (void *)1000000L;
	while (!stop) {
		volatile int zero = 0;

		bad += down(120, &zero) != 121;
	}
	timer_delete(tm);
	return (void *)bad;
}

UNTRACED int main(int argc, char **argv)
{
	return sig_main(argc, argv, "fnsigret", on_timer, worker);
}
