// SPDX-License-Identifier: Apache-2.0
/*
 * tools/cmd-top.c - `rip top`: a live view of where the threads of a
 * process run and wait, refreshing like top(1), from its ring file (CPU
 * samples of rip run --sample, wait records of the preload library) and
 * /proc.  analysis/top.c computes the groups; this file draws them, reads
 * keys in raw terminal mode (restored on exit and on signals), and writes
 * --once text and --json for scripts.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "analysis/cpu.h"
#include "analysis/top.h"
#include "read/ringfile.h"
#include "read/trace.h"
#include "tools/format.h"
#include "tools/tool.h"

static int cmd_top(int argc, char **argv);

static const struct rip_cmd cmd_top_def = {
	.name = "top",
	.run = cmd_top,
	.summary = "live view of where the threads of a process run and wait",
	.usage = "usage: rip top [options] TARGET\n"
		 "\n"
		 "Show where the threads of a process run and wait, refreshed like top(1).\n"
		 "TARGET is a pid, a ring file or a trace of rip run --sample (one view of\n"
		 "every sample it recorded).  Threads are grouped by the function their\n"
		 "CPU samples are in (run PROG with rip run --sample) and by the call they wait\n"
		 "in and its caller (the wait records of rip run's preload library), with the\n"
		 "CPU each group used (samples and /proc/PID/task/TID/stat).\n"
		 "\n"
		 "  -d, --delay=DURATION  time between refreshes (default 1s; e.g. 500ms, 2s)\n"
		 "  -s, --sort=KEY        cpu (default), count (threads) or wait (longest wait)\n"
		 "  -1, --once            print one view and exit: the CPU of one delay (a dead\n"
		 "                        process's file: the samples it left)\n"
		 "  -j, --json            one view as JSON (implies --once)\n"
		 "      --sysroot DIR     find the traced binaries under DIR\n"
		 "      --debug-dir DIR   look for separate debug files under DIR too\n"
		 "  -h, --help            this text\n"
		 "\n"
		 "Keys: c sort by CPU, n by thread count, w by wait time, space refresh now,\n"
		 "q quit.  Without a terminal, rip top prints one view as --once does.\n"
		 "\n"
		 "Exit status: 0 success, 1 failure (no such process, corrupt file), 2 usage.\n",
};

RIP_COMMAND(cmd_top_def);

struct top_cli {
	int64_t delay_ns;
	enum top_sort sort;
	bool once, json;
	struct top_opts o;
};

/* ---- text ------------------------------------------------------------------------- */

static const char *top_sort_name(enum top_sort s)
{
	return s == TOP_SORT_COUNT ? "count" : s == TOP_SORT_WAIT ? "wait" : "cpu";
}

/*
 * The WHERE column of a group (sampled: is the process sampled at all?
 * alive: does it live, or is it a file of a process that is gone, or a trace?).
 */
static void top_where(const struct top_group *g, bool sampled, bool alive, char *buf, size_t len)
{
	char at[128] = "";

	if (g->file)
		snprintf(at, sizeof(at), " (%s:%d)", tool_base(g->file), g->line);
	switch (g->kind) {
	case TOP_RUN:
		snprintf(buf, len, "run   %s%s",
			 g->func          ? g->func
			 : g->sig_blocked ? "(never sampled: they block the sampling signal)"
			 : sampled        ? "(no sample yet)"
					  : "(where: not sampled, see rip run --sample)",
			 at);
		break;
	case TOP_WAIT:
		snprintf(buf, len, "wait  %s in %s%s", top_wait_name(g->wait_kind),
			 g->func ? g->func : "?", at);
		break;
	case TOP_SLEEP:
		/* gone, a thread with neither was not seen blocked: it left no trace of where */
		snprintf(buf, len, "%s",
			 alive ? "sleep (blocked outside the wrapped calls: no wait record)" :
				 "gone  (no sample and no wait record: where it was is not known)");
		break;
	case TOP_OWN:
		snprintf(buf, len, "(librip's watcher thread: it sees the threads no wrapper covers)");
		break;
	default:
		snprintf(buf, len, "(threads with no slot in the file: started before tracing?)");
		break;
	}
}

