/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rip/abi.h - the byte layout of a librip ring file.
 *
 * The writer (librip, in the traced process) and every reader (the rip
 * command, post-mortem tools) share these structures.  The layout is frozen
 * per RIP_FORMAT_VERSION by the _Static_asserts at the end of this file;
 * doc/format.md describes every byte.
 *
 *   offset 0                     +--------------------------------------+
 *                                | struct rip_file_hdr        (4 KiB)   |
 *                                |   0     identity: magic, version,    |
 *                                |         byte order, sizes, offsets   |
 *                                |   512   process: pid, start, boot id,|
 *                                |         exe path                     |
 *                                |   1536  clock calibration            |
 *                                |   2048  control words (enable bits)  |
 *                                |   3072  pool and map counters, one   |
 *                                |         cache line each              |
 *   hdr.slot_off (= 4096)        +--------------------------------------+
 *                                | struct rip_slot [slot_count] (512 B) |
 *                                |   0..63    hot line: snap_seq, state,|
 *                                |            tid, switch time          |
 *                                |   64..127  name                      |
 *                                |   128..175 wait record (wrappers)    |
 *                                |   176..255 watcher record (rip_watch)|
 *                                |   256..511 snap[32]: 8-byte entries  |
 *   hdr.fifo_off                 +--------------------------------------+
 *                                | struct rip_fifo_cell [slot_count]    |
 *                                |   free-slot queue, oldest exit first |
 *   hdr.mod_off                  +--------------------------------------+
 *                                | struct rip_module [mod_cap] (512 B)  |
 *   hdr.types_off                +--------------------------------------+
 *                                | struct rip_evtype [types_cap] (512 B)|
 *   hdr.cats_off                 +--------------------------------------+
 *                                | struct rip_category [256] (32 B)     |
 *   hdr.ev_fifo_off              +--------------------------------------+
 *                                | struct rip_fifo_cell [ev_rings]      |
 *   hdr.ev_ctl_off               +--------------------------------------+
 *                                | struct rip_evring [ev_rings] (128 B) |
 *   hdr.ev_off                   +--------------------------------------+
 *                                | event ring 0: ev_ring_size bytes =   |
 *                                |   packets of ev_packet_size bytes,   |
 *                                |   each a CTF packet (see below)      |
 *                                | event ring 1 ...                     |
 *   hdr.watch_off                +--------------------------------------+
 *                                | watch_copies buffers of              |
 *                                |   watch_copy_size bytes: stack       |
 *                                |   copies of the watcher (sparse)     |
 *   hdr.sample_off               +--------------------------------------+
 *                                | struct rip_sample_ring [slot_count]  |
 *   hdr.fn_off                   +--------------------------------------+
 *                                | struct rip_fn_stack [slot_count]     |
 *                                |   (1 KiB): shadow call stacks        |
 *   hdr.fn_tab_off               +--------------------------------------+
 *                                | u64 [fn_ids]: function id - 1 ->     |
 *                                |   entry address (sparse)             |
 *   hdr.file_size                +--------------------------------------+
 *
 * Snap ring protocol (single writer: the thread that runs the slot):
 *
 *	i = slot->snap_seq;                 plain load
 *	slot->snap[i % RIP_SNAP_DEPTH] = ip;  plain store
 *	slot->snap_seq = i + 1;             store-release
 *
 * A reader loads snap_seq (acquire), copies the entries, issues an acquire
 * fence and loads snap_seq again.  Entry s (0 <= s < seq) lives at
 * snap[s % depth]; it is valid if s > seq_after - depth, because the writer of
 * entry s + depth may already have stored it without publishing.  After a
 * crash the same rule drops at most the one entry being written.
 *
 * Slots are taken from the pool without locks: never-used slots first (the
 * "fresh" counter), then the free FIFO, which hands out the slot that exited
 * longest ago.  A slot's gen is bumped on every reuse, so a reader can tell a
 * slot that changed owner under it.
 *
 * Event rings (one per thread that emits events, taken from their own pool
 * the same way as slots) are cut into packets laid out as CTF 1.8 packets,
 * so that recording a trace is copying packets:
 *
 *	struct rip_packet (80 B): magic, stream ids, begin/end time, content
 *	    and packet size in bits, sequence number, discarded events so far,
 *	    tid, coroutine at begin, events in the packet
 *	events: header u32 = id (5 bits) | time (27 low bits of the clock),
 *	    or id 31 then u32 id and u64 time (13 bytes: the extended form,
 *	    after a gap of 2^27 ticks or for ids >= 31); then the fields,
 *	    byte-aligned, in the widths the type declares
 *
 * The writer stores an event (header and fields), then the packet's
 * content_size (low 32 bits) as its commit: a reader, or a post-mortem copy,
 * trusts the bytes below content_size of the open packet.  A closed packet
 * has timestamp_end, events and events_discarded set, and ring->written
 * counts it (store-release).  A streaming consumer advances ring->consumed.
 *
 * All multi-byte fields are in the writer's byte order, recorded in
 * hdr.byte_order; readers refuse a file whose order differs from theirs.
 */
#ifndef RIP_ABI_H
#define RIP_ABI_H

#include <stdint.h>

#define RIP_MAGIC "RIPRING" /* 8 bytes with the NUL */
#define RIP_FORMAT_VERSION 1
#define RIP_BYTE_ORDER_MARK 0x0102030405060708ull

#define RIP_HDR_SIZE 4096u
#define RIP_SLOTS_OFFSET RIP_HDR_SIZE /* fixed: the librip.h fast path relies on it */
#define RIP_SLOT_SIZE 512u
#define RIP_SLOT_SHIFT 9
#define RIP_SNAP_DEPTH 32u   /* entries per snap ring, a power of two */
#define RIP_SNAP_OFFSET 256u /* offset of snap[] inside a slot */
#define RIP_NAME_MAX 64u     /* bytes of a slot name, NUL included */
#define RIP_MODULE_SIZE 512u
#define RIP_MODULE_PATH_MAX 416u
#define RIP_BUILD_ID_MAX 32u
#define RIP_EXE_MAX 512u
#define RIP_CATEGORY_WORDS 4u /* 256 category enable bits */
#define RIP_CATEGORIES 256u
#define RIP_CATEGORY_NAME_MAX 32u
#define RIP_EVTYPE_SIZE 512u
#define RIP_EVTYPE_NAME_MAX 64u
#define RIP_FIELD_NAME_MAX 32u
#define RIP_EVTYPE_DESC_MAX 96u /* bytes of a kind's description (struct rip_evtype.desc) */
#define RIP_EVENT_MAX_FIELDS 8u
#define RIP_EVRING_SIZE 128u
#define RIP_PACKET_HDR_SIZE 80u
#define RIP_CTF_MAGIC 0xC1FC1FC1u
#define RIP_EVENT_ID_COMPACT_MAX 30u /* ids 0..30 fit the compact header */
#define RIP_EVENT_ID_EXTENDED 31u
#define RIP_EVENT_TS_BITS 27u
#define RIP_STRING_MAX 256u /* bytes of a string field, NUL included */

