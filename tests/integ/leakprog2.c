/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of integ/leaks-filters.sh and integ/leaks-diff.sh.
 * Like leakprog, it emits the events of rip/resource.h itself, with made-up
 * addresses and backtraces made of its own site_* functions, and prints
 * the ring file's path first.
 *
 *	leakprog2 filters   three phases 300 ms apart, by three threads; prints
 *	                    "main TID", "t1 TID", "t2 TID" after the path
 *	    phase A (main)  site_a      2 blocks, 20 bytes (a third freed)
 *	    phase B (t1)    site_t1     3 blocks, 300 bytes (a fourth freed in C)
 *	            (t2)    site_t2     4 blocks, 200 bytes; site_fd 1 fd
 *	            (main)  site_bmain  1 block, 7 bytes
 *	    phase C (main)  site_c      1 block, 1000 bytes
 *	leakprog2 diff N    site_grow N x 64 bytes (under two backtrace ids),
 *	                    site_same 2 x 10, site_new 1 x 500 if N > 2,
 *	                    site_gone 1 x 30 if N <= 2, site_shrink 1 (N > 2)
 *	                    or 4 x 10, site_bigger 1 x 100 (N > 2) or 10,
 *	                    site_fd 2 (N > 2) or 1 fds; backtrace ids depend on N
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>
#include <rip/resource.h>

RIP_EVENT_TYPE(ev_bt, "rip:bt", RIP_CAT_BT, RIP_FIELD(U32, "id"),
	       RIP_FIELD(HEX64_ARRAY, "frames"));
