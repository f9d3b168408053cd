/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of the integ/ctf-*.sh and integ/snapshot-*.sh tests:
 * emits known sequences of events on T threads, so that a trace of it can
 * be checked event by event.
 *
 *	evprog N [--threads T] [--types K] [--sleep-every M] [--kill] [--wait]
 *
 * N = 0 emits without end (until killed).
 *
 * Every event's first field is seq = thread << 40 | n, where n counts the
 * thread's events from 0 with no gap, so a reader knows exactly which
 * events it holds and how many came before the first it sees.  Thread t
 * emits N events cycling through these types:
 *
 *	evprog:seq	 seq, clock (rip_clock_ticks() just before the event)
 *	evprog:signed	 seq, s8 = -(n % 128), s16 = -(n % 32768), s32 = -n
 *	evprog:wide	 seq, s64 = -n * 1000003, hex = n * 0x9e3779b97f4a7c15, u16 = n
 *	evprog:small	 seq, u8 = n % 256, 2nd (u32) = n ^ 0xdeadbeef
 *	evprog:str	 seq, msg = "hello <n> \"q\" \\" (rip_event_str)
 *	evprog:odd "x"	 seq, event = 1, my-field = 2, _under = 3
 *
 * (2nd, event, my-field, _under and the event name are what TSDL cannot
 * take as they are.)
 *	evprog:type_K	 seq, clock: K more types (--types, default 0); with the
 *			 built-in one and those above, K >= 25 gives ids >= 31
 *
 * --sleep-every M sleeps 150 ms (over 2^27 ticks of either clock) before
 * every M-th event of each thread, so that it needs the extended header.
 * --kill emits without end and a third thread SIGKILLs the process at a
 * random moment (20 to 220 ms after every writer has emitted its first
 * event).  --wait stays alive after emitting until stdin is closed.
 *
 * Prints "pid P", then "writing" once every writer has emitted its first
 * event (a test may take a snapshot then), then "emitted E" (events, all
 * threads) when done.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

#define MAX_THREADS 64
#define MAX_EXTRA 200
#define CAT 9

RIP_EVENT_TYPE(ev_seq, "evprog:seq", CAT, RIP_FIELD(U64, "seq"), RIP_FIELD(U64, "clock"));
RIP_EVENT_TYPE(ev_signed, "evprog:signed", CAT, RIP_FIELD(U64, "seq"), RIP_FIELD(S8, "s8"),
	       RIP_FIELD(S16, "s16"), RIP_FIELD(S32, "s32"));
RIP_EVENT_TYPE(ev_wide, "evprog:wide", CAT, RIP_FIELD(U64, "seq"), RIP_FIELD(S64, "s64"),
	       RIP_FIELD(HEX64, "hex"), RIP_FIELD(U16, "u16"));
RIP_EVENT_TYPE(ev_small, "evprog:small", CAT, RIP_FIELD(U64, "seq"), RIP_FIELD(U8, "u8"),
	       RIP_FIELD(U32, "2nd"));
RIP_EVENT_TYPE(ev_str, "evprog:str", CAT, RIP_FIELD(U64, "seq"), RIP_FIELD(STRING, "msg"));
RIP_EVENT_TYPE(ev_odd, "evprog:odd \"x\"", CAT, RIP_FIELD(U64, "seq"), RIP_FIELD(U32, "event"),
	       RIP_FIELD(U32, "my-field"), RIP_FIELD(U32, "_under"));

static struct rip_event_type extra[MAX_EXTRA];
static uint32_t extra_ids[MAX_EXTRA];
static char extra_names[MAX_EXTRA][32];

static struct {
	long n;
	int threads, types;
	long sleep_every;
	int kill, wait;
} opt = { .threads = 1 };

static atomic_long emitted;
static atomic_int writing; /* writers past their first event */

