// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the C++ program of the function-tracing tests, built with
 * -finstrument-functions (funcprog-cxx) or -fpatchable-function-entry
 * (funcprog-cxx-patch), linked with librip: a thread throws an exception
 * through 10 traced frames and catches it, then parks; another parks under
 * a catch that rethrew through 5 frames first; a third throws through 5 C
 * frames (tests/data/fnframes.c), whose exit hooks the unwinding does not
 * run; a fourth does the same and parks in the catching function itself,
 * in untraced code; a fifth catches 10 frames down, returns from the
 * catching function (a patched one's exit must be seen) and parks
 * untraced.  funcprog-cxx READY [GO] writes READY once the five are
 * parked, and waits to be killed (with GO: first writes READY.gate and
 * waits for the file GO, so that the functions can be patched before any
 * thread calls them).
 *
 *   thrower   throw_thread > throw_base > throw_park > park_here
 *   rethrow   rethrow_thread > rethrow_base > rethrow_park > park_here
 *   cthrow    cthrow_thread > cthrow_base > cthrow_park > park_here
 *   caught    caught_thread > caught_base
 *   rehook    rehook_thread > rehook_base
 *
 * funcprog-cxx --cancel: threads leave through traced frames, three times
 * over: one by pthread_exit, one cancelled in a read (a cancellation
 * point librip-preload.so wraps), one cancelled in pthread_testcancel; each
 * prints its local object's destructor ("destructor exit", "destructor
 * read", "destructor testcancel"), which only an unwinding that walks every
 * frame runs; then "done".
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <string>

#include <rip.h>

#define N __attribute__((noinline))
/* Neither instrumented nor patchable: stands at no depth of any path. */
#define UNTRACED __attribute__((noinline, no_instrument_function, patchable_function_entry(0, 0)))

static volatile int sink;
static pthread_barrier_t parked;

N static void park_here()
{
	pthread_barrier_wait(&parked);
	for (;;)
		pause();
}

/* One line each, so that the chains read as chains. */
// clang-format off
N static void throw_10() { throw 42; }
N static void throw_09() { throw_10(); sink++; }
N static void throw_08() { throw_09(); sink++; }
N static void throw_07() { throw_08(); sink++; }
N static void throw_06() { throw_07(); sink++; }
N static void throw_05() { throw_06(); sink++; }
N static void throw_04() { throw_05(); sink++; }
N static void throw_03() { throw_04(); sink++; }
N static void throw_02() { throw_03(); sink++; }
N static void throw_01() { throw_02(); sink++; }
N static void throw_park() { park_here(); }
N static void rethrow_05() { throw 7; }
N static void rethrow_04() { rethrow_05(); sink++; }
N static void rethrow_03() { try { rethrow_04(); } catch (int) { throw; } sink++; }
N static void rethrow_02() { rethrow_03(); sink++; }
N static void rethrow_01() { rethrow_02(); sink++; }
N static void rethrow_park() { park_here(); }
N static void cthrow_cb() { throw 3; }
N static void cthrow_park() { park_here(); }
N static void caught_cb() { throw 5; }
// clang-format on

extern "C" void c_frame_1(void (*cb)(void));

UNTRACED static void park_untraced()
{
	pthread_barrier_wait(&parked);
	for (;;)
		pause();
}

/* Parks in the catching function, after no traced call: the catch alone mends the stack. */
N static void caught_base()
{
	try {
		c_frame_1(caught_cb);
	} catch (int e) {
		sink += e;
	}
	park_untraced();
}

N static void *caught_thread(void *arg)
{
	rip_thread_set_name("caught");
	caught_base();
	return arg;
}

/* Catches 10 frames down and returns: its exit is seen, the unwinding notwithstanding. */
N static void rehook_mid()
{
	try {
		throw_01();
	} catch (int e) {
		sink += e;
	}
}

N static void rehook_base()
{
	rehook_mid();
	park_untraced();
}

N static void *rehook_thread(void *arg)
{
	rip_thread_set_name("rehook");
	rehook_base();
	return arg;
}

N static void cthrow_base()
{
	try {
		c_frame_1(cthrow_cb);
	} catch (int e) {
		sink += e;
	}
	cthrow_park();
}

N static void *cthrow_thread(void *arg)
{
	rip_thread_set_name("cthrow");
	cthrow_base();
	return arg;
}

N static void throw_base()
{
	try {
		throw_01();
	} catch (int e) {
		sink += e;
	}
	throw_park();
}

N static void rethrow_base()
{
	try {
		rethrow_01();
	} catch (int e) {
		sink += e;
	}
	rethrow_park();
}

N static void *throw_thread(void *arg)
{
	rip_thread_set_name("thrower");
	throw_base();
	return arg;
}

N static void *rethrow_thread(void *arg)
{
	rip_thread_set_name("rethrow");
	rethrow_base();
	return arg;
}

/* ---- cancel ---- */

struct noisy {
	const char *what;
	~noisy()
	{
		printf("destructor %s\n", what);
		fflush(stdout);
	}
};

static int cancel_fds[2];

N static void cancel_leaf(int how)
{
	char c;

	if (how == 0)
		pthread_exit(NULL);
	if (how == 1 && read(cancel_fds[0], &c, 1) < 0)
		puts("read failed");
	for (;;) {
		pthread_testcancel();
		sched_yield();
	}
}

N static void cancel_mid(int how)
{
	static const char *const what[] = { "exit", "read", "testcancel" };
	noisy d{ what[how] };

	cancel_leaf(how);
	sink++;
}

N static void *cancel_thread(void *how)
{
	cancel_mid((int)(intptr_t)how);
	return NULL;
}

UNTRACED static int cancel_run()
{
	pthread_t t[3];

	if (pipe(cancel_fds))
		return 3;
	for (int r = 0; r < 3; r++) {
		for (intptr_t i = 0; i < 3; i++)
			if (pthread_create(&t[i], NULL, cancel_thread, (void *)i))
				return 3;
		pthread_join(t[0], NULL);
		pthread_cancel(t[1]);
		pthread_cancel(t[2]);
		pthread_join(t[1], NULL);
		pthread_join(t[2], NULL);
	}
	puts("done");
	return 0;
}

/* Wait for the file GO. */
UNTRACED static void *gate_thread(void *go)
{
	while (access((const char *)go, F_OK))
		usleep(1000);
	return NULL;
}

UNTRACED int main(int argc, char **argv)
{
	pthread_t t[5];
	FILE *f;

	if (argc == 2 && !strcmp(argv[1], "--cancel"))
		return cancel_run();
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: funcprog-cxx READY [GO] | --cancel\n");
		return 2;
	}
	if (argc == 3) {
		/* A thread waits: rip run's watcher, which patches, starts with the first thread. */
		std::string gate = std::string(argv[1]) + ".gate";

		if (pthread_create(&t[0], NULL, gate_thread, argv[2]))
			return 3;
		f = fopen(gate.c_str(), "w");
		if (!f || fputs("gate\n", f) < 0 || fclose(f))
			return 3;
		pthread_join(t[0], NULL);
	}
	if (pthread_barrier_init(&parked, NULL, 6) ||
	    pthread_create(&t[0], NULL, throw_thread, NULL) ||
	    pthread_create(&t[1], NULL, rethrow_thread, NULL) ||
	    pthread_create(&t[2], NULL, cthrow_thread, NULL) ||
	    pthread_create(&t[3], NULL, caught_thread, NULL) ||
	    pthread_create(&t[4], NULL, rehook_thread, NULL))
		return 3;
	pthread_barrier_wait(&parked);
	f = fopen(argv[1], "w");
	if (!f || fputs("ready\n", f) < 0 || fclose(f))
		return 3;
	for (;;)
		pause();
}
