/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/integ/jitprog.c - a program with a "JIT", for tests/integ/jit-perfmap.sh:
 * it writes a function's machine code (x86-64: count a register down from
 * 100 million, then return) into an anonymous mapping of its own, names it
 * jit_spin in /tmp/perf-PID.map as JITs do for perf (node
 * --perf-basic-prof, Java's perf-map agent), and calls it for about a
 * second of CPU time.  The map stays (as node's does): the test removes it.
 * Prints the map's path.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	static const uint8_t code[] = {
		0x48, 0xb9, 0x00, 0xe1, 0xf5, 0x05, 0, 0, 0, 0, /* mov rcx, 100000000 */
		0x48, 0xff, 0xc9,				/* 1: dec rcx */
		0x75, 0xfb,					/* jnz 1b */
		0xc3,						/* ret */
	};
	char path[64];
	struct timespec t0, t;
	void (*fn)(void);
	uint8_t *p;
	FILE *f;

#if !defined(__x86_64__)
	return 77;
#endif
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p + 64, code, sizeof(code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jit_spin\n", (unsigned long)(uintptr_t)(p + 64), sizeof(code));
	fclose(f);
	printf("%s\n", path);
	fflush(stdout);
	fn = (void (*)(void))(uintptr_t)(p + 64);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do {
		fn();
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 1000000000L);
	return 0;
}
