/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/family.h - the ring files of a program that rip run runs, and of
 * its family: the children it forks and the images it execs into.
 *
 * rip run gives the family a private directory of ring files
 * (RR_RUN_DIR_PREFIX in the ring directory) and an environment that makes
 * librip create every file there and name rip run the consumer of each
 * from its first event.  Everything found in that directory is this
 * module's: the program's own ring file, recorded into the trace DIR (and
 * to relayd, when the caller adds it: rec_relayd on f->rec), the others
 * (each recorded into DIR/PID[.N]/ when rip run follows it, else silenced:
 * every category off, nobody waited for), librip's markers of files it
 * could not create, and at the end the files of processes that outlive rip
 * run, which move up into the ring directory.
 *
 *	fam_init(&f, &opts);  fam_open(&f);	  the directory, its lock and watch
 *	fork: fam_clock_env(), fam_env(&f, lib), exec
 *	fam_find(&f) + fam_ready(&f)		  the program's ring file, complete
 *	fam_attach(&f, ...);			  its consumer, its trace
 *	while it runs: fam_pass(&f, ...)	  new files; every trace's packets
 *	fam_unwatch(&f);			  (it exited) the watch goes
 *	fam_finish(&f, ...);			  the program's trace finished
 *	fam_end(&f, failed, sync);		  every other trace finished
 *	fam_keep(...); fam_cleanup(&f, ...);	  what outlives us, the directory
 *	fam_free(&f);
 *
 * Nothing here prints: what goes wrong with one of the others (its trace
 * not written, a file that cannot be kept) goes to the warn callback, one
 * line each; the counts and the list of kept files are there for the
 * summary.
 */
#ifndef RIP_RECORD_FAMILY_H
#define RIP_RECORD_FAMILY_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/consume.h"
#include "record/tracew.h"

/*
 * The directory of unwind rules the family shares (preload/rulecache.c),
 * inside the ring directory: files there are not ring files, and a
 * subdirectory's are not seen by the watch of the ring directory.
 */
#define FAM_RULES_DIR "rules"
/*
 * The directory where librip-track.so marks each --track function it found
 * in an object of a process of the family (a subdirectory named after it),
 * inside the ring directory for the same reason.
 */
#define FAM_TRACK_DIR "track"

#define FAM_RES_MEM 0x1u /* resource tracing: the categories asked for */
#define FAM_RES_FD 0x2u
#define FAM_RES_SHM 0x4u
#define FAM_RES_ALL (FAM_RES_MEM | FAM_RES_FD | FAM_RES_SHM)
#define FAM_RES_MOD 0x8u /* tracing modules (category res): modules holds them */

/* What the family runs with: rip run's options, as librip's environment says them. */
struct fam_opts {
	const char *mode;		 /* RIP_MODE: block, discard or overwrite */
	const char *buffer;		 /* RIP_EVENT_RING_SIZE as given; NULL: librip's */
	unsigned long long buffer_bytes; /* the same in bytes; 0: librip's default */
	bool relayd;			 /* streamed to relayd: bigger packets */
	unsigned res;			 /* FAM_RES_*: resource tracing asked for */
	bool off;			 /* preload with every resource category off */
	const char *modules;		 /* tracing modules to preload after it, ':' between */
	unsigned depth;			 /* RIP_DEPTH; 0: the preload library's default */
	const char *pagemap_signal;	 /* RIP_PAGEMAP_SIGNAL for the preload library */
	bool no_pagemap;		 /* RIP_PAGEMAP=0: no snapshot at exit */
	bool waits;	 /* librip-preload.so for slots and waits only (RIP_RESOURCES=0) */
	bool no_waits;	 /* no slots at birth, no wait records (RIP_WAITS=0) */
	unsigned sample; /* RIP_SAMPLE: CPU samples per second per thread, 0: none */
	bool functions;	 /* the func category on (function records); else in RIP_DISABLE */
	const char *function_globs; /* RIP_FUNCTIONS: patchable functions patched at start */
	bool follow_fork, follow_exec; /* record children, new images (RIP_FOLLOW) */
	struct trace_w_opts store;     /* how each trace is stored (record/tracew.h) */
	const char *track;	       /* RIP_TRACK: the --track specs joined by ';'; NULL: none */
	const char *audit;	       /* with track: librip-track.so, put in LD_AUDIT */
};

/* Is resource tracing on (librip-preload.so goes in, with its hooks)? */
bool fam_resources(const struct fam_opts *o);