/*
 * The sampling status line.  What was lost: of a trace, what its recorder
 * counted (as rip run's summary says it), always; live, the timer periods
 * merged into one signal, when there are any.
 */
/*
 * The samples taken: of a trace, those it holds (with the lost, every period
 * sampled: the program stored some its recorder never read); live, those the
 * program stored.
 */
static unsigned long long top_taken(const struct top_view *v)
{
	return v->trace ? (unsigned long long)v->samples : (unsigned long long)v->hdr.samples;
}

/* The threads that took a sample. */
static size_t top_sampled(const struct top_view *v)
{
	size_t n = 0;

	for (size_t i = 0; i < v->nthreads; i++)
		n += v->threads[i].samples > 0;
	return n;
}

static void top_sampling(const struct top_view *v, char *buf, size_t len)
{
	const struct rip_file_hdr *h = &v->hdr;
	size_t n;

	if (!h->sample_hz) {
		snprintf(buf, len, "sampling: off (run the program with rip run --sample)");
		return;
	}
	/* a trace's timers armed at its end say nothing of the threads it sampled */
	if (v->trace)
		n = (size_t)snprintf(buf, len, "sampling: %u Hz, %llu samples of %zu threads",
				     h->sample_hz, top_taken(v), top_sampled(v));
	else
		n = (size_t)snprintf(buf, len, "sampling: %u Hz, %u timers, %llu samples",
				     h->sample_hz, h->sample_timers, top_taken(v));
	if (n < len && v->trace)
		n += (size_t)snprintf(buf + n, len - n, ", %llu lost",
				      (unsigned long long)v->samples_lost);
	else if (n < len && v->samples_lost)
		n += (size_t)snprintf(buf + n, len - n,
				      ", %llu lost (timer periods merged into one signal)",
				      (unsigned long long)v->samples_lost);
	if (n < len && h->sample_fail)
		n += (size_t)snprintf(buf + n, len - n, ", %llu threads unsampled (timer_create: %s)",
				      (unsigned long long)h->sample_fail, strerror(h->sample_errno));
	if (n < len && (h->sample_flags & RIP_SAMPLE_F_NO_SIGNAL))
		n += (size_t)snprintf(buf + n, len - n, ", no free realtime signal: off");
	if (n < len && (h->sample_flags & RIP_SAMPLE_F_NO_FP))
		n += (size_t)snprintf(buf + n, len - n, ", not on this architecture");
	if (n < len && (h->sample_flags & RIP_SAMPLE_F_SIG_SHARED))
		n += (size_t)snprintf(buf + n, len - n, ", signal %u shared with the program",
				      h->sample_sig);
	if (n < len && h->sample_noslot)
		snprintf(buf + n, len - n, ", %llu on threads with no slot",
			 (unsigned long long)h->sample_noslot);
}

static void top_dur(int64_t ns, char *buf, size_t len)
{
	if (ns < 0)
		snprintf(buf, len, "-");
	else
		rr_fmt_duration(ns, buf, len);
}

/*
 * The view as lines into out; at most rows lines of at most cols columns
 * (0: no limit).  eol ends each line, sep goes between two ("\n" and "",
 * or on a screen "\033[K" and "\r\n": no newline after the last line, which
 * would scroll the first one away).
 */
