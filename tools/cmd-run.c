/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/cmd-run.c - `rip run`: run a program and record its events into a
 * CTF trace directory while it runs.
 *
 * The program gets RIP_RING=<a private directory of ours>/ (librip's
 * constructor creates its ring file there at start) and RIP_MODE=block,
 * so that writers wait for us rather than lose events.  We watch the
 * directory with inotify, attach as the consumer the moment the ring file
 * is complete, stream its closed packets to the trace while the program
 * runs, and when it exits take the rest, open packets included.
 *
 * Until we attach, a writer sees no consumer and overwrites: a ring holds
 * ev_ring_size bytes per thread, so what a program emits in its first
 * microseconds is safe, and the summary says so if anything was lost.
 *
 * The program keeps our stdin, stdout and stderr, and its exit status is
 * ours (128 + N for a death by signal N).  A SIGINT, SIGTERM, SIGHUP or
 * SIGQUIT sent to us is passed on to it; one from the terminal already
 * reached it (same process group) and is not sent twice.  Either way we
 * keep recording until it exits.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record.h"
#include "tool.h"

static int cmd_run(int argc, char **argv);

static const struct rip_cmd cmd_run_def = {
	.name = "run",
	.run = cmd_run,
	.summary = "run a program and record its events into a trace",
	.usage = "usage: rip run [options] [--] PROG [ARGS...]\n"
		 "\n"
		 "Run PROG with its events streamed into a CTF trace directory (babeltrace2\n"
		 "and Trace Compass read it; so do rip dump and rip export).  PROG must be\n"
		 "linked with librip, or use --preload.  Its stdin, stdout, stderr and exit\n"
		 "status pass through; a summary goes to stderr at the end.\n"
		 "\n"
		 "  -o, --output=DIR      write the trace to DIR, which must not exist\n"
		 "                        (default: rip-PROG-PID in the current directory)\n"
		 "  -m, --mode=MODE       what a thread does when its ring is full:\n"
		 "                          block      wait for rip (default: nothing is lost)\n"
		 "                          discard    drop new events and count them\n"
		 "                          overwrite  overwrite the oldest unread packet\n"
		 "  -b, --buffer=SIZE     ring size per thread (e.g. 256k, 4m; a power of two):\n"
		 "                        more room for bursts (default: librip's, 256k)\n"
		 "  -p, --preload         LD_PRELOAD librip.so, for programs not linked with it\n"
		 "  -q, --quiet           no summary line\n"
		 "  -h, --help            this text\n"
		 "\n"
		 "Ctrl-C reaches PROG as usual; rip keeps recording until PROG exits.\n"
		 "Exit status: PROG's (128+N if signal N killed it); 1 if rip failed before\n"
		 "PROG ran or could not write the trace, 2 on a usage error, 126/127 if PROG\n"
		 "could not be run.\n",
};

RIP_COMMAND(cmd_run_def);

#define RUN_IDLE_MIN_NS 50000L	 /* sleep after a pass that found nothing: at first, */
#define RUN_IDLE_MAX_NS 2000000L /* doubling up to this while there is nothing */
#define RUN_ATTACH_NS 20000L	 /* poll for the ring file's magic while it is being created */

struct run_opts {
	const char *out, *mode, *buffer;
	bool preload, quiet;
};

static volatile sig_atomic_t run_child;
static volatile sig_atomic_t run_signalled;

/* Pass a signal on to the program, unless the terminal already sent it there too. */
static void run_on_signal(int sig, siginfo_t *si, void *uc)
{
	pid_t child = run_child;
	int saved = errno;

	(void)uc;
	run_signalled = sig;
	if (child > 0 && (si->si_code != SI_KERNEL || getpgid(child) != getpgrp()))
		kill(child, sig);
	errno = saved;
}

static void run_signals(bool install)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	if (install) {
		sa.sa_sigaction = run_on_signal;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
	} else {
		sa.sa_handler = SIG_DFL;
	}
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

static void run_sleep(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

/* A private directory for the ring file, on the ring file system if we can. */
static int run_ring_dir(char *buf, size_t len)
{
	char dirs[4][PATH_MAX];
	int n = rr_dirs(dirs, 3);
	const char *tmp = getenv("TMPDIR");

	snprintf(dirs[n++], PATH_MAX, "%s", tmp && *tmp ? tmp : "/tmp");
	for (int i = 0; i < n; i++) {
		mkdir(dirs[i], 0700); /* $XDG_RUNTIME_DIR/rip may not exist yet */
		if (snprintf(buf, len, "%s/rip-run.XXXXXX", dirs[i]) >= (int)len)
			continue;
		if (mkdtemp(buf))
			return 0;
	}
	return -errno;
}

/* librip.so next to the rip binary (the build tree), else in the install libdir. */
static int run_find_lib(char *buf, size_t len)
{
	static const char *const rel[] = { "librip.so", "../lib/librip.so", "../lib64/librip.so",
					   "../librip.so" };
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -ENOENT;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char cand[PATH_MAX + 32];

		snprintf(cand, sizeof(cand), "%s/%s", self, rel[i]);
		if (access(cand, R_OK) == 0 && realpath(cand, buf) && strlen(buf) < len)
			return 0;
	}
	return -ENOENT;
}

