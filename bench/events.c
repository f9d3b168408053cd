/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/events.c - cost of an event (rip.h) against its floor, and of the
 * same event through LTTng-UST when built with -DBENCH_LTTNG.
 *
 * The loops have the shape of bench/snap.c's: a counted loop whose body is
 * the path plus an empty asm with a memory clobber, in a noipa function that
 * callgrind --toggle-collect and objdump --disassemble find by name.
 *
 *	empty		the loop alone: what the other loops cost besides their body
 *	rdtsc16		the floor of an event: one rdtsc and a 16-byte store
 *			(timestamp and value) to a thread-local buffer
 *	event		rip_event1() of a type with one u64 field, category on
 *	disabled	the same call for a category switched off in the ring
 *			file's control words, as `rip disable` does from outside
 *	lttng		tracepoint(ripbench, count, i): one u64 field (-DBENCH_LTTNG;
 *			bench/run.sh builds it as build/bench/events-lttng)
 *
 *   events time [REPS]      ns per iteration of every loop, median of REPS
 *   events count LOOP N     run one loop N times and exit (for callgrind)
 *   events bytes            bytes one event takes in the ring
 *   events trace DIR        walk a recorded trace of examples/events: streams,
 *                           packets, events, discarded, bytes, gaps in the counts
 *
 * Output is one "key value..." line per figure; bench/run.sh tabulates it.
 * The event loop checks afterwards that the last record in the ring holds
 * its last value, the disabled loop that it wrote nothing; the program
 * exits 1 if not.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

#include "bench.h"

#ifdef BENCH_LTTNG
#define TRACEPOINT_DEFINE
#include "lttng-tp.h"
#endif

#define BENCH_CLOBBER() __asm__ __volatile__("" ::: "memory")

#define CAT_ON RIP_CAT_USER
#define CAT_OFF (RIP_CAT_USER + 1)

RIP_EVENT_TYPE(ev_on, "bench:count", CAT_ON, RIP_FIELD(U64, "n"));
RIP_EVENT_TYPE(ev_off, "bench:off", CAT_OFF, RIP_FIELD(U64, "n"));

static __thread uint64_t floor16[2] __attribute__((aligned(16)));

BENCH_NOINLINE static void loop_empty(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		BENCH_CLOBBER();
}

BENCH_NOINLINE static void loop_rdtsc16(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
#if defined(__x86_64__)
		uint32_t lo, hi;

		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		floor16[0] = ((uint64_t)hi << 32) | lo;
#else
		floor16[0] = rip_clock_ticks();
#endif
		floor16[1] = i;
		BENCH_CLOBBER();
	}
}

BENCH_NOINLINE static void loop_event(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		rip_event1(&ev_on, i);
		BENCH_CLOBBER();
	}
}

BENCH_NOINLINE static void loop_disabled(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		rip_event1(&ev_off, i);
		BENCH_CLOBBER();
	}
}

#ifdef BENCH_LTTNG
BENCH_NOINLINE static void loop_lttng(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		tracepoint(ripbench, count, i);
		BENCH_CLOBBER();
	}
}
#endif

static int bench_bad;

/* Run loop `name` n times and check that it did its work. */
static void run_loop(const char *name, uint64_t n)
{
	struct rip_evw *w = &__rip_self.ev;
	char *pos = w->pos;
	uint64_t last;

	if (!strcmp(name, "empty")) {
		loop_empty(n);
	} else if (!strcmp(name, "rdtsc16")) {
		loop_rdtsc16(n);
		if (n && floor16[1] != n - 1)
			bench_bad = 1;
	} else if (!strcmp(name, "event")) {
		loop_event(n);
		/* the record before pos: header, then the u64 of the last iteration */
		if (n && w->pkt && w->pos) {
			memcpy(&last, w->pos - 8, 8);
			if (last != n - 1) {
				fprintf(stderr, "events: the last event holds %llu, not %llu\n",
					(unsigned long long)last, (unsigned long long)n - 1);
				bench_bad = 1;
			}
		} else if (n) {
			fprintf(stderr, "events: the event loop wrote nothing\n");
			bench_bad = 1;
		}
	} else if (!strcmp(name, "disabled")) {
		loop_disabled(n);
		if (w->pos != pos) {
			fprintf(stderr, "events: a disabled event was written\n");
			bench_bad = 1;
		}
#ifdef BENCH_LTTNG
	} else if (!strcmp(name, "lttng")) {
		loop_lttng(n);
#endif
	} else {
		fprintf(stderr, "events: unknown loop %s\n", name);
		exit(2);
	}
}

