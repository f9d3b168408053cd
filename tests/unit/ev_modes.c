/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the event ring modes.  discard: with a live consumer that
 * never reads, the ring keeps its first packets and every later event is
 * dropped and counted.  block: with a consumer thread that reads slowly,
 * two writer threads lose nothing, each thread's counter arrives complete
 * and in order.  Both through the streaming consumer of read/evread.c.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

#include "read/evread.h"
#include "helpers.h"

RIP_EVENT_TYPE(ev_n, "test:n", RIP_CAT_USER, RIP_FIELD(U32, "thread"), RIP_FIELD(U64, "n"));

#define PER_THREAD 3000000ull

static struct rr_file f;
static struct ev_types types;
static volatile int writers_done;

struct tally {
	uint64_t events, next[2], bad;
};

static int count_event(const struct ev_event *e, void *arg)
{
	struct tally *t = arg;

	t->events++;
	if (e->type->id == *ev_n.id) {
		uint64_t th = e->v[0];

		if (th > 1 || e->v[1] != t->next[th])
			t->bad++;
		else
			t->next[th]++;
	}
	return 0;
}

static int count_packet(const struct ev_packet *p, void *arg)
{
	char err[256];

	return ev_decode(&types, p->data, p->len, p->hdr.timestamp_begin, count_event, arg, err,
			 sizeof(err)) < 0;
}

static void *writer(void *arg)
{
	uint64_t th = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 0; i < PER_THREAD; i++)
		rip_event2(&ev_n, th, i);
	return NULL;
}

static uint64_t discarded_all(void)
{
	uint64_t d = 0;

	for (uint32_t r = 0; r < f.hdr.ev_rings; r++)
		d += ((const struct rip_evring *)(f.map + f.hdr.ev_ctl_off +
						  (size_t)r * RIP_EVRING_SIZE))
			     ->discarded;
	return d;
}

static void case_block(void)
{
	struct timespec nap = { 0, 200000 };
	struct tally t = { 0 };
	bool joined[2] = { false, false };
	pthread_t th[2];
	char err[512];
	uint64_t lost = 0;

	for (uintptr_t i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, writer, (void *)i);
	/* A slow consumer: the writers must wait for it, not drop. */
	for (int done = 0; !done;) {
		done = writers_done;
		for (uint32_t r = 0; r < f.hdr.ev_rings; r++)
			T_EQ(ev_consume(&f, &types, r, false, count_packet, &t, &lost, err,
					sizeof(err)),
			     0);
		nanosleep(&nap, NULL);
		if (!done) {
			void *rv;

			/* never block here: the writers wait for this consumer */
			for (int i = 0; i < 2; i++)
				if (!joined[i] && pthread_tryjoin_np(th[i], &rv) == 0)
					joined[i] = true;
			writers_done = joined[0] && joined[1];
		}
	}
	for (uint32_t r = 0; r < f.hdr.ev_rings; r++)
		T_EQ(ev_consume(&f, &types, r, true, count_packet, &t, &lost, err, sizeof(err)), 0);
	printf("block: %llu events, next %llu/%llu, lost packets %llu, discarded %llu\n",
	       (unsigned long long)t.events, (unsigned long long)t.next[0],
	       (unsigned long long)t.next[1], (unsigned long long)lost,
	       (unsigned long long)discarded_all());
	T_EQ(t.bad, 0);
	T_EQ(t.next[0], PER_THREAD);
	T_EQ(t.next[1], PER_THREAD);
	T_EQ(lost, 0);
	T_EQ(discarded_all(), 0);
}

int main(int argc, char **argv)
{
	char path[4096], err[512];
	int ret;

	if (argc > 1 && !strcmp(argv[1], "discard")) {
		/* child: discard mode with a consumer that never reads */
		RIP_OPTS(rip_ring_opts, o, .ev_rings = 1, .ev_ring_size = 8192,
			 .ev_packet_size = 1024, .ev_mode = RIP_MODE_DISCARD + 1);
		struct ev_packet *pk;
		size_t n, torn = 0;
		uint64_t decoded = 0;

		T_EQ(rip_ring_open(&o), 0);
		T_EQ(rip_ring_path(path, sizeof(path)), 0);
		T_EQ(rr_open(path, &f, err, sizeof(err)), 0);
		T_EQ(ev_consumer_open(&f, err, sizeof(err)), 0);
		for (uint64_t i = 0; i < 100000; i++)
			rip_event2(&ev_n, 0, i);
		T_EQ(ev_read_types(&f, &types, err, sizeof(err)), 0);
		T_EQ(ev_copy_ring(&f, &types, 0, &pk, &n, &torn, err, sizeof(err)), 0);
		for (size_t i = 0; i < n; i++) {
			struct tally t = { 0 };
			int k = ev_decode(&types, pk[i].data, pk[i].len, pk[i].hdr.timestamp_begin,
					  count_event, &t, err, sizeof(err));

			T_CHECK(k > 0);
			decoded += (uint64_t)(k > 0 ? k : 0);
			/* the first packets stay: seq 0..n-1 */
			T_EQ(pk[i].hdr.packet_seq_num, i);
		}
		printf("discard: %zu packets, %llu kept, %llu discarded\n", n,
		       (unsigned long long)decoded, (unsigned long long)discarded_all());
		T_EQ(n, 8);
		T_EQ(decoded + discarded_all(), 100000);
		ev_packets_free(pk, n);
		return t_result();
	}

	/* A child for discard mode: one ring file per process. */
	{
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "%s discard", argv[0]);
		T_EQ(system(cmd), 0);
	}

	RIP_OPTS(rip_ring_opts, o, .ev_rings = 4, .ev_ring_size = 64 << 10,
		 .ev_packet_size = 4096, .ev_mode = RIP_MODE_BLOCK + 1);
	T_EQ(rip_ring_open(&o), 0);
	T_EQ(rip_ring_path(path, sizeof(path)), 0);
	ret = rr_open(path, &f, err, sizeof(err));
	T_EQ(ret, 0);
	if (ret) {
		puts(err);
		return T_FAIL;
	}
	T_EQ(ev_consumer_open(&f, err, sizeof(err)), 0);
	T_EQ(ev_read_types(&f, &types, err, sizeof(err)), 0);
	case_block();
	rr_close(&f);
	return t_result();
}