static void top_text(FILE *out, const struct top_view *v, const struct top_cli *c, int rows,
		     int cols, const char *eol, const char *sep, bool keys)
{
	char line[1024], where[512], buf[64], s[512];
	int used = 0;
	int width = cols > 0 && cols < (int)sizeof(line) ? cols : (int)sizeof(line) - 1;

#define TOP_LINE(...)                                                                              \
	do {                                                                                       \
		if (rows <= 0 || used < rows) {                                                    \
			snprintf(line, sizeof(line), __VA_ARGS__);                                 \
			line[width] = 0;                                                           \
			fprintf(out, "%s%s%s", used ? sep : "", line, eol);                        \
			used++;                                                                    \
		}                                                                                  \
	} while (0)

	/*
	 * The CPU it used over the interval, live; a process that is gone, or a
	 * trace, has only samples, whose shares (SMPL%) always sum to 100%: no
	 * CPU is known (it said "CPU 100.0% over the trace" of an idle program).
	 */
	buf[0] = 0;
	if (v->alive && v->first)
		snprintf(buf, sizeof(buf), " - CPU %.1f%% over first look", v->cpu * 100);
	else if (v->alive) {
		snprintf(buf, sizeof(buf), " - CPU %.1f%% over ", v->cpu * 100);
		rr_fmt_duration(v->interval_ns, buf + strlen(buf), sizeof(buf) - strlen(buf));
	}
	/* how a process that is gone ended, in rip ps's words (its header's flags) */
	TOP_LINE("rip top - pid %d (%.16s)%s - %zu thread%s%s - sort: %s", (int)v->pid, v->hdr.comm,
		 v->trace			  ? " (a trace: the samples it recorded)" :
		 v->alive			  ? "" :
		 v->hdr.proc_flags & RIP_P_EXITED ? " (exited: its samples)" :
		 v->hdr.proc_flags & RIP_P_EXECED ? " (replaced by execve: its samples)" :
		 v->hdr.proc_flags & RIP_P_CLOSED ? " (gone, ring closed before: its samples)" :
						    " (dead, killed or crashed: its samples)",
		 v->nthreads, v->nthreads == 1 ? "" : "s", buf, top_sort_name(c->sort));
	top_sampling(v, s, sizeof(s));
	TOP_LINE("%s", s);
	if (v->sig_blocked)
		TOP_LINE("%zu thread%s the sampling signal: never sampled", v->sig_blocked,
			 v->sig_blocked == 1 ? " blocks" : "s block");
	if (v->corrupt || v->changing)
		TOP_LINE("%zu slots corrupt, %zu changing while read: not shown", v->corrupt,
			 v->changing);
	TOP_LINE("%s", "");
	TOP_LINE("%6s %7s %7s %8s  %s", v->alive ? "CPU%" : "SMPL%", "THREADS", "SAMPLES",
		 "WAITING", "WHERE");
	for (size_t i = 0; i < v->ngroups; i++) {
		const struct top_group *g = &v->groups[i];

		if (keys && rows > 0 && used >= rows - 1)
			break;
		top_where(g, v->hdr.sample_hz && (v->hdr.sample_flags & RIP_SAMPLE_F_ON), v->alive,
			  where, sizeof(where));
		top_dur(g->wait_ns, buf, sizeof(buf));
		TOP_LINE("%6.1f %7u %7.0f %8s  %s", g->cpu * 100, g->threads, g->samples, buf,
			 where);
	}
	if (keys) {
		while (rows > 0 && used < rows - 1)
			TOP_LINE("%s", "");
		TOP_LINE("keys: c cpu  n count  w wait  space refresh  q quit");
	}
#undef TOP_LINE
}

/* ---- JSON ------------------------------------------------------------------------- */

