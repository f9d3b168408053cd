// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/trust_rulecachefd.c - the program's descriptor numbers stay
 * its own while librip-preload reads and writes its rule cache
 * (RIP_RULE_CACHE, set by rip run --mem).  A process reads an object's
 * file of unwind rules when it first computes a rule in the object (in a
 * hook of malloc or free), and writes it again at exit: opened in the
 * program's own descriptor table, that file took the lowest free number
 * for a moment, and another thread's open got a higher one.
 *
 *	trust_rulecachefd load LIB...	loads each LIB (dlopen), then a
 *					second thread opens /dev/null and
 *					checks that it gets the lowest free
 *					number while the main thread calls
 *					each LIB's rcfd_run(), which allocates
 *					from many call sites (rules in a new
 *					object, each); prints what it saw;
 *					exit 0 when every open did, 1 when
 *					not, 2 on error
 *	trust_rulecachefd exit LIB...	the same calls first, then the same
 *					thread, still opening when main
 *					returns (the rules are written
 *					meanwhile): prints "wrong N" the
 *					moment an open gets another number N
 */
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "fdopener.h"

static void (*runs[64])(void);

/* Load each library (before the opener starts: dlopen opens files of its own): 0, or -1. */
static int load_libs(int n, char **libs)
{
	for (int i = 0; i < n; i++) {
		void *h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);

		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return -1;
		}
		*(void **)&runs[i] = dlsym(h, "rcfd_run");
		if (!runs[i]) {
			fprintf(stderr, "dlsym: %s\n", dlerror());
			return -1;
		}
	}
	return 0;
}

/* Call each library's rcfd_run: its rules, computed or read, as its first hooks walk it. */
static void run_libs(int n)
{
	for (int i = 0; i < n; i++)
		runs[i]();
}

int main(int argc, char **argv)
{
	pthread_t th;
	int at_exit = argc > 1 && !strcmp(argv[1], "exit");

	if (argc < 3 || argc - 2 > 64 || (!at_exit && strcmp(argv[1], "load"))) {
		fprintf(stderr, "usage: trust_rulecachefd load|exit LIB...\n");
		return 2;
	}
	if (load_libs(argc - 2, argv + 2))
		return 2;
	if (at_exit)
		run_libs(argc - 2);
	fdo_report_now = at_exit;
	if (fdo_start_warm(&th, 4000))
		return 2;
	if (at_exit) {
		if (write(1, "exiting\n", 8) != 8)
			return 2;
		return 0; /* the rules are written while the opener opens */
	}
	run_libs(argc - 2);
	fdo_stop(th);
	printf("libs %d opens %ld wrong %ld\n", argc - 2, fdo_opens, fdo_wrong);
	return fdo_wrong ? 1 : 0;
}
