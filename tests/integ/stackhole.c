// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the helper of tests/integ/trust-stackhole.sh: main makes a
 * page of its own stack, above the frames of its calls, unreadable (MODE:
 * mprotect, sys (syscall(SYS_mprotect)), pkey (pkey_mprotect), munmap,
 * fixed (mmap MAP_FIXED PROT_NONE)), then allocates 200 times through a
 * function without unwind information that keeps in rbp, as code built
 * without frame pointers may keep anything there, an address in that
 * page, and burns 100 ms of CPU there; then makes the page readable again
 * (mprotect, or mmap MAP_FIXED for munmap and fixed) and leaks 10 blocks
 * of 77 bytes from stackhole_after(), whose stacks must reach main again;
 * stackhole_during() leaks 10 blocks of 55 bytes before that, while the
 * page is unreadable.  MODE sig: a signal handler makes a page of its own
 * frame unreadable and allocates there twice (sig_mode).  MODE failed: an
 * mprotect the kernel refuses (EINVAL), no page made unreadable.  Prints
 * "stackhole MODE ok"; exit 3 where pkey_mprotect is refused.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rbpspin.h"

#if defined(RIP_TESTS_RBP_SPIN)
/* malloc(n) with rbp = fp, from a function that has no unwind information */
__attribute__((visibility("hidden"))) void *stackhole_malloc(void *fp, size_t n);
__asm__(".text\n"
	".globl stackhole_malloc\n"
	".hidden stackhole_malloc\n"
	".type stackhole_malloc, @function\n"
	"stackhole_malloc:\n"
	"	push %rbp\n"
	"	mov %rdi, %rbp\n"
	"	mov %rsi, %rdi\n"
	"	call malloc@PLT\n"
	"	pop %rbp\n"
	"	ret\n"
	".size stackhole_malloc, .-stackhole_malloc\n");
#else
static void *stackhole_malloc(void *fp, size_t n)
{
	(void)fp;
	return malloc(n);
}

static long rbp_spin(void *fp, long n)
{
	static volatile long sink;

	(void)fp;
	while (n--)
		sink = sink + 1;
	return 0;
}
#endif

static volatile long sink;
/* kept: blocks stored where nothing reads them may be left out by the compiler */
void *volatile stackhole_leaked[10];

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void *volatile stackhole_leaked_during[10];

/* The blocks the test finds in rip leaks, from here and main. */
__attribute__((noinline)) void stackhole_after(void);

__attribute__((noinline)) void stackhole_after(void)
{
	for (int i = 0; i < 10; i++)
		stackhole_leaked[i] = malloc(77);
	__asm__ volatile("" ::: "memory");
}

/* The same while the hole is there: stacks of the same frames above main. */
__attribute__((noinline)) void stackhole_during(void);

__attribute__((noinline)) void stackhole_during(void)
{
	for (int i = 0; i < 10; i++)
		stackhole_leaked_during[i] = malloc(55);
	__asm__ volatile("" ::: "memory");
}

/* sig: how much the heap grew at each of the handler's two allocations */
static size_t sig_grew[2];
static int sig_err;

/*
 * A handler whose frame has a hole, between it and its signal frame, and
 * that allocates twice there from code without unwind information (a
 * synchronous signal: the program's own malloc is not interrupted).
 */
static void sig_handler(int sig)
{
	char frame[3 * 4096];
	char *page = (char *)(((uintptr_t)frame + 4095) & ~(uintptr_t)4095);
	void *p[2];

	(void)sig;
	memset(frame, 0, sizeof(frame));
	if (mprotect(page, 4096, PROT_NONE)) {
		sig_err = errno;
		return;
	}
	for (int i = 0; i < 2; i++) {
		size_t before = mallinfo2().uordblks;

		/* past the thread caches: each block comes out of the heap's count */
		p[i] = stackhole_malloc(page + 64, 2000);
		sig_grew[i] = mallinfo2().uordblks - before;
	}
	if (mprotect(page, 4096, PROT_READ | PROT_WRITE))
		sig_err = errno;
	free(p[0]);
	free(p[1]);
}

/*
 * sig: a thread's first call of libunwind mallocs (backtrace.c: the block
 * of its TLS), and is never made from a signal handler, the handler's
 * signal frame above the hole too: the two allocations must grow the heap
 * alike (with glibc's thread caches off, GLIBC_TUNABLES, each malloc
 * counts).  0, 1, 2 (a setup failure).
 */
static int sig_mode(void)
{
	void *volatile first = malloc(1); /* volatile: a call the compiler keeps */

	/* a first call before the hole: the thread's bounds are known */
	free(first);
	signal(SIGUSR1, sig_handler);
	raise(SIGUSR1);
	if (sig_err) {
		fprintf(stderr, "stackhole sig: mprotect: %s\n", strerror(sig_err));
		return 2;
	}
	if (sig_grew[0] != sig_grew[1]) {
		fprintf(stderr,
			"stackhole sig: the handler's first allocation grew the heap by %zu "
			"bytes, its second by %zu\n",
			sig_grew[0], sig_grew[1]);
		return 1;
	}
	return 0;
}

/*
 * Make the page unreadable as mode says: 0, -1 (errno), 3 (refused: pkey).
 * failed: an mprotect the kernel refuses, the page left readable.
 */
static int hole(const char *mode, char *page)
{
	if (!strcmp(mode, "mprotect"))
		return mprotect(page, 4096, PROT_NONE);
	if (!strcmp(mode, "sys"))
		return (int)syscall(SYS_mprotect, page, 4096, PROT_NONE);
	if (!strcmp(mode, "pkey"))
		return pkey_mprotect(page, 4096, PROT_NONE, -1) ? 3 : 0;
	if (!strcmp(mode, "munmap"))
		return munmap(page, 4096);
	/* an address the kernel refuses (EINVAL): no hole at all */
	if (!strcmp(mode, "failed"))
		return mprotect(page + 1, 4096, PROT_NONE) == -1 && errno == EINVAL ? 0 : -1;
	if (!strcmp(mode, "fixed"))
		return mmap(page, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
			    0) == MAP_FAILED ?
			       -1 :
			       0;
	errno = EINVAL;
	return -1;
}

static int unhole(const char *mode, char *page)
{
	if (!strcmp(mode, "munmap") || !strcmp(mode, "fixed"))
		return mmap(page, 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ?
			       -1 :
			       0;
	return mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "mprotect";
	/* a page of our own stack, above the frames of the calls */
	char frame[3 * 4096];
	char *page = (char *)(((uintptr_t)frame + 4095) & ~(uintptr_t)4095);
	uint64_t end;
	int r;

	if (!strcmp(mode, "sig")) {
		r = sig_mode();
		if (r)
			return r;
		stackhole_after();
		printf("stackhole sig ok\n");
		return 0;
	}
	memset(frame, 0, sizeof(frame));
	free(malloc(1)); /* a first call before the hole: the thread's bounds are known */
	r = hole(mode, page);
	if (r == 3)
		return 3;
	if (r) {
		fprintf(stderr, "stackhole %s: %s\n", mode, strerror(errno));
		return 2;
	}
	for (int i = 0; i < 200; i++)
		free(stackhole_malloc(page + 64, 16 + (size_t)i));
	end = cpu_ns() + 100000000u;
	while (cpu_ns() < end)
		sink += rbp_spin(page + 64, 1000000);
	stackhole_during();
	if (unhole(mode, page)) {
		fprintf(stderr, "stackhole %s: the page back: %s\n", mode, strerror(errno));
		return 2;
	}
	stackhole_after();
	printf("stackhole %s ok\n", mode);
	return 0;
}
