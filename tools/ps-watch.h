/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/ps-watch.h - the part of `rip ps` that shows what the watcher
 * thread saw (tools/ps-watch.c): threads blocked in the kernel with no wait
 * record, with the system call and the stack unwound from the copy.
 */
#ifndef RIP_TOOLS_PS_WATCH_H
#define RIP_TOOLS_PS_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "read/ringfile.h"
#include "read/sym.h"
#include "read/watch.h"

#define PSW_TIMEOUT_MS 500	/* how long rip ps waits for a fresh sweep ... */
#define PSW_TIMEOUT_MAX_MS 5000 /* ... or 3 times the last sweep, at most this */

struct psw_opts {
	bool alive, threads, verbose, all;
	uint64_t now_ticks;
	const char *sysroot;
};

/* Before the slots are read: ask a live process's watcher for a sweep (bounded wait). */
void psw_request(struct rr_file *f, bool alive, struct wt_request *req);

/*
 * After the slot listing: the watcher's section (nothing for a file without a
 * watcher).  s holds the thread slots at least (rip ps passes only those).
 */
int psw_print(struct rr_file *f, const struct rr_slots *s, struct rip_sym *sym,
	      const struct psw_opts *o, const struct wt_request *req, FILE *out);

/*
 * For --json: ',"watcher":{...},"kernel_blocked":[...]' to go before the
 * document's last brace; nothing for a file without a watcher.  0 or -errno.
 */
int psw_json(struct rr_file *f, const struct rr_slots *s, struct rip_sym *sym,
	     const struct psw_opts *o, FILE *out);

#endif /* RIP_TOOLS_PS_WATCH_H */
