/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/patchable.h - functions built with -fpatchable-function-entry in a
 * traced process: where they are (the __patchable_function_entries section
 * of each binary of its module map, at the addresses the process loaded
 * them).  The request that has the process patch them or not is
 * record/patchreq.h's.
 */
#ifndef RIP_READ_PATCHABLE_H
#define RIP_READ_PATCHABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rip/abi.h>

#include "read/ringfile.h"

/* The patchable entries of the modules mods[0 .. n), runtime addresses, sorted. */
struct rpt_sites {
	uint64_t *addr;
	size_t n;
	size_t modules;	   /* modules that have the section */
	size_t unreadable; /* modules whose file could not be read (gone, another build) */
};

/*
 * Read the section of every module still loaded (sysroot: a prefix for
 * their paths, or NULL), into out (free with rpt_sites_free).  A module
 * without the section has no sites; one whose file cannot be read, or
 * whose build-id differs from the recorded one, is counted.  0 or -errno
 * with a message.
 */
int rpt_read_sites(const struct rip_module *mods, size_t n, const char *sysroot,
		   struct rpt_sites *out, char *err, size_t errlen);
void rpt_sites_free(struct rpt_sites *s);

#endif /* RIP_READ_PATCHABLE_H */
