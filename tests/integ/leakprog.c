/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of integ/leaks-*.sh.  Emits the events of
 * rip/resource.h itself, through rip.h, as librip-preload.so would, with
 * made-up addresses but real backtraces: the frames are the addresses of
 * this program's site_* functions (plus one, as return addresses are), so
 * rip leaks must name those functions.  Prints the ring file's path.
 *
 *	leakprog exit        the known sequence below, then return from main
 *	leakprog wait        the same, then "ready" and pause()
 *	leakprog corrupt     bad backtraces: id 0, no frames, an id defined twice
 *	                     with different frames, an id never defined, and a
 *	                     definition whose frames are 0x5151... (tests patch it)
 *	leakprog bench N     N allocations and N frees from each of 2 threads
 *
 * What `exit` leaves live (the test's expectations):
 *	site_malloc    3 blocks, 300 bytes    (5 malloc'd, 2 freed)
 *	site_calloc    1 block, 4096 bytes
 *	site_realloc   1 block, 8 bytes       (realloc(NULL) that stays)
 *	site_realloc2  1 block, 70 bytes      (the end of a realloc chain)
 *	site_thread    1 block, 777 bytes     (its stack defined later by main)
 *	site_open      1 fd: /etc/leak-a
 *	site_pipe      1 fd
 *	site_shmget    1 segment, 65536 bytes (attached, detached, never removed)
 *	site_shmmap    1 mapping, 4096 bytes
 * plus 1 free and 1 close of things never made, 1 failed malloc.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rip.h>
#include <rip/resource.h>

RIP_EVENT_TYPE(ev_bt, "rip:bt", RIP_CAT_BT, RIP_FIELD(U32, "id"),
	       RIP_FIELD(HEX64_ARRAY, "frames"));
RIP_EVENT_TYPE(ev_alloc, "mem:alloc", RIP_CAT_MEM, RIP_FIELD(HEX64, "addr"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(ev_free, "mem:free", RIP_CAT_MEM, RIP_FIELD(HEX64, "addr"), RIP_FIELD(U32, "bt"),
	       RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(ev_realloc, "mem:realloc", RIP_CAT_MEM, RIP_FIELD(HEX64, "old"),
	       RIP_FIELD(HEX64, "addr"), RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"));
RIP_EVENT_TYPE(ev_open, "fd:open", RIP_CAT_FD, RIP_FIELD(S32, "fd"), RIP_FIELD(U32, "bt"),
	       RIP_FIELD(U32, "kind"), RIP_FIELD(S32, "flags"), RIP_FIELD(STRING, "path"));
RIP_EVENT_TYPE(ev_close, "fd:close", RIP_CAT_FD, RIP_FIELD(S32, "fd"), RIP_FIELD(U32, "bt"),
	       RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(ev_shm_create, "shm:create", RIP_CAT_SHM, RIP_FIELD(S64, "id"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"),
	       RIP_FIELD(STRING, "name"));
RIP_EVENT_TYPE(ev_shm_attach, "shm:attach", RIP_CAT_SHM, RIP_FIELD(HEX64, "addr"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(S64, "id"), RIP_FIELD(U32, "bt"),
	       RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(ev_shm_detach, "shm:detach", RIP_CAT_SHM, RIP_FIELD(HEX64, "addr"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(ev_shm_remove, "shm:remove", RIP_CAT_SHM, RIP_FIELD(S64, "id"),
	       RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"), RIP_FIELD(STRING, "name"));

/* Backtrace ids, as the preload library interns them. */
enum { BT_MALLOC = 1, BT_CALLOC, BT_REALLOC, BT_OPEN, BT_SHMGET, BT_FREE, BT_REALLOC2,
       BT_PIPE, BT_THREAD, BT_SHMMAP };

#define NOINLINE static __attribute__((noinline, used))

/* The sites: real functions, so that their addresses symbolize to these names. */
NOINLINE void site_malloc(void) { __asm__ volatile(""); }
NOINLINE void site_calloc(void) { __asm__ volatile(""); }
NOINLINE void site_realloc(void) { __asm__ volatile(""); }
NOINLINE void site_realloc2(void) { __asm__ volatile(""); }
NOINLINE void site_open(void) { __asm__ volatile(""); }
NOINLINE void site_pipe(void) { __asm__ volatile(""); }
NOINLINE void site_shmget(void) { __asm__ volatile(""); }
NOINLINE void site_shmmap(void) { __asm__ volatile(""); }
NOINLINE void site_free(void) { __asm__ volatile(""); }
NOINLINE void site_thread(void) { __asm__ volatile(""); }
NOINLINE void site_caller(void) { __asm__ volatile(""); }

/* Return addresses: one past an instruction of the function (readers look up addr - 1). */
#define RA(f) ((uint64_t)(uintptr_t)(f) + 1)

static void define_bt(uint32_t id, void (*site)(void))
{
	uint64_t v[1] = { id };
	uint64_t frames[2] = { RA(site), RA(site_caller) };

	rip_event_array(&ev_bt, v, frames, 2);
}

static void alloc(uint64_t addr, uint64_t size, uint32_t bt, uint32_t kind)
{
	rip_event4(&ev_alloc, addr, size, bt, kind);
}

static void xfree(uint64_t addr)
{
	rip_event3(&ev_free, addr, BT_FREE, RIP_MEM_FREE);
}

static void xrealloc(uint64_t old, uint64_t addr, uint64_t size, uint32_t bt)
{
	rip_event4(&ev_realloc, old, addr, size, bt);
}

static void fd_open(int fd, uint32_t bt, uint32_t kind, const char *path)
{
	uint64_t v[4] = { (uint64_t)(int64_t)fd, bt, kind, 0 };

	rip_event_str(&ev_open, v, path);
}

static void fd_close(int fd)
{
	rip_event3(&ev_close, (uint64_t)(int64_t)fd, BT_FREE, RIP_FD_CLOSE);
}

static void shm_create(int64_t id, uint64_t size, uint32_t bt, uint32_t kind, const char *name)
{
	uint64_t v[4] = { (uint64_t)id, size, bt, kind };

	rip_event_str(&ev_shm_create, v, name);
}

static void shm_remove(int64_t id, uint32_t kind, const char *name)
{
	uint64_t v[3] = { (uint64_t)id, BT_FREE, kind };

	rip_event_str(&ev_shm_remove, v, name);
}

static void *thread_main(void *arg)
{
	(void)arg;
	rip_thread_set_name("worker");
	/* bt 9 is defined by main, after this thread is gone */
	alloc(0x50000, 777, BT_THREAD, RIP_MEM_MALLOC);
	alloc(0x51000, 1, BT_THREAD, RIP_MEM_MALLOC);
	xfree(0x51000);
	rip_thread_detach();
	return NULL;
}

static int known(void)
{
	pthread_t t;

	rip_thread_set_name("main");
	define_bt(BT_MALLOC, site_malloc);
	define_bt(BT_CALLOC, site_calloc);
	define_bt(BT_REALLOC, site_realloc);
	define_bt(BT_REALLOC2, site_realloc2);
	define_bt(BT_FREE, site_free);
	define_bt(BT_OPEN, site_open);
	define_bt(BT_PIPE, site_pipe);
	define_bt(BT_SHMGET, site_shmget);
	define_bt(BT_SHMMAP, site_shmmap);

	/* 5 x 100 bytes, 2 freed */
	for (int i = 0; i < 5; i++)
		alloc(0x1000 + 0x100 * (uint64_t)i, 100, BT_MALLOC, RIP_MEM_MALLOC);
	xfree(0x1100);
	xfree(0x1300);
	alloc(0x20000, 4096, BT_CALLOC, RIP_MEM_CALLOC);

	/* realloc chains: in place, moved, moved by another site */
	alloc(0x30000, 10, BT_REALLOC, RIP_MEM_MALLOC);
	xrealloc(0x30000, 0x30000, 20, BT_REALLOC);
	xrealloc(0x30000, 0x31000, 50, BT_REALLOC);
	xrealloc(0x31000, 0x32000, 70, BT_REALLOC2);
	xrealloc(0, 0x40000, 33, BT_REALLOC);	/* realloc(NULL, 33) */
	xrealloc(0x40000, 0, 0, BT_REALLOC);	/* realloc(p, 0): a free */
	xrealloc(0, 0x41000, 8, BT_REALLOC);

	/* not errors: a free of something never seen, free(NULL), a failed malloc */
	xfree(0xdead0);
	xfree(0);
	alloc(0, 1u << 30, BT_MALLOC, RIP_MEM_MALLOC);

	/* descriptors */
	fd_open(5, BT_OPEN, RIP_FD_OPEN, "/etc/leak-a");
	fd_open(6, BT_OPEN, RIP_FD_OPENAT, "/etc/leak-b");
	fd_close(6);
	fd_close(0); /* inherited */
	fd_open(7, BT_PIPE, RIP_FD_PIPE, "");
	fd_open(8, BT_PIPE, RIP_FD_PIPE, "");
	fd_close(7);
	fd_close(8);
	fd_open(8, BT_PIPE, RIP_FD_PIPE, "");

	/* shared memory: a SysV segment never removed, a POSIX one unlinked */
	shm_create(3, 65536, BT_SHMGET, RIP_SHM_GET, "");
	__RIP_EVENT(&ev_shm_attach, 0x7000000, 65536, 3, BT_SHMGET, RIP_SHM_AT);
	rip_event4(&ev_shm_detach, 0x7000000, 65536, BT_FREE, RIP_SHM_DT);
	shm_create(9, 4096, BT_SHMMAP, RIP_SHM_OPEN, "/leakshm");
	__RIP_EVENT(&ev_shm_attach, 0x7100000, 4096, 9, BT_SHMMAP, RIP_SHM_MMAP);
	shm_remove(-1, RIP_SHM_UNLINK, "/leakshm");

	if (pthread_create(&t, NULL, thread_main, NULL))
		return -1;
	pthread_join(t, NULL);
	define_bt(BT_THREAD, site_thread);
	return 0;
}

static void corrupt(void)
{
	uint64_t v[1];
	uint64_t frames[2] = { RA(site_malloc), RA(site_caller) };
	uint64_t marks[3] = { 0x5151515151515151ull, 0x5151515151515151ull,
			      0x5151515151515151ull };

	rip_thread_set_name("main");
	v[0] = 0; /* id 0 is "none" */
	rip_event_array(&ev_bt, v, frames, 2);
	v[0] = 20; /* no frames */
	rip_event_array(&ev_bt, v, frames, 0);
	v[0] = 21; /* defined twice, differently */
	rip_event_array(&ev_bt, v, frames, 2);
	frames[0] = RA(site_calloc);
	rip_event_array(&ev_bt, v, frames, 2);
	v[0] = 22; /* the test may damage this one's count */
	rip_event_array(&ev_bt, v, marks, 3);
	alloc(0x1000, 10, 20, RIP_MEM_MALLOC);
	alloc(0x2000, 20, 21, RIP_MEM_MALLOC);
	alloc(0x3000, 30, 12345, RIP_MEM_MALLOC); /* never defined */
	alloc(0x4000, 40, 22, RIP_MEM_MALLOC);
}

static unsigned long nbench;

static void *bench_thread(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg << 40;

	for (unsigned long i = 0; i < nbench; i++) {
		alloc(base + i * 16, 16 + (i & 63), BT_MALLOC + (uint32_t)(i & 7), RIP_MEM_MALLOC);
		if (i >= 1000)
			xfree(base + (i - 1000) * 16);
	}
	rip_thread_detach();
	return NULL;
}

int main(int argc, char **argv)
{
	RIP_OPTS(rip_ring_opts, o, .slots = 64);
	const char *mode = argc > 1 ? argv[1] : "exit";
	char path[4096];
	int ret;

	if (!strcmp(mode, "bench")) {
		o.ev_rings = 4;
		o.ev_ring_size = 256u << 20;
		nbench = argc > 2 ? strtoul(argv[2], NULL, 0) : 1000000;
	} else if (strcmp(mode, "exit") && strcmp(mode, "wait") && strcmp(mode, "corrupt")) {
		fprintf(stderr, "usage: leakprog exit|wait|corrupt|bench N\n");
		return 2;
	}
	ret = rip_ring_open(&o);
	if (ret || rip_ring_path(path, sizeof(path))) {
		fprintf(stderr, "leakprog: rip_ring_open: %s\n", strerror(-ret));
		return 1;
	}
	printf("%s\n", path);
	fflush(stdout);
	if (!strcmp(mode, "corrupt")) {
		corrupt();
		return 0;
	}
	if (!strcmp(mode, "bench")) {
		pthread_t t[2];

		rip_thread_set_name("main");
		for (int i = 0; i < 8; i++)
			define_bt(BT_MALLOC + (uint32_t)i, site_malloc);
		for (uintptr_t i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, bench_thread, (void *)(i + 1)))
				return 1;
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	if (known())
		return 1;
	if (!strcmp(mode, "wait")) {
		printf("ready\n");
		fflush(stdout);
		pause();
	}
	return 0;
}