/* Built-in categories (bits); programs use 8..255. */
#define RIP_CAT_CORO 0u /* coroutine switches */
#define RIP_CAT_FUNC 6u /* function entries and exits (rip:fn_entry, rip:fn_exit, rip:fn) */
#define RIP_CAT_USER 8u /* first free for programs */

/* Built-in event ids. */
#define RIP_EV_CORO_SWITCH 0u /* fields: to, from (slot index + 1 of a coroutine; 0: the thread) */
#define RIP_EV_FN_ENTRY 1u    /* field: fn (a function id): 8 bytes with the compact header */
#define RIP_EV_FN_EXIT 2u     /* field: fn */
#define RIP_EV_FN 3u	      /* fields: id, addr: function id id is the function at addr */

/* hdr.ev_mode: what a writer does when its ring is full */
enum rip_ev_mode {
	RIP_MODE_OVERWRITE = 0, /* flight recorder: overwrite the oldest packet (default) */
	RIP_MODE_DISCARD = 1,	/* drop new events and count them */
	RIP_MODE_BLOCK = 2,	/* wait for the consumer (bounded: then discard and count) */
};

/* struct rip_evtype.fields[].type */
enum rip_field_type {
	RIP_FT_U8 = 1,
	RIP_FT_U16,
	RIP_FT_U32,
	RIP_FT_U64,
	RIP_FT_S8,
	RIP_FT_S16,
	RIP_FT_S32,
	RIP_FT_S64,
	RIP_FT_HEX64,	    /* u64 shown in hex (addresses, handles) */
	RIP_FT_STRING,	    /* NUL-terminated, at most RIP_STRING_MAX bytes; last field only */
	RIP_FT_HEX64_ARRAY, /* u32 count then count u64 (at most RIP_ARRAY_MAX); last field only */
};

#define RIP_ARRAY_MAX 256u
/* Does a field of this type end the event with variable-size data? */
#define RIP_FT_IS_TAIL(t) ((t) == RIP_FT_STRING || (t) == RIP_FT_HEX64_ARRAY)

/*
 * Bytes of a field of this type in an event: 1, 2, 4 or 8 for an integer,
 * 0 for a tail (its size is in the event).  The writer's fast path, its slow
 * path and every reader size fields with this one function.
 */
static inline uint32_t rip_field_size(uint32_t type)
{
	switch (type) {
	case RIP_FT_U8:
	case RIP_FT_S8:
		return 1;
	case RIP_FT_U16:
	case RIP_FT_S16:
		return 2;
	case RIP_FT_U32:
	case RIP_FT_S32:
		return 4;
	case RIP_FT_STRING:
	case RIP_FT_HEX64_ARRAY:
		return 0;
	default:
		return 8;
	}
}

/* slot.state */
enum rip_slot_state {
	RIP_SLOT_FREE = 0,    /* never used */
	RIP_SLOT_RUNNING = 1, /* thread alive / coroutine running on a thread */
	RIP_SLOT_WAITING = 2, /* coroutine parked (switched out) */
	RIP_SLOT_EXITED = 3,  /* thread exited / coroutine destroyed; history kept */
};

/* slot.kind */
enum rip_slot_kind {
	RIP_KIND_NONE = 0,
	RIP_KIND_THREAD = 1,
	RIP_KIND_CORO = 2,
};

#define RIP_CLOCK_PAIRS 24u /* calibration pairs kept in the header */

/* hdr.clock_kind: what the tick counts in the file are */
enum rip_clock_kind {
	RIP_CLOCK_MONO_RAW = 1, /* CLOCK_MONOTONIC_RAW nanoseconds */
	RIP_CLOCK_TSC = 2,	/* x86 invariant TSC, calibrated by clock_hz */
};

/* hdr.flags */
#define RIP_F_LEGACY_API 0x1u /* written through librip.h (rip_create_ring) */
#define RIP_F_FORKED 0x2u     /* the file of a child, copied from its parent at fork */

/* hdr.proc_flags: written while the process runs */
#define RIP_P_EXITED 0x1u   /* returned from main, called exit() (_exit(): preloaded) */
#define RIP_P_MOD_FULL 0x2u /* the module map ran out of entries */
#define RIP_P_CLOSED 0x4u   /* rip_ring_close() was called: no new slots are taken */
#define RIP_P_EXECED 0x8u   /* the process called execve(): its new image has a new file */
/* a second librip in the process (the program's, linked in statically) stayed off: see format.md */
#define RIP_P_SECOND_OFF 0x10u
/* the main thread set its own name (preloaded prctl, pthread_setname_np): its comm is no sign */
#define RIP_P_RENAMED 0x20u

/* hdr.sample_flags */
#define RIP_SAMPLE_F_ON 0x1u	    /* the sampler started (a handler, timers per thread) */
#define RIP_SAMPLE_F_NO_SIGNAL 0x2u /* no free realtime signal: nothing is sampled */
/* the program installed a handler for our signal: it gets the signals that are not our timers' */
#define RIP_SAMPLE_F_SIG_SHARED 0x4u
#define RIP_SAMPLE_F_NO_FP 0x8u /* no frame-pointer walk on this architecture: IPs only */

/*
 * A CPU sample (rip run --sample): the interrupted instruction pointer,
 * then the return addresses of a frame-pointer walk, each entry tagged in
 * its top 16 bits:
 *
 *	entry = RIP_SAMPLE_TAG << 56 | depth << 48 | address (48 bits)
 *
 * depth 0 is the interrupted IP (a sample starts there), 1.. the return
 * addresses, outermost last.  A sample is written as one batch of entries
 * into the sample ring of the slot the thread runs (struct
 * rip_sample_ring), which the sampler's signal handler alone writes: the
 * entries, then a single store-release of seq.  Files made before the
 * sample area (hdr.sample_off 0) hold them in the snap rings instead,
 * where the tag told them from rip_snap() positions; a handler that
 * interrupted rip_snap() between its load and its store of snap_seq could
 * move the sequence back there, which is why they moved.
 */
#define RIP_SAMPLE_TAG 0x5Au
#define RIP_SAMPLE_MAX_DEPTH 8u
#define RIP_SAMPLE_ADDR_MASK ((1ull << 48) - 1)
#define RIP_SAMPLE_IS(e) ((uint64_t)(e) >> 56 == RIP_SAMPLE_TAG)
#define RIP_SAMPLE_DEPTH_OF(e) ((uint32_t)((uint64_t)(e) >> 48) & 0xffu)
#define RIP_SAMPLE_ENTRY(depth, addr)                                                              \
	((uint64_t)RIP_SAMPLE_TAG << 56 | (uint64_t)(depth) << 48 |                                \
	 (RIP_SAMPLE_ADDR_MASK & (uint64_t)(addr)))

