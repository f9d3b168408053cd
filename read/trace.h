/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/trace.h - recorded traces: directories of CTF 1.8 packets, kept as
 * CTF or packed.
 *
 *   DIR/.rip-index      our own index (hidden: CTF readers skip dot files):
 *                       a copy of the ring file's header (clock calibration,
 *                       process), event types, category names, thread and
 *                       coroutine names, the module map, what was lost, and
 *                       how the packets are stored (struct trace_store)
 *
 * then, as CTF (babeltrace2 reads the directory as it is):
 *
 *   DIR/metadata        TSDL text (read/ctf.c)
 *   DIR/stream_N        the packets of event ring N, in order: the ring's own
 *                       bytes, each packet cut to its content (packet_size =
 *                       content_size), so recording is copying
 *
 * or packed (the default: a tenth of the size; rip export --format=ctf
 * writes the CTF form of it):
 *
 *   DIR/chunk-NNNNNN.rpk  chunk files, numbered from 0: a struct
 *                       trace_chunk_hdr, then records, each a struct
 *                       trace_rec_hdr, the stream of each of its packets
 *                       (u32), and a packed block of those packets
 *                       (read/pack.h) in the order they were taken.  A
 *                       stream's packets are in order across blocks and
 *                       chunks.  A recorder that rotates (--max-size) drops
 *                       the oldest chunks; one that hands them on
 *                       (--rotate, --on-rotate) gives each closed chunk to a
 *                       command that may take it away.  The index says how
 *                       many and what each held; a reader counts what is not
 *                       there.  A closed chunk (version 2) ends with a tail:
 *                       the trace's index as of its close (the same bytes
 *                       as .rip-index, its store counting the chunks up to
 *                       this one), then a struct trace_chunk_tail, so that
 *                       the chunk is read alone wherever it went; the
 *                       recorder writes .rip-index anew at each close
 *                       (TRACE_F_LIVE) and for the last time at the end.
 *
 * The index is what our readers (rip dump, export, leaks) need beyond the
 * packets; they never parse the TSDL.  Every field read back is validated.
 * The recorders write traces (record/tracew.h); this is their format.
 */
#ifndef RIP_READ_TRACE_H
#define RIP_READ_TRACE_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rip/abi.h>

#include "read/evread.h"
#include "read/ringfile.h"

#define TRACE_INDEX ".rip-index"
#define TRACE_MAX_STREAMS 65536u /* stream_N files, N below this */
#define TRACE_MAGIC "RIPTRACE" /* its 8 characters, no NUL stored */
/*
 * 2: struct trace_store after the modules; 3: the chunk infos after it are
 * those of the chunks kept only (store.first_chunk on), so that an index
 * stays as big as what is kept however long the recording runs.
 */
#define TRACE_VERSION 3

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
	 * rip_module[nmods], and from version 2 a struct trace_store and
	 * trace_chunk_info[store.nchunks] */
};

/* How a trace keeps its packets (the end of a version 2 index). */
struct trace_store {
	uint32_t format;	  /* TRACE_STORE_* */
	uint32_t nchunks;	  /* packed: chunk files written, numbered 0 .. nchunks - 1 */
	uint32_t first_chunk;	  /* packed: the oldest one kept (the ones before were dropped) */
	uint32_t handed;	  /* packed: chunks handed to --on-rotate's command once closed */
	uint64_t trace_id;	  /* packed: in each of its chunks' header */
	uint64_t dropped_bytes;	  /* what the dropped chunks held: file bytes, */
	uint64_t dropped_packets; /* packets */
	uint64_t dropped_events;  /* and events */
	uint64_t kept_bytes;	  /* the bytes of the packets' files kept, when it ended */
	uint64_t handed_failed;	  /* of those, the ones whose command could not run or failed */
};

/* After the struct trace_store of a packed trace: one of these for each chunk written. */
struct trace_chunk_info {
	uint64_t bytes, packets, events;
};

#define TRACE_STORE_CTF 0    /* stream_N files and metadata */
#define TRACE_STORE_PACKED 1 /* chunk files */

