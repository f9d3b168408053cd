// SPDX-License-Identifier: Apache-2.0
/*
 * tools/ps-waits.c - how rip ps prints the wait records of a ring file's
 * threads (analysis/waits.c groups them): by what they wait in and the
 * function and line that called it, with how long they have waited (live:
 * a duration; after a crash: the wall-clock time each wait began, since the
 * time of death is not in the file), what on (a descriptor, an address) and,
 * for a call with a timeout, how long it has left (live) or its timeout and
 * the wall-clock time of its deadline (after a crash).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/waits.h"
#include "read/watch.h"
#include "tools/format.h"
#include "tools/ps-waits.h"
#include "tools/tool.h"

bool pw_waiting(const struct rr_slot *s)
{
	return wa_waiting(s);
}

static const char *pw_kind(uint32_t kind, char *buf, size_t len)
{
	const char *n = wa_kind_name(kind);

	if (n)
		return n;
	snprintf(buf, len, "kind-%u", kind);
	return buf;
}

/*
 * A duration the program asked for (a sleep's), to the nearest of the
 * units rr_fmt_duration shows it in: a sleep to an absolute deadline is
 * seen a little after it was computed (Python's time.sleep(6) is 5.9999 s
 * left), and cut it showed as 5.9s.
 */
static int64_t pw_round(uint64_t ns)
{
	uint64_t half = ns < 1000000u	     ? 500u :
			ns < 1000000000u     ? 500000u :
			ns < 60000000000u    ? 50000000u :
			ns < 3600000000000u  ? 500000000u :
			ns < 86400000000000u ? 30000000000u :
					       1800000000000u;

	return ns > (uint64_t)INT64_MAX - half ? INT64_MAX : (int64_t)(ns + half);
}

/* "fd 3", "0x7f12...", "2s" or "" for one arg of kind. */
static const char *pw_arg(uint32_t kind, uint64_t arg, char *buf, size_t len)
{
	char d[32];

	switch (wa_arg_kind(kind)) {
	case WA_ARG_FD:
		snprintf(buf, len, "fd %" PRId64, (int64_t)arg);
		break;
	case WA_ARG_COUNT:
		snprintf(buf, len, "%" PRIu64 " fds", arg);
		break;
	case WA_ARG_ADDR:
		snprintf(buf, len, "0x%" PRIx64, arg);
		break;
	case WA_ARG_NS:
		snprintf(buf, len, "%s", rr_fmt_duration(pw_round(arg), d, sizeof(d)));
		break;
	case WA_ARG_PID:
		if ((int64_t)arg == -1)
			snprintf(buf, len, "any child");
		else
			snprintf(buf, len, "pid %" PRId64, (int64_t)arg);
		break;
	case WA_ARG_SIGSET:
		snprintf(buf, len, "set 0x%" PRIx64, arg);
		break;
	case WA_ARG_SYSCALL:
		if (wt_syscall_name((long)arg))
			snprintf(buf, len, "%s", wt_syscall_name((long)arg));
		else
			snprintf(buf, len, "nr %" PRId64, (int64_t)arg);
		break;
	default:
		buf[0] = 0;
	}
	return buf;
}

/* The wall-clock time of ns (realtime) as HH:MM:SS.mmm; "?" when it cannot be said. */
static const char *pw_clock(int64_t rt, char *buf, size_t len)
{
	time_t sec = (time_t)(rt / 1000000000);
	struct tm tm;

	if (rt <= 0 || !localtime_r(&sec, &tm))
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec,
			 (int)(rt % 1000000000 / 1000000));
	return buf;
}

/* ns a - b, saturated. */
static int64_t pw_sub(int64_t a, int64_t b)
{
	int64_t d;

	if (__builtin_sub_overflow(a, b, &d))
		d = b < 0 ? INT64_MAX : INT64_MIN;
	return d;
}

/* How long slot s has waited at now (live), at least 0. */
static int64_t pw_waited(const struct pw_ctx *c, const struct rr_slot *s)
{
	int64_t d =
		pw_sub(rr_ticks_to_ns(c->hdr, c->now_ticks), rr_ticks_to_ns(c->hdr, s->wait.since));

	return d < 0 ? 0 : d;
}

