/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/ringname.h - the names of ring files, as lib/ring.c makes them
 * (rip_file_path, rip_file_path_next, rip_mark_failed), read back: the one
 * parser that every reader of a ring directory uses (rip ls, rip gc, rip
 * run, rr_find_pid).
 *
 *	rip-PID-START.ring		  the first image of process PID
 *	rip-PID-START.N.ring		  the image after its Nth execve (N >= 1)
 *	rip-PID-START[.N].TAG.ring	  the same, when the name without TAG was
 *					  another's (a file in the way that is not
 *					  this process's): TAG is RN_TAG_LEN random
 *					  lowercase letters, drawn until a name is
 *					  free (O_EXCL), so that nobody can take
 *					  every name first
 *	RING.failed-ERRNO-BYTES		  librip could not create RING (under rip
 *					  run): the error, and the bytes it needed
 *	RING.gone			  rip run's note, in its private directory,
 *					  that the followed child of RING died: it
 *					  holds the path of the copy of RING that
 *					  its trace keeps (record/family.c)
 *
 * START is the process's start time in clock ticks after boot, as
 * /proc/PID/stat gives it (rip/proc.h): with PID, it tells the process from
 * a later one with the same pid.  Numbers are decimal without a sign or
 * leading zeros, as librip writes them; a name that is not exactly of this
 * form (a hostile directory holds anything) is not a ring file's name.
 */
#ifndef RIP_READ_RINGNAME_H
#define RIP_READ_RINGNAME_H

#include <stdint.h>
#include <sys/types.h>

#define RN_PID_MAX 0x3fffffff /* the kernel's pids fit in FUTEX_TID_MASK */
#define RN_FAILED ".failed-"  /* after the ring file's name, in librip's marker */
#define RN_GONE ".gone"	      /* after the ring file's name, in rip run's note of a dead child */
#define RN_TAG_LEN 8	      /* the random part's letters (lib/ring.c RIP_NAME_TAG_LEN) */

struct rn_name {
	pid_t pid;	/* 1 to RN_PID_MAX */
	uint64_t start; /* its start time, clock ticks after boot */
	unsigned gen;	/* N, the image: 0 for the first (no .N in the name) */
	char tag[RN_TAG_LEN + 1]; /* the random part, "" when the name has none */
};

/*
 * Is name (a file name, no directory) a ring file's, rip-PID-START[.N][.TAG].ring?
 * 0, else -EINVAL.
 */
int rn_parse(const char *name, struct rn_name *out);

/*
 * Is name librip's marker of a ring file it could not create,
 * RING.failed-ERRNO-BYTES, with ERRNO from 1 to 4095?  0 with the ring
 * file's name parsed into ring, the error and the bytes; else -EINVAL.
 */
int rn_parse_failed(const char *name, struct rn_name *ring, int *err, uint64_t *need);

/*
 * Is name rip run's note of a dead child's ring file, RING.gone?  0 with
 * the ring file's name parsed into ring, else -EINVAL.
 */
int rn_parse_gone(const char *name, struct rn_name *ring);

#endif /* RIP_READ_RINGNAME_H */