static void top_json(FILE *out, const struct top_view *v, const struct top_cli *c)
{
	const struct rip_file_hdr *h = &v->hdr;

	fprintf(out, "{\"pid\":%d,\"comm\":", (int)v->pid);
	json_str(out, h->comm);
	fprintf(out, ",\"alive\":%s,\"trace\":%s,\"interval_ns\":%lld,\"sort\":\"%s\","
		     "\"cpu\":%.4f,",
		v->alive ? "true" : "false", v->trace ? "true" : "false", (long long)v->interval_ns,
		top_sort_name(c->sort), v->cpu);
	fprintf(out,
		"\"sampling\":{\"hz\":%u,\"signal\":%u,\"timers\":%u,\"samples\":%llu,"
		"\"timer_failures\":%llu,\"errno\":%d,\"no_slot\":%llu,\"foreign\":%llu,"
		"\"overrun\":%llu,\"lost\":%llu,"
		"\"no_signal\":%s,\"signal_shared\":%s,\"signal_blocked\":%zu},",
		h->sample_hz, h->sample_sig, h->sample_timers, top_taken(v),
		(unsigned long long)h->sample_fail, h->sample_errno,
		(unsigned long long)h->sample_noslot, (unsigned long long)h->sample_foreign,
		(unsigned long long)h->sample_overrun, (unsigned long long)v->samples_lost,
		(h->sample_flags & RIP_SAMPLE_F_NO_SIGNAL) ? "true" : "false",
		(h->sample_flags & RIP_SAMPLE_F_SIG_SHARED) ? "true" : "false", v->sig_blocked);
	fprintf(out, "\"samples\":%.0f,\"corrupt\":%zu,\"changing\":%zu,\"groups\":[",
		v->samples, v->corrupt, v->changing);
	for (size_t i = 0; i < v->ngroups; i++) {
		const struct top_group *g = &v->groups[i];
		static const char *const kinds[] = { "?", "run", "wait", "sleep", "noslot", "librip" };

		fprintf(out, "%s{\"kind\":\"%s\",", i ? "," : "", kinds[g->kind <= TOP_OWN ? g->kind : 0]);
		if (g->kind == TOP_WAIT)
			fprintf(out, "\"wait\":\"%s\",", top_wait_name(g->wait_kind));
		fprintf(out, "\"function\":");
		json_str(out, g->func);
		fprintf(out, ",\"file\":");
		json_str(out, g->file);
		fprintf(out,
			",\"line\":%d,\"addr\":\"0x%llx\",\"threads\":%u,\"cpu\":%.4f,"
			"\"samples\":%.0f,\"wait_ns\":%lld,\"tids\":[",
			g->line, (unsigned long long)g->addr, g->threads, g->cpu, g->samples,
			(long long)g->wait_ns);
		for (size_t k = 0, n = 0; k < v->nthreads; k++)
			if (v->threads[k].group == i)
				fprintf(out, "%s%d", n++ ? "," : "", (int)v->threads[k].tid);
		fprintf(out, "]}");
	}
	fprintf(out, "],\"threads\":[");
	for (size_t i = 0; i < v->nthreads; i++) {
		const struct top_thread *t = &v->threads[i];

		fprintf(out, "%s{\"tid\":%d,\"name\":", i ? "," : "", (int)t->tid);
		json_str(out, t->name);
		fprintf(out,
			",\"slot\":%u,\"state\":\"%c\",\"cpu\":%.4f,\"cpu_ns\":%llu,"
			"\"samples\":%u,\"ip\":\"0x%llx\",\"wait\":",
			t->slot, t->state >= ' ' && t->state < 127 && t->state != '"' &&
					 t->state != '\\' ? t->state : '?',
			t->cpu, (unsigned long long)t->cpu_ns, t->samples, (unsigned long long)t->ip);
		if (t->wait_kind)
			fprintf(out, "\"%s\",\"wait_ns\":%lld", top_wait_name(t->wait_kind),
				(long long)t->wait_ns);
		else
			fprintf(out, "null");
		fprintf(out, ",\"signal_blocked\":%s,\"group\":%zu}",
			t->sig_blocked ? "true" : "false", t->group);
	}
	fprintf(out, "]}\n");
}

/* ---- the terminal ----------------------------------------------------------------- */

static struct termios top_saved;
static volatile sig_atomic_t top_raw_on, top_stop, top_winch, top_tstp;

static void top_tty_restore(void)
{
	static const char leave[] = "\033[?25h\033[?1049l";

	if (!top_raw_on)
		return;
	top_raw_on = 0;
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &top_saved);
	if (write(STDOUT_FILENO, leave, sizeof(leave) - 1) < 0)
		return;
}

static int top_tty_raw(void)
{
	static const char enter[] = "\033[?1049h\033[?25l\033[H\033[2J";
	struct termios t;

	if (tcgetattr(STDIN_FILENO, &top_saved))
		return -errno;
	t = top_saved;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t))
		return -errno;
	top_raw_on = 1;
	if (write(STDOUT_FILENO, enter, sizeof(enter) - 1) < 0)
		return -errno;
	return 0;
}

