/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: nested writers on one thread never corrupt a packet.  A
 * thread emits events in a tight loop while a signal handler on the same
 * thread emits its own events thousands of times a second (over 1000
 * times in all), landing in the middle of fast paths and of packet
 * switches.  Afterwards every packet of
 * the ring must decode, timestamps must never go backwards, and every
 * event emitted must be either in the ring or counted as lost.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

#include "read/evread.h"
#include "helpers.h"

RIP_EVENT_TYPE(ev_main, "test:main", RIP_CAT_USER, RIP_FIELD(U64, "n"));
RIP_EVENT_TYPE(ev_sig, "test:sig", RIP_CAT_USER, RIP_FIELD(U64, "n"), RIP_FIELD(U32, "tag"));
RIP_EVENT_TYPE(ev_str, "test:str", RIP_CAT_USER, RIP_FIELD(U32, "k"), RIP_FIELD(STRING, "s"));

static volatile sig_atomic_t sig_count;

static void on_alarm(int sig)
{
	uint64_t v[2] = { (uint64_t)sig_count, 7 };

	(void)sig;
	rip_event2(&ev_sig, (uint64_t)sig_count, 0xabcd);
	if (sig_count % 3 == 0)
		rip_event_str(&ev_str, v, "from a signal handler");
	sig_count++;
}

struct check {
	uint64_t main_seen, sig_seen, str_seen, last_ts, backwards, last_n;
	int64_t order_breaks;
};

static int on_event(const struct ev_event *e, void *arg)
{
	struct check *c = arg;

	if (e->ts < c->last_ts)
		c->backwards++;
	c->last_ts = e->ts;
	if (e->type->id == *ev_main.id) {
		if (c->main_seen && e->v[0] <= c->last_n)
			c->order_breaks++;
		c->last_n = e->v[0];
		c->main_seen++;
	} else if (e->type->id == *ev_sig.id) {
		if (e->v[1] != 0xabcd)
			c->order_breaks++;
		c->sig_seen++;
	} else if (e->type->id == *ev_str.id) {
		if (!e->str || strcmp(e->str, "from a signal handler"))
			c->order_breaks++;
		c->str_seen++;
	}
	return 0;
}

int main(void)
{
	RIP_OPTS(rip_ring_opts, o, .ev_rings = 2, .ev_ring_size = 1 << 20,
		 .ev_packet_size = 4096);
	struct itimerval it = { .it_interval = { 0, 100 }, .it_value = { 0, 100 } };
	char path[4096], err[512];
	static struct ev_types types;
	struct ev_packet *pk;
	struct rr_file f;
	struct check c = { 0 };
	size_t n, torn = 0;
	uint64_t emitted = 0, decoded = 0, discarded;
	struct timespec t0, t1;
	int ret;

	T_EQ(rip_ring_open(&o), 0);
	T_EQ(rip_ring_path(path, sizeof(path)), 0);
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* 1 to 2 s, and on until 1000 signals came (a loaded machine delivers
	 * fewer a second), 60 s at most */
	do {
		for (int i = 0; i < 10000; i++)
			rip_event1(&ev_main, emitted++);
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while (t1.tv_sec - t0.tv_sec < 2 || (sig_count <= 1000 && t1.tv_sec - t0.tv_sec < 60));
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	printf("emitted %llu in the loop, %d signals\n", (unsigned long long)emitted,
	       (int)sig_count);
	T_CHECK(sig_count > 1000);

	ret = rr_open(path, &f, err, sizeof(err));
	T_EQ(ret, 0);
	if (ret) {
		puts(err);
		return T_FAIL;
	}
	T_EQ(ev_read_types(&f, &types, err, sizeof(err)), 0);
	ret = ev_copy_ring(&f, &types, 0, &pk, &n, &torn, err, sizeof(err));
	T_EQ(ret, 0);
	if (ret) {
		puts(err);
		return T_FAIL;
	}
	for (size_t i = 0; i < n; i++) {
		int k = ev_decode(&types, pk[i].data, pk[i].len, pk[i].hdr.timestamp_begin, on_event,
				  &c, err, sizeof(err));

		if (k < 0) {
			printf("packet %zu: %s\n", i, err);
			t_failures++;
			break;
		}
		T_EQ(k, pk[i].hdr.events);
		if (i)
			T_EQ(pk[i].hdr.packet_seq_num, pk[i - 1].hdr.packet_seq_num + 1);
		decoded += (uint64_t)k;
	}
	/*
	 * The ring's count, and the file's for what was emitted while the thread
	 * had no ring yet (a signal during its first event's ring take).
	 */
	discarded = (n ? pk[n - 1].hdr.events_discarded : 0) +
		    __atomic_load_n(&((const struct rip_file_hdr *)f.map)->ev_lost, __ATOMIC_RELAXED);
	printf("%zu packets, %llu events decoded (%llu main, %llu sig, %llu str), %llu discarded\n",
	       n, (unsigned long long)decoded, (unsigned long long)c.main_seen,
	       (unsigned long long)c.sig_seen, (unsigned long long)c.str_seen,
	       (unsigned long long)discarded);
	T_EQ(c.backwards, 0);
	T_EQ(c.order_breaks, 0);
	T_EQ(torn, 0);
	/* Everything emitted is in the ring or counted as lost. */
	T_EQ(decoded + discarded,
	     emitted + (uint64_t)sig_count + ((uint64_t)sig_count + 2) / 3);
	ev_packets_free(pk, n);
	rr_close(&f);
	return t_result();
}
