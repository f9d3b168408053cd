// SPDX-License-Identifier: Apache-2.0
/*
 * tools/ps-watch.c - `rip ps`'s section on the threads the wrappers do not
 * see: what the watcher thread of librip-preload.so found in
 * /proc/self/task (read/watch.c reads it and unwinds the stack copies).
 *
 * Each thread blocked in the kernel with no wait record is shown as "in
 * syscall NAME (since sweep at T)" with its stack; threads with the same
 * system call and the same functions on their stacks are one group (the
 * biggest first, so that thousands of threads fit on a screen), or one
 * entry each with --threads.  The watcher's state is always said: not
 * started, off, refused by /proc (a non-dumpable process), or how old the
 * sweep is and whether the fresh one asked for came in time.
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/ps-watch.h"
#include "tools/tool.h"

#define PSW_FRAMES 32

struct psw_thread {
	struct wt_thread t;
	const struct rr_slot *slot;
	uint64_t pcs[PSW_FRAMES];
	int npcs;
	char *sig; /* syscall and function names: the group key */
};

void psw_request(struct rr_file *f, bool alive, struct wt_request *req)
{
	memset(req, 0, sizeof(*req));
	if (!alive || f->legacy_raw) {
		snprintf(req->why, sizeof(req->why), "the process is not running");
		return;
	}
	/*
	 * 500 ms, or three times the last sweep when sweeps take longer (many
	 * thousands of threads on a loaded machine: a request that comes during
	 * a sweep waits for the next one), at most PSW_TIMEOUT_MAX_MS.
	 */
	{
		uint64_t ns = 0;
		char err[RR_ERR_MAX];
		int ms = PSW_TIMEOUT_MS;

		if (!rr_live_u64(f, offsetof(struct rip_file_hdr, watch_sweep_ns), &ns, err,
				 sizeof(err)) &&
		    ns / 1000000 * 3 > (uint64_t)ms)
			ms = ns / 1000000 * 3 > PSW_TIMEOUT_MAX_MS ? PSW_TIMEOUT_MAX_MS :
								     (int)(ns / 1000000 * 3);
		wt_request_sweep(f, ms, req);
	}
}

/* frames[0]: the innermost (inlined) frame of the address; 0 frames: unknown. */
static int psw_lookup(struct rip_sym *sym, uint64_t pc, bool ret, struct rip_frame *fr, int max)
{
	int n = rip_sym_lookup(sym, ret ? pc - 1 : pc, fr, max);

	return n < 0 ? 0 : n;
}

static const char *psw_func(const struct rip_frame *fr, int n)
{
	return n > 0 && fr[n - 1].func ? fr[n - 1].func : NULL;
}

static char *psw_signature(struct rip_sym *sym, const struct psw_thread *p)
{
	size_t cap = 256, len = 0;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	len = (size_t)snprintf(s, cap, "%d", p->t.rec.nr);
	for (int i = 0; i < p->npcs; i++) {
		struct rip_frame fr[8];
		int n = psw_lookup(sym, p->pcs[i], i > 0, fr, 8);
		const char *fn = psw_func(fr, n);
		char buf[64];
		size_t need;

		if (!fn) {
			snprintf(buf, sizeof(buf), "%#" PRIx64, p->pcs[i]);
			fn = buf;
		}
		need = len + strlen(fn) + 2;
		if (need > cap) {
			char *t = realloc(s, cap = need * 2);

			if (!t) {
				free(s);
				return NULL;
			}
			s = t;
		}
		len += (size_t)snprintf(s + len, cap - len, "|%s", fn);
	}
	return s;
}

static const char *psw_sysname(int nr, char *buf, size_t len)
{
	const char *n = nr < 0 ? NULL : wt_syscall_name(nr);

	if (nr < 0)
		return "(blocked outside a system call)";
	if (n)
		return n;
	snprintf(buf, len, "#%d", nr);
	return buf;
}

