/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the file's clock as readers work it out (rr_clock_init,
 * rr_clock_ns, rr_clock_line) from the header's rate, base and
 * calibration pairs, and the writer's choice of the TSC
 * (rip_clock_tsc_decide).  With a rate off by 500 ppm and a pair 10 s
 * later, the line goes through the pairs (the rate measured over the run);
 * a pair that says the TSC ticked 1.5 times slower from some point on (a
 * virtual machine moved to another host) cuts the line into two segments,
 * before and after; torn, backward, zero and absurd pairs are left out.
 * The TSC is chosen when it is invariant and the kernel trusts it (its
 * clocksource, a known frequency or reliable flag), never with
 * RIP_CLOCK=mono, always with RIP_CLOCK=tsc when invariant.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <internal/clock.h>

#include "helpers.h"
#include "read/ringfile.h"

#define HZ 2000000000ull /* 2 GHz: 2 ticks a ns */
#define T0 1000000000000ull
#define N0 5000000000ull

static struct rip_file_hdr h;

static void header(uint64_t hz)
{
	memset(&h, 0, sizeof(h));
	h.clock_kind = RIP_CLOCK_TSC;
	h.clock_hz = hz;
	h.clock_base_ticks = T0;
	h.clock_base_ns = N0;
}

static void pair(uint64_t ticks, uint64_t ns)
{
	uint32_t i = h.clock_npairs++ % RIP_CLOCK_PAIRS;

	h.clock_pairs[i].ticks = ticks;
	h.clock_pairs[i].ns = ns;
}

static int64_t conv(uint64_t ticks)
{
	struct rr_clock c;

	rr_clock_init(&c, &h);
	return rr_clock_ns(&c, ticks);
}

static int64_t absdiff(int64_t a, int64_t b)
{
	return a > b ? a - b : b - a;
}

