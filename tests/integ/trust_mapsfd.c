// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/trust_mapsfd.c - the program's descriptor numbers stay its
 * own while one thread moves an anonymous mapping with mremap and another
 * opens and closes a file.  librip-preload's mremap hook asks whether the
 * range is anonymous private memory, from /proc/self/maps: read in the
 * program's own descriptor table, that file took the lowest free number
 * for a moment, and the other thread's open got the next one.
 *
 *	trust_mapsfd ROUNDS [keep]	prints what it saw; exit 0 when every
 *					open got the lowest free number, 1 when
 *					not, 2 on error; keep: the last mapping
 *					stays mapped
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile int done;
static long opens, wrong;
static int expect;

static void *opener(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			perror("open");
			exit(2);
		}
		opens++;
		if (fd != expect)
			wrong++;
		close(fd);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 2000, pg = sysconf(_SC_PAGESIZE);
	pthread_t th;
	size_t len = (size_t)pg;
	char *p;

	expect = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (expect < 0)
		return 2;
	close(expect);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || pthread_create(&th, NULL, opener, NULL))
		return 2;
	for (long i = 0; i < rounds; i++) {
		size_t nlen = (size_t)pg * (size_t)(1 + (i & 7));
		char *q = mremap(p, len, nlen, MREMAP_MAYMOVE);

		if (q == MAP_FAILED) {
			perror("mremap");
			return 2;
		}
		q[nlen - 1] = 1;
		p = q;
		len = nlen;
	}
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	if (argc < 3 || strcmp(argv[2], "keep"))
		munmap(p, len);
	printf("rounds %ld opens %ld wrong %ld\n", rounds, opens, wrong);
	return wrong ? 1 : 0;
}
