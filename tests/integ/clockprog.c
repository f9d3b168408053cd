// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/clockprog.c - events that carry the time they were made, by
 * CLOCK_MONOTONIC_RAW, for the clock tests (clock-accuracy.sh).
 *
 * usage: clockprog SECONDS
 *
 * Every 20 ms for SECONDS, emits clock:raw {before, after}: the
 * CLOCK_MONOTONIC_RAW nanoseconds read just before the event and just
 * after it, the event taking its own time in between; the second field is
 * known only after the first event, so the event is written twice, first
 * with after 0 (a reader that turns the event's ticks into nanoseconds
 * right finds the first event's time between before and after).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <rip.h>

RIP_EVENT_TYPE(clock_raw, "clock:raw", RIP_CAT_USER, RIP_FIELD(U64, "before"),
	       RIP_FIELD(U64, "after"));

static uint64_t raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	double secs = argc == 2 ? atof(argv[1]) : 0;
	uint64_t end;
	struct timespec pause = { 0, 20 * 1000 * 1000 };

	if (secs <= 0) {
		fprintf(stderr, "usage: clockprog SECONDS\n");
		return 2;
	}
	end = raw_ns() + (uint64_t)(secs * 1e9);
	for (;;) {
		uint64_t before = raw_ns(), after;

		rip_event2(&clock_raw, before, 0);
		after = raw_ns();
		rip_event2(&clock_raw, before, after);
		if (after > end)
			break;
		nanosleep(&pause, NULL);
	}
	return 0;
}
