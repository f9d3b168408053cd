/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/summary.h - the line rip run and rip record end with, one writer
 * for both, so that they say the same things the same way.
 */
#ifndef RIP_TOOLS_SUMMARY_H
#define RIP_TOOLS_SUMMARY_H

#include <stdint.h>

struct rec;

/*
 * On stderr: "rip CMD: N events (SIZE) recorded in DIR/, N lost[WHAT]"
 * ("in relayd only" without a local trace), then the packets overwritten
 * before rip read them and the corrupt ones skipped, if any.  lost: the
 * events the command counts as lost; what: how it counts them ("" or
 * " while recording").
 */
void sum_recorded(const char *cmd, const struct rec *r, uint64_t lost, const char *what);

#endif /* RIP_TOOLS_SUMMARY_H */