#define TRACE_CHUNK_MAGIC "RIPCHUNK" /* its 8 characters */
#define TRACE_MAX_CHUNKS 1000000u    /* chunk infos in an index: chunks kept at once */
#define TRACE_MAX_SEQ 0xfffffff0u    /* chunk numbers (chunk-NNNNNN.rpk: 6 digits or more) */
#define TRACE_REC_MAX (40ull << 20)  /* bytes of one block */
#define TRACE_CHUNK_VERSION 2	     /* 2: a closed chunk ends with its tail; 1 has none */
#define TRACE_CHUNK_TAIL_MAGIC "RIPCTAIL" /* its 8 characters */
#define TRACE_CHUNK_NAME "chunk-%06" PRIu32 ".rpk"
#define TRACE_REC_MAGIC "RIPB"	     /* a record of a block */

struct trace_chunk_hdr {
	char magic[8];	   /* TRACE_CHUNK_MAGIC */
	uint32_t version;  /* TRACE_CHUNK_VERSION */
	uint32_t seq;	   /* the chunk's number */
	uint64_t trace_id; /* the index's */
	uint64_t pad[5];
};

/*
 * The last bytes of a closed chunk (version 2): after its records, the
 * trace's index as it was when the chunk was closed (index_len bytes at
 * index_off), then this.  A chunk being written, or one whose recorder was
 * killed before it closed it, has none: its records run to its end.
 */
struct trace_chunk_tail {
	char magic[8];	    /* TRACE_CHUNK_TAIL_MAGIC */
	uint64_t index_off; /* where the index begins: the records end there */
	uint64_t index_len; /* index_off + index_len + sizeof(this) is the file's size */
	uint64_t pad;
};

struct trace_rec_hdr {
	char magic[4];	   /* TRACE_REC_MAGIC */
	uint32_t npackets; /* then npackets u32: each packet's stream */
	uint64_t size;	   /* then the block: size bytes */
	uint64_t raw;	   /* the bytes of the packets it holds (the block's own count) */
	uint64_t events;   /* and their events */
};

#define TRACE_F_SNAPSHOT 0x1u /* a flight-recorder snapshot, not a stream */
#define TRACE_F_DEAD 0x2u     /* the process was dead when it was taken */
/* written at a chunk's close, the recording going on: the chunks after store.nchunks uncounted */
#define TRACE_F_LIVE 0x4u

/* Everything a finished trace says about itself. */
struct trace_info {
	struct trace_index_hdr idx;
	struct trace_store store;
	/*
	 * Packed: what chunks chunk0 .. store.nchunks - 1 held (trace_chunk_of).
	 * chunk0 is store.first_chunk from version 3 (the dropped chunks' are
	 * summed in the store), 0 in version 2 (the dropped ones' too).
	 */
	struct trace_chunk_info *chunks;
	uint32_t chunk0;
	struct ev_types types;
	struct trace_name *names;
	struct rip_module *mods;
};

/* What chunk c held, when info knows (a packed trace's, c counted and not dropped), else NULL. */
static inline const struct trace_chunk_info *trace_chunk_of(const struct trace_info *info,
							     uint32_t c)
{
	if (!info->chunks || c < info->chunk0 || c >= info->store.nchunks)
		return NULL;
	return &info->chunks[c - info->chunk0];
}

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

struct trace_pk;

struct trace_r {
	char dir[PATH_MAX];
	struct trace_info info;
	struct trace_pk *pk; /* a packed trace's chunks: NULL for CTF */
	uint32_t only;	     /* one chunk read: its number + 1 (0: all of them) */
	char file[PATH_MAX]; /* that chunk's file, as it was named (any name, anywhere) */
	/*
	 * trace_r_stream passes over the packets of damaged blocks, counted
	 * in skipped, rather than fail (the caller sets it after the open).
	 */
	bool skip_damaged;
	uint64_t skipped;
};

/*
 * Open a trace directory: its index, and a packed trace's chunks (each
 * record's list of packets: the blocks are read when their packets are).
 * dir may also name one chunk file of a packed trace (any name): that
 * chunk alone is read (the other chunks, there or not, are neither read
 * nor counted), with the index of the directory it is in when that index
 * is its trace's, counts it and has the chunk's owner, else with the index
 * in its own tail.
 */
int trace_r_open(const char *dir, struct trace_r *r, char *err, size_t errlen);
void trace_r_close(struct trace_r *r);

/*
 * A packed trace: how many packets stream holds, and the k-th of them (k
 * below that), decoded, in *data (len bytes, valid until the next call on
 * r).  0, or -errno with the reason in err: TRACE_R_DAMAGED when the block
 * that holds it is damaged (its checksum, its coding), which costs its
 * packets alone: the caller counts the packet lost and reads on.
 */
