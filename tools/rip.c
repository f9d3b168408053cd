/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/rip.c - the rip command: `rip <command> [options] [--] [args]`.
 * Dispatches to one cmd-<name>.c per subcommand; `rip help COMMAND` and
 * `rip COMMAND --help` print the command's usage.  Exit status: 0 success,
 * 1 failure, 2 usage error.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/evsource.h"
#include "read/ringfile.h"
#include "read/trace.h"
#include "record/tracew.h"
#include "tools/tool.h"

const char *rip_prog = "rip";

/* The commands, as RIP_COMMAND put them: see tool.h. */
extern const struct rip_cmd *const __start_rip_cmds[], *const __stop_rip_cmds[];
#define commands __start_rip_cmds
#define NCOMMANDS ((size_t)(__stop_rip_cmds - __start_rip_cmds))

void tool_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", rip_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int tool_usage_error(const struct rip_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s %s: ", rip_prog, cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s %s --help'.\n", rip_prog, cmd->name);
	return EXIT_USAGE;
}

int tool_bad_option(const struct rip_cmd *cmd, char *const argv[], const struct option *longopts)
{
	const char *arg = argv[optind - 1], *eq;
	const struct option *o, *hit = NULL;
	size_t len;
	int n = 0;

	if (strncmp(arg, "--", 2) || !arg[2]) {
		/* -x: optopt is the letter, known or not; a known one here lacks its value */
		for (o = longopts; o && o->name; o++)
			if (optopt && o->val == optopt && o->has_arg == required_argument)
				return tool_usage_error(cmd, "option '-%c' (--%s) needs a value",
							optopt, o->name);
		if (optopt > ' ' && optopt < 127)
			return tool_usage_error(cmd, "unknown option '-%c'", optopt);
		return tool_usage_error(cmd, "unknown option '%s'", arg);
	}
	eq = strchr(arg, '=');
	len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
	for (o = longopts; o && o->name; o++) {
		if (strncmp(o->name, arg + 2, len))
			continue;
		if (!o->name[len]) { /* exact */
			hit = o;
			n = 1;
			break;
		}
		hit = n++ ? hit : o;
	}
	if (n > 1) {
		char names[512];
		size_t at = 0;

		names[0] = 0;
		for (o = longopts; o->name && at < sizeof(names); o++)
			if (!strncmp(o->name, arg + 2, len))
				at += (size_t)snprintf(names + at, sizeof(names) - at, "%s--%s",
						       at ? ", " : "", o->name);
		return tool_usage_error(cmd, "option '%.*s' is ambiguous: %s", (int)(len + 2), arg,
					names);
	}
	if (!hit)
		return tool_usage_error(cmd, "unknown option '%.*s'", (int)(len + 2), arg);
	if (eq && hit->has_arg == no_argument)
		return tool_usage_error(cmd, "option '--%s' takes no value, not '%s'", hit->name,
					eq + 1);
	if (!eq && hit->has_arg == required_argument)
		return tool_usage_error(cmd, "option '--%s' needs a value", hit->name);
	return tool_usage_error(cmd, "unknown option '%s'", arg);
}

/*
 * Is path the copy of its ring file rip run keeps in a trace (DIR/.rip-ring)?
 * Its rings were drained into the trace: DIR, in dir, holds the events.
 */
static bool tool_trace_ring_copy(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	int n;

	if (strcmp(base, RR_TRACE_RING))
		return false;
	n = slash ? snprintf(dir, len, "%.*s", (int)(slash - path), path) : snprintf(dir, len, ".");
	if (n <= 0 || (size_t)n >= len)
		return false;
	if (!dir[0])
		snprintf(dir, len, "/");
	return trace_is_dir(dir);
}

/*
 * The sources tool_evs_open opened and tool_evs_close has not closed yet,
 * whose damage tool_exit_unfreed still has to tell (a diff has two).
 */
#define TOOL_EVS_OPENED 4
static struct evs *tool_evs_opened[TOOL_EVS_OPENED];

