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

void json_str(FILE *out, const char *s)
{
	char buf[256];

	if (!s)
		s = "";
	fputc('"', out);
	while (*s) {
		size_t n = esc_str(buf, sizeof(buf), &s, ESC_JSON);

		fwrite(buf, 1, n, out);
	}
	fputc('"', out);
}

void text_str(FILE *out, const char *s)
{
	char buf[256];

	while (s && *s) {
		size_t n = esc_str(buf, sizeof(buf), &s, ESC_C);

		fwrite(buf, 1, n, out);
	}
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
