/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/lttng-tp.h - the LTTng-UST 2.13 tracepoint that bench/events.c
 * compares librip's events with: provider "ripbench", event "count", one
 * u64 field "n", like librip's "events:count".
 *
 * Included twice in the usual LTTng-UST way: by bench/lttng-tp.c with
 * TRACEPOINT_CREATE_PROBES (the probe, built against liblttng-ust), and by
 * bench/events.c with TRACEPOINT_DEFINE when it is built with
 * -DBENCH_LTTNG (the call sites).  bench/run.sh builds both with
 * `pkg-config lttng-ust`; the default build never sees this file.
 */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER ripbench

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "./lttng-tp.h"

#if !defined(BENCH_LTTNG_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

TRACEPOINT_EVENT(ripbench, count,
	TP_ARGS(uint64_t, n),
	TP_FIELDS(ctf_integer(uint64_t, n, n))
)

#endif /* BENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
