/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/cmd-ps.c - `rip ps`: where every thread and coroutine of a process
 * is, from its ring file, live or after it died.
 *
 * By default slots are grouped by the function their newest snap is in,
 * biggest groups first, so that ten thousand threads fit on a screen; the
 * odd ones out (stuck, deadlocked, spinning) stand alone in small groups.
 * --threads lists every slot with its recent path instead.  --still=DUR
 * reads the file twice and marks what did not move in between.  --stacks
 * shows the shadow call stacks of a program built for function tracing
 * instead (tools/ps-stacks.c).
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "read/funcs.h"
#include "read/ringfile.h"
#include "read/sym.h"
#include "tools/ps-stacks.h"
#include "tools/ps-waits.h"
#include "tools/ps-watch.h"
#include "tools/tool.h"

#define PS_FRAMES 16

static int cmd_ps(int argc, char **argv);

static const struct rip_cmd cmd_ps_def = {
	.name = "ps",
	.run = cmd_ps,
	.summary = "show where every thread and coroutine is (live or post-mortem)",
	.usage = "usage: rip ps [options] TARGET\n"
		 "       rip ps --legacy FILE --exe EXE [options]\n"
		 "\n"
		 "Show where every thread and coroutine of a process is, from its ring file.\n"
		 "TARGET is a pid or a ring file (the file of a dead process works too), or\n"
		 "a trace of rip run, which keeps a copy of its program's ring file.\n"
		 "\n"
		 "  -t, --threads         each thread and coroutine with its recent path\n"
		 "                        (oldest to newest) instead of groups\n"
		 "  -S, --stacks          the call stack of each thread and coroutine, from\n"
		 "                        the hooks of code built with -finstrument-functions\n"
		 "                        or patched (rip enable PID func), no unwinding:\n"
		 "                        grouped by path, or one by one\n"
		 "                        with --threads\n"
		 "  -s, --still=DURATION  read twice, DURATION apart (e.g. 2s, 500ms), and mark\n"
		 "                        what did not move: stuck or blocked\n"
		 "  -a, --all             include exited threads and destroyed coroutines\n"
		 "  -v, --verbose         raw addresses and inline frames\n"
		 "  -j, --json            machine-readable output\n"
		 "      --legacy FILE     read a raw file of the original librip header\n"
		 "      --exe EXE         the (non-PIE) executable that wrote --legacy FILE\n"
		 "      --sysroot DIR     find the traced binaries under DIR\n"
		 "      --debug-dir DIR   look for separate debug files under DIR too\n"
		 "  -h, --help            this text\n"
		 "\n"
		 "Exit status: 0 success, 1 failure (no such process, corrupt file), 2 usage.\n",
};

struct ps_opts {
	bool threads, all, verbose, json, stacks;
	int64_t still_ns;
	const char *legacy, *exe, *sysroot, *debug_dir;
};

/* Where one address resolves: the first frame that is not librip's own. */
struct ps_site {
	uint64_t ip;
	const char *func;
	const char *file;
	int line;
	const char *module;
	uint64_t offset;
	int nframes;
	struct rip_frame frames[PS_FRAMES];
	char label[64]; /* "module+0x1234" when the function is unknown */
};

struct ps_state {
	struct ps_opts o;
	struct rr_file f;
	struct rr_slots s;
	struct rip_sym *sym;
	bool alive;
	uint64_t now_ticks;
	/* ip -> site, open addressing */
	struct ps_site **sites;
	size_t nsites, cap;
	uint8_t *still; /* per slot in s.v: 1 if it did not move */
	bool have_still;
};

/* ---- symbols ---------------------------------------------------------------------- */

static uint64_t hash_ip(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static int ps_grow(struct ps_state *st)
{
	size_t ncap = st->cap ? st->cap * 2 : 1024;
	struct ps_site **n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < st->cap; i++) {
		struct ps_site *s = st->sites[i];
		size_t h;

		if (!s)
			continue;
		for (h = hash_ip(s->ip) & (ncap - 1); n[h]; h = (h + 1) & (ncap - 1))
			;
		n[h] = s;
	}
	free(st->sites);
	st->sites = n;
	st->cap = ncap;
	return 0;
}

static struct ps_site *ps_site(struct ps_state *st, uint64_t ip)
{
	struct ps_site *s;
	size_t h;
	int n, k;