/* "12:00:01.234" in local time, from the file's clock. */
static const char *psw_clock(const struct rip_file_hdr *h, uint64_t ticks, char *buf, size_t len)
{
	int64_t ns = rr_ticks_to_ns(h, ticks) + h->realtime_offset;
	time_t sec = (time_t)(ns / 1000000000);
	struct tm tm;

	if (ns <= 0 || !localtime_r(&sec, &tm)) {
		snprintf(buf, len, "?");
		return buf;
	}
	snprintf(buf, len, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (int)(ns / 1000000 % 1000));
	return buf;
}

static void psw_stack(struct rip_sym *sym, const struct psw_thread *p, const struct psw_opts *o,
		      FILE *out)
{
	for (int i = 0; i < p->npcs; i++) {
		struct rip_frame fr[8];
		int n = psw_lookup(sym, p->pcs[i], i > 0, fr, 8);
		const char *fn = psw_func(fr, n);
		char where[300] = "";

		if (n > 0 && fr[0].file && fr[0].line)
			snprintf(where, sizeof(where), "%s:%d", tool_base(fr[0].file), fr[0].line);
		else if (n > 0 && fr[0].module)
			snprintf(where, sizeof(where), "%s", tool_base(fr[0].module));
		fprintf(out, "      #%-2d %-30s %s", i, fn ? fn : "??", where);
		if (o->verbose) {
			fprintf(out, " [0x%" PRIx64 "]", p->pcs[i]);
			for (int k = 0; k + 1 < n; k++)
				fprintf(out, " (inlined %s)", fr[k].func ? fr[k].func : "?");
		}
		fputc('\n', out);
	}
	if (!p->t.have_copy)
		fprintf(out, "      (no stack copy: %s)\n",
			p->t.rec.flags & RIP_WATCH_MOVED  ? "it moved while being copied" :
			p->t.rec.flags & RIP_WATCH_NOPOOL ? "every copy buffer was taken "
							    "(RIP_WATCH_COPIES)" :
							    "none kept");
	else if (p->npcs == 1)
		fprintf(out, "      (the copy did not unwind past the system call)\n");
}

static void psw_line(const struct rr_file *f, const struct psw_thread *p, const struct psw_opts *o,
		     FILE *out)
{
	char sb[32], at[32], dur[32];
	const struct rip_watch *r = &p->t.rec;
	/* Alive: blocked until now.  After the end: for at least as long as the last sweep saw. */
	uint64_t until = o->alive ? o->now_ticks : r->sweep_ts;

	if (until < r->since_ts)
		until = r->since_ts;
	fprintf(out, "in syscall %s (since sweep at %s, %s%s)", psw_sysname(r->nr, sb, sizeof(sb)),
		psw_clock(&f->hdr, r->since_ts, at, sizeof(at)), o->alive ? "" : "at least ",
		rr_fmt_duration(rr_ticks_to_ns(&f->hdr, until) -
					rr_ticks_to_ns(&f->hdr, r->since_ts),
				dur, sizeof(dur)));
	if (r->state >= 'A' && r->state <= 'z') /* hostile bytes are not printed */
		fprintf(out, " state %c", r->state);
	if (o->verbose)
		fprintf(out, " args 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64, p->t.args[0],
			p->t.args[1], p->t.args[2]);
}

static int psw_cmp(const void *a, const void *b)
{
	const struct psw_thread *x = *(struct psw_thread *const *)a;
	const struct psw_thread *y = *(struct psw_thread *const *)b;
	int c = strcmp(x->sig ? x->sig : "", y->sig ? y->sig : "");

	return c ? c : (x->t.tid > y->t.tid) - (x->t.tid < y->t.tid);
}

struct psw_group {
	struct psw_thread **v;
	size_t n;
};

static int psw_gcmp(const void *a, const void *b)
{
	const struct psw_group *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return psw_cmp(&x->v[0], &y->v[0]);
}