/* Another ring file in the directory: a child's or a new image's. */
struct fam_sub {
	char name[NAME_MAX + 1];
	pid_t pid;
	uint64_t start; /* its process's start time, from the file's name */
	unsigned gen;
	bool follow;   /* recorded into DIR/PID[.N]/; else silenced */
	bool active;   /* being recorded */
	bool done;     /* finished (or given up): nothing more to do */
	bool recorded; /* its trace was written: the figures below are its */
	bool cut;      /* the process still ran when we finished its trace */
	char comm[17]; /* the process's name, from its ring file */
	/* how its traced image ended: 0 (cut), FAM_END_* */
	int end;
	char exec_img[PATH_MAX]; /* FAM_END_EXEC: the image it exec'd into, if seen */
	uint64_t events, lost, corrupt;
	uint64_t samples, samples_lost; /* its CPU samples (--sample): taken, lost */
	int64_t alive_ns; /* when rr_alive last said it runs (fam_sub_gone) */
	struct rec rec;
	char dir[PATH_MAX];
};

/* How a child's traced image ended (fam_sub.end). */
enum {
	FAM_END_EXIT = 1, /* it ended, and its file says so (RIP_P_EXITED) */
	FAM_END_EXEC,	  /* it exec'd another image */
	FAM_END_DEAD,	  /* neither: killed or crashed (or an exec not seen) */
};

/* A ring file that outlives rip run, moved up into the ring directory (fam_keep). */
struct fam_kept {
	pid_t pid;
	char comm[17];
	char path[PATH_MAX];
	int sig; /* the program's, killed by this signal; 0: a process that still runs */
};

struct fam {
	const struct fam_opts *o;
	char ringdir[PATH_MAX];	 /* the private directory (fam_open) */
	int lock;		 /* held while we live: rip gc leaves the directory alone */
	int inotify;		 /* its watch; -1: none */
	int watch;		 /* the directory's in inotify; -1: none (fam_unwatch) */
	bool rescan;		 /* look into it at the next fam_look */
	pid_t child;		 /* the program (set by the caller once forked) */
	char dir[PATH_MAX];	 /* its trace (set by the caller); the others' in DIR/PID[.N] */
	bool no_local;		 /* (set by the caller) relayd only: no trace in dir */
	int64_t live_ns;	 /* (set by the caller) relayd's live period; 0: none (rec_pass) */
	char ring[PATH_MAX];	 /* its ring file, once found (fam_find) */
	pid_t main_pid;		 /* whose ring file that is */
	struct rec rec;		 /* its consumer (fam_attach) */
	bool attached;		 /* fam_attach was called (whatever it said) */
	int64_t next_tick;	 /* the next live period's end (CLOCK_MONOTONIC ns) */
	char exec_img[PATH_MAX]; /* the image the program exec'd into, not followed */
	int64_t exec_next;	 /* when to look for one next (CLOCK_MONOTONIC ns) */
	char own_name[64];	 /* its name while it ran its traced image (it may rename itself) */
	struct fam_sub **subs;	 /* the others */
	size_t nsubs;
	unsigned traces, failed; /* the others' traces written, and those that could not be */
	uint64_t fn_ids;	 /* function ids handed out in the files recorded (fam_fn_ids) */
	/* Ring files librip could not create (its RING.failed-ERRNO-BYTES markers): */
	bool main_nofile;      /* the program's own: main_err, main_need say why */
	int main_err, sub_err; /* the error, the first other's */
	uint64_t main_need, sub_need;
	unsigned sub_nofile;   /* children and images that have no trace for it */
	/* forked children that had no permission to create their file (fam_count_denied) */
	uint32_t forks_denied;
	int denied_err;	       /* the errno of the first process's */
	pid_t denied_pid;      /* the first process whose children it was, */
	char denied_comm[17];  /* its name */
	struct fam_kept *kept; /* ring files that outlive us */
	size_t nkept;
	/*
	 * The program's newest image recorded (followed exec), whose process
	 * ended as the program: its ring file stays in ringdir, as last_ring
	 * (".last-NAME", a name fam_scan does not take for a new image's), until
	 * fam_cleanup, for fam_keep_last when a signal killed the program.
	 */
	char last_ring[PATH_MAX + NAME_MAX + 8];
	char last_name[NAME_MAX + 1];
	char last_comm[17];
	char last_dir[PATH_MAX]; /* its trace, DIR/PID.N */
	bool last_kept;		 /* fam_keep_last kept it */
	/* Called with each warning about the others; NULL: none. */
	void (*warn)(const char *msg, void *arg);
	void *warn_arg;
};

/*
 * Was the function name of a --track spec found in an object of a process
 * of the family (librip-track.so marked it)?  Ask before fam_cleanup.
 */
bool fam_track_found(const struct fam *f, const char *name);

void fam_init(struct fam *f, const struct fam_opts *o);
/*
 * Make the private directory (on the ring file system if it can: else in
 * $TMPDIR), hold its lock, make the rules directory for resource tracing,
 * and watch it.  0 or -errno.
 */
int fam_open(struct fam *f);

/*
 * In the child, before it execs: the TSC's rate for every process of the
 * family in RIP_CLOCK_HZ (unless set), measured once per boot and kept in
 * $XDG_CACHE_HOME/rip/clock, so that no process spends 5 ms on it; or
 * RIP_CLOCK=mono where the TSC goes back from one CPU to another.
 */
