// SPDX-License-Identifier: Apache-2.0
/*
 * analysis/top.c - `rip top`'s pass (top.h says what it computes): reads the
 * slots of a ring file, their CPU samples and wait records, and the
 * process's /proc/PID/task/TID/stat, and groups the threads by the function
 * they run in or the call they wait in, with the CPU each group used since
 * the previous refresh.
 *
 * State kept between refreshes: per slot, its generation and the snap-ring
 * position read up to (samples beyond it are new); per tid, the CPU time
 * read last and whether it blocks the sampling signal.
 *
 * A thread that blocks the sampling signal (a server's workers that inherit
 * a mask blocking every signal, to leave them to one sigwait thread) is
 * never sampled: its timer's signal stays pending.  Whether it blocks it is
 * the SigBlk line of /proc/PID/task/TID/status, read when a thread is first
 * seen, and again only when it used CPU in an interval without taking a
 * sample (a thread that does take one does not block it), so that a
 * refresh reads only the status files of the suspects.  Symbols are looked up once per address (a table of sites) and
 * the symbolizer is made again when the module map grew.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <internal/grow.h>

#include "analysis/cpu.h"
#include "analysis/hmap.h"
#include "analysis/top.h"
#include "analysis/waits.h"
#include "read/sym.h"

#define TOP_FRAMES 8

/* Where an address resolves. */
struct top_site {
	uint64_t key; /* the address looked up */
	uint8_t used;
	int line;
	const char *func, *file;
	char *label; /* "module+0x..." or "0x..." when there is no function (owned) */
};
HMAP_SLOT_CHECK(struct top_site);

/* A tid's CPU time as read last. */
struct top_cpu {
	uint64_t key; /* tid */
	uint8_t used;
	uint8_t blk; /* the sampling signal: TOP_BLK_* */
	uint64_t cpu_ns;
	uint64_t round;
};

enum {
	TOP_BLK_UNKNOWN, /* not read yet (or not for this thread: its tid was gone a round) */
	TOP_BLK_NO,
	TOP_BLK_YES,
};
HMAP_SLOT_CHECK(struct top_cpu);

/* What was read of a slot last time. */
struct top_seen {
	uint32_t gen;
	uint32_t seq;
};

/* A group by key, during a refresh. */
struct top_gkey {
	uint64_t key;
	uint8_t used;
	size_t idx;
};
HMAP_SLOT_CHECK(struct top_gkey);

/* A thread of /proc. */
struct top_proc {
	uint64_t key; /* tid */
	uint8_t used;
	char state;
	bool matched;
	uint64_t cpu_ns;
	char comm[20];
};
HMAP_SLOT_CHECK(struct top_proc);

struct top {
	struct rr_file *f;
	struct top_opts o;
	struct rip_sym *sym;
	uint32_t mods_seen; /* mod_count the symbolizer was made for */
	HMAP_OF(struct top_site) sites;
	HMAP_OF(struct top_cpu) cpus;
	struct top_seen *seen; /* hdr.slot_count entries */
	uint64_t round;
	int64_t last_ns;       /* CLOCK_MONOTONIC of the previous refresh; 0: none */
	long clk_tck;
	struct top_view v;
	size_t gcap, tcap;
	struct cpu_prof *cpu;	/* a trace's samples (top_use_samples), instead of the rings' */
	const struct cpu_thread *cthreads; /* cpu's threads, by tid */
	size_t ncthreads;
	bool *cseen; /* of each of cthreads: counted this refresh (a slot of its tid) */
};

const char *top_wait_name(uint32_t kind)
{
	const char *n = wa_kind_name(kind);

	return n ? n : "unknown";
}

/* ---- symbols ---------------------------------------------------------------------- */

static void top_sites_free(struct top *t)
{
	for (size_t i = 0; i < t->sites.cap; i++)
		if (t->sites.v[i].used)
			free(t->sites.v[i].label);
	hmap_free(&t->sites.h);
}

