/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the snap ring wraps around.  A thread snaps K times (K = 5,
 * 31, 32, 33, 1000) through five rip_snap() call sites, one per noinline
 * function, in an order that never repeats with a short period; the reader
 * must return seq == K and the last min(K, 31) entries, oldest to newest,
 * each the address of the call site that took it.  The site addresses are
 * learnt first by one calibration snap each, and must lie in their function.
 */
#include <pthread.h>
#include <unistd.h>

#include <rip.h>

#include "helpers.h"
#include "read/ringfile.h"

#define SITES 5

static uintptr_t site_ip[SITES];

#define SITE(n)                                                                                    \
	__attribute__((noinline)) static void site_##n(void)                                       \
	{                                                                                          \
		rip_snap();                                                                        \
		__asm__ volatile("" ::: "memory");                                                 \
	}
SITE(0)
SITE(1)
SITE(2)
SITE(3)
SITE(4)
static void (*const sites[SITES])(void) = { site_0, site_1, site_2, site_3, site_4 };

/* Which site takes snap i: not periodic, so an off-by-one shows. */
static unsigned site_of(uint32_t i)
{
	uint32_t x = i * 2654435761u;

	return (x >> 16) % SITES;
}

static void *calibrate(void *arg)
{
	(void)arg;
	rip_thread_set_name("calibrate");
	for (int i = 0; i < SITES; i++) {
		struct rip_slot *s;

		sites[i]();
		s = __rip_self.cur;
		site_ip[i] = (uintptr_t)s->snap[(s->snap_seq - 1) & (RIP_SNAP_DEPTH - 1)];
	}
	return NULL;
}

static void *snapper(void *arg)
{
	uint32_t k = (uint32_t)(uintptr_t)arg;
	char name[32];

	snprintf(name, sizeof(name), "wrap-%u", k);
	rip_thread_set_name(name);
	for (uint32_t i = 0; i < k; i++)
		sites[site_of(i)]();
	return NULL;
}

static const struct rr_slot *find(const struct rr_slots *ss, const char *name)
{
	for (size_t i = 0; i < ss->n; i++)
		if (!strcmp(ss->v[i].name, name))
			return &ss->v[i];
	return NULL;
}

int main(void)
{
	static const uint32_t ks[] = { 5, 31, 32, 33, 1000 };
	const char *tmp = getenv("TEST_TMP");
	char path[PATH_MAX], err[RR_ERR_MAX];
	RIP_OPTS(rip_ring_opts, o, .slots = 16);
	struct rr_slots ss;
	struct rr_file f;
	pthread_t t;

	T_SKIP_IF(!tmp, "TEST_TMP is not set (run through tests/run.sh)");
	snprintf(path, sizeof(path), "%s/wrap.ring", tmp);
	unlink(path);
	o.path = path;
	T_EQ(rip_ring_open(&o), 0);

	T_EQ(pthread_create(&t, NULL, calibrate, NULL), 0);
	pthread_join(t, NULL);
	for (int i = 0; i < SITES; i++) {
		/* the snap is inside its function (functions are far smaller than 256 bytes) */
		T_CHECK(site_ip[i] > (uintptr_t)sites[i] && site_ip[i] < (uintptr_t)sites[i] + 256);
		for (int j = 0; j < i; j++)
			T_CHECK(site_ip[i] != site_ip[j]);
	}
	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		T_EQ(pthread_create(&t, NULL, snapper, (void *)(uintptr_t)ks[i]), 0);
		pthread_join(t, NULL);
	}

	if (rr_open(path, &f, err, sizeof(err))) {
		fprintf(stderr, "rr_open: %s\n", err);
		return T_FAIL;
	}
	if (rr_read_slots(&f, &ss, err, sizeof(err))) {
		fprintf(stderr, "rr_read_slots: %s\n", err);
		return T_FAIL;
	}
	T_EQ(ss.corrupt, 0);
	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		uint32_t k = ks[i], want_n = k < RIP_SNAP_DEPTH - 1 ? k : RIP_SNAP_DEPTH - 1;
		char name[32];
		const struct rr_slot *s;
		int wrong = 0;

		snprintf(name, sizeof(name), "wrap-%u", k);
		s = find(&ss, name);
		T_CHECK(s != NULL);
		if (!s)
			continue;
		T_EQ(s->state, RIP_SLOT_EXITED); /* the history outlives the thread */
		T_EQ(s->seq, k);
		T_EQ(s->n, want_n);
		for (uint32_t j = 0; j < s->n && j < want_n; j++) {
			uint32_t snap = k - want_n + j; /* oldest first */

			if (s->ip[j] != site_ip[site_of(snap)] && wrong++ < 3)
				fprintf(stderr, "K=%u: ip[%u] = %#llx, want site %u (%#llx)\n", k, j,
					(unsigned long long)s->ip[j], site_of(snap),
					(unsigned long long)site_ip[site_of(snap)]);
		}
		T_EQ(wrong, 0);
		printf("K=%u: seq %u, %u entries in order\n", k, s->seq, s->n);
	}
	rr_slots_free(&ss);
	rr_close(&f);
	return t_result();
}