/* module.flags */
#define RIP_MOD_EXE 0x1u	/* the main executable */
#define RIP_MOD_VDSO 0x2u	/* the kernel's vDSO (no file) */
#define RIP_MOD_UNLOADED 0x4u	/* dlclose'd; unload_ts says when */
#define RIP_MOD_PATH_TRUNC 0x8u /* path longer than RIP_MODULE_PATH_MAX - 1 */

struct rip_file_hdr {
	/* identity: 0 */
	char magic[8];	     /* RIP_MAGIC */
	uint32_t version;    /* RIP_FORMAT_VERSION */
	uint32_t hdr_size;   /* RIP_HDR_SIZE */
	uint64_t byte_order; /* RIP_BYTE_ORDER_MARK as the writer stores it */
	uint8_t ptr_size;    /* sizeof(void *) of the writer */
	uint8_t pad0[3];
	uint32_t flags;	     /* RIP_F_* */
	uint64_t file_size;  /* bytes; equals the file's size */
	uint64_t slot_off;   /* RIP_SLOTS_OFFSET */
	uint32_t slot_size;  /* RIP_SLOT_SIZE */
	uint32_t slot_count; /* slots in the pool */
	uint32_t snap_depth; /* RIP_SNAP_DEPTH */
	uint32_t snap_off;   /* RIP_SNAP_OFFSET */
	uint64_t fifo_off;   /* free queue: slot_count cells */
	uint64_t mod_off;    /* module map */
	uint32_t mod_size;   /* RIP_MODULE_SIZE */
	uint32_t mod_cap;    /* entries the map holds */
	uint64_t types_off;  /* event types: types_cap entries */
	uint32_t types_cap;
	uint32_t type_size;	 /* RIP_EVTYPE_SIZE */
	uint64_t cats_off;	 /* category names: RIP_CATEGORIES entries */
	uint64_t ev_fifo_off;	 /* free event-ring queue: ev_rings cells */
	uint64_t ev_ctl_off;	 /* struct rip_evring [ev_rings] */
	uint64_t ev_off;	 /* data of the big rings: ev_big * ev_ring_size bytes */
	uint32_t ev_rings;	 /* event rings in the pool, big and small (0: no events) */
	uint32_t ev_ring_size;	 /* bytes per big ring, a power of two */
	uint32_t ev_packet_size; /* bytes per packet of a big ring, a power of two */
	uint32_t ev_mode;	 /* enum rip_ev_mode */
	/* rings [ev_big, ev_rings) are small (ev_big 0: every ring is big, as before these) */
	uint32_t ev_big;	       /* big rings, the first taken */
	uint32_t ev_small_ring_size;   /* bytes per small ring, a power of two */
	uint32_t ev_small_packet_size; /* bytes per packet of a small ring */
	/*
	 * +1 by a recorder that attaches to a running process (rip record PID
	 * of a process rip run did not start): the preload library defines
	 * each stack again at its next use, so that the recorder's trace has
	 * the stacks defined before it came.  Relaxed on both sides: a hint.
	 */
	uint32_t bt_gen;
	uint64_t ev_small_off; /* data of the small rings */
	/* the watcher's stack copies (preload/watch.c): watch_copies buffers from watch_off */
	uint64_t watch_off;	  /* 0: the file has no copy area */
	uint32_t watch_copy_size; /* bytes per buffer: a struct rip_watch_copy, then stack */
	uint32_t watch_copies;	  /* buffers in the pool */
	/* CPU samples (rip run --sample): one struct rip_sample_ring per slot from sample_off */
	uint64_t sample_off;  /* 0: none (samples are tagged snap-ring entries, if any) */
	uint32_t sample_size; /* RIP_SAMPLE_RING_SIZE */
	uint32_t pad1s;
	/* function tracing: one struct rip_fn_stack per slot from fn_off, and the function table */
	uint64_t fn_off;     /* 0: none (the file of a process that traces no functions) */
	uint32_t fn_size;    /* RIP_FN_STACK_SIZE */
	uint32_t fn_ids;     /* entries of the function table: ids 1..fn_ids */
	uint64_t fn_tab_off; /* the function table: u64 [fn_ids], entry id - 1 (0: none yet) */
	uint8_t pad1w[240 - 232];
	/* CPU sampling (rip run --sample), set by the preload library at start: 240 */
	uint32_t sample_hz;    /* samples per second of CPU time asked; 0: sampling off */
	uint32_t sample_sig;   /* the realtime signal its timers send */
	uint32_t sample_depth; /* frames per sample at most, the interrupted IP included */
	uint32_t pad1b;
	uint8_t pad1c[512 - 256];

	/* process: 512 */
	int32_t pid;
	int32_t ppid;
	uint64_t start_ticks;	  /* /proc/PID/stat starttime: tells pid reuse apart */
	uint64_t create_realtime; /* CLOCK_REALTIME ns when the file was made */
	char boot_id[40];	  /* /proc/sys/kernel/random/boot_id, NUL-terminated */
	char comm[16];		  /* program name, NUL-terminated */
	char exe[RIP_EXE_MAX];	  /* /proc/self/exe, NUL-terminated */
	char host[64];		  /* uname nodename, NUL-terminated */
	/* forked children followed that could create no ring file, for lack of permission */
	uint32_t forks_denied; /* added to by each such child (relaxed), read once they are done */
	int32_t forks_denied_err; /* the errno of the last (EACCES, EPERM) */
	/*
	 * The inode of the writer's pid namespace (/proc/self/ns/pid), 0 when
	 * unknown: pid and the slots' tids are that namespace's, and a reader
	 * in another one finds the process by it (its NSpid).
	 */
	uint64_t pidns;
	uint8_t pad2[1536 - 512 - 592 - 64 - 16];

	/* clock: 1536 */
	uint32_t clock_kind; /* enum rip_clock_kind */
	uint32_t pad3;
	uint64_t clock_hz;	   /* ticks per second */
	uint64_t clock_base_ticks; /* a tick count ... */
	uint64_t clock_base_ns;	   /* ... and CLOCK_MONOTONIC_RAW at the same instant */
	int64_t realtime_offset;   /* CLOCK_REALTIME - CLOCK_MONOTONIC_RAW, ns, at creation */
	/*
	 * Calibration pairs (ticks, CLOCK_MONOTONIC_RAW ns) read together, a
	 * ring of RIP_CLOCK_PAIRS: 1576.  Added from time to time (at exit, by
	 * the watcher's sweeps, by a recorder) so that readers turn ticks into
	 * nanoseconds from the pairs rather than from clock_hz alone: a rate
	 * measured in 5 ms is good to a few ppm (tens of us after 10 s), and a
	 * virtual machine moved to another host may tick at another rate.
	 */
	uint32_t clock_npairs; /* pairs added so far (the newest RIP_CLOCK_PAIRS are kept) */
	uint32_t pad3b;
	struct rip_clock_pair {
		uint64_t ticks; /* 0: none (or being written) */
		uint64_t ns;
	} clock_pairs[RIP_CLOCK_PAIRS];
	uint8_t pad4[2048 - 1536 - 48 - 16 * RIP_CLOCK_PAIRS];