static void top_on_signal(int sig)
{
	if (sig == SIGWINCH)
		top_winch = 1;
	else if (sig == SIGTSTP)
		top_tstp = 1;
	else
		top_stop = sig;
}

static void top_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, SIGTSTP };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = top_on_signal; /* no SA_RESTART: poll returns at once */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* Ctrl-Z: the terminal as it was, stop, and raw again once continued. */
static void top_suspend(void)
{
	struct sigaction sa, old;

	top_tty_restore();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGTSTP, &sa, &old);
	raise(SIGTSTP);
	sigaction(SIGTSTP, &old, NULL);
	top_tty_raw();
}

static void top_draw(const struct top_view *v, const struct top_cli *c)
{
	struct winsize ws = { 0 };
	int rows = 24, cols = 80;

	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		rows = ws.ws_row;
		cols = ws.ws_col;
	}
	fputs("\033[H", stdout);
	top_text(stdout, v, c, rows, cols, "\033[K", "\r\n", true);
	fputs("\033[J", stdout);
	fflush(stdout);
}

/* Wait up to ns for a key; the key, 0 on timeout, -1 when a signal asks to stop. */
static int top_key(int64_t ns)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	char ch;
	int r;

	r = poll(&p, 1, (int)(ns / 1000000));
	if (top_stop)
		return -1;
	if (r <= 0)
		return 0;
	if (read(STDIN_FILENO, &ch, 1) != 1)
		return (p.revents & (POLLHUP | POLLERR)) ? 'q' : 0;
	return (unsigned char)ch;
}

static int top_live(struct top *t, struct top_cli *c)
{
	char err[RR_ERR_MAX];
	int ret = EXIT_OK, key = 0;

	top_signals();
	if (top_tty_raw()) {
		top_tty_restore();
		tool_err("cannot put the terminal in raw mode: %s", strerror(errno));
		return EXIT_FAIL;
	}
	atexit(top_tty_restore);
	for (;;) {
		int64_t left = c->delay_ns, step;

		if (top_refresh(t, err, sizeof(err))) {
			top_tty_restore();
			tool_err("%s", err);
			return EXIT_FAIL;
		}
		top_sort(t, c->sort);
		top_draw(top_view(t), c);
		/* Until the next refresh: keys re-sort and redraw at once. */
		while (left > 0) {
			struct timespec a, b;

			clock_gettime(CLOCK_MONOTONIC, &a);
			key = top_key(left < 100000000 ? left : 100000000);
			clock_gettime(CLOCK_MONOTONIC, &b);
			step = (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
			left -= step > 0 ? step : 1;
			if (key < 0 || key == 'q' || key == 'Q' || key == 3)
				goto out;
			if (top_tstp) {
				top_tstp = 0;
				top_suspend();
				top_draw(top_view(t), c);
			}
			if (key == 'c' || key == 'n' || key == 'w') {
				c->sort = key == 'c' ? TOP_SORT_CPU
					  : key == 'n' ? TOP_SORT_COUNT : TOP_SORT_WAIT;
				top_sort(t, c->sort);
				top_draw(top_view(t), c);
			} else if (key == ' ') {
				break;
			}
			if (top_winch) {
				top_winch = 0;
				top_draw(top_view(t), c);
			}
		}
	}
out:
	top_tty_restore();
	if (top_stop && top_stop != SIGINT)
		ret = EXIT_FAIL;
	return ret;
}

/* ---- main ------------------------------------------------------------------------- */

static int top_parse(int argc, char **argv, struct top_cli *c, const char **target)
{
	static const struct option longopts[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "sort", required_argument, NULL, 's' },
		{ "once", no_argument, NULL, '1' },
		{ "json", no_argument, NULL, 'j' },
		{ "sysroot", required_argument, NULL, 'R' },
		{ "debug-dir", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int ch;

	memset(c, 0, sizeof(*c));
	c->delay_ns = 1000000000;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+d:s:1jh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			if (rr_parse_duration(optarg, &c->delay_ns) || c->delay_ns < 10000000 ||
			    c->delay_ns > 3600 * 1000000000LL)
				return tool_usage_error(&cmd_top_def,
							"--delay wants a duration from 10ms to 1h, "
							"like 500ms or 2s, not '%s'",
							optarg);
			break;
		case 's':
			if (!strcmp(optarg, "cpu") || !strcmp(optarg, "c"))
				c->sort = TOP_SORT_CPU;
			else if (!strcmp(optarg, "count") || !strcmp(optarg, "n"))
				c->sort = TOP_SORT_COUNT;
			else if (!strcmp(optarg, "wait") || !strcmp(optarg, "w"))
				c->sort = TOP_SORT_WAIT;
			else
				return tool_usage_error(&cmd_top_def,
							"--sort is cpu, count or wait, not '%s'",
							optarg);
			break;
		case '1':
			c->once = true;
			break;
		case 'j':
			c->json = c->once = true;
			break;
		case 'R':
			c->o.sysroot = optarg;
			break;
		case 'D':
			c->o.debug_dir = optarg;
			break;
		case 'h':
			tool_help(&cmd_top_def);
			return -1;
		default:
			return tool_bad_option(&cmd_top_def, argv, longopts);
		}
	}
	if (optind != argc - 1)
		return tool_usage_error(&cmd_top_def, optind == argc
							      ? "which process? rip top PID (or FILE)"
							      : "one target only");
	*target = argv[optind];
	return 0;
}