/* The symbolizer for the module map as it is now (again when it grew). */
static int top_symbols(struct top *t, char *err, size_t errlen)
{
	struct rip_sym_opts so = { .sysroot = t->o.sysroot, .debug_dir = t->o.debug_dir };
	struct rip_module *mods = NULL;
	size_t n = 0;
	int ret;

	if (t->o.nosym || (t->sym && t->v.hdr.mod_count == t->mods_seen))
		return 0;
	top_sites_free(t);
	rip_sym_free(t->sym);
	t->sym = NULL;
	ret = rip_sym_new(&so, &t->sym);
	if (ret)
		return rr_fail(err, errlen, ret, "cannot start the symbolizer: %s", strerror(-ret));
	ret = rr_read_modules(t->f, &mods, &n, err, errlen);
	if (ret)
		return ret;
	rip_sym_add_modules(t->sym, mods, n);
	free(mods);
	/* live: what it maps now, for a library loaded since its map was brought up to date */
	if (t->v.alive)
		rip_sym_add_proc_maps(t->sym, t->f->hdr.pid, t->f->hdr.start_ticks);
	/* a JIT's functions (its perf map), where it wrote one: none is no error */
	rip_sym_add_perfmap(t->sym, t->f->hdr.pid, t->f->hdr.start_ticks, t->f->st.st_uid);
	t->mods_seen = t->v.hdr.mod_count;
	return 0;
}

/* The site of addr (a return address is looked up at addr - 1 by the caller). */
static const struct top_site *top_site(struct top *t, uint64_t addr)
{
	struct rip_frame fr[TOP_FRAMES];
	struct top_site *s;
	bool fresh;
	int n, k;

	s = hmap_get(&t->sites.h, sizeof(*s), addr, &fresh);
	if (!s || !fresh)
		return s;
	n = t->sym ? rip_sym_lookup(t->sym, addr, fr, TOP_FRAMES) : 0;
	if (n < 0)
		n = 0;
	for (k = 0; k < n && rip_sym_frame_internal(&fr[k]); k++)
		;
	if (k == n && n > 0)
		k = n - 1;
	if (n > 0 && fr[k].func) {
		s->func = fr[k].func;
		s->file = fr[k].file;
		s->line = fr[k].line;
		return s;
	}
	if (n > 0 && fr[0].module) {
		const char *b = strrchr(fr[0].module, '/');

		if (asprintf(&s->label, "%s+0x%llx", b ? b + 1 : fr[0].module,
			     (unsigned long long)fr[0].offset) < 0)
			s->label = NULL;
	} else if (asprintf(&s->label, "0x%llx", (unsigned long long)addr) < 0) {
		s->label = NULL;
	}
	s->func = s->label ? s->label : "?";
	return s;
}

/* ---- /proc ------------------------------------------------------------------------- */

/* State letter and user + system CPU time of /proc/PID/task/TID/stat. */
static bool top_read_stat(pid_t pid, const char *tid, long tck, struct top_proc *p)
{
	char path[320], buf[1024], *s;
	unsigned long long ut, st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	/* comm may hold spaces and parentheses: the fields start after the last ')'. */
	s = strrchr(buf, ')');
	if (!s || s - buf < 2)
		return false;
	{
		char *c = strchr(buf, '(');

		if (c && c < s)
			snprintf(p->comm, sizeof(p->comm), "%.*s", (int)(s - c - 1), c + 1);
	}
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (sscanf(s + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &p->state, &ut,
		   &st) != 3)
		return false;
	p->cpu_ns = (ut + st) * (1000000000ull / (unsigned long long)tck);
	return true;
}

/* Does tid block signal sig (its SigBlk in /proc/PID/task/TID/status)?  -1: unknown. */
static int top_read_sigblk(pid_t pid, int32_t tid, uint32_t sig)
{
	char path[64], buf[4096], *s;
	unsigned long long m;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	s = strstr(buf, "\nSigBlk:");
	if (!s || sscanf(s + 8, " %llx", &m) != 1)
		return -1;
	return (int)(m >> (sig - 1) & 1);
}

