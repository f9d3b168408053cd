/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/leaks.h - the analysis behind `rip leaks`: one pass over the
 * resource events of a trace (rip/resource.h) that keeps what is live at
 * each moment, and at the end groups what is still live by backtrace.
 *
 *	struct lk *lk = lk_new(&opts);
 *	lk_run(lk, evs, err, len);		every event of the source
 *	for (i = 0; i < lk->ngroups; i++)	biggest first
 *		lk_bt(lk, lk->groups[i].bt, &n)	its frames (return addresses)
 *	lk_free(lk);
 *
 * With a thread or a time range in the options, everything is still
 * tracked (so that releases match), but only what that thread made, in
 * that range, is grouped and counted.
 *
 * Also the names of the resource kinds (enum rip_mem_kind...), which rip
 * dump prints too.
 */
#ifndef RIP_ANALYSIS_LEAKS_H
#define RIP_ANALYSIS_LEAKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/live.h"
#include "read/evsource.h"

struct rip_sym;
struct thr;

/* Kinds a group's bit set holds, and report.h's RP_KINDS counts one by one (leaks.c checks the lists). */
#define LK_KINDS 64

/* What is left live: the resources of live.h. */
enum lk_res {
	LK_MEM = LIVE_MEM,	     /* heap blocks and anonymous mappings, by address */
	LK_FD = LIVE_FD,	     /* file descriptors, by number */
	LK_SHM = LIVE_SHM,	     /* shared memory segments (shm_open by name, shmget by id) */
	LK_SHM_MAP = LIVE_SHM_MAP, /* attachments of shared memory (shmat, MAP_SHARED) */
	LK_RES = LIVE_RES,	     /* the kinds of tracing modules (res:*), each by its name */
	LK_NRES = LIVE_NRES,
};

#define LK_F_MEM (1u << LK_MEM)
#define LK_F_FD (1u << LK_FD)
#define LK_F_SHM ((1u << LK_SHM) | (1u << LK_SHM_MAP))
#define LK_F_RES (1u << LK_RES)

/* References still held on the leaked objects of a group (refcounted kinds), by stack. */
struct lk_ref {
	uint32_t bt;	/* where the reference was taken (rip_ref) */
	uint64_t count; /* references held that were taken there */
};

enum lk_sort { LK_SORT_BYTES, LK_SORT_COUNT };

struct lk_opts {
	unsigned resources; /* LK_F_*; 0: all */
	const char *kind;   /* with LK_F_RES: only this module kind (NULL: every one) */
	uint64_t min_size;  /* ignore blocks (and segments, mappings) smaller than this */
	enum lk_sort sort;
	int32_t tid;	    /* only what this thread made; 0: any thread */
	/*
	 * Only what was made in [from_ns, to_ns), ns from the trace's first
	 * event (to_ns INT64_MAX: no end), and is still live at the end.
	 */
	bool time_range;
	int64_t from_ns, to_ns;
};

/* Resources still live that share a resource and a backtrace. */
struct lk_group {
	enum lk_res res;
	uint32_t bt;	     /* backtrace id, 0: none recorded */
	uint64_t count;	     /* blocks, descriptors, segments, mappings */
	uint64_t bytes;	     /* their sizes (0 for descriptors) */
	int64_t first_ns;    /* when the oldest of them was made (CLOCK_MONOTONIC_RAW) */
	int64_t last_ns;     /* when the newest was */
	uint64_t kinds;	     /* bit k: made by kind k (enum rip_*_kind, < LK_KINDS); LK_RES: 0 */
	char *sample;	     /* a path or name of one of them (fds, shm), or NULL */
	/* LK_RES */
	uint32_t kind;	     /* the module kind: its type id (lk_kind) */
	struct lk_ref *refs; /* refcounted kinds: the references still held, most first */
	size_t nrefs;
};

/* Releases that matched nothing live, per resource: not errors, counted. */
struct lk_unmatched {
	uint64_t release[LK_NRES]; /* freed / closed / detached / removed, never seen made */
	uint64_t replaced[LK_NRES]; /* made again while live: the release was not seen */
};