static void psw_status(const struct rr_file *f, const struct rip_file_hdr *live,
		       const struct psw_opts *o, const struct wt_request *req, FILE *out)
{
	char dur[32], took[32];

	switch (live->watch_status) {
	case RIP_WATCHER_PENDING:
		fprintf(out, "watcher: not started (it starts at the program's first "
			     "pthread_create; a single-threaded program has none)\n");
		return;
	case RIP_WATCHER_OFF:
		fprintf(out, "watcher: off (RIP_WATCH=0)\n");
		return;
	case RIP_WATCHER_FAILED:
		fprintf(out, "watcher: could not start: %s\n", strerror(live->watch_err));
		return;
	case RIP_WATCHER_DENIED:
		fprintf(out,
			"watcher: could not see %u of the threads: /proc/self/task refused it "
			"(%s: a non-dumpable process not run by root)\n",
			live->watch_denied, strerror(live->watch_err ? live->watch_err : EACCES));
		break;
	case RIP_WATCHER_STOPPED:
		if (live->watch_err == EAGAIN)
			fprintf(out, "watcher: stopped for good: the program reached its limit of "
				     "threads (RLIMIT_NPROC), and its thread gave way\n");
		else
			fprintf(out, "watcher: stopped\n");
		break;
	default:
		break;
	}
	if (!live->watch_sweeps) {
		fprintf(out, "watcher: no sweep yet\n");
		return;
	}
	if (o->alive)
		fprintf(out, "watcher: last sweep %s ago",
			rr_fmt_duration(rr_ticks_to_ns(&f->hdr, o->now_ticks) -
						rr_ticks_to_ns(&f->hdr, live->watch_sweep_ts),
					dur, sizeof(dur)));
	else
		fprintf(out, "watcher: last sweep at %s",
			psw_clock(&f->hdr, live->watch_sweep_ts, dur, sizeof(dur)));
	fprintf(out, " (took %s): %u thread%s, %u blocked with no wait record, %u stack%s copied",
		rr_fmt_duration((int64_t)live->watch_sweep_ns, took, sizeof(took)),
		live->watch_tasks, live->watch_tasks == 1 ? "" : "s", live->watch_blocked,
		live->watch_copied, live->watch_copied == 1 ? "" : "s");
	if (live->watch_moved)
		fprintf(out, ", %u dropped (moved while copied)", live->watch_moved);
	if (live->watch_nocopy)
		fprintf(out, ", %u without a copy (pool of %u full)", live->watch_nocopy,
			f->hdr.watch_copies);
	if (live->watch_noslot)
		fprintf(out, ", %u threads with no slot not seen", live->watch_noslot);
	fputc('\n', out);
	if (o->alive && req->asked && !req->done)
		fprintf(out,
			"note: the watcher did not answer within %d ms: this is the sweep "
			"above, not a fresh one\n",
			req->timeout_ms);
	else if (o->alive && !req->asked && req->why[0])
		fprintf(out, "note: could not ask for a fresh sweep: %s\n", req->why);
}

/*
 * The threads the watcher last saw blocked in the kernel with no wait record,
 * each with its stack unwound from its copy: *out (free each with
 * wt_thread_free, then the array), *n of them; *running counts those it saw
 * running.  0 or -ENOMEM.
 */
static int psw_collect(struct rr_file *f, const struct rr_slots *s, const struct psw_opts *o,
		       struct psw_thread **out, size_t *nout, size_t *running)
{
	struct rip_module *mods = NULL;
	struct wt_unwinder *u = NULL;
	struct psw_thread *v;
	size_t n = 0, nmods = 0;
	char err[RR_ERR_MAX];

