/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of integ/export-pprof.sh and integ/push-pyroscope.sh.
 * Emits the events of rip/resource.h itself, through rip.h, with made-up
 * block addresses but real backtraces (return addresses into its own
 * functions), for `rip run -o DIR -- pprofprog MODE`:
 *
 *	pprofprog heap N   N backtraces, each defined once and used by one
 *	                   allocation: block i of size i % 100 + 1, freed
 *	                   when i is even (N samples in a heap profile)
 *	pprofprog events   no memory events: 7 app:tick (no backtrace),
 *	                   fd:open 3 times by backtrace 1 and twice by 2,
 *	                   fd:close 5 times (backtrace 0)
 */
#include <errno.h>
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
RIP_EVENT_TYPE(ev_open, "fd:open", RIP_CAT_FD, RIP_FIELD(S32, "fd"), RIP_FIELD(U32, "bt"),
	       RIP_FIELD(U32, "kind"), RIP_FIELD(S32, "flags"), RIP_FIELD(STRING, "path"));
RIP_EVENT_TYPE(ev_close, "fd:close", RIP_CAT_FD, RIP_FIELD(S32, "fd"), RIP_FIELD(U32, "bt"),
	       RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(ev_tick, "app:tick", 1, RIP_FIELD(U64, "n"));

#define NOINLINE static __attribute__((noinline, used))
#define BODY __asm__ volatile("nop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop")

NOINLINE void pp_root(void) { BODY; }
NOINLINE void pp_mid(void) { BODY; }
NOINLINE void pp_leaf(void) { BODY; }
NOINLINE void pp_opener(void) { BODY; }

/* A return address: just past an instruction of f (readers look up addr - 1). */
#define RA(f, k) ((uint64_t)(uintptr_t)(f) + (k))

static void define_bt(uint32_t id, const uint64_t *frames, uint32_t n)
{
	uint64_t v[1] = { id };

	rip_event_array(&ev_bt, v, frames, n);
}

static void heap(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		const uint64_t f[3] = { RA(pp_leaf, 1 + i % 8), RA(pp_mid, 1 + i / 8 % 8),
					RA(pp_root, 1 + i / 64 % 8) };
		uint64_t addr = 0x100000 + (uint64_t)i * 16;

		define_bt((uint32_t)i + 1, f, 3);
		rip_event4(&ev_alloc, addr, i % 100 + 1, (uint32_t)i + 1, RIP_MEM_MALLOC);
		if (i % 2 == 0)
			rip_event3(&ev_free, addr, 0, RIP_MEM_FREE);
	}
}

static void events(void)
{
	const uint64_t a[2] = { RA(pp_opener, 1), RA(pp_root, 1) };
	const uint64_t b[3] = { RA(pp_opener, 2), RA(pp_mid, 1), RA(pp_root, 2) };

	define_bt(1, a, 2);
	define_bt(2, b, 3);
	for (uint64_t i = 0; i < 7; i++)
		rip_event1(&ev_tick, i);
	for (int i = 0; i < 5; i++) {
		uint64_t v[4] = { (uint64_t)(10 + i), i < 3 ? 1 : 2, RIP_FD_OPENAT, 0 };

		rip_event_str(&ev_open, v, "/dev/null");
		rip_event3(&ev_close, (uint64_t)(10 + i), 0, RIP_FD_CLOSE);
	}
}

int main(int argc, char **argv)
{
	RIP_OPTS(rip_ring_opts, o);
	int ret;

	if (argc < 2 || (strcmp(argv[1], "heap") && strcmp(argv[1], "events")) ||
	    (!strcmp(argv[1], "heap") && argc < 3)) {
		fprintf(stderr, "usage: pprofprog heap N | pprofprog events\n");
		return 2;
	}
	ret = rip_ring_open(&o); /* under rip run: already open (RIP_RING), -EALREADY */
	if (ret && ret != -EALREADY) {
		fprintf(stderr, "pprofprog: rip_ring_open: %s\n", strerror(-ret));
		return 1;
	}
	rip_thread_set_name("main");
	if (!strcmp(argv[1], "heap"))
		heap(strtoul(argv[2], NULL, 0));
	else
		events();
	return 0;
}
