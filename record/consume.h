/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/consume.h - the streaming loop that `rip run` and `rip record` share:
 * attach to a live ring file as its consumer, copy every closed packet of
 * every event ring into a CTF trace directory, and at the end take the
 * open packets too and write the metadata and the index.
 *
 *	rec_init(&r);
 *	rec_attach(&r, ring_path, err, len);	  consumer of every ring
 *	rec_open_trace(&r, dir, err, len);	  DIR must not exist
 *	while (the process runs)
 *		if (rec_poll(&r, err, len) == 0)	  packets taken, or -errno
 *			sleep a little;
 *	rec_finish(&r, err, len);		  drain, metadata, index
 *	rec_close(&r);				  detach, free
 *
 * CPU samples (rip run --sample) are taken out of the snap rings as they
 * come (record/samples.h) and written, at the end, as a stream of their own
 * after the rings'.
 *
 * The packets go to sinks (record/sink.h), fed in the order they were
 * added: the local trace (rec_open_trace) and lttng-relayd too, or only
 * (rec_relayd, after rec_attach: the metadata's head goes at once).  With
 * relayd, rec_tick(&r, ...) once per live period sends what the open
 * packets hold so far (as packets of their own, in both copies, so that
 * they stay the same) and beacons for the idle streams, and rec_finish
 * ends with the index in the metadata and closes relayd's streams.  A
 * relayd lost in the middle is connected to again (a new session, a
 * bounded number of times: rec_relayd_gap); one that stays lost leaves the
 * local trace whole: rec_relayd_error says why.
 */
#ifndef RIP_RECORD_CONSUME_H
#define RIP_RECORD_CONSUME_H

#include <stdbool.h>
#include <stdint.h>

#include "read/evread.h"
#include "read/ringfile.h"
#include "read/trace.h"
#include "record/samples.h"
#include "record/sink.h"
#include "record/tracew.h"

struct rec_stats {
	uint64_t packets;	   /* packets written to the trace */
	uint64_t events;	   /* events in them */
	uint64_t bytes;		   /* bytes of packets written */
	uint64_t lost_packets;	   /* overwritten before they could be read */
	uint64_t corrupt;	   /* packets skipped because they did not decode */
	uint64_t discarded_before; /* events dropped or overwritten before we attached */
	uint64_t discarded;	   /* events dropped or overwritten while we recorded */
	uint64_t noring_before;	   /* of discarded_before: events that found no ring (ev_lost) */
	uint64_t noring;	   /* events that found no ring, in all (ev_lost at the end) */
	uint64_t samples;	   /* CPU samples written (rip:sample events, record/samples.h) */
	uint64_t samples_lost;	   /* stored by the sampler but never seen by us */
};

/* Per ring: the open packet sent in pieces so far (rec_tick), and what went out last. */
struct rec_piece {
	uint64_t seq1;	       /* the ring's packet sent in part, + 1; 0: none (calloc'd) */
	size_t off;	       /* its bytes sent, header included */
	uint32_t events;       /* its events sent */
	uint64_t last_ts;      /* the time of the last of them */
	uint64_t extra;	       /* pieces beyond one per ring packet: added to sequence numbers */
	struct rip_packet last; /* the header of the last packet written */
	bool any;	       /* a packet was written */
};

struct rec {
	struct rr_file f;
	struct ev_types *types;
	uint32_t types_seen;  /* types_count when types was read */
	bool *bad;	      /* per ring: gave up on it */
	uint64_t *discarded0; /* per ring: ring->discarded when we attached */
	char dir[PATH_MAX];   /* the local trace (rec_open_trace); "": none */
	/*
	 * How rec_open_trace stores it (record/tracew.h; set before: rec_init
	 * makes it packed); its types are the consumer's.
	 */
	struct trace_w_opts store;
	struct trace_store stored; /* how it was stored, once rec_finish wrote it */
	bool attached, finished, cb_failed;
	struct rec_stats st;
	char cb_err[RR_ERR_MAX];
	struct rec_piece *pc; /* per ring */
	uint32_t nrings;      /* the per-ring arrays' length */
	uint32_t nstreams;    /* highest ring written + 1 */
	struct rec_sink *sinks; /* where the packets go, in the order added (record/sink.h) */
	int64_t pair_ns; /* when the last calibration pair was added (rr_clock_pair) */
	bool nosync;	      /* rec_defer_sync: the caller syncs the file system */
	struct smp *smp;      /* the CPU samples being taken (record/samples.h), NULL: none yet */
	bool smp_off;	      /* not to be taken (smp_err says why, if it is an error) */
	char smp_err[RR_ERR_MAX];
	/*
	 * Set by the caller before rec_finish: keep a copy of the ring file in
	 * the trace (RR_TRACE_RING), for rip ps and rip top after the process;
	 * ring_kept says whether it was made; if not, ring_err why (the trace
	 * is whole without it).
	 */
	bool keep_ring, ring_kept;
	char ring_err[RR_ERR_MAX + 64];
	/* Called with each warning (a packet skipped, a type table unreadable); NULL: none. */
	void (*warn)(const char *msg, void *arg);
	void *warn_arg;
};

void rec_init(struct rec *r);
/* Open the ring file at path and become the consumer of its rings.  0 or -errno. */
int rec_attach(struct rec *r, const char *path, char *err, size_t errlen);
/*
 * Is another live process consuming this file's rings?  Its pid, or 0.
 * (Two consumers would each take half of the packets.)
 */
pid_t rec_other_consumer(struct rr_file *f);
/* rec_open_trace and rec_relayd add the sinks: record/sink.h. */
/* rec_finish does not fsync the local trace; the caller syncs the file system. */
void rec_defer_sync(struct rec *r);
/*
 * One pass over every ring in use: copy the closed packets into the trace.
 * Returns the packets taken (written or counted lost), or -errno when the
 * trace cannot be written (a sink failed that the recording cannot do
 * without).  Corrupt packets are reported to r->warn, counted and skipped.
 */
int rec_poll(struct rec *r, char *err, size_t errlen);
/*
 * Once per live period: take the closed packets, then send what every open
 * packet holds beyond what was sent, and beacons at now - margin_ns for the
 * streams with nothing more.  Packets sent, or -errno (as rec_poll).
 */
int rec_tick(struct rec *r, uint64_t margin_ns, char *err, size_t errlen);
/*
 * A pass as rip run and rip record make them: once every live_ns (the live
 * period; *next_tick, CLOCK_MONOTONIC ns, says when) a live tick, with a
 * margin of half the period (20 ms at most), else a poll.  As rec_poll.
 */
int rec_pass(struct rec *r, int64_t live_ns, int64_t *next_tick, char *err, size_t errlen);
/*
 * Drain what is left, take the open packets, write metadata and index (and
 * with keep_ring the copy of the ring file).
 */
int rec_finish(struct rec *r, char *err, size_t errlen);
/*
 * Stop consuming (writers in block mode stop waiting for us) and free
 * everything, the sinks too; a trace not finished with rec_finish is
 * removed.
 */
void rec_close(struct rec *r);

/*
 * A ring file nobody will record (an exec'd image rip run does not follow):
 * turn every category off and take away the consumer, so that its writers
 * neither pay for events nor wait for us.  The file is checked by rr_open
 * first.  0 when done or when the file is gone; -errno (message in err) when
 * it cannot be done yet (a file still being created), to be tried again.
 */
int rec_silence(const char *path, char *err, size_t errlen);

/* Events lost in all: overwritten or dropped, before and while recording. */
uint64_t rec_lost_events(const struct rec *r);

/*
 * A default trace directory name, rip-NAME-PID, with NAME cut to its last
 * path component and to characters that are safe in a file name.
 */
void rec_default_dir(char *buf, size_t len, const char *name, pid_t pid);

#endif /* RIP_RECORD_CONSUME_H */