	*out = NULL;
	*nout = *running = 0;
	v = calloc(s->n ? s->n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	/* Each copy is unwound as it is read and freed at once: 10,000 copies never pile up. */
	if (rr_read_modules(f, &mods, &nmods, err, sizeof(err)) == 0)
		wt_unwinder_new(mods, nmods, o->sysroot, &u);
	for (size_t i = 0; i < s->n; i++) {
		const struct rr_slot *sl = &s->v[i];
		struct psw_thread *p = &v[n];
		int r;

		if (sl->kind != RIP_KIND_THREAD || sl->state != RIP_SLOT_RUNNING)
			continue;
		r = wt_read(f, sl->index, sl->tid, &p->t, err, sizeof(err));
		if (r < 0) {
			tool_err("%s", err);
			continue;
		}
		/* Never seen, seen under an earlier owner of the slot, or covered by the wrappers. */
		if (r == 0 || p->t.rec.sweep_ts < sl->attach_ts ||
		    (p->t.rec.flags & (RIP_WATCH_WAITREC | RIP_WATCH_GONE))) {
			wt_thread_free(&p->t);
			continue;
		}
		if (!(p->t.rec.flags & RIP_WATCH_BLOCKED)) {
			*running += !!(p->t.rec.flags & RIP_WATCH_RUNNING);
			wt_thread_free(&p->t);
			continue;
		}
		p->slot = sl;
		p->npcs = u ? wt_unwind(u, &p->t, p->pcs, PSW_FRAMES) : -ENODATA;
		if (p->npcs < 1) {
			p->pcs[0] = p->t.pc;
			p->npcs = 1;
		}
		free(p->t.stack);
		p->t.stack = NULL; /* have_copy stays: it had one */
		n++;
	}
	wt_unwinder_free(u);
	free(mods);
	*out = v;
	*nout = n;
	return 0;
}

int psw_print(struct rr_file *f, const struct rr_slots *s, struct rip_sym *sym,
	      const struct psw_opts *o, const struct wt_request *req, FILE *out)
{
	struct rip_file_hdr live;
	struct psw_thread *v = NULL, **sorted = NULL;
	struct psw_group *groups = NULL;
	size_t n = 0, ngroups = 0, running = 0;
	char err[RR_ERR_MAX];
	int ret = 0;

	if (f->legacy_raw)
		return 0;
	rr_live_hdr(f, &live, err, sizeof(err));
	if (live.watch_status == RIP_WATCHER_NONE && !live.watch_sweeps)
		return 0; /* no watcher ever: a program that reports itself */
	fputc('\n', out);
	psw_status(f, &live, o, req, out);
	ret = psw_collect(f, s, o, &v, &n, &running);
	if (ret)
		goto out;
	if (!n) {
		if (running)
			fprintf(out,
				"%zu threads with no wait record were running at the last "
				"sweep\n",
				running);
		goto out;
	}
	sorted = calloc(n, sizeof(*sorted));
	groups = calloc(n, sizeof(*groups));
	if (!sorted || !groups) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct psw_thread *p = &v[i];

		p->sig = o->threads ? NULL : psw_signature(sym, p);
		sorted[i] = p;
	}
	qsort(sorted, n, sizeof(*sorted), psw_cmp);
	fprintf(out,
		"\n%zu thread%s blocked in the kernel with no wait record (seen by the "
		"watcher)%s:\n",
		n, n == 1 ? "" : "s", running ? "" : "");
	if (o->threads) {
		for (size_t i = 0; i < n; i++) {
			struct psw_thread *p = sorted[i];

			fprintf(out, "  tid %d \"%s\" ", p->t.tid, p->slot->name);
			psw_line(f, p, o, out);
			fputc('\n', out);
			psw_stack(sym, p, o, out);
		}
	} else {
		for (size_t i = 0; i < n; i++) {
			if (ngroups &&
			    !strcmp(sorted[i]->sig ? sorted[i]->sig : "",
				    groups[ngroups - 1].v[0]->sig ? groups[ngroups - 1].v[0]->sig :
								    "")) {
				groups[ngroups - 1].n++;
				continue;
			}
			groups[ngroups].v = &sorted[i];
			groups[ngroups++].n = 1;
		}
		qsort(groups, ngroups, sizeof(*groups), psw_gcmp);
		for (size_t g = 0; g < ngroups; g++) {
			struct psw_thread *p = groups[g].v[0];

			fprintf(out, "  %zu thread%s ", groups[g].n, groups[g].n == 1 ? "" : "s");
			psw_line(f, p, o, out);
			fprintf(out, "\n    tids");
			for (size_t k = 0; k < groups[g].n && k < 8; k++)
				fprintf(out, " %d", groups[g].v[k]->t.tid);
			if (groups[g].n > 8)
				fprintf(out, " and %zu more", groups[g].n - 8);
			if (p->slot->name[0])
				fprintf(out, " (\"%s\"%s)", p->slot->name,
					groups[g].n > 1 ? "..." : "");
			fputc('\n', out);
			psw_stack(sym, p, o, out);
		}
	}
	if (running)
		fprintf(out, "%zu other threads with no wait record were running at the sweep\n",
			running);
out:
	for (size_t i = 0; i < n; i++) {
		wt_thread_free(&v[i].t);
		free(v[i].sig);
	}
	free(v);
	free(sorted);
	free(groups);
	return ret;
}

