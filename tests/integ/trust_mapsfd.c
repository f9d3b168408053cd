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

#include "fdopener.h"

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 2000, pg = sysconf(_SC_PAGESIZE);
	pthread_t th;
	size_t len = (size_t)pg;
	char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || fdo_start(&th, 0))
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
	fdo_stop(th);
	if (argc < 3 || strcmp(argv[2], "keep"))
		munmap(p, len);
	printf("rounds %ld opens %ld wrong %ld\n", rounds, fdo_opens, fdo_wrong);
	return fdo_wrong ? 1 : 0;
}
