/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of integ/dump-*.sh and integ/export-*.sh.  Opens a
 * ring file in $RIP_DIR, emits a known sequence of events (every field
 * type, a string with characters to escape, coroutine switches between two
 * named coroutines, events from a second thread named "helper"), prints
 * the ring file's path and then exits or waits to be killed.
 *
 *	dumpprog exit          the known events, then return from main
 *	dumpprog wait          the known events, then "ready" and pause()
 *	dumpprog fill N        N test:tick events in 1 KiB packets (for damage)
 *	dumpprog bench N       N test:tick events from each of 2 threads, big rings
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rip.h>

RIP_EVENT_TYPE(ev_start, "test:start", RIP_CAT_USER, RIP_FIELD(U32, "n"), RIP_FIELD(S32, "delta"),
	       RIP_FIELD(HEX64, "addr"), RIP_FIELD(S64, "big"));
RIP_EVENT_TYPE(ev_small, "test:small", RIP_CAT_USER, RIP_FIELD(U8, "u8"), RIP_FIELD(S8, "s8"),
	       RIP_FIELD(U16, "u16"), RIP_FIELD(S16, "s16"));
RIP_EVENT_TYPE(ev_msg, "test:msg", RIP_CAT_USER, RIP_FIELD(U64, "id"), RIP_FIELD(STRING, "text"));
RIP_EVENT_TYPE(ev_tick, "test:tick", RIP_CAT_USER, RIP_FIELD(U64, "i"));
RIP_EVENT_TYPE(ev_none, "test:none", RIP_CAT_USER);

static unsigned long nbench;

static void msg(uint64_t id, const char *text)
{
	uint64_t v[1] = { id };

	rip_event_str(&ev_msg, v, text);
}

static void *helper(void *arg)
{
	rip_thread_set_name("helper");
	rip_event1(&ev_tick, 100);
	msg(3, "helper");
	rip_thread_detach();
	return NULL;
}

static void *bench_thread(void *arg)
{
	for (unsigned long i = 0; i < nbench; i++)
		rip_event1(&ev_tick, i);
	rip_thread_detach();
	return NULL;
}

static int known(void)
{
	struct rip_coro *a, *b;
	pthread_t t;

	rip_thread_set_name("main");
	rip_event4(&ev_start, 1, (uint64_t)-5, 0xdeadbeefull, (uint64_t)-1234567890123ll);
	rip_event4(&ev_small, 255, (uint64_t)-128, 65535, (uint64_t)-32768);
	msg(1, "hello \"world\"\n\ttab\\");
	rip_event0(&ev_none);
	if (rip_coro_create("worker-a", &a) || rip_coro_create("worker-b", &b))
		return -1;
	rip_coro_switch_in(a);
	rip_event1(&ev_tick, 1);
	rip_coro_switch_out();
	rip_coro_switch_in(b);
	rip_event1(&ev_tick, 2);
	msg(2, "from b");
	rip_coro_switch_out();
	rip_coro_switch_in(a);
	rip_event1(&ev_tick, 3);
	rip_coro_switch_out();
	if (pthread_create(&t, NULL, helper, NULL))
		return -1;
	pthread_join(t, NULL);
	rip_event0(&ev_none);
	return 0;
}

int main(int argc, char **argv)
{
	RIP_OPTS(rip_ring_opts, o, .slots = 64);
	const char *mode = argc > 1 ? argv[1] : "exit";
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;
	char path[4096];
	int ret;

	if (!strcmp(mode, "fill")) {
		o.ev_rings = 4;
		o.ev_ring_size = 64u << 10;
		o.ev_packet_size = 1024;
	} else if (!strcmp(mode, "bench")) {
		o.ev_rings = 4;
		o.ev_ring_size = 128u << 20;
	} else if (strcmp(mode, "exit") && strcmp(mode, "wait")) {
		fprintf(stderr, "usage: dumpprog exit|wait|fill N|bench N\n");
		return 2;
	}
	ret = rip_ring_open(&o);
	if (ret || rip_ring_path(path, sizeof(path))) {
		fprintf(stderr, "dumpprog: rip_ring_open: %s\n", strerror(-ret));
		return 1;
	}
	printf("%s\n", path);
	fflush(stdout);
	if (!strcmp(mode, "fill")) {
		rip_thread_set_name("main");
		for (unsigned long i = 0; i < n; i++)
			rip_event1(&ev_tick, i);
		return 0;
	}
	if (!strcmp(mode, "bench")) {
		pthread_t t[2];

		nbench = n;
		for (int i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, bench_thread, NULL))
				return 1;
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	if (known())
		return 1;
	if (!strcmp(mode, "wait")) {
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	return 0;
}
