/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of tests/integ/leaks-reserve.sh: address space
 * reserved with PROT_NONE and parts of it made memory, as a JVM's heap or
 * an arena does.  64 MiB reserved at reserve_site(); its first MiB made
 * accessible by mprotect at commit_mprotect(), then read-only (a change of
 * protection of memory: no allocation); 2 MiB at 4 MiB mapped over it
 * (MAP_FIXED, read-write) at commit_fixed(), of which the last 512 KiB are
 * given back (MAP_FIXED with PROT_NONE) at uncommit(); 8 MiB reserved at
 * reserve_freed() and unmapped; an mprotect of a malloc'd page outside any
 * reservation.  Left: 1 MiB and 1.5 MiB of memory, and 61.5 MiB reserved in
 * two ranges.  Prints "done"; exit 2 when a call fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIB (1024 * 1024)

__attribute__((noinline)) static char *reserve_site(size_t len)
{
	char *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	__asm__ __volatile__("" ::: "memory");
	return p == MAP_FAILED ? NULL : p;
}

__attribute__((noinline)) static int commit_mprotect(char *p, size_t len)
{
	int ret = mprotect(p, len, PROT_READ | PROT_WRITE);

	__asm__ __volatile__("" ::: "memory");
	return ret;
}

__attribute__((noinline)) static int reprotect(char *p, size_t len)
{
	int ret = mprotect(p, len, PROT_READ);

	__asm__ __volatile__("" ::: "memory");
	return ret;
}

__attribute__((noinline)) static int commit_fixed(char *p, size_t len)
{
	void *q = mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
		       0);

	__asm__ __volatile__("" ::: "memory");
	return q == p ? 0 : -1;
}

__attribute__((noinline)) static int uncommit(char *p, size_t len)
{
	void *q = mmap(p, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
		       -1, 0);

	__asm__ __volatile__("" ::: "memory");
	return q == p ? 0 : -1;
}

__attribute__((noinline)) static char *reserve_freed(size_t len)
{
	char *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	__asm__ __volatile__("" ::: "memory");
	return p == MAP_FAILED ? NULL : p;
}

int main(void)
{
	char *r = reserve_site(64 * MIB), *f, *page;

	if (!r || commit_mprotect(r, MIB) || (r[0] = 1, 0) || reprotect(r, MIB))
		return 2;
	if (commit_fixed(r + 4 * MIB, 2 * MIB) || uncommit(r + 5 * MIB + MIB / 2, MIB / 2))
		return 2;
	r[4 * MIB] = 1;
	f = reserve_freed(8 * MIB);
	if (!f || munmap(f, 8 * MIB))
		return 2;
	page = aligned_alloc(4096, 4096);
	if (!page || mprotect(page, 4096, PROT_READ) ||
	    mprotect(page, 4096, PROT_READ | PROT_WRITE))
		return 2;
	free(page);
	puts("done");
	fflush(stdout);
	_exit(0);
}