static char ring_file[4096];

static void ring_setup(void)
{
	RIP_OPTS(rip_ring_opts, o, .slots = 64, .ev_rings = 4);
	int err = rip_ring_open(&o);

	if (err) {
		fprintf(stderr, "events: rip_ring_open: %s\n", strerror(-err));
		exit(1);
	}
	rip_ring_path(ring_file, sizeof(ring_file));
	rip_category_name(CAT_ON, "bench");
	rip_category_name(CAT_OFF, "bench_off");
	/* What `rip disable PID bench_off` does: clear the bit in the file's control word. */
	__atomic_fetch_and(&__rip_enable[CAT_OFF / 64], ~(1ull << (CAT_OFF % 64)),
			   __ATOMIC_RELAXED);
	if (!rip_category_enabled(CAT_ON) || rip_category_enabled(CAT_OFF)) {
		fprintf(stderr, "events: the category bits are not as set\n");
		exit(1);
	}
	/* The first event attaches the thread and takes its ring: keep it out of the loops. */
	rip_event1(&ev_on, 0);
	if (!__rip_self.ev.pkt) {
		fprintf(stderr, "events: the thread got no event ring\n");
		exit(1);
	}
}

static void ring_teardown(void)
{
	rip_ring_close();
	unlink(ring_file);
}

static int parse_reps(int argc, char **argv, int i)
{
	int reps = argc > i ? atoi(argv[i]) : 9;

	return reps < 1 ? 1 : reps > 63 ? 63 : reps;
}

static const struct {
	const char *name;
	uint64_t iters;
} bench_loops[] = {
	{ "empty", 50000000 },	  { "rdtsc16", 3000000 }, { "event", 3000000 },
	{ "disabled", 50000000 },
#ifdef BENCH_LTTNG
	{ "lttng", 500000 },
#endif
};
#define NLOOPS (sizeof(bench_loops) / sizeof(bench_loops[0]))

static void cmd_time(int reps)
{
	double v[NLOOPS][64];
	char key[64];

	/* one untimed pass: page faults, frequency ramp-up, every packet of the ring once */
	for (size_t l = 0; l < NLOOPS; l++)
		run_loop(bench_loops[l].name, bench_loops[l].iters / 4);
	/* interleaved, so that a noisy neighbour hits every loop alike */
	for (int r = 0; r < reps; r++)
		for (size_t l = 0; l < NLOOPS; l++)
			v[l][r] = bench_time_loop(run_loop, bench_loops[l].name, bench_loops[l].iters);
	for (size_t l = 0; l < NLOOPS; l++) {
		snprintf(key, sizeof(key), "ns %s", bench_loops[l].name);
		bench_print_figure(key, v[l], reps);
	}
	/* ratios within each repetition, then their median (see bench/snap.c) */
	bench_print_ratio("ratio event rdtsc16", v[2], v[1], 1, reps);
	bench_print_ratio("ratio disabled empty", v[3], v[0], 1, reps);
#ifdef BENCH_LTTNG
	bench_print_ratio("ratio lttng event", v[4], v[2], 1, reps);
#endif
	printf("clock %s\n", __rip_clock_tsc ? "tsc" : "mono");
}

/* Bytes one event takes in the ring: the write position's advance over events in one packet. */
static void cmd_bytes(void)
{
	struct rip_evw *w = &__rip_self.ev;
	const uint64_t k = 64;

	for (int tries = 0; tries < 4; tries++) {
		struct rip_packet *pkt = w->pkt;
		char *pos = w->pos;

		loop_event(k);
		if (w->pkt == pkt && pkt) {
			printf("bytes event %.2f\n", (double)(w->pos - pos) / (double)k);
			pos = w->pos;
			loop_disabled(k);
			printf("bytes disabled %.2f\n", (double)(w->pos - pos) / (double)k);
			return;
		}
	}
	fprintf(stderr, "events: a packet switch on every try\n");
	bench_bad = 1;
}