/*
 * Does the thread tid, which used delta ns of CPU in the interval and took
 * samples samples, block the sampling signal?  Its status file is read when
 * nothing is known of it yet, or when it ran without a sample.
 */
static bool top_sigblk(struct top *t, int32_t tid, uint64_t delta, uint32_t samples)
{
	uint32_t sig = t->v.hdr.sample_sig;
	struct top_cpu *c;
	int b;

	if (!t->v.alive || !(t->v.hdr.sample_flags & RIP_SAMPLE_F_ON) || !sig || sig > 64)
		return false;
	c = hmap_find(&t->cpus.h, sizeof(*c), (uint32_t)tid);
	if (!c)
		return false;
	if (samples) {
		c->blk = TOP_BLK_NO; /* its signal came */
	} else if (c->blk == TOP_BLK_UNKNOWN || (c->blk == TOP_BLK_NO && delta)) {
		b = top_read_sigblk(t->v.pid, tid, sig);
		if (b >= 0)
			c->blk = b ? TOP_BLK_YES : TOP_BLK_NO;
	}
	return c->blk == TOP_BLK_YES;
}

static int top_read_proc(struct top *t, struct hmap *procs)
{
	char path[64];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)t->v.pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		struct top_proc p = { 0 }, *q;
		bool fresh;

		if (!rr_all_digits(e->d_name))
			continue;
		if (!top_read_stat(t->v.pid, e->d_name, t->clk_tck, &p))
			continue; /* exited while we looked */
		q = hmap_get(procs, sizeof(*q), strtoull(e->d_name, NULL, 10), &fresh);
		if (!q) {
			closedir(d);
			return -ENOMEM;
		}
		q->state = p.state;
		q->cpu_ns = p.cpu_ns;
		memcpy(q->comm, p.comm, sizeof(q->comm));
	}
	closedir(d);
	return 0;
}

/* CPU used by tid since the previous refresh (0 at the first one). */
static uint64_t top_cpu_delta(struct top *t, int32_t tid, uint64_t cpu_ns)
{
	struct top_cpu *c;
	uint64_t d = 0;
	bool fresh;

	c = hmap_get(&t->cpus.h, sizeof(*c), (uint32_t)tid, &fresh);
	if (!c)
		return 0;
	if (fresh || c->round + 1 != t->round)
		c->blk = TOP_BLK_UNKNOWN; /* a thread of its own, maybe, with the tid again */
	if (!fresh && c->round + 1 == t->round && cpu_ns >= c->cpu_ns)
		d = cpu_ns - c->cpu_ns;
	c->cpu_ns = cpu_ns;
	c->round = t->round;
	return d;
}

/* Forget the tids not seen in this refresh once they outnumber the others (thread churn). */
static int top_cpu_prune(struct top *t)
{
	HMAP_OF(struct top_cpu) keep = { 0 };
	size_t live = 0;

	for (size_t i = 0; i < t->cpus.cap; i++)
		live += t->cpus.v[i].used && t->cpus.v[i].round == t->round;
	if (t->cpus.n <= 2 * live + 1024)
		return 0;
	for (size_t i = 0; i < t->cpus.cap; i++) {
		const struct top_cpu *c = &t->cpus.v[i];
		struct top_cpu *d;
		bool fresh;

		if (!c->used || c->round != t->round)
			continue;
		d = hmap_get(&keep.h, sizeof(*d), c->key, &fresh);
		if (!d) {
			hmap_free(&keep.h);
			return -ENOMEM;
		}
		d->cpu_ns = c->cpu_ns;
		d->round = c->round;
		d->blk = c->blk;
	}
	hmap_free(&t->cpus.h);
	t->cpus.h = keep.h;
	return 0;
}

/* ---- groups ------------------------------------------------------------------------ */

