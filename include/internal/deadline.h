/* SPDX-License-Identifier: Apache-2.0 */
/*
 * internal/deadline.h - waiting on a socket until a deadline.  A peer that
 * sends or takes a byte now and then, each within the socket's own timeout,
 * must not keep a client for ever: the relayd client (record/relayd.c) and
 * the HTTP client of rip push (tools/http.c) give each exchange one deadline
 * in all, on the monotonic clock in ms.  Not a public header.
 */
#ifndef RIP_INTERNAL_DEADLINE_H
#define RIP_INTERNAL_DEADLINE_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in ms: the clock of the deadlines. */
static inline int64_t rip_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until fd is ready for ev, or deadline (rip_now_ms) passes: 0, or -errno (-EAGAIN: out of time). */
static inline int rip_wait_until(int fd, short ev, int64_t deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = ev };
		int64_t left = deadline - rip_now_ms();
		int k;

		if (left <= 0)
			return -EAGAIN;
		k = poll(&pfd, 1, left > 1000000 ? 1000000 : (int)left);
		if (k > 0)
			return 0;
		if (k < 0 && errno != EINTR)
			return -errno;
	}
}

#endif /* RIP_INTERNAL_DEADLINE_H */