static void emit(int t, uint64_t n)
{
	uint64_t seq = (uint64_t)t << 40 | n;
	unsigned k = 6 + (unsigned)opt.types;
	unsigned which = (unsigned)(n % k);

	switch (which) {
	case 0:
		rip_event2(&ev_seq, seq, rip_clock_ticks());
		break;
	case 1:
		rip_event4(&ev_signed, seq, (uint64_t)-(int64_t)(n % 128),
			   (uint64_t)-(int64_t)(n % 32768), (uint64_t)-(int64_t)n);
		break;
	case 2:
		rip_event4(&ev_wide, seq, (uint64_t)(-(int64_t)n * 1000003),
			   n * 0x9e3779b97f4a7c15ull, n & 0xffff);
		break;
	case 3:
		rip_event3(&ev_small, seq, n % 256, (n ^ 0xdeadbeefull) & 0xffffffffull);
		break;
	case 4: {
		char msg[64];
		uint64_t v[1] = { seq };

		snprintf(msg, sizeof(msg), "hello %llu \"q\" \\", (unsigned long long)n);
		rip_event_str(&ev_str, v, msg);
		break;
	}
	case 5:
		rip_event4(&ev_odd, seq, 1, 2, 3);
		break;
	default:
		rip_event2(&extra[which - 6], seq, rip_clock_ticks());
		break;
	}
}

static void *writer(void *arg)
{
	int t = (int)(intptr_t)arg;
	struct timespec gap = { 0, 150 * 1000 * 1000 };

	for (uint64_t n = 0; opt.kill || !opt.n || n < (uint64_t)opt.n; n++) {
		if (opt.sleep_every && n && n % (uint64_t)opt.sleep_every == 0)
			nanosleep(&gap, NULL);
		emit(t, n);
		atomic_fetch_add_explicit(&emitted, 1, memory_order_relaxed);
		if (!n)
			atomic_fetch_add(&writing, 1);
	}
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: evprog N [--threads T] [--types K] [--sleep-every M] [--kill] "
			"[--wait]\n");
	return 2;
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_THREADS];
	char c, path[4096];
	int i;

	if (argc < 2)
		return usage();
	opt.n = atol(argv[1]);
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			opt.threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--types") && i + 1 < argc)
			opt.types = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--sleep-every") && i + 1 < argc)
			opt.sleep_every = atol(argv[++i]);
		else if (!strcmp(argv[i], "--kill"))
			opt.kill = 1;
		else if (!strcmp(argv[i], "--wait"))
			opt.wait = 1;
		else
			return usage();
	}
	if (opt.n < 0 || opt.threads < 1 || opt.threads > MAX_THREADS || opt.types < 0 ||
	    opt.types > MAX_EXTRA || opt.sleep_every < 0)
		return usage();
	if (rip_ring_open(NULL) && rip_ring_path(path, sizeof(path)) == -ENOENT) {
		fprintf(stderr, "evprog: cannot open the ring file\n");
		return 1;
	}
	for (i = 0; i < opt.types; i++) {
		snprintf(extra_names[i], sizeof(extra_names[i]), "evprog:type_%d", i);
		extra[i] = (struct rip_event_type){
			.name = extra_names[i],
			.category = CAT,
			.nfields = 2,
			.fields = { RIP_FIELD(U64, "seq"), RIP_FIELD(U64, "clock") },
			.id = &extra_ids[i],
		};
		extra_ids[i] = UINT32_MAX;
		if (rip_event_register(&extra[i])) {
			fprintf(stderr, "evprog: cannot register type %d\n", i);
			return 1;
		}
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (i = 0; i < opt.threads; i++) {
		if (pthread_create(&th[i], NULL, writer, (void *)(intptr_t)i)) {
			fprintf(stderr, "evprog: pthread_create failed\n");
			return 1;
		}
	}
	while (atomic_load(&writing) < opt.threads) {
		struct timespec tick = { 0, 1000000 };

		nanosleep(&tick, NULL);
	}
	printf("writing\n");
	fflush(stdout);
	if (opt.kill) {
		struct timespec d;

		srand((unsigned)time(NULL) ^ (unsigned)getpid());
		d.tv_sec = 0;
		d.tv_nsec = (20 + rand() % 200) * 1000000L;
		nanosleep(&d, NULL);
		kill(getpid(), SIGKILL);
	}
	for (i = 0; i < opt.threads; i++)
		pthread_join(th[i], NULL);
	printf("emitted %ld\n", atomic_load(&emitted));
	fflush(stdout);
	if (opt.wait)
		while (read(0, &c, 1) > 0)
			;
	return 0;
}
