/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: a reader running at the same time as the writers never takes
 * a torn entry or a half-reused slot for a valid one.  Writer threads store
 * self-checking entries straight through __rip_snap_store() into their own
 * slot: value = (seq << 32) | hash32(seq), seq being the entry's position in
 * the ring.  Churn threads come and go all the time (their slots are reused
 * under the reader), each named "c<tid>" through its comm before it attaches
 * and storing (tid << 32) | hash32(k).  The main thread reads every slot with
 * rr_read_slots in a loop for 3 s, and on until the run has done enough to
 * mean something (100 reads, 100 churn threads, a churn slot seen, writers
 * past seq 1000) or 60 s have gone by on a machine too slow for that: every
 * entry returned must validate, be consecutive and end at seq - 1, writers'
 * seq never goes back, and a churn slot's name, tid and entries always
 * belong to one and the same thread.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

#include "helpers.h"
#include "read/ringfile.h"

#define WRITERS 2
#define CHURN_LIVE 8   /* churn threads alive at once */
#define SLOTS 64
#define RUN_NS 3000000000ll
#define MAX_RUN_NS 60000000000ll /* only when the work above is not done by RUN_NS */

static atomic_int stop;
static atomic_ulong churned;
static atomic_int writer_err;
static uint32_t writer_slot[WRITERS];
static atomic_int writers_ready;

static uint32_t hash32(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return (uint32_t)x;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void *writer(void *arg)
{
	int w = (int)(intptr_t)arg;
	char name[16];
	struct rip_slot *s;

	snprintf(name, sizeof(name), "writer-%d", w);
	if (rip_thread_attach() || rip_thread_set_name(name)) {
		atomic_store(&writer_err, 1);
		return NULL;
	}
	s = __rip_self.cur;
	writer_slot[w] = s->index;
	atomic_fetch_add(&writers_ready, 1);
	for (uint64_t seq = 0; !atomic_load_explicit(&stop, memory_order_relaxed); seq++) {
		__rip_snap_store(s, (uintptr_t)((seq << 32) | hash32(seq)));
		/* Two cores: leave the churner and the reader some time. */
		if ((seq & 1023) == 1023)
			sched_yield();
	}
	return NULL;
}

static void *churn_one(void *arg)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	char comm[16];
	struct rip_slot *s;

	(void)arg;
	/* The name goes in at attach time, under the slot's seqlock. */
	snprintf(comm, sizeof(comm), "c%d", (int)tid);
	pthread_setname_np(pthread_self(), comm);
	if (rip_thread_attach())
		return NULL;
	s = __rip_self.cur;
	for (uint64_t k = 0; k < 40; k++)
		__rip_snap_store(s, (uintptr_t)(((uint64_t)(uint32_t)tid << 32) | hash32(k)));
	return NULL;
}

static void *churner(void *arg)
{
	pthread_attr_t attr;

	(void)arg;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	while (!atomic_load(&stop)) {
		pthread_t t[CHURN_LIVE];
		int n = 0;

		for (int i = 0; i < CHURN_LIVE; i++)
			if (pthread_create(&t[n], &attr, churn_one, NULL) == 0)
				n++;
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		atomic_fetch_add(&churned, (unsigned long)n);
		if (!n)
			usleep(10000); /* EAGAIN: the machine is short of threads; wait */
	}
	pthread_attr_destroy(&attr);
	return NULL;
}

static unsigned long bad;

static void report(const struct rr_slot *s, const char *what, uint32_t k)
{
	if (bad++ < 10)
		fprintf(stderr, "slot %u (%s, tid %d, gen %u, seq %u, n %u): entry %u: %s\n",
			s->index, s->name, s->tid, s->gen, s->seq, s->n, k, what);
}

static void check_writer(const struct rr_slot *s, uint32_t *last_seq)
{
	if (s->seq < *last_seq)
		report(s, "seq went back", 0);
	*last_seq = s->seq;
	/* Fewer than depth - 1 entries is fine: those overwritten during the copy are dropped. */
	if (s->n > RIP_SNAP_DEPTH - 1 || s->n > s->seq)
		report(s, "more entries than the ring can hold", 0);
	for (uint32_t k = 0; k < s->n; k++) {
		uint64_t v = s->ip[k];
		uint32_t want = s->seq - s->n + k;

		if ((uint32_t)v != hash32(v >> 32))
			report(s, "torn entry (hash does not match)", k);
		else if ((uint32_t)(v >> 32) != want)
			report(s, "entry out of order", k);
	}
}

