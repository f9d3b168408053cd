/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/watch.h - what the watcher thread of librip-preload.so left in a
 * ring file: asking it for a fresh sweep, reading its record of each thread
 * and the copy of the thread's stack, and unwinding that copy with libdw
 * (dwfl_attach_state with our own memory and register callbacks: no
 * ptrace, live or after the process died).  Prefix wt_.
 */
#ifndef RIP_READ_WATCH_H
#define RIP_READ_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rip/abi.h>

#include "read/ringfile.h"

/* What asking for a sweep gave. */
struct wt_request {
	bool asked; /* the request was written (the file could be mapped writable) */
	bool done;  /* a sweep that started after the request ended in time */
	int64_t waited_ns;
	int timeout_ms;	      /* how long it was ready to wait */
	char why[RR_ERR_MAX]; /* when not asked: why not */
};

/*
 * Ask the watcher of the live process of f for a fresh sweep (futex words
 * watch_req / watch_done) and wait for it at most timeout_ms.  Never fails:
 * out says what happened.  Does nothing for a file without a watcher.
 */
void wt_request_sweep(struct rr_file *f, int timeout_ms, struct wt_request *out);

/* One thread as the watcher last saw it. */
struct wt_thread {
	uint32_t slot;
	int32_t tid;
	struct rip_watch rec; /* a consistent copy of slot.watch */
	bool have_copy;	      /* stack[] holds len bytes from sp */
	uint64_t args[6];
	uint64_t sp, pc;
	uint32_t len;
	uint8_t *stack; /* malloc'd; wt_thread_free */
};

/*
 * Read the watcher's record of slot index (a thread slot of tid) and, if it
 * names a copy whose head matches, the copy.  1 with a record, 0 without
 * (never swept, or changing under us twice), -errno on a damaged file (err).
 */
int wt_read(struct rr_file *f, uint32_t index, int32_t tid, struct wt_thread *out, char *err,
	    size_t errlen);
void wt_thread_free(struct wt_thread *t);

struct rip_module;
struct wt_unwinder;

/* An unwinder over the modules of a ring file (sysroot may be NULL).  0 or -errno. */
int wt_unwinder_new(const struct rip_module *mods, size_t n, const char *sysroot,
		    struct wt_unwinder **out);
void wt_unwinder_free(struct wt_unwinder *u);

/*
 * Unwind t's copy: pcs[0] is t->pc (where it is in the kernel's entry), the
 * next ones return addresses (look up pc - 1 for them).  Returns how many
 * were filled (at least 1), or -errno (no copy: -ENODATA; not on this
 * architecture: -ENOTSUP).
 */
int wt_unwind(struct wt_unwinder *u, const struct wt_thread *t, uint64_t *pcs, int max);

/* A system call number of this architecture as a name ("futex"), or NULL. */
const char *wt_syscall_name(long nr);

#endif /* RIP_READ_WATCH_H */
