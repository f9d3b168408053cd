/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of integ/calltree-*.sh.  Emits mem:alloc, mem:free
 * and rip:bt events (rip/resource.h) itself, through rip.h, with made-up
 * block addresses and backtraces made of the addresses of its own ct_*
 * functions (plus one, as return addresses are), so that rip calltree must
 * name them.  Prints the ring file's path and returns.
 *
 * The stacks (outermost first) and what they leave:
 *	ct_main ct_parse ct_leaf_a                 3 x 100 never freed, 1 x 50 freed
 *	ct_main ct_parse ct_leaf_b                 1 x 4096 never freed
 *	ct_main ct_load ct_leaf_a                  2 x 1000 never freed
 *	ct_main ct_load ct_rec ct_rec ct_rec       1 x 600 never freed (recursion)
 *	ct_main ct_tiny                            1 x 10 never freed (under 1%)
 *	ct_main ct_load ct_leaf_b                  1 x 5000, freed
 * Unreleased: 7006 bytes in 8 blocks; all: 12056 bytes in 10 blocks.
 */
#include <stdio.h>
#include <string.h>

#include <rip.h>
#include <rip/resource.h>

#include "resevents.h"

/* Real functions, so that their addresses symbolize to these names. */
NOINLINE void ct_main(void) { __asm__ volatile(""); }
NOINLINE void ct_parse(void) { __asm__ volatile(""); }
NOINLINE void ct_load(void) { __asm__ volatile(""); }
NOINLINE void ct_leaf_a(void) { __asm__ volatile(""); }
NOINLINE void ct_leaf_b(void) { __asm__ volatile(""); }
NOINLINE void ct_rec(void) { __asm__ volatile(""); }
NOINLINE void ct_tiny(void) { __asm__ volatile(""); }
NOINLINE void ct_free(void) { __asm__ volatile(""); }

enum { BT_PARSE_A = 1, BT_PARSE_B, BT_LOAD_A, BT_REC, BT_TINY, BT_LOAD_B, BT_FREE };

static void xfree(uint64_t addr)
{
	rip_event3(&ev_free, addr, BT_FREE, RIP_MEM_FREE);
}

int main(void)
{
	RIP_OPTS(rip_ring_opts, o, .slots = 8);
	char path[4096];
	int ret;

	ret = rip_ring_open(&o);
	if (ret || rip_ring_path(path, sizeof(path))) {
		fprintf(stderr, "calltreeprog: rip_ring_open: %s\n", strerror(-ret));
		return 1;
	}
	printf("%s\n", path);
	fflush(stdout);
	rip_thread_set_name("main");
	BT(BT_PARSE_A, ct_leaf_a, ct_parse, ct_main);
	BT(BT_PARSE_B, ct_leaf_b, ct_parse, ct_main);
	BT(BT_LOAD_A, ct_leaf_a, ct_load, ct_main);
	BT(BT_REC, ct_rec, ct_rec, ct_rec, ct_load, ct_main);
	BT(BT_TINY, ct_tiny, ct_main);
	BT(BT_LOAD_B, ct_leaf_b, ct_load, ct_main);
	BT(BT_FREE, ct_free, ct_main);
	for (uint64_t i = 0; i < 3; i++)
		alloc(0x1000 + i * 0x100, 100, BT_PARSE_A);
	alloc(0x1800, 50, BT_PARSE_A);
	xfree(0x1800);
	alloc(0x10000, 4096, BT_PARSE_B);
	alloc(0x20000, 1000, BT_LOAD_A);
	alloc(0x21000, 1000, BT_LOAD_A);
	alloc(0x30000, 600, BT_REC);
	alloc(0x40000, 10, BT_TINY);
	alloc(0x50000, 5000, BT_LOAD_B);
	xfree(0x50000);
	alloc(0, 1u << 20, BT_LOAD_B); /* a failed malloc: nothing */
	return 0;
}