static uint64_t top_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* The group of (kind, wait kind, site): found or added.  NULL without memory. */
static struct top_group *top_group(struct top *t, struct hmap *keys, enum top_kind kind,
				   uint32_t wait_kind, const struct top_site *site, uint64_t addr)
{
	const char *func = site ? site->func : NULL;
	uint64_t k = 0xcbf29ce484222325ull;
	struct top_gkey *g;
	struct top_group *gr;
	bool fresh;

	k = top_hash(k, &kind, sizeof(kind));
	k = top_hash(k, &wait_kind, sizeof(wait_kind));
	if (func)
		k = top_hash(k, func, strlen(func));
	g = hmap_get(keys, sizeof(*g), k, &fresh);
	if (!g)
		return NULL;
	if (!fresh)
		return &t->v.groups[g->idx];
	if (RIP_GROW(t->v.groups, t->gcap, t->v.ngroups + 1, 64)) {
		hmap_del(keys, sizeof(*g), g);
		return NULL;
	}
	g->idx = t->v.ngroups++;
	gr = &t->v.groups[g->idx];
	memset(gr, 0, sizeof(*gr));
	gr->kind = kind;
	gr->wait_kind = wait_kind;
	gr->func = func;
	gr->file = site ? site->file : NULL;
	gr->line = site ? site->line : 0;
	gr->addr = addr;
	gr->wait_ns = -1;
	gr->key = k;
	return gr;
}

static struct top_thread *top_thread_add(struct top *t)
{
	if (RIP_GROW(t->v.threads, t->tcap, t->v.nthreads + 1, 64))
		return NULL;

	memset(&t->v.threads[t->v.nthreads], 0, sizeof(t->v.threads[0]));
	return &t->v.threads[t->v.nthreads++];
}

/* ---- refresh ----------------------------------------------------------------------- */

int top_new(struct rr_file *f, const struct top_opts *o, struct top **out, char *err,
	    size_t errlen)
{
	struct top *t = calloc(1, sizeof(*t));

	if (!t)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	if (f->legacy_raw) {
		free(t);
		return rr_fail(err, errlen, -EINVAL,
			       "%s: a file of the original librip header has no samples or waits",
			       f->path);
	}
	t->f = f;
	if (o)
		t->o = *o;
	t->seen = calloc(f->hdr.slot_count ? f->hdr.slot_count : 1, sizeof(*t->seen));
	if (!t->seen) {
		free(t);
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	}
	t->clk_tck = sysconf(_SC_CLK_TCK);
	if (t->clk_tck <= 0 || t->clk_tck > 1000000000)
		t->clk_tck = 100;
	t->v.pid = f->hdr.pid;
	*out = t;
	return 0;
}

/*
 * The samples of slot s: the newest sample's IP into *ip, into ips[] (at
 * most RIP_SNAP_DEPTH) the IPs of the samples at positions >= from, and
 * into *entries the ring entries those samples took.
 */
static uint32_t top_samples(const struct rr_slot *s, uint32_t from, uint64_t *ip, uint64_t *ips,
			    uint32_t *entries)
{
	uint32_t n = 0;

	*ip = 0;
	*entries = 0;
	for (uint32_t k = 0; k < s->nsamp; k++) {
		uint64_t e = s->samp[k];
		bool fresh = (int32_t)(s->samp_pos[k] - from) >= 0;
		bool head = RIP_SAMPLE_DEPTH_OF(e) == 0;

		/* Entries from the first whole sample on: a headless tail is not one. */
		if (fresh && (n || head))
			(*entries)++;
		if (!head)
			continue;
		*ip = e & RIP_SAMPLE_ADDR_MASK;
		if (fresh)
			ips[n++] = *ip;
	}
	return n;
}

/*
 * How many samples the thread took since position from, when the ring kept
 * only the last n of them (in entries entries): the entries written since,
 * at the visible samples' entries per sample (in a file without sample
 * rings, a program that also calls rip_snap() makes this an overestimate).
 */
static double top_estimate(const struct rr_slot *s, uint32_t from, uint32_t n, uint32_t entries)
{
	uint32_t written = s->samp_seq - from;

	if (!n || written <= entries)
		return n;
	return (double)written * n / entries;
}

