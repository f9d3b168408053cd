/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/clock.c - the ring file's clock.
 *
 * rip_clock_ticks() reads the TSC when it is invariant and the kernel trusts
 * it (internal/clock.h: its clocksource, or a frequency it knows, as on
 * kvm-clock guests), so that a read is one instruction and agrees across
 * CPUs; otherwise it falls back to CLOCK_MONOTONIC_RAW in nanoseconds.  The
 * TSC rate is calibrated against CLOCK_MONOTONIC_RAW when the ring is
 * created, and the header keeps the calibration, the CLOCK_REALTIME offset
 * and calibration pairs added later (at exit, by the watcher, by a
 * recorder), so a reader turns ticks into nanoseconds and wall time with
 * nothing but the file.
 * Under rip run the rate comes measured in RIP_CLOCK_HZ (internal/clock.h), once
 * for the whole traced family.  RIP_CLOCK=mono forces the fallback.
 */
#include <string.h>
#include <time.h>

#include <internal/clock.h>

#include "internal.h"

int __rip_clock_tsc;

uint64_t __rip_clock_fallback(void)
{
	return rip_clock_raw_ns();
}

void __rip_clock_init(struct rip_file_hdr *h)
{
	struct timespec rt, raw;
	static uint64_t hz;
	static int kind;

#if defined(__x86_64__)
	if (!kind) {
		/* rip run measured it for the family (internal/clock.h), else measure it here */
		hz = rip_clock_env_hz();
		if (!hz)
			hz = rip_clock_tsc_measure();
		kind = hz ? RIP_CLOCK_TSC : RIP_CLOCK_MONO_RAW;
	}
#else
	kind = RIP_CLOCK_MONO_RAW;
#endif
	h->clock_kind = (uint32_t)kind;
	h->clock_hz = kind == RIP_CLOCK_TSC ? hz : 1000000000u;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC_RAW, &raw);
	h->clock_base_ns = (uint64_t)raw.tv_sec * 1000000000ull + (uint64_t)raw.tv_nsec;
	h->clock_base_ticks = h->clock_base_ns;
#if defined(__x86_64__)
	if (kind == RIP_CLOCK_TSC) {
		/* the base is the first calibration pair: read as tight as one (rip_clock_pair_read) */
		uint64_t width;

		rip_clock_pair_read(&h->clock_base_ticks, &h->clock_base_ns, &width);
	}
#endif
	h->realtime_offset = (int64_t)((uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec) -
			     (int64_t)h->clock_base_ns;
	__rip_clock_tsc = kind == RIP_CLOCK_TSC;
}
