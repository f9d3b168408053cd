/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the function-call pass (analysis/funcs.c) stays linear on a
 * trace whose calls never end: events made here (rip:fn_entry and
 * rip:fn_exit of one thread, handed to fa_event as the event source
 * would), 200,000 entries without their exits, then 200,000 exits of a
 * function never entered (each one, searched for down the whole stack of
 * open calls, made the pass quadratic: minutes), then the exit of the
 * outermost call, then 100,000 calls each ending the call above it
 * unended.  The totals are exact (entries, exits, exits without entry,
 * calls ended without their exit, none running), and the pass's CPU time
 * is bounded: under 2 s (0.03 s here), where the quadratic search needs
 * some 2 * 10^10 frame compares (14 s here); RLIMIT_CPU stops the test at
 * 10 s.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "analysis/funcs.h"
#include "helpers.h"
#include "read/evread.h"
#include "read/evsource.h"

#define N_OPEN 200000u
#define N_CALLS 100000u
_Static_assert(N_OPEN % 64 == 0, "ids 3..66 have as many calls each");

static struct ev_types *types;
static struct evs_plan plan = { .valid = true, .nfix = 1, .size = { 4 }, .shift = { 32 } };
static int64_t now;

/* Hand fa one record (entry or exit) of function id. */
static void rec(struct fa *p, bool entry, uint32_t id)
{
	uint8_t raw[16] = { 0 };
	struct evs_event e = { 0 };

	memcpy(raw, &id, 4);
	e.ns = ++now;
	e.tid = 1;
	e.thread = "main";
	e.type = &types->t[entry ? 1 : 2];
	e.raw = raw;
	e.plan = &plan;
	T_EQ(fa_event(p, &e), 1);
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void)
{
	const struct rlimit cpu = { .rlim_cur = 10, .rlim_max = 11 };
	struct fa_totals tot;
	const struct fa_fn *fn;
	struct fa *p;
	size_t n;
	double t0, used;

	setrlimit(RLIMIT_CPU, &cpu); /* a hang guard: SIGXCPU ends the test */
	types = calloc(1, sizeof(*types));
	T_CHECK(types);
	if (!types)
		return T_FAIL;
	for (uint32_t i = 1; i <= 2; i++) {
		types->t[i].valid = true;
		types->t[i].id = i;
		types->t[i].nfields = 1;
		types->t[i].fixed = 4;
		strcpy(types->t[i].name, i == 1 ? "rip:fn_entry" : "rip:fn_exit");
	}
	types->count = 3;
	T_EQ(fa_new(types, NULL, &p), 0);
	T_CHECK(fa_typed(p));

	t0 = cpu_s();
	rec(p, true, 2); /* the outermost call */
	for (uint32_t i = 0; i < N_OPEN; i++)
		rec(p, true, 3 + i % 64); /* never ended */
	for (uint32_t i = 0; i < N_OPEN; i++)
		rec(p, false, 1); /* never entered */
	/* ends the 200,000 above it */
	rec(p, false, 2);
	for (uint32_t i = 0; i < N_CALLS; i++) {
		rec(p, true, 70);
		rec(p, true, 71); /* ended by 70's exit */
		rec(p, false, 70);
	}
	T_EQ(fa_end(p, ++now), 0);
	used = cpu_s() - t0;

	fa_totals(p, &tot);
	T_EQ(tot.entries, 1 + N_OPEN + 2 * N_CALLS);
	T_EQ(tot.exits, N_OPEN + 1 + N_CALLS);
	T_EQ(tot.no_entry, N_OPEN);
	T_EQ(tot.no_exit, N_OPEN + N_CALLS);
	T_EQ(tot.running, 0);
	fn = fa_funcs(p, &n);
	T_EQ(n, 64 + 3);
	for (size_t i = 0; fn && i < n; i++) {
		if (fn[i].id == 2)
			T_EQ(fn[i].calls, 1);
		else if (fn[i].id == 70 || fn[i].id == 71)
			T_EQ(fn[i].calls, N_CALLS);
		else
			T_EQ(fn[i].calls, N_OPEN / 64);
	}
	fprintf(stderr, "the pass took %.3f s of CPU\n", used);
	T_CHECK(used < 2.0);
	fa_free(p);
	free(types);
	return t_result();
}