int main(void)
{
	uint64_t hz, bt, bn;

	/* no pairs: the header's line */
	header(HZ);
	T_EQ(conv(T0), N0);
	T_EQ(conv(T0 + 2 * HZ), N0 + 2000000000ull);
	T_EQ(conv(T0 - HZ), N0 - 1000000000ull);

	/* the header's rate 500 ppm too high; the pair 10 s later is right */
	header(HZ + HZ / 2000);
	pair(T0 + 10 * HZ, N0 + 10000000000ull);
	T_CHECK(absdiff(conv(T0 + 5 * HZ), N0 + 5000000000ull) <= 1);
	T_CHECK(absdiff(conv(T0 + 10 * HZ), N0 + 10000000000ull) <= 1);
	T_CHECK(absdiff(conv(T0 + 20 * HZ), N0 + 20000000000ull) <= 2);
	T_EQ(rr_clock_line(&h, &hz, &bt, &bn), 0);
	T_EQ(hz, HZ);
	/* and a pair near the line (50 ns off) keeps it one line */
	pair(T0 + 4 * HZ, N0 + 4000000000ull + 50);
	T_EQ(rr_clock_line(&h, &hz, &bt, &bn), 0);
	T_CHECK(absdiff(conv(T0 + 10 * HZ), N0 + 10000000000ull) <= 1);

	/* a rate change at 10 s: 1.5 times slower after it (3 ticks per 2 ns -> 4 per 3) */
	header(HZ);
	pair(T0 + 10 * HZ, N0 + 10000000000ull);
	pair(T0 + 10 * HZ + 4000000000ull, N0 + 10000000000ull + 3000000000ull);
	T_EQ(rr_clock_line(&h, &hz, &bt, &bn), -EDOM);
	T_CHECK(absdiff(conv(T0 + 4 * HZ), N0 + 4000000000ull) <= 1);
	/* 1 s of the new rate after the change: 1.333e9 ticks */
	T_CHECK(absdiff(conv(T0 + 10 * HZ + 1333333333ull), N0 + 11000000000ull) <= 2);
	/* past the last pair, the last rate goes on */
	T_CHECK(absdiff(conv(T0 + 10 * HZ + 8000000000ull), N0 + 16000000000ull) <= 2);
	/* before the base, the first segment's rate */
	T_CHECK(absdiff(conv(T0 - HZ), N0 - 1000000000ull) <= 1);

	/* hostile or torn pairs are left out: the line stays the header's */
	header(HZ);
	pair(0, N0 + 1);			       /* no ticks: not written */
	pair(T0 + HZ, N0 - 5);			       /* time going back */
	pair(T0 + 2 * HZ, N0 + 50 * 1000000000ull);    /* 25 times too slow */
	pair(T0 + 3 * HZ, UINT64_MAX);		       /* beyond int64 */
	pair(T0 - 1, N0);			       /* as old as the base, no time between */
	T_EQ(conv(T0 + 2 * HZ), N0 + 2000000000ull);
	T_EQ(rr_clock_line(&h, &hz, &bt, &bn), 0);
	T_EQ(hz, HZ);
	/* a full ring of pairs, every one consistent */
	header(HZ);
	for (int i = 1; i <= 40; i++)
		pair(T0 + (uint64_t)i * HZ, N0 + (uint64_t)i * 1000000000ull);
	T_CHECK(absdiff(conv(T0 + 30 * HZ), N0 + 30000000000ull) <= 1);
	/* a nanosecond clock has no pairs to follow */
	header(1000000000u);
	h.clock_kind = RIP_CLOCK_MONO_RAW;
	h.clock_base_ticks = N0;
	pair(N0 + 7, N0 + 9);
	T_EQ(conv(N0 + 1000), N0 + 1000);

	/*
	 * rr_clock_ns's 64-bit multiply gives rr_line_ns's ns, saturated the
	 * same way, at any rate (1 Hz: mult near 2^62) and any distance from
	 * the base, before and after it.
	 */
	{
		const uint64_t rates[] = { 1, 3, 1000000, 999999937, HZ, 100000000000ull };
		uint64_t x = 0x9e3779b97f4a7c15ull;

		for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
			struct rr_clock c;

			header(rates[r]);
			rr_clock_init(&c, &h);
			T_CHECK(c.mult64 != 0);
			for (int i = 0; i < 20000; i++) {
				uint64_t t;

				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				int64_t want;

				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				t = i < 64  ? T0 + (1ull << i) :
				    i < 128 ? T0 - (1ull << (i - 64)) :
					      x >> (i % 64);
				want = rr_line_ns(c.base_ticks, c.base_ns, c.mult, t);
				if (rr_clock_ns(&c, t) != want) {
					T_EQ(rr_clock_ns(&c, t), want);
					break;
				}
			}
			if (rates[r] < 1000) /* 2^64 ticks of 1 s or 1/3 s: past int64's ns */
				T_EQ(rr_clock_ns(&c, UINT64_MAX), INT64_MAX);
			/*
			 * Around the end of the span the first path takes (no test of
			 * overflow below it): the same ns, and INT64_MAX from it on
			 * where it ends before the last tick.
			 */
			T_CHECK(c.span != 0);
			for (int k = -64; k <= 64; k++) {
				uint64_t end = c.base_ticks + c.span;
				uint64_t t = end + (uint64_t)(int64_t)k;
				int64_t want;

				if ((k < 0 && t > end) || (k > 0 && t < end))
					continue; /* wrapped */
				want = rr_line_ns(c.base_ticks, c.base_ns, c.mult, t);
				if (rr_clock_ns(&c, t) != want) {
					T_EQ(rr_clock_ns(&c, t), want);
					break;
				}
				if (k >= 0 && end != UINT64_MAX && rr_clock_ns(&c, t) != INT64_MAX) {
					T_EQ(rr_clock_ns(&c, t), INT64_MAX);
					break;
				}
			}
		}
	}

#if defined(__x86_64__)
	/* the writer's choice */
	T_EQ(rip_clock_tsc_decide(NULL, 1, 1, 0, 0), 1);  /* clocksource tsc */
	T_EQ(rip_clock_tsc_decide(NULL, 1, 0, 1, 0), 1);  /* kvm-clock, known frequency */
	T_EQ(rip_clock_tsc_decide(NULL, 1, 0, 0, 1), 1);  /* kvm-clock, reliable */
	T_EQ(rip_clock_tsc_decide(NULL, 1, 0, 0, 0), 0);  /* kvm-clock, nothing said */
	T_EQ(rip_clock_tsc_decide(NULL, 0, 1, 1, 1), 0);  /* not invariant */
	T_EQ(rip_clock_tsc_decide("mono", 1, 1, 1, 1), 0);
	T_EQ(rip_clock_tsc_decide("tsc", 1, 0, 0, 0), 1);
	T_EQ(rip_clock_tsc_decide("tsc", 0, 0, 0, 0), 0);
#endif
	return t_result();
}