	if (st->nsites * 2 >= st->cap && ps_grow(st))
		return NULL;
	for (h = hash_ip(ip) & (st->cap - 1); st->sites[h]; h = (h + 1) & (st->cap - 1))
		if (st->sites[h]->ip == ip)
			return st->sites[h];
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->ip = ip;
	n = st->sym ? rip_sym_lookup(st->sym, ip, s->frames, PS_FRAMES) : 0;
	if (n < 0)
		n = 0;
	s->nframes = n;
	for (k = 0; k < n && rip_sym_frame_internal(&s->frames[k]); k++)
		;
	if (k == n && n > 0)
		k = n - 1;
	if (n > 0) {
		s->func = s->frames[k].func;
		s->file = s->frames[k].file;
		s->line = s->frames[k].line;
		s->module = s->frames[0].module;
		s->offset = s->frames[k].offset;
	}
	if (!s->func) {
		if (s->module)
			snprintf(s->label, sizeof(s->label), "%s+0x%llx", tool_base(s->module),
				 (unsigned long long)(n > 0 ? s->frames[0].offset : 0));
		else
			snprintf(s->label, sizeof(s->label), "0x%llx", (unsigned long long)ip);
		s->func = s->label;
	}
	st->sites[h] = s;
	st->nsites++;
	return s;
}

static int ps_symbols(struct ps_state *st)
{
	struct rip_sym_opts so = { .sysroot = st->o.sysroot, .debug_dir = st->o.debug_dir };
	struct rip_module *mods = NULL;
	char err[RR_ERR_MAX];
	size_t n = 0;
	int ret;

	ret = rip_sym_new(&so, &st->sym);
	if (ret) {
		tool_err("cannot start the symbolizer: %s", strerror(-ret));
		return ret;
	}
	if (st->o.legacy) {
		/* The original header wrote absolute addresses of a non-PIE executable. */
		return rip_sym_add_module(st->sym, 0, UINT64_MAX, 0, st->o.exe, NULL, 0,
					  RIP_MOD_EXE);
	}
	ret = rr_read_modules(&st->f, &mods, &n, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		return ret;
	}
	rip_sym_add_modules(st->sym, mods, n);
	free(mods);
	return 0;
}

/* ---- waits (tools/ps-waits.c prints them) ------------------------------------------------ */

static bool ps_pw_site(void *arg, uint64_t ip, struct pw_site *out)
{
	struct ps_site *site = ps_site(arg, ip);

	if (!site)
		return false;
	out->func = site->func;
	out->file = site->file;
	out->line = site->line;
	return true;
}

static struct pw_ctx ps_pw(struct ps_state *st)
{
	return (struct pw_ctx){ .s = &st->s, .hdr = &st->f.hdr, .alive = st->alive,
				.all = st->o.all, .verbose = st->o.verbose,
				.now_ticks = st->now_ticks, .site = ps_pw_site, .arg = st };
}

/* ---- still -------------------------------------------------------------------------- */

static int ps_still(struct ps_state *st)
{
	struct rr_slots later;
	struct timespec ts = { .tv_sec = st->o.still_ns / 1000000000,
			       .tv_nsec = st->o.still_ns % 1000000000 };
	char err[RR_ERR_MAX];
	size_t j = 0;
	int ret;

	st->still = calloc(st->s.n ? st->s.n : 1, 1);
	if (!st->still)
		return -ENOMEM;
	if (!st->alive) {
		/* A dead process moves no more: everything is still. */
		memset(st->still, 1, st->s.n);
		st->have_still = true;
		return 0;
	}
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	ret = rr_read_slots(&st->f, &later, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		return ret;
	}
	/* Both lists are in slot order: merge. */
	for (size_t i = 0; i < st->s.n; i++) {
		const struct rr_slot *a = &st->s.v[i];

		while (j < later.n && later.v[j].index < a->index)
			j++;
		if (j < later.n && later.v[j].index == a->index) {
			const struct rr_slot *b = &later.v[j];

			st->still[i] = b->gen == a->gen && b->seq == a->seq &&
				       b->switch_ts == a->switch_ts && b->state == a->state;
		}
	}
	rr_slots_free(&later);
	st->have_still = true;
	return 0;
}

/* ---- helpers -------------------------------------------------------------------------- */

