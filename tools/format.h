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

struct evs;

/* "300 bytes" below 10000, then "12.3 kB", "12.3 MB", "12.3 GB" (decimal).  Returns buf. */
const char *fmt_bytes(uint64_t bytes, char *buf, size_t len);

/* Exact, and readable when big: "300 bytes", "65.5 kB (65536 bytes)".  Returns buf. */
const char *fmt_bytes_exact(uint64_t bytes, char *buf, size_t len);

/* Binary units for sizes of files read: "1.2 MiB", "3.0 GiB".  Returns buf. */
const char *fmt_size_bin(uint64_t bytes, char *buf, size_t len);

/*
 * How a string is escaped.  Both modes escape ", \, newline and tab with a
 * backslash; the rest of what they escape:
 *	FMT_ESC_C		C style, for text: \r, and every other byte outside
 *				printable ASCII as \xNN
 *	FMT_ESC_JSON		control characters and DEL as \u00NN, bytes >= 0x80
 *				as they are (UTF-8 stays UTF-8)
 *	FMT_ESC_JSON_ASCII	the same, and bytes >= 0x80 as \u00NN too: valid
 *				JSON from text not known to be UTF-8
 */
enum fmt_esc { FMT_ESC_C, FMT_ESC_JSON, FMT_ESC_JSON_ASCII };

#define FMT_ESC_MAX 6 /* bytes one character may take escaped */

/*
 * Escape the string *s into out (len bytes at most, no NUL added, no
 * quotes), each character whole: returns the bytes written and leaves *s at
 * the first character not written (at the NUL when all was).
 */
size_t fmt_escape(char *out, size_t len, const char **s, enum fmt_esc mode);

/* A JSON string, quotes included (FMT_ESC_JSON); NULL is "". */
void json_str(FILE *out, const char *s);

/*
 * The start of a JSON report on the trace or ring file of s:
 * {"version":1,"source":...,"pid":N,"comm":...,"exe":...  (the object stays open).
 */
void json_trace_head(FILE *out, struct evs *s);

#endif /* RIP_TOOLS_FORMAT_H */
