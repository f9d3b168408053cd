/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/cpu.h - the CPU profile of a trace: its rip:sample events (rip
 * run --sample; record/samples.h writes them) counted by stack and by thread.
 * rip export's folded stacks and pprof cpu profile, and rip top of a
 * trace, read it.
 *
 * A stack is the sample's frames as recorded: the interrupted instruction
 * pointer first, then return addresses, outermost last (symbolize the
 * first as it is, the others minus one).  Each distinct stack is kept
 * once.
 *
 *	cpu_new(evs_types(s), &p);	  finds the rip:sample type, if any
 *	while (evs_next(s, &e, ...) > 0)
 *		cpu_event(p, &e);	  1: a sample, counted; 0: another event
 *	cpu_stacks(p, &n); cpu_threads(p, &n);
 *	cpu_free(p);
 *
 * Never prints.
 */
#ifndef RIP_ANALYSIS_CPU_H
#define RIP_ANALYSIS_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/evsource.h"

struct cpu_stack {
	const uint64_t *pcs; /* n frames: the IP, then return addresses */
	uint32_t n;
	uint64_t count; /* samples with this stack */
};

struct cpu_thread {
	int32_t tid;
	uint64_t samples;
	uint64_t ip;	 /* its newest sample's IP */
	int64_t last_ns; /* when it was taken (CLOCK_MONOTONIC_RAW ns) */
};

struct cpu_prof;

/* A profile of the samples of a source with these types.  0 or -ENOMEM. */
int cpu_new(const struct ev_types *types, struct cpu_prof **out);
/* Does the source have a rip:sample type at all? */
bool cpu_typed(const struct cpu_prof *p);
/* Count e if it is a sample: 1; 0 if it is another event; -ENOMEM. */
int cpu_event(struct cpu_prof *p, const struct evs_event *e);

/* The profile of every sample of a trace directory.  0 or -errno with a message. */
int cpu_read(const char *trace, struct cpu_prof **out, char *err, size_t errlen);

/* Samples counted. */
uint64_t cpu_samples(const struct cpu_prof *p);
/*
 * Of a profile cpu_read made: the samples the recorder counted lost (taken
 * by the sampler but never read, timer periods merged into one signal: the
 * discarded events of the samples' stream, rec_samples_end); 0 otherwise.
 */
uint64_t cpu_lost(const struct cpu_prof *p);
/*
 * Of a profile cpu_read made of a packed trace: the damaged blocks skipped
 * (their samples lost) in *blocks, and what the first said (evs_damage);
 * NULL when none.
 */
const char *cpu_damage(const struct cpu_prof *p, uint32_t *blocks);
/*
 * The distinct stacks, in the order first seen (an array of p's, good until
 * the next call or cpu_free; NULL when out of memory).
 */
const struct cpu_stack *cpu_stacks(struct cpu_prof *p, size_t *n);
/* The threads that took samples, by tid (the same; NULL when out of memory). */
const struct cpu_thread *cpu_threads(struct cpu_prof *p, size_t *n);

void cpu_free(struct cpu_prof *p);

#endif /* RIP_ANALYSIS_CPU_H */
