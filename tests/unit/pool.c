/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the slot pool of a 4-slot ring.  Never-used slots are handed
 * out first, in index order, to threads and coroutines alike; once they are
 * gone, released slots come back least-recently-released first, with gen
 * bumped on every reuse, and the released slot keeps its name and history
 * until then.  With the pool full, attaching a thread or creating a
 * coroutine fails with -ENOSPC and counts in hdr.overflow, and the thread
 * still runs and snaps (into a dummy outside the file) without touching any
 * slot.  Slot indices and gens are checked through the reader (rr_read_slots).
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <unistd.h>

#include <rip.h>

#include "helpers.h"
#include "read/ringfile.h"

struct th {
	pthread_t t;
	const char *name;
	sem_t attached, go;
	int ret;
	int32_t index;
	struct rip_slot *cur;
};

static struct rr_file f;

static void *th_main(void *arg)
{
	struct th *th = arg;

	pthread_setname_np(pthread_self(), th->name); /* the slot takes the comm */
	th->ret = rip_thread_attach();
	th->cur = __rip_self.cur;
	th->index = th->ret ? -1 : (int32_t)th->cur->index;
	for (int i = 0; i < 100; i++)
		rip_snap(); /* into the slot, or a dummy when the pool is full */
	sem_post(&th->attached);
	sem_wait(&th->go);
	return NULL;
}

static void th_start(struct th *th, const char *name)
{
	th->name = name;
	sem_init(&th->attached, 0, 0);
	sem_init(&th->go, 0, 0);
	T_EQ(pthread_create(&th->t, NULL, th_main, th), 0);
	sem_wait(&th->attached);
}

static void th_end(struct th *th)
{
	sem_post(&th->go);
	pthread_join(th->t, NULL);
}

static uint32_t coro_index(struct rip_coro *c)
{
	return ((struct rip_slot *)c)->index;
}

/* The slot at index as the reader sees it; gen 0 and state FREE if unused. */
static struct rr_slot read_slot(uint32_t index)
{
	struct rr_slot r = { .index = index };
	struct rr_slots ss;
	char err[RR_ERR_MAX];

	if (rr_read_slots(&f, &ss, err, sizeof(err))) {
		fprintf(stderr, "rr_read_slots: %s\n", err);
		t_failures++;
		return r;
	}
	T_EQ(ss.corrupt, 0);
	for (size_t i = 0; i < ss.n; i++)
		if (ss.v[i].index == index)
			r = ss.v[i];
	rr_slots_free(&ss);
	return r;
}

#define T_SLOT(idx, want_name, want_gen, want_state)                                               \
	do {                                                                                       \
		struct rr_slot _s = read_slot(idx);                                                \
		T_STREQ(_s.name, want_name);                                                       \
		T_EQ(_s.gen, want_gen);                                                            \
		T_EQ(_s.state, want_state);                                                        \
	} while (0)

