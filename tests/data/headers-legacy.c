/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/data/headers-legacy.c - a program that uses everything librip.h
 * declares, as a program written for the original librip API does: the
 * storage it asks for, rip_create_ring, rip_init, rip_snap, rip_exit.
 * tests/integ/headers.sh compiles it as C11 and as C++11, C++17 and
 * C++20, -pedantic with warnings as errors, with gcc and clang, links it
 * with librip and runs it (headers-api.c does the same for rip.h).
 *
 *	headers-legacy RING    create RING, snap in two ids, exit 0 (1 on an error)
 */
#include <stdio.h>

#include <librip.h>

thread_local pid_t rip_tid;
thread_local uint8_t rip_idx;
thread_local uint8_t rip_ctr;
struct rip_ring *rip_ring;

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: headers-legacy RING\n");
		return 2;
	}
	rip_snap(); /* before any ring: a scratch slot */
	if (!rip_create_ring(argv[1], 16)) {
		fprintf(stderr, "headers-legacy: rip_create_ring %s failed\n", argv[1]);
		return 1;
	}
	rip_init(3, "legacy-3", 8, 0, 0);
	rip_snap();
	rip_init(4, "legacy-4", 8, 1, 2);
	rip_snap();
	if (rip_idx != 1 || rip_ctr != 2 || !rip_ring) {
		fprintf(stderr, "headers-legacy: rip_init left idx %u ctr %u\n", rip_idx, rip_ctr);
		return 1;
	}
	rip_exit();
	return rip_tid == 0 ? 0 : 1;
}
