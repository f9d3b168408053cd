/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/ringfile.h - reading ring files from outside the process that writes
 * them, live or after it died.  Every file is treated as hostile: the header
 * is validated against the file's real size before anything else is
 * touched, every offset and count is bounds-checked, and reads of the live
 * mapping are guarded against the file shrinking under us.
 */
#ifndef RIP_READ_RINGFILE_H
#define RIP_READ_RINGFILE_H

#include <limits.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <rip/abi.h>

#define RR_ERR_MAX 512
/*
 * The largest clock_base_ns and |realtime_offset| a header may hold (about 146
 * years): their sum, and times derived from them, stay far from int64_t's limits.
 */
#define RR_MAX_CLOCK_NS (INT64_C(1) << 62)

struct rr_file {
	char path[PATH_MAX];
	int fd;
	const uint8_t *map;	 /* the whole file, read-only, shared */
	size_t len;
	struct rip_file_hdr hdr; /* validated copy of the header */
	bool legacy_raw;	 /* a raw file of the original librip header */
	uint8_t *wmap;		 /* a writable mapping (consumers, rip enable), or NULL */
	bool unpacked;		 /* fd is a memory copy of a compressed file: never live */
	struct stat st;		 /* what was opened at path (fstat of its descriptor) */
};

/* How a file given to a reader is compressed (read/unpack.c). */
enum rr_packing {
	RR_PACK_NONE = 0,
	RR_PACK_GZIP,
	RR_PACK_ZSTD,
};

/*
 * What a compressed copy may unpack to (read/unpack.c says why): at most
 * RIP_UNPACK_MAX bytes (a size with an optional k, m, g or t), else
 * RR_UNPACK_MAX; of a ring file, no more than its header's file_size, which
 * must be what a file of its layout holds; and past the first
 * RR_UNPACK_FLOOR bytes of data (pages not all zero: pages of zeros stay
 * holes and cost nothing), no more than RR_UNPACK_RATIO bytes of data per
 * compressed byte read.
 */
#define RR_UNPACK_MAX (4ull << 30)
#define RR_UNPACK_FLOOR (32ull << 20)
#define RR_UNPACK_RATIO 256u
#define RR_UNPACK_ENV "RIP_UNPACK_MAX"

/* The compression its first n bytes show. */
enum rr_packing rr_packing_of(const uint8_t *head, size_t n);

/*
 * If the file open on fd is gzip or zstd data, unpack it into a memory file
 * (pages of zeros left as holes) and set *out to its descriptor, which the
 * caller closes; else *out = -1.  raw_max 0: the data must be a ring file,
 * refused as soon as its header is out if the header is not one rr_open
 * takes; else a raw file of at most raw_max bytes.  0, or -errno with the
 * reason in err (-EBADMSG: corrupt or truncated data, or a bad ring header;
 * -EFBIG: past one of the bounds above; -EINVAL: RIP_UNPACK_MAX is not a
 * size).
 */
int rr_unpack(int fd, const char *path, uint64_t raw_max, int *out, char *err, size_t errlen);

/*
 * Check a ring file's header against the file's size (every offset and
 * count, without overflow): 0, or -errno with the reason in err.
 */
int rr_check_hdr(const struct rip_file_hdr *h, uint64_t st_size, char *err, size_t len);

/*
 * Where the last area of a header that rr_check_hdr took ends: the
 * file_size a writer gives a file of that layout.
 */
uint64_t rr_hdr_extent(const struct rip_file_hdr *h);

/*
 * Reads of a mapping that its owner may truncate: if (rr_guard_enter(&jb))
 * { the file shrank } ... rr_guard_leave();
 *
 * The signal mask is not saved: the handler runs with SA_NODEFER and an
 * empty sa_mask, so the mask it jumps back with is the one of the read that
 * faulted; saving it cost a system call per guarded read (rip run guards
 * each read of each followed child's rings).
 */