static int cmd_top(int argc, char **argv)
{
	char err[RR_ERR_MAX], ring[PATH_MAX];
	struct rr_file f;
	struct top_cli c;
	struct top *t = NULL;
	struct cpu_prof *cpu = NULL;
	const char *target = NULL, *why;
	unsigned probs = 0;
	uint32_t blocks;
	int ret;

	ret = top_parse(argc, argv, &c, &target);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (!c.once && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
		c.once = true;
	/*
	 * A trace: its samples, with the threads and waits of the ring file it
	 * keeps (a chunk read alone: the one beside it in its trace directory).
	 */
	if (trace_is_dir(target)) {
		c.once = true;
		if (cpu_read(target, &cpu, err, sizeof(err))) {
			tool_err("%s", err);
			return EXIT_FAIL;
		}
		why = cpu_damage(cpu, &blocks);
		tool_damage_warn(target, blocks, why);
		if (trace_chunk_ring(target, ring, sizeof(ring))) {
			if (!ring[0]) {
				tool_err(
					"%s: a chunk away from its trace: its threads and waits are in "
					"the trace's ring file (%s), which is not beside it; give the "
					"trace's directory",
					target, RR_TRACE_RING);
				cpu_free(cpu);
				return EXIT_FAIL;
			}
			target = ring;
		}
	}
	ret = tool_open_target(&cmd_top_def, target, &f);
	if (ret) {
		cpu_free(cpu);
		return ret;
	}
	if (top_new(&f, &c.o, &t, err, sizeof(err)) ||
	    (cpu && top_use_samples(t, cpu, err, sizeof(err)))) {
		tool_err("%s", err);
		ret = EXIT_FAIL;
		goto out_free;
	}
	if (!c.once) {
		ret = top_live(t, &c);
		goto out_free;
	}
	if (top_refresh(t, err, sizeof(err)))
		goto fail;
	if (top_view(t)->alive) {
		/* The CPU of one delay: a second look. */
		struct timespec ts = { c.delay_ns / 1000000000, c.delay_ns % 1000000000 };

		nanosleep(&ts, NULL);
		if (top_refresh(t, err, sizeof(err)))
			goto fail;
	}
	top_sort(t, c.sort);
	if (c.json)
		top_json(stdout, top_view(t), &c);
	else
		top_text(stdout, top_view(t), &c, 0, 0, "\n", "", false);
	if (!c.json)
		top_sym_problems(t, tool_sym_problem, &probs);
	ret = tool_flush(stdout) ? EXIT_FAIL : EXIT_OK;
	goto out_free;
fail:
	tool_err("%s", err);
	ret = EXIT_FAIL;
out_free:
	top_free(t);
	cpu_free(cpu);
	rr_close(&f);
	return ret;
}
