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

static volatile int done;
static long opens, wrong;
static int expect;
static int report_now; /* exit mode: say so at once (main is gone by the end) */

static void *opener(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			perror("open");
			exit(2);
		}
		/* Release: main waits for the first opens before it raises anything. */
		__atomic_store_n(&opens, opens + 1, __ATOMIC_RELEASE);
		if (fd != expect && !wrong++ && report_now) {
			char msg[32];
			int n = snprintf(msg, sizeof(msg), "wrong %d\n", fd);

			if (write(1, msg, (size_t)n) != n)
				_exit(2);
		}
		close(fd);
		/* The number free most of the time, where a descriptor of ours would take it. */
		for (volatile int i = 0; i < 4000; i++)
			;
	}
	return NULL;
}

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
	expect = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (expect < 0)
		return 2;
	close(expect);
	report_now = at_exit;
	if (pthread_create(&th, NULL, opener, NULL))
		return 2;
	/* Acquire: pairs with the opener's release store. */
	while (__atomic_load_n(&opens, __ATOMIC_ACQUIRE) < 1000)
		sched_yield();
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
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	printf("signals %ld opens %ld wrong %ld\n", n, opens, wrong);
	return wrong ? 1 : 0;
}