void rr_guard_set(sigjmp_buf *jb);
void rr_guard_leave(void);
#define rr_guard_enter(jb) (sigsetjmp(*(jb), 0) ? (rr_guard_leave(), 1) : (rr_guard_set(jb), 0))

/* One slot as read: consistent, entries oldest to newest. */
struct rr_slot {
	uint32_t index;
	uint32_t gen;
	uint32_t state; /* enum rip_slot_state */
	uint32_t kind;	/* enum rip_slot_kind */
	int32_t tid;
	uint32_t coro;	/* thread: index + 1 of the coroutine it runs */
	uint32_t switches;
	uint32_t user_id;
	uint64_t switch_ts, attach_ts, exit_ts;
	uint32_t seq;	/* snap-ring entries written (snaps and sample entries) */
	uint32_t n;	/* valid entries in ip[] */
	uint64_t ip[RIP_SNAP_DEPTH]; /* rip_snap() positions, oldest to newest */
	char name[RIP_NAME_MAX];
	struct rip_wait wait; /* what it blocks in (kind 0: nothing, or not readable) */
	uint32_t wait_tmo;    /* its timeout: slot.wait_tmo (rip/abi.h), 0: none */
	bool wait_torn;	      /* the record was being written (odd seq, or kept moving) */
	/*
	 * The CPU samples (rip/abi.h, RIP_SAMPLE_TAG) of the slot's sample ring,
	 * or of its snap ring in files without a sample area, raw, oldest to
	 * newest; samp_pos[k] is the entry's position in its ring (0 ..
	 * samp_seq - 1), so that a reader tells the samples it saw already.
	 */
	uint32_t nsamp;
	uint64_t samp[RIP_SNAP_DEPTH];
	uint32_t samp_pos[RIP_SNAP_DEPTH];
	/* Sample entries written so far (the sample ring's seq; seq in older files). */
	uint32_t samp_seq;
};

struct rr_slots {
	struct rr_slot *v;
	size_t n;
	size_t corrupt;	 /* slots whose fields break the format's invariants */
	size_t changing; /* slots being set up or reused while we read (live only) */
	int first_bad;	 /* index of the first corrupt slot, -1 if none */
	char why[128];	 /* what was wrong with it */
};

/*
 * mkdir -p of an absolute path (changed in place, restored), each new level
 * 0700; the last must be a directory of ours that others cannot write (a
 * symlink planted there is not followed).  0 or -errno (-EPERM: not ours).
 */
int rr_mkdirs(char *path);

/* This boot's id (/proc/sys/kernel/random/boot_id) in buf, "" when unknown. */
void rr_boot_id(char *buf, size_t len);

/* CLOCK_MONOTONIC in ns: for timeouts, periods and rates of the tools. */
int64_t rr_mono_ns(void);

