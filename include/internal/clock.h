/* SPDX-License-Identifier: Apache-2.0 */
/*
 * internal/clock.h - the TSC that ring files keep time with: whether it can be
 * used, and its rate.  Shared by librip (lib/clock.c), which measures it when
 * a process opens its ring file, and by rip run, which measures it once for
 * the whole family it traces and hands the rate down in RIP_CLOCK_HZ: every
 * traced process would otherwise spend 5 ms measuring it again, and a
 * followed `make` or shell starts hundreds of them.  Not a public header
 * (include/internal/ is not installed): the one place lib/ and tools/ share.
 */
#ifndef RIP_INTERNAL_CLOCK_H
#define RIP_INTERNAL_CLOCK_H

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The rate rip run measured; librip trusts it as it would its own measurement. */
#define RIP_CLOCK_HZ_ENV "RIP_CLOCK_HZ"
#define RIP_CLOCK_HZ_MIN 1000000ull	   /* 1 MHz */
#define RIP_CLOCK_HZ_MAX 100000000000ull /* 100 GHz */

#if defined(__x86_64__)
/* Does the file at path (its first max bytes) hold word, standing alone? */
static inline int rip_clock_file_has(const char *path, const char *word, size_t max)
{
	char *buf = (char *)malloc(max + 1);
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

static inline uint64_t rip_clock_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t rip_clock_raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Can the TSC keep time: invariant (constant_tsc and nonstop_tsc), and the
 * kernel itself keeps time with it (clocksource tsc)?  RIP_CLOCK=mono says
 * not to use it.
 */
static inline int rip_clock_tsc_usable(void)
{
	const char *env = getenv("RIP_CLOCK");

	if (env && !strcmp(env, "mono"))
		return 0;
	/* the first processor's flags line is enough: the flags are uniform */
	return rip_clock_file_has("/proc/cpuinfo", "constant_tsc", 8192) &&
	       rip_clock_file_has("/proc/cpuinfo", "nonstop_tsc", 8192) &&
	       rip_clock_file_has(
		       "/sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc",
		       64);
}

/*
 * The TSC's rate in Hz, measured for 5 ms against CLOCK_MONOTONIC_RAW (a few
 * ppm, enough for durations); 0 when out of range.  Only if it is usable.
 */
static inline uint64_t rip_clock_tsc_rate(void)
{
	uint64_t t0, n0, t1, n1, hz;

	t0 = rip_clock_rdtsc();
	n0 = rip_clock_raw_ns();
	do {
		n1 = rip_clock_raw_ns();
		t1 = rip_clock_rdtsc();
	} while (n1 - n0 < 5000000);
	/* (t1 - t0) * 1e9 overflows 64 bits past 18 s of ticks: divide in two steps */
	hz = (t1 - t0) / (n1 - n0) * 1000000000u +
	     (t1 - t0) % (n1 - n0) * 1000000000u / (n1 - n0);
	return hz >= RIP_CLOCK_HZ_MIN && hz <= RIP_CLOCK_HZ_MAX ? hz : 0;
}
#else
static inline int rip_clock_tsc_usable(void)
{
	return 0;
}

static inline uint64_t rip_clock_tsc_rate(void)
{
	return 0;
}
#endif

/* The TSC's rate in Hz when it is usable (rip_clock_tsc_usable), measured now; else 0. */
static inline uint64_t rip_clock_tsc_measure(void)
{
	return rip_clock_tsc_usable() ? rip_clock_tsc_rate() : 0;
}

/* RIP_CLOCK_HZ as rip run set it: the rate, or 0 (unset, malformed, out of range, RIP_CLOCK=mono). */
static inline uint64_t rip_clock_env_hz(void)
{
	const char *s = getenv(RIP_CLOCK_HZ_ENV), *mono = getenv("RIP_CLOCK");
	uint64_t v = 0;

	if (!s || !*s || (mono && !strcmp(mono, "mono")))
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > RIP_CLOCK_HZ_MAX)
			return 0;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	return v >= RIP_CLOCK_HZ_MIN && v <= RIP_CLOCK_HZ_MAX ? v : 0;
}

#endif /* RIP_INTERNAL_CLOCK_H */