/* The index of tid's samples in the trace's threads (top_use_samples), or SIZE_MAX. */
static size_t top_cthread_at(const struct top *t, int32_t tid)
{
	size_t lo = 0, hi = t->ncthreads;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->cthreads[mid].tid == tid)
			return mid;
		if (t->cthreads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

/* The samples of tid in the trace, or NULL; marked counted. */
static const struct cpu_thread *top_cthread(struct top *t, int32_t tid)
{
	size_t i = top_cthread_at(t, tid);

	if (i == SIZE_MAX)
		return NULL;
	t->cseen[i] = true;
	return &t->cthreads[i];
}

/*
 * The samples a thread that exited left in its slot (a dead process's
 * file): they count in the groups of their functions, the thread in none.
 */
static int top_gone(struct top *t, struct hmap *keys, const struct rr_slot *s)
{
	uint64_t ips[RIP_SNAP_DEPTH], ip;
	uint32_t n, entries;
	double est;

	n = top_samples(s, 0, &ip, ips, &entries);
	est = top_estimate(s, 0, n, entries);
	t->v.samples += est;
	for (uint32_t k = 0; k < n; k++) {
		struct top_group *g = top_group(t, keys, TOP_RUN, 0, top_site(t, ips[k]), ips[k]);

		if (!g)
			return -ENOMEM;
		g->samples += est / n;
	}
	return 0;
}

/* Account one slot's thread; 0 or -ENOMEM. */
static int top_slot(struct top *t, struct hmap *keys, struct hmap *procs, const struct rr_slot *s,
		    uint64_t now_ticks)
{
	struct top_seen *seen = &t->seen[s->index];
	struct top_proc *p = NULL;
	struct top_thread *th;
	struct top_group *g;
	const struct rip_wait *w = &s->wait;
	uint64_t ips[RIP_SNAP_DEPTH], from, delta = 0;
	uint32_t n, entries;
	double est;

	if (t->v.alive) {
		p = hmap_find(procs, sizeof(*p), (uint32_t)s->tid);
		if (!p || p->matched)
			return 0; /* its thread is gone (the slot outlived it) */
		p->matched = true;
	}
	/* A slot taken again since the last refresh starts over; dead, every sample counts. */
	from = (!t->v.first && t->v.alive && seen->gen == s->gen) ? seen->seq : 0;
	seen->gen = s->gen;
	seen->seq = s->samp_seq;
	th = top_thread_add(t);
	if (!th)
		return -ENOMEM;
	th->tid = s->tid;
	th->slot = s->index + 1;
	memcpy(th->name, s->name, sizeof(th->name));
	th->state = p ? p->state : '?';
	th->wait_ns = -1;
	if (t->cpu) {
		/* a trace: its samples are counted by function in top_trace_groups */
		const struct cpu_thread *c = top_cthread(t, s->tid);

		n = 0;
		est = 0;
		th->ip = c ? c->ip : 0;
		th->samples = c ? (uint32_t)c->samples : 0;
	} else {
		n = top_samples(s, (uint32_t)from, &th->ip, ips, &entries);
		est = top_estimate(s, (uint32_t)from, n, entries);
		th->samples = (uint32_t)(est + 0.5);
		t->v.samples += est;
	}
	if (p) {
		th->cpu_ns = p->cpu_ns;
		delta = top_cpu_delta(t, s->tid, p->cpu_ns);
		if (t->v.interval_ns > 0)
			th->cpu = (double)delta / (double)t->v.interval_ns;
		th->sig_blocked = top_sigblk(t, s->tid, delta, n);
		t->v.sig_blocked += th->sig_blocked;
	}
	t->v.cpu += th->cpu;
	/* Where its CPU went: split between the functions it was sampled in. */
	for (uint32_t k = 0; k < n; k++) {
		g = top_group(t, keys, TOP_RUN, 0, top_site(t, ips[k]), ips[k]);
		if (!g)
			return -ENOMEM;
		g->samples += est / n;
		g->cpu += th->cpu / n;
	}
	if (!n && th->cpu > 0) {
		g = top_group(t, keys, TOP_RUN, 0, th->ip ? top_site(t, th->ip) : NULL, th->ip);
		if (!g)
			return -ENOMEM;
		g->cpu += th->cpu;
		g->sig_blocked += th->sig_blocked;
	}
	/* Where it is now. */
	if (w->kind) {
		const struct top_site *site = w->ra ? top_site(t, w->ra - 1) : NULL;

		th->wait_kind = w->kind;
		th->wait_ra = w->ra;
		if (t->v.alive && w->since && now_ticks > w->since)
			th->wait_ns = rr_ticks_to_ns(&t->v.hdr, now_ticks) -
				      rr_ticks_to_ns(&t->v.hdr, w->since);
		g = top_group(t, keys, TOP_WAIT, w->kind, site, w->ra);
	} else if (th->state == 'R' || delta > 0 || (!t->v.alive && th->ip)) {
		g = top_group(t, keys, TOP_RUN, 0, th->ip ? top_site(t, th->ip) : NULL, th->ip);
	} else {
		g = top_group(t, keys, TOP_SLEEP, 0, NULL, 0);
	}
	if (!g)
		return -ENOMEM;
	g->threads++;
	if (th->wait_ns > g->wait_ns)
		g->wait_ns = th->wait_ns;
	th->group = (size_t)(g - t->v.groups);
	th->group_key = g->key;
	return 0;
}

/* Threads of /proc that have no slot: one group (librip's watcher another), with their CPU. */
static int top_noslot(struct top *t, struct hmap *keys, struct hmap *procs)
{
	HMAP_OF(struct top_proc) *pv = (void *)procs;

	for (size_t i = 0; i < pv->cap; i++) {
		struct top_proc *p = &pv->v[i];
		struct top_thread *th;
		struct top_group *g;
		uint64_t d;

		if (!p->used || p->matched)
			continue;
		th = top_thread_add(t);
		if (!th)
			return -ENOMEM;
		th->tid = (int32_t)p->key;
		snprintf(th->name, sizeof(th->name), "%s", p->comm);
		th->state = p->state;
		th->cpu_ns = p->cpu_ns;
		th->wait_ns = -1;
		d = top_cpu_delta(t, th->tid, p->cpu_ns);
		if (t->v.interval_ns > 0)
			th->cpu = (double)d / (double)t->v.interval_ns;
		t->v.cpu += th->cpu;
		g = top_group(t, keys,
			      t->v.hdr.watch_tid && th->tid == t->v.hdr.watch_tid ? TOP_OWN :
										   TOP_NOSLOT,
			      0, NULL, 0);
		if (!g)
			return -ENOMEM;
		g->threads++;
		g->cpu += th->cpu;
		th->group = (size_t)(g - t->v.groups);
	th->group_key = g->key;
	}
	return 0;
}

/* A trace's samples, by the function of each stack's leaf. */
static int top_trace_groups(struct top *t, struct hmap *keys)
{
	const struct cpu_stack *st;
	size_t n;

	st = cpu_stacks(t->cpu, &n);
	if (!st)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint64_t ip = st[i].n ? st[i].pcs[0] : 0;
		struct top_group *g = top_group(t, keys, TOP_RUN, 0, ip ? top_site(t, ip) : NULL, ip);

		if (!g)
			return -ENOMEM;
		g->samples += (double)st[i].count;
		t->v.samples += (double)st[i].count;
	}
	return 0;
}