struct lk {
	struct lk_opts o;
	struct lk_group *groups; /* sorted: biggest first */
	size_t ngroups;
	uint64_t total_count[LK_NRES], total_bytes[LK_NRES];
	struct lk_unmatched un;
	LIVE_TRACE_OF;		 /* events read, the first and last one's time, rip:bt */
	uint64_t failed_allocs;	 /* mem:alloc of address 0 (a failed allocation) */
	uint64_t bad_events;	 /* resource events with impossible fields, skipped */
	uint64_t bt_unknown;	 /* groups whose backtrace id is not defined in the trace */
	/* address space reserved (mmap with PROT_NONE) at the end: not memory, in no group */
	uint64_t reserved_bytes, reserved_ranges;
	struct live live;	 /* the pass's own: what is live, the backtraces */
	const struct ev_types *types; /* the trace's (the module kinds): own_types after lk_run */
	const struct evs *src;	      /* the source, while lk_run reads it */
	struct ev_types *own_types;
	/* refcounted module objects: key -> a, the index of their history in hist */
	struct stk_map hidx;
	struct lk_hist *hist;
	size_t nhist, caphist;
	uint64_t kind_count[EV_MAX_TYPES], kind_bytes[EV_MAX_TYPES]; /* LK_RES totals by kind */
	uint64_t kind_transfers[EV_MAX_TYPES]; /* res:transfer events by kind (counters) */
	/*
	 * By descriptor number, a bit each: its last open had O_CLOEXEC.  When
	 * the process went on to execve (its header says so), those still open
	 * were closed by it, not left: taken out at the end (exec_closed).
	 */
	uint8_t *cloexec;
	size_t cloexec_len;
	uint64_t exec_closed;
	bool tid_made; /* o.tid made a resource (an allocation, an open...) in the trace */
};

/*
 * The references held on one live refcounted object: the acquire's own
 * (acq), and the stacks of the rip_ref not yet dropped, oldest first.  An
 * unref drops one as it comes (lk_unref says which), so this holds what
 * the count is, not the object's history.
 */
struct lk_hist {
	uint32_t *bt; /* where each reference held was taken */
	uint32_t n, cap;
	bool acq;     /* the acquire's own reference is held */
};

/* Returns NULL when out of memory. */
struct lk *lk_new(const struct lk_opts *opts);
/*
 * Read every event of s and build the groups.  0, or -errno with a message
 * in err (a corrupt source: what evs_next said; an event type of ours with
 * fields that are not the ones of rip/resource.h).
 */
int lk_run(struct lk *lk, struct evs *s, char *err, size_t errlen);
/*
 * The frames of backtrace id (return addresses, innermost first) and their
 * number in *n; NULL when id is 0 or was not defined in the trace.
 */
const uint64_t *lk_bt(const struct lk *lk, uint32_t id, uint32_t *n);
/*
 * After lk_run: keep only the groups whose backtrace passes through t's
 * patterns (analysis/through.h, symbols from sym), the totals and
 * bt_unknown theirs.  0 or -ENOMEM.
 */
int lk_through(struct lk *lk, struct thr *t, struct rip_sym *sym);
void lk_free(struct lk *lk);

const char *lk_res_name(enum lk_res r);
/*
 * The name of group g's resource: lk_res_name's, or the module kind's
 * ("gobject"; "?" if the trace does not name it).
 */
const char *lk_group_name(const struct lk *lk, const struct lk_group *g);
/* The module kind of type id kind, as the trace declares it; NULL if it is none. */
const struct ev_type *lk_kind(const struct lk *lk, uint32_t kind);
/* "malloc", "open", "shmget"...; NULL for an unknown kind.  cat: RIP_CAT_*. */
const char *lk_kind_name(uint32_t cat, uint64_t kind);

#endif /* RIP_ANALYSIS_LEAKS_H */
