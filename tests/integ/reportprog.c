/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of integ/report-*.sh.  Writes the events of
 * rip/resource.h through rip.h itself, with invented block addresses and
 * stacks made of this program's own functions (rs_* sites), so that rip
 * report's every number is known.  Prints the ring file's path.
 *
 *	reportprog known     the sequence below
 *	reportprog bad       backtrace definitions that make no sense, frees and
 *	                     allocations that do not pair up, and a backtrace of
 *	                     frames 0x5252... whose count the tests damage
 *	reportprog many N    N allocations from each of 2 threads, freed 500 later
 *
 * The known sequence, in time order (thread "main" unless said):
 *	rs_small   10 x 16 bytes, all freed at once; its stack starts in libc's
 *	           malloc, which the report must skip
 *	           (sleep 30 ms)
 *	rs_big     1 x 1000000 bytes (calloc), never freed
 *	rs_temp    4 x 100000 bytes: the peak, 1400000 bytes in 5 blocks, right
 *	           after the 4th; (sleep 20 ms) then all 4 freed
 *	rs_grow    malloc 100, realloc to 3000 at another address, never freed
 *	rs_worker  thread "worker": 5 x 1000 bytes, 3 freed at once
 *	           1 failed malloc, 1 free of an unknown block
 *	fds        open 3, openat 4, close 3, pipe 5 6, close 5, close 9 (unknown)
 *	shm        shmget 7 (65536), attach, detach, IPC_RMID;
 *	           shm_open "/rs" (4096), mmap it, never undone
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rip.h>
#include <rip/resource.h>

RIP_EVENT_TYPE(rs_ev_bt, "rip:bt", RIP_CAT_BT, RIP_FIELD(U32, "id"),
	       RIP_FIELD(HEX64_ARRAY, "frames"));