int main(void)
{
	const char *tmp = getenv("TEST_TMP");
	char path[PATH_MAX], err[RR_ERR_MAX];
	RIP_OPTS(rip_ring_opts, o, .slots = 4);
	const struct rip_file_hdr *live;
	struct rip_coro *c0, *c2, *c3, *n1, *n2, *full = (struct rip_coro *)1;
	struct th t1 = { 0 }, t5 = { 0 }, t6 = { 0 };
	uint32_t seq_before[4];

	T_SKIP_IF(!tmp, "TEST_TMP is not set (run through tests/run.sh)");
	snprintf(path, sizeof(path), "%s/pool.ring", tmp);
	unlink(path);
	o.path = path;
	T_EQ(rip_ring_open(&o), 0);
	if (rr_open(path, &f, err, sizeof(err))) {
		fprintf(stderr, "rr_open: %s\n", err);
		return T_FAIL;
	}
	live = (const struct rip_file_hdr *)f.map;
	T_EQ(live->slot_count, 4);

	/* Fresh slots, in order, threads and coroutines mixed. */
	T_EQ(rip_coro_create("c0", &c0), 0);
	T_EQ(coro_index(c0), 0);
	th_start(&t1, "t1");
	T_EQ(t1.ret, 0);
	T_EQ(t1.index, 1);
	T_EQ(rip_coro_create("c2", &c2), 0);
	T_EQ(coro_index(c2), 2);
	T_EQ(rip_coro_create("c3", &c3), 0);
	T_EQ(coro_index(c3), 3);
	T_EQ(live->fresh, 4);
	T_EQ(live->overflow, 0);
	T_SLOT(0, "c0", 2, RIP_SLOT_WAITING);
	T_SLOT(1, "t1", 2, RIP_SLOT_RUNNING);
	T_SLOT(3, "c3", 2, RIP_SLOT_WAITING);

	/* Full: counted, and the thread runs on, writing nowhere in the file. */
	for (uint32_t i = 0; i < 4; i++)
		seq_before[i] = read_slot(i).seq;
	th_start(&t5, "t5");
	T_EQ(t5.ret, -ENOSPC);
	T_CHECK(t5.cur != NULL);
	T_CHECK((const uint8_t *)t5.cur < f.map || (const uint8_t *)t5.cur >= f.map + f.len);
	T_EQ(rip_coro_create("c4", &full), -ENOSPC);
	T_CHECK(full == NULL);
	T_EQ(live->overflow, 2);
	for (uint32_t i = 0; i < 4; i++)
		T_EQ(read_slot(i).seq, seq_before[i]);
	th_end(&t5);
	T_EQ(live->live_threads, 1);

	/* Release 2, then 1 (the thread exits), then 0: history stays until reuse. */
	T_EQ(rip_coro_destroy(c2), 0);
	th_end(&t1);
	T_EQ(rip_coro_destroy(c0), 0);
	T_SLOT(2, "c2", 2, RIP_SLOT_EXITED);
	T_SLOT(1, "t1", 2, RIP_SLOT_EXITED);
	T_EQ(read_slot(1).seq, 100);
	T_SLOT(0, "c0", 2, RIP_SLOT_EXITED);
	T_EQ(rip_coro_destroy(c0), -EINVAL); /* destroyed already */

	/* Reuse, least recently released first: 2, 1, 0; gen bumped. */
	T_EQ(rip_coro_create("n1", &n1), 0);
	T_EQ(coro_index(n1), 2);
	th_start(&t6, "t6");
	T_EQ(t6.ret, 0);
	T_EQ(t6.index, 1);
	T_EQ(rip_coro_create("n2", &n2), 0);
	T_EQ(coro_index(n2), 0);
	T_SLOT(2, "n1", 4, RIP_SLOT_WAITING);
	T_SLOT(1, "t6", 4, RIP_SLOT_RUNNING);
	T_EQ(read_slot(1).seq, 100); /* t6's snaps, the old ones are gone */
	T_SLOT(0, "n2", 4, RIP_SLOT_WAITING);
	T_EQ(read_slot(0).seq, 0);
	T_SLOT(3, "c3", 2, RIP_SLOT_WAITING);
	T_EQ(live->overflow, 2);

	/* Once more round the queue: 3 released before 0 comes back before 0. */
	T_EQ(rip_coro_destroy(c3), 0);
	T_EQ(rip_coro_destroy(n2), 0);
	T_EQ(rip_coro_create("r1", &c3), 0);
	T_EQ(coro_index(c3), 3);
	T_EQ(rip_coro_create("r2", &n2), 0);
	T_EQ(coro_index(n2), 0);
	T_SLOT(3, "r1", 4, RIP_SLOT_WAITING);
	T_SLOT(0, "r2", 6, RIP_SLOT_WAITING);
	T_EQ(rip_coro_create("x", &full), -ENOSPC);
	T_EQ(live->overflow, 3);
	T_EQ(live->fresh, 4);
	th_end(&t6);
	T_EQ(live->live_coros, 3);
	T_EQ(live->live_threads, 0);
	rr_close(&f);
	return t_result();
}