#define TRACE_R_DAMAGED (-ENOMSG)
uint64_t trace_r_npackets(const struct trace_r *r, uint32_t stream);
/*
 * The blocks of a packed trace found damaged so far (their packets skipped:
 * TRACE_R_DAMAGED), and what the first said, into msg ("" when none).
 */
uint32_t trace_r_damaged(struct trace_r *r, char *msg, size_t len);
/* The bytes of all a packed trace's packets (as its records say). */
uint64_t trace_r_raw_bytes(const struct trace_r *r);
int trace_r_packet(struct trace_r *r, uint32_t stream, uint64_t k, const uint8_t **data,
		   size_t *len, char *err, size_t errlen);
/*
 * The same, the packet held for the caller: it stays valid, whatever is
 * read meanwhile, until trace_r_packet_release(r, *hold).  When the reader
 * holds too much already (a bounded number of blocks, within the cache's
 * budget), *hold is 0 and the packet is valid until the next call only, as
 * trace_r_packet's: the caller copies it.
 */
int trace_r_packet_hold(struct trace_r *r, uint32_t stream, uint64_t k, const uint8_t **data,
			size_t *len, uint32_t *hold, char *err, size_t errlen);
void trace_r_packet_release(struct trace_r *r, uint32_t hold);
/*
 * A packed trace: no event of packet k of stream is before the time this
 * returns (its block's earliest packet begins then, as the block says; 0
 * when it says nothing), read without decoding the block.  A merge by time
 * takes the packet up only when it gets there (read/evsource.c).
 */
uint64_t trace_r_packet_after(const struct trace_r *r, uint32_t stream, uint64_t k);
/*
 * The merge takes each stream's first packet up when its time comes
 * (trace_r_packet_after), not all of them before its first event: the
 * blocks of the first packets are then not decoded ahead of their turn.
 */
void trace_r_merge_defers(struct trace_r *r);
/*
 * fn is called once, from whichever reader thread finds it, when the first
 * touches of fresh memory turn out slow for huge pages (a virtual machine's
 * host that took its free memory back): a program that put its heap in
 * huge pages may turn them off for what it has not touched yet.  Set it
 * before any trace is read; NULL (the default): nothing is called.
 */
void trace_r_on_slow_huge(void (*fn)(void));
/*
 * What reading a packed trace's chunks found missing: chunks the index
 * counts that are not there (handed to a command by rotation, or removed)
 * and chunks cut short (a recorder that was killed); 0s for CTF.
 */
void trace_r_missing(const struct trace_r *r, uint32_t *chunks, uint32_t *cut);
/*
 * Packets and events a packed trace does not hold any more, and the chunks
 * they were in: chunks its recorder dropped (--max-size), missing from the
 * directory, or cut short.  0s for CTF.
 */
void trace_r_gone(const struct trace_r *r, uint64_t *packets, uint64_t *events,
		  uint32_t *chunks);
/*
 * read/tracepk.c: the tail of a chunk file (fd, size bytes, of version
 * version), checked against the file: 1 and *t when it has one, 0 when it
 * has none (version 1, or not closed), -errno when it cannot be read.
 */
int trace_pk_tail(int fd, uint64_t size, uint32_t version, struct trace_chunk_tail *t);
/* read/tracepk.c, for trace_r_open and trace_r_close: the chunks' lists, and their end. */
int trace_pk_open(struct trace_r *r, char *err, size_t errlen);
void trace_pk_close(struct trace_r *r);

/*
 * Read stream N packet by packet, validating each (header, sizes, events
 * decode with the trace's types).  cb gets each packet; a short or corrupt
 * packet is an error naming the file and offset, as is one of a damaged
 * block of a packed trace unless r->skip_damaged.
 */
int trace_r_stream(struct trace_r *r, uint32_t stream, ev_packet_cb cb, void *arg, char *err,
		   size_t errlen);

/*
 * Is path a trace directory (has .rip-index, or metadata that may carry
 * it), or a chunk file (a regular file that begins as one)?
 */
bool trace_is_dir(const char *path);

/*
 * Is path a chunk file?  Then ring (len bytes) gets the copy of the ring
 * file its trace keeps beside it (RR_TRACE_RING in the chunk's directory),
 * or "" when there is none there (a chunk handed away by --on-rotate).
 */
bool trace_chunk_ring(const char *path, char *ring, size_t len);

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
