/* SPDX-License-Identifier: Apache-2.0 */
/*
 * preload/watch.h - the watcher thread of librip-preload.so (watch.c): what
 * the constructor, the pthread_create wrapper and the fork handler call.
 */
#ifndef RIP_PRELOAD_WATCH_H
#define RIP_PRELOAD_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The constructor, with a ring file open: read RIP_WATCH*, arm the lazy start. */
void rip_pl_watch_init(void);

/* The program created a thread: start the watcher once. */
void rip_pl_watch_start(void);

/*
 * Before unshare or setns (is_setns) with flags, which the kernel refuses
 * to a multithreaded process when they ask for a user namespace: stop the
 * watcher.  True when it ran; then rip_pl_watch_resume() after the call.
 */
bool rip_pl_watch_pause(bool is_setns, long flags);
void rip_pl_watch_resume(void);

/*
 * The program's pthread_create failed with EAGAIN: stop the watcher for
 * good, so that its thread no longer counts against RLIMIT_NPROC.  True
 * when it ran: try again.
 */
bool rip_pl_watch_yield(void);

/* The mapping of /proc/self/maps that holds an address (thread.c). */
struct rip_pl_maps_hit {
	uintptr_t lo, hi; /* the mapping that holds the address */
	uintptr_t below;  /* the end of the highest mapping under it (0: none) */
	bool stack;	  /* it is the main thread's "[stack]" (it grows down) */
	bool anon;	  /* "p" and inode 0: anonymous private memory */
	bool none;	  /* "---": PROT_NONE */
	bool found;
};

/*
 * Read /proc/self/maps for the mapping that holds addr, here, in the
 * calling thread's descriptor table: 0, -ENOENT (none holds it) or
 * -errno; errno unchanged.  *h starts zeroed.
 */
int rip_pl_maps_read(uintptr_t addr, struct rip_pl_maps_hit *h);
/*
 * The same, read by the watcher in its own descriptor table while the
 * caller waits (bounded): -EAGAIN when no watcher runs or it did not
 * answer in time (the caller then reads itself), else as rip_pl_maps_read.
 */
int rip_pl_watch_maps(uintptr_t addr, struct rip_pl_maps_hit *h);

/* The files of a pagemap snapshot (pagemap.c) the watcher reads for it. */
enum {
	RIP_PL_WF_MAPS,	   /* /proc/self/maps */
	RIP_PL_WF_PAGEMAP, /* /proc/self/pagemap */
	RIP_PL_WF_MEM,	   /* /proc/self/mem */
	RIP_PL_WF_N
};

/*
 * pread of file (RIP_PL_WF_*) at off until len bytes or the end, by the
 * watcher in its own descriptor table, where it opens the file at first
 * use and keeps it open (len 0: only open it); a read of the maps at
 * offset 0 starts a snapshot and closes the last one's files first.
 * Bytes read, -errno, or -EAGAIN when no watcher runs or none answered in
 * time (nothing was done).  No lock, no allocation: a signal handler may
 * call it; errno unchanged.
 */
long rip_pl_watch_pread(int file, void *buf, size_t len, uint64_t off);

/*
 * The rule cache's files (rulecache.c), by the watcher in its own
 * descriptor table, each opened and closed in the one request.
 *
 * rip_pl_watch_file_read: open path (O_NOFOLLOW), which must be a regular
 * file of the effective user (else -EPERM), store its size in *size and
 * read up to len bytes from its start into buf: bytes read or -errno.
 *
 * rip_pl_watch_file_write: create tmp (O_EXCL, O_NOFOLLOW, mode 0600),
 * write a (alen bytes) then b (blen) to it and rename it to path; tmp is
 * unlinked when that fails: 0 or -errno.
 *
 * Both: -EAGAIN when no watcher runs or none answered in time (nothing
 * was done: the caller does it itself).  No lock, no allocation; errno
 * unchanged.
 */
long rip_pl_watch_file_read(const char *path, void *buf, size_t len, uint64_t *size);
int rip_pl_watch_file_write(const char *path, const char *tmp, const void *a, size_t alen,
			    const void *b, size_t blen);

/* The watcher serves a request of rip enable or disable to patch functions (fnpatch.c). */
void rip_pl_fn_serve(struct rip_file_hdr *h);

/* The constructor, with a ring file open: patch the functions RIP_FUNCTIONS=GLOB picks. */
void rip_pl_fn_start(void);

#endif /* RIP_PRELOAD_WATCH_H */
