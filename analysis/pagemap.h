/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/pagemap.h - the analysis behind `rip pagemap`: the traced
 * program's private writable memory as the preload library saw it in a
 * pagemap snapshot (at exit, or on request), mapping by mapping: pages
 * present, swapped, present and all zero, and how much of it the
 * allocations live at that moment cover (sp-rtrace's pagemap view).
 *
 *	struct pm *pm = pm_new(&opts);
 *	pm_run(pm, evs, err, len);		every event of the source
 *	if (pm->have_best)			the snapshot to report
 *		pm->best.maps[0..n)		by address, with their counts
 *	pm_free(pm);
 *
 * One pass over the trace: the mem:alloc / mem:free / mem:realloc events
 * keep a table of live blocks; the events of a snapshot (mem:mapping,
 * mem:pagemap, then mem:pagemap_end, see rip/resource.h) are gathered, and
 * when its end arrives, complete, it is measured against the live table of
 * that moment and only its per-mapping counts are kept.  The last complete
 * snapshot is the one reported (or the one opts.snapshot names).  Memory
 * grows with the live blocks and with one snapshot's pages (2 bits each),
 * never with the length of the trace; everything read is checked, and a
 * snapshot that contradicts itself makes the trace corrupt, not a crash.
 */
#ifndef RIP_ANALYSIS_PAGEMAP_H
#define RIP_ANALYSIS_PAGEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/evsource.h"

struct pm_opts {
	uint64_t snapshot; /* the seq of the snapshot to report; 0: the last complete one */
};

/* The pages of a mapping (or of several, added up) and the live blocks on them. */
struct pm_count {
	uint64_t size;	      /* bytes */
	uint64_t pages;	      /* of page_size */
	uint64_t present;     /* in memory */
	uint64_t swapped;     /* in swap */
	uint64_t zero;	      /* present and all zero (with RIP_PM_ZERO_TESTED) */
	uint64_t live_pages;  /* pages live blocks touch */
	uint64_t live_bytes;  /* bytes of live blocks in the mapping */
	uint64_t live_blocks; /* live blocks on it (counted in the first mapping they touch) */
	uint64_t unused;      /* present pages no live block is on */
};

struct pm_chunk;
struct pm_span;

/* One private writable mapping of a snapshot. */
struct pm_map {
	uint64_t start, end;
	uint32_t prot, flags, page_size; /* PROT_*, RIP_PM_* */
	char *path;			 /* as /proc/PID/maps shows it: "" anonymous */
	/* while the snapshot is gathered and measured (freed after) */
	struct pm_chunk *chunks;
	size_t nchunks, chunkcap;
	struct pm_span *spans;
	size_t nspans, spancap;
	struct pm_count c;
};

struct pm_snap {
	uint32_t seq, reason, expect; /* reason: RIP_PM_EXIT or RIP_PM_SIGNAL */
	int32_t error;
	bool started;
	int64_t ns;	     /* when it ended (CLOCK_MONOTONIC_RAW) */
	struct pm_map *maps; /* by address */
	size_t n, cap;
	uint64_t live_blocks, live_bytes; /* all live blocks when it was measured */
};

struct pm {
	struct pm_opts o;
	struct pm_snap best; /* measured: the one to report */
	bool have_best;
	uint64_t complete;   /* snapshots complete */
	uint64_t incomplete; /* cut short: the process died in it, or events were lost */
	uint64_t failed;     /* failed in the traced process */
	int32_t last_error;  /* -errno of the last failed one */
	uint64_t mem_events; /* mem:alloc, mem:free, mem:realloc */
	bool has_types;	     /* the trace has the snapshot event types at all */
	int64_t first_ns;    /* the trace's first event */
	bool any_event;
	struct pm_priv *p;
};

/* Returns NULL when out of memory. */
struct pm *pm_new(const struct pm_opts *opts);
/*
 * Read every event of s, follow the live blocks and measure the
 * snapshots.  0, or -errno with a message in err (a corrupt source: what
 * evs_next said; a snapshot that contradicts itself; an event type of ours
 * without the fields of rip/resource.h; out of memory).
 */
int pm_run(struct pm *pm, struct evs *s, char *err, size_t errlen);
void pm_free(struct pm *pm);

#endif /* RIP_ANALYSIS_PAGEMAP_H */
