/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/lttng-tp.c - the LTTng-UST tracepoint provider of the comparison
 * in bench/events.c: the probe of ripbench:count (bench/lttng-tp.h).
 *
 * bench/run.sh compiles it with -DBENCH_LTTNG and `pkg-config --cflags
 * --libs lttng-ust` into build/bench/events-lttng, next to bench/events.c.
 * The Makefile builds every C file of bench/ as a program of its own,
 * without LTTng: that build gets a stub that only says where the real one is.
 */
#ifdef BENCH_LTTNG

#define TRACEPOINT_CREATE_PROBES
#include "lttng-tp.h"

#else

#include <stdio.h>

int main(void)
{
	fprintf(stderr, "lttng-tp: the LTTng-UST provider of bench/events.c; "
			"bench/run.sh builds it as build/bench/events-lttng\n");
	return 2;
}

#endif
