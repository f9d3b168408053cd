/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis/escape.c - the one escaper of strings for text and JSON (see
 * escape.h): a byte at a time, each character written whole or not at all,
 * so that a caller with a small buffer can go on where it stopped.
 */
#include <string.h>

#include "analysis/escape.h"

size_t esc_str(char *out, size_t len, const char **s, enum esc_mode mode)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)*s;
	char *o = out, *end = out + len;

	for (; *p; p++) {
		char e[ESC_MAX];
		size_t n = 2;

		if (*p >= 0x20 && *p != '"' && *p != '\\' &&
		    (*p < 0x7f || (*p > 0x7f && mode == ESC_JSON))) {
			if (o == end)
				break;
			*o++ = (char)*p;
			continue;
		}
		e[0] = '\\';
		switch (*p) {
		case '"':
		case '\\':
			e[1] = (char)*p;
			break;
		case '\n':
			e[1] = 'n';
			break;
		case '\t':
			e[1] = 't';
			break;
		case '\r':
			if (mode == ESC_C) {
				e[1] = 'r';
				break;
			}
			/* fall through */
		default:
			if (mode == ESC_C) {
				e[1] = 'x';
				n = 4;
			} else {
				memcpy(e + 1, "u00", 3);
				n = 6;
			}
			e[n - 2] = digits[*p >> 4];
			e[n - 1] = digits[*p & 15];
		}
		if ((size_t)(end - o) < n)
			break;
		memcpy(o, e, n);
		o += n;
	}
	*s = (const char *)p;
	return (size_t)(o - out);
}