	/* control words: 2048; written from outside by rip enable/disable */
	uint64_t enable[RIP_CATEGORY_WORDS]; /* one bit per category */
	/* the watcher thread (preload/watch.c): 2080; see "Watcher" in doc/format.md */
	uint32_t watch_req;	  /* futex word: a reader adds 1 to ask for a sweep */
	uint32_t watch_done;	  /* futex word: the watch_req value the last sweep served */
	uint32_t watch_status;	  /* enum rip_watcher_status */
	int32_t watch_err;	  /* errno behind RIP_WATCHER_FAILED or _DENIED */
	int32_t watch_tid;	  /* the watcher's thread id, 0: none */
	uint32_t watch_period_ms; /* at most this long between two sweeps (when nobody asks) */
	uint64_t watch_sweeps;	  /* sweeps done */
	uint64_t watch_sweep_ts;  /* ticks when the last sweep ended */
	uint64_t watch_sweep_ns;  /* how long the last sweep took */
	uint32_t watch_tasks;	  /* last sweep: threads in /proc/self/task */
	uint32_t watch_blocked;	  /* ... blocked in the kernel with no wait record */
	uint32_t watch_copied;	  /* ... of those, with a stack copy kept */
	uint32_t watch_moved;	  /* ... copies dropped: the thread moved while copied */
	uint32_t watch_nocopy;	  /* ... blocked threads left without a copy: pool full */
	uint32_t watch_noslot;	  /* ... threads with no slot (not seen) */
	uint32_t watch_denied;	  /* ... threads whose /proc files refused us (EACCES) */
	uint32_t pad5a;
	/* patching (-fpatchable-function-entry): 2160; rip enable asks, the watcher answers */
	uint32_t patch_req; /* a requester adds 1 (the sites in PATH.patch), then wakes watch_req */
	uint32_t patch_done;   /* futex word: the patch_req value the watcher served last */
	int32_t patch_err;     /* that request's errno, 0: none */
	uint32_t patch_ok;     /* sites it changed */
	uint32_t patch_failed; /* sites it left as they were */
	uint32_t patch_on;     /* sites patched now */
	uint8_t pad5w[2304 - 2184];
	/* CPU sampling status: 2304; written by the traced process (relaxed counters) */
	uint32_t sample_flags;	/* RIP_SAMPLE_F_* */
	uint32_t sample_timers; /* per-thread timers armed now */
	uint64_t sample_fail;	/* timer_create failures (threads left unsampled) */
	int32_t sample_errno;	/* the errno of the last failure */
	uint32_t pad5b;
	uint64_t samples;	 /* samples stored into slots */
	uint64_t sample_noslot;	 /* timer signals on a thread with no slot (dropped, counted) */
	uint64_t sample_foreign; /* signals of our number that were not our timers' */
	uint64_t sample_overrun; /* timer periods merged into another's signal (si_overrun) */
	uint8_t pad5c[3072 - 2360];

	/* counters: 3072; the contended ones (FIFO head and tail) on their own cache lines */
	uint32_t fresh;	   /* slots [0, fresh) have been used at least once */
	uint32_t overflow; /* attach attempts that found the pool empty */
	uint8_t pad6[56];
	uint64_t fifo_head; /* free queue: next cell to take */
	uint8_t pad7[56];
	uint64_t fifo_tail; /* free queue: next cell to fill */
	uint8_t pad8[56];
	uint32_t mod_count;    /* module entries [0, mod_count) are valid (release) */
	uint32_t proc_flags;   /* RIP_P_* */
	uint64_t exit_ts;      /* clock ticks at a clean exit, 0 otherwise */
	uint64_t live_threads; /* thread slots attached now */
	uint64_t live_coros;   /* coroutine slots that exist now */
	uint32_t types_count;  /* event types [0, types_count) are valid (release) */
	uint32_t ev_fresh;     /* event rings [0, ev_fresh) have been used */
	uint32_t ev_overflow;  /* threads that found no free event ring */
	uint32_t ev_consumer;  /* pid of the consumer of every ring, 0: none (a hint) */
	uint64_t ev_lost;      /* events lost with no ring to count them: none free, or
				     emitted by a signal handler while the thread took one */
	uint32_t ev_beat;      /* the consumer's heartbeat: +1 as it goes over the rings */
	uint32_t pad10;
	uint64_t ev_fifo_head; /* free event-ring queue: next cell to take */
	uint8_t pad11[56];
	uint64_t ev_fifo_tail; /* free event-ring queue: next cell to fill */
	uint8_t pad12[56];
	uint32_t fn_count; /* function ids handed out (entries [0, fn_count) written, or 0) */
	uint32_t fn_full;  /* functions left without an id: the table was full */
	uint8_t pad13[4096 - 3464];
};

/* slot.wait.kind: the blocking call a thread is in (preload wrappers) */
enum rip_wait_kind {
	RIP_WAIT_NONE = 0, /* not in a wrapped call */
	RIP_WAIT_READ,	   /* read, readv, pread (arg: fd) */
	RIP_WAIT_WRITE,	   /* write, writev, pwrite (arg: fd) */
	RIP_WAIT_RECV,	   /* recv, recvfrom, recvmsg (arg: fd) */
	RIP_WAIT_SEND,	   /* send, sendto, sendmsg (arg: fd) */
	RIP_WAIT_ACCEPT,   /* accept, accept4 (arg: fd) */
	RIP_WAIT_CONNECT,  /* connect (arg: fd) */
	RIP_WAIT_POLL,	   /* poll, ppoll (arg: nfds) */
	RIP_WAIT_SELECT,   /* select, pselect (arg: nfds) */
	RIP_WAIT_EPOLL,	   /* epoll_wait, epoll_pwait, epoll_pwait2 (arg: epoll fd) */
	RIP_WAIT_SLEEP,	   /* nanosleep, clock_nanosleep, sleep, usleep (arg: ns to sleep) */
	RIP_WAIT_MUTEX,	   /* pthread_mutex_lock, _timedlock (arg: mutex address) */
	RIP_WAIT_COND,	   /* pthread_cond_wait, _timedwait (arg: cond address) */
	RIP_WAIT_JOIN,	   /* pthread_join (arg: pthread_t) */
	RIP_WAIT_SEM,	   /* sem_wait, sem_timedwait (arg: sem address) */
	RIP_WAIT_SIGNAL,   /* sigwait, sigwaitinfo, sigtimedwait, sigsuspend (arg: the set) */
	RIP_WAIT_CHILD,	   /* wait, waitpid, wait4, waitid (arg: pid asked) */
	RIP_WAIT_FUTEX,	   /* syscall(SYS_futex) (arg: futex address) */
	RIP_WAIT_STDIO,	   /* fread, fgets, getline... on a FILE (arg: fd) */
	RIP_WAIT_SYSTEM,   /* system, popen's pclose */
	RIP_WAIT_RWLOCK,   /* pthread_rwlock_rdlock, _wrlock (arg: lock address) */
	RIP_WAIT_BARRIER,  /* pthread_barrier_wait (arg: barrier address) */
	RIP_WAIT_SYSCALL,  /* any other system call made through syscall() (arg: its number) */
	RIP_WAIT_PAUSE,	   /* pause (no arg; files before it recorded RIP_WAIT_SIGNAL, set 0) */
	RIP_WAIT_KINDS	   /* one past the last */
};