static const char *state_name(const struct rr_slot *s)
{
	switch (s->state) {
	case RIP_SLOT_RUNNING:
		return "running";
	case RIP_SLOT_WAITING:
		return "waiting";
	case RIP_SLOT_EXITED:
		return s->kind == RIP_KIND_CORO ? "destroyed" : "exited";
	default:
		return "free";
	}
}

static const char *kind_name(const struct rr_slot *s)
{
	return s->kind == RIP_KIND_CORO ? "coroutine" : "thread";
}

/* Time the slot has been parked (coroutines waiting) up to now or the death. */
static int64_t parked_ns(const struct ps_state *st, const struct rr_slot *s)
{
	if (s->kind != RIP_KIND_CORO || s->state != RIP_SLOT_WAITING || st->f.legacy_raw)
		return -1;
	return rr_ticks_to_ns(&st->f.hdr, st->now_ticks) - rr_ticks_to_ns(&st->f.hdr, s->switch_ts);
}

static bool shown(const struct ps_state *st, const struct rr_slot *s)
{
	return st->o.all || s->state != RIP_SLOT_EXITED;
}

static const char *where_str(const struct ps_site *site, char *buf, size_t len)
{
	if (site->file && site->line)
		snprintf(buf, len, "%s:%d", tool_base(site->file), site->line);
	else if (site->module)
		snprintf(buf, len, "%s", tool_base(site->module));
	else
		snprintf(buf, len, "?");
	return buf;
}

/* ---- grouped view ------------------------------------------------------------------------- */

struct ps_row {
	const char *func;	/* group key */
	struct ps_site *site;	/* location (one row per distinct file:line) */
	size_t total;		/* members of the whole function group */
	size_t count, threads, coros, still, exited;
	int64_t park_min, park_max;
	size_t *members;	/* indices into s.v */
	size_t nmem, capmem;
};

struct ps_rows {
	struct ps_row *v;
	size_t n, cap;
};