/* Can we create path?  0, or -1 with errno set (the directory it goes in is missing...). */
static int run_parent_writable(const char *path)
{
	char parent[PATH_MAX];
	char *slash;

	snprintf(parent, sizeof(parent), "%s", path);
	while ((slash = strrchr(parent, '/')) && slash[1] == 0 && slash != parent)
		*slash = 0; /* "dir/" */
	slash = strrchr(parent, '/');
	if (!slash)
		return access(".", W_OK | X_OK);
	if (slash == parent)
		slash[1] = 0;
	else
		*slash = 0;
	return access(parent, W_OK | X_OK);
}

/* Is name a ring file name, rip-PID-START[.N].ring?  Its pid, or 0. */
static pid_t run_ring_name(const char *name)
{
	size_t n = strlen(name);
	long pid;
	char *end;

	if (strncmp(name, "rip-", 4) || n < 10 || strcmp(name + n - 5, ".ring"))
		return 0;
	pid = strtol(name + 4, &end, 10);
	return *end == '-' && pid > 0 ? (pid_t)pid : 0;
}

/*
 * The ring file to record: the program's own, else the first one that
 * appeared (a wrapper's child).  Fills path; counts every ring file in *n.
 */
static bool run_find_ring(const char *dir, pid_t child, char *path, size_t len, int *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool found = false;

	*n = 0;
	if (!d)
		return false;
	while ((e = readdir(d))) {
		pid_t pid = run_ring_name(e->d_name);

		if (!pid)
			continue;
		(*n)++;
		if ((!found || pid == child) &&
		    snprintf(path, len, "%s/%s", dir, e->d_name) < (int)len)
			found = true;
	}
	closedir(d);
	return found;
}

/* Wait until the header is complete: librip stores the magic last. */
static bool run_ring_ready(const char *path)
{
	char magic[8];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	bool ok;

	if (fd < 0)
		return false;
	ok = pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
	     !memcmp(magic, RIP_MAGIC, sizeof(magic));
	close(fd);
	return ok;
}

struct run_state {
	struct run_opts o;
	struct rec rec;
	char ringdir[PATH_MAX], ring[PATH_MAX], dir[PATH_MAX], lib[PATH_MAX];
	pid_t child;
	int status;
	bool exited, failed;
	int inotify;
};

/* Has the program exited?  Reaps it (and forgets its pid: no signal goes to a reused one). */
static bool run_reap(struct run_state *s, int flags)
{
	pid_t p;

	if (s->exited)
		return true;
	do
		p = waitpid(s->child, &s->status, flags);
	while (p < 0 && errno == EINTR);
	if (p == s->child || (p < 0 && errno == ECHILD)) {
		run_child = 0;
		s->exited = true;
	}
	return s->exited;
}

static int run_exit_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_FAIL;
}