/*
 * A trace's sampled threads that no slot left at the end is of (they
 * exited): each counts in the group of its newest sample, as a live
 * thread counts where it is now, named as the exited slot of its tid says
 * when one is left.  Without them, rip top of a trace counted the threads
 * running at the end only ("1 thread", a group of 4 spinning threads with
 * none).
 */
static int top_trace_gone(struct top *t, struct hmap *keys, const struct rr_slots *sl)
{
	/* the last thread slot of each sampled tid (one pass: 10,000 exited threads) */
	size_t *slot_of = malloc((t->ncthreads + 1) * sizeof(*slot_of));

	if (!slot_of)
		return -ENOMEM;
	for (size_t i = 0; i < t->ncthreads; i++)
		slot_of[i] = SIZE_MAX;
	for (size_t k = 0; k < sl->n; k++) {
		size_t i = sl->v[k].kind == RIP_KIND_THREAD ? top_cthread_at(t, sl->v[k].tid)
							     : SIZE_MAX;

		if (i != SIZE_MAX)
			slot_of[i] = k;
	}
	for (size_t i = 0; i < t->ncthreads; i++) {
		const struct cpu_thread *c = &t->cthreads[i];
		struct top_thread *th;
		struct top_group *g;

		if (t->cseen[i] || !c->samples)
			continue;
		th = top_thread_add(t);
		if (!th)
			goto err_nomem;
		th->tid = c->tid;
		th->state = '?';
		th->wait_ns = -1;
		th->ip = c->ip;
		th->samples = (uint32_t)c->samples;
		if (slot_of[i] != SIZE_MAX)
			memcpy(th->name, sl->v[slot_of[i]].name, sizeof(th->name));
		g = top_group(t, keys, TOP_RUN, 0, c->ip ? top_site(t, c->ip) : NULL, c->ip);
		if (!g)
			goto err_nomem;
		g->threads++;
		th->group = (size_t)(g - t->v.groups);
		th->group_key = g->key;
	}
	free(slot_of);
	return 0;
err_nomem:
	free(slot_of);
	return -ENOMEM;
}

