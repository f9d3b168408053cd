/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/cmd-run.c - `rip run`: run a program and record its events into a
 * trace directory while it runs.  The recording is record/family.h's: a
 * private directory for the family's ring files, the environment that
 * sends them there and names us their consumer from the first event (in
 * block mode writers wait for us rather than lose events), the program's
 * trace, and with --follow-fork / --follow-exec the children's and new
 * images' in DIR/PID[.N]/.  Here: the process, and what is said (the
 * summary gives the program's trace and every child's, with losses;
 * librip's markers of files it could not create become messages); the
 * options are tools/run-opts.c's.
 *
 * Every dynamically linked program gets librip-preload.so (unless
 * --no-waits): each of its threads takes a slot at birth and its wrappers
 * of blocking calls record what each thread waits in, so that `rip ps PID`
 * works for a program that never heard of librip; its resource hooks only
 * forward then (RIP_RESOURCES=0).  Resource tracing (--mem, --fd, --shm)
 * preloads it with its hooks on for the categories asked for, so that `rip
 * enable PID mem` can still turn the others on later.  A program the
 * preload library cannot reach (static, secure execution: record/prog.h)
 * is said so at once rather than recorded into an empty trace.
 *
 * --track='KIND=ACQUIRE(ID),RELEASE(ID)' (internal/track.h checks each, and
 * says which part is wrong) adds librip-track.so to LD_AUDIT with the specs
 * in RIP_TRACK: its trampolines report the calls through librip-preload.so's
 * module interface.  At the end, a function no process of the family found
 * in an object it loaded is named (it was not traced).
 *
 * The program keeps our stdin, stdout and stderr, and its exit status is
 * ours (128 + N for a death by signal N).  A SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT, SIGUSR1 or SIGUSR2 sent to us is passed on to it, unless the
 * same kill reached it already (the terminal's, a process group's, a
 * control group's: tools/run-signals.c tells).  Either way we keep
 * recording until it exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rip/resource.h>
#include <internal/pagemap.h>
#include <internal/track.h>

#include "record/consume.h"
#include "record/family.h"
#include "record/prog.h"
#include "read/modinfo.h"
#include "tools/format.h"
#include "tools/relay.h"
#include "tools/run-opts.h"
#include "tools/run-signals.h"
#include "tools/store.h"
#include "tools/summary.h"
#include "tools/tool.h"

static int cmd_run(int argc, char **argv);

static const struct rip_cmd cmd_run_def = {
	.name = "run",
	.run = cmd_run,
	.summary = "run a program and record its events into a trace",
	.usage = "usage: rip run [options] [--] PROG [ARGS...]\n"
		 "\n"
		 "Run PROG with its events streamed into a trace directory (rip dump, rip\n"
		 "leaks and the other readers read it; rip export --format=ctf, or --ctf,\n"
		 "for babeltrace2 and Trace Compass).  PROG must be linked with librip, or\n"
		 "use --preload.  Its stdin, stdout, stderr and exit\n"
		 "status pass through; a summary goes to stderr at the end.  A dynamically\n"
		 "linked PROG gets librip-preload.so: every thread has a slot from its start\n"
		 "and records what it blocks in, so rip ps PID shows it (no events recorded).\n"
		 "\n"
		 "  -o, --output=DIR      write the trace to DIR, which must not exist\n"
		 "                        (default: rip-PROG-PID in the current directory;\n"
		 "                        -: none, with --relayd)\n"
		 "  -m, --mode=MODE       what a thread does when its ring is full:\n"
		 "                          block      wait for rip (default: nothing is lost)\n"
		 "                          discard    drop new events and count them\n"
		 "                          overwrite  overwrite the oldest unread packet\n"
		 "  -b, --buffer=SIZE     ring size per thread (e.g. 256k, 4m; a power of two):\n"
		 "                        more room for bursts (default: librip's, 256k)\n"
		 "  -p, --preload         LD_PRELOAD librip.so, for programs not linked with it\n"
		 "      --no-waits        no slots at thread birth and no wait records: PROG\n"
		 "                        runs without librip-preload.so (unless resource\n"
		 "                        tracing needs it)\n"
		 "\n"
		 "Resource tracing (LD_PRELOAD of librip-preload.so; rip leaks reads it):\n"
		 "      --mem             trace memory: malloc and friends, new/delete, mmap\n"
		 "      --fd              trace file descriptors: open, socket, pipe, dup, close...\n"
		 "      --shm             trace shared memory: shm_open, shmget, shmat, MAP_SHARED\n"
		 "      --all             all three\n"
		 "      --off             preload, but start with all three (and the modules'\n"
		 "                        kinds) off: turn them on later with rip enable PID\n"
		 "                        mem (or fd, shm, res)\n"
		 "      --module=NAME|PATH.so  load a tracing module (repeatable): a small\n"
		 "                        preloaded library that traces a resource of its own\n"
		 "                        (gobject, sqlite3, memtransfer...; librip-module(3));\n"
		 "                        rip leaks and rip report show its kinds by name\n"
		 "      --list-modules    list the installed modules and their kinds, and exit\n"
		 "      --track='KIND=ACQUIRE(ID),RELEASE(ID)'  trace the resources of kind KIND\n"
		 "                        made by calls of function ACQUIRE and ended by calls of\n"
		 "                        RELEASE (calls between shared objects); ID says where\n"
		 "                        the resource's id is: ret (the return value), N (the\n"
		 "                        value of argument N, 1 to 6) or *N (what argument N\n"
		 "                        points to, after the call); repeatable.  E.g.\n"
		 "                        --track='regex=regcomp(1),regfree(1)'\n"
		 "                        --track='db=sqlite3_open(*2),sqlite3_close(1)'\n"
		 "      --depth=N         backtrace frames kept, 1 to 64 (default 32)\n"
		 "      --pagemap-signal=SIG  with --mem, signal SIG (USR1, USR2, RTMIN+N or a\n"
		 "                        number) makes PROG record a pagemap snapshot for\n"
		 "                        rip pagemap; one is always taken at exit\n"
		 "      --no-pagemap      with --mem, no pagemap snapshot at exit\n"
		 "      --sample[=HZ]     sample where each thread runs, HZ times per second of\n"
		 "                        its CPU time (default 100, at most 1000), for rip top\n"
		 "                        (live, and of the trace: the samples are kept in it);\n"
		 "                        preloads librip-preload.so (resources stay off unless\n"
		 "                        asked for).  Threads that wait are never interrupted\n"
		 "      --functions[=GLOB]  record the calls of code built with\n"
		 "                        -finstrument-functions (rip report --functions);\n"
		 "                        without it only the call stacks are kept (rip ps\n"
		 "                        --stacks), and rip enable PID func records later.\n"
		 "                        With GLOB (again for more; !GLOB leaves names out),\n"
		 "                        the functions built with -fpatchable-function-entry\n"
		 "                        that it names are patched before main (RIP_FUNCTIONS);\n"
		 "                        without, they are traced from rip enable PID func on\n"
		 "      --follow-fork     trace forked children too, each into DIR/PID/\n"
		 "      --follow-exec     trace the programs exec'd into, into DIR/PID.N/\n"
		 "                        (spawned programs, fork + exec: give both)\n"
		 "\n"
		 "\n" STORE_HELP
		 "\n" RELAY_HELP
		 "\n"
		 "  -q, --quiet           no summary unless something was lost\n"
		 "  -h, --help            this text\n"
		 "\n"
		 "The trace keeps a copy of PROG's ring file (DIR/.rip-ring) for rip ps DIR\n"
		 "(and of each followed child's, DIR/PID/.rip-ring);\n"
		 "if PROG dies of a signal its ring file stays in RIP_DIR too, for rip ps PID\n"
		 "(the last line names it; rip gc removes it).\n"
		 "\n"
		 "Ctrl-C reaches PROG as usual; rip keeps recording until PROG exits.  A\n"
		 "statically linked PROG cannot be resource-traced (LD_PRELOAD does not reach it).\n"
		 "Exit status: PROG's (128+N if signal N killed it); 1 if rip failed before\n"
		 "PROG ran or could not write the trace, or if relayd was lost (the local\n"
		 "trace is whole), 2 on a usage error, 126/127 if PROG could not be run.\n",
};

RIP_COMMAND(cmd_run_def);

#define RUN_ATTACH_NS 20000L /* poll for the ring file's magic while it is being created */

static volatile sig_atomic_t run_child;

/*
 * Without the relay thread (runsig_start failed): pass a signal on to the
 * program, unless the terminal already sent it there too.
 */
static void run_on_signal(int sig, siginfo_t *si, void *uc)
{
	pid_t child = run_child;
	int saved = errno;

	(void)uc;
	if (child > 0 && (si->si_code != SI_KERNEL || getpgid(child) != getpgrp()))
		kill(child, sig);
	errno = saved;
}

static volatile sig_atomic_t run_chld; /* a SIGCHLD since run_loop last looked */

static void run_on_child(int sig)
{
	(void)sig;
	run_chld = 1; /* and the sleep it interrupts ends */
}

/*
 * The handlers of ours, or (install false, in the program before its exec)
 * the defaults; relayed: the relay thread passes signals on.  A signal rip
 * was started with ignored (runsig_ignored) stays ignored in both: under
 * nohup, the program took the terminal's SIGHUP and died.
 */
static void run_signals(bool install, bool relayed)
{
	/* USR1 and USR2 too: their default would kill rip, and the trace with it */
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	struct sigaction sa, ign;

	memset(&sa, 0, sizeof(sa));
	if (install && relayed) {
		sa.sa_handler =
			SIG_IGN; /* blocked, and taken from a signalfd: a stray one does nothing */
	} else if (install) {
		sa.sa_sigaction = run_on_signal;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
	} else {
		sa.sa_handler = SIG_DFL;
	}
	sigemptyset(&sa.sa_mask);
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], runsig_ignored(sigs[i]) ? &ign : &sa, NULL);
	/*
	 * A child's exit ends run_loop's idle sleep at once (nanosleep is never
	 * restarted after a handler), or the sleep is skipped (run_chld),
	 * instead of waiting up to REC_IDLE_MAX_NS; SA_RESTART for the rest.
	 * Ours whatever rip was started with (its children are reaped by it),
	 * and the program's as it was: ignored, its children reap themselves.
	 */
	if (install) {
		sa.sa_handler = run_on_child;
		sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	}
	sigaction(SIGCHLD, !install && runsig_ignored(SIGCHLD) ? &ign : &sa, NULL);
}