/*
 * The time slot s's wait has left (live; negative: its deadline is past)
 * and its timeout; false when it has none.
 */
static bool pw_left(const struct pw_ctx *c, const struct rr_slot *s, int64_t *left, int64_t *tmo)
{
	uint64_t t;

	if (!wa_timeout(s, &t))
		return false;
	*tmo = t > INT64_MAX ? INT64_MAX : (int64_t)t;
	*left = c->alive ? pw_sub(*tmo, pw_waited(c, s)) : *tmo;
	return true;
}

/* The wall-clock time of slot s's deadline, in ns; 0 when unknown. */
static int64_t pw_deadline(const struct pw_ctx *c, const struct rr_slot *s, int64_t tmo)
{
	int64_t rt, d;

	if (__builtin_add_overflow(rr_ticks_to_ns(c->hdr, s->wait.since), c->hdr->realtime_offset,
				   &rt) ||
	    __builtin_add_overflow(rt, tmo, &d) || rt <= 0)
		return 0;
	return d;
}

/* "59.5s", or "overdue" once the deadline is past. */
static const char *pw_fmt_left(int64_t left, char *buf, size_t len)
{
	if (left < 0)
		snprintf(buf, len, "overdue");
	else
		rr_fmt_duration(left, buf, len);
	return buf;
}

/*
 * The LEFT (live) or TIMEOUT (dead) column of a group: the range of what
 * its members have left, or of their timeouts and the first deadline;
 * "(k of n)" when only some have a timeout; "-" when none has.
 */
static const char *pw_group_tmo(const struct pw_ctx *c, const struct wa_group *gr, char *buf,
				size_t len)
{
	int64_t lo = 0, hi = 0, first = 0;
	char a[32], b[32], d[32];
	size_t k = 0, n = 0;

	if (!gr->timed)
		return snprintf(buf, len, "-"), buf;
	for (size_t m = 0; m < gr->n; m++) {
		const struct rr_slot *s = &c->s->v[gr->members[m]];
		int64_t left, tmo, dl;

		if (!pw_left(c, s, &left, &tmo))
			continue;
		dl = pw_deadline(c, s, tmo);
		if (!n || left < lo)
			lo = left;
		if (!n || left > hi)
			hi = left;
		if (dl && (!first || dl < first))
			first = dl;
		n++;
	}
	if (c->alive) {
		pw_fmt_left(lo, a, sizeof(a));
		pw_fmt_left(hi, b, sizeof(b));
	} else {
		rr_fmt_duration(lo, a, sizeof(a));
		rr_fmt_duration(hi, b, sizeof(b));
	}
	k = (size_t)snprintf(buf, len, "%s%s%s", a, strcmp(a, b) ? ".." : "",
			     strcmp(a, b) ? b : "");
	if (!c->alive && first && k < len)
		k += (size_t)snprintf(buf + k, len - k, " (until %s)",
				      pw_clock(first, d, sizeof(d)));
	if (n < gr->n && k < len)
		snprintf(buf + k, len - k, " (%zu of %zu)", n, gr->n);
	return buf;
}

/* How long a wait that began at since has lasted (live), or when it began (dead). */
static const char *pw_when(const struct pw_ctx *c, uint64_t since, char *buf, size_t len)
{
	char d[32];

	if (!since) {
		snprintf(buf, len, "-");
	} else if (c->alive) {
		int64_t ns = rr_ticks_to_ns(c->hdr, c->now_ticks) - rr_ticks_to_ns(c->hdr, since);

		snprintf(buf, len, "%s", rr_fmt_duration(ns < 0 ? 0 : ns, d, sizeof(d)));
	} else {
		int64_t rt = rr_ticks_to_ns(c->hdr, since) + c->hdr->realtime_offset;

		if (rt <= 0)
			snprintf(buf, len, "?");
		else
			snprintf(buf, len, "since %s", pw_clock(rt, d, sizeof(d)));
	}
	return buf;
}