/*
 * What a thread blocks in, written by the thread itself (preload wrappers)
 * before the blocking call and cleared after it.  A signal handler that
 * calls a wrapped function saves the record, writes its own and restores
 * the saved one.  Protocol (single writer, reader outside):
 *
 *	w->seq++ (odd: changing); compiler barrier; fields; compiler barrier;
 *	w->kind = K; w->seq++ (even; store-release)
 *
 * A reader loads seq (acquire), copies, fences (acquire) and loads seq again:
 * a changed or odd seq means the record moved under it.  After a crash an
 * odd seq says the record was half-written.
 */
struct rip_wait {
	uint32_t kind;	/* enum rip_wait_kind; 0: none */
	uint32_t seq;	/* seqlock, written by the thread */
	uint64_t since; /* ticks when the wait began (0: not timed) */
	uint64_t ra;	/* the wrapped function's return address (its caller) */
	uint64_t cfa;	/* the caller's stack pointer at the call (the wrapper's CFA) */
	uint64_t fp;	/* the caller's frame pointer */
	uint64_t arg;	/* what it waits on, by kind (see enum rip_wait_kind) */
};

/*
 * slot.wait_tmo: how long the wait of the record may last, counted from
 * wait.since, as the wrapper was given it (an absolute deadline is turned
 * into the time left when the wait began, against the clock the call
 * measures it with).  Written and read under wait.seq, with the record.
 *
 *	0			no timeout (or none known)
 *	bit 31 clear		microseconds, 1 to 2^31 - 1 (up to 35 minutes)
 *	bit 31 set		seconds in bits 0-30 (0: a deadline already past;
 *				RIP_WAIT_TMO_MAX: 68 years or more)
 */
#define RIP_WAIT_TMO_SEC 0x80000000u
#define RIP_WAIT_TMO_MAX 0xffffffffu

/* The slot.wait_tmo of a timeout of ns nanoseconds (never 0). */
static inline uint32_t rip_wait_tmo_pack(uint64_t ns)
{
	uint64_t us = ns / 1000 + (ns % 1000 != 0), s;

	if (ns && us < RIP_WAIT_TMO_SEC)
		return (uint32_t)us;
	s = ns / 1000000000u;
	return s < (RIP_WAIT_TMO_MAX & ~RIP_WAIT_TMO_SEC) ? RIP_WAIT_TMO_SEC | (uint32_t)s :
							    RIP_WAIT_TMO_MAX;
}

/* The nanoseconds of a slot.wait_tmo that is not 0. */
static inline uint64_t rip_wait_tmo_ns(uint32_t v)
{
	return v & RIP_WAIT_TMO_SEC ? (uint64_t)(v & ~RIP_WAIT_TMO_SEC) * 1000000000u :
				      (uint64_t)v * 1000u;
}

/* hdr.watch_status */
enum rip_watcher_status {
	RIP_WATCHER_NONE = 0,	 /* no watcher: not preloaded, or a single-threaded program */
	RIP_WATCHER_RUNNING = 1, /* sweeping */
	RIP_WATCHER_OFF = 2,	 /* turned off (RIP_WATCH=0) */
	RIP_WATCHER_DENIED = 3,	 /* /proc/self/task/T refused it (a non-dumpable process) */
	RIP_WATCHER_FAILED = 4,	 /* could not start: watch_err says why */
	RIP_WATCHER_STOPPED = 5, /* stopped for unshare/setns, or at fork in the parent's copy */
	RIP_WATCHER_PENDING = 6, /* starts with the program's first pthread_create */
};

/* rip_watch.flags */
#define RIP_WATCH_SEEN 0x1u	/* written by a sweep (sweep_ts says which) */
#define RIP_WATCH_BLOCKED 0x2u	/* in the kernel: nr, sp, pc from its syscall file */
#define RIP_WATCH_RUNNING 0x4u	/* on a CPU or runnable: nothing to copy */
#define RIP_WATCH_COPY 0x8u	/* copy holds its stack (index + 1 of a buffer) */
#define RIP_WATCH_MOVED 0x10u	/* it moved while its stack was copied: copy dropped */
#define RIP_WATCH_NOPOOL 0x20u	/* blocked, but every copy buffer was taken */
#define RIP_WATCH_DENIED 0x40u	/* its /proc files refused us (EACCES) */
#define RIP_WATCH_WAITREC 0x80u /* it had a wait record: the wrappers cover it */
#define RIP_WATCH_GONE 0x100u	/* no such task any more (exited without releasing its slot) */

/*
 * What the watcher thread last saw of a thread (slot.watch), written by the
 * watcher only, under the seqlock seq (odd while being written; readers copy
 * and compare as for the wait record).  nr, sp, pc and args are those of
 * /proc/self/task/TID/syscall (nr -1: blocked outside a system call).
 */
struct rip_watch {
	uint32_t seq;	   /* seqlock, written by the watcher */
	uint32_t flags;	   /* RIP_WATCH_* */
	int32_t nr;	   /* system call number */
	uint32_t copy;	   /* index + 1 of its buffer in the copy area, 0: none */
	uint64_t sweep_ts; /* ticks of the sweep that wrote this */
	uint64_t since_ts; /* ticks of the first sweep that saw it blocked here */
	uint64_t sp;	   /* user stack pointer at the system call */
	uint64_t pc;	   /* user instruction pointer (after the syscall instruction) */
	uint64_t args[3];  /* the first three arguments */
	uint32_t copy_len; /* bytes of stack in the copy */
	char state;	   /* /proc stat state letter (S, D, T...), 0: not read */
	uint8_t pad[3];
};