int tool_evs_open(const char *target, struct evs **out, char *err, size_t errlen)
{
	int ret = evs_open(target, out, err, errlen);
	char dir[PATH_MAX];

	for (size_t i = 0; !ret && i < TOOL_EVS_OPENED; i++)
		if (!tool_evs_opened[i]) {
			tool_evs_opened[i] = *out;
			break;
		}

	if (!ret && tool_trace_ring_copy(target, dir, sizeof(dir)))
		tool_err(
			"warning: %s is the copy of its ring file that rip run keeps in the trace, "
			"for rip ps and rip top: its events were recorded into the trace; read %s "
			"for them",
			target, dir);

	if (!ret && evs_recording_on(*out))
		tool_err("warning: %s was read while its recording went on (or its recorder was "
			 "killed, or stopped on an error such as a full disk): it holds what was "
			 "written so far, up to its last whole record",
			 evs_source(*out));
	else if (!ret && evs_one_chunk_of_many(*out))
		tool_err("warning: %s is one chunk of a trace, read alone: what it made may be "
			 "released in a later chunk (shown here as never released), and what it "
			 "releases may have been made in an earlier one; read the trace's directory "
			 "for the whole",
			 evs_source(*out));
	return ret;
}

void tool_damage_warn(const char *src, uint32_t blocks, const char *why)
{
	if (why)
		tool_err("warning: %s: %u damaged block%s skipped, %s packets lost (the first: %s)",
			 src, blocks, blocks == 1 ? "" : "s", blocks == 1 ? "its" : "their", why);
}

static void tool_evs_damage(struct evs *s)
{
	uint32_t blocks = 0;
	const char *why = s ? evs_damage(s, &blocks) : NULL;

	tool_damage_warn(why ? evs_source(s) : NULL, blocks, why);
}

void tool_evs_close(struct evs *s)
{
	for (size_t i = 0; s && i < TOOL_EVS_OPENED; i++)
		if (tool_evs_opened[i] == s)
			tool_evs_opened[i] = NULL;
	tool_evs_damage(s);
	evs_close(s);
}

int tool_open_target(const struct rip_cmd *cmd, const char *target, struct rr_file *f)
{
	char err[RR_ERR_MAX];
	int ret = rr_open_target(target, f, err, sizeof(err));

	if (ret == -ERANGE)
		return tool_usage_error(cmd, "%s", err);
	if (ret) {
		tool_err("%s", err);
		return EXIT_FAIL;
	}
	return 0;
}

FILE *tool_create(const char *path, bool replace)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	struct stat st;
	FILE *f;

	/* A device (/dev/null) is written to, not overwritten: no --force for it. */
	if (fd < 0 && errno == EEXIST && !replace && !lstat(path, &st) && S_ISCHR(st.st_mode))
		replace = true;
	if (fd < 0 && errno == EEXIST && replace) {
		/*
		 * Replaced only if it is our own regular file with no other name
		 * (or a device: /dev/null): in /tmp another user may have put
		 * there a file of theirs to read what we write, a FIFO to stop
		 * us, or a hard link to a file of ours to have it truncated.
		 */
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			return NULL;
		if (fstat(fd, &st) ||
		    !(S_ISCHR(st.st_mode) ||
		      (S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_nlink == 1))) {
			close(fd);
			errno = EPERM;
			return NULL;
		}
		if ((S_ISREG(st.st_mode) && ftruncate(fd, 0)) || fcntl(fd, F_SETFL, 0)) {
			int e = errno;

			close(fd);
			errno = e;
			return NULL;
		}
	}
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return f;
}

const char *tool_create_why(int err)
{
	if (err == ELOOP)
		return "a symbolic link: refused (rip writes through none)";
	if (err == EPERM)
		return "not a regular file of yours with one name: refused";
	return strerror(err);
}

