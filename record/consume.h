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
 * CPU samples (rip run --sample) are taken out of the sample rings as they
 * come (record/samples.h) and written at once, as a stream of their own
 * that no ring uses (nrings): each chunk of the trace holds those taken
 * while it was written.
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
 *
 * Several recorders (record/sub.h): rec_attach also listens for a second
 * rip record, which subscribes with rec_subscribe instead of rec_attach
 * and then runs the same loop; its packets come from the consumer.
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
#include "record/sub.h"
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
	uint32_t overflow;	   /* threads that found no free ring (ev_overflow at the end) */
	uint64_t samples;	   /* CPU samples written (rip:sample events, record/samples.h) */
	uint64_t samples_lost;	   /* stored by the sampler but never seen by us */
	uint64_t samples_merged;   /* of them, timer periods the kernel merged (overruns) */
};

#define REC_FLUSH_NS 250000000u /* see struct rec's flush_ns */

/* Per ring: the open packet sent in pieces so far (rec_tick), and what went out last. */
struct rec_piece {
	uint64_t seq1;	       /* the ring's packet sent in part, + 1; 0: none (calloc'd) */
	size_t off;	       /* its bytes sent, header included */
	uint32_t events;       /* its events sent */
	uint64_t last_ts;      /* the time of the last of them */
	uint64_t extra;	       /* pieces beyond one per ring packet: added to sequence numbers */
	struct rip_packet last; /* the header of the last packet written */
	bool any;	       /* a packet was written */
	/* not live: the open packet's sequence number and bytes at the last tick */
	uint64_t tick_seq;
	size_t tick_len;
};

/*
 * What rec_emit sends: with ring, bytes [off, ...) of the ring's packet
 * seq, after events of it; else a packet of the consumer's own (samples,
 * losses), never cut.  A subscriber's sink cuts by it (record/sink-sub.c).
 */
struct rec_src {
	bool ring;
	uint64_t seq;
	size_t off;
	uint64_t events;
};

/*
 * Where a subscriber's recording starts in one ring: packets before seq1 - 1
 * are not its, and of packet seq1 - 1 only the bytes from off on (after
 * its first events events, the last of them at ts).  seq1 0: all of it.
 */
struct rec_cut {
	uint64_t seq1;
	size_t off;
	uint64_t events;
	uint64_t ts;
};

struct rec_srv;

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
	struct rec_piece *pc; /* per ring, then the CPU samples' stream (nrings) */
	uint32_t nrings;      /* the per-ring arrays' length */
	uint32_t nstreams;    /* highest ring written + 1 */
	struct rec_sink *sinks; /* where the packets go, in the order added (record/sink.h) */
	int64_t pair_ns; /* when the last calibration pair was added (rr_clock_pair) */
	/*
	 * Not live: an open packet whose events not yet taken are older than
	 * this is taken in part at a pass (rec_pass, rec_tick), so that the
	 * trace holds no packet of a thread that waits long mid-packet far
	 * from its time; 0: never.  rec_init sets REC_FLUSH_NS.
	 */
	uint64_t flush_ns;
	bool nosync;	      /* rec_defer_sync: the caller syncs the file system */
	/*
	 * The CPU samples being taken (record/samples.h), NULL: none yet;
	 * written as they are taken, as stream nrings (one no ring uses).
	 */
	struct smp *smp;
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
	const struct rec_src *src; /* during rec_emit: what is sent */
	/* As the consumer: the subscribers' socket (record/sink-sub.c); NULL: none. */
	struct rec_srv *srv;
	bool subs_ever;		  /* a subscriber said HELLO: it was sent the definitions kept */
	char srv_err[RR_ERR_MAX]; /* why there is none */
	/* As a subscriber (rec_subscribe, record/subscribe.c): sub_fd >= 0. */
	int sub_fd;
	pid_t sub_pid;		     /* the consumer's */
	enum rec_sub_why sub_end;    /* why it ended, REC_SUB_ON while it has not */
	uint64_t sub_missed_events;  /* dropped for us by the consumer (MISSED) */
	uint64_t sub_missed_packets;
	uint64_t *sub_disc;	     /* per stream: of those, added to events_discarded */
	bool sub_ending;	     /* in rec_sub_finish: a TAKEOVER is declined */
	bool sub_offered;	     /* a TAKEOVER came */
	bool sub_died;		     /* the consumer died: we took over without one */
	uint64_t sub_gap;	     /* then: packets it took that the rings no longer held */
	/*
	 * Per ring: what came before is not ours (rec_cut): a subscriber that
	 * took over skips what it got from the consumer before; NULL: none.
	 */
	struct rec_cut *cut;
	/* Per ring, as the consumer: where the final pass stopped, for a takeover; NULL: none. */
	struct rec_cut *endcut;
	bool handed; /* the rings were handed over to a subscriber */
	uint8_t *sub_buf;	     /* bytes read, not yet a whole frame */
	size_t sub_len, sub_cap;
};

