/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/tracew.h - writing a recorded trace, the CTF 1.8 directory that
 * read/trace.h describes and reads: its stream files as packets come, then
 * the metadata and the index at the end.
 *
 *	trace_w_open(dir, &w, err, len);	   DIR must not exist
 *	trace_w_packet(w, packet, err, len);	   appended to stream_<ring>
 *	trace_w_finish(w, info, err, len);	   metadata, .rip-index; w freed
 *   or trace_w_abort(w);			   nothing left behind
 */
#ifndef RIP_RECORD_TRACEW_H
#define RIP_RECORD_TRACEW_H

#include "read/evread.h"
#include "read/trace.h"

struct trace_w;

/* Create DIR (it must not exist: traces are never overwritten). */
int trace_w_open(const char *dir, struct trace_w **out, char *err, size_t errlen);
/* Append a packet to stream_<p->ring>. */
int trace_w_packet(struct trace_w *w, const struct ev_packet *p, char *err, size_t errlen);
/* Give up: remove what was written and the directory.  w is freed. */
void trace_w_abort(struct trace_w *w);
/*
 * Write metadata and the index (info, from trace_info_from_file: its
 * stream and event counts become the ones written), close everything.  w
 * is freed either way.
 */
int trace_w_finish(struct trace_w *w, struct trace_info *info, char *err, size_t errlen);
/*
 * Finish without fsync: for a caller that writes many traces (rip run's
 * followed children) and makes them durable at once with syncfs(2).
 */
void trace_w_nosync(struct trace_w *w);

#endif /* RIP_RECORD_TRACEW_H */
