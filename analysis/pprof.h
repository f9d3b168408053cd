/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/pprof.h - profiles in pprof's format (profile.proto, gzipped):
 * what `go tool pprof`, Grafana Pyroscope, Parca and the cloud profilers
 * read.  Two layers, each usable alone, over the protobuf writer of
 * protobuf.h:
 *
 * The profile builder (pp_prof): the string table, functions, mappings and
 * locations kept once each, and samples encoded as they are added.
 *
 *	pp_new(&p);
 *	pp_sample_type(p, "alloc_space", "bytes");
 *	loc = pp_location(p, key, addr, mapping, lines, n);
 *	pp_sample(p, locs, nlocs, values, labels, nlabels);
 *	pp_encode(p, &raw);	pb_gzip(raw.p, raw.len, &gz);
 *
 * The pass (pp_export): a trace or a ring file made a profile, chosen by
 * what the source holds (or by the caller):
 *
 *   heap     allocations by backtrace: alloc_objects/count,
 *            alloc_space/bytes, inuse_objects/count, inuse_space/bytes,
 *            inuse being what is still live at the end of the trace (the
 *            memory `rip leaks` reports: heap blocks and anonymous
 *            mappings, followed as leaks.c follows them); with leaks, only
 *            inuse_objects and inuse_space, of the stacks that leaked
 *   threads  of a ring file: one sample per thread or coroutine (value 1),
 *            its stack the slot's recent path, newest first, as `rip ps
 *            --threads` shows it, labelled with the thread's name, tid,
 *            kind and state
 *   cpu      the CPU samples of a trace (rip run --sample; analysis/cpu.h):
 *            samples/count and cpu/nanoseconds (a sample is 1/rate s of
 *            CPU) by stack, the interrupted IP as the leaf
 *   events   of any other source: events counted by stack (the backtrace of
 *            resource events) and by type; an event without a backtrace is
 *            one frame named after its type
 *
 * Locations are symbolized here (read/sym.c), inline frames as extra
 * lines, and mapped to the source's module map with build-ids.
 */
#ifndef RIP_ANALYSIS_PPROF_H
#define RIP_ANALYSIS_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/protobuf.h"
#include "read/evsource.h"

struct thr;

/* ---- the profile builder -------------------------------------------------------------- */

struct pp_prof;

/* One line of a location: a function, its file and line.  NULL names: "". */
struct pp_line {
	const char *func, *file;
	int64_t line;
};

struct pp_label {
	const char *key;
	const char *str; /* NULL: a number */
	int64_t num;
};

int pp_new(struct pp_prof **out);
void pp_free(struct pp_prof *p);
/* Add a sample type (in the order of the values of every sample).  0 or -ENOMEM. */
int pp_sample_type(struct pp_prof *p, const char *type, const char *unit);
/* The sample type pprof shows first. */
int pp_default_type(struct pp_prof *p, const char *type);
int pp_period(struct pp_prof *p, const char *type, const char *unit, int64_t period);
void pp_time(struct pp_prof *p, int64_t time_ns, int64_t duration_ns);
int pp_comment(struct pp_prof *p, const char *text);
/* Index of s in the string table (added when new); 0 for NULL or "", -ENOMEM. */
int64_t pp_string(struct pp_prof *p, const char *s);
/*
 * A mapping: runtime range [lo, hi), file offset of lo, path, build-id as hex
 * (NULL: none), and what its locations carry.  Its id (> 0), or -ENOMEM.
 */
int64_t pp_mapping(struct pp_prof *p, uint64_t lo, uint64_t hi, uint64_t offset,
		   const char *file, const char *build_id, bool lines);
/*
 * The location of key (an address, or any key for a made-up frame): its id
 * when one was made for that key already (*fresh false, the rest not
 * looked at), else a new one at addr in mapping (0: none) with lines[n]
 * (innermost first: the last line is the function the others were inlined
 * into).  Its id (> 0), or -ENOMEM.
 */
int64_t pp_location(struct pp_prof *p, uint64_t key, uint64_t addr, uint64_t mapping,
		    const struct pp_line *lines, size_t n, bool *fresh);
/* The id of key's location, 0 when none was made. */
uint64_t pp_location_find(const struct pp_prof *p, uint64_t key);
/* A sample: locations leaf first, one value per sample type.  0 or -ENOMEM. */
int pp_sample(struct pp_prof *p, const uint64_t *locs, size_t nlocs, const int64_t *values,
	      const struct pp_label *labels, size_t nlabels);
/* Samples added so far. */
uint64_t pp_nsamples(const struct pp_prof *p);
/* The Profile message (not compressed) appended to out.  0 or -ENOMEM. */
int pp_encode(struct pp_prof *p, struct pb_buf *out);

/* ---- the pass -------------------------------------------------------------------------- */

enum pp_kind { PP_AUTO, PP_HEAP, PP_THREADS, PP_EVENTS, PP_CPU };

/* --profile's word (heap, threads, events or cpu) into *kind: 0, or -EINVAL for another. */
int pp_kind_parse(const char *word, enum pp_kind *kind);

struct pp_opts {
	enum pp_kind kind;	/* PP_AUTO: heap if there are memory events, else cpu if
				   there are CPU samples, threads for a ring file, events
				   otherwise */
	bool leaks;		/* heap: only what was never freed; -EINVAL if the
				   profile is of another kind */
	bool all;		/* threads: exited threads and destroyed coroutines too */
	const char *sysroot;	/* find the traced host's binaries under it */
	const char *debug_dir;	/* separate debug files */
	struct thr *through;	/* heap: only the stacks through its patterns
				   (analysis/through.h); after pp_export, its
				   patterns on no stack of the trace are marked */
};

/* What the front-end tells the user. */
struct pp_result {
	enum pp_kind kind;	/* the profile made */
	uint64_t samples;
	uint64_t locations;
	int64_t start_ns, end_ns; /* CLOCK_REALTIME of the first and last event (threads: now) */
	struct evs_totals tot;	/* of the source (incomplete traces: warn) */
	bool no_symbols;	/* the symbolizer could not start: frames are addresses */
	char sym_err[256];
};

/*
 * Read s (opened by evs_open, nothing read yet) and append its profile,
 * gzipped, to out.  0, or -errno with a message in err (a corrupt source, a
 * ring file that cannot be read, out of memory; -EINVAL: a filter for a
 * profile that is not a heap profile).
 */
int pp_export(struct evs *s, const struct pp_opts *o, struct pb_buf *out, struct pp_result *res,
	      char *err, size_t errlen);

const char *pp_kind_name(enum pp_kind k);

#endif /* RIP_ANALYSIS_PPROF_H */
