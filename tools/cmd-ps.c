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
 *
 * The slots are streamed (rr_cursor: one slot at a time, the file's pages
 * given back behind it), never copied whole: a million coroutines cost
 * what their groups cost.  A pass (ps_pass) keeps the header's counts, the
 * thread slots (the waits and the watcher's section want them; threads are
 * few next to coroutines) and whatever its view keeps: the groups and their
 * counters, or nothing for --threads, which prints each slot as it comes
 * after a first pass for the counts and "now".
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <internal/grow.h>

#include "analysis/hmap.h"
#include "read/funcs.h"
#include "read/legacy.h"
#include "read/ringfile.h"
#include "read/sym.h"
#include "read/trace.h"
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
		 "a trace of rip run, which keeps a copy of its program's ring file (or\n"
		 "a chunk file of that trace, read as its trace).\n"
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
		 "      --exe EXE         the executable that wrote --legacy FILE\n"
		 "      --base=ADDR       where EXE was loaded (hex: the start of its first line\n"
		 "                        in /proc/PID/maps); found from the file when not given\n"
		 "      --pid=PID         read EXE's load address from PID's /proc/PID/maps\n"
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
	bool have_base;
	uint64_t base;
	pid_t pid;
};

/* Where one address resolves: the first frame that is not librip's own. */
struct ps_site {
	uint64_t ip;
	size_t row; /* index + 1 of its row in the grouped view, 0: none yet */
	const char *func;
	const char *file;
	int line;
	const char *module;
	uint64_t offset;
	int nframes;
	struct rip_frame frames[PS_FRAMES];
	char label[64]; /* "module+0x1234" when the function is unknown */
};

/* --still: what the first read saw of a slot (state + 1; 0: not in use then). */
struct ps_mark {
	uint64_t switch_ts;
	uint32_t gen, seq;
	uint32_t state;
};

/* A member of a group as --json lists it, packed with its name after it. */
struct ps_member {
	uint32_t index;
	int32_t tid;
	uint8_t kind, state, still;
};

/*
 * Summarise names: "worker-0..8999" for a run of numbered names, else the
 * first few names and how many more; built a name at a time, in slot order.
 */
struct name_run {
	char prefix[RIP_NAME_MAX];
	size_t count;
	long long lo, hi;
	bool numbered;
};

struct ps_row {
	const char *func;     /* group key */
	struct ps_site *site; /* location (one row per distinct file:line) */
	size_t total;	      /* members of the whole function group */
	size_t count, threads, coros, still, exited;
	/* parked coroutines: the range of their switch times (ns) until "now" is known */
	bool parked;
	int64_t sw_min, sw_max;
	int64_t park_min, park_max;
	struct name_run runs[4];
	size_t nruns, other;
	uint8_t *mem; /* --json: struct ps_member and name, each */
	size_t memlen, memcap;
};

/* The rows by function, file and line: row_of's table. */
struct row_slot {
	uint64_t key;
	uint8_t used;
	uint32_t row;
};
HMAP_SLOT_CHECK(struct row_slot);

struct ps_state {
	struct ps_opts o;
	struct rr_file f;
	struct rip_sym *sym;
	uint32_t nmods; /* modules given to the symbolizer */
	bool alive;
	uint64_t now_ticks;
	/* ip -> site, open addressing */
	struct ps_site **sites;
	size_t nsites, cap;
	struct ps_site none; /* the site of slots with no snap yet */
	/* what the last pass kept (ps_pass) */
	struct rr_cursor *cur;	    /* while a pass runs */
	struct rr_slot slot, other; /* the slot visited; one looked up (rr_cursor_get) */
	struct rr_slots thr;	    /* the thread slots, in slot order */
	size_t capthr;
	size_t threads, coros, waiting, exited; /* the header's counts */
	uint64_t max_switch;			/* the newest switch: "now" after a death */
	size_t corrupt, changing;		/* as rr_cursor counts them */
	int first_bad;
	char why[128];
	/* --still: the first read's marks by slot index (live), or everything still (dead) */
	struct ps_mark *marks;
	uint32_t nmarks;
	bool have_still;
	/* the grouped view's rows */
	struct ps_row *rows;
	size_t nrows, caprows;
	HMAP_OF(struct row_slot) rowkeys;
	/* --stacks: what its passes share; no thread slots kept */
	struct ps_stk *stk;
	bool no_keep;
	/* --threads: where it prints; no slot printed yet (the JSON's commas) */
	FILE *out;
	bool first;
	/* --legacy: every snapped address, for the load address */
	uint64_t *addrs;
	size_t naddrs, capaddrs;
	/* --legacy: the executable, its load bias and how it was found */
	struct lg_exe exe;
	bool have_exe;
	uint64_t bias;
	const char *base_from; /* "fixed", "option", "maps", "inferred", "functions"; NULL: unknown */
	pid_t writer;	       /* "maps": whose */
};

/* ---- the passes over the slots ------------------------------------------------------ */

/* What a pass does with each slot in use besides counting it: 0 or -errno. */
typedef int (*ps_visit_fn)(struct ps_state *st, const struct rr_slot *s, bool still);

/* Did slot s stay where the first read of --still saw it? */
static bool ps_is_still(const struct ps_state *st, const struct rr_slot *s)
{
	const struct ps_mark *m;

	if (!st->have_still)
		return false;
	if (!st->alive)
		return true; /* a dead process moves no more */
	if (s->index >= st->nmarks)
		return false;
	m = &st->marks[s->index];
	return m->state == s->state + 1 && m->gen == s->gen && m->seq == s->seq &&
	       m->switch_ts == s->switch_ts;
}

static int ps_keep_thread(struct ps_state *st, const struct rr_slot *s)
{
	struct rr_slots *t = &st->thr;

	if (RIP_GROW(t->v, st->capthr, t->n + 1, 16))
		return -ENOMEM;
	t->v[t->n++] = *s;
	return 0;
}

/*
 * One pass over the slots in use, in slot order: the header's counts, the
 * newest switch, the thread slots, and visit(st, slot, still) for each.
 * Errors are reported here; 0 or -errno.
 */
