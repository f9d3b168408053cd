/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/report.h - the analysis behind `rip report`: one pass over the
 * resource events of a trace (rip/resource.h) that adds up what was
 * allocated where and by whom, finds the peak of heap memory in use and
 * what made it up, and summarizes descriptors and shared memory.
 *
 *	struct rp *rp = rp_new();
 *	rp_run(rp, evs, err, len);		every event of the source
 *	rp->sites[i], rp->threads[i], rp->hist[k], rp->life[k], rp->fd, rp->shm
 *	rp->series[0 .. rp->nseries)		heap in use over time (rp_series_ns wide)
 *	rp_bt(rp, id, &n)			the frames of a backtrace
 *	rp_free(rp);
 *
 * Memory follows what is live (blocks, descriptors, segments) and the
 * number of distinct backtraces and threads, never the length of the trace.
 */
#ifndef RIP_ANALYSIS_REPORT_H
#define RIP_ANALYSIS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/live.h"
#include "read/evsource.h"

struct rip_sym;
struct stk_bts;
struct thr;

#define RP_HIST 65  /* size buckets: [0] size 0, [k] sizes in [2^(k-1), 2^k) */
#define RP_LIFE 9   /* lifetime buckets: < 1 us, < 10 us, ... < 10 s, >= 10 s */
#define RP_KINDS 64 /* kinds (enum rip_*_kind) counted one by one; the rest in [0] */
#define RP_SERIES 1000 /* time buckets at most: adjacent pairs merge when they run out */

/* Allocations that share a backtrace. */
struct rp_site {
	uint32_t bt;			 /* backtrace id, 0: none recorded */
	uint64_t count, bytes;		 /* allocations made here (a realloc counts as one) */
	uint64_t live_count, live_bytes; /* still live at the end */
	uint64_t peak_count, peak_bytes; /* live at the moment of the peak */
	uint64_t mod_gen; /* the number of peaks before its last change (peak bookkeeping) */
};

struct rp_thread {
	int32_t tid;
	uint64_t allocs, bytes;	     /* allocations made by the thread */
	uint64_t frees, freed_bytes; /* blocks it freed (that were seen allocated) */
};

struct rp_bucket {
	uint64_t count, bytes;
};

/*
 * Heap memory over one time bucket [first_ns + i * series_ns, + series_ns).
 * A bucket without memory events (events == 0) holds the bytes in use of the
 * one before it.
 */
struct rp_point {
	uint64_t events;		     /* memory events in the bucket */
	uint64_t min_bytes, max_bytes, last_bytes; /* bytes in use after each of them */
	uint64_t allocs, alloc_bytes, frees;	     /* allocations and frees in the bucket */
};

struct rp_fd {
	uint64_t opened, closed, open_at_end, closed_unseen, reopened, peak_open;
	/* of closed: O_CLOEXEC at their open, still open when the process exec'd (leaks.h) */
	uint64_t exec_closed;
	struct {
		uint64_t opened, closed, open_at_end;
	} kind[RP_KINDS];
};

struct rp_shm {
	uint64_t created, removed, live, created_bytes, live_bytes, memfd, removed_unseen;
	uint64_t opened; /* objects got that existed already (shm_open, shmget of them) */
	uint64_t attached, detached, mapped, attached_bytes, mapped_bytes, peak_mapped_bytes;
	uint64_t detached_unseen;
};

/*
 * What the kinds of tracing modules did at one stack (rip/module.h):
 * res:acquire (count, bytes; live at the end) or res:transfer (count,
 * bytes moved) of one kind, by one backtrace.
 */
struct rp_msite {
	uint32_t kind;			 /* the kind's type id (its name: role_kind_name) */
	uint32_t bt;			 /* backtrace id, 0: none recorded */
	uint64_t count, bytes;		 /* acquires or transfers made here, their sizes */
	uint64_t live_count, live_bytes; /* acquired here and still live at the end */
};

/* The totals of one module kind. */
struct rp_mkind {
	uint32_t kind; /* the kind's type id */
	uint64_t count, bytes, live_count, live_bytes, releases, releases_unseen;
};

struct rp {
	/* memory */
	uint64_t allocs, alloc_bytes;	 /* successful allocations (reallocs included) */
	uint64_t frees, freed_bytes;	 /* releases of blocks seen allocated */
	uint64_t reallocs;		 /* reallocs of a block (not of NULL: an allocation) */
	uint64_t failed;		 /* failed allocations (address 0) */
	uint64_t failed_kind[RP_KINDS];	 /* of them, by function (enum rip_mem_kind; [0] other) */
	uint64_t frees_unseen;		 /* frees of blocks never seen allocated */
	uint64_t replaced;		 /* allocated again while live: a free was lost */
	uint64_t live_count, live_bytes; /* at the end */
	/* address space reserved (mmap with PROT_NONE) at the end: not memory, not above */
	uint64_t reserved_bytes, reserved_ranges;
	uint64_t peak_bytes, peak_count; /* the peak of heap bytes in use */
	int64_t peak_ns;		 /* when (CLOCK_MONOTONIC_RAW ns) */
	uint64_t peak_event;		 /* the event (1-based) that reached it */
	struct rp_bucket hist[RP_HIST];	 /* allocation sizes */
	struct rp_bucket life[RP_LIFE];	 /* lifetimes of freed blocks */
	struct rp_bucket hist_live[RP_HIST]; /* sizes of the blocks never freed */
	struct rp_point series[RP_SERIES];   /* heap in use over time */
	size_t nseries;			     /* buckets used */
	uint64_t series_ns;		     /* width of a bucket */
	struct rp_site *sites;		 /* by backtrace, in order of first use */
	size_t nsites;
	struct rp_thread *threads; /* in order of first resource event */
	size_t nthreads;
	struct rp_fd fd;
	struct rp_shm shm;
	struct rp_msite *msites; /* module kinds, by kind and backtrace, in order of first use */
	size_t nmsites;
	struct rp_mkind *mkinds; /* module kinds seen, in order of first use */
	size_t nmkinds;
	const struct ev_types *types; /* the trace's (kind names); a copy after rp_run */
	LIVE_TRACE_OF; /* the trace: events read, the first and last one's time, rip:bt */
	bool through;	/* rp_set_through: memory only, of the stacks through its patterns */
	struct rp_priv *p;
};

/* Returns NULL when out of memory. */
struct rp *rp_new(void);
/*
 * Read every event of s (evs_progress_bar shows how far).  0, or -errno
 * with a message in err.
 */
int rp_run(struct rp *rp, struct evs *s, char *err, size_t errlen);
/* The frames of backtrace id (return addresses, innermost first); NULL if undefined. */
const uint64_t *rp_bt(const struct rp *rp, uint32_t id, uint32_t *n);
void rp_free(struct rp *rp);
/*
 * Before rp_run: count only what stacks through t's patterns made
 * (analysis/through.h; sym names their frames, and must be the caller's
 * alone during the pass): allocations, the frees of those blocks, the
 * peak, the series, the sites, the threads.  Descriptors and shared memory
 * are then not counted at all.  A block left out is still followed, so
 * that its free is not one of a block never seen.  t and sym must outlive
 * the pass.
 */
void rp_set_through(struct rp *rp, struct thr *t, struct rip_sym *sym);
/* The rip:bt definitions the pass read (for thr_scan). */
const struct stk_bts *rp_bts(const struct rp *rp);

/* Upper bound (ns) of lifetime bucket k, 0 for the last (unbounded) one. */
uint64_t rp_life_limit(unsigned k);


#endif /* RIP_ANALYSIS_REPORT_H */