static void pw_where(const struct pw_ctx *c, uint64_t ra, struct pw_site *site)
{
	memset(site, 0, sizeof(*site));
	if (!ra || !c->site(c->arg, ra - 1, site) || !site->func)
		site->func = "?";
}

static void pw_loc(const struct pw_site *site, char *buf, size_t len)
{
	if (site->file && site->line)
		snprintf(buf, len, "%s:%d", tool_base(site->file), site->line);
	else
		snprintf(buf, len, "?");
}

int pw_print_groups(const struct pw_ctx *c, FILE *out)
{
	struct wa_groups g;
	char kb[32], ab[64], w1[48], w2[48], when[100], tb[128], loc[256], in[128];
	int ret = wa_group(c->s, c->all, &g);

	if (ret)
		return ret;
	if (!g.waiting && !g.torn)
		goto out;
	fprintf(out, "\n%zu thread%s waiting in wrapped calls (%s):\n", g.waiting,
		g.waiting == 1 ? "" : "s", c->alive ? "for how long" : "when each wait began");
	fprintf(out, "%7s  %-24s %-28s %-24s %-20s %s\n", "COUNT", "WAITING IN", "CALLER",
		"LOCATION", c->alive ? "FOR" : "SINCE", c->alive ? "LEFT" : "TIMEOUT");
	for (size_t k = 0; k < g.n; k++) {
		const struct wa_group *gr = &g.v[k];
		struct pw_site site;

		pw_where(c, gr->ra, &site);
		pw_loc(&site, loc, sizeof(loc));
		if (c->verbose)
			snprintf(loc + strlen(loc), sizeof(loc) - strlen(loc), " [0x%" PRIx64 "]",
				 gr->ra);
		pw_arg(gr->kind, gr->arg, ab, sizeof(ab));
		if (gr->same_arg && ab[0])
			snprintf(in, sizeof(in), "%s(%s)", pw_kind(gr->kind, kb, sizeof(kb)), ab);
		else if (ab[0])
			snprintf(in, sizeof(in), "%s(%zu different)", pw_kind(gr->kind, kb, sizeof(kb)),
				 gr->n);
		else
			snprintf(in, sizeof(in), "%s", pw_kind(gr->kind, kb, sizeof(kb)));
		pw_when(c, gr->since_min, w1, sizeof(w1));
		if (gr->since_max != gr->since_min && c->alive) {
			pw_when(c, gr->since_max, w2, sizeof(w2));
			snprintf(when, sizeof(when), "%s..%s", w2, w1);
		} else {
			snprintf(when, sizeof(when), "%s", w1);
		}
		fprintf(out, "%7zu  %-24s %-28s %-24s %-20s %s\n", gr->n, in, site.func, loc, when,
			pw_group_tmo(c, gr, tb, sizeof(tb)));
	}
	if (g.torn)
		fprintf(out, "%7zu  (a wait record being written%s)\n", g.torn,
			c->alive ? "" : " when the process died");
out:
	wa_groups_free(&g);
	return 0;
}

/* ,"timeout_ns":...,"deadline_realtime_ns":...[,"left_ns":...] when slot s's wait has a timeout */
static void pw_json_tmo(const struct pw_ctx *c, const struct rr_slot *s, FILE *out)
{
	int64_t left, tmo, dl;

	if (!pw_left(c, s, &left, &tmo))
		return;
	fprintf(out, ",\"timeout_ns\":%" PRId64, tmo);
	dl = pw_deadline(c, s, tmo);
	if (dl)
		fprintf(out, ",\"deadline_realtime_ns\":%" PRId64, dl);
	if (c->alive)
		fprintf(out, ",\"left_ns\":%" PRId64, left);
}