static int ps_pass(struct ps_state *st, ps_visit_fn visit)
{
	struct rr_cursor c;
	char err[RR_ERR_MAX];
	int ret;

	rr_slots_free(&st->thr);
	st->capthr = 0;
	st->threads = st->coros = st->waiting = st->exited = 0;
	st->max_switch = 0;
	ret = rr_cursor_open(&st->f, &c, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		return ret;
	}
	st->cur = &c;
	while ((ret = rr_cursor_next(&c, &st->slot, err, sizeof(err))) == 1) {
		const struct rr_slot *s = &st->slot;

		if (s->state == RIP_SLOT_EXITED)
			st->exited++;
		else if (s->kind == RIP_KIND_CORO) {
			st->coros++;
			st->waiting += s->state == RIP_SLOT_WAITING;
		} else
			st->threads++;
		if (s->switch_ts > st->max_switch)
			st->max_switch = s->switch_ts;
		ret = s->kind == RIP_KIND_THREAD && !st->no_keep ? ps_keep_thread(st, s) : 0;
		if (!ret && visit)
			ret = visit(st, s, ps_is_still(st, s));
		if (ret) {
			snprintf(err, sizeof(err), "%s", strerror(-ret));
			break;
		}
	}
	st->cur = NULL;
	rr_cursor_close(&c);
	st->corrupt = c.corrupt;
	st->changing = c.changing;
	st->first_bad = c.first_bad;
	memcpy(st->why, c.why, sizeof(st->why));
	if (ret < 0)
		tool_err("%s", err);
	return ret < 0 ? ret : 0;
}

/*
 * "now" for parked times: the clock if alive, else the last thing that
 * happened: its exit, the newest switch, or the watcher's last sweep (a
 * program killed long after its last switch: parked 3 ms, where the sweep
 * saw them parked 11 s on).
 */
static void ps_now(struct ps_state *st)
{
	uint64_t exit_ts = 0, sweep_ts = 0;
	char why[RR_ERR_MAX];

	if (st->alive) {
		st->now_ticks = rr_now_ticks(&st->f.hdr);
		return;
	}
	if (!st->f.legacy_raw) {
		rr_live_u64(&st->f, offsetof(struct rip_file_hdr, exit_ts), &exit_ts, why,
			    sizeof(why));
		rr_live_u64(&st->f, offsetof(struct rip_file_hdr, watch_sweep_ts), &sweep_ts, why,
			    sizeof(why));
	}
	st->now_ticks = exit_ts > st->max_switch ? exit_ts : st->max_switch;
	if (sweep_ts > st->now_ticks)
		st->now_ticks = sweep_ts;
}

/* ---- the original's raw files ---------------------------------------------------------- */

static int ps_legacy_addr(struct ps_state *st, const struct rr_slot *s, bool still)
{
	(void)still;
	if (RIP_GROW(st->addrs, st->capaddrs, st->naddrs + s->n, 1024))
		return -ENOMEM;
	memcpy(st->addrs + st->naddrs, s->ip, s->n * sizeof(*s->ip));
	st->naddrs += s->n;
	return 0;
}

/*
 * Where --exe was loaded when it wrote the raw file: nowhere else than its
 * link address if it is not position-independent; else --base, the maps of
 * --pid or of the process still writing the file, or the one load address
 * that fits the snapped addresses (read/legacy.h).  0, or -errno reported.
 */
static int ps_legacy_base(struct ps_state *st)
{
	char err[RR_ERR_MAX], path[PATH_MAX];
	const char *root = st->o.sysroot && *st->o.sysroot ? st->o.sysroot : "";
	struct lg_fit fit = { 0 };
	uint64_t *addr;
	size_t n;
	int ret;

	/* The symbolizer finds --exe under --sysroot: so does the search. */
	if (snprintf(path, sizeof(path), "%s%s%s", root, *root && *st->o.exe != '/' ? "/" : "",
		     st->o.exe) >= (int)sizeof(path)) {
		tool_err("%s: path too long", st->o.exe);
		return -ENAMETOOLONG;
	}
	ret = lg_exe_open(path, &st->exe, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		return ret;
	}
	st->have_exe = true;
	if (!st->exe.pie) {
		if (st->o.have_base || st->o.pid)
			fprintf(stderr,
				"note: %s is not position-independent: it is always loaded at "
				"0x%llx, %s is not used\n",
				st->o.exe, (unsigned long long)st->exe.lo,
				st->o.have_base ? "--base" : "--pid");
		st->base_from = "fixed";
		return 0;
	}
	if (st->o.have_base) {
		/* Snapped addresses hold 56 bits: so must every address of the executable. */
		if (st->o.base < st->exe.lo || st->o.base > (1ull << 56) - (st->exe.hi - st->exe.lo)) {
			tool_err("--base 0x%llx cannot hold %s, which spans 0x%llx..0x%llx",
				 (unsigned long long)st->o.base, st->o.exe,
				 (unsigned long long)st->exe.lo, (unsigned long long)st->exe.hi);
			return -EINVAL;
		}
		st->bias = st->o.base - st->exe.lo;
		st->base_from = "option";
	} else if (st->o.pid) {
		ret = lg_maps_bias(st->o.pid, &st->exe, &st->bias, err, sizeof(err));
		if (ret) {
			tool_err("%s", err);
			return ret;
		}
		st->base_from = "maps";
		st->writer = st->o.pid;
	} else {
		ret = lg_writer_bias(st->f.path, &st->exe, &st->writer, &st->bias, err,
				     sizeof(err));
		if (!ret)
			st->base_from = "maps";
		else if (ret != -ENOENT)
			fprintf(stderr, "note: %s; looking for the load address in the file\n",
				err);
	}
	/* every snapped address of the file: a pass of its own (8 bytes each) */
	ret = ps_pass(st, ps_legacy_addr);
	if (ret)
		return ret;
	addr = st->addrs;
	n = st->naddrs;
	if (!st->base_from && n) {
		struct lg_guess g;

		ret = lg_infer(&st->exe, addr, n, &g, err, sizeof(err));
		if (ret) {
			tool_err("%s", err);
			goto out_free;
		}
		st->bias = g.bias;
		st->base_from = g.by_funcs ? "functions" : "inferred";
		fit = g.fit;
		if (g.by_funcs)
			fprintf(stderr,
				"note: no load address of %s puts most snapped addresses just "
				"after a snap; 0x%llx, the only one that puts them all in its "
				"functions, is a weaker guess: give --base if you know better\n",
				st->o.exe, (unsigned long long)(st->exe.lo + g.bias));
		else if (fit.snaps < fit.n)
			fprintf(stderr,
				"note: %zu of the %zu snapped addresses are not just after a snap "
				"in %s loaded at 0x%llx (records of an earlier run?)\n",
				fit.n - fit.snaps, fit.n, st->o.exe,
				(unsigned long long)(st->exe.lo + g.bias));
	} else if (st->base_from) {
		ret = lg_fit(&st->exe, st->bias, addr, n, &fit);
		if (ret) {
			tool_err("out of memory");
			goto out_free;
		}
		if (fit.snaps < fit.n)
			fprintf(stderr,
				"note: %zu of the %zu snapped addresses are not just after a snap "
				"in %s loaded at 0x%llx: is that where it was loaded?\n",
				fit.n - fit.snaps, fit.n, st->o.exe,
				(unsigned long long)(st->exe.lo + st->bias));
	}
out_free:
	free(st->addrs);
	st->addrs = NULL;
	st->naddrs = st->capaddrs = 0;
	return ret;
}