static void check_churn(const struct rr_slot *s)
{
	char want[RIP_NAME_MAX];

	snprintf(want, sizeof(want), "c%d", (int)s->tid);
	if (strcmp(want, s->name)) {
		report(s, "name and tid of different threads", 0);
		return;
	}
	for (uint32_t k = 0; k < s->n; k++) {
		uint64_t v = s->ip[k];

		if ((uint32_t)(v >> 32) != (uint32_t)s->tid)
			report(s, "entry of another thread", k);
		else if ((uint32_t)v != hash32(s->seq - s->n + k))
			report(s, "torn or misplaced entry", k);
	}
}

int main(void)
{
	const char *tmp = getenv("TEST_TMP");
	char path[PATH_MAX], err[RR_ERR_MAX];
	RIP_OPTS(rip_ring_opts, o, .slots = SLOTS);
	pthread_t w[WRITERS], ch;
	uint32_t last_seq[WRITERS] = { 0 };
	unsigned long reads = 0, entries = 0, churn_seen = 0, changing = 0;
	struct rr_file f;
	int64_t start;
	int ret;

	T_SKIP_IF(!tmp, "TEST_TMP is not set (run through tests/run.sh)");
	snprintf(path, sizeof(path), "%s/concurrent.ring", tmp);
	unlink(path);
	o.path = path;
	ret = rip_ring_open(&o);
	T_EQ(ret, 0);
	if (ret)
		return t_result();
	ret = rr_open(path, &f, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "rr_open: %s\n", err);
		return T_FAIL;
	}
	for (int i = 0; i < WRITERS; i++)
		T_EQ(pthread_create(&w[i], NULL, writer, (void *)(intptr_t)i), 0);
	T_EQ(pthread_create(&ch, NULL, churner, NULL), 0);
	while (atomic_load(&writers_ready) < WRITERS && !atomic_load(&writer_err))
		usleep(1000);
	T_EQ(atomic_load(&writer_err), 0);

	start = now_ns();
	while (bad < 10) {
		int64_t t = now_ns() - start;
		bool enough = reads > 100 && atomic_load(&churned) > 100 && churn_seen > 0 &&
			      last_seq[0] > 1000 && last_seq[1] > 1000;
		struct rr_slots ss;

		if (t > MAX_RUN_NS || (t >= RUN_NS && enough))
			break;

		ret = rr_read_slots(&f, &ss, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "rr_read_slots: %s\n", err);
			T_EQ(ret, 0);
			break;
		}
		reads++;
		changing += ss.changing;
		if (ss.corrupt) {
			fprintf(stderr, "corrupt slot %d: %s\n", ss.first_bad, ss.why);
			T_EQ(ss.corrupt, 0);
		}
		for (size_t i = 0; i < ss.n; i++) {
			const struct rr_slot *s = &ss.v[i];
			int wi = -1;

			for (int k = 0; k < WRITERS; k++)
				if (s->index == writer_slot[k])
					wi = k;
			entries += s->n;
			if (wi >= 0 && s->state == RIP_SLOT_RUNNING) {
				char want[16];

				snprintf(want, sizeof(want), "writer-%d", wi);
				T_STREQ(s->name, want);
				check_writer(s, &last_seq[wi]);
			} else if (s->name[0] == 'c') {
				churn_seen++;
				check_churn(s);
			} else if (s->state != RIP_SLOT_EXITED || s->kind != RIP_KIND_THREAD) {
				report(s, "a slot nobody should own", 0);
			}
		}
		rr_slots_free(&ss);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(w[i], NULL);
	pthread_join(ch, NULL);

	printf("%lu reads, %lu entries checked, %lu churn threads (%lu churn slots seen), "
	       "%lu slots changing while read, writers at seq %u and %u\n",
	       reads, entries, (unsigned long)atomic_load(&churned), churn_seen, changing,
	       last_seq[0], last_seq[1]);
	T_EQ(bad, 0);
	T_CHECK(reads > 100);
	T_CHECK(atomic_load(&churned) > 100);
	T_CHECK(churn_seen > 0);
	T_CHECK(last_seq[0] > 1000 && last_seq[1] > 1000);
	/* The pool never ran dry: slots were reused, not overflowed. */
	T_EQ(((const struct rip_file_hdr *)f.map)->overflow, 0);
	rr_close(&f);
	return t_result();
}
