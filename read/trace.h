/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/trace.h - recorded traces: CTF 1.8 directories.
 *
 *   DIR/metadata        TSDL text (read/ctf.c) that babeltrace2 reads
 *   DIR/stream_N        the packets of event ring N, in order: the ring's own
 *                       bytes, each packet cut to its content (packet_size =
 *                       content_size), so recording is copying
 *   DIR/.rip-index      our own index (hidden: CTF readers skip dot files):
 *                       a copy of the ring file's header (clock calibration,
 *                       process), event types, category names, thread and
 *                       coroutine names, the module map, and what was lost
 *
 * The index is what our readers (rip dump, export, leaks) need beyond the
 * packets; they never parse the TSDL.  Every field read back is validated.
 * The recorders write traces (record/tracew.h); this is their format.
 */
#ifndef RIP_READ_TRACE_H
#define RIP_READ_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rip/abi.h>

#include "read/evread.h"
#include "read/ringfile.h"

#define TRACE_INDEX ".rip-index"
#define TRACE_MAX_STREAMS 65536u /* stream_N files, N below this */
#define TRACE_MAGIC "RIPTRACE" /* its 8 characters, no NUL stored */
#define TRACE_VERSION 1

/* A thread or coroutine seen in the trace. */
struct trace_name {
	int32_t tid;
	uint32_t slot;	/* slot index in the ring file */
	uint32_t kind;	/* enum rip_slot_kind */
	uint32_t pad;
	char name[RIP_NAME_MAX];
};

/* The index file: this header, then the arrays in the order of the counts. */
struct trace_index_hdr {
	char magic[8];		 /* TRACE_MAGIC */
	uint32_t version;	 /* TRACE_VERSION */
	uint32_t ntypes;	 /* struct rip_evtype entries */
	uint32_t nnames;	 /* struct trace_name entries */
	uint32_t nmods;		 /* struct rip_module entries */
	uint32_t nstreams;	 /* stream_N files, N < nstreams */
	uint32_t flags;		 /* TRACE_F_* */
	uint64_t lost_packets;	 /* packets overwritten before the recorder read them */
	uint64_t discarded;	 /* events discarded or overwritten, all rings */
	uint64_t events;	 /* events recorded */
	struct rip_file_hdr file; /* the ring file's header when recording ended */
	/* then: rip_evtype[ntypes], rip_category[RIP_CATEGORIES], trace_name[nnames],
	 * rip_module[nmods] */
};

#define TRACE_F_SNAPSHOT 0x1u /* a flight-recorder snapshot, not a stream */
#define TRACE_F_DEAD 0x2u     /* the process was dead when it was taken */

/* Everything a finished trace says about itself. */
struct trace_info {
	struct trace_index_hdr idx;
	struct ev_types types;
	struct trace_name *names;
	struct rip_module *mods;
};

/*
 * The rip:sample event of a trace (rip run --sample: the recorder writes it
 * from the sample rings, record/samples.h): one field, "stack", an array of
 * u64: the interrupted instruction pointer first, then the return addresses
 * of the frame-pointer walk, outermost last.  Its id is the trace's, not a
 * writer's (a writer's ids are below 256), and its category RIP_CAT_SAMPLE.
 */
#define TRACE_SAMPLE_ID 1023u
#define TRACE_SAMPLE_NAME "rip:sample"
#define TRACE_SAMPLE_CATEGORY "sample"

/* The type of rip:sample, for a trace's type table. */
void trace_sample_type(struct ev_type *t);

/* ---- the index of a trace, from a ring file (the writer's: record/tracew.h) ---- */

/*
 * Fill info from a ring file (header, types, names of every slot, modules),
 * for trace_w_finish.  Free with trace_info_free.
 */
int trace_info_from_file(struct rr_file *f, struct trace_info *info, char *err, size_t errlen);
void trace_info_free(struct trace_info *info);

/* ---- reading ---- */

struct trace_r {
	char dir[PATH_MAX];
	struct trace_info info;
};

int trace_r_open(const char *dir, struct trace_r *r, char *err, size_t errlen);
void trace_r_close(struct trace_r *r);

/*
 * Read stream N packet by packet, validating each (header, sizes, events
 * decode with the trace's types).  cb gets each packet; a short or corrupt
 * packet is an error naming the file and offset.
 */
int trace_r_stream(struct trace_r *r, uint32_t stream, ev_packet_cb cb, void *arg, char *err,
		   size_t errlen);

/* Is path a trace directory (has .rip-index, or metadata that may carry it)? */
bool trace_is_dir(const char *path);

/* ---- CTF metadata (read/ctf.c) ---- */

/* Write the TSDL metadata of a trace described by info. */
int ctf_write_metadata(FILE *out, const struct trace_info *info);
/*
 * The same in parts, for a trace streamed as it is recorded (relayd): the
 * head (everything but the event types; with live, no counts in env, as
 * they are not known yet), one event type, and at the end an env block
 * with the counts and the index (trace_index_pack) in base64 chunks
 * (rip_index_bytes, rip_index_chunks, rip_index_0...), so that a copy of
 * the trace without .rip-index is still whole.
 */
#define CTF_INDEX_CHUNK 3072u		  /* index bytes per env string */
#define CTF_INDEX_MAX (256ull << 20)	  /* the largest index read back */
int ctf_write_head(FILE *out, const struct trace_info *info, bool live);
int ctf_write_event(FILE *out, const struct ev_type *t);
int ctf_write_index_env(FILE *out, const struct trace_info *info, const void *index, size_t len);
/* Find and decode that index in metadata text; free *out.  -ENOENT: none there. */
int ctf_read_index(const char *text, size_t len, uint8_t **out, size_t *outlen, char *err,
		   size_t errlen);

/* ---- the index in memory ---- */

/* The bytes of .rip-index for info (sets info->idx.ntypes); free *out. */
int trace_index_pack(struct trace_info *info, uint8_t **out, size_t *len, char *err,
		     size_t errlen);

#endif /* RIP_READ_TRACE_H */