void rec_init(struct rec *r);
/*
 * Open the ring file at path and become the consumer of its rings.  0 or
 * -errno.  It then takes subscribers (record/sub.h) too, when it can
 * (srv_err says why not).
 */
int rec_attach(struct rec *r, const char *path, char *err, size_t errlen);
/* The same without consuming: for a subscriber (rec_subscribe).  0 or -errno. */
int rec_open_ro(struct rec *r, const char *path, char *err, size_t errlen);
/* The losses counted from now on (a subscriber's start). */
void rec_baseline(struct rec *r);
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
 * streams with nothing more.  Not live (no sink has beacons): once per
 * flush_ns, only what waited that long of each open packet.  A piece
 * begins at its first event.  Packets sent, or -errno (as rec_poll).
 */
int rec_tick(struct rec *r, uint64_t margin_ns, char *err, size_t errlen);
/*
 * A pass as rip run and rip record make them: once every live_ns (the live
 * period; *next_tick, CLOCK_MONOTONIC ns, says when) a live tick, with a
 * margin of half the period (20 ms at most), else a poll.  Not live
 * (live_ns 0): a tick once every flush_ns.  As rec_poll.
 */
int rec_pass(struct rec *r, int64_t live_ns, int64_t *next_tick, char *err, size_t errlen);
/*
 * How long rip run and rip record sleep between passes that find nothing:
 * REC_IDLE_MIN_NS after one that found something, doubling up to
 * REC_IDLE_MAX_NS while nothing comes (a busy writer fills a ring in
 * about a ms, so the first look again is soon; an idle program costs a
 * wake-up every 2 ms at most).
 */
#define REC_IDLE_MIN_NS 50000L
#define REC_IDLE_MAX_NS 2000000L

/* The sleep after one more empty pass than idle's. */
static inline long rec_idle_next(long idle)
{
	return idle * 2 > REC_IDLE_MAX_NS ? REC_IDLE_MAX_NS : idle * 2;
}
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

/*
 * For the sinks and the subscriber (record/sink-sub.c, record/subscribe.c):
 * write one packet to every working sink (hdr then blen bytes of events at
 * body, which has a header's worth of bytes before it), src saying what
 * it is; 0 or -errno (cb_err says why).
 */
int rec_emit(struct rec *r, uint32_t ring, const struct rec_src *src,
	     const struct rip_packet *hdr, const uint8_t *body, size_t blen);
/*
 * Cut what src says is sent (hdr, *body, *blen) to what lies after c; out:
 * src as it is after the cut.  False when nothing does.
 */
bool rec_cut_apply(const struct rec_cut *c, const struct rec_src *src, struct rip_packet *hdr,
		   struct rec_src *out, const uint8_t **body, size_t *blen);
/*
 * A subscriber the rings were handed to (TAKEOVER, cut in r->cut): become
 * their consumer and go on from where the last one stopped.  With died
 * (the consumer died without a word; r->cut: where what it sent ends),
 * first read again from the rings the packets it took and never sent
 * (sub_gap counts those gone).  0 or -errno.
 */
int rec_take_over(struct rec *r, bool died, char *err, size_t errlen);
/* The cut of every ring (r->nrings of them) as they are now: a subscriber's start. */
void rec_cut_now(struct rec *r, struct rec_cut *cut);
/*
 * Send sink s alone what the open packets hold beyond what went to every
 * sink: a subscriber that leaves gets every event up to now.  0 or -errno.
 */
int rec_flush_to(struct rec *r, struct rec_sink *s, char *err, size_t errlen);
/* Rings in use (every ring past them is fresh). */
uint32_t rec_rings_used(struct rec *r);

/* Events lost in all: overwritten or dropped, before and while recording. */
uint64_t rec_lost_events(const struct rec *r);

/*
 * A default trace directory name, rip-NAME-PID, with NAME cut to its last
 * path component and to characters that are safe in a file name.
 */
void rec_default_dir(char *buf, size_t len, const char *name, pid_t pid);

#endif /* RIP_RECORD_CONSUME_H */
