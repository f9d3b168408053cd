/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/tracew.h - writing a recorded trace, the directory that
 * read/trace.h describes and reads: packed (chunk files of packed blocks,
 * the default) or CTF (stream files), then the index at the end (and, for
 * CTF, the metadata).
 *
 *	trace_w_open(dir, opts, &w, err, len);	   DIR must not exist
 *	trace_w_packet(w, packet, err, len);	   into the block being packed,
 *						   or appended to stream_<ring>
 *	trace_w_pass(w, err, len);		   now and then: a block taken
 *						   once it is a second old
 *	trace_w_finish(w, info, err, len);	   the rest, .rip-index; w freed
 *	(packed: each chunk closed gets its tail, the trace's index as it is
 *	 then, and .rip-index is written anew: opts.info)
 *   or trace_w_abort(w);			   nothing left behind
 */
#ifndef RIP_RECORD_TRACEW_H
#define RIP_RECORD_TRACEW_H

#include "read/evread.h"
#include "read/trace.h"

struct trace_w;

struct trace_w_opts {
	bool ctf;		      /* stream files and metadata, not chunks */
	const struct ev_types *types; /* packed: the packets' types (kept by reference: it grows) */
	uint64_t chunk_bytes;	      /* packed: start a new chunk file past this; 0: one chunk */
	uint64_t max_bytes;	      /* packed: then drop the oldest chunks past this; 0: never */
	int level;		      /* packed: zstd's level, 0: the default (3) */
	int64_t rotate_ns;	      /* packed: close a chunk this old (ns) at the next pass; 0: never */
	const char *on_rotate;	      /* packed: run this program with each chunk's path once closed
					 (no shell; the chunk is its from then on), NULL: none */
	bool nice_set;		      /* on_rotate's command runs at nice value nice, not ours */
	int nice;		      /* (tool_recorder_first lowers ours) */
	/*
	 * packed: the trace's index as it is now (types, names, modules, the
	 * ring file's header, what was lost: as trace_info_from_file makes it),
	 * asked for at each chunk's close but the last: it goes into the
	 * chunk's tail and .rip-index is written anew from it, so that the
	 * chunk and the directory are read while the recording goes on.
	 * info is zeroed; what it is given is freed with trace_info_free.
	 * NULL, or an error: the chunk gets no tail (it is read with the
	 * trace's index once the recording ended).
	 */
	int (*info)(void *arg, struct trace_info *info, char *err, size_t errlen);
	void *info_arg;
	/*
	 * packed, with info: a number that changes when the modules info
	 * would give change (the module map's count), read cheaply at the
	 * writer's passes so that .rip-index is written anew for them; NULL:
	 * the modules of the chunk being written are named at its close.
	 */
	uint64_t (*info_gen)(void *arg);
	/*
	 * packed: keep the definitions the packets carry (rip:bt, rip:fn);
	 * with chunks (chunk_bytes or rotate_ns), copy them at the head of each
	 * chunk but the first, in packets of stream defs_stream (one no ring
	 * uses), so that every chunk names what its events refer to; and hand
	 * them to a second recorder that joins (trace_w_defs_copy).  Packets
	 * of defs_stream given to trace_w_packet are such copies: numbered in
	 * the writer's own sequence of that stream.
	 */
	bool defs;
	uint32_t defs_stream;
};

/*
 * Create DIR (it must not exist: traces are never overwritten), for a trace
 * stored as opts says (NULL: CTF).
 */
int trace_w_open(const char *dir, const struct trace_w_opts *opts, struct trace_w **out,
		 char *err, size_t errlen);
/* Add a packet of stream p->ring (into the block being packed, or to stream_<p->ring>). */
int trace_w_packet(struct trace_w *w, const struct ev_packet *p, char *err, size_t errlen);
/*
 * Packed: take the block being packed if its first packet came a second
 * ago or more, so that a trace whose recorder is killed loses little;
 * close the chunk when rotate_ns says it is time; reap the commands of
 * on_rotate that are done.  0 or -errno.
 */
int trace_w_pass(struct trace_w *w, char *err, size_t errlen);
/*
 * The definitions kept for the chunks' copies (opts.defs): how many, the
 * memory they take, and how many were not kept (past the bound, 64 MiB).
 */
void trace_w_defs(const struct trace_w *w, uint64_t *n, uint64_t *mem, uint64_t *gone);
/* A packet (len bytes at pkt, its header first) of stream: 0 or -errno. */
typedef int trace_w_pkt_fn(void *arg, uint32_t stream, const uint8_t *pkt, size_t len);
/*
 * The definitions kept (opts.defs) from *from on (0: all of them; then
 * where the last call ended, for those met since), in the order met, as
 * packets of stream opts.defs_stream timed ts, each handed to fn; *from
 * moved past them.  fn's error, or -ENOMEM.  Nothing when the writer keeps
 * none (CTF, or opts.defs not set).
 */
int trace_w_defs_copy(struct trace_w *w, size_t *from, uint64_t ts, trace_w_pkt_fn *fn, void *arg);
/* Bytes the trace's files hold now (packed: chunks kept; CTF: stream files). */
uint64_t trace_w_bytes(const struct trace_w *w);
/*
 * Give up: remove what was written and the directory; but packed, once a
 * chunk was closed (a .rip-index counts it), keep the chunks closed and
 * that index, read as those of a recorder killed, and remove only the
 * chunk open.  w is freed.
 */
void trace_w_abort(struct trace_w *w);
/*
 * Write metadata and the index (info, from trace_info_from_file: its
 * stream and event counts become the ones written), close everything.  w
 * is freed either way.  Packed, the last chunk gets its tail from info;
 * with on_rotate, it is handed on too, and every command waited for
 * before the index is written.
 */
int trace_w_finish(struct trace_w *w, struct trace_info *info, char *err, size_t errlen);
/*
 * Finish without fsync: for a caller that writes many traces (rip run's
 * followed children) and makes them durable at once with syncfs(2).
 */
void trace_w_nosync(struct trace_w *w);

/*
 * Write the trace r (open) again into dst (which must not exist), stored as
 * opts says: a packed trace as CTF for babeltrace2 (rip export
 * --format=ctf).  Every packet is checked as it is read; what the source
 * lost (its dropped chunks too) stays counted in the copy's index; the
 * copy of the ring file (RR_TRACE_RING) comes along.  progress, if not
 * NULL, is called with the bytes done and in all.  0, or -errno with the
 * reason in err (nothing is left of dst).
 */
int trace_w_copy(struct trace_r *r, const char *dst, const struct trace_w_opts *opts,
		 void (*progress)(uint64_t done, uint64_t total, void *arg), void *arg, char *err,
		 size_t errlen);

#endif /* RIP_RECORD_TRACEW_H */
