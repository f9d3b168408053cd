// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/trust_pagemapfd.c - the program's descriptor numbers stay its
 * own while librip-preload takes pagemap snapshots.  A snapshot (on the
 * signal RIP_PAGEMAP_SIGNAL names, and at exit) reads /proc/self/maps and
 * /proc/self/pagemap: opened in the program's own descriptor table, those
 * files took the lowest free numbers for as long as the snapshot ran, and
 * another thread's open got a higher one.
 *
 *	trust_pagemapfd signal N	raises SIGUSR2 N times in the main thread
 *					while a second thread opens /dev/null and
 *					checks that it gets the lowest free
 *					number; prints what it saw; exit 0 when
 *					every open did, 1 when not, 2 on error
 *	trust_pagemapfd exit		the same thread, still opening when main
 *					returns (the exit snapshot runs
 *					meanwhile, over 2,000 small mappings
 *					that make it last): prints "wrong N"
 *					the moment an open gets another number N
 *
 * Untraced (RIP_PAGEMAP_SIGNAL not set) the program catches SIGUSR2
 * itself, with a handler that does nothing.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fdopener.h"

static void nothing(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 100;
	bool at_exit = argc > 1 && !strcmp(argv[1], "exit");
	pthread_t th;

	if (argc < 2 || (!at_exit && strcmp(argv[1], "signal"))) {
		fprintf(stderr, "usage: trust_pagemapfd signal N | exit\n");
		return 2;
	}
	if (!getenv("RIP_PAGEMAP_SIGNAL"))
		signal(SIGUSR2, nothing);
	fdo_report_now = at_exit;
	if (fdo_start_warm(&th, 4000))
		return 2;
	if (at_exit) {
		long pg = sysconf(_SC_PAGESIZE);

		/* one written page each, a hole after it: no two of them merge */
		for (int i = 0; i < 2000; i++) {
			char *p = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED || munmap(p + pg, (size_t)pg))
				return 2;
			p[0] = 1;
		}
		if (write(1, "exiting\n", 8) != 8)
			return 2;
		return 0; /* the exit snapshot runs while the opener opens */
	}
	for (long i = 0; i < n; i++) {
		raise(SIGUSR2);
		free(malloc(64)); /* a snapshot put off by the handler is taken here */
	}
	fdo_stop(th);
	printf("signals %ld opens %ld wrong %ld\n", n, fdo_opens, fdo_wrong);
	return fdo_wrong ? 1 : 0;
}