void tool_unlink_same(const char *path, const struct stat *st)
{
	struct stat now;

	if (S_ISREG(st->st_mode) && !lstat(path, &now) && S_ISREG(now.st_mode) &&
	    now.st_dev == st->st_dev && now.st_ino == st->st_ino)
		unlink(path);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TOOL_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TOOL_SANITIZED 1
#endif

#ifndef TOOL_SANITIZED
static uintptr_t heap_lo, heap_hi; /* the part of the heap in huge pages */

/*
 * The reader found fresh huge pages slow (trace_r_on_slow_huge): what is
 * left of the heap is touched in small pages.  Pages in use stay as they are.
 */
static void tool_heap_small(void)
{
	madvise((void *)heap_lo, heap_hi - heap_lo, MADV_NOHUGEPAGE);
}
#endif

/* The heap in huge pages (see tool_heap_big); nothing under a sanitizer, whose allocator is its own. */
static void tool_heap_huge(void)
{
#ifndef TOOL_SANITIZED
	const uintptr_t huge = 2u << 20;
	uintptr_t lo, hi;
	void *m;

	mallopt(M_ARENA_MAX, 1);		/* the symbols' thread too: no heap of its own */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);	/* tables and read buffers: in the heap, reused */
	mallopt(M_TRIM_THRESHOLD, 256 << 20);	/* and kept */
	mallopt(M_TOP_PAD, 128 << 20);	/* the heap grows 128 MiB at a time */
	m = malloc(1u << 20); /* more than the heap has left: it grows, by M_TOP_PAD more */
	if (!m)
		return;
	lo = ((uintptr_t)m + huge - 1) & ~(huge - 1);
	hi = (uintptr_t)sbrk(0) & ~(huge - 1);
	free(m);
	/* m may come from mmap when the heap cannot grow: then hi < lo, or far */
	if (hi > lo && hi - lo <= (256u << 20) && !madvise((void *)lo, hi - lo, MADV_HUGEPAGE)) {
		heap_lo = lo;
		heap_hi = hi;
		trace_r_on_slow_huge(tool_heap_small);
	}
#endif
}

/*
 * The soft limit of open files raised to the hard one: a trace of 1,000
 * threads has 1,000 stream files, and with Debian's soft limit of 1,024
 * the reader opened each three times over (3,350 opens instead of 1,020).
 * The only program a reader starts, graphviz's dot for rip calltree,
 * inherits the higher limit: harmless.
 */
static void tool_files_many(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (1u << 20) ? (1u << 20)
										 : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl); /* as it was if it fails: streams are then opened in turn */
}

void tool_recorder_first(struct trace_w_opts *store)
{
	int cur, want;

	errno = 0;
	cur = getpriority(PRIO_PROCESS, 0); /* this thread's, on Linux */
	/* A policy the user chose (batch, idle, realtime) stays theirs. */
	if ((cur == -1 && errno) || sched_getscheduler(0) != SCHED_OTHER)
		return;
	store->nice = cur;
	store->nice_set = true;
	want = cur - TOOL_RECORDER_LEAD < -20 ? -20 : cur - TOOL_RECORDER_LEAD;
	/* RLIMIT_NICE may allow part of the way: the most it allows. */
	while (want < cur && setpriority(PRIO_PROCESS, 0, want))
		want++;
}

void tool_heap_big(void)
{
	tool_heap_huge();
	tool_files_many();
}

void tool_exit_unfreed(int status)
{
	/* what tool_evs_close would have said */
	for (size_t i = 0; i < TOOL_EVS_OPENED; i++)
		tool_evs_damage(tool_evs_opened[i]);
#ifndef TOOL_SANITIZED
	exit(status); /* stdio flushed by exit */
#else
	(void)status;
#endif
}

int tool_flush(FILE *out)
{
	if (!fflush(out) && !ferror(out))
		return 0;
	tool_err("write error: %s", strerror(errno));
	return -1;
}

bool tool_cat_off(const struct rip_file_hdr *h, unsigned cat)
{
	return h && cat < RIP_CATEGORIES && !((h->enable[cat / 64] >> (cat % 64)) & 1);
}

const char *tool_base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

