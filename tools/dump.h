/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/dump.h - the dump format (tools/dump.c), which `rip dump` prints and
 * `rip export --format=text` writes.
 */
#ifndef RIP_TOOLS_DUMP_H
#define RIP_TOOLS_DUMP_H

#include <stdio.h>

struct evs;

#define EVS_DUMP_JSON 0x1u /* JSON Lines instead of text */
#define EVS_DUMP_WALL 0x2u /* add the wall-clock time of each event */
#define EVS_DUMP_SYM 0x4u  /* symbolize backtraces (rip:bt frames) as function+offset */

/*
 * Print every event of s, one per line, then the summary line (totals and
 * losses).  0, -EIO when out fails, or -errno with a message in err when
 * the source is corrupt (what was printed before stays printed).
 */
int evs_dump(struct evs *s, FILE *out, unsigned flags, char *err, size_t errlen);

#endif /* RIP_TOOLS_DUMP_H */
