/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/waits.h - the wait records of a ring file's slots (what each
 * thread blocks in, written by librip-preload.so's wrappers) named and
 * grouped by what they wait in and the call site that waits, for rip ps.
 *
 * Driven as: wt_group(slots, all, &groups) on the slots read (the thread
 * slots are enough: only threads wait here; rip ps keeps only those), then
 * the front-end symbolizes each group's return address and prints;
 * wt_groups_free.  No printing here.
 */
#ifndef RIP_ANALYSIS_WAITS_H
#define RIP_ANALYSIS_WAITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/ringfile.h"

/* "read", "mutex"...; NULL for a kind this reader does not know. */
const char *wt_kind_name(uint32_t kind);

/* How the arg of a kind reads: */
enum wt_arg {
	WT_ARG_NONE,	/* nothing worth showing */
	WT_ARG_FD,	/* a descriptor */
	WT_ARG_COUNT,	/* a number of descriptors (poll, select) */
	WT_ARG_ADDR,	/* an address (a lock, a condition, a futex...) */
	WT_ARG_NS,	/* nanoseconds to sleep (sleeps) */
	WT_ARG_PID,	/* a pid asked for, -1 any */
	WT_ARG_SIGSET,	/* the first word of a signal set */
	WT_ARG_SYSCALL, /* a system call's number */
};
enum wt_arg wt_arg_kind(uint32_t kind);

/* Does slot s show a wait: a running thread with a record of some kind? */
bool wt_waiting(const struct rr_slot *s);

/*
 * The timeout of slot s's wait, in ns from its since (a deadline the call
 * was given is recorded as the time that was left when the wait began);
 * false when it has none, or its since is unknown.
 */
bool wt_timeout(const struct rr_slot *s, uint64_t *ns);

struct wt_group {
	uint32_t kind;
	uint64_t ra;		/* the caller's return address */
	size_t *members;	/* indices into the slots */
	size_t n, cap;
	uint64_t since_min, since_max; /* ticks of the oldest and newest timed wait; 0: none */
	bool same_arg;		/* every member waits on arg */
	uint64_t arg;
	size_t timed;		/* members with a timeout (wt_timeout) */
	uint64_t tmo_min, tmo_max; /* their shortest and longest timeouts, ns */
};

struct wt_groups {
	struct wt_group *v;
	size_t n, cap;
	size_t waiting;		/* threads in a wait */
	size_t torn;		/* records left out: being written (or half-written at a crash) */
};

/*
 * Group the waiting threads of slots by (kind, return address), biggest
 * groups first, then by kind and address.  all: count the torn records of
 * exited slots too.  0 or -ENOMEM.
 */
int wt_group(const struct rr_slots *slots, bool all, struct wt_groups *out);
void wt_groups_free(struct wt_groups *g);

#endif /* RIP_ANALYSIS_WAITS_H */