static int row_add(struct ps_rows *rows, const char *func, struct ps_site *site, size_t idx)
{
	struct ps_row *r = NULL;

	/* rows are few (distinct locations): a linear scan from the end is fine */
	for (size_t i = rows->n; i-- > 0;) {
		if (rows->v[i].site == site ||
		    (rows->v[i].func == func && rows->v[i].site->file == site->file &&
		     rows->v[i].site->line == site->line && site->line)) {
			r = &rows->v[i];
			break;
		}
	}
	if (!r) {
		if (rows->n == rows->cap) {
			size_t nc = rows->cap ? rows->cap * 2 : 64;
			struct ps_row *nv = realloc(rows->v, nc * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			rows->v = nv;
			rows->cap = nc;
		}
		r = &rows->v[rows->n++];
		memset(r, 0, sizeof(*r));
		r->func = func;
		r->site = site;
		r->park_min = INT64_MAX;
		r->park_max = -1;
	}
	if (r->nmem == r->capmem) {
		size_t nc = r->capmem ? r->capmem * 2 : 8;
		size_t *nm = realloc(r->members, nc * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		r->members = nm;
		r->capmem = nc;
	}
	r->members[r->nmem++] = idx;
	return 0;
}

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static const struct ps_rows *sort_rows_ctx;

static int row_cmp(const void *pa, const void *pb)
{
	const struct ps_row *a = pa, *b = pb;
	int c;

	(void)sort_rows_ctx;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	c = cmp_str(a->func, b->func);
	if (c)
		return c;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	c = cmp_str(a->site->file, b->site->file);
	return c ? c : a->site->line - b->site->line;
}

/*
 * Summarise names: "worker-0..8999" for a run of numbered names, else the
 * first few names and how many more.
 */
struct name_run {
	char prefix[RIP_NAME_MAX];
	size_t count;
	long long lo, hi;
	bool numbered;
};

static void names_summary(const struct ps_state *st, const struct ps_row *r, char *buf, size_t len)
{
	struct name_run runs[4];
	size_t nruns = 0, other = 0, off = 0;

	for (size_t i = 0; i < r->nmem; i++) {
		const char *name = st->s.v[r->members[i]].name;
		size_t l = strlen(name), p = l;
		long long num = -1;
		struct name_run *run = NULL;

		while (p > 0 && name[p - 1] >= '0' && name[p - 1] <= '9' && l - p < 15)
			p--;
		if (p < l)
			num = strtoll(name + p, NULL, 10);
		for (size_t k = 0; k < nruns; k++)
			if (!strncmp(runs[k].prefix, name, p) && runs[k].prefix[p] == 0 &&
			    runs[k].numbered == (num >= 0))
				run = &runs[k];
		if (!run && nruns < 4) {
			run = &runs[nruns++];
			memcpy(run->prefix, name, p);
			run->prefix[p] = 0;
			run->count = 0;
			run->lo = num;
			run->hi = num;
			run->numbered = num >= 0;
			if (!run->numbered)
				snprintf(run->prefix, sizeof(run->prefix), "%s", name);
		}
		if (!run) {
			other++;
			continue;
		}
		if (!run->numbered && strcmp(run->prefix, name)) {
			other++;
			continue;
		}
		run->count++;
		if (num >= 0 && num < run->lo)
			run->lo = num;
		if (num > run->hi)
			run->hi = num;
	}
	buf[0] = 0;
	for (size_t k = 0; k < nruns && off < len; k++) {
		const struct name_run *run = &runs[k];
		int n;

		if (run->numbered && run->count > 1)
			n = snprintf(buf + off, len - off, "%s%s%s%lld..%lld", k ? ", " : "",
				     (long long)run->count == run->hi - run->lo + 1 ? "" : "some of ",
				     run->prefix, run->lo, run->hi);
		else if (run->numbered)
			n = snprintf(buf + off, len - off, "%s%s%lld", k ? ", " : "", run->prefix,
				     run->lo);
		else
			n = snprintf(buf + off, len - off, "%s%s%s", k ? ", " : "",
				     run->prefix[0] ? run->prefix : "(unnamed)",
				     run->count > 1 ? " (x" : "");
		if (n < 0)
			break;
		off += (size_t)n;
		if (!run->numbered && run->count > 1 && off < len) {
			n = snprintf(buf + off, len - off, "%zu)", run->count);
			off += n > 0 ? (size_t)n : 0;
		}
	}
	if (other && off < len)
		snprintf(buf + off, len - off, ", +%zu more", other);
}

static void print_header(const struct ps_state *st, FILE *out)
{
	const struct rip_file_hdr *h = &st->f.hdr;
	size_t threads = 0, coros = 0, waiting = 0, exited = 0;
	struct rip_file_hdr live;
	char why[RR_ERR_MAX];

	for (size_t i = 0; i < st->s.n; i++) {
		const struct rr_slot *s = &st->s.v[i];

		if (s->state == RIP_SLOT_EXITED)
			exited++;
		else if (s->kind == RIP_KIND_CORO) {
			coros++;
			waiting += s->state == RIP_SLOT_WAITING;
		} else
			threads++;
	}
	if (st->f.legacy_raw) {
		fprintf(out, "%s: original librip file, %zu threads, %zu exited\n", st->f.path,
			threads, exited);
		return;
	}
	rr_live_hdr(&st->f, &live, why, sizeof(why)); /* the file shrank: what it said at open */
	fprintf(out, "%s (pid %d) %s, ring %s\n", h->comm[0] ? h->comm : "?", h->pid,
		st->alive			     ? "alive"
		: (live.proc_flags & RIP_P_EXITED) ? "exited"
		: (live.proc_flags & RIP_P_EXECED) || rr_replaced(&st->f) ? "replaced by execve"
		: (live.proc_flags & RIP_P_CLOSED) ? "gone (ring closed before)"
						   : "dead (killed or crashed)",
		st->f.path);
	fprintf(out, "%zu threads, %zu coroutines (%zu waiting), %zu exited kept for history",
		threads, coros, waiting, exited);
	if (st->f.hdr.overflow || live.overflow)
		fprintf(out, "; %u threads found no free slot (raise RIP_SLOTS)", live.overflow);
	fputc('\n', out);
}

/* The end of a --json document: what the watcher saw, then the last brace. */
static int ps_json_end(struct ps_state *st, FILE *out)
{
	struct psw_opts po = { .alive = st->alive, .now_ticks = st->now_ticks,
			       .sysroot = st->o.sysroot };
	int ret = psw_json(&st->f, &st->s, st->sym, &po, out);

	fprintf(out, "}\n");
	return ret;
}

static int ps_grouped(struct ps_state *st, FILE *out)
{
	struct pw_ctx pw = ps_pw(st);
	struct ps_rows rows = { 0 };
	char where[256], names[200], park[64], a[32], b[32];
	const char *prev = NULL;
	int ret = 0;

	for (size_t i = 0; i < st->s.n; i++) {
		const struct rr_slot *s = &st->s.v[i];
		struct ps_site *site;

		if (!shown(st, s) || pw_waiting(s))
			continue; /* waiting threads have a table of their own */
		site = s->n ? ps_site(st, s->ip[s->n - 1]) : NULL;
		if (s->n && !site)
			return -ENOMEM;
		if (!site) {
			static struct ps_site none = { .func = "(no snap yet)" };

			site = &none;
		}
		ret = row_add(&rows, site->func, site, i);
		if (ret)
			goto out_free;
	}
	/* Totals per function and per row. */
	for (size_t r = 0; r < rows.n; r++) {
		struct ps_row *row = &rows.v[r];

		row->count = row->nmem;
		for (size_t m = 0; m < row->nmem; m++) {
			const struct rr_slot *s = &st->s.v[row->members[m]];
			int64_t p = parked_ns(st, s);

			row->coros += s->kind == RIP_KIND_CORO;
			row->threads += s->kind != RIP_KIND_CORO;
			row->exited += s->state == RIP_SLOT_EXITED;
			row->still += st->have_still && st->still[row->members[m]];
			if (p >= 0) {
				row->park_min = p < row->park_min ? p : row->park_min;
				row->park_max = p > row->park_max ? p : row->park_max;
			}
		}
	}
	for (size_t r = 0; r < rows.n; r++) {
		size_t total = 0;

		for (size_t q = 0; q < rows.n; q++)
			if (!strcmp(rows.v[q].func, rows.v[r].func))
				total += rows.v[q].count;
		rows.v[r].total = total;
	}
	if (rows.n)
		qsort(rows.v, rows.n, sizeof(*rows.v), row_cmp);

	if (st->o.json) {
		fprintf(out, "{\"pid\":%d,\"comm\":", st->f.hdr.pid);
		json_str(out, st->f.hdr.comm);
		fprintf(out, ",\"ring\":");
		json_str(out, st->f.path);
		fprintf(out, ",\"alive\":%s", st->alive ? "true" : "false");
		ret = pw_json_groups(&pw, out);
		if (ret)
			goto out_free;
		fprintf(out, ",\"groups\":[");
		for (size_t r = 0; r < rows.n; r++) {
			const struct ps_row *row = &rows.v[r];

			fprintf(out, "%s{\"function\":", r ? "," : "");
			json_str(out, row->func);
			fprintf(out, ",\"file\":");
			json_str(out, row->site->file);
			fprintf(out, ",\"line\":%d,\"address\":\"0x%llx\",\"count\":%zu,"
				     "\"threads\":%zu,\"coroutines\":%zu,\"exited\":%zu",
				row->site->line, (unsigned long long)row->site->ip, row->count,
				row->threads, row->coros, row->exited);
			if (st->have_still)
				fprintf(out, ",\"still\":%zu", row->still);
			if (row->park_max >= 0)
				fprintf(out, ",\"parked_min_ns\":%lld,\"parked_max_ns\":%lld",
					(long long)row->park_min, (long long)row->park_max);
			fprintf(out, ",\"members\":[");
			for (size_t m = 0; m < row->nmem; m++) {
				const struct rr_slot *s = &st->s.v[row->members[m]];

				fprintf(out, "%s{\"slot\":%u,\"tid\":%d,\"kind\":\"%s\",\"state\":\"%s\","
					     "\"name\":",
					m ? "," : "", s->index, s->tid, kind_name(s), state_name(s));
				json_str(out, s->name);
				if (st->have_still)
					fprintf(out, ",\"still\":%s",
						st->still[row->members[m]] ? "true" : "false");
				fputc('}', out);
			}
			fprintf(out, "]}");
		}
		fputc(']', out);
		ret = ps_json_end(st, out);
		goto out_free;
	}

	print_header(st, out);
	ret = pw_print_groups(&pw, out);
	if (ret)
		goto out_free;
	if (rows.n)
		fprintf(out, "\n%7s  %s%-28s %-26s %s\n", "COUNT", st->have_still ? " STILL  " : "",
		"FUNCTION", "LOCATION", "WHO");
	for (size_t r = 0; r < rows.n; r++) {
		const struct ps_row *row = &rows.v[r];
		bool first = !prev || strcmp(prev, row->func);
		char stillcol[16] = "";

		names_summary(st, row, names, sizeof(names));
		park[0] = 0;
		if (row->park_max >= 0)
			snprintf(park, sizeof(park), "; parked %s..%s",
				 rr_fmt_duration(row->park_min, a, sizeof(a)),
				 rr_fmt_duration(row->park_max, b, sizeof(b)));
		if (st->have_still)
			snprintf(stillcol, sizeof(stillcol), "%6zu%s ", row->still,
				 row->still == row->count ? "*" : " ");
		where_str(row->site, where, sizeof(where));
		if (st->o.verbose)
			snprintf(where + strlen(where), sizeof(where) - strlen(where), " [0x%llx]",
				 (unsigned long long)row->site->ip);
		fprintf(out, "%7zu  %s%-28s %-26s %s%s%s%s\n", row->count, stillcol,
			first ? row->func : "  \"", where,
			row->threads && row->coros ? "threads+coroutines "
			: row->coros		   ? (row->coros > 1 ? "coroutines " : "coroutine ")
			: row->threads > 1	   ? "threads "
						   : "thread ",
			names, park, row->exited ? " (exited)" : "");
		prev = row->func;
	}
	if (st->have_still)
		fprintf(out, "\nSTILL: how many did not move in %s%s; * marks a location where "
			     "none did.\n",
			rr_fmt_duration(st->o.still_ns, a, sizeof(a)),
			st->alive ? "" : " (the process is dead: nothing moves)");

out_free:
	for (size_t r = 0; r < rows.n; r++)
		free(rows.v[r].members);
	free(rows.v);
	return ret;
}

/* ---- per-thread view ------------------------------------------------------------------------ */

static void print_frame_line(const struct ps_state *st, FILE *out, const struct ps_site *site,
			     unsigned repeat, bool now)
{
	char where[256];

	where_str(site, where, sizeof(where));
	fprintf(out, "      %-30s %-28s", site->func, where);
	if (repeat > 1)
		fprintf(out, " x%u", repeat);
	if (st->o.verbose) {
		fprintf(out, " [0x%llx]", (unsigned long long)site->ip);
		for (int k = 0; k < site->nframes; k++)
			if (site->frames[k].inlined && !rip_sym_frame_internal(&site->frames[k]))
				fprintf(out, " (inlined %s)",
					site->frames[k].func ? site->frames[k].func : "?");
	}
	if (now)
		fprintf(out, "  <- now");
	fputc('\n', out);
}

static int ps_threads(struct ps_state *st, FILE *out)
{
	struct pw_ctx pw = ps_pw(st);
	char a[32];

	if (st->o.json) {
		fprintf(out, "{\"pid\":%d,\"comm\":", st->f.hdr.pid);
		json_str(out, st->f.hdr.comm);
		fprintf(out, ",\"ring\":");
		json_str(out, st->f.path);
		fprintf(out, ",\"alive\":%s,\"slots\":[", st->alive ? "true" : "false");
	} else {
		print_header(st, out);
	}
	bool first = true;

	for (size_t i = 0; i < st->s.n; i++) {
		const struct rr_slot *s = &st->s.v[i];
		int64_t p = parked_ns(st, s);

		if (!shown(st, s))
			continue;
		if (st->o.json) {
			fprintf(out, "%s{\"slot\":%u,\"tid\":%d,\"kind\":\"%s\",\"state\":\"%s\","
				     "\"name\":",
				first ? "" : ",", s->index, s->tid, kind_name(s), state_name(s));
			json_str(out, s->name);
			if (p >= 0)
				fprintf(out, ",\"parked_ns\":%lld", (long long)p);
			if (st->have_still)
				fprintf(out, ",\"still\":%s", st->still[i] ? "true" : "false");
			if (s->coro)
				fprintf(out, ",\"running_coroutine_slot\":%u", s->coro - 1);
			pw_json_thread(&pw, s, out);
			fprintf(out, ",\"snaps\":%u,\"path\":[", s->seq);
			for (uint32_t k = 0; k < s->n; k++) {
				struct ps_site *site = ps_site(st, s->ip[k]);

				if (!site)
					return -ENOMEM;
				fprintf(out, "%s{\"function\":", k ? "," : "");
				json_str(out, site->func);
				fprintf(out, ",\"file\":");
				json_str(out, site->file);
				fprintf(out, ",\"line\":%d,\"address\":\"0x%llx\"}", site->line,
					(unsigned long long)site->ip);
			}
			fprintf(out, "]}");
			first = false;
			continue;
		}
		fprintf(out, "\n%s %-20s tid %-7d %s", kind_name(s), s->name[0] ? s->name : "-",
			s->tid, state_name(s));
		if (p >= 0)
			fprintf(out, ", parked %s", rr_fmt_duration(p, a, sizeof(a)));
		if (s->coro) {
			uint32_t c = s->coro - 1;
			const char *cn = NULL;

			for (size_t q = 0; q < st->s.n && !cn; q++)
				if (st->s.v[q].index == c)
					cn = st->s.v[q].name;
			fprintf(out, ", running coroutine %s", cn ? cn : "?");
		}
		if (st->have_still && st->still[i])
			fprintf(out, ", STILL");
		fprintf(out, " (%u snaps)\n", s->seq);
		pw_print_thread(&pw, s, out);
		/* oldest to newest; consecutive repeats folded */
		for (uint32_t k = 0; k < s->n;) {
			uint32_t r = 1;
			struct ps_site *site = ps_site(st, s->ip[k]);

			if (!site)
				return -ENOMEM;
			while (k + r < s->n && s->ip[k + r] == s->ip[k])
				r++;
			print_frame_line(st, out, site, r, k + r == s->n);
			k += r;
		}
	}
	if (st->o.json) {
		fputc(']', out);
		return ps_json_end(st, out);
	}
	return 0;
}

/* ---- call stacks (tools/ps-stacks.c prints them) ------------------------------------------- */

static int ps_stacks(struct ps_state *st, FILE *out)
{
	struct rfn_stack *stacks = NULL;
	struct pst_ctx c;
	char err[RR_ERR_MAX];
	int ret;

	ret = rfn_read_stacks(&st->f, &st->s, &stacks, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		return ret;
	}
	c = (struct pst_ctx){ .f = &st->f, .s = &st->s, .st = stacks, .threads = st->o.threads,
			      .all = st->o.all, .verbose = st->o.verbose, .json = st->o.json,
			      .alive = st->alive, .now_ticks = st->now_ticks, .site = ps_pw_site,
			      .arg = st };
	if (st->o.json) {
		fprintf(out, "{\"pid\":%d,\"comm\":", st->f.hdr.pid);
		json_str(out, st->f.hdr.comm);
		fprintf(out, ",\"ring\":");
		json_str(out, st->f.path);
		fprintf(out, ",\"alive\":%s", st->alive ? "true" : "false");
	} else {
		print_header(st, out);
	}
	ret = pst_print(&c, out);
	if (!ret && st->o.json)
		fprintf(out, "}\n");
	free(stacks);
	return ret;
}

/* ---- main ------------------------------------------------------------------------------------ */

RIP_COMMAND(cmd_ps_def);

static int cmd_ps(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "threads", no_argument, NULL, 't' },	   { "still", required_argument, NULL, 's' },
		{ "stacks", no_argument, NULL, 'S' },
		{ "all", no_argument, NULL, 'a' },	   { "verbose", no_argument, NULL, 'v' },
		{ "json", no_argument, NULL, 'j' },	   { "legacy", required_argument, NULL, 'L' },
		{ "exe", required_argument, NULL, 'E' },   { "sysroot", required_argument, NULL, 'R' },
		{ "debug-dir", required_argument, NULL, 'D' }, { "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct ps_state st;
	struct wt_request wreq;
	char err[RR_ERR_MAX];
	const char *target;
	unsigned problems = 0;
	int c, ret, status = EXIT_OK;

	memset(&st, 0, sizeof(st));
	st.f.fd = -1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "tSs:avjh", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			st.o.threads = true;
			break;
		case 'S':
			st.o.stacks = true;
			break;
		case 's':
			if (rr_parse_duration(optarg, &st.o.still_ns) || st.o.still_ns <= 0)
				return tool_usage_error(&cmd_ps_def,
							"--still wants a duration like 2s or 500ms, "
							"not '%s'",
							optarg);
			break;
		case 'a':
			st.o.all = true;
			break;
		case 'v':
			st.o.verbose = true;
			break;
		case 'j':
			st.o.json = true;
			break;
		case 'L':
			st.o.legacy = optarg;
			break;
		case 'E':
			st.o.exe = optarg;
			break;
		case 'R':
			st.o.sysroot = optarg;
			break;
		case 'D':
			st.o.debug_dir = optarg;
			break;
		case 'h':
			tool_help(&cmd_ps_def);
			return EXIT_OK;
		default:
			return tool_usage_error(&cmd_ps_def, "unknown option '%s'",
						argv[optind - 1]);
		}
	}
	if (st.o.stacks && (st.o.legacy || st.o.still_ns))
		return tool_usage_error(&cmd_ps_def, "--stacks goes with neither --legacy nor --still");
	if (st.o.legacy) {
		if (!st.o.exe)
			return tool_usage_error(&cmd_ps_def,
						"--legacy needs --exe EXE, the program that wrote "
						"the file");
		if (optind != argc)
			return tool_usage_error(&cmd_ps_def, "--legacy takes no TARGET");
		target = st.o.legacy;
		ret = rr_open_legacy(target, &st.f, err, sizeof(err));
	} else {
		if (st.o.exe)
			return tool_usage_error(&cmd_ps_def, "--exe goes with --legacy");
		if (optind + 1 != argc)
			return tool_usage_error(&cmd_ps_def, optind == argc
								     ? "which process? give a pid or "
								       "a ring file"
								     : "one TARGET only");
		ret = tool_open_target(&cmd_ps_def, argv[optind], &st.f);
		if (ret)
			return ret;
	}
	if (ret) {
		tool_err("%s", err);
		return EXIT_FAIL;
	}
	st.alive = rr_alive(&st.f) == 1;
	/* A fresh sweep of the watcher thread first (bounded wait), then the slots. */
	psw_request(&st.f, st.alive, &wreq);
	ret = rr_read_slots(&st.f, &st.s, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		status = EXIT_FAIL;
		goto out_close;
	}
	/* "now" for parked times: the clock if alive, else the last thing that happened */
	if (st.alive) {
		st.now_ticks = rr_now_ticks(&st.f.hdr);
	} else {
		uint64_t exit_ts = 0;
		char why[RR_ERR_MAX];

		if (!st.f.legacy_raw)
			rr_live_u64(&st.f, offsetof(struct rip_file_hdr, exit_ts), &exit_ts, why,
				    sizeof(why));
		st.now_ticks = exit_ts;
		for (size_t i = 0; i < st.s.n; i++) {
			const struct rr_slot *s = &st.s.v[i];

			if (s->switch_ts > st.now_ticks)
				st.now_ticks = s->switch_ts;
		}
	}
	if (st.o.still_ns) {
		ret = ps_still(&st);
		if (ret) {
			status = EXIT_FAIL;
			goto out_sym;
		}
	}
	if (ps_symbols(&st)) {
		status = EXIT_FAIL;
		goto out_sym;
	}
	if (st.o.stacks)
		ret = ps_stacks(&st, stdout);
	else
		ret = st.o.threads ? ps_threads(&st, stdout) : ps_grouped(&st, stdout);
	if (ret) {
		if (ret != -EIO)
			tool_err("%s", strerror(-ret));
		status = EXIT_FAIL;
	}
	if (!ret && !st.o.json && !st.o.stacks) {
		struct psw_opts po = { .alive = st.alive, .threads = st.o.threads,
				       .verbose = st.o.verbose, .all = st.o.all,
				       .now_ticks = st.now_ticks, .sysroot = st.o.sysroot };

		ret = psw_print(&st.f, &st.s, st.sym, &po, &wreq, stdout);
		if (ret) {
			tool_err("%s", strerror(-ret));
			status = EXIT_FAIL;
		}
	}
	fflush(stdout);
	if (!st.o.json)
		rip_sym_problems(st.sym, tool_sym_problem, &problems);
	if (st.s.corrupt) {
		tool_err("%s: %zu corrupt slot%s skipped (first: slot %d, %s)", st.f.path,
			 st.s.corrupt, st.s.corrupt == 1 ? "" : "s", st.s.first_bad, st.s.why);
		status = EXIT_FAIL;
	}
	if (st.s.changing && !st.o.json)
		fprintf(stderr, "note: %zu slots changed owner while being read and were left out\n",
			st.s.changing);

out_sym:
	if (st.sym)
		rip_sym_free(st.sym);
	for (size_t i = 0; i < st.cap; i++)
		free(st.sites[i]);
	free(st.sites);
	free(st.still);
	rr_slots_free(&st.s);
out_close:
	rr_close(&st.f);
	return status;
}
