/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: fd:close_range and shm:resize in the leaks, report and
 * export passes, on a trace this test writes itself: a range closes the
 * descriptors held open in it and counts nothing for the numbers that
 * were not open; closefrom's range (last 2^32 - 1) closes the rest; an
 * ftruncate gives a shm_open object its size.
 */
#include <stdio.h>
#include <string.h>

#include "analysis/follow.h"
#include "analysis/leaks.h"
#include "analysis/report.h"
#include "helpers.h"
#include "restrace.h"

enum { BT_OPEN = 1, BT_SHM, BT_CLOSE };

static void write_trace(void)
{
	const uint64_t f[1] = { 0x401000 };

	rt_open();
	for (uint32_t bt = BT_OPEN; bt <= BT_CLOSE; bt++)
		rt_bt(bt, f, 1);
	for (uint64_t fd = 3; fd <= 11; fd += 2)
		rt_ev(ROLE_FD_OPEN, fd, BT_OPEN, RIP_FD_OPEN, 0, (uintptr_t)"/tmp/x");
	rt_ev(ROLE_FD_CLOSE_RANGE, 4, 8, BT_CLOSE, RIP_FD_CLOSE_RANGE); /* 5, 7 */
	rt_ev(ROLE_FD_CLOSE_RANGE, 10, 0xffffffff, BT_CLOSE, RIP_FD_CLOSEFROM); /* 11 */
	rt_ev(ROLE_SHM_CREATE, 12, 0, BT_SHM, RIP_SHM_OPEN, (uintptr_t)"/seg");
	rt_ev(ROLE_SHM_RESIZE, 12, 4096, BT_SHM, RIP_SHM_FTRUNCATE, (uintptr_t)"/seg");
	rt_ev(ROLE_SHM_RESIZE, 13, 999, BT_SHM, RIP_SHM_FTRUNCATE, (uintptr_t)"/other");
	rt_close();
}

static void check_leaks(void)
{
	struct evs *s = rt_source();
	struct lk *lk = lk_new(NULL);
	char err[512];

	if (!lk || lk_run(lk, s, err, sizeof(err))) {
		fprintf(stderr, "lk_run: %s\n", lk ? err : "out of memory");
		exit(1);
	}
	evs_close(s);
	T_EQ(lk->total_count[LK_FD], 2); /* 3 and 9 */
	T_EQ(lk->un.release[LK_FD], 0);
	T_EQ(lk->total_count[LK_SHM], 1);
	T_EQ(lk->total_bytes[LK_SHM], 4096);
	lk_free(lk);
}

static void check_report(void)
{
	struct evs *s = rt_source();
	struct rp *rp = rp_new();
	char err[512];

	if (!rp || rp_run(rp, s, err, sizeof(err))) {
		fprintf(stderr, "rp_run: %s\n", rp ? err : "out of memory");
		exit(1);
	}
	evs_close(s);
	T_EQ(rp->fd.opened, 5);
	T_EQ(rp->fd.closed, 3);
	T_EQ(rp->fd.closed_unseen, 0);
	T_EQ(rp->fd.open_at_end, 2);
	T_EQ(rp->shm.live_bytes, 4096);
	T_EQ(rp->shm.created_bytes, 4096);
	rp_free(rp);
}

static void check_export(void)
{
	struct evs *s = rt_source();
	struct evs_event e;
	struct xr *x;
	char err[512];
	int ret;

	if (xr_new(evs_types(s), false, &x, err, sizeof(err))) {
		fprintf(stderr, "xr_new: %s\n", err);
		exit(1);
	}
	while ((ret = evs_next(s, &e, err, sizeof(err))) > 0)
		T_CHECK(xr_event(x, &e) >= 0);
	T_EQ(ret, 0);
	T_EQ(x->nfds, 2);
	xr_free(x);
	evs_close(s);
}

int main(void)
{
	write_trace();
	check_leaks();
	check_report();
	check_export();
	return t_result();
}