/* ---- a recorded trace of examples/events --------------------------------------------- */

struct trace_sum {
	uint64_t streams, packets, events, discarded, bytes, gaps, bad;
};

/*
 * One stream file: packets of struct rip_packet + events (rip/abi.h).  Every
 * event of examples/events has one 8-byte field after its 4- or 13-byte
 * header, and counts 0, 1, 2...: a count that does not follow the one
 * before is a gap (an event lost).
 */
static void trace_stream(const char *path, struct trace_sum *s)
{
	FILE *f = fopen(path, "rb");
	struct rip_packet ph;
	uint64_t next = 0, disc = 0, pkts = 0;
	static char buf[1 << 22];
	struct stat st;

	if (!f)
		return;
	if (fstat(fileno(f), &st) || fread(&ph, sizeof(ph), 1, f) != 1 ||
	    ph.magic != RIP_CTF_MAGIC) {
		fclose(f);
		return;
	}
	rewind(f);
	s->streams++;
	s->bytes += (uint64_t)st.st_size;
	while (fread(&ph, sizeof(ph), 1, f) == 1) {
		uint64_t psize = ph.packet_size / 8, csize = ph.content_size / 8, off, nev = 0;

		if (ph.magic != RIP_CTF_MAGIC || psize < sizeof(ph) || psize > sizeof(buf) ||
		    csize < sizeof(ph) || csize > psize) {
			s->bad++;
			break;
		}
		memcpy(buf, &ph, sizeof(ph));
		if (fread(buf + sizeof(ph), 1, psize - sizeof(ph), f) != psize - sizeof(ph) &&
		    feof(f) && csize > sizeof(ph))
			/* the last packet may be cut after its content */
			clearerr(f);
		for (off = sizeof(ph); off + 4 <= csize;) {
			uint32_t h;
			uint64_t n;

			memcpy(&h, buf + off, 4);
			off += (h & 31) == RIP_EVENT_ID_EXTENDED ? 13 : 4;
			if (off + 8 > csize) {
				s->bad++;
				break;
			}
			memcpy(&n, buf + off, 8);
			off += 8;
			if (n != next)
				s->gaps++;
			next = n + 1;
			nev++;
		}
		if (ph.events && ph.events != nev)
			s->bad++;
		s->events += nev;
		if (ph.events_discarded > disc)
			disc = ph.events_discarded;
		pkts++;
	}
	s->packets += pkts;
	s->discarded += disc;
	fclose(f);
}

static void trace_dir(const char *dir, struct trace_sum *s, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];
	struct stat st;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "metadata"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode) && depth < 3)
			trace_dir(path, s, depth + 1);
		else if (S_ISREG(st.st_mode))
			trace_stream(path, s);
	}
	closedir(d);
}

static int cmd_trace(const char *dir)
{
	struct trace_sum s = { 0 };

	trace_dir(dir, &s, 0);
	printf("trace streams %llu packets %llu events %llu discarded %llu bytes %llu gaps %llu "
	       "bad %llu\n",
	       (unsigned long long)s.streams, (unsigned long long)s.packets,
	       (unsigned long long)s.events, (unsigned long long)s.discarded,
	       (unsigned long long)s.bytes, (unsigned long long)s.gaps, (unsigned long long)s.bad);
	return s.streams && !s.bad ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "time";

	if (!strcmp(cmd, "trace") && argc == 3)
		return cmd_trace(argv[2]);
	ring_setup();
	if (!strcmp(cmd, "time")) {
		cmd_time(parse_reps(argc, argv, 2));
	} else if (!strcmp(cmd, "count") && argc == 4) {
		run_loop(argv[2], strtoull(argv[3], NULL, 10));
	} else if (!strcmp(cmd, "bytes")) {
		cmd_bytes();
	} else {
		fprintf(stderr, "usage: events time [REPS] | count LOOP N | bytes | trace DIR\n");
		ring_teardown();
		return 2;
	}
	ring_teardown();
	if (bench_bad) {
		fprintf(stderr, "events: a loop skipped work; figures are not valid\n");
		return 1;
	}
	return 0;
}
