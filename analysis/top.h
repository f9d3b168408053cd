/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/top.h - `rip top`'s pass: where the threads of a process run and
 * wait, from its ring file (CPU samples in the snap rings, wait records in
 * the slots) and, while it lives, /proc/PID/task/TID/stat.
 *
 * Driven by refreshes: top_new, then top_refresh as often as the view is
 * redrawn; each refresh reads the file and /proc again and computes, for
 * the interval since the previous one, each thread's CPU share (from /proc)
 * and the samples it took, and groups the threads:
 *  - TOP_WAIT: in a wrapped blocking call (its wait record): by what it
 *    waits in and the function that called it;
 *  - TOP_RUN: running, or used CPU in the interval: by the function of its
 *    newest sample;
 *  - TOP_SLEEP: neither (blocked somewhere the wrappers do not see);
 *  - TOP_NOSLOT: in /proc but with no slot in the file;
 *  - TOP_OWN: the preload library's own watcher thread (the header's
 *    watch_tid), which takes no slot.
 * A group's CPU is the CPU its functions used: each thread's CPU of the
 * interval is split between the functions of the samples it took in it
 * (the newest sample's function when it took none), whatever group the
 * thread itself is in now.  A snap ring keeps only the last few samples
 * (8 of 4 entries): the count of a busy thread is estimated from how far
 * its ring moved.  The first refresh has no interval: CPU is 0 and
 * every sample in the rings counts.  A file whose process is gone has no
 * /proc: CPU is then each group's share of the samples, and the samples
 * that threads which exited left in their slots count too.  Of a recorded
 * trace (top_use_samples), every sample it holds counts, by the function
 * it was taken in.  While the process lives, the threads (with a slot)
 * that block the sampling signal, and so are never sampled, are counted
 * (/proc/PID/task/TID/status, read for the threads that ran without a
 * sample: top.c).
 *
 * Never prints; symbols through read/sym.h.
 */
#ifndef RIP_ANALYSIS_TOP_H
#define RIP_ANALYSIS_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rip/abi.h>

#include "read/ringfile.h"

enum top_kind {
	TOP_RUN = 1,
	TOP_WAIT,
	TOP_SLEEP,
	TOP_NOSLOT,
	TOP_OWN,
};

enum top_sort {
	TOP_SORT_CPU,	/* CPU share, then threads */
	TOP_SORT_COUNT, /* threads, then CPU */
	TOP_SORT_WAIT,	/* longest wait, then threads */
};

struct top_opts {
	const char *sysroot, *debug_dir; /* as read/sym.h takes them */
	bool nosym;			 /* no symbols: functions named by address (fuzzing) */
};

struct top_thread {
	int32_t tid;
	uint32_t slot;		/* slot index + 1; 0: none (seen in /proc only) */
	char name[RIP_NAME_MAX];
	char state;		/* /proc state letter (R, S, D...); '?' when not live */
	double cpu;		/* share of one CPU over the interval */
	uint64_t cpu_ns;	/* user + system CPU time so far (live) */
	uint32_t samples;	/* samples taken in the interval (estimated: top.c) */
	uint64_t ip;		/* the newest sample's instruction pointer; 0: none */
	uint32_t wait_kind;	/* enum rip_wait_kind; 0: not in a wrapped call */
	uint64_t wait_ra;	/* the wrapped call's return address */
	int64_t wait_ns;	/* how long it has waited; -1: unknown */
	bool sig_blocked;	/* live: it blocks the sampling signal (never sampled) */
	size_t group;		/* index in the view's groups (kept right by top_sort) */
	uint64_t group_key;	/* the group's key */
};

struct top_group {
	enum top_kind kind;
	uint32_t wait_kind;	/* TOP_WAIT: what it waits in */
	const char *func;	/* the function (of the sample, or of the wait's caller) */
	const char *file;	/* NULL when unknown */
	int line;
	uint64_t addr;		/* an address in it, as sampled or as the call returns to */
	uint32_t threads;
	double cpu;		/* share of one CPU (live), or of the samples (post-mortem) */
	double samples;		/* samples in the interval in its function (estimated) */
	int64_t wait_ns;	/* the longest wait in it; -1: none known */
	uint32_t sig_blocked;	/* TOP_RUN: threads whose CPU came here unsampled because they
				   block the sampling signal */
	uint64_t key;
};

struct top_view {
	pid_t pid;
	bool alive;
	bool trace;		/* the samples are a recorded trace's (top_use_samples) */
	bool first;		/* the first refresh: no interval yet */
	int64_t interval_ns;	/* since the previous refresh */
	struct rip_file_hdr hdr; /* the header as it was read (sampling status) */
	struct top_group *groups;
	size_t ngroups;
	struct top_thread *threads;
	size_t nthreads;
	double cpu;		/* every thread's CPU share summed */
	double samples;		/* samples in the interval (estimated) */
	uint64_t samples_lost;	/* a trace's: what its recorder counted lost (cpu_lost); live:
				   the periods merged into one signal (hdr.sample_overrun) */
	size_t corrupt, changing; /* slots skipped, as rr_read_slots counts them */
	size_t sig_blocked;	/* live threads that block the sampling signal */
};

struct top;

/* A pass over the file f (opened by the caller, who closes it after top_free). */
int top_new(struct rr_file *f, const struct top_opts *o, struct top **out, char *err,
	    size_t errlen);
/*
 * A recorded trace's view (rip run --sample): the samples are cpu's (every
 * rip:sample event of the trace, analysis/cpu.h, owned by the caller and
 * kept until top_free), the threads and waits those of f, the copy of the
 * ring file the trace keeps.  0 or -ENOMEM.
 */
struct cpu_prof;
int top_use_samples(struct top *t, struct cpu_prof *cpu, char *err, size_t errlen);
/* Read the file and /proc again.  0 or -errno with a message. */
int top_refresh(struct top *t, char *err, size_t errlen);
/* Sort the groups (each thread's group index follows). */
void top_sort(struct top *t, enum top_sort by);
const struct top_view *top_view(const struct top *t);
void top_free(struct top *t);

/* "epoll_wait", "mutex"... for enum rip_wait_kind; "unknown" past the end. */
const char *top_wait_name(uint32_t kind);

/* Its modules that could not be resolved, as rip_sym_problems reports them. */
int top_sym_problems(struct top *t,
		     void (*cb)(const char *path, const char *why, unsigned hits, void *arg),
		     void *arg);

#endif /* RIP_ANALYSIS_TOP_H */