static void pw_json_wait(const struct pw_ctx *c, const struct rr_slot *s, FILE *out)
{
	const struct rip_wait *w = &s->wait;
	struct pw_site site;
	char kb[32];

	pw_where(c, w->ra, &site);
	fprintf(out, "{\"in\":");
	json_str(out, pw_kind(w->kind, kb, sizeof(kb)));
	fprintf(out, ",\"arg\":%" PRId64 ",\"caller\":{\"function\":", (int64_t)w->arg);
	json_str(out, site.func);
	fprintf(out, ",\"file\":");
	json_str(out, site.file);
	fprintf(out, ",\"line\":%d,\"address\":\"0x%" PRIx64 "\"}", site.line, w->ra);
	if (w->since) {
		int64_t ns = rr_ticks_to_ns(c->hdr, w->since);

		fprintf(out, ",\"since_realtime_ns\":%" PRId64, ns + c->hdr->realtime_offset);
		if (c->alive) {
			int64_t d = rr_ticks_to_ns(c->hdr, c->now_ticks) - ns;

			fprintf(out, ",\"waited_ns\":%" PRId64, d < 0 ? 0 : d);
		}
	}
	pw_json_tmo(c, s, out);
	fputc('}', out);
}

int pw_json_groups(const struct pw_ctx *c, FILE *out)
{
	struct wa_groups g;
	int ret = wa_group(c->s, c->all, &g);

	if (ret)
		return ret;
	fprintf(out, ",\"waiting\":%zu,\"waits_torn\":%zu,\"waits\":[", g.waiting, g.torn);
	for (size_t k = 0; k < g.n; k++) {
		const struct wa_group *gr = &g.v[k];
		const struct rr_slot *first = &c->s->v[gr->members[0]];

		fprintf(out, "%s{\"count\":%zu,\"wait\":", k ? "," : "", gr->n);
		pw_json_wait(c, first, out);
		fprintf(out, ",\"members\":[");
		for (size_t m = 0; m < gr->n; m++) {
			const struct rr_slot *s = &c->s->v[gr->members[m]];

			fprintf(out, "%s{\"slot\":%u,\"tid\":%d,\"name\":", m ? "," : "", s->index,
				s->tid);
			json_str(out, s->name);
			fprintf(out, ",\"arg\":%" PRId64, (int64_t)s->wait.arg);
			pw_json_tmo(c, s, out);
			fputc('}', out);
		}
		fprintf(out, "]}");
	}
	fputc(']', out);
	wa_groups_free(&g);
	return 0;
}

void pw_print_thread(const struct pw_ctx *c, const struct rr_slot *s, FILE *out)
{
	struct pw_site site;
	char kb[32], ab[64], w[48], loc[256], tb[100] = "", d1[32], d2[32];
	int64_t left, tmo, dl;

	if (!pw_waiting(s)) {
		if (s->wait_torn)
			fprintf(out, "      (its wait record was being written)\n");
		return;
	}
	pw_where(c, s->wait.ra, &site);
	pw_loc(&site, loc, sizeof(loc));
	pw_arg(s->wait.kind, s->wait.arg, ab, sizeof(ab));
	pw_when(c, s->wait.since, w, sizeof(w));
	if (pw_left(c, s, &left, &tmo) && c->alive) {
		snprintf(tb, sizeof(tb), ", %s%s", pw_fmt_left(left, d1, sizeof(d1)),
			 left < 0 ? "" : " left");
	} else if (pw_left(c, s, &left, &tmo)) {
		dl = pw_deadline(c, s, tmo);
		snprintf(tb, sizeof(tb), ", timeout %s%s%s%s", rr_fmt_duration(tmo, d1, sizeof(d1)),
			 dl ? " (until " : "", dl ? pw_clock(dl, d2, sizeof(d2)) : "",
			 dl ? ")" : "");
	}
	fprintf(out, "      waiting in %s%s%s%s %s%s%s, called from %s (%s)\n",
		pw_kind(s->wait.kind, kb, sizeof(kb)), ab[0] ? "(" : "", ab, ab[0] ? ")" : "",
		c->alive && s->wait.since ? "for " : "", w, tb, site.func, loc);
}

void pw_json_thread(const struct pw_ctx *c, const struct rr_slot *s, FILE *out)
{
	if (!pw_waiting(s))
		return;
	fprintf(out, ",\"wait\":");
	pw_json_wait(c, s, out);
}