int tool_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case 't':
	case 'T':
		shift = 40;
		break;
	case 0:
		break;
	default:
		return -1;
	}
	/* After the unit, B or iB at most: 4MB, 4MiB */
	if (*end && end[1] && !((end[1] == 'b' || end[1] == 'B') && !end[2]) &&
	    !(end[1] == 'i' && (end[2] == 'b' || end[2] == 'B') && !end[3]))
		return -1;
	if (v > (UINT64_MAX >> shift))
		return -1; /* too big: no wrap into a small size */
	*out = (uint64_t)v << shift;
	return 0;
}

void tool_sym_problem(const char *path, const char *why, unsigned hits, void *arg)
{
	unsigned *count = arg;

	if (!(*count)++)
		fprintf(stderr, "note: modules without full symbols:\n");
	fputs("  ", stderr);
	text_str(stderr, path);
	fprintf(stderr, ": %s (%u address%s)\n", why, hits, hits == 1 ? "" : "es");
}

void tool_sym_problem_json(const char *path, const char *why, unsigned hits, void *arg)
{
	void **a = arg;
	FILE *out = a[0];
	unsigned *count = a[1];

	fputs((*count)++ ? "," : "", out);
	fputs("{\"module\":", out);
	json_str(out, path);
	fputs(",\"why\":", out);
	json_str(out, why);
	fprintf(out, ",\"addresses\":%u}", hits);
}

void tool_help(const struct rip_cmd *cmd)
{
	fputs(cmd->usage, stdout);
}

static int cmd_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct rip_cmd *const *)a)->name,
		      (*(const struct rip_cmd *const *)b)->name);
}

static void usage(FILE *out)
{
	const struct rip_cmd *sorted[64];
	size_t n = NCOMMANDS < 64 ? NCOMMANDS : 64;

	memcpy(sorted, commands, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmd_cmp);
	fprintf(out, "usage: %s <command> [options] [--] [args]\n\ncommands:\n", rip_prog);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "  %-8s %s\n", sorted[i]->name, sorted[i]->summary);
	fprintf(out, "  %-8s %s\n", "help", "show the usage of a command");
	fprintf(out, "  %-8s %s\n", "version", "print rip's version (also --version)");
	fprintf(out, "\n'%s help COMMAND' or '%s COMMAND --help' for details; man rip.\n",
		rip_prog, rip_prog);
}

/* `rip help help`: the usage of help itself, as every command has one. */
static const char help_usage[] =
	"usage: %s help [COMMAND]\n"
	"\n"
	"Without COMMAND, list the commands; with one, print its usage, the same\n"
	"text as '%s COMMAND --help'.  Its manual page is rip-COMMAND(1).\n"
	"\n"
	"Exit status: 0 success, 2 usage (no such command).\n"
	"See also: '%s --help' (the commands), '%s --version'.\n";

static const struct rip_cmd *find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct rip_cmd *cmd;

	/* Symbols come from this host's files only: never ask debuginfod servers. */
	unsetenv("DEBUGINFOD_URLS");
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		if (argc > 2) {
			tool_err("%s takes no argument (got '%s'); see '%s --help'", argv[1],
				 argv[2], rip_prog);
			return EXIT_USAGE;
		}
		printf("rip %s\n", RIP_VERSION_STRING);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			usage(stdout);
			return EXIT_OK;
		}
		if (!strcmp(argv[2], "help") || !strcmp(argv[2], "--help") ||
		    !strcmp(argv[2], "-h")) {
			printf(help_usage, rip_prog, rip_prog, rip_prog, rip_prog);
			return EXIT_OK;
		}
		if (argc > 3) {
			tool_err("help: one command at a time, not '%s' too\n"
				 "Try '%s help help'.",
				 argv[3], rip_prog);
			return EXIT_USAGE;
		}
		cmd = find(argv[2]);
		if (!cmd) {
			tool_err("help: no command '%s'; '%s help' lists them", argv[2], rip_prog);
			return EXIT_USAGE;
		}
		tool_help(cmd);
		return EXIT_OK;
	}
	cmd = find(argv[1]);
	if (!cmd) {
		tool_err("no command '%s'; see '%s --help'", argv[1], rip_prog);
		return EXIT_USAGE;
	}
	return cmd->run(argc - 1, argv + 1);
}