/*
 * The head of a buffer of the copy area; copy_size - 128 bytes of stack
 * follow, copied from sp upwards.  Written by the watcher under seq
 * (odd while being written); slot and tid say whose stack it is: a reader
 * takes it only when they match the slot whose record points here.
 */
struct rip_watch_copy {
	uint32_t seq;	   /* seqlock, written by the watcher */
	uint32_t slot;	   /* index + 1 of the slot of the thread, 0: free */
	int32_t tid;	   /* the thread */
	uint32_t len;	   /* bytes of stack that follow */
	uint64_t sweep_ts; /* ticks of the sweep that copied it */
	uint64_t sp;	   /* address of the first byte copied */
	uint64_t pc;
	int64_t nr;
	uint64_t args[6];
	uint8_t pad[128 - 96];
};

#define RIP_WATCH_COPY_HDR 128u

struct rip_slot {
	/* hot line: written by the slot's owner */
	uint32_t snap_seq;  /* snaps taken since the slot was (re)used */
	uint32_t state;	    /* enum rip_slot_state */
	uint64_t switch_ts; /* ticks of the last state change */
	int32_t tid;	    /* owning thread; for a coroutine, where it last ran */
	uint32_t kind;	    /* enum rip_slot_kind */
	uint32_t gen;	    /* seqlock: odd while being set up, +2 each time taken */
	uint32_t coro;	    /* thread slot: index + 1 of the coroutine running on it */
	uint64_t attach_ts; /* ticks when taken */
	uint64_t exit_ts;   /* ticks when released, 0 while in use */
	uint32_t switches;  /* coroutine: times switched in */
	uint32_t index;	    /* this slot's own index (self-check for readers) */
	uint32_t user_id;   /* librip.h: the id given to rip_init() */
	uint32_t wait_tmo;  /* the wait record's timeout (RIP_WAIT_TMO_*), under wait.seq */

	char name[RIP_NAME_MAX];       /* NUL-terminated */
	struct rip_wait wait;	       /* 128: what the thread blocks in, written by its wrappers */
	struct rip_watch watch;	       /* 176: what the watcher thread last saw (format.md) */
	uint64_t snap[RIP_SNAP_DEPTH]; /* instruction pointers */
};

/*
 * The CPU samples of one slot (hdr.sample_off + index * RIP_SAMPLE_RING_SIZE):
 * entry k of the ring holds sample entry k, k + RIP_SAMPLE_RING, ...; seq
 * counts the entries written (store-release after them), gen is the slot's
 * gen when they were (samples of an earlier owner of the slot are not the
 * current one's).  Written only by the sampler's handler on the thread
 * running the slot; readers copy, then check seq again (the snap-ring
 * protocol).
 */
#define RIP_SAMPLE_RING 31u
#define RIP_SAMPLE_RING_SIZE 256u
struct rip_sample_ring {
	uint32_t seq;
	uint32_t gen;
	uint64_t e[RIP_SAMPLE_RING];
};

/*
 * Function tracing (lib/func.c): the shadow call stack of one slot
 * (hdr.fn_off + index * RIP_FN_STACK_SIZE), what code built with
 * -finstrument-functions entered and did not leave yet, outermost first.
 * Written only by the thread running the slot (a coroutine's stack follows
 * the coroutine from thread to thread):
 *
 *	push:	frame[d] = { fn, cfa };  state = state + RIP_FN_PUSH (release)
 *	pop:	state = state - 1 (release)
 *
 * where d is the depth, the low 32 bits of state; frames deeper than
 * RIP_FN_DEPTH are counted in the depth and not stored.  The high 32 bits
 * count pushes, so that a reader that loads state (acquire), copies the
 * frames, fences (acquire) and loads state again knows that no frame
 * changed under it when the pushes are the same (pops only shorten the
 * stack).  owner is the low 32 bits of the slot's attach_ts when the stack
 * was started: a stack of another owner is an earlier owner's (the slot's
 * gen would not do: a rename moves it).  A frame's cfa is its canonical frame
 * address (the caller's stack pointer before the call): a frame whose cfa
 * is at or below the one of a function being entered, on the same stack, is
 * gone (a longjmp, an exception, a coroutine switch jumped over its exit),
 * and the hooks drop it, counted in resync; frames of functions inlined
 * into one another share their cfa and stay.
 */
#define RIP_FN_DEPTH 63u
/*
 * The fn of a rip:fn_exit the hooks write when a longjmp or an exception
 * dropped levels past the RIP_FN_DEPTH frames kept, whose functions are not
 * kept: every call still open past the RIP_FN_DEPTH outermost of its
 * thread or coroutine ends there (doc/format.md, "Function tracing").
 */
#define RIP_FN_ID_DEEP 0xffffffffu
#define RIP_FN_STACK_SIZE 1024u
#define RIP_FN_PUSH ((1ull << 32) | 1u) /* state: one more push, one level deeper */
#define RIP_FN_STATE_DEPTH(s) ((uint32_t)(s))
#define RIP_FN_STATE_PUSHES(s) ((uint32_t)((uint64_t)(s) >> 32))

/*
 * A request to patch or unpatch functions built with
 * -fpatchable-function-entry (lib/patch.c), in the file PATH.patch next to
 * the ring file PATH: this header, then n u64 addresses of the sites (the
 * functions' entries).  Unpatching with n 0: every site patched.
 */
#define RIP_PATCH_MAGIC "RIPPATCH" /* 8 bytes with the NUL */
#define RIP_PATCH_MAX (1u << 22)
/*
 * -fpatchable-function-entry=N,M lists where a function's nops begin, M
 * bytes before its entry: a site that is no function's start stands for
 * the next function's if that is at most this many bytes on.
 */
#define RIP_PATCH_PREFIX_MAX 64u
struct rip_patch_list {
	char magic[8];
	uint32_t op; /* 1: patch, 0: unpatch */
	uint32_t n;
	/* uint64_t addr[n] */
};
struct rip_fn_frame {
	uint64_t fn;  /* the function's entry address */
	uint64_t cfa; /* its canonical frame address */
};

struct rip_fn_stack {
	uint64_t state;	 /* depth | pushes << 32 */
	uint32_t owner;	 /* (uint32_t)slot.attach_ts when the stack started */
	uint32_t resync; /* frames dropped without their exit, exits without a frame */
	struct rip_fn_frame frame[RIP_FN_DEPTH];
};

/* Per event ring: the writer's line, then the consumer's. */
struct rip_evring {
	uint64_t written;   /* packets closed since the ring was created (release) */
	uint64_t discarded; /* events dropped or overwritten, running total */
	uint32_t owner;	    /* slot index + 1 of the writing thread, 0: free */
	int32_t tid;	    /* the writing thread */
	uint64_t attach_ts; /* ticks when the current owner took it */
	uint64_t blocked;   /* times a blocking writer had to wait */
	uint64_t stalled;   /* consumed + 1 when a blocking writer gave up waiting */
	uint8_t pad0[64 - 48];
	uint64_t consumed;     /* packets read by a streaming consumer (release) */
	uint32_t consumer_pid; /* unused: the file's ev_consumer names the consumer */
	uint32_t waiting;      /* futex word: 1 while a blocking writer may sleep on it */
	uint8_t pad1[64 - 16];
};