int psw_json(struct rr_file *f, const struct rr_slots *s, struct rip_sym *sym,
	     const struct psw_opts *o, FILE *out)
{
	static const char *const status[] = { "none",	 "running", "off",    "denied",
					      "failed", "stopped", "pending" };
	struct rip_file_hdr live;
	struct psw_thread *v = NULL;
	size_t n = 0, running = 0;
	char err[RR_ERR_MAX], sb[32];
	int ret;

	if (f->legacy_raw)
		return 0;
	rr_live_hdr(f, &live, err, sizeof(err));
	if (live.watch_status == RIP_WATCHER_NONE && !live.watch_sweeps)
		return 0; /* no watcher ever: the document is as it was */
	ret = psw_collect(f, s, o, &v, &n, &running);
	if (ret)
		return ret;
	fprintf(out, ",\"watcher\":{\"status\":\"%s\",\"sweeps\":%llu,\"running\":%zu}",
		live.watch_status < sizeof(status) / sizeof(status[0]) ? status[live.watch_status] :
									 "unknown",
		(unsigned long long)live.watch_sweeps, running);
	fprintf(out, ",\"kernel_blocked\":[");
	for (size_t i = 0; i < n; i++) {
		const struct psw_thread *p = &v[i];
		const struct rip_watch *r = &p->t.rec;
		uint64_t until = o->alive ? o->now_ticks : r->sweep_ts;

		if (until < r->since_ts)
			until = r->since_ts;
		fprintf(out, "%s{\"slot\":%u,\"tid\":%d,\"name\":", i ? "," : "", p->slot->index,
			p->t.tid);
		json_str(out, p->slot->name);
		fprintf(out, ",\"syscall\":");
		json_str(out, psw_sysname(r->nr, sb, sizeof(sb)));
		fprintf(out, ",\"nr\":%d,\"blocked_ns\":%lld,\"copy\":%s,\"stack\":[", r->nr,
			(long long)(rr_ticks_to_ns(&f->hdr, until) -
				    rr_ticks_to_ns(&f->hdr, r->since_ts)),
			p->t.have_copy ? "true" : "false");
		for (int k = 0; k < p->npcs; k++) {
			struct rip_frame fr[8];
			int nf = psw_lookup(sym, p->pcs[k], k > 0, fr, 8);

			fprintf(out, "%s{\"function\":", k ? "," : "");
			json_str(out, psw_func(fr, nf));
			fprintf(out, ",\"file\":");
			json_str(out, nf > 0 ? fr[0].file : NULL);
			fprintf(out, ",\"line\":%d,\"address\":\"0x%" PRIx64 "\"}",
				nf > 0 ? fr[0].line : 0, p->pcs[k]);
		}
		fprintf(out, "]}");
	}
	fputc(']', out);
	for (size_t i = 0; i < n; i++)
		wt_thread_free(&v[i].t);
	free(v);
	return 0;
}
