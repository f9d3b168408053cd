/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/snap-legacy.c - cost of rip_snap() from librip.h, the original API,
 * against the same thread-local store floor as bench/snap.c.  It is a file
 * of its own because librip.h and rip.h must not meet in one file.
 *
 *   snap-legacy time [REPS]     ns per iteration of both loops, median of REPS
 *   snap-legacy count LOOP N    run one loop (floor or snap) N times and exit
 *
 * The loops have the shape of bench/snap.c's: noipa, a counted loop, an
 * empty asm with a memory clobber.  The snap loop checks that the slot's
 * snap_seq moved by exactly N.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librip.h>

#include "bench.h"

/* The original API lets the program own its storage. */
thread_local pid_t rip_tid;
thread_local uint8_t rip_idx;
thread_local uint8_t rip_ctr;
struct rip_ring *rip_ring;

#define BENCH_CLOBBER() __asm__ __volatile__("" ::: "memory")

static __thread uint64_t floor_word;

BENCH_NOINLINE static void loop_floor(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		floor_word = i;
		BENCH_CLOBBER();
	}
}

BENCH_NOINLINE static void loop_snap(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		rip_snap();
		BENCH_CLOBBER();
	}
}

static int bench_bad;

static struct rip_slot *my_slot(void)
{
	return (struct rip_slot *)((char *)rip_ring + RIP_SLOTS_OFFSET +
				   ((size_t)(uint32_t)rip_tid << RIP_SLOT_SHIFT));
}

static void run_loop(const char *name, uint64_t n)
{
	uint32_t before, after;

	if (!strcmp(name, "floor")) {
		loop_floor(n);
		if (n && floor_word != n - 1)
			bench_bad = 1;
		return;
	}
	if (strcmp(name, "snap")) {
		fprintf(stderr, "snap-legacy: unknown loop %s\n", name);
		exit(2);
	}
	before = my_slot()->snap_seq;
	loop_snap(n);
	after = my_slot()->snap_seq;
	if (after - before != (uint32_t)n) {
		fprintf(stderr, "snap-legacy: %u snaps recorded for %u iterations\n",
			after - before, (uint32_t)n);
		bench_bad = 1;
	}
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "time";
	const char *dir = getenv("RIP_DIR");
	char file[4096];
	int ret = 0;

	snprintf(file, sizeof(file), "%s/bench-legacy-%d.rip", dir && *dir ? dir : "/dev/shm",
		 (int)getpid());
	if (!rip_create_ring(file, 64)) {
		perror("snap-legacy: rip_create_ring");
		return 1;
	}
	rip_init(1, "bench", 5, 0, 0);
	if (rip_tid <= 0) {
		fprintf(stderr, "snap-legacy: rip_init gave no slot\n");
		ret = 1;
		goto out;
	}
	rip_snap(); /* warm-up: fault the slot in */

	if (!strcmp(cmd, "time")) {
		int reps = argc > 2 ? atoi(argv[2]) : 9;
		double v[2][64];

		reps = reps < 1 ? 1 : reps > 63 ? 63 : reps;
		run_loop("floor", 5000000);
		run_loop("snap", 5000000);
		for (int r = 0; r < reps; r++) {
			v[0][r] = bench_time_loop(run_loop, "floor", 20000000);
			v[1][r] = bench_time_loop(run_loop, "snap", 20000000);
		}
		bench_print_figure("ns floor", v[0], reps);
		bench_print_figure("ns snap", v[1], reps);
		/* ratio within each repetition, as in bench/snap.c */
		for (int r = 0; r < reps; r++)
			v[1][r] = v[0][r] > 0 ? v[1][r] / v[0][r] : 0;
		bench_print_figure("ratio snap floor", v[1], reps);
	} else if (!strcmp(cmd, "count") && argc == 4) {
		run_loop(argv[2], strtoull(argv[3], NULL, 10));
	} else {
		fprintf(stderr, "usage: snap-legacy time [REPS] | count LOOP N\n");
		ret = 2;
	}
	if (bench_bad) {
		fprintf(stderr, "snap-legacy: a loop skipped work; figures are not valid\n");
		ret = 1;
	}
out:
	rip_exit();
	unlink(file);
	return ret;
}