int top_use_samples(struct top *t, struct cpu_prof *cpu, char *err, size_t errlen)
{
	t->cpu = cpu;
	t->cthreads = cpu_threads(cpu, &t->ncthreads);
	if (!t->cthreads)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	free(t->cseen);
	t->cseen = calloc(t->ncthreads + 1, sizeof(*t->cseen));
	if (!t->cseen)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	t->v.trace = true;
	t->v.samples_lost = cpu_lost(cpu);
	return 0;
}

int top_refresh(struct top *t, char *err, size_t errlen)
{
	struct hmap keys = { 0 }, procs = { 0 };
	struct rr_slots sl;
	uint64_t now_ticks = 0;
	int64_t now;
	int ret;

	ret = rr_live_hdr(t->f, &t->v.hdr, err, errlen);
	if (ret)
		return ret;
	if (!t->cpu)
		t->v.samples_lost = t->v.hdr.sample_overrun;
	t->v.alive = !t->cpu && rr_alive(t->f) == 1;
	now = rr_mono_ns();
	t->v.first = !t->last_ns;
	t->v.interval_ns = t->last_ns ? now - t->last_ns : 0;
	t->last_ns = now;
	t->round++;
	t->v.ngroups = 0;
	t->v.nthreads = 0;
	t->v.cpu = 0;
	t->v.samples = 0;
	t->v.sig_blocked = 0;
	ret = top_symbols(t, err, errlen);
	if (ret)
		return ret;
	if (t->v.alive) {
		now_ticks = rr_now_ticks(&t->v.hdr);
		ret = top_read_proc(t, &procs);
		if (ret == -ENOENT || ret == -ESRCH) {
			t->v.alive = false; /* it ended just now */
		} else if (ret) {
			hmap_free(&procs);
			return rr_fail(err, errlen, ret, "/proc/%d/task: %s", (int)t->v.pid,
				       strerror(-ret));
		}
	}
	ret = rr_read_slots(t->f, &sl, err, errlen);
	if (ret) {
		hmap_free(&procs);
		return ret;
	}
	t->v.corrupt = sl.corrupt;
	t->v.changing = sl.changing;
	if (t->cpu) {
		memset(t->cseen, 0, t->ncthreads * sizeof(*t->cseen));
		ret = top_trace_groups(t, &keys);
	}
	for (size_t i = 0; i < sl.n && !ret; i++) {
		const struct rr_slot *s = &sl.v[i];

		if (s->kind != RIP_KIND_THREAD || s->index >= t->f->hdr.slot_count)
			continue;
		if (s->state == RIP_SLOT_RUNNING)
			ret = top_slot(t, &keys, &procs, s, now_ticks);
		else if (s->state == RIP_SLOT_EXITED && !t->v.alive && !t->cpu)
			ret = top_gone(t, &keys, s); /* dead: what exited threads sampled counts */
	}
	if (!ret && t->v.alive)
		ret = top_noslot(t, &keys, &procs);
	if (!ret && t->cpu)
		ret = top_trace_gone(t, &keys, &sl);
	rr_slots_free(&sl);
	hmap_free(&procs);
	hmap_free(&keys);
	if (!ret)
		ret = top_cpu_prune(t);
	if (ret)
		return rr_fail(err, errlen, ret, "out of memory");
	/* No process: a group's CPU is its share of the samples. */
	if (!t->v.alive && t->v.samples) {
		for (size_t i = 0; i < t->v.ngroups; i++)
			t->v.groups[i].cpu = (double)t->v.groups[i].samples / (double)t->v.samples;
		t->v.cpu = 1;
	}
	return 0;
}