/* How the header and --json say where --exe was loaded. */
static const char *ps_base_how(const struct ps_state *st, char *buf, size_t len)
{
	if (!strcmp(st->base_from, "option"))
		return "given with --base";
	if (!strcmp(st->base_from, "maps")) {
		snprintf(buf, len, "from /proc/%d/maps", (int)st->writer);
		return buf;
	}
	if (!strcmp(st->base_from, "inferred"))
		return "found from the snapped addresses";
	if (!strcmp(st->base_from, "functions"))
		return "guessed from function bounds";
	return "not position-independent";
}

static void ps_json_legacy(const struct ps_state *st, FILE *out)
{
	if (!st->f.legacy_raw)
		return;
	fprintf(out, ",\"exe\":");
	json_str(out, st->o.exe);
	if (!st->base_from)
		return;
	fprintf(out, ",\"exe_base\":\"0x%llx\",\"base_from\":\"%s\"",
		(unsigned long long)(st->exe.lo + st->bias), st->base_from);
	if (st->writer)
		fprintf(out, ",\"writer_pid\":%d", (int)st->writer);
}

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

/*
 * The modules the live process loaded since the symbolizer got its list
 * (the slots are read after it: a snap in a library loaded meanwhile), if
 * any: true when there are new ones.
 */
static bool ps_more_modules(struct ps_state *st)
{
	struct rip_module *mods = NULL;
	char err[RR_ERR_MAX];
	uint32_t count;
	size_t n = 0;

	if (!st->alive || st->f.legacy_raw ||
	    rr_live_u32(&st->f, offsetof(struct rip_file_hdr, mod_count), &count, err,
			sizeof(err)) ||
	    count <= st->nmods)
		return false;
	if (rr_read_modules(&st->f, &mods, &n, err, sizeof(err)) || n <= st->nmods) {
		free(mods);
		return false;
	}
	rip_sym_add_modules(st->sym, mods + st->nmods, n - st->nmods);
	st->nmods = (uint32_t)n;
	free(mods);
	return true;
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
	if (st->sym && (n <= 0 || !s->frames[0].module) && ps_more_modules(st))
		n = rip_sym_lookup(st->sym, ip, s->frames, PS_FRAMES);
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

/*
 * target, a pid without a ring file: is it a recorder (rip run, rip
 * record)?  Then say so, and which pids it traces (rr_consumed_by), in
 * place of "no ring file": true.  A recorder: the consumer of ring files it
 * maps, or, with only children, a process whose /proc/PID/cmdline is
 * "rip run" or "rip record" (rip run before its program made its file).
 */
static bool ps_recorder(const char *target)
{
	struct rr_traced v[8];
	char cmd[256] = "", path[64], msg[1024], *end;
	long pid = strtol(target, &end, 10);
	size_t n, k, m;
	ssize_t got;
	int fd;

	if (end == target || *end || pid <= 0 || pid > INT32_MAX)
		return false;
	n = rr_consumed_by((pid_t)pid, v, sizeof(v) / sizeof(v[0]));
	if (!n)
		return false;
	snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	got = fd >= 0 ? read(fd, cmd, sizeof(cmd) - 1) : -1;
	if (fd >= 0)
		close(fd);
	cmd[got > 0 ? got : 0] = 0;
	{
		const char *a0 = strrchr(cmd, '/') ? strrchr(cmd, '/') + 1 : cmd;
		size_t l0 = strlen(cmd);
		const char *a1 = l0 + 1 < (size_t)(got > 0 ? got : 0) ? cmd + l0 + 1 : "";

		bool rip = (!strcmp(a0, "rip") || !strncmp(a0, "rip-", 4)) &&
			   (!strcmp(a1, "run") || !strcmp(a1, "record"));

		/* the consumer of ring files, or rip run with children and none yet */
		if (!rip && !v[0].ring)
			return false;
		m = (size_t)snprintf(msg, sizeof(msg),
				     "pid %ld is %s%s%s, a recorder, not a traced program; it traces",
				     pid, rip ? "`rip " : "a consumer of ring files", rip ? a1 : "",
				     rip ? "`" : "");
	}
	/* comm: the file's or /proc's, hostile: printable ASCII only */
	for (k = 0; k < n && k < sizeof(v) / sizeof(v[0]) && m < sizeof(msg); k++) {
		for (char *c = v[k].comm; *c; c++)
			if (*c < ' ' || *c > '~')
				*c = '?';
		m += (size_t)snprintf(msg + m, sizeof(msg) - m, "%s %d (%s)", k ? "," : "",
				      (int)v[k].pid, v[k].comm[0] ? v[k].comm : "?");
	}
	if (n > k && m < sizeof(msg))
		m += (size_t)snprintf(msg + m, sizeof(msg) - m, " and %zu more", n - k);
	if (m < sizeof(msg))
		snprintf(msg + m, sizeof(msg) - m, ": rip ps %d", (int)v[0].pid);
	tool_err("%s", msg);
	return true;
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
		/* The original header wrote absolute addresses: ps_legacy_base found the bias. */
		if (!st->exe.pie)
			return rip_sym_add_module(st->sym, 0, UINT64_MAX, 0, st->o.exe, NULL, 0,
						  RIP_MOD_EXE);
		if (!st->base_from)
			return 0;
		return rip_sym_add_module(st->sym, st->exe.lo + st->bias, st->exe.hi + st->bias,
					  st->bias, st->o.exe, NULL, 0, RIP_MOD_EXE);
	}
	ret = rr_read_modules(&st->f, &mods, &n, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		return ret;
	}
	rip_sym_add_modules(st->sym, mods, n);
	st->nmods = (uint32_t)n;
	free(mods);
	/* live: what it maps now, for a library loaded since its map was brought up to date */
	if (st->alive)
		rip_sym_add_proc_maps(st->sym, st->f.hdr.pid, st->f.hdr.start_ticks);
	/* a JIT's functions (its perf map), where it wrote one: none is no error */
	rip_sym_add_perfmap(st->sym, st->f.hdr.pid, st->f.hdr.start_ticks, st->f.st.st_uid);
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
	return (struct pw_ctx){ .s = &st->thr, .hdr = &st->f.hdr, .alive = st->alive,
				.all = st->o.all, .verbose = st->o.verbose,
				.now_ticks = st->now_ticks, .site = ps_pw_site, .arg = st };
}

