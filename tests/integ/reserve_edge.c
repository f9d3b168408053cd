/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of tests/integ/leaks-reserve-edge.sh: the other ways
 * a reservation is made memory or moved.  16 MiB reserved at
 * reserve_site(), its first MiB made accessible by syscall(SYS_mprotect)
 * at commit_sys() (the raw call, as the wrapper); 4 MiB reserved at
 * reserve_moved() and grown to 8 MiB by mremap (MREMAP_MAYMOVE) at
 * grow_reserve(): still address space, not memory.  Left: 1 MiB of memory,
 * 23 MiB reserved in 2 ranges.  Prints "done"; exit 2 when a call fails.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MIB (1024 * 1024)

__attribute__((noinline)) static char *reserve_site(size_t len)
{
	char *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	__asm__ __volatile__("" ::: "memory");
	return p == MAP_FAILED ? NULL : p;
}

__attribute__((noinline)) static int commit_sys(char *p, size_t len)
{
	long ret = syscall(SYS_mprotect, p, len, PROT_READ | PROT_WRITE);

	__asm__ __volatile__("" ::: "memory");
	return (int)ret;
}

__attribute__((noinline)) static char *reserve_moved(size_t len)
{
	char *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	__asm__ __volatile__("" ::: "memory");
	return p == MAP_FAILED ? NULL : p;
}

__attribute__((noinline)) static char *grow_reserve(char *p, size_t old, size_t len)
{
	char *q = mremap(p, old, len, MREMAP_MAYMOVE);

	__asm__ __volatile__("" ::: "memory");
	return q == MAP_FAILED ? NULL : q;
}

int main(void)
{
	char *r = reserve_site(16 * MIB), *m;

	if (!r || commit_sys(r, MIB))
		return 2;
	r[0] = 1;
	m = reserve_moved(4 * MIB);
	if (!m || !grow_reserve(m, 4 * MIB, 8 * MIB))
		return 2;
	puts("done");
	fflush(stdout);
	_exit(0);
}
