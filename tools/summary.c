/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/summary.c - the summary line of rip run and rip record
 * (tools/summary.h).
 */
#include <stdio.h>

#include "record/consume.h"
#include "tools/format.h"
#include "tools/summary.h"
#include "tools/tool.h"

void sum_recorded(const char *cmd, const struct rec *r, uint64_t lost, const char *what)
{
	const struct rec_stats *st = &r->st;
	char b[32];

	const struct trace_store *ts = &r->stored;
	char d[32];

	if (ts->format == TRACE_STORE_PACKED && r->dir[0])
		snprintf(d, sizeof(d), ", %s on disk", fmt_bytes(ts->kept_bytes, b, sizeof(b)));
	else
		d[0] = 0;
	fprintf(stderr, "%s %s: %llu events (%s%s) recorded in %s%s, %llu lost%s", rip_prog, cmd,
		(unsigned long long)st->events, fmt_bytes(st->bytes, b, sizeof(b)), d,
		r->dir[0] ? r->dir : "relayd only", r->dir[0] ? "/" : "", (unsigned long long)lost,
		what);
	if (ts->first_chunk)
		fprintf(stderr, "; the oldest %llu events (%u chunks) removed to keep within --max-size",
			(unsigned long long)ts->dropped_events, ts->first_chunk);
	if (ts->handed)
		fprintf(stderr, "; %u chunk%s handed to --on-rotate's command%s%.0llu%s", ts->handed,
			ts->handed == 1 ? "" : "s",
			ts->handed_failed ? " (" : "", (unsigned long long)ts->handed_failed,
			ts->handed_failed ? " of them failed)" : "");
	if (st->lost_packets)
		fprintf(stderr, " (%llu packets overwritten before rip read them)",
			(unsigned long long)st->lost_packets);
	if (st->corrupt)
		fprintf(stderr, ", %llu corrupt packets skipped", (unsigned long long)st->corrupt);
	fputc('\n', stderr);
}
