/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/patchreq.h - the request that has a traced process patch the
 * entries of its -fpatchable-function-entry functions, or unpatch them
 * (the watcher of librip-preload.so does it: lib/patch.c,
 * preload/fnpatch.c); the sites come from read/patchable.h.
 */
#ifndef RIP_RECORD_PATCHREQ_H
#define RIP_RECORD_PATCHREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/ringfile.h"

struct prq_answer {
	bool done; /* the watcher answered in time */
	bool gone; /* the process ended first */
	int err;   /* its errno, 0: none */
	uint32_t ok, failed, on;
};

/*
 * Ask the process of f to patch (on) or unpatch the n sites addr[] (!on,
 * n 0: every site patched), and wait at most timeout_ms for the answer.
 * The watcher must run (hdr.watch_status).  0 with *out filled (done false
 * after a timeout), or -errno with a message (-ESRCH: no watcher).
 */
int prq_request(struct rr_file *f, bool on, const uint64_t *addr, size_t n, int timeout_ms,
		struct prq_answer *out, char *err, size_t errlen);

#endif /* RIP_RECORD_PATCHREQ_H */
