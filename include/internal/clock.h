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
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rip/abi.h>

/* The rate rip run measured; librip trusts it as it would its own measurement. */
#define RIP_CLOCK_HZ_ENV "RIP_CLOCK_HZ"
#define RIP_CLOCK_HZ_MIN 1000000ull	 /* 1 MHz */
#define RIP_CLOCK_HZ_MAX 100000000000ull /* 100 GHz */

/* CLOCK_MONOTONIC_RAW in ns: the clock where the TSC cannot be used, and its yardstick. */
static inline uint64_t rip_clock_raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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

/*
 * rip_clock_tsc_decide - may the TSC keep the file's time, given what the
 * machine says: invariant (the kernel's constant_tsc and nonstop_tsc flags,
 * or CPUID leaf 0x80000007's invariant-TSC bit), and trusted by the kernel:
 * its clocksource is the TSC, or it knows the TSC's frequency from the
 * hypervisor or the CPU (tsc_known_freq) or was told it is reliable
 * (tsc_reliable), as most cloud guests are, whose kernel keeps time with
 * kvm-clock or another paravirtual clock (and may not even list the TSC
 * among its clocksources).  rip run also checks, once for the family it
 * traces, that the TSC never goes back from one CPU to another
 * (rip_clock_tsc_synced).  env is RIP_CLOCK: "mono" never, "tsc" whenever
 * the TSC is invariant.
 */
static inline int rip_clock_tsc_decide(const char *env, int invariant, int clocksource_tsc,
				       int known_freq, int reliable)
{
	if (env && !strcmp(env, "mono"))
		return 0;
	if (!invariant)
		return 0;
	if (env && !strcmp(env, "tsc"))
		return 1;
	return clocksource_tsc || known_freq || reliable;
}

/* CPUID 0x80000007 EDX bit 8: the TSC runs at a constant rate in every state. */
static inline int rip_clock_cpuid_invariant(void)
{
	uint32_t a = 0x80000000u, b, c, d;

	__asm__ __volatile__("cpuid" : "+a"(a), "=b"(b), "=c"(c), "=d"(d));
	if (a < 0x80000007u)
		return 0;
	a = 0x80000007u;
	__asm__ __volatile__("cpuid" : "+a"(a), "=b"(b), "=c"(c), "=d"(d));
	return (d >> 8) & 1;
}

/* Can the TSC keep time here (rip_clock_tsc_decide)?  RIP_CLOCK=mono says not to use it. */
static inline int rip_clock_tsc_usable(void)
{
	/* the first processor's flags line is enough: the flags are uniform */
	int invariant = (rip_clock_file_has("/proc/cpuinfo", "constant_tsc", 8192) &&
			 rip_clock_file_has("/proc/cpuinfo", "nonstop_tsc", 8192)) ||
			rip_clock_cpuid_invariant();

	return rip_clock_tsc_decide(
		secure_getenv("RIP_CLOCK"), invariant,
		rip_clock_file_has(
			"/sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc",
			64),
		rip_clock_file_has("/proc/cpuinfo", "tsc_known_freq", 8192),
		rip_clock_file_has("/proc/cpuinfo", "tsc_reliable", 8192));
}

/*
 * Does the TSC never go back from one CPU to the next?  The calling thread
 * hops over every CPU it may run on, twice, reading the TSC on each: every
 * read must be later than the one before (a hop takes microseconds, so a
 * CPU whose TSC is behind by more than that is caught, as the kernel's own
 * warp check does between pairs of CPUs).  For rip run only: it moves the
 * calling thread, and puts its affinity back.  1 when it cannot tell.
 */
static inline int rip_clock_tsc_synced(void)
{
	cpu_set_t old, one;
	uint64_t last = 0;
	int ok = 1;

	if (sched_getaffinity(0, sizeof(old), &old))
		return 1;
	for (int round = 0; round < 2 && ok; round++) {
		for (int c = 0; c < CPU_SETSIZE && ok; c++) {
			uint64_t t;

			if (!CPU_ISSET(c, &old))
				continue;
			CPU_ZERO(&one);
			CPU_SET(c, &one);
			if (sched_setaffinity(0, sizeof(one), &one))
				continue; /* gone offline meanwhile */
			t = rip_clock_rdtsc();
			ok = t > last;
			last = t;
		}
	}
	sched_setaffinity(0, sizeof(old), &old);
	return ok;
}

