/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of integ/export-folded.sh and integ/export-res.sh.
 * Emits the events of rip/resource.h itself, through rip.h, with made-up
 * addresses but real backtraces: frames are return addresses into this
 * program's site_* functions (outermost site_root), so rip export
 * --format=folded must name them.  Prints the ring file's path.
 *
 *	exportprog exit      the known sequence below
 *	exportprog corrupt   the sequence, plus a backtrace whose frames are
 *	                     0x5252... (tests damage its array count)
 *
 * Folded stacks and their bytes / allocations / bytes never freed:
 *	site_root;site_mid;site_leaf_a   350 / 4 / 250  (two bts, one function)
 *	site_root;site_mid;site_leaf_b  3000 / 2 / 2000 (malloc, then realloc)
 *	site_root;site_leaf_c           4096 / 1 / 0    (calloc, freed)
 *	site_root;site_thread_leaf       777 / 1 / 777  (defined after its use)
 *	[no backtrace]                    10 / 1 / 10
 *	[backtrace 99 not defined]        20 / 1 / 20
 * Heap in use at the end: 3057 bytes; descriptors open: 1.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

enum { BT_A = 1, BT_B, BT_C, BT_A2, BT_THREAD, BT_BAD = 7, BT_UNDEF = 99 };

#define NOINLINE static __attribute__((noinline, used))
#define BODY __asm__ volatile("nop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop")

/* Real functions, long enough that two return addresses fall inside each. */
NOINLINE void site_root(void) { BODY; }
NOINLINE void site_mid(void) { BODY; }
NOINLINE void site_leaf_a(void) { BODY; }
NOINLINE void site_leaf_b(void) { BODY; }
NOINLINE void site_leaf_c(void) { BODY; }
NOINLINE void site_thread_leaf(void) { BODY; }

/* A return address: just past an instruction of f (readers look up addr - 1). */
#define RA(f, k) ((uint64_t)(uintptr_t)(f) + (k))

static void define_bt(uint32_t id, const uint64_t *frames, uint32_t n)
{
	uint64_t v[1] = { id };

	rip_event_array(&ev_bt, v, frames, n);
}

static void alloc(uint64_t addr, uint64_t size, uint32_t bt, uint32_t kind)
{
	rip_event4(&ev_alloc, addr, size, bt, kind);
}

static void xfree(uint64_t addr)
{
	rip_event3(&ev_free, addr, 0, RIP_MEM_FREE);
}

static void fd_open(int fd, const char *path)
{
	uint64_t v[4] = { (uint64_t)(int64_t)fd, BT_C, RIP_FD_OPENAT, 0 };

	rip_event_str(&ev_open, v, path);
}

static void fd_close(int fd)
{
	rip_event3(&ev_close, (uint64_t)(int64_t)fd, 0, RIP_FD_CLOSE);
}

static void *thread_main(void *arg)
{
	(void)arg;
	rip_thread_set_name("worker");
	alloc(0x5000, 777, BT_THREAD, RIP_MEM_MALLOC); /* bt defined by main, later */
	rip_thread_detach();
	return NULL;
}

static int known(void)
{
	const uint64_t a[] = { RA(site_leaf_a, 1), RA(site_mid, 1), RA(site_root, 1) };
	const uint64_t a2[] = { RA(site_leaf_a, 3), RA(site_mid, 2), RA(site_root, 2) };
	const uint64_t b[] = { RA(site_leaf_b, 1), RA(site_mid, 1), RA(site_root, 1) };
	const uint64_t c[] = { RA(site_leaf_c, 1), RA(site_root, 1) };
	const uint64_t t[] = { RA(site_thread_leaf, 1), RA(site_root, 3) };
	pthread_t th;

	rip_thread_set_name("main");
	define_bt(BT_A, a, 3);
	define_bt(BT_A2, a2, 3);
	define_bt(BT_B, b, 3);
	define_bt(BT_C, c, 2);

	for (int i = 0; i < 3; i++)
		alloc(0x1000 + 0x100 * (uint64_t)i, 100, BT_A, RIP_MEM_MALLOC);
	xfree(0x1100);
	alloc(0x2000, 50, BT_A2, RIP_MEM_NEW);
	alloc(0x3000, 1000, BT_B, RIP_MEM_MALLOC);
	rip_event4(&ev_realloc, 0x3000, 0x3800, 2000, BT_B);
	alloc(0x4000, 4096, BT_C, RIP_MEM_CALLOC);
	xfree(0x4000);
	alloc(0x6000, 10, 0, RIP_MEM_MALLOC);
	alloc(0x7000, 20, BT_UNDEF, RIP_MEM_MALLOC);
	/* not counted: a free of something never seen, free(NULL), a failed malloc */
	xfree(0xdead0);
	xfree(0);
	alloc(0, 1u << 30, BT_A, RIP_MEM_MALLOC);

	fd_open(5, "/etc/export-a");
	fd_open(6, "/etc/export-b");
	fd_close(6);
	fd_close(0); /* inherited */

	if (pthread_create(&th, NULL, thread_main, NULL))
		return -1;
	pthread_join(th, NULL);
	define_bt(BT_THREAD, t, 2);
	return 0;
}

int main(int argc, char **argv)
{
	RIP_OPTS(rip_ring_opts, o, .slots = 16);
	const char *mode = argc > 1 ? argv[1] : "exit";
	char path[4096];
	int ret;

	if (strcmp(mode, "exit") && strcmp(mode, "corrupt")) {
		fprintf(stderr, "usage: exportprog exit|corrupt\n");
		return 2;
	}
	ret = rip_ring_open(&o);
	if (ret || rip_ring_path(path, sizeof(path))) {
		fprintf(stderr, "exportprog: rip_ring_open: %s\n", strerror(-ret));
		return 1;
	}
	printf("%s\n", path);
	fflush(stdout);
	if (known())
		return 1;
	if (!strcmp(mode, "corrupt")) {
		const uint64_t marks[3] = { 0x5252525252525252ull, 0x5252525252525252ull,
					    0x5252525252525252ull };

		define_bt(BT_BAD, marks, 3);
		alloc(0x8000, 30, BT_BAD, RIP_MEM_MALLOC);
	}
	return 0;
}