/* The child: wait for the go, then exec PROG with the environment set. */
static void run_exec(struct run_opts *o, const char *ringdir, const char *lib, int go, int report,
		     char **argv)
{
	char ring[PATH_MAX + 2], pre[2 * PATH_MAX + 2];
	const char *old = getenv("LD_PRELOAD");
	char c;
	int e;

	run_signals(false);
	if (read(go, &c, 1) != 1)
		_exit(127); /* rip gave up before starting PROG */
	snprintf(ring, sizeof(ring), "%s/", ringdir);
	setenv("RIP_RING", ring, 1);
	setenv("RIP_MODE", o->mode, 1);
	/*
	 * Ask librip to count us as every ring's consumer from the first event
	 * (read when the ring file is created): without it, what the program
	 * emits before we attach can be overwritten if we are slow to attach.
	 */
	snprintf(pre, sizeof(pre), "%d", (int)getppid());
	setenv("RIP_CONSUMER", pre, 1);
	if (o->buffer)
		setenv("RIP_EVENT_RING_SIZE", o->buffer, 1);
	if (lib) {
		if (old && *old)
			snprintf(pre, sizeof(pre), "%s:%s", lib, old);
		else
			snprintf(pre, sizeof(pre), "%s", lib);
		setenv("LD_PRELOAD", pre, 1);
	}
	execvp(argv[0], argv);
	e = errno;
	if (write(report, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

/* Remove our ring file and directory; say where anything else was left. */
static void run_cleanup_ringdir(const char *dir, const char *recorded, bool keep)
{
	if (recorded && *recorded && !keep)
		unlink(recorded);
	if (rmdir(dir) && errno != ENOENT)
		tool_err("note: ring files of other processes (PROG's children?) were left in %s",
			 dir);
}

static int run_parse(int argc, char **argv, struct run_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "mode", required_argument, NULL, 'm' },
		{ "buffer", required_argument, NULL, 'b' },
		{ "preload", no_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->mode = "block";
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:m:b:pqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case 'm':
			if (strcmp(optarg, "block") && strcmp(optarg, "discard") &&
			    strcmp(optarg, "overwrite"))
				return tool_usage_error(
					&cmd_run_def,
					"--mode is block, discard or overwrite, not "
					"'%s'",
					optarg);
			o->mode = optarg;
			break;
		case 'b': {
			char *end;
			unsigned long long v = strtoull(optarg, &end, 10);

			if (*end == 'k' || *end == 'K')
				v <<= 10, end++;
			else if (*end == 'm' || *end == 'M')
				v <<= 20, end++;
			if (*end || v < 32768 || v > (1ull << 30) || (v & (v - 1)))
				return tool_usage_error(&cmd_run_def,
							"--buffer wants a power of two from 32k to "
							"1024m, like 1m, not '%s'",
							optarg);
			o->buffer = optarg;
			break;
		}
		case 'p':
			o->preload = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			tool_help(&cmd_run_def);
			return -1;
		case '?':
		default:
			return tool_usage_error(&cmd_run_def, "unknown option '%s'",
						argv[optind - 1]);
		}
	}
	if (optind == argc)
		return tool_usage_error(&cmd_run_def,
					"which program? rip run [options] -- PROG [ARGS...]");
	return 0;
}

/* Attach to the ring file once it is complete; false while it is not there yet. */
static bool run_try_attach(struct run_state *s)
{
	char err[RR_ERR_MAX];
	int nfiles, ret;

	if (!run_find_ring(s->ringdir, s->child, s->ring, sizeof(s->ring), &nfiles))
		return false;
	/* It is being created: the header takes a few ms; poll it closely. */
	while (!run_ring_ready(s->ring)) {
		if (run_reap(s, WNOHANG))
			break;
		run_sleep(RUN_ATTACH_NS);
	}
	ret = rec_attach(&s->rec, s->ring, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		s->failed = true;
		return true;
	}
	ret = rec_open_trace(&s->rec, s->dir, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		rec_close(&s->rec);
		s->failed = true;
	}
	return true;
}

static void run_summary(struct run_state *s)
{
	const struct rec_stats *st = &s->rec.st;
	uint64_t lost = rec_lost_events(&s->rec);
	char b[32];

	if (s->o.quiet && !lost && !st->corrupt)
		return;
	fprintf(stderr, "%s run: %llu events (%s) recorded in %s/, %llu lost", rip_prog,
		(unsigned long long)st->events, rec_fmt_bytes(st->bytes, b, sizeof(b)), s->dir,
		(unsigned long long)lost);
	if (st->lost_packets)
		fprintf(stderr, " (%llu packets overwritten before rip read them)",
			(unsigned long long)st->lost_packets);
	if (st->corrupt)
		fprintf(stderr, ", %llu corrupt packets skipped", (unsigned long long)st->corrupt);
	fputc('\n', stderr);
	if (lost && st->discarded_before && !strcmp(s->o.mode, "block"))
		fprintf(stderr,
			"%s run: %llu events were lost before rip attached: a bigger --buffer "
			"gives the program more room at start\n",
			rip_prog, (unsigned long long)st->discarded_before);
	else if (lost && strcmp(s->o.mode, "block"))
		fprintf(stderr, "%s run: --mode=block loses nothing (threads wait for rip)\n",
			rip_prog);
}

/* Stream until the program exits; then drain and finish the trace. */
static void run_loop(struct run_state *s)
{
	char err[RR_ERR_MAX];
	bool attached = false;
	long idle = RUN_IDLE_MIN_NS;
	int n;

	for (;;) {
		run_reap(s, WNOHANG);
		if (!attached && !s->failed)
			attached = run_try_attach(s);
		if (s->exited)
			break;
		if (attached && !s->failed) {
			n = rec_poll(&s->rec, err, sizeof(err));
			if (n < 0) {
				tool_err(
					"%s; recording stops (the trace is removed), the program runs on",
					err);
				rec_close(&s->rec);
				s->failed = true;
			}
			if (n > 0) {
				idle = RUN_IDLE_MIN_NS;
				continue;
			}
			/* A busy writer fills a ring in about a ms: look again soon. */
			run_sleep(idle);
			idle = idle * 2 > RUN_IDLE_MAX_NS ? RUN_IDLE_MAX_NS : idle * 2;
		} else if (!attached) {
			struct pollfd pfd = { .fd = s->inotify, .events = POLLIN };
			char buf[4096];

			if (s->inotify < 0)
				run_sleep(RUN_IDLE_MIN_NS);
			else if (poll(&pfd, 1, 5) > 0)
				while (read(s->inotify, buf, sizeof(buf)) > 0)
					;
		} else {
			/* Recording failed: just wait for the program. */
			run_reap(s, 0);
		}
	}
	if (!attached) {
		tool_err("%s created no ring file, so there are no events to record: is it linked "
			 "with librip? (else try rip run --preload)",
			 s->ring[0] ? s->ring : "the program");
		return;
	}
	if (s->failed)
		return;
	if (rec_finish(&s->rec, err, sizeof(err))) {
		tool_err("%s", err);
		s->failed = true;
		return;
	}
	run_summary(s);
}

static int cmd_run(int argc, char **argv)
{
	struct run_state *s;
	int go[2] = { -1, -1 }, rep[2] = { -1, -1 }, ret, e, status = EXIT_FAIL;
	struct stat st;
	ssize_t got;

	s = calloc(1, sizeof(*s));
	if (!s) {
		tool_err("out of memory");
		return EXIT_FAIL;
	}
	rec_init(&s->rec);
	s->inotify = -1;
	ret = run_parse(argc, argv, &s->o);
	if (ret) {
		free(s);
		return ret < 0 ? EXIT_OK : ret;
	}
	argv += optind;
	if (s->o.preload && run_find_lib(s->lib, sizeof(s->lib))) {
		tool_err("--preload: cannot find librip.so next to %s or in its lib directory",
			 rip_prog);
		goto out_free;
	}
	if (s->o.out && lstat(s->o.out, &st) == 0) {
		tool_err("%s exists: traces are never overwritten; choose another with -o",
			 s->o.out);
		goto out_free;
	}
	if (s->o.out && run_parent_writable(s->o.out)) {
		tool_err("cannot create %s: %s", s->o.out, strerror(errno));
		goto out_free;
	}
	ret = run_ring_dir(s->ringdir, sizeof(s->ringdir));
	if (ret) {
		tool_err("cannot create a directory for the ring file: %s", strerror(-ret));
		goto out_free;
	}
	s->inotify = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (s->inotify >= 0)
		inotify_add_watch(s->inotify, s->ringdir, IN_CREATE | IN_MOVED_TO);
	if (pipe2(go, O_CLOEXEC) || pipe2(rep, O_CLOEXEC)) {
		tool_err("pipe: %s", strerror(errno));
		goto out_dir;
	}
	fflush(NULL);
	s->child = fork();
	if (s->child < 0) {
		tool_err("fork: %s", strerror(errno));
		goto out_dir;
	}
	if (s->child == 0) {
		close(go[1]);
		close(rep[0]);
		run_exec(&s->o, s->ringdir, s->o.preload ? s->lib : NULL, go[0], rep[1], argv);
	}
	close(go[0]);
	close(rep[1]);
	go[0] = rep[1] = -1;
	if (s->o.out)
		snprintf(s->dir, sizeof(s->dir), "%s", s->o.out);
	else
		rec_default_dir(s->dir, sizeof(s->dir), argv[0], s->child);
	if (lstat(s->dir, &st) == 0) {
		tool_err("%s exists: traces are never overwritten; choose another with -o", s->dir);
		close(go[1]); /* the child exits without running PROG */
		go[1] = -1;
		waitpid(s->child, NULL, 0);
		goto out_dir;
	}
	run_child = s->child;
	run_signals(true);
	if (write(go[1], "g", 1) != 1) {
		tool_err("cannot start %s: %s", argv[0], strerror(errno));
		waitpid(s->child, NULL, 0);
		goto out_dir;
	}
	close(go[1]);
	go[1] = -1;
	do
		got = read(rep[0], &e, sizeof(e));
	while (got < 0 && errno == EINTR);
	close(rep[0]);
	rep[0] = -1;
	if (got == (ssize_t)sizeof(e)) {
		tool_err("cannot run %s: %s", argv[0], strerror(e));
		run_reap(s, 0);
		status = run_exit_status(s->status);
		goto out_dir;
	}
	run_loop(s);
	run_reap(s, 0);
	status = run_exit_status(s->status);
	if (s->failed && status == 0)
		status = EXIT_FAIL;
	rec_close(&s->rec);
	run_cleanup_ringdir(s->ringdir, s->ring, s->failed);
	goto out_free;

out_dir:
	run_cleanup_ringdir(s->ringdir, NULL, false);
out_free:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (rep[i] >= 0)
			close(rep[i]);
	}
	if (s->inotify >= 0)
		close(s->inotify);
	free(s);
	return status;
}