/* Format a one-line error into err (if given) and return code. */
int rr_fail(char *err, size_t len, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Does path start with a ring file's magic (a complete file, not one being created)? */
bool rr_is_ring(const char *path);

/*
 * Open path with flags (O_CLOEXEC added; O_NOFOLLOW honoured) only if it is
 * a regular file: the name is resolved once, without opening what it names
 * (O_PATH), checked on that descriptor, and the same file then opened
 * through /proc/self/fd.  Devices, FIFOs, sockets and directories are never
 * opened: opening some devices does something (a watchdog starts, a tape
 * rewinds), a FIFO may block; nor is one another user swaps in for the name
 * between a check (stat) and an open(2) of the name.
 * The descriptor, or -1 with errno (EINVAL: not a regular file; ELOOP: a
 * symbolic link with O_NOFOLLOW).
 */
int rr_open_regular(const char *path, int flags);

/*
 * Strings another user may have written (names in a ring file, symbols of
 * their binaries) reach the terminal of whoever runs rip, root too: a byte
 * that drives a terminal (a C0 control, DEL, a C1 control in UTF-8) would
 * set its title, clear it, write the clipboard (OSC 52).  rr_has_control:
 * does s hold one?  rr_printable: each one made '?', in place.
 */
bool rr_has_control(const char *s);
void rr_printable(char *s);

/* Is s a non-empty string of decimal digits? */
bool rr_all_digits(const char *s);

/*
 * dir "/" name into buf, dir's trailing slashes but a lone "/" dropped (a
 * path the user gave as "trace/" is shown as trace/NAME, not trace//NAME):
 * 0, or -ENAMETOOLONG.
 */
int rr_path_join(char *buf, size_t len, const char *dir, const char *name);

/*
 * The copy of its ring file that rip run keeps in a trace directory (a
 * dot file: CTF readers skip it), for rip ps and rip top after the process
 * is gone.
 */
#define RR_TRACE_RING ".rip-ring"

/*
 * Open TARGET, a pid (its ring file: rr_find_pid, opened as rr_open_owned
 * does and its header's pid checked again), a ring file path or a trace
 * directory (its RR_TRACE_RING copy), validated as rr_open does.  0, or
 * -errno with the reason in err (-ERANGE: a number that cannot be a pid;
 * -ENOENT for a trace without a copy; -EPERM, -EBADMSG: rr_find_pid).
 */
int rr_open_target(const char *target, struct rr_file *f, char *err, size_t errlen);


/*
 * Open and validate a ring file.  0, or -errno with a one-line explanation
 * in err (what is wrong, and what to do when there is something to do).
 */
int rr_open(const char *path, struct rr_file *f, char *err, size_t errlen);

/*
 * rr_open for a file found in a shared directory, not named by the user: a
 * symbolic link is not followed (O_NOFOLLOW), and what was opened (fstat of
 * the descriptor, not of the name, which another user may swap) must be a
 * regular file owned by owner, else -EPERM with a message naming its owner.
 */
int rr_open_owned(const char *path, uid_t owner, struct rr_file *f, char *err, size_t errlen);

/* "NAME (uid N)" for uid, or "uid N" when it has no name, into buf. */
const char *rr_user_name(uid_t uid, char *buf, size_t len);
void rr_close(struct rr_file *f);

/*
 * Map the file f (opened with rr_open, so checked) writable too, into
 * f->wmap, for the few words a reader may write: the enable bits and the
 * consumer's words of each event ring.  The file opened for writing must be
 * the one that was checked (same inode), not a file put in its place.  0, or
 * -errno with a message in err.  rr_close unmaps it.
 */
int rr_map_writable(struct rr_file *f, char *err, size_t errlen);

/*
 * Turn the categories whose bits are set in bits[RIP_CATEGORY_WORDS] on (or
 * off) in the live file f; before[], if not NULL, gets the words as they
 * were.  Maps f writable first if it is not.  0 or -errno with a message.
 */
int rr_enable_set(struct rr_file *f, const uint64_t *bits, bool on, uint64_t *before, char *err,
		  size_t errlen);

/*
 * Open a raw file written by the original librip header: tid-indexed slots
 * of a 64-byte name and 32 entries of 8-bit counter and 56-bit address.
 */
int rr_open_legacy(const char *path, struct rr_file *f, char *err, size_t errlen);

/*
 * Copy every slot that has ever been used (rr_cursor_next's, in an array).
 * Frees with rr_slots_free.
 */
int rr_read_slots(struct rr_file *f, struct rr_slots *out, char *err, size_t errlen);
void rr_slots_free(struct rr_slots *s);

/*
 * The slots ever used one at a time, for a reader that keeps what it
 * needs of each (counts, groups) rather than a copy of a million slots:
 *
 *	struct rr_cursor c;
 *	struct rr_slot s;
 *
 *	rr_cursor_open(f, &c, err, len);
 *	while ((ret = rr_cursor_next(&c, &s, err, len)) == 1)
 *		... s, one slot in use, as rr_read_slots copies it ...
 *	rr_cursor_close(&c);
 *
 * Slots are visited in index order up to the slots used when it was opened
 * (the live counter: fresh), each read under the SIGBUS guard with the
 * writer's protocols, and skipped as rr_read_slots skips them, with the same
 * counts.  The caller's code runs outside the guard.  Two things keep the
 * reader light on a big sparse file: the pages of the mapping behind the
 * cursor are given back (MADV_DONTNEED) every RR_CUR_WINDOW bytes, so it
 * holds a window of the file and not all it read; and sample rings that are
 * holes in the file are not read (a read of a hole in a tmpfs mapping
 * allocates it, growing the traced program's file).
 */
struct rr_cursor {
	struct rr_file *f;
	uint32_t next;	 /* the next slot to look at */
	uint32_t end;	 /* slots ever used when opened */
	size_t corrupt;	 /* as in struct rr_slots */
	size_t changing;
	int first_bad;
	char why[128];
	/* private */
	uint64_t slot_lo, samp_lo; /* where the pages not given back yet begin */
	uint64_t seg_lo, seg_hi;   /* a range of the sample area known to be ... */
	bool seg_hole;		   /* ... a hole, or data */
};

/* 0, or -errno with a message (-EIO: the file shrank; -EBADMSG: a corrupt header). */
int rr_cursor_open(struct rr_file *f, struct rr_cursor *c, char *err, size_t errlen);
/* The next slot in use into *d: 1, 0 at the end, -EIO when the file shrank. */
int rr_cursor_next(struct rr_cursor *c, struct rr_slot *d, char *err, size_t errlen);
/*
 * Slot i out of order (a thread's coroutine, by its link), filtered the
 * same way but not counted: 1 when it is in use, 0 when not, -EINVAL (no
 * such slot) or -EIO.  Its pages are given back unless the window holds them.
 */
int rr_cursor_get(struct rr_cursor *c, uint32_t i, struct rr_slot *d, char *err, size_t errlen);
/* Give back the pages still held.  The counts stay readable. */
void rr_cursor_close(struct rr_cursor *c);

/*
 * For a reader that polls a live file for what moved: marks[i] = gen << 32 |
 * snap_seq of slot i, for i < n (n at most the slots ever used, which the
 * caller read from the header: fresh), two loads a slot.  0, or -EIO when
 * the file shrank.
 */
int rr_slot_marks(struct rr_file *f, uint64_t *marks, uint32_t n, char *err, size_t errlen);
/*
 * One consistent copy of slot i (i < slot_count), as rr_read_slots makes
 * it: 0, 1 when it is free or kept changing while we read it, -EBADMSG
 * when it is corrupt (why in err), -EIO when the file shrank.
 */
int rr_read_slot(struct rr_file *f, uint32_t i, struct rr_slot *d, char *err, size_t errlen);

/* The module map: entries [0, n), each path NUL-terminated.  Free with free(). */
int rr_read_modules(struct rr_file *f, struct rip_module **out, size_t *n, char *err,
		    size_t errlen);

/* 1 if the process that wrote the file is alive, 0 if not. */
int rr_alive(struct rr_file *f);

/*
 * Is the process that wrote f still there, running another image (it
 * called execve, and the image it runs now does not map f)?  The image
 * marks the old file RIP_P_EXECED when it loads librip; one that does not
 * (an exec rip run does not follow loads no librip) is found this way.
 */
bool rr_replaced(const struct rr_file *f);

/*
 * Does pid, the process that wrote f (alive, or exited and not reaped yet:
 * exited), run another image now, one that loaded no librip (an execve rip
 * run does not follow)?  1 with the image in buf: its path
 * (/proc/PID/exe), or only its name (comm) once it exited; 0 when it runs
 * f's image; -errno when it cannot be told (alive, its image unreadable:
 * it may be exiting, and the name of a process that renamed itself would
 * pass for another image's).  Alive and still f's image,
 * 0 with its name now in buf (comm, which the program may have changed:
 * PR_SET_NAME), for the caller to tell a rename from an exec at its exit.
 */
int rr_exec_image(const struct rr_file *f, pid_t pid, bool exited, char *buf, size_t len);

/*
 * Mark f's file as left by its process for another image (RIP_P_EXECED),
 * for rip ps of the trace's copy: an exec that loads no librip marks
 * nothing itself.  Through f's writable mapping (a consumer's).  0 or
 * -errno.
 */
int rr_mark_execed(struct rr_file *f, char *err, size_t errlen);

/*
 * Check the clock fields of a header (kind, rate, base, realtime offset are in
 * range): 0, or -EBADMSG with a message.  rr_open does it; a trace's index too.
 */
int rr_check_clock(const struct rip_file_hdr *h, char *err, size_t len);

/*
 * Load the 32- or 64-bit word at byte off of the mapping (acquire: pairs with
 * the writer's release stores of the counters), guarded against the file
 * shrinking under us (SIGBUS): 0, or -EIO with a message.  For the words of
 * the live header the writer keeps changing; never inside another guard.
 */
int rr_live_u32(const struct rr_file *f, size_t off, uint32_t *v, char *err, size_t errlen);
int rr_live_u64(const struct rr_file *f, size_t off, uint64_t *v, char *err, size_t errlen);
/*
 * A copy of the header as it is now (the counters and flags the writer keeps
 * changing), read under the same guard: 0, or -EIO and *out the copy made at
 * open (f->hdr) when the file shrank.  Not for a legacy raw file.
 */
int rr_live_hdr(const struct rr_file *f, struct rip_file_hdr *out, char *err, size_t errlen);
/*
 * The calibration pairs as they are now into h (clock_npairs, clock_pairs:
 * added while the process runs), read under the same guard: 0 or -EIO.
 */
int rr_live_clock(const struct rr_file *f, struct rip_file_hdr *h, char *err, size_t errlen);
/*
 * The consumer's heartbeat (rip/abi.h, ev_beat) through the writable
 * mapping, guarded the same way; nothing when there is none.
 */
void rr_beat(struct rr_file *f);
/* Add a calibration pair (rip/abi.h, clock_pairs) through the writable mapping, guarded. */
void rr_clock_pair(struct rr_file *f);
/* Store pid as the consumer in the writable mapping, guarded the same way.  0 or -EIO. */
int rr_set_consumer(struct rr_file *f, uint32_t pid, char *err, size_t errlen);
/*
 * Add 1 to the file's bt_gen through the writable mapping, guarded: a
 * recorder come late asks for the stacks defined before it (rip/abi.h).
 * 0 or -errno.
 */
int rr_bt_gen_add(struct rr_file *f, char *err, size_t errlen);

/* The file's clock: ticks to nanoseconds (CLOCK_MONOTONIC_RAW), and "now" in ticks. */
int64_t rr_ticks_to_ns(const struct rip_file_hdr *h, uint64_t ticks);

/*
 * The file's clock worked out once, for converting many times: ns =
 * base_ns + (ticks - base_ticks) * mult / 2^32, and 0 without a clock (all
 * three 0 then).  With calibration pairs (rip/abi.h, clock_pairs) the line
 * goes through the first and the last of them when every pair lies within
 * RR_CLOCK_FIT_NS of it (a rate measured over the whole run rather than 5
 * ms); else the pairs cut it into segments, one per rate (nseg of them: a
 * virtual machine that moved to a host with another TSC rate).
 */
#define RR_CLOCK_FIT_NS 200
#define RIP_CLOCK_HZ_MIN_READ 1000000ull	 /* 1 MHz: as librip's own bounds */
#define RIP_CLOCK_HZ_MAX_READ 100000000000ull /* 100 GHz */
struct rr_clock_seg {
	uint64_t ticks;
	int64_t ns;
	unsigned __int128 mult;
};

struct rr_clock {
	uint64_t base_ticks;
	int64_t base_ns;
	unsigned __int128 mult; /* ns per tick, 32.32 fixed point */
	/*
	 * mult when it fits 64 bits and there are no segments (as for every
	 * clock a file states: its rate is at least RIP_CLOCK_HZ_MIN_READ), so
	 * that rr_clock_ns multiplies 64 by 64 bits; 0 when not.
	 */
	uint64_t mult64;
	/*
	 * With mult64: the ticks from base_ticks on where the line's ns are
	 * below INT64_MAX (so they need no test of overflow or saturation:
	 * rr_clock_ns's first path); 0 when none, or without mult64.
	 */
	uint64_t span;
	uint32_t nseg;		/* 0: the line above; else seg[0 .. nseg) by ticks */
	struct rr_clock_seg seg[RIP_CLOCK_PAIRS + 1];
};

/* Work the file's clock out from its header (clock_hz, the base, the pairs). */
void rr_clock_init(struct rr_clock *c, const struct rip_file_hdr *h);

/*
 * The rate and base a single line through the pairs gives (what CTF's
 * clock declaration holds): 0, or -EDOM when the pairs do not fit one
 * rate (then the header's own).
 */
int rr_clock_line(const struct rip_file_hdr *h, uint64_t *hz, uint64_t *base_ticks,
		  uint64_t *base_ns);

/* ns of ticks on the line through (base_ticks, base_ns) of slope mult, saturated. */
static inline int64_t rr_line_ns(uint64_t base_ticks, int64_t base_ns, unsigned __int128 mult,
				 uint64_t ticks)
{
	unsigned __int128 d;
	int64_t r;

	if (ticks >= base_ticks) {
		d = ((unsigned __int128)(ticks - base_ticks) * mult) >> 32;
		if (__builtin_expect(d > INT64_MAX ||
					     __builtin_add_overflow(base_ns, (int64_t)d, &r), 0))
			return INT64_MAX;
		return r;
	}
	d = ((unsigned __int128)(base_ticks - ticks) * mult) >> 32;
	if (__builtin_expect(d > INT64_MAX || __builtin_sub_overflow(base_ns, (int64_t)d, &r), 0))
		return INT64_MIN;
	return r;
}

/* The segmented case of rr_clock_ns (ringfile.c). */
int64_t rr_clock_seg_ns(const struct rr_clock *c, uint64_t ticks);

/*
 * rr_ticks_to_ns through a clock from rr_clock_init.  Event times come from
 * the file: one far from the base saturates at INT64_MAX or INT64_MIN rather
 * than overflow.
 */
static inline int64_t rr_clock_ns(const struct rr_clock *c, uint64_t ticks)
{
	uint64_t d = ticks - c->base_ticks; /* before the base: above span (rr_clock_init) */

	if (__builtin_expect(d < c->span, 1))
		return c->base_ns + (int64_t)(((unsigned __int128)d * c->mult64) >> 32);
	if (c->mult64 != 0 && ticks >= c->base_ticks) {
		/* rr_line_ns of a 64-bit mult: d above INT64_MAX is a product from 2^95 up */
		unsigned __int128 p = (unsigned __int128)(ticks - c->base_ticks) * c->mult64;
		int64_t r;

		if (__builtin_expect((uint64_t)(p >> 95) != 0 ||
					     __builtin_add_overflow(c->base_ns, (int64_t)(p >> 32),
								    &r),
				     0))
			return INT64_MAX;
		return r;
	}
	if (__builtin_expect(c->nseg != 0, 0))
		return rr_clock_seg_ns(c, ticks);
	return rr_line_ns(c->base_ticks, c->base_ns, c->mult, ticks);
}
uint64_t rr_now_ticks(const struct rip_file_hdr *h);

/* The ring directory of this user: $RIP_DIR, $XDG_RUNTIME_DIR/rip, /dev/shm. */
int rr_dirs(char dirs[][PATH_MAX], int max);

/*
 * The private directories rip run makes in a ring directory,
 * rip-run.XXXXXX, for the ring files of the program it runs and of its
 * children.  Files can outlive rip run there (one killed, a file being
 * created when it ended): rip ls and rip gc look into them, rr_find_pid too.
 * rip run holds an flock on its directory while it lives (fam_open,
 * record/family.c), so that rip gc removes only a directory nobody uses
 * (rr_run_dir_held).
 */
#define RR_RUN_DIR_PREFIX "rip-run."

/* Does a live rip run hold dir (or can we not tell)? */
bool rr_run_dir_held(const char *dir);

/*
 * Visit the caller's own files in the ring directories (only_dir instead,
 * if given): every regular file owned by the caller (a shared directory is
 * hostile: others' files are not read), in each directory and in the
 * RR_RUN_DIR_PREFIX directories of the caller there, in name order.
 * cb(path, st, arg) for each, and for each of those directories after its
 * files (S_ISDIR(st->st_mode)); a nonzero return stops the walk and is
 * returned.  A directory that cannot be read is skipped, or, for only_dir
 * and for RIP_DIR, -errno with a message in err.  With RR_EACH_ALL_USERS, every user's files
 * and rip run directories (rip gc --all-users; st->st_uid says whose, from
 * lstat: open them with rr_open_owned).
 */
#define RR_EACH_ALL_USERS 1u
typedef int (*rr_file_cb)(const char *path, const struct stat *st, void *arg);
int rr_each_file(const char *only_dir, unsigned flags, rr_file_cb cb, void *arg, char *err,
		 size_t errlen);

/*
 * Find the ring file of pid: a ring mapped by the live process (from
 * /proc/PID/maps) whose header has its pid and start time, else the
 * caller's newest rip-PID-*.ring in the ring directories or in rip run's
 * directories there whose header has the pid and the start time of its name
 * (and, if a process has that pid now, its start time: not a file of an
 * earlier process with the same pid).  0 with the path, and the owner the
 * file must have when it is opened (*owner: the caller, or the live
 * process's user).  No file, but a note of a rip run that still runs (a
 * followed child that died under it, RING.gone in its directory: read/ringname.h):
 * the copy of the child's file that its trace keeps.  -ENOENT, -EPERM (only
 * another user's file: its owner is
 * named) or -EBADMSG (only files whose header is of another process) with a
 * message in err.
 */
int rr_find_pid(pid_t pid, char *path, size_t len, uid_t *owner, char *err, size_t errlen);

/* /proc/PID/stat start time in clock ticks, 0 if there is no such process. */
uint64_t rr_proc_start_ticks(pid_t pid);

/* A process a recorder traces (rr_consumed_by). */
struct rr_traced {
	pid_t pid;
	char comm[17]; /* its ring file's header's comm, or /proc/PID/comm; "" unknown */
	bool ring;     /* found by its ring file (else: a child of the recorder's) */
};

/*
 * What the live process pid records, when it is a recorder (rip run, rip
 * record): the processes whose ring files it maps and is the consumer of
 * (the header's ev_consumer is pid; a file that names pid itself is not),
 * and when there are none, its children (rip run's program before its ring
 * file).  Up to max in v, in order found and each pid once; returns how
 * many there are (more than max: the rest left out), 0 for none or no such
 * process.  Every file is read as hostile: only headers with the magic, of
 * regular files opened without following a link.
 */
size_t rr_consumed_by(pid_t pid, struct rr_traced *v, size_t max);

/* Format a duration in ns as "850ms", "12.3s", "4m05s", "2h13m", "3d04h". */
const char *rr_fmt_duration(int64_t ns, char *buf, size_t len);

/* Parse "2s", "500ms", "1.5m", "1h" into ns; -EINVAL when malformed. */
int rr_parse_duration(const char *s, int64_t *ns);

#endif /* RIP_READ_RINGFILE_H */