RIP_EVENT_TYPE(ev_alloc, "mem:alloc", RIP_CAT_MEM, RIP_FIELD(HEX64, "addr"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(ev_free, "mem:free", RIP_CAT_MEM, RIP_FIELD(HEX64, "addr"), RIP_FIELD(U32, "bt"),
	       RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(ev_open, "fd:open", RIP_CAT_FD, RIP_FIELD(S32, "fd"), RIP_FIELD(U32, "bt"),
	       RIP_FIELD(U32, "kind"), RIP_FIELD(S32, "flags"), RIP_FIELD(STRING, "path"));

#define NOINLINE static __attribute__((noinline, used))

NOINLINE void site_a(void) { __asm__ volatile(""); }
NOINLINE void site_t1(void) { __asm__ volatile(""); }
NOINLINE void site_t2(void) { __asm__ volatile(""); }
NOINLINE void site_bmain(void) { __asm__ volatile(""); }
NOINLINE void site_c(void) { __asm__ volatile(""); }
NOINLINE void site_fd(void) { __asm__ volatile(""); }
NOINLINE void site_free(void) { __asm__ volatile(""); }
NOINLINE void site_grow(void) { __asm__ volatile(""); }
NOINLINE void site_same(void) { __asm__ volatile(""); }
NOINLINE void site_new(void) { __asm__ volatile(""); }
NOINLINE void site_gone(void) { __asm__ volatile(""); }
NOINLINE void site_shrink(void) { __asm__ volatile(""); }
NOINLINE void site_bigger(void) { __asm__ volatile(""); }
NOINLINE void site_caller(void) { __asm__ volatile(""); }

#define RA(f) ((uint64_t)(uintptr_t)(f) + 1)

enum { BT_A = 1, BT_T1, BT_T2, BT_BMAIN, BT_C, BT_FD, BT_FREE };

static void define_bt(uint32_t id, void (*site)(void))
{
	uint64_t v[1] = { id };
	uint64_t frames[2] = { RA(site), RA(site_caller) };

	rip_event_array(&ev_bt, v, frames, 2);
}

static void alloc(uint64_t addr, uint64_t size, uint32_t bt)
{
	rip_event4(&ev_alloc, addr, size, bt, RIP_MEM_MALLOC);
}

static void xfree(uint64_t addr)
{
	rip_event3(&ev_free, addr, BT_FREE, RIP_MEM_FREE);
}

static void fd_open(int fd, uint32_t bt, const char *path)
{
	uint64_t v[4] = { (uint64_t)(int64_t)fd, bt, RIP_FD_OPEN, 0 };

	rip_event_str(&ev_open, v, path);
}

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

static void *t1_main(void *arg)
{
	(void)arg;
	rip_thread_set_name("t1");
	printf("t1 %ld\n", (long)syscall(SYS_gettid));
	for (int i = 0; i < 4; i++)
		alloc(0x100000 + 0x100 * (uint64_t)i, 100, BT_T1);
	rip_thread_detach();
	return NULL;
}

static void *t2_main(void *arg)
{
	(void)arg;
	rip_thread_set_name("t2");
	printf("t2 %ld\n", (long)syscall(SYS_gettid));
	for (int i = 0; i < 4; i++)
		alloc(0x200000 + 0x100 * (uint64_t)i, 50, BT_T2);
	fd_open(9, BT_FD, "/etc/leak-t2");
	rip_thread_detach();
	return NULL;
}

static int filters(void)
{
	pthread_t t;

	rip_thread_set_name("main");
	printf("main %ld\n", (long)syscall(SYS_gettid));
	define_bt(BT_A, site_a);
	define_bt(BT_T1, site_t1);
	define_bt(BT_T2, site_t2);
	define_bt(BT_BMAIN, site_bmain);
	define_bt(BT_C, site_c);
	define_bt(BT_FD, site_fd);
	define_bt(BT_FREE, site_free);

	/* A */
	for (int i = 0; i < 3; i++)
		alloc(0x1000 + 0x100 * (uint64_t)i, 10, BT_A);
	xfree(0x1100);
	msleep(300);

	/* B */
	if (pthread_create(&t, NULL, t1_main, NULL))
		return -1;
	pthread_join(t, NULL);
	if (pthread_create(&t, NULL, t2_main, NULL))
		return -1;
	pthread_join(t, NULL);
	alloc(0x300000, 7, BT_BMAIN);
	msleep(300);

	/* C */
	alloc(0x400000, 1000, BT_C);
	xfree(0x100300);
	return 0;
}

static void diff(unsigned n)
{
	/* ids shift with n: the same stacks get other ids in each run */
	uint32_t b = 100 + n * 16;

	rip_thread_set_name("main");
	define_bt(b + 0, site_grow);
	define_bt(b + 1, site_same);
	define_bt(b + 2, site_new);
	define_bt(b + 3, site_gone);
	define_bt(b + 4, site_shrink);
	define_bt(b + 5, site_bigger);
	define_bt(b + 6, site_fd);
	define_bt(b + 7, site_grow); /* a second id, the same stack */
	define_bt(BT_FREE, site_free);

	for (unsigned i = 0; i < n; i++)
		alloc(0x10000 + 0x100 * (uint64_t)i, 64, b + (i & 1 ? 7 : 0));
	alloc(0x20000, 10, b + 1);
	alloc(0x20100, 10, b + 1);
	if (n > 2)
		alloc(0x30000, 500, b + 2);
	else
		alloc(0x40000, 30, b + 3);
	for (unsigned i = 0; i < (n > 2 ? 1 : 4); i++)
		alloc(0x50000 + 0x100 * (uint64_t)i, 10, b + 4);
	alloc(0x60000, n > 2 ? 100 : 10, b + 5);
	fd_open(10, b + 6, "/etc/leak-d");
	if (n > 2)
		fd_open(11, b + 6, "/etc/leak-d");
}

int main(int argc, char **argv)
{
	RIP_OPTS(rip_ring_opts, o, .slots = 16);
	const char *mode = argc > 1 ? argv[1] : "";
	char path[4096];
	int ret;

	if (strcmp(mode, "filters") && (strcmp(mode, "diff") || argc != 3)) {
		fprintf(stderr, "usage: leakprog2 filters|diff N\n");
		return 2;
	}
	ret = rip_ring_open(&o);
	if (ret || rip_ring_path(path, sizeof(path))) {
		fprintf(stderr, "leakprog2: rip_ring_open: %s\n", strerror(-ret));
		return 1;
	}
	printf("%s\n", path);
	fflush(stdout);
	if (!strcmp(mode, "diff")) {
		diff((unsigned)strtoul(argv[2], NULL, 10));
		return 0;
	}
	ret = filters();
	fflush(stdout);
	return ret ? 1 : 0;
}