static void run_sleep(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

/*
 * Can we create directory path?  0, or -1 with errno set (the directory it
 * goes in is missing, read-only, /proc...).  Made and removed again: asking
 * access(2) says yes to root anywhere, and the program then ran untraced
 * until the recorder failed to create it.
 */
static int run_can_create(const char *path)
{
	if (mkdir(path, 0700))
		return -1;
	rmdir(path);
	return 0;
}

struct run_state {
	struct run_opts o;
	struct fam fam;			/* the ring files of the program and its family */
	char lib[PATH_MAX];		/* what goes into LD_PRELOAD; "": nothing */
	char audit[PATH_MAX];		/* --track: librip-track.so, for LD_AUDIT */
	pid_t child;
	int status;
	bool exited, failed;
	bool nofile_failed;		/* the program's ring file could not be created: we fail */
	struct rly *rly;		/* relayd, connected before PROG starts */
	struct relay_said relay;	/* relayd lost, or lost and connected again: we fail */
	char untraced[PATH_MAX + 400];	/* why LD_PRELOAD cannot reach PROG, if it cannot */
	bool untraced_said;		/* and that was said at the start */
};

/* Has the program exited?  Reaps it (and forgets its pid: no signal goes to a reused one). */
static bool run_reap(struct run_state *s, int flags)
{
	siginfo_t si;
	pid_t p;

	if (s->exited)
		return true;
	memset(&si, 0, sizeof(si));
	if (!s->o.fam.follow_exec && s->fam.rec.f.fd >= 0 &&
	    !waitid(P_PID, (id_t)s->child, &si, WEXITED | WNOHANG | WNOWAIT) &&
	    si.si_pid == s->child)
		/* exited: what it ran last, before it is reaped */
		fam_exec_check(&s->fam, true, si.si_code != CLD_EXITED);
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

/* What goes wrong with the family's other traces (record/family.h): one line each. */
static void run_warn(const char *msg, void *arg)
{
	(void)arg;
	tool_err("%s", msg);
}

/* The child: wait for the go, then exec PROG with the environment set. */
static void run_exec(const struct run_state *s, int go, int report, char **argv)
{
	char c;
	int e;

	run_signals(false, false);
	fam_clock_env();
	if (read(go, &c, 1) != 1)
		_exit(127); /* rip gave up before starting PROG */
	fam_env(&s->fam, s->lib[0] ? s->lib : NULL);
	execvp(argv[0], argv);
	e = errno;
	if (write(report, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

/* The last lines: the ring files that stay, and what to do with them. */
static void run_kept_lines(const struct run_state *s)
{
	/* killed after it exec'd a followed image: that image's trace */
	const char *trace = s->fam.last_kept ? s->fam.last_dir : s->fam.dir;
	bool trace_ring = trace != s->fam.dir || s->fam.rec.ring_kept;

	for (size_t i = 0; i < s->fam.nkept; i++) {
		const struct fam_kept *k = &s->fam.kept[i];

		if (k->sig < 0)
			fprintf(stderr,
				"%s run: the recording of %s (pid %d) failed: its ring file stays as "
				"%s (rip ps %d and rip snapshot %s read it; rip gc removes it)\n",
				rip_prog, k->comm, (int)k->pid, k->path, (int)k->pid, k->path);
		else if (k->sig && k->pid == s->fam.child && !s->fam.last_kept &&
			 s->fam.exec_img[0])
			/* the image it exec'd was killed, not followed: the file is of the one before */
			fprintf(stderr,
				"%s run: %s, which %s (pid %d) exec'd, was killed by signal %d (%s): "
				"rip ps %d%s%s shows %s before the exec; its ring file stays as %s "
				"(rip gc removes it)\n",
				rip_prog, s->fam.exec_img, k->comm, (int)k->pid, k->sig,
				strsignal(k->sig), (int)k->pid, trace_ring ? " or rip ps " : "",
				trace_ring ? trace : "", k->comm, k->path);
		else if (k->sig)
			fprintf(stderr,
				"%s run: %s (pid %d) was killed by signal %d (%s): rip ps %d%s%s shows "
				"where its threads were; its ring file stays as %s (rip gc removes "
				"it)\n",
				rip_prog, k->comm, (int)k->pid, k->sig, strsignal(k->sig), (int)k->pid,
				trace_ring ? " or rip ps " : "", trace_ring ? trace : "", k->path);
		else
			fprintf(stderr,
				"%s run: %s (pid %d) still runs: its ring file stays as %s (rip ps "
				"%d; rip gc removes it once the process is gone)\n",
				rip_prog, k->comm, (int)k->pid, k->path, (int)k->pid);
	}
}

/* The functions of --track that no process of the family found in an object it loaded. */
static void run_track_missing(const struct run_state *s)
{
	for (unsigned i = 0; i < s->o.ntrack; i++) {
		const struct rip_track_spec *t = &s->o.track[i];
		const char *fn[2] = { t->acq.name, t->rel.name };

		for (int k = 0; k < 2; k++) {
			if (fam_track_found(&s->fam, fn[k]))
				continue;
			fprintf(stderr,
				"%s run: warning: --track %s: %s was not found in any object the "
				"program loaded: its calls were not traced (is the name right, and "
				"is it exported by a shared library?)\n",
				rip_prog, t->kind, fn[k]);
		}
	}
}

/* The directory the user chose for ring files: our private one's parent. */
static void run_ring_parent(const struct run_state *s, char *buf, size_t len)
{
	const char *ringdir = s->fam.ringdir, *slash = strrchr(ringdir, '/');

	snprintf(buf, len, "%.*s", slash && slash != ringdir ? (int)(slash - ringdir) : 1,
		 slash ? ringdir : ".");
}

/*
 * Why ring files could not be created, for a message: "no space left in DIR
 * for WHOSE (EACH needs N bytes, F free)...".
 */
static void run_nofile_why(const struct run_state *s, int err, unsigned long long need,
			   const char *whose, const char *each, char *buf, size_t len)
{
	char dir[PATH_MAX], b1[32], b2[32];
	struct statvfs vfs;

	run_ring_parent(s, dir, sizeof(dir));
	if (err != ENOSPC && err != EDQUOT) {
		snprintf(buf, len, "%s in %s for %s", strerror(err), dir, whose);
		return;
	}
	if (statvfs(s->fam.ringdir, &vfs) == 0)
		snprintf(b2, sizeof(b2), "%s", fmt_bytes((uint64_t)vfs.f_bavail * vfs.f_frsize, b1,
							 sizeof(b1)));
	else
		snprintf(b2, sizeof(b2), "?");
	snprintf(buf, len,
		 "no space left in %s for %s (%sneeds %llu bytes, %s free): give it more room, "
		 "or point RIP_DIR at a bigger tmpfs",
		 dir, whose, each, need, b2);
}

/* Attach to the ring file once it is complete; false while it is not there yet. */
static bool run_try_attach(struct run_state *s)
{
	char err[RR_ERR_MAX];
	int ret;

	if (!fam_find(&s->fam))
		return false;
	/* It is being created: the header takes a few ms; poll it closely. */
	while (!(ret = fam_ready(&s->fam)) && !run_reap(s, WNOHANG))
		run_sleep(RUN_ATTACH_NS);
	if (ret < 0)
		return false; /* its creator gave up (no space: see fam_take_failed) */
	ret = fam_attach(&s->fam, err, sizeof(err));
	if (!ret && s->rly) {
		ret = rec_relayd(&s->fam.rec, s->rly, relay_linger_ms(&s->o.relay), err,
				 sizeof(err));
		s->rly = NULL; /* the recorder's now */
		if (ret && !s->fam.no_local) {
			/* relayd went away already: the local trace goes on */
			tool_err("%s; streaming to relayd stops, the local trace goes on", err);
			s->relay.lost = true;
			ret = 0;
		}
	}
	if (ret) {
		tool_err("%s", err);
		rec_close(&s->fam.rec);
		s->failed = true;
	}
	return true;
}

#define RUN_SUB_LINES 10 /* child traces listed one per line; past that, those with loss */

/* One line on a child's trace. */
static void run_sub_line(const struct fam *f, const struct fam_sub *sub)
{
	const char *img = sub->exec_img;

	const char *base = strrchr(sub->dir, '/');

	fprintf(stderr, "%s run:   %s (%s): %llu events, %llu lost", rip_prog,
		base ? base + 1 : sub->dir, sub->comm[0] ? sub->comm : "?",
		(unsigned long long)sub->events, (unsigned long long)sub->lost);
	if (sub->corrupt)
		fprintf(stderr, ", %llu corrupt packets skipped", (unsigned long long)sub->corrupt);
	if (sub->samples || sub->samples_lost)
		fprintf(stderr, "; %llu CPU samples (rip top %s), %llu lost",
			(unsigned long long)sub->samples, sub->dir,
			(unsigned long long)sub->samples_lost);
	if (sub->cut)
		fprintf(stderr, "; still running when the program exited: recorded until then");
	else if (sub->end == FAM_END_EXEC) {
		/* not seen running: the name of the image followed after it, if it was */
		for (size_t i = 0; !img[0] && i < f->nsubs; i++)
			if (f->subs[i]->pid == sub->pid && f->subs[i]->gen == sub->gen + 1)
				img = f->subs[i]->comm;
		fprintf(stderr, "; exec'd %s", img[0] ? img : "a new image");
	} else if (sub->end == FAM_END_DEAD)
		fprintf(stderr, "; dead (killed or crashed)");
	fputc('\n', stderr);
}

static void run_summary(struct run_state *s)
{
	const struct fam *f = &s->fam;
	const struct rec_stats *st = &f->rec.st;
	uint64_t lost = rec_lost_events(&f->rec);
	unsigned shown = 0;
	struct fam_totals t;
	bool sub_bad;

	fam_totals(f, &t);
	sub_bad = t.lossy || f->failed || f->sub_nofile || f->forks_denied;
	if (s->o.quiet && !lost && !st->corrupt && !sub_bad && !st->samples_lost &&
	    !f->rec.smp_err[0])
		return;
	if (rec_relayd_path(&f->rec) && !s->relay.lost && !s->relay.gap) {
		char where[PATH_MAX + 300];

		relay_where(&s->o.relay, rec_relayd_path(&f->rec), where, sizeof(where));
		fprintf(stderr, "%s run: streamed to %s\n", rip_prog, where);
	}
	sum_recorded("run", &f->rec, lost, "");
	if (st->samples || st->samples_lost || f->rec.smp_err[0])
		fprintf(stderr, "%s run: %llu CPU samples of them%s%s%s, %llu lost%s%s\n", rip_prog,
			(unsigned long long)st->samples, f->no_local ? "" : " (rip top ",
			f->no_local ? "" : f->dir, f->no_local ? "" : ")",
			(unsigned long long)st->samples_lost, f->rec.smp_err[0] ? ": " : "",
			f->rec.smp_err);
	/*
	 * Most of the loss periods the kernel merged: its CPU-time timers expire
	 * at its tick, whatever the rate asked (250 Hz on many kernels).
	 */
	if (st->samples_merged && 2 * st->samples_merged >= st->samples_lost &&
	    st->samples_merged >= st->samples / 4)
		fprintf(stderr,
			"%s run: %llu of the samples lost are timer periods the kernel merged into "
			"others (its CPU-time timers fire at its tick, about %llu Hz here): a lower "
			"--sample loses fewer\n",
			rip_prog, (unsigned long long)st->samples_merged,
			(unsigned long long)(s->o.fam.sample * st->samples /
					     (st->samples + st->samples_merged)));
	if (f->traces) {
		fprintf(stderr,
			"%s run: %u child trace%s (children, new images) in %s/PID[.N]/: %llu "
			"events, %llu lost\n",
			rip_prog, f->traces, f->traces == 1 ? "" : "s", f->dir,
			(unsigned long long)t.events, (unsigned long long)t.lost);
		/* Every one when they are few; else those that lost events. */
		for (size_t i = 0; i < f->nsubs; i++) {
			const struct fam_sub *sub = f->subs[i];
			bool bad = sub->lost || sub->corrupt || sub->cut || sub->end == FAM_END_DEAD;

			if (!sub->recorded || (f->traces > RUN_SUB_LINES && !bad) ||
			    (s->o.quiet && !bad))
				continue;
			if (shown++ == RUN_SUB_LINES && f->traces > RUN_SUB_LINES) {
				fprintf(stderr, "%s run:   ... and more: rip report DIR/PID shows each\n",
					rip_prog);
				break;
			}
			run_sub_line(f, sub);
		}
	}
	if (f->failed)
		fprintf(stderr, "%s run: %u child trace%s could not be recorded (see above)\n",
			rip_prog, f->failed, f->failed == 1 ? "" : "s");
	if (f->sub_nofile) {
		char why[PATH_MAX + 200];

		run_nofile_why(s, f->sub_err, f->sub_need,
			       f->sub_nofile == 1 ? "its ring file" : "their ring files",
			       f->sub_nofile == 1 ? "" : "each ", why, sizeof(why));
		fprintf(stderr, "%s run: warning: %u child%s or new image%s not traced: %s\n",
			rip_prog, f->sub_nofile, f->sub_nofile == 1 ? "" : "ren",
			f->sub_nofile == 1 ? " was" : "s were", why);
	}
	if (f->forks_denied)
		fprintf(stderr,
			"%s run: warning: %u forked child%s not traced: %s (pid %d) changed its "
			"user (dropped privileges) before it forked, and a process of another "
			"user cannot create its ring file in rip run's directory (%s)\n",
			rip_prog, f->forks_denied, f->forks_denied == 1 ? " was" : "ren were",
			f->denied_comm, (int)f->denied_pid,
			strerror(f->denied_err > 0 ? f->denied_err : EACCES));
	if (t.lossy)
		fprintf(stderr, "%s run: warning: %u child trace%s incomplete: events were lost%s\n",
			rip_prog, t.lossy, t.lossy == 1 ? " is" : "s are",
			f->traces > RUN_SUB_LINES ? " (listed above)" : "");
	if (t.cut && !s->o.quiet)
		fprintf(stderr,
			"%s run: %u child%s still running when the program exited: %s recorded "
			"until then\n",
			rip_prog, t.cut, t.cut == 1 ? " was" : "ren were",
			t.cut == 1 ? "its trace is" : "their traces are");
	/*
	 * ev_lost counts two things: events of threads that found no free ring,
	 * and those a signal handler emitted while its thread took its ring
	 * (its first event); with no thread short of a ring, all are the latter.
	 */
	if (lost && st->noring && st->overflow)
		fprintf(stderr,
			"%s run: %llu events found no event ring: %u thread%s found none free "
			"(more threads emitting at once than RIP_EVENT_RINGS + "
			"RIP_EVENT_SMALL_RINGS), or a signal handler emitted while its thread took "
			"its ring\n",
			rip_prog, (unsigned long long)st->noring, st->overflow,
			st->overflow == 1 ? "" : "s");
	else if (lost && st->noring)
		fprintf(stderr,
			"%s run: %llu events were emitted by signal handlers while their thread took "
			"its event ring (at its first event): lost, see rip_event1(3)\n",
			rip_prog, (unsigned long long)st->noring);
	if (lost && st->discarded_before > st->noring_before && !strcmp(s->o.fam.mode, "block"))
		fprintf(stderr,
			"%s run: %llu events were lost before rip attached: a bigger --buffer "
			"gives the program more room at start\n",
			rip_prog, (unsigned long long)(st->discarded_before - st->noring_before));
	else if ((lost || t.lost) && strcmp(s->o.fam.mode, "block"))
		fprintf(stderr, "%s run: --mode=block loses nothing (threads wait for rip)\n",
			rip_prog);
}

/*
 * No trace of the program: say why (once), the first time we know it (its
 * ring file could not be created), else when it has exited.
 */
static void run_no_trace(struct run_state *s)
{
	static bool said;
	char why[PATH_MAX + 200], dir[PATH_MAX];
	struct statvfs vfs;

	if (said)
		return;
	said = true;
	s->nofile_failed = true;
	if (s->fam.main_nofile) {
		run_nofile_why(s, s->fam.main_err, s->fam.main_need, "its ring file", "", why,
			       sizeof(why));
		tool_err("the program cannot be traced: %s%s", why,
			 s->exited ? "" : " (it runs on untraced)");
		return;
	}
	/* librip could not even leave its marker: a full file system says why. */
	if (statvfs(s->fam.ringdir, &vfs) == 0 && (vfs.f_bavail < 64 || vfs.f_favail == 0)) {
		run_ring_parent(s, dir, sizeof(dir));
		tool_err("the program created no ring file: %s is full (no space or inodes left); "
			 "give it more room, or point RIP_DIR at a bigger tmpfs",
			 dir);
		return;
	}
	s->nofile_failed = false;
	if (s->untraced_said)
		return;
	if (s->untraced[0]) {
		tool_err("the program created no ring file: %s", s->untraced);
		return;
	}
	tool_err("%s created no ring file, so there are no events to record: is it linked "
		 "with librip? (else try rip run --preload)",
		 s->fam.ring[0] ? s->fam.ring : "the program");
}

/* After a recording failed: did its trace keep the chunks it had closed (trace_w_abort)? */
static bool run_chunks_kept(const struct run_state *s)
{
	char path[PATH_MAX + 32];
	struct stat st;

	if (s->fam.no_local || !s->fam.dir[0])
		return false;
	snprintf(path, sizeof(path), "%s/%s", s->fam.dir, TRACE_INDEX);
	return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Stream until the program exits; then drain and finish the trace. */
static void run_loop(struct run_state *s)
{
	char err[RR_ERR_MAX];
	bool attached = false;
	long idle = REC_IDLE_MIN_NS;
	int n;

	for (;;) {
		run_reap(s, WNOHANG);
		if (!attached && !s->failed)
			attached = run_try_attach(s);
		if (s->exited)
			break;
		if (attached && !s->failed) {
			n = fam_pass(&s->fam, err, sizeof(err));
			relay_report(&s->fam.rec, s->fam.no_local ? NULL : s->fam.dir, &s->relay);
			if (n < 0) {
				rec_close(&s->fam.rec);
				s->failed = true;
				if (run_chunks_kept(s))
					tool_err("%s; recording stops (the chunks closed before are kept "
						 "in %s), the program runs on",
						 err, s->fam.dir);
				else
					tool_err("%s; recording stops (the trace is removed), the "
						 "program runs on",
						 err);
			}
			if (n > 0) {
				idle = REC_IDLE_MIN_NS;
				continue;
			}
			/* A busy writer fills a ring in about a ms: look again soon. */
			if (!run_chld)
				run_sleep(idle);
			run_chld = 0;
			idle = rec_idle_next(idle);
		} else if (!attached) {
			fam_wait(&s->fam);
			if (s->fam.main_nofile)
				run_no_trace(s); /* now (once): it runs on untraced */
		} else {
			/* Recording failed: just wait for the program. */
			run_reap(s, 0);
		}
	}
	/* now, so that the kernel frees the watch while we finish (fam_unwatch) */
	fam_unwatch(&s->fam);
	if (!attached) {
		fam_take_failed(&s->fam, false);
		run_no_trace(s);
		fam_end(&s->fam, s->failed, false);
		return;
	}
	if (!s->failed && fam_finish(&s->fam, err, sizeof(err))) {
		tool_err("%s", err);
		s->failed = true;
	}
	if (!s->failed && s->o.fam.functions && !s->fam.fn_ids)
		tool_err("warning: --functions: no traced process entered a function through "
			 "librip's hooks, so the trace has no function records: is the program "
			 "built with -finstrument-functions or -fpatchable-function-entry?");
	if (!s->failed && !s->fam.no_local && !s->fam.rec.ring_kept)
		tool_err("warning: no copy of the ring file in %s (rip ps %s will not work): %s",
			 s->fam.dir, s->fam.dir, s->fam.rec.ring_err);
	if (!s->failed)
		relay_report(&s->fam.rec, s->fam.no_local ? NULL : s->fam.dir, &s->relay);
	fam_end(&s->fam, s->failed, !s->fam.no_local);
	if (!s->failed)
		run_summary(s);
	if (s->fam.exec_img[0] && !s->o.quiet)
		fprintf(stderr, "%s run: %s exec'd %s (not followed; --follow-exec records it)\n",
			rip_prog, s->fam.rec.f.hdr.comm[0] ? s->fam.rec.f.hdr.comm : "the program",
			s->fam.exec_img);
}

static int cmd_run(int argc, char **argv)
{
	struct run_state *s;
	int go[2] = { -1, -1 }, rep[2] = { -1, -1 }, ret, e, status = EXIT_FAIL;
	struct stat st;
	bool relayed;
	ssize_t got;

	runsig_inherit(); /* before any handler of ours */
	s = calloc(1, sizeof(*s));
	if (!s) {
		tool_err("out of memory");
		return EXIT_FAIL;
	}
	fam_init(&s->fam, &s->o.fam);
	s->fam.warn = run_warn;
	ret = runo_parse(&cmd_run_def, argc, argv, &s->o);
	if (ret) {
		free(s);
		return ret < 0 ? EXIT_OK : ret;
	}
	argv += optind;
	ret = prog_plan(argv[0], fam_resources(&s->o.fam), s->o.preload, s->o.fam.no_waits,
			s->lib, sizeof(s->lib), &s->o.fam.waits, s->untraced, sizeof(s->untraced));
	if (ret == PROG_PLAN_NO_PRELOAD)
		tool_err("resource tracing needs librip-preload.so, which is not next to %s nor "
			 "in its lib directory: build it (make) or install it",
			 rip_prog);
	else if (ret == PROG_PLAN_NO_LIBRIP)
		tool_err("--preload: cannot find librip.so next to %s or in its lib directory",
			 rip_prog);
	else if (ret == PROG_PLAN_UNREACHABLE)
		tool_err("%s", s->untraced);
	if (ret != PROG_PLAN_OK && ret != PROG_PLAN_UNTRACED)
		goto out_free;
	if (s->o.ntrack) {
		if (prog_find_lib("librip-track.so", s->audit, sizeof(s->audit))) {
			tool_err("--track needs librip-track.so, which is not next to %s nor in "
				 "its lib directory: build it (make) or install it",
				 rip_prog);
			goto out_free;
		}
		s->o.fam.audit = s->audit;
	}
	if (ret == PROG_PLAN_OK && s->o.nglobs && !strstr(s->lib, "librip-preload.so")) {
		tool_err("--functions=GLOB: librip-preload.so patches the functions before main, "
			 "and %s would run without it (--no-waits, --preload, or it cannot reach "
			 "the program): use rip enable PID func once it runs",
			 argv[0]);
		status = EXIT_USAGE;
		goto out_free;
	}
	/* Untraced for sure: say so now. */
	if (ret == PROG_PLAN_UNTRACED) {
		tool_err("%s; it runs untraced", s->untraced);
		s->untraced_said = true;
	}
	/* Its allocations cannot be seen: say so now, not with a report of none later. */
	if (ret == PROG_PLAN_OK && (s->o.fam.res & FAM_RES_MEM)) {
		char bin[PATH_MAX];
		const char *fn = prog_own_allocator(argv[0], bin);

		if (fn)
			tool_err("warning: %s defines %s itself, so its calls (and libc's) go "
				 "to the program's allocator ahead of librip-preload.so: --mem "
				 "records only what that allocator passes on to the C library's "
				 "(nothing, for an allocator of its own: it can report its blocks "
				 "through <rip/module.h>, see librip-module(3))",
				 bin, fn);
	}
	s->fam.no_local = s->o.out && !strcmp(s->o.out, "-");
	s->fam.live_ns = relay_live_ns(&s->o.relay);
	if (s->o.out && !s->fam.no_local && lstat(s->o.out, &st) == 0) {
		tool_err("%s exists: traces are never overwritten; choose another with -o",
			 s->o.out);
		goto out_free;
	}
	if (s->o.out && !s->fam.no_local && run_can_create(s->o.out)) {
		tool_err("cannot create %s: %s", s->o.out, strerror(errno));
		goto out_free;
	}
	ret = fam_open(&s->fam);
	if (ret) {
		if (getenv("RIP_DIR") && *getenv("RIP_DIR"))
			tool_err("RIP_DIR=%s: cannot make rip run's directory there: %s (it must "
				 "exist, and be a directory you may write)",
				 getenv("RIP_DIR"), strerror(-ret));
		else
			tool_err("cannot create a directory for the ring file: %s", strerror(-ret));
		goto out_free;
	}
	/*
	 * Before the program, so that it is in our process group first; it
	 * closes every descriptor but its pipe.  Without it, the terminal's
	 * signals are told apart only (runsig_start).
	 */
	runsig_witness();
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
		run_exec(s, go[0], rep[1], argv);
	}
	close(go[0]);
	close(rep[1]);
	go[0] = rep[1] = -1;
	/*
	 * Ours alone (PROG has its own): a summary written to a reader that is
	 * gone (rip run ... 2>&1 | head -1) killed rip with SIGPIPE, which then
	 * exited 141, not PROG's status, and left its ring directory behind.
	 */
	signal(SIGPIPE, SIG_IGN);
	tool_recorder_first(&s->o.fam.store); /* the child has its own priority already */
	s->fam.child = s->child;
	if (s->o.out && !s->fam.no_local)
		snprintf(s->fam.dir, sizeof(s->fam.dir), "%s", s->o.out);
	else
		rec_default_dir(s->fam.dir, sizeof(s->fam.dir), argv[0], s->child);
	if (!s->fam.no_local && lstat(s->fam.dir, &st) == 0) {
		tool_err("%s exists: traces are never overwritten; choose another with -o",
			 s->fam.dir);
		close(go[1]); /* the child exits without running PROG */
		go[1] = -1;
		waitpid(s->child, NULL, 0);
		goto out_dir;
	}
	/* relayd before PROG starts: one that cannot be reached is an error, not a surprise later */
	if (s->o.relay.url && relay_connect(&s->o.relay, s->fam.dir, &s->rly)) {
		close(go[1]); /* the child exits without running PROG */
		go[1] = -1;
		waitpid(s->child, NULL, 0);
		goto out_dir;
	}
	run_child = s->child;
	relayed = !runsig_start(&run_child);
	run_signals(true, relayed);
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
	run_track_missing(s);
	status = run_exit_status(s->status);
	if ((s->failed || s->nofile_failed || s->relay.lost || s->relay.gap) && status == 0)
		status = EXIT_FAIL;
	/*
	 * Killed: its file stays where rip ps PID looks (and rip gc collects it);
	 * the file of the image it exec'd into, when one was followed.
	 */
	if (WIFSIGNALED(s->status) && !fam_keep_last(&s->fam, WTERMSIG(s->status)) &&
	    s->fam.ring[0] && s->fam.rec.f.fd >= 0 &&
	    fam_keep(&s->fam, s->fam.ring, s->fam.rec.f.hdr.pid, s->fam.rec.f.hdr.comm,
		     WTERMSIG(s->status)))
		s->fam.ring[0] = 0;
	/* Its recording failed: its file stays there too, for rip ps and rip snapshot. */
	if (s->failed && s->fam.ring[0] && s->fam.rec.f.hdr.pid > 0 &&
	    fam_keep(&s->fam, s->fam.ring, s->fam.rec.f.hdr.pid, s->fam.rec.f.hdr.comm, -1))
		s->fam.ring[0] = 0;
	fam_cleanup(&s->fam, s->failed);
	run_kept_lines(s);
	goto out_free;

out_dir:
	fam_cleanup(&s->fam, false);
out_free:
	runsig_stop();
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (rep[i] >= 0)
			close(rep[i]);
	}
	fam_free(&s->fam);
	rly_free(s->rly);
	free(s);
	return status;
}