/*
 * The edges of the event-ring protocol, by name: every access to written,
 * consumed and the file's ev_consumer from the writer (lib/events.c) or a
 * consumer (read/evread.c, record/consume.c) goes through these, so that each
 * pair can be found by name.
 *
 *  - written: the writer counts a packet written after its contents and
 *    header (rip_evring_publish, release); a consumer reads it with
 *    rip_evring_written (acquire) before it copies packets below it.
 *  - consumed: a consumer moves it past the packets it copied
 *    (rip_evring_consume, release: its reads of the packets come first); the
 *    writer reads it (rip_evring_consumed, acquire) before it reuses a
 *    packet.  In overwrite mode both sides move it with a compare-and-swap.
 *  - ev_consumer (one word for the whole file, so that a ring taken later
 *    has the same consumer and a consumer never writes to rings not yet in
 *    use): a hint, not a publication.  The writer reads it relaxed
 *    (rip_file_consumer) only to choose between waiting, dropping and
 *    overwriting when its ring is full, and checks that the process is alive
 *    before it waits; no data is read through it.  A consumer that sets it
 *    late loses nothing it had not lost already: packets overwritten before
 *    it attached are counted in discarded either way.  It is set with a
 *    release store (rip_file_set_consumer) so that a writer that sees the
 *    pid also sees the consumed words the consumer started from.
 */
static inline void rip_evring_publish(struct rip_evring *r, uint64_t written)
{
	__atomic_store_n(&r->written, written, __ATOMIC_RELEASE); /* pairs: rip_evring_written */
}

static inline uint64_t rip_evring_written(const struct rip_evring *r)
{
	return __atomic_load_n(&r->written, __ATOMIC_ACQUIRE); /* pairs: rip_evring_publish */
}

static inline void rip_evring_consume(struct rip_evring *r, uint64_t consumed)
{
	__atomic_store_n(&r->consumed, consumed, __ATOMIC_RELEASE); /* pairs: rip_evring_consumed */
}

static inline uint64_t rip_evring_consumed(const struct rip_evring *r)
{
	return __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE); /* pairs: rip_evring_consume */
}

/*
 * waiting: a blocking writer whose ring is full arms it
 * (rip_evring_wait_arm), looks at consumed once more, and only then sleeps
 * on the word (FUTEX_WAIT while it is 1, with a timeout).  A consumer that
 * moved consumed asks rip_evring_waiter, which clears the word when it was
 * set; the consumer then wakes every sleeper (FUTEX_WAKE).  The two
 * sequentially consistent fences pair: either the writer sees the new
 * consumed and does not sleep, or the consumer sees waiting and wakes it.
 * A consumer that knows nothing of the word leaves the writer to its
 * timeout.
 */
static inline void rip_evring_wait_arm(struct rip_evring *r)
{
	__atomic_store_n(&r->waiting, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* pairs: the fence in rip_evring_waiter */
}

static inline int rip_evring_waiter(struct rip_evring *r)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* pairs: the fence in rip_evring_wait_arm */
	if (!__atomic_load_n(&r->waiting, __ATOMIC_RELAXED))
		return 0;
	__atomic_store_n(&r->waiting, 0, __ATOMIC_RELAXED);
	return 1;
}

static inline void rip_file_set_consumer(struct rip_file_hdr *h, uint32_t pid)
{
	__atomic_store_n(&h->ev_consumer, pid, __ATOMIC_RELEASE); /* a hint: see above */
}

static inline uint32_t rip_file_consumer(const struct rip_file_hdr *h)
{
	return __atomic_load_n(&h->ev_consumer, __ATOMIC_RELAXED); /* a hint: see above */
}

/*
 * ev_beat: the consumer adds 1 as it goes over the rings (rip_file_beat),
 * busy or not; a blocking writer whose ring stays full waits for as long
 * as the beat moves, and gives up only when it stood still for the bound
 * (a consumer stopped, or stuck).  A count only: no data is read through
 * it, so both sides use relaxed atomics.
 */
static inline void rip_file_beat(struct rip_file_hdr *h)
{
	__atomic_fetch_add(&h->ev_beat, 1, __ATOMIC_RELAXED); /* a count: see above */
}

static inline uint32_t rip_file_beats(const struct rip_file_hdr *h)
{
	return __atomic_load_n(&h->ev_beat, __ATOMIC_RELAXED); /* a count: see above */
}

/*
 * Where event ring i is: rings [0, ev_big) are big (ev_ring_size bytes cut
 * into ev_packet_size packets, from ev_off), the rest small (from
 * ev_small_off).  A file with ev_big 0 has big rings only.  The caller checks
 * i < ev_rings; h is a header the reader validated.
 */
static inline int rip_evring_is_big(const struct rip_file_hdr *h, uint32_t i)
{
	return !h->ev_big || i < h->ev_big;
}

static inline uint64_t rip_evring_data_off(const struct rip_file_hdr *h, uint32_t i)
{
	return rip_evring_is_big(h, i) ?
		       h->ev_off + (uint64_t)i * h->ev_ring_size :
		       h->ev_small_off + (uint64_t)(i - h->ev_big) * h->ev_small_ring_size;
}

static inline uint32_t rip_evring_bytes(const struct rip_file_hdr *h, uint32_t i)
{
	return rip_evring_is_big(h, i) ? h->ev_ring_size : h->ev_small_ring_size;
}

static inline uint32_t rip_evring_packet_bytes(const struct rip_file_hdr *h, uint32_t i)
{
	return rip_evring_is_big(h, i) ? h->ev_packet_size : h->ev_small_packet_size;
}

/* The start of every packet: CTF packet.header then packet.context. */
struct rip_packet {
	uint32_t magic;		     /* RIP_CTF_MAGIC */
	uint32_t stream_id;	     /* 0: the only stream class */
	uint64_t stream_instance_id; /* the ring's index */
	uint64_t timestamp_begin;    /* ticks */
	uint64_t timestamp_end;	     /* ticks; 0 while the packet is open */
	uint64_t content_size;	     /* bits used: header + events (commit, while open) */
	uint64_t packet_size;	     /* bits: ev_packet_size * 8 */
	uint64_t packet_seq_num;     /* ring->written when the packet was opened */
	uint64_t events_discarded;   /* ring->discarded when the packet was closed */
	int32_t tid;		     /* the thread that wrote it */
	uint32_t coro;		     /* slot index + 1 of the coroutine running at begin, 0 none */
	uint32_t events;	     /* events in the packet; set when closed */
	uint32_t open;		     /* 1 while being written, 0 once closed */
};

