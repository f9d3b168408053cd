// SPDX-License-Identifier: Apache-2.0
/*
 * tools/format.c - byte counts, escaped strings and the JSON head of a trace,
 * as every rip command writes them (see format.h).
 */
#include <inttypes.h>
#include <string.h>

#include "read/evsource.h"
#include "tools/format.h"

const char *fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
	if (bytes < 10000)
		snprintf(buf, len, "%" PRIu64 " bytes", bytes);
	else if (bytes < 10000000)
		snprintf(buf, len, "%.1f kB", (double)bytes / 1e3);
	else if (bytes < 10000000000ull)
		snprintf(buf, len, "%.1f MB", (double)bytes / 1e6);
	else
		snprintf(buf, len, "%.1f GB", (double)bytes / 1e9);
	return buf;
}

const char *fmt_bytes_exact(uint64_t bytes, char *buf, size_t len)
{
	char h[32];

	if (bytes < 10000)
		snprintf(buf, len, "%" PRIu64 " bytes", bytes);
	else
		snprintf(buf, len, "%s (%" PRIu64 " bytes)", fmt_bytes(bytes, h, sizeof(h)), bytes);
	return buf;
}

const char *fmt_size_bin(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= (1ull << 30))
		snprintf(buf, len, "%.1f GiB", (double)bytes / (1ull << 30));
	else
		snprintf(buf, len, "%.1f MiB", (double)bytes / (1ull << 20));
	return buf;
}

size_t fmt_escape(char *out, size_t len, const char **s, enum fmt_esc mode)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)*s;
	char *o = out, *end = out + len;

	for (; *p; p++) {
		char e[FMT_ESC_MAX];
		size_t n = 2;

		if (*p >= 0x20 && *p != '"' && *p != '\\' &&
		    (*p < 0x7f || (*p > 0x7f && mode == FMT_ESC_JSON))) {
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
			if (mode == FMT_ESC_C) {
				e[1] = 'r';
				break;
			}
			/* fall through */
		default:
			if (mode == FMT_ESC_C) {
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

void json_str(FILE *out, const char *s)
{
	char buf[256];

	if (!s)
		s = "";
	fputc('"', out);
	while (*s) {
		size_t n = fmt_escape(buf, sizeof(buf), &s, FMT_ESC_JSON);

		fwrite(buf, 1, n, out);
	}
	fputc('"', out);
}

void json_trace_head(FILE *out, struct evs *s)
{
	const struct rip_file_hdr *h = evs_file_hdr(s);
	char comm[sizeof(h->comm) + 1], exe[sizeof(h->exe) + 1];

	/* NUL-terminated copies: the header is the trace's, not to be trusted */
	memcpy(comm, h->comm, sizeof(h->comm));
	comm[sizeof(h->comm)] = 0;
	memcpy(exe, h->exe, sizeof(h->exe));
	exe[sizeof(h->exe)] = 0;
	fputs("{\"version\":1,\"source\":", out);
	json_str(out, evs_source(s));
	fprintf(out, ",\"pid\":%d,\"comm\":", (int)h->pid);
	json_str(out, comm);
	fputs(",\"exe\":", out);
	json_str(out, exe);
}