void fam_clock_env(void);
/*
 * In the child, once rip run is ready: librip's environment (the
 * directory, the mode, us as the consumer, what to follow, the preload
 * library's settings), and LD_PRELOAD with lib in front when lib is given.
 */
void fam_env(const struct fam *f, const char *lib);

/*
 * The ring file to record: the program's own first image, else its first
 * one that appeared, else any (a wrapper's child), into f->ring.  False
 * while there is none.
 */
bool fam_find(struct fam *f);
/*
 * Is f->ring complete (librip stores the magic last)?  1 yes, 0 not yet,
 * -ENOENT when its creator gave up (no space: see fam_take_failed).
 */
int fam_ready(struct fam *f);

/*
 * While the program's ring file is not there: wait (5 ms at most) for the
 * watch to say the directory changed, then take librip's marker of the
 * program's file if it could not be created (f->main_nofile).
 */
void fam_wait(struct fam *f);
/*
 * Attach to the program's ring file (complete: fam_ready) as its consumer
 * and create its trace, DIR, unless no_local.  0, or -errno with the
 * consumer closed.
 */
int fam_attach(struct fam *f, char *err, size_t errlen);
/*
 * One pass while the program runs: look for new ring files (fam_look), the
 * program's packets (rec_pass: a live tick when one is due), an exec we do
 * not follow (fam_exec_check), the others' packets (fam_poll).  The
 * packets taken, or -errno when the program's trace cannot be written (the
 * others are not polled then).
 */
int fam_pass(struct fam *f, char *err, size_t errlen);
/*
 * Did the program exec an image we do not follow (one that loads no
 * librip: a shim that execs the real program)?  Its path in f->exec_img,
 * looked for now and then while it runs; exited (not reaped yet), the name
 * of its last, unless that is the name it had while it ran its traced
 * image (a program that renamed itself, PR_SET_NAME), its file says that
 * image exited, or a signal ended it (killed) and its file says it renamed
 * itself (RIP_P_RENAMED: it may have done so since the last look).
 */
void fam_exec_check(struct fam *f, bool exited, bool killed);
/*
 * The program has exited: stop watching the directory (fam_finish and
 * fam_end read it themselves).  The kernel frees a watch after a grace
 * period, 5 to 25 ms here, and a close of the inotify descriptor that
 * still holds one waits for it: removed now, the period passes while the
 * traces are finished, and fam_free's close waits for what is left of it.
 */
void fam_unwatch(struct fam *f);
/*
 * The end of the program's trace: the last look for new files, then its
 * packets drained, metadata, index, and a copy of its ring file kept in the
 * trace (f->rec.ring_kept says whether).  0 or -errno.
 */
int fam_finish(struct fam *f, char *err, size_t errlen);

/*
 * Take librip's markers of ring files it could not create (removing them):
 * the program's own before we attached to it, else a child's or a new
 * image's, counted.
 */
void fam_take_failed(struct fam *f, bool attached);

/*
 * Look for new ring files when the watch said something, or while one is
 * incomplete: each is recorded or silenced.
 */
void fam_look(struct fam *f);
/* Look now, whatever the watch says (the last look, at the end). */
void fam_scan(struct fam *f);
/*
 * One pass over the recorded others: their packets into their traces; one
 * whose process exited or exec'd is finished.  The packets taken.
 */
int fam_poll(struct fam *f);
/*
 * The end: finish every other trace (unless failed: the program's trace
 * failed, so theirs go too), remove the files not recorded, take the
 * markers; with sync, make the traces durable together (they are written
 * without fsync).
 */
void fam_end(struct fam *f, bool failed, bool sync);

/* The others' traces: their events and losses, how many lost some, how many were cut. */
struct fam_totals {
	uint64_t events, lost;
	unsigned lossy, cut;
};
void fam_totals(const struct fam *f, struct fam_totals *t);

/*
 * Move the ring file at path up into the ring directory, where it stays,
 * and list it in f->kept; false if it cannot be.
 */
bool fam_keep(struct fam *f, const char *path, pid_t pid, const char *comm, int sig);
/*
 * The program was killed by signal sig after it exec'd an image that was
 * followed: keep that image's ring file (f->last_ring), the one rip ps must
 * read, not the one of the image it replaced.  false: there is none.
 */
bool fam_keep_last(struct fam *f, int sig);
/*
 * Close the program's consumer, and remove the directory: the program's
 * ring file unless keep (or it went: fam_keep),
 * the rules, and what else is there, but for the complete ring file of a
 * live process (made after our last look: a daemon's child), which is kept.
 */
void fam_cleanup(struct fam *f, bool keep);
/* Close the directory's descriptors and free everything. */
void fam_free(struct fam *f);

#endif /* RIP_RECORD_FAMILY_H */