/* ---- sorting ----------------------------------------------------------------------- */

static int top_cmp_d(double a, double b)
{
	return a > b ? -1 : a < b;
}

static int top_cmp_u(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int top_tie(const struct top_group *a, const struct top_group *b)
{
	int c = top_cmp_u(a->threads, b->threads);

	if (!c)
		c = top_cmp_d(a->samples, b->samples);
	if (!c)
		c = strcmp(a->func ? a->func : "", b->func ? b->func : "");
	if (!c)
		c = top_cmp_u(b->key, a->key);
	return c;
}

static int top_by_cpu(const void *x, const void *y)
{
	const struct top_group *a = x, *b = y;
	int c = top_cmp_d(a->cpu, b->cpu);

	return c ? c : top_tie(a, b);
}

static int top_by_count(const void *x, const void *y)
{
	const struct top_group *a = x, *b = y;
	int c = top_cmp_u(a->threads, b->threads);

	if (!c)
		c = top_cmp_d(a->cpu, b->cpu);
	return c ? c : top_tie(a, b);
}

static int top_by_wait(const void *x, const void *y)
{
	const struct top_group *a = x, *b = y;
	/* unsigned: -1 (unknown) sorts as 0, below every known wait */
	int c = top_cmp_u((uint64_t)a->wait_ns + 1, (uint64_t)b->wait_ns + 1);

	return c ? c : top_tie(a, b);
}

void top_sort(struct top *t, enum top_sort by)
{
	struct top_view *v = &t->v;
	struct hmap keys = { 0 };

	if (v->ngroups) /* (groups may be NULL then) */
		qsort(v->groups, v->ngroups, sizeof(*v->groups),
		      by == TOP_SORT_COUNT ? top_by_count :
		      by == TOP_SORT_WAIT  ? top_by_wait :
					     top_by_cpu);
	/* Each thread finds its group again by key. */
	for (size_t g = 0; g < v->ngroups; g++) {
		bool fresh;
		struct top_gkey *k = hmap_get(&keys, sizeof(*k), v->groups[g].key, &fresh);

		if (k)
			k->idx = g;
	}
	for (size_t i = 0; i < v->nthreads; i++) {
		struct top_gkey *k = hmap_find(&keys, sizeof(*k), v->threads[i].group_key);

		if (k)
			v->threads[i].group = k->idx;
	}
	hmap_free(&keys);
}

const struct top_view *top_view(const struct top *t)
{
	return &t->v;
}

int top_sym_problems(struct top *t,
		     void (*cb)(const char *path, const char *why, unsigned hits, void *arg),
		     void *arg)
{
	return t->sym ? rip_sym_problems(t->sym, cb, arg) : 0;
}

void top_free(struct top *t)
{
	if (!t)
		return;
	top_sites_free(t);
	hmap_free(&t->cpus.h);
	rip_sym_free(t->sym);
	free(t->seen);
	free(t->cseen);
	free(t->v.groups);
	free(t->v.threads);
	free(t);
}