/*
 * A (TSC, CLOCK_MONOTONIC_RAW) pair read as close together as three tries
 * allow: the TSC read on both sides of the clock, the pair at their middle.
 * Its width (ticks between the two reads) into *width.
 */
static inline void rip_clock_pair_read(uint64_t *ticks, uint64_t *ns, uint64_t *width)
{
	*width = UINT64_MAX;
	*ticks = *ns = 0;
	for (int k = 0; k < 3; k++) {
		uint64_t t0 = rip_clock_rdtsc(), n = rip_clock_raw_ns(), t1 = rip_clock_rdtsc();

		if (t1 - t0 < *width) {
			*width = t1 - t0;
			*ticks = t0 + (t1 - t0) / 2;
			*ns = n;
		}
	}
}

/*
 * The TSC's rate in Hz, measured for 5 ms against CLOCK_MONOTONIC_RAW
 * between two tight pairs (a pair read across a preemption would put the
 * rate hundreds of ppm off; the readers correct a few ppm with the
 * calibration pairs); 0 when out of range.  Only if it is usable.
 */
static inline uint64_t rip_clock_tsc_rate(void)
{
	uint64_t t0, n0, w0, t1, n1, w1, hz;

	rip_clock_pair_read(&t0, &n0, &w0);
	do {
		rip_clock_pair_read(&t1, &n1, &w1);
	} while (n1 - n0 < 5000000);
	/* (t1 - t0) * 1e9 overflows 64 bits past 18 s of ticks: divide in two steps */
	hz = (t1 - t0) / (n1 - n0) * 1000000000u + (t1 - t0) % (n1 - n0) * 1000000000u / (n1 - n0);
	return hz >= RIP_CLOCK_HZ_MIN && hz <= RIP_CLOCK_HZ_MAX ? hz : 0;
}
#else
static inline int rip_clock_tsc_usable(void)
{
	return 0;
}

static inline int rip_clock_tsc_synced(void)
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
	const char *s = secure_getenv(RIP_CLOCK_HZ_ENV), *mono = secure_getenv("RIP_CLOCK");
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

/*
 * Add a calibration pair to the file at h (rip/abi.h, clock_pairs): the TSC
 * and CLOCK_MONOTONIC_RAW read back to back, the tightest of three tries.
 * Any process with the file mapped writable may add one (the traced process
 * at exit, its watcher thread, a recorder): each claims its entry with an
 * atomic add and writes ns before ticks, so that a reader never takes a
 * pair with a new tick count and an old time (it still checks them: a
 * pair being overwritten can be torn, and the file can be anything).
 */
static inline void rip_clock_pair_add(struct rip_file_hdr *h)
{
#if defined(__x86_64__)
	uint64_t ticks, ns, width;
	uint32_t i;

	if (h->clock_kind != RIP_CLOCK_TSC)
		return; /* a nanosecond clock needs no pairs */
	rip_clock_pair_read(&ticks, &ns, &width);
	/* Relaxed: the slot is ours by the count; the stores below publish its contents. */
	i = __atomic_fetch_add(&h->clock_npairs, 1, __ATOMIC_RELAXED) % RIP_CLOCK_PAIRS;
	__atomic_store_n(&h->clock_pairs[i].ticks, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&h->clock_pairs[i].ns, ns, __ATOMIC_RELEASE);
	/* Release: ns before ticks (a reader loads ticks, acquire, then ns). */
	__atomic_store_n(&h->clock_pairs[i].ticks, ticks, __ATOMIC_RELEASE);
#else
	(void)h;
#endif
}

#endif /* RIP_INTERNAL_CLOCK_H */