RIP_EVENT_TYPE(rs_ev_alloc, "mem:alloc", RIP_CAT_MEM, RIP_FIELD(HEX64, "addr"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(rs_ev_free, "mem:free", RIP_CAT_MEM, RIP_FIELD(HEX64, "addr"), RIP_FIELD(U32, "bt"),
	       RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(rs_ev_realloc, "mem:realloc", RIP_CAT_MEM, RIP_FIELD(HEX64, "old"),
	       RIP_FIELD(HEX64, "addr"), RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"));
RIP_EVENT_TYPE(rs_ev_open, "fd:open", RIP_CAT_FD, RIP_FIELD(S32, "fd"), RIP_FIELD(U32, "bt"),
	       RIP_FIELD(U32, "kind"), RIP_FIELD(S32, "flags"), RIP_FIELD(STRING, "path"));
RIP_EVENT_TYPE(rs_ev_close, "fd:close", RIP_CAT_FD, RIP_FIELD(S32, "fd"), RIP_FIELD(U32, "bt"),
	       RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(rs_ev_create, "shm:create", RIP_CAT_SHM, RIP_FIELD(S64, "id"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"),
	       RIP_FIELD(STRING, "name"));
RIP_EVENT_TYPE(rs_ev_attach, "shm:attach", RIP_CAT_SHM, RIP_FIELD(HEX64, "addr"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(S64, "id"), RIP_FIELD(U32, "bt"),
	       RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(rs_ev_detach, "shm:detach", RIP_CAT_SHM, RIP_FIELD(HEX64, "addr"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(rs_ev_remove, "shm:remove", RIP_CAT_SHM, RIP_FIELD(S64, "id"), RIP_FIELD(U32, "bt"),
	       RIP_FIELD(U32, "kind"), RIP_FIELD(STRING, "name"));

enum {
	RS_SMALL = 11,
	RS_BIG,
	RS_TEMP,
	RS_GROW,
	RS_WORKER,
	RS_REL,
	RS_RES
};

#define RS_SITE __attribute__((noinline, used)) static void

RS_SITE rs_small(void)
{
	__asm__ volatile("");
}
RS_SITE rs_big(void)
{
	__asm__ volatile("");
}
RS_SITE rs_temp(void)
{
	__asm__ volatile("");
}
RS_SITE rs_grow(void)
{
	__asm__ volatile("");
}
RS_SITE rs_worker(void)
{
	__asm__ volatile("");
}
RS_SITE rs_release(void)
{
	__asm__ volatile("");
}
RS_SITE rs_resource(void)
{
	__asm__ volatile("");
}
RS_SITE rs_main(void)
{
	__asm__ volatile("");
}

/* A return address inside f: what a call from f would leave on the stack. */
static uint64_t rs_ret(void (*f)(void))
{
	return (uint64_t)(uintptr_t)f + 1;
}

static void rs_bt(uint32_t id, uint64_t f0, uint64_t f1, uint64_t f2)
{
	uint64_t v[1] = { id }, fr[3] = { f0, f1, f2 };

	rip_event_array(&rs_ev_bt, v, fr, f2 ? 3 : 2);
}

static void rs_alloc(uint64_t addr, uint64_t size, uint32_t bt, uint32_t kind)
{
	rip_event4(&rs_ev_alloc, addr, size, bt, kind);
}

static void rs_free(uint64_t addr)
{
	rip_event3(&rs_ev_free, addr, RS_REL, RIP_MEM_FREE);
}

static void rs_open(int fd, uint32_t kind, const char *path)
{
	uint64_t v[4] = { (uint64_t)(int64_t)fd, RS_RES, kind, 0 };

	rip_event_str(&rs_ev_open, v, path);
}

static void rs_close(int fd)
{
	rip_event3(&rs_ev_close, (uint64_t)(int64_t)fd, RS_REL, RIP_FD_CLOSE);
}

static void rs_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static void *rs_worker_main(void *arg)
{
	(void)arg;
	rip_thread_set_name("worker");
	for (uint64_t i = 0; i < 5; i++)
		rs_alloc(0x500000 + i * 0x1000, 1000, RS_WORKER, RIP_MEM_MALLOC);
	for (uint64_t i = 0; i < 3; i++)
		rs_free(0x500000 + i * 0x1000);
	rip_thread_detach();
	return NULL;
}

static int rs_known(void)
{
	void *(*volatile libc_malloc)(size_t) = malloc;
	uint64_t caller = rs_ret(rs_main);
	pthread_t t;

	rip_thread_set_name("main");
	rs_bt(RS_SMALL, (uint64_t)(uintptr_t)libc_malloc + 1, rs_ret(rs_small), caller);
	rs_bt(RS_BIG, rs_ret(rs_big), caller, 0);
	rs_bt(RS_TEMP, rs_ret(rs_temp), caller, 0);
	rs_bt(RS_GROW, rs_ret(rs_grow), caller, 0);
	rs_bt(RS_WORKER, rs_ret(rs_worker), caller, 0);
	rs_bt(RS_REL, rs_ret(rs_release), caller, 0);
	rs_bt(RS_RES, rs_ret(rs_resource), caller, 0);

	for (uint64_t i = 0; i < 10; i++)
		rs_alloc(0x10000 + i * 0x100, 16, RS_SMALL, RIP_MEM_MALLOC);
	for (uint64_t i = 0; i < 10; i++)
		rs_free(0x10000 + i * 0x100);
	rs_sleep_ms(30);
	rs_alloc(0x200000, 1000000, RS_BIG, RIP_MEM_CALLOC);
	for (uint64_t i = 0; i < 4; i++)
		rs_alloc(0x300000 + i * 0x20000, 100000, RS_TEMP, RIP_MEM_MALLOC);
	rs_sleep_ms(20);
	for (uint64_t i = 0; i < 4; i++)
		rs_free(0x300000 + i * 0x20000);
	rs_alloc(0x400000, 100, RS_GROW, RIP_MEM_MALLOC);
	rip_event4(&rs_ev_realloc, 0x400000, 0x410000, 3000, RS_GROW);

	if (pthread_create(&t, NULL, rs_worker_main, NULL))
		return -1;
	pthread_join(t, NULL);

	rs_alloc(0, 1u << 30, RS_BIG, RIP_MEM_MALLOC);
	rs_free(0xbad000);

	rs_open(3, RIP_FD_OPEN, "/tmp/rs-a");
	rs_open(4, RIP_FD_OPENAT, "/tmp/rs-b");
	rs_close(3);
	rs_open(5, RIP_FD_PIPE, "");
	rs_open(6, RIP_FD_PIPE, "");
	rs_close(5);
	rs_close(9);

	{
		uint64_t c1[4] = { 7, 65536, RS_RES, RIP_SHM_GET };
		uint64_t c2[4] = { 10, 4096, RS_RES, RIP_SHM_OPEN };
		uint64_t r1[3] = { 7, RS_REL, RIP_SHM_RMID };

		rip_event_str(&rs_ev_create, c1, "");
		__RIP_EVENT(&rs_ev_attach, 0x7000000, 65536, 7, RS_RES, RIP_SHM_AT);
		rip_event4(&rs_ev_detach, 0x7000000, 65536, RS_REL, RIP_SHM_DT);
		rip_event_str(&rs_ev_remove, r1, "");
		rip_event_str(&rs_ev_create, c2, "/rs");
		__RIP_EVENT(&rs_ev_attach, 0x7100000, 4096, 10, RS_RES, RIP_SHM_MMAP);
	}
	return 0;
}

static void rs_bad(void)
{
	uint64_t v[1], fr[2] = { rs_ret(rs_big), rs_ret(rs_main) };
	uint64_t marks[3] = { 0x5252525252525252ull, 0x5252525252525252ull, 0x5252525252525252ull };

	rip_thread_set_name("main");
	v[0] = 0;
	rip_event_array(&rs_ev_bt, v, fr, 2); /* id 0 */
	v[0] = 30;
	rip_event_array(&rs_ev_bt, v, fr, 0); /* no frames */
	v[0] = 31;
	rip_event_array(&rs_ev_bt, v, fr, 2);
	fr[0] = rs_ret(rs_temp);
	rip_event_array(&rs_ev_bt, v, fr, 2); /* 31 again, other frames */
	rs_alloc(0x1000, 10, 30, RIP_MEM_MALLOC);
	rs_alloc(0x2000, 20, 31, RIP_MEM_MALLOC);
	rs_alloc(0x3000, 30, 999, RIP_MEM_MALLOC); /* never defined */
	rs_alloc(0x4000, 40, 0, RIP_MEM_MALLOC);   /* no backtrace */
	rs_free(0x1000);
	rs_free(0x1000);			  /* twice */
	rs_alloc(0x2000, 50, 31, RIP_MEM_MALLOC); /* again while live */
	v[0] = 32;				  /* the tests may damage its count */
	rip_event_array(&rs_ev_bt, v, marks, 3);
	rs_alloc(0x5000, 60, 32, RIP_MEM_MALLOC);
}

static unsigned long rs_n;

static void *rs_many_main(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg << 40;

	for (unsigned long i = 0; i < rs_n; i++) {
		rs_alloc(base + i * 32, 8 + (i % 4000), RS_SMALL + (uint32_t)(i % 5),
			 RIP_MEM_MALLOC);
		if (i >= 500)
			rs_free(base + (i - 500) * 32);
	}
	rip_thread_detach();
	return NULL;
}

int main(int argc, char **argv)
{
	RIP_OPTS(rip_ring_opts, o, .slots = 16);
	const char *mode = argc > 1 ? argv[1] : "known";
	char path[4096];
	int ret;

	if (!strcmp(mode, "many")) {
		o.ev_rings = 4;
		o.ev_ring_size = 256u << 20;
		rs_n = argc > 2 ? strtoul(argv[2], NULL, 0) : 1000000;
	} else if (strcmp(mode, "known") && strcmp(mode, "bad")) {
		fprintf(stderr, "usage: reportprog known|bad|many N\n");
		return 2;
	}
	ret = rip_ring_open(&o);
	if (ret || rip_ring_path(path, sizeof(path))) {
		fprintf(stderr, "reportprog: rip_ring_open: %s\n", strerror(-ret));
		return 1;
	}
	printf("%s\n", path);
	fflush(stdout);
	if (!strcmp(mode, "bad")) {
		rs_bad();
		return 0;
	}
	if (!strcmp(mode, "many")) {
		pthread_t t[2];

		rip_thread_set_name("main");
		for (uint32_t i = 0; i < 5; i++)
			rs_bt(RS_SMALL + i, rs_ret(rs_big), rs_ret(rs_main), 0);
		for (uintptr_t i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, rs_many_main, (void *)(i + 1)))
				return 1;
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	return rs_known() ? 1 : 0;
}
