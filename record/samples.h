/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/samples.h - the CPU samples of `rip run --sample`, taken out of a
 * live ring file by its consumer and written into the trace.
 *
 * The sampler (preload/sample.c) stores each sample, the interrupted IP and
 * a few return addresses, as tagged entries of the sample ring of the slot
 * the thread runs (rip/abi.h, struct rip_sample_ring; the snap ring in
 * older files).  A ring holds the last few samples only, and a slot
 * released at thread exit is taken again by the next thread: left there,
 * the samples of a program that exits are gone.  So the consumer reads, a
 * few times per ring's worth of samples (smp_poll: a pass over the slots
 * whose sample rings moved), every new whole sample, and makes it a rip:sample event (read/trace.h) in a packet of the
 * sampled thread (its tid, the coroutine whose slot it was), timed when
 * the pass found it: a sample carries no time of its own.  Each packet is
 * handed over as soon as it is made, for the consumer to write into the
 * trace at once, as one stream of its own (record/consume.c): the samples
 * go into the chunk being written when they were taken, are bounded by
 * --max-size with everything else, and a recorder killed keeps those
 * written.  Nothing waits on disk; in memory, one packet.
 *
 * What the consumer did not see (overwritten in the ring, or in a slot
 * taken again, between two passes) is counted: the file's samples counter
 * minus the samples taken, plus the timer periods the kernel merged into
 * another's signal (sample_overrun: never sampled) (smp_lost: right after the last pass only, for
 * it counts the samples stored since the pass before too), which the
 * consumer puts in the stream's last packet's events_discarded, so that
 * every reader reports it.
 *
 *	smp_new(f, &s, err, len);		      f: the ring file consumed (not owned)
 *	while (it runs) smp_poll(s, false, cb, ...);  cheap when no pass is due
 *	smp_poll(s, true, cb, ...);		      the last pass
 *	smp_free(s);
 */
#ifndef RIP_RECORD_SAMPLES_H
#define RIP_RECORD_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rip/abi.h>

#include "read/evread.h"
#include "read/ringfile.h"
#include "read/trace.h"

struct smp;

/* A collector of f's samples.  0, or -errno with a message. */
int smp_new(struct rr_file *f, struct smp **out, char *err, size_t errlen);

/*
 * A packet made: the header (tid, coro, timestamps, events; the consumer
 * sets its stream, sequence number and events_discarded) and the bytes
 * after it (body lies in a buffer that holds the header before it).  0, or
 * -errno with a message in err (the pass stops and returns it).
 */
typedef int (*smp_packet_cb)(const struct rip_packet *hdr, const uint8_t *body, size_t blen,
			     void *arg, char *err, size_t errlen);

/*
 * One pass over the slots whose sample rings moved, when one is due (always
 * with final): new samples become packets, handed to cb in the order they
 * are made, all timed at the pass (after every packet of the passes
 * before).  The samples taken in the pass, 0 when none was due, or -errno
 * (the file shrank, out of memory, or cb's error).
 */
int smp_poll(struct smp *s, bool final, smp_packet_cb cb, void *arg, char *err, size_t errlen);

/* Samples taken so far. */
uint64_t smp_taken(const struct smp *s);
/* What the file says it stored beyond them (read now): lost before we saw them. */
uint64_t smp_lost(struct smp *s);
/* Of smp_lost, the timer periods the kernel merged into another's signal (sample_overrun). */
uint64_t smp_merged(struct smp *s);

/* A thread that took samples: its name as its slot had it, for the trace's index. */
void smp_names(const struct smp *s, const struct trace_name **v, size_t *n);

void smp_free(struct smp *s);

#endif /* RIP_RECORD_SAMPLES_H */
