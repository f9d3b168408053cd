/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/dump.h - the dump format (analysis/dump.c), which `rip dump`
 * prints and `rip export --format=text` writes: to the FILE * they give,
 * never to stdout of its own accord.
 */
#ifndef RIP_ANALYSIS_DUMP_H
#define RIP_ANALYSIS_DUMP_H

#include <stdio.h>

struct evs;

#define DUMP_JSON 0x1u /* JSON Lines instead of text */
#define DUMP_WALL 0x2u /* add the wall-clock time of each event */
#define DUMP_SYM 0x4u  /* symbolize backtraces (rip:bt frames) as function+offset */

/*
 * Write every event of s to out, one per line, then the summary line (totals and
 * losses).  0, -EIO when out fails, or -errno with a message in err when
 * the source is corrupt (what was printed before stays printed).
 */
int dump_write(struct evs *s, FILE *out, unsigned flags, char *err, size_t errlen);

#endif /* RIP_ANALYSIS_DUMP_H */