/* ---- still -------------------------------------------------------------------------- */

static int ps_mark(struct ps_state *st, const struct rr_slot *s, bool still)
{
	(void)still;
	if (!st->marks) {
		st->nmarks = st->cur->end;
		st->marks = calloc(st->nmarks ? st->nmarks : 1, sizeof(*st->marks));
		if (!st->marks)
			return -ENOMEM;
	}
	if (s->index < st->nmarks)
		st->marks[s->index] = (struct ps_mark){ .switch_ts = s->switch_ts,
							.gen = s->gen,
							.seq = s->seq,
							.state = s->state + 1 };
	return 0;
}

/*
 * --still: what every slot looks like now (24 bytes a slot, by index),
 * then the wait; the pass the view makes next is the second read, and a
 * slot is still when it did not move in between.  A dead process moves no
 * more: no reads, everything is still.
 */
static int ps_still(struct ps_state *st)
{
	struct timespec ts = { .tv_sec = st->o.still_ns / 1000000000,
			       .tv_nsec = st->o.still_ns % 1000000000 };
	int ret;

	if (st->alive) {
		ret = ps_pass(st, ps_mark);
		if (ret)
			return ret;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
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

/* Is the slot parked (a coroutine waiting)? */
static bool parks(const struct ps_state *st, const struct rr_slot *s)
{
	return s->kind == RIP_KIND_CORO && s->state == RIP_SLOT_WAITING && !st->f.legacy_raw;
}

/* Time the slot has been parked up to now or the death; -1 if it is not parked. */
static int64_t parked_ns(const struct ps_state *st, const struct rr_slot *s)
{
	if (!parks(st, s))
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

/*
 * The row of a site: one per distinct function and file:line (or per site
 * when the line is unknown), made when the first of its members comes.
 * The row is kept in the site, so that a million slots find theirs
 * without a scan.  NULL: no memory.
 */
static uint64_t row_key(const struct ps_site *site)
{
	return hash_ip((uintptr_t)site->func ^ hash_ip((uintptr_t)site->file) ^
		       ((uint64_t)(unsigned)site->line << 40));
}

static bool row_is(const struct ps_row *r, const struct ps_site *site)
{
	return r->func == site->func && r->site->file == site->file && r->site->line == site->line;
}

static struct ps_row *row_of(struct ps_state *st, struct ps_site *site)
{
	struct row_slot *k = NULL;
	struct ps_row *r;
	bool fresh;

	if (site->row)
		return &st->rows[site->row - 1];
	/*
	 * A site with a line joins the row of its function and line (another
	 * address of it); without one it has a row of its own.
	 */
	if (site->line) {
		k = hmap_get(&st->rowkeys.h, sizeof(*k), row_key(site), &fresh);
		if (!k)
			return NULL;
		if (!fresh && row_is(&st->rows[k->row], site)) {
			site->row = k->row + 1;
			return &st->rows[k->row];
		}
		if (!fresh) {
			/* two keys alike: the rows are scanned (never seen) */
			for (size_t i = st->nrows; i-- > 0;) {
				if (row_is(&st->rows[i], site)) {
					site->row = i + 1;
					return &st->rows[i];
				}
			}
			k = NULL;
		}
	}
	if (RIP_GROW(st->rows, st->caprows, st->nrows + 1, 64))
		return NULL;
	r = &st->rows[st->nrows++];
	memset(r, 0, sizeof(*r));
	r->func = site->func;
	r->site = site;
	r->park_min = INT64_MAX;
	r->park_max = -1;
	site->row = st->nrows;
	if (k)
		k->row = (uint32_t)(st->nrows - 1);
	return r;
}

static void names_add(struct ps_row *r, const char *name)
{
	size_t l = strlen(name), p = l;
	long long num = -1;
	struct name_run *run = NULL;

	while (p > 0 && name[p - 1] >= '0' && name[p - 1] <= '9' && l - p < 15)
		p--;
	/* at most 15 digits: no overflow (strtoll's locale and checks cost a million names) */
	for (size_t k = p; k < l; k++)
		num = (num < 0 ? 0 : num * 10) + (name[k] - '0');
	for (size_t k = 0; k < r->nruns; k++)
		if (!strncmp(r->runs[k].prefix, name, p) && r->runs[k].prefix[p] == 0 &&
		    r->runs[k].numbered == (num >= 0))
			run = &r->runs[k];
	if (!run && r->nruns < 4) {
		run = &r->runs[r->nruns++];
		memcpy(run->prefix, name, p);
		run->prefix[p] = 0;
		run->count = 0;
		run->lo = num;
		run->hi = num;
		run->numbered = num >= 0;
		if (!run->numbered)
			snprintf(run->prefix, sizeof(run->prefix), "%s", name);
	}
	if (!run || (!run->numbered && strcmp(run->prefix, name))) {
		r->other++;
		return;
	}
	run->count++;
	if (num >= 0 && num < run->lo)
		run->lo = num;
	if (num > run->hi)
		run->hi = num;
}

static void names_summary(const struct ps_row *r, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (size_t k = 0; k < r->nruns && off < len; k++) {
		const struct name_run *run = &r->runs[k];
		int n;

		if (run->numbered && run->count > 1 && run->lo == run->hi)
			/* one name, many threads: "pool7 (x3)", not "some of pool7..7" */
			n = snprintf(buf + off, len - off, "%s%s%lld (x%zu)", k ? ", " : "",
				     run->prefix, run->lo, run->count);
		else if (run->numbered && run->count > 1)
			n = snprintf(buf + off, len - off, "%s%s%s%lld..%lld", k ? ", " : "",
				     (long long)run->count < run->hi - run->lo + 1 ? "some of " :
										     "",
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
	if (r->other && off < len)
		snprintf(buf + off, len - off, ", +%zu more", r->other);
}

/* --json lists every member: its id, tid, kind, state and name, packed (not the slot). */
static int row_member(struct ps_row *r, const struct rr_slot *s, bool still)
{
	struct ps_member m = { .index = s->index, .tid = s->tid, .kind = (uint8_t)s->kind,
			       .state = (uint8_t)s->state, .still = still };
	size_t need = sizeof(m) + strlen(s->name) + 1;

	if (RIP_GROW(r->mem, r->memcap, r->memlen + need, 256))
		return -ENOMEM;

	memcpy(r->mem + r->memlen, &m, sizeof(m));
	memcpy(r->mem + r->memlen + sizeof(m), s->name, need - sizeof(m));
	r->memlen += need;
	return 0;
}

/* The grouped view's visit: the slot counted into the row of its newest snap. */
static int ps_group_slot(struct ps_state *st, const struct rr_slot *s, bool still)
{
	struct ps_site *site;
	struct ps_row *row;

	if (!shown(st, s) || pw_waiting(s))
		return 0; /* waiting threads have a table of their own */
	site = s->n ? ps_site(st, s->ip[s->n - 1]) : &st->none;
	row = site ? row_of(st, site) : NULL;
	if (!row)
		return -ENOMEM;
	row->count++;
	row->coros += s->kind == RIP_KIND_CORO;
	row->threads += s->kind != RIP_KIND_CORO;
	row->exited += s->state == RIP_SLOT_EXITED;
	row->still += still;
	if (parks(st, s)) {
		/* parked until "now", known once every slot was read: the range of switches */
		int64_t sw = rr_ticks_to_ns(&st->f.hdr, s->switch_ts);

		if (!row->parked || sw < row->sw_min)
			row->sw_min = sw;
		if (!row->parked || sw > row->sw_max)
			row->sw_max = sw;
		row->parked = true;
	}
	names_add(row, s->name);
	return st->o.json ? row_member(row, s, still) : 0;
}

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct ps_row *a = pa, *b = pb;
	int c;

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

static int row_func_cmp(const void *pa, const void *pb)
{
	return strcmp((*(struct ps_row *const *)pa)->func, (*(struct ps_row *const *)pb)->func);
}

/*
 * Once every slot was read: the parked ranges against "now", the totals per
 * function, the order (0 or -ENOMEM).  A member that switched after "now" (clocks of two
 * CPUs a little apart, or a hostile file) counts as parked for 0.
 */
static int rows_finish(struct ps_state *st)
{
	int64_t now = rr_ticks_to_ns(&st->f.hdr, st->now_ticks);
	struct ps_row **by;

	for (size_t r = 0; r < st->nrows; r++) {
		struct ps_row *row = &st->rows[r];

		if (!row->parked)
			continue;
		row->park_min = now - row->sw_max;
		row->park_max = now - row->sw_min;
		if (row->park_max < 0)
			row->park_max = -1; /* none: as if none were parked */
		else if (row->park_min < 0)
			row->park_min = 0;
	}
	/*
	 * The totals per function, through the rows sorted by function: the
	 * rows themselves stay in the order they were made for the sort below
	 * (its ties keep that order, as they always did).
	 */
	by = malloc((st->nrows ? st->nrows : 1) * sizeof(*by));
	if (!by)
		return -ENOMEM;
	for (size_t r = 0; r < st->nrows; r++)
		by[r] = &st->rows[r];
	if (st->nrows)
		qsort(by, st->nrows, sizeof(*by), row_func_cmp);
	for (size_t r = 0, q; r < st->nrows; r = q) {
		size_t total = 0;

		for (q = r; q < st->nrows && !strcmp(by[q]->func, by[r]->func); q++)
			total += by[q]->count;
		for (size_t k = r; k < q; k++)
			by[k]->total = total;
	}
	free(by);
	/* the rows move: no site's row (site->row) is good after this */
	if (st->nrows)
		qsort(st->rows, st->nrows, sizeof(*st->rows), row_cmp);
	return 0;
}

static void print_header(const struct ps_state *st, FILE *out)
{
	const struct rip_file_hdr *h = &st->f.hdr;
	size_t threads = st->threads, coros = st->coros, waiting = st->waiting, exited = st->exited;
	struct rip_file_hdr live;
	char why[RR_ERR_MAX];

	if (st->f.legacy_raw) {
		fprintf(out, "%s: original librip file, %zu thread%s, %zu exited", st->f.path,
			threads, threads == 1 ? "" : "s", exited);
		if (st->base_from && st->exe.pie)
			fprintf(out, "; %s loaded at 0x%llx (%s)", tool_base(st->o.exe),
				(unsigned long long)(st->exe.lo + st->bias),
				ps_base_how(st, why, sizeof(why)));
		fputc('\n', out);
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
	fprintf(out, "%zu thread%s, %zu coroutine%s (%zu waiting), %zu exited kept for history",
		threads, threads == 1 ? "" : "s", coros, coros == 1 ? "" : "s", waiting, exited);
	if (st->f.hdr.overflow || live.overflow)
		/* attaches and rip_coro_create alike take a slot: the count is of both */
		fprintf(out, "; %u thread%s or coroutine%s found no free slot (raise RIP_SLOTS)",
			live.overflow, live.overflow == 1 ? "" : "s", live.overflow == 1 ? "" : "s");
	fputc('\n', out);
	if (live.proc_flags & RIP_P_SECOND_OFF)
		fprintf(out,
			"note: the program's own librip (linked in statically) stayed off under "
			"librip-preload.so: its rip_snap() calls are not here (link it with -lrip)\n");
}

/* The end of a --json document: what the watcher saw, then the last brace. */
static int ps_json_end(struct ps_state *st, FILE *out)
{
	struct psw_opts po = { .alive = st->alive, .now_ticks = st->now_ticks,
			       .sysroot = st->o.sysroot };
	int ret = psw_json(&st->f, &st->thr, st->sym, &po, out);

	fprintf(out, "}\n");
	return ret;
}

/*
 * The grouped view: one pass that counts each slot into its row, then the
 * rows.  Errors of the pass are reported there; 0 or -errno.
 */
static int ps_grouped(struct ps_state *st, FILE *out)
{
	struct pw_ctx pw;
	char where[256], names[200], park[64], a[32], b[32];
	const char *prev = NULL;
	int ret;

	st->none.func = "(no snap yet)";
	ret = ps_pass(st, ps_group_slot);
	if (ret)
		return ret;
	ps_now(st);
	ret = rows_finish(st);
	if (ret)
		goto out_err;
	pw = ps_pw(st);

	if (st->o.json) {
		fprintf(out, "{\"pid\":%d,\"comm\":", st->f.hdr.pid);
		json_str(out, st->f.hdr.comm);
		fprintf(out, ",\"ring\":");
		json_str(out, st->f.path);
		fprintf(out, ",\"alive\":%s", st->alive ? "true" : "false");
		ps_json_legacy(st, out);
		ret = pw_json_groups(&pw, out);
		if (ret)
			goto out_err;
		fprintf(out, ",\"groups\":[");
		for (size_t r = 0; r < st->nrows; r++) {
			const struct ps_row *row = &st->rows[r];

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
			for (size_t off = 0; off < row->memlen;) {
				struct ps_member m;
				struct rr_slot k;
				const char *name = (const char *)row->mem + off + sizeof(m);

				memcpy(&m, row->mem + off, sizeof(m));
				k.kind = m.kind;
				k.state = m.state;
				fprintf(out, "%s{\"slot\":%u,\"tid\":%d,\"kind\":\"%s\",\"state\":\"%s\","
					     "\"name\":",
					off ? "," : "", m.index, m.tid, kind_name(&k), state_name(&k));
				json_str(out, name);
				if (st->have_still)
					fprintf(out, ",\"still\":%s", m.still ? "true" : "false");
				fputc('}', out);
				off += sizeof(m) + strlen(name) + 1;
			}
			fprintf(out, "]}");
		}
		fputc(']', out);
		ret = ps_json_end(st, out);
		if (ret)
			goto out_err;
		return 0;
	}

	print_header(st, out);
	ret = pw_print_groups(&pw, out);
	if (ret)
		goto out_err;
	if (st->nrows)
		fprintf(out, "\n%7s  %s%-28s %-26s %s\n", "COUNT", st->have_still ? " STILL  " : "",
		"FUNCTION", "LOCATION", "WHO");
	for (size_t r = 0; r < st->nrows; r++) {
		const struct ps_row *row = &st->rows[r];
		bool first = !prev || strcmp(prev, row->func);
		char stillcol[16] = "", gone[48];

		names_summary(row, names, sizeof(names));
		/* only exited ones: the row is marked; some: how many of it */
		if (row->exited == row->count)
			snprintf(gone, sizeof(gone), " (exited)");
		else if (row->exited)
			snprintf(gone, sizeof(gone), " (%zu exited)", row->exited);
		else
			gone[0] = 0;
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
			row->threads && row->coros ? "threads+coroutines " :
			row->coros	 ? (row->coros > 1 ? "coroutines " : "coroutine ") :
			row->threads > 1 ? "threads " :
					   "thread ",
			names, park, gone);
		prev = row->func;
	}
	if (st->have_still)
		fprintf(out, "\nSTILL: how many did not move in %s%s; * marks a location where "
			     "none did.\n",
			rr_fmt_duration(st->o.still_ns, a, sizeof(a)),
			st->alive ? "" : " (the process is dead: nothing moves)");

	return 0;

out_err:
	tool_err("%s", strerror(-ret));
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

/* The name of the coroutine a thread runs (its link, looked up out of order), or "?". */
static const char *ps_coro_name(struct ps_state *st, uint32_t c)
{
	char err[RR_ERR_MAX];

	return rr_cursor_get(st->cur, c, &st->other, err, sizeof(err)) == 1 ? st->other.name
									    : "?";
}

/* The per-thread view's visit: the slot printed as it comes. */
static int ps_thread_slot(struct ps_state *st, const struct rr_slot *s, bool still)
{
	FILE *out = st->out;
	struct pw_ctx pw;
	int64_t p;
	char a[32];

	if (!shown(st, s))
		return 0;
	/* live: parked and waited until the slot was read (the reads take a while) */
	if (st->alive)
		st->now_ticks = rr_now_ticks(&st->f.hdr);
	pw = ps_pw(st);
	p = parked_ns(st, s);
	if (st->o.json) {
		fprintf(out, "%s{\"slot\":%u,\"tid\":%d,\"kind\":\"%s\",\"state\":\"%s\","
			     "\"name\":",
			st->first ? "" : ",", s->index, s->tid, kind_name(s), state_name(s));
		json_str(out, s->name);
		if (p >= 0)
			fprintf(out, ",\"parked_ns\":%lld", (long long)p);
		if (st->have_still)
			fprintf(out, ",\"still\":%s", still ? "true" : "false");
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
		st->first = false;
		return 0;
	}
	/* a thread in a wrapped call is not running: it waits there (the line below says where) */
	fprintf(out, "\n%s %-20s tid %-7d %s", kind_name(s), s->name[0] ? s->name : "-", s->tid,
		s->kind == RIP_KIND_THREAD && s->state == RIP_SLOT_RUNNING && s->wait.kind ?
			"blocked" :
			state_name(s));
	if (p >= 0)
		fprintf(out, ", parked %s", rr_fmt_duration(p, a, sizeof(a)));
	if (s->coro)
		fprintf(out, ", running coroutine %s", ps_coro_name(st, s->coro - 1));
	if (still)
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
	return 0;
}

/*
 * The per-thread view: every slot printed as the second pass reads it,
 * after a first pass for the header's counts and, after a death, "now" (the
 * newest switch of them all).  0 or -errno (reported).
 */
static int ps_threads(struct ps_state *st, FILE *out)
{
	int ret = ps_pass(st, NULL);

	if (ret)
		return ret;
	ps_now(st);
	if (st->o.json) {
		fprintf(out, "{\"pid\":%d,\"comm\":", st->f.hdr.pid);
		json_str(out, st->f.hdr.comm);
		fprintf(out, ",\"ring\":");
		json_str(out, st->f.path);
		fprintf(out, ",\"alive\":%s", st->alive ? "true" : "false");
		ps_json_legacy(st, out);
		fprintf(out, ",\"slots\":[");
	} else {
		print_header(st, out);
	}
	st->first = true;
	st->out = out;
	ret = ps_pass(st, ps_thread_slot);
	if (ret)
		return ret;
	if (st->o.json) {
		fputc(']', out);
		ret = ps_json_end(st, out);
		if (ret)
			tool_err("%s", strerror(-ret));
	}
	return ret;
}

/* ---- call stacks (tools/ps-stacks.c prints them) ------------------------------------------- */

/* --stacks: what its passes share (a visit has the ps_state only) */
struct ps_stk {
	struct rfn_reader rd;
	struct pst_ctx c;
	struct fsg_groups g;
	struct rfn_stack st; /* the stack of the slot visited */
	FILE *out;
	char err[RR_ERR_MAX];
};

/* --stacks --threads: the slot visited printed with its stack, then forgotten. */
static int ps_stack_print(struct ps_state *st, const struct rr_slot *s, bool still)
{
	struct ps_stk *k = st->stk;
	int ret;

	(void)still;
	ret = rfn_reader_get(&k->rd, s, &k->st, k->err, sizeof(k->err));
	if (ret)
		return ret;
	pst_thread(&k->c, s, &k->st, k->out);
	return 0;
}

/* --stacks: the slot visited joins the group of its path; only what a member shows is kept. */
static int ps_stack_group(struct ps_state *st, const struct rr_slot *s, bool still)
{
	struct ps_stk *k = st->stk;
	int ret;

	(void)still;
	ret = rfn_reader_get(&k->rd, s, &k->st, k->err, sizeof(k->err));
	return ret ? ret : fsg_add(&k->g, s, &k->st);
}

static void ps_stacks_head(struct ps_state *st, FILE *out)
{
	if (st->o.json) {
		fprintf(out, "{\"pid\":%d,\"comm\":", st->f.hdr.pid);
		json_str(out, st->f.hdr.comm);
		fprintf(out, ",\"ring\":");
		json_str(out, st->f.path);
		fprintf(out, ",\"alive\":%s", st->alive ? "true" : "false");
	} else {
		print_header(st, out);
	}
}

/*
 * One pass over the slots, each slot's stack read as it comes and nothing
 * kept per slot: --threads prints it there (after a first pass that counts
 * for the header; JSON has no counts), the grouped view adds it to its
 * group.  The threads' slots are not kept either (no watcher section).
 */
static int ps_stacks(struct ps_state *st, FILE *out)
{
	struct ps_stk *k = calloc(1, sizeof(*k));
	int ret;

	if (!k) {
		tool_err("out of memory");
		return -ENOMEM;
	}
	k->out = out;
	k->c = (struct pst_ctx){ .f = &st->f, .threads = st->o.threads, .all = st->o.all,
				 .verbose = st->o.verbose, .json = st->o.json,
				 .site = ps_pw_site, .arg = st };
	st->stk = k;
	st->no_keep = true;
	ret = rfn_reader_open(&st->f, &k->rd, k->err, sizeof(k->err));
	if (ret) {
		tool_err("%s", k->err);
		goto out;
	}
	if (st->o.threads) {
		if (!st->o.json && (ret = ps_pass(st, NULL)))
			goto out;
		ps_stacks_head(st, out);
		pst_begin(&k->c, out);
		k->err[0] = 0;
		ret = ps_pass(st, ps_stack_print);
		pst_end(&k->c, out);
	} else {
		ret = fsg_init(&k->g, st->o.all);
		if (!ret) {
			k->err[0] = 0;
			ret = ps_pass(st, ps_stack_group);
		}
		if (!ret) {
			fsg_finish(&k->g);
			ps_stacks_head(st, out);
			pst_grouped(&k->c, &k->g, out);
		}
	}
	if (ret && k->err[0])
		tool_err("%s", k->err);
	if (!ret && st->o.json)
		fprintf(out, "}\n");
out:
	fsg_groups_free(&k->g);
	rfn_reader_close(&k->rd);
	st->stk = NULL;
	free(k);
	return ret;
}

/* ---- main ------------------------------------------------------------------------------------ */

/* A load address: hexadecimal (as /proc/PID/maps, cores and logs write it), page-aligned. */
static int ps_parse_base(const char *arg, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!strncmp(arg, "0x", 2) || !strncmp(arg, "0X", 2))
		arg += 2;
	if (!*arg || !strchr("0123456789abcdefABCDEF", *arg))
		return -EINVAL;
	errno = 0;
	v = strtoull(arg, &end, 16);
	if (errno || *end || (v & (LG_PAGE - 1)))
		return -EINVAL;
	*out = v;
	return 0;
}

RIP_COMMAND(cmd_ps_def);

static int cmd_ps(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "threads", no_argument, NULL, 't' },	   { "still", required_argument, NULL, 's' },
		{ "stacks", no_argument, NULL, 'S' },
		{ "all", no_argument, NULL, 'a' },	   { "verbose", no_argument, NULL, 'v' },
		{ "json", no_argument, NULL, 'j' },	   { "legacy", required_argument, NULL, 'L' },
		{ "exe", required_argument, NULL, 'E' },   { "sysroot", required_argument, NULL, 'R' },
		{ "debug-dir", required_argument, NULL, 'D' }, { "base", required_argument, NULL, 'B' },
		{ "pid", required_argument, NULL, 'P' },       { "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct ps_state st;
	struct wt_request wreq;
	char err[RR_ERR_MAX], ring[PATH_MAX];
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
		case 'B':
			if (ps_parse_base(optarg, &st.o.base))
				return tool_usage_error(&cmd_ps_def,
							"--base wants a page-aligned hex address like "
							"0x55d0c8a00000, not '%s'",
							optarg);
			st.o.have_base = true;
			break;
		case 'P':
			if (!rr_all_digits(optarg) || strlen(optarg) > 9 || atoi(optarg) <= 0)
				return tool_usage_error(&cmd_ps_def, "--pid wants a pid, not '%s'",
							optarg);
			st.o.pid = atoi(optarg);
			break;
		case 'h':
			tool_help(&cmd_ps_def);
			return EXIT_OK;
		default:
			return tool_bad_option(&cmd_ps_def, argv, longopts);
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
		if (st.o.have_base && st.o.pid)
			return tool_usage_error(&cmd_ps_def, "--base or --pid, not both");
		target = st.o.legacy;
		ret = rr_open_legacy(target, &st.f, err, sizeof(err));
	} else {
		if (st.o.exe || st.o.have_base || st.o.pid)
			return tool_usage_error(&cmd_ps_def, "%s goes with --legacy",
						st.o.exe ? "--exe" : st.o.have_base ? "--base" : "--pid");
		if (optind + 1 != argc)
			return tool_usage_error(&cmd_ps_def, optind == argc
								     ? "which process? give a pid or "
								       "a ring file"
								     : "one TARGET only");
		target = argv[optind];
		/* A chunk of a packed trace: the copy of the ring file beside it, as rip top. */
		if (trace_chunk_ring(target, ring, sizeof(ring))) {
			if (!ring[0]) {
				tool_err("%s: a chunk away from its trace: its threads are in the "
					 "trace's ring file (%s), which is not beside it; give the "
					 "trace's directory",
					 target, RR_TRACE_RING);
				return EXIT_FAIL;
			}
			target = ring;
		}
		ret = rr_open_target(target, &st.f, err, sizeof(err));
		if (ret == -ERANGE)
			return tool_usage_error(&cmd_ps_def, "%s", err);
		if (ret == -ENOENT && ps_recorder(argv[optind]))
			return EXIT_FAIL;
	}
	if (ret) {
		tool_err("%s", err);
		return EXIT_FAIL;
	}
	st.alive = rr_alive(&st.f) == 1;
	/* A fresh sweep of the watcher thread first (bounded wait), then the slots. */
	psw_request(&st.f, st.alive, &wreq);
	if (st.f.legacy_raw && ps_legacy_base(&st)) {
		status = EXIT_FAIL;
		goto out_sym;
	}
	/* Before the slots: the grouped view names each group as its first member comes. */
	if (ps_symbols(&st)) {
		status = EXIT_FAIL;
		goto out_sym;
	}
	if (st.o.still_ns && ps_still(&st)) {
		status = EXIT_FAIL;
		goto out_sym;
	}
	if (st.o.stacks)
		ret = ps_stacks(&st, stdout);
	else
		ret = st.o.threads ? ps_threads(&st, stdout) : ps_grouped(&st, stdout);
	if (ret)
		status = EXIT_FAIL;
	if (!ret && !st.o.json && !st.o.stacks) {
		struct psw_opts po = { .alive = st.alive, .threads = st.o.threads,
				       .verbose = st.o.verbose, .all = st.o.all,
				       .now_ticks = st.now_ticks, .sysroot = st.o.sysroot };

		ret = psw_print(&st.f, &st.thr, st.sym, &po, &wreq, stdout);
		if (ret) {
			tool_err("%s", strerror(-ret));
			status = EXIT_FAIL;
		}
	}
	fflush(stdout);
	if (!st.o.json)
		rip_sym_problems(st.sym, tool_sym_problem, &problems);
	if (st.corrupt) {
		tool_err("%s: %zu corrupt slot%s skipped (first: slot %d, %s)", st.f.path,
			 st.corrupt, st.corrupt == 1 ? "" : "s", st.first_bad, st.why);
		status = EXIT_FAIL;
	}
	if (st.changing && !st.o.json)
		fprintf(stderr, "note: %zu slots changed owner while being read and were left out\n",
			st.changing);

out_sym:
	if (st.sym)
		rip_sym_free(st.sym);
	for (size_t i = 0; i < st.cap; i++)
		free(st.sites[i]);
	free(st.sites);
	for (size_t r = 0; r < st.nrows; r++)
		free(st.rows[r].mem);
	free(st.rows);
	hmap_free(&st.rowkeys.h);
	free(st.marks);
	free(st.addrs);
	if (st.have_exe)
		lg_exe_close(&st.exe);
	rr_slots_free(&st.thr);
	rr_close(&st.f);
	return status;
}