struct rip_evfield {
	char name[RIP_FIELD_NAME_MAX];
	uint32_t type; /* enum rip_field_type */
	uint32_t pad;
};

struct rip_evtype {
	uint32_t id;	   /* the event id in headers */
	uint32_t category; /* enable bit */
	uint32_t nfields;
	uint32_t flags;
	char name[RIP_EVTYPE_NAME_MAX];
	struct rip_evfield fields[RIP_EVENT_MAX_FIELDS];
	char desc[RIP_EVTYPE_DESC_MAX]; /* RIP_EVTYPE_KIND: what the kind is; else empty */
	uint8_t pad[RIP_EVTYPE_SIZE - 80 - RIP_EVENT_MAX_FIELDS * 40 - RIP_EVTYPE_DESC_MAX];
};

/*
 * struct rip_evtype.flags.  A type with RIP_EVTYPE_KIND declares a resource
 * kind (rip/module.h): it is named "kind:NAME", has no fields and is never
 * emitted; the res:* events of rip/resource.h name the kind by this type's
 * id.  The kind's flags (rip/module.h's RIP_KIND_*) are its other bits.
 */
#define RIP_EVTYPE_KIND 0x1u
#define RIP_EVTYPE_REFCOUNT 0x2u /* RIP_KIND_REFCOUNT */
#define RIP_EVTYPE_COUNTER 0x4u	 /* RIP_KIND_COUNTER */
#define RIP_EVTYPE_BUILTIN 0x8u	 /* librip-preload.so's own kind: mem, fd, shm, shm-map */

struct rip_category {
	char name[RIP_CATEGORY_NAME_MAX]; /* NUL-terminated; empty: unnamed */
};

struct rip_fifo_cell {
	uint64_t seq;  /* Vyukov bounded-queue sequence number */
	uint64_t slot; /* slot index */
};

struct rip_module {
	uint64_t bias;	       /* load bias: runtime address - ELF vaddr */
	uint64_t lo, hi;       /* runtime range covered by its PT_LOAD segments */
	uint64_t load_ts;      /* ticks when found mapped; 0 for the first scan, at open */
	uint64_t unload_ts;    /* ticks when dlclose'd, 0 while mapped */
	uint32_t flags;	       /* RIP_MOD_* */
	uint32_t build_id_len; /* 0 when the object has no NT_GNU_BUILD_ID */
	uint8_t build_id[RIP_BUILD_ID_MAX];
	char path[RIP_MODULE_PATH_MAX]; /* NUL-terminated */
	uint8_t pad[RIP_MODULE_SIZE - 48 - RIP_BUILD_ID_MAX - RIP_MODULE_PATH_MAX];
};

#ifdef __cplusplus
#define RIP_STATIC_ASSERT static_assert
#else
#define RIP_STATIC_ASSERT _Static_assert
#endif

RIP_STATIC_ASSERT(sizeof(struct rip_file_hdr) == RIP_HDR_SIZE, "header size");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, pid) == 512, "process block");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, exe) == 592, "exe");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, clock_kind) == 1536, "clock block");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, clock_npairs) == 1576, "clock pairs");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, enable) == 2048, "control words");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, fresh) == 3072, "counters");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, sample_hz) == 240, "sampling rate");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, pad1c) == 256, "sampling geometry");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, sample_flags) == 2304, "sampling");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, samples) == 2328, "samples");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, sample_overrun) == 2352, "overruns");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, pad5c) == 2360, "sampling status");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, fifo_head) == 3136, "fifo head");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, fifo_tail) == 3200, "fifo tail");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, mod_count) == 3264, "mod count");
RIP_STATIC_ASSERT(sizeof(struct rip_slot) == RIP_SLOT_SIZE, "slot size");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_slot, name) == 64, "slot name");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_slot, snap) == RIP_SNAP_OFFSET, "slot snap");
RIP_STATIC_ASSERT(sizeof(struct rip_wait) == 48, "wait record");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_slot, wait_tmo) == 60, "slot wait timeout");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_slot, wait) == 128, "slot wait");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_slot, watch) == 176, "slot watch");
RIP_STATIC_ASSERT(sizeof(struct rip_watch) == 80, "watcher record");
RIP_STATIC_ASSERT(sizeof(struct rip_watch_copy) == RIP_WATCH_COPY_HDR, "copy head");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, watch_off) == 176, "copy area");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, sample_off) == 192, "sample area");
RIP_STATIC_ASSERT(sizeof(struct rip_sample_ring) == RIP_SAMPLE_RING_SIZE, "sample ring");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, fn_off) == 208, "function area");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, fn_tab_off) == 224, "function table");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, fn_count) == 3456, "function ids");
RIP_STATIC_ASSERT(sizeof(struct rip_fn_stack) == RIP_FN_STACK_SIZE, "function stack");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, watch_req) == 2080, "watch words");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, patch_req) == 2160, "patch words");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, pad5w) == 2184, "watch counters");
RIP_STATIC_ASSERT((1u << RIP_SLOT_SHIFT) == RIP_SLOT_SIZE, "slot shift");
RIP_STATIC_ASSERT((RIP_SNAP_DEPTH & (RIP_SNAP_DEPTH - 1)) == 0, "depth power of two");
RIP_STATIC_ASSERT(sizeof(struct rip_fifo_cell) == 16, "fifo cell");
RIP_STATIC_ASSERT(sizeof(struct rip_module) == RIP_MODULE_SIZE, "module size");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, ev_mode) == 148, "event geometry");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, ev_small_off) == 168, "small rings");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, ev_consumer) == 3308, "consumer");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, ev_lost) == 3312, "events lost");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, ev_beat) == 3320, "consumer beat");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, types_count) == 3296, "types count");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, ev_fifo_head) == 3328, "ev fifo head");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_file_hdr, ev_fifo_tail) == 3392, "ev fifo tail");
RIP_STATIC_ASSERT(sizeof(struct rip_evring) == RIP_EVRING_SIZE, "evring size");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_evring, consumed) == 64, "evring consumer line");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_evring, waiting) == 76, "evring futex word");
RIP_STATIC_ASSERT(sizeof(struct rip_packet) == RIP_PACKET_HDR_SIZE, "packet header");
RIP_STATIC_ASSERT(__builtin_offsetof(struct rip_packet, content_size) == 32, "content size");
RIP_STATIC_ASSERT(sizeof(struct rip_evfield) == 40, "field size");
RIP_STATIC_ASSERT(sizeof(struct rip_evtype) == RIP_EVTYPE_SIZE, "event type size");
RIP_STATIC_ASSERT(sizeof(struct rip_category) == RIP_CATEGORY_NAME_MAX, "category size");

#endif /* RIP_ABI_H */
