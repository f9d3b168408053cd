/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/escape.h - how strings from a trace are escaped in the text and
 * JSON that the dump writer (dump.h) and the rip commands (tools/format.h's
 * json_str) write: one escaper, so that they agree.  A trace's strings are
 * the traced program's, so any byte may be in them.
 */
#ifndef RIP_ANALYSIS_ESCAPE_H
#define RIP_ANALYSIS_ESCAPE_H

#include <stddef.h>

/*
 * How a string is escaped.  Both modes escape ", \, newline and tab with a
 * backslash; the rest of what they escape:
 *	ESC_C		C style, for text: \r, and every other byte outside
 *			printable ASCII as \xNN
 *	ESC_JSON	control characters and DEL as \u00NN, bytes >= 0x80 as
 *			they are (UTF-8 stays UTF-8)
 *	ESC_JSON_ASCII	the same, and bytes >= 0x80 as \u00NN too: valid JSON
 *			from text not known to be UTF-8

 */
enum esc_mode { ESC_C, ESC_JSON, ESC_JSON_ASCII };

#define ESC_MAX 6 /* bytes one character may take escaped */

/*
 * Escape the string *s into out (len bytes at most, no NUL added, no
 * quotes), each character whole: returns the bytes written and leaves *s at
 * the first character not written (at the NUL when all was).
 */
size_t esc_str(char *out, size_t len, const char **s, enum esc_mode mode);

#endif /* RIP_ANALYSIS_ESCAPE_H */
