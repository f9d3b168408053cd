/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/format.h - how the rip commands write numbers and strings: byte
 * counts for people ("12.3 MB", "65.5 kB (65536 bytes)"), JSON strings, and
 * the head every JSON report of a trace starts with.  One writer of each,
 * so that the commands agree with each other.
 */
#ifndef RIP_TOOLS_FORMAT_H
#define RIP_TOOLS_FORMAT_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/escape.h"

struct evs;

/* "300 bytes" below 10000, then "12.3 kB", "12.3 MB", "12.3 GB" (decimal).  Returns buf. */
const char *fmt_bytes(uint64_t bytes, char *buf, size_t len);

/* Exact, and readable when big: "300 bytes", "65.5 kB (65536 bytes)".  Returns buf. */
const char *fmt_bytes_exact(uint64_t bytes, char *buf, size_t len);

/* Binary units for sizes of files read: "1.2 MiB", "3.0 GiB".  Returns buf. */
const char *fmt_size_bin(uint64_t bytes, char *buf, size_t len);

/* A JSON string, quotes included (escaped as ESC_JSON); NULL is "". */
void json_str(FILE *out, const char *s);
/*
 * s for a terminal, escaped as C escapes it (analysis/escape.h, ESC_C):
 * what a traced program named (a path, a module's) may hold control
 * bytes, and printed raw they steer the terminal (a title, colours) or
 * break the line.
 */
void text_str(FILE *out, const char *s);

/*
 * The start of a JSON report on the trace or ring file of s:
 * {"version":1,"source":...,"pid":N,"comm":...,"exe":...  (the object stays open).
 */
void json_trace_head(FILE *out, struct evs *s);

#endif /* RIP_TOOLS_FORMAT_H */
