/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/progress.h - the progress bar of the commands that read a whole
 * trace: "WHAT: [###  ] 40%  1.2 GiB of 3.0 GiB, 5 s left" on stderr when it
 * is a terminal, drawn after half a second, at most ten times a second, and
 * wiped when the events end.  RIP_PROGRESS=0: never; RIP_PROGRESS=1: always,
 * from the first packet.
 */
#ifndef RIP_TOOLS_PROGRESS_H
#define RIP_TOOLS_PROGRESS_H

#include <stdint.h>

struct evs;

/* Show the bar while the events of s are read; what names the command. */
void progress_bar(struct evs *s, const char *what);
/*
 * The same for work that is not a read of events: progress_begin, then
 * progress_step as a callback (bytes done and in all; arg unused), then
 * progress_end.
 */
void progress_begin(const char *what);
void progress_step(uint64_t done, uint64_t total, void *arg);
void progress_end(void);

#endif /* RIP_TOOLS_PROGRESS_H */
