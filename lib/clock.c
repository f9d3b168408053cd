/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/clock.c - the ring file's clock.
 *
 * rip_clock_ticks() reads the TSC when it is invariant (constant_tsc and
 * nonstop_tsc) and the kernel itself keeps time with it (clocksource tsc),
 * so that a read is one instruction and agrees across CPUs; otherwise it
 * falls back to CLOCK_MONOTONIC_RAW in nanoseconds.  The TSC rate is
 * calibrated against CLOCK_MONOTONIC_RAW when the ring is created, and the
 * header keeps the calibration and the CLOCK_REALTIME offset, so a reader
 * turns ticks into nanoseconds and wall time with nothing but the file.
 * RIP_CLOCK=mono forces the fallback.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

int __rip_clock_tsc;

uint64_t __rip_clock_fallback(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
static int rip_file_has(const char *path, const char *word, size_t max)
{
	char *buf = malloc(max + 1);
	ssize_t n, got = 0;
	int fd, found = 0;

	if (!buf)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		while (got < (ssize_t)max && (n = read(fd, buf + got, max - (size_t)got)) > 0)
			got += n;
		close(fd);
	}
	buf[got] = 0;
	/* word must stand alone: bounded by spaces, tabs or line ends */
	for (char *p = buf; (p = strstr(p, word)); p++) {
		char before = p == buf ? ' ' : p[-1];
		char after = p[strlen(word)];

		if ((before == ' ' || before == '\t' || before == '\n') &&
		    (after == ' ' || after == '\n' || after == 0)) {
			found = 1;
			break;
		}
	}
	free(buf);
	return found;
}

static uint64_t rip_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static int rip_tsc_usable(void)
{
	const char *env = getenv("RIP_CLOCK");

	if (env && !strcmp(env, "mono"))
		return 0;
	/* the first processor's flags line is enough: the flags are uniform */
	return rip_file_has("/proc/cpuinfo", "constant_tsc", 8192) &&
	       rip_file_has("/proc/cpuinfo", "nonstop_tsc", 8192) &&
	       rip_file_has("/sys/devices/system/clocksource/clocksource0/current_clocksource",
			    "tsc", 64);
}
#endif

void __rip_clock_init(struct rip_file_hdr *h)
{
	struct timespec rt, raw;
	static uint64_t hz;
	static int kind;

#if defined(__x86_64__)
	if (!kind) {
		kind = RIP_CLOCK_MONO_RAW;
		if (rip_tsc_usable()) {
			/* 5 ms against CLOCK_MONOTONIC_RAW: a few ppm, enough for durations */
			uint64_t t0 = rip_rdtsc(), n0 = __rip_clock_fallback(), t1, n1;

			do {
				n1 = __rip_clock_fallback();
				t1 = rip_rdtsc();
			} while (n1 - n0 < 5000000);
			hz = (uint64_t)((unsigned __int128)(t1 - t0) * 1000000000u / (n1 - n0));
			if (hz > 1000000)
				kind = RIP_CLOCK_TSC;
		}
	}
#else
	kind = RIP_CLOCK_MONO_RAW;
#endif
	h->clock_kind = (uint32_t)kind;
	h->clock_hz = kind == RIP_CLOCK_TSC ? hz : 1000000000u;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC_RAW, &raw);
	h->clock_base_ns = (uint64_t)raw.tv_sec * 1000000000ull + (uint64_t)raw.tv_nsec;
#if defined(__x86_64__)
	h->clock_base_ticks = kind == RIP_CLOCK_TSC ? rip_rdtsc() : h->clock_base_ns;
#else
	h->clock_base_ticks = h->clock_base_ns;
#endif
	h->realtime_offset = (int64_t)((uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec) -
			     (int64_t)h->clock_base_ns;
	__rip_clock_tsc = kind == RIP_CLOCK_TSC;
}
