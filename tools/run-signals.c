/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/run-signals.c - `rip run` passes the signals sent to it on to the
 * program, and each reaches the program once.
 *
 * Many senders signal the program as well as rip: `timeout` kills its child
 * and then its whole process group, systemd a service's whole control group,
 * a script `kill 0`, the terminal its foreground group, the program its own
 * group.  Passed on again, such a signal reached the program twice, and a
 * server whose second SIGTERM means "stop now, no clean-up" behaved
 * otherwise under rip than without it.  A kill of rip alone (a script's
 * `kill $!`, `docker stop` of a container whose first process is rip) must
 * still reach it.  Which is which cannot be told from the signal: the
 * sender, its pid and process group are the same.
 *
 * So a witness tells: a process of ours in our process group (a
 * grandchild: rip run's one child stays the program), which blocks these
 * signals, takes each from a signalfd and writes it down a pipe.  A
 * kill that reached our process group or our control group reached the
 * witness too; one sent to rip alone did not.  The relay thread reads our
 * own signals from a signalfd (every other thread blocks them), and passes
 * each on after RUNSIG_WAIT_NS (more while its sender runs on, up to
 * RUNSIG_WAIT_MAX_NS: it may kill our group next) unless the witness saw it, or has it pending
 * still (it may not have run yet: its status in /proc says), and the
 * program is in our process group.  A program that moved to a group of its
 * own gets it passed on (a group's kill did not reach it).  Without a
 * witness (fork failed, or it was killed), a signal the terminal sent
 * (SI_KERNEL) to our group, the program's too, is not passed on, the rest
 * are, as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rip/proc.h>

#include "tools/run-signals.h"

/* how long a signal to rip waits for the witness's word before it is passed on */
#define RUNSIG_WAIT_NS 10000000ull
/* ... and at most, while its sender runs on (it may kill the group next: timeout does) */
#define RUNSIG_WAIT_MAX_NS 500000000ull
#define RUNSIG_NSIG 65 /* signal numbers 1 .. 64 */

/* what rip passes on: USR1 and USR2 too (their default would kill rip, and the trace with it) */
static const int runsig_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

/* What the witness writes for each signal it takes: a pipe's write of it is atomic. */
struct runsig_seen {
	int32_t sig;
	int32_t code;
};

static struct {
	pid_t witness; /* 0: none */
	int wfd;       /* the witness's reports; -1 once it is gone */
	int life;      /* the witness ends when this closes */
	int sfd;       /* our signals */
	int stop[2];   /* the relay thread ends when stop[0] is readable */
	pthread_t thread;
	bool on;
	volatile sig_atomic_t *child;
} rs = { .wfd = -1, .life = -1, .sfd = -1, .stop = { -1, -1 } };

/* Of runsig_sigs and SIGCHLD, those ignored when rip started (runsig_inherit). */
static sigset_t runsig_ign;

void runsig_inherit(void)
{
	struct sigaction sa;

	sigemptyset(&runsig_ign);
	for (size_t i = 0; i <= sizeof(runsig_sigs) / sizeof(runsig_sigs[0]); i++) {
		int sig = i < sizeof(runsig_sigs) / sizeof(runsig_sigs[0]) ? runsig_sigs[i] :
									     SIGCHLD;

		if (!sigaction(sig, NULL, &sa) && !(sa.sa_flags & SA_SIGINFO) &&
		    sa.sa_handler == SIG_IGN)
			sigaddset(&runsig_ign, sig);
	}
}

bool runsig_ignored(int sig)
{
	return sigismember(&runsig_ign, sig) == 1;
}

/* The signals rip passes on: runsig_sigs, but those it was started with ignored. */
static void runsig_set(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < sizeof(runsig_sigs) / sizeof(runsig_sigs[0]); i++)
		if (!runsig_ignored(runsig_sigs[i]))
			sigaddset(set, runsig_sigs[i]);
}

static uint64_t runsig_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Where our command line lies (/proc/self/stat's arg_start and arg_end),
 * into *lo and *hi; both 0 when it cannot be read.
 */
static void runsig_args(uintptr_t *lo, uintptr_t *hi)
{
	unsigned long long a = 0, b = 0;
	char buf[2048];
	const char *p;
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	*lo = *hi = 0;
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	p = rip_proc_stat_field(buf, 48); /* arg_start, then arg_end */
	if (p && sscanf(p, "%llu %llu", &a, &b) == 2 && a && b > a && b - a < (1u << 20)) {
		*lo = (uintptr_t)a;
		*hi = (uintptr_t)b;
	}
}

/* Close every descriptor but a and b (a < b). */
static void runsig_close_but(int a, int b)
{
	const unsigned x[2] = { (unsigned)a, (unsigned)b };
	unsigned from = 0;

	for (int i = 0; i < 3; i++) {
		unsigned to = i < 2 ? x[i] : ~0u;

		if (to > from && close_range(from, to - 1, 0) && errno == ENOSYS)
			for (unsigned fd = from; fd < to && fd < 4096; fd++)
				close((int)fd);
		from = i < 2 ? x[i] + 1 : from;
	}
}

/*
 * The witness, a grandchild of rip (rip run's one child stays the
 * program, as scripts that look for it by its parent expect): holds
 * nothing of ours but its two pipes, says its pid, reports each signal
 * until life's other end closes (rip is gone, or done with it).  Its
 * command line, rip's (which names the program), is overwritten in its
 * copy of the memory with its name and rip's pid: `pkill -f PROG` would
 * find it, and the witness takes SIGTERM without dying.
 */
static __attribute__((noreturn)) void runsig_witness_main(int out, int life, pid_t rip,
							  uintptr_t lo, uintptr_t hi)
{
	char name[48];
	int n = snprintf(name, sizeof(name), "rip-sigwitness%c%d", 0, (int)rip);
	pid_t me = getpid();
	sigset_t set;
	int sfd;

	if (lo && n > 0 && hi - lo > (size_t)n) {
		memset((void *)lo, 0, hi - lo);
		memcpy((void *)lo, name, (size_t)n + 1);
	}
	runsig_set(&set);
	sigprocmask(SIG_BLOCK, &set, NULL); /* pending until read below: never acted on */
	signal(SIGPIPE, SIG_IGN);	    /* rip gone: a write fails, and we end */
	prctl(PR_SET_NAME, "rip-sigwitness");
	/* not the terminal, nor a pipe rip's reader waits to see closed */
	runsig_close_but(out < life ? out : life, out < life ? life : out);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0 || write(out, &me, sizeof(me)) != (ssize_t)sizeof(me))
		_exit(0);
	for (;;) {
		struct pollfd pf[2] = { { .fd = sfd, .events = POLLIN },
					{ .fd = life, .events = POLLIN } };
		struct signalfd_siginfo si;

		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			_exit(0);
		if (pf[1].revents)
			_exit(0);
		while ((pf[0].revents & POLLIN) &&
		       read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			struct runsig_seen r = { .sig = (int32_t)si.ssi_signo,
						 .code = si.ssi_code };

			if (write(out, &r, sizeof(r)) != (ssize_t)sizeof(r))
				_exit(0);
			break; /* one at a time: poll again (sfd blocks) */
		}
	}
}

int runsig_witness(void)
{
	pid_t rip = getpid(), a, w = 0;
	int p[2], life[2], ret = 0;
	uintptr_t lo, hi;

	runsig_args(&lo, &hi);
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	if (pipe2(life, O_CLOEXEC)) {
		ret = -errno;
		goto out_p;
	}
	a = fork();
	if (a < 0) {
		ret = -errno;
		goto out_life;
	}
	if (!a) {
		close(p[0]);
		close(life[1]);
		if (fork() == 0)
			runsig_witness_main(p[1], life[0], rip, lo, hi);
		_exit(0);
	}
	close(p[1]);
	close(life[0]);
	p[1] = life[0] = -1;
	while (waitpid(a, NULL, 0) < 0 && errno == EINTR)
		;
	/* its pid first; nothing: its fork failed */
	if (read(p[0], &w, sizeof(w)) != (ssize_t)sizeof(w) || w <= 0) {
		ret = -ECHILD;
		goto out_life;
	}
	rs.witness = w;
	rs.wfd = p[0];
	rs.life = life[1];
	return 0;

out_life:
	if (life[0] >= 0)
		close(life[0]);
	close(life[1]);
out_p:
	close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	return ret;
}

/*
 * Does process pid run, or wait for a CPU (R in its /proc stat)?  A sender
 * preempted between its kill of rip and its kill of rip's group (timeout
 * makes the two in a row) is.
 */
static bool runsig_running(pid_t pid)
{
	char state;

	return pid > 0 && rip_proc_start(pid, &state) && state == 'R';
}

/* Has the witness signal s pending (sent, not taken yet)?  Its /proc status says. */
static bool runsig_pending(int s)
{
	char path[64], line[256];
	bool yes = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)rs.witness);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long mask;

		if ((sscanf(line, "ShdPnd: %llx", &mask) == 1 ||
		     sscanf(line, "SigPnd: %llx", &mask) == 1) &&
		    (mask >> (s - 1) & 1))
			yes = true;
	}
	fclose(f);
	return yes;
}

/*
 * Signal s to rip, code its si_code, waited for the witness long enough:
 * passed on unless the same kill reached the program (witnessed: the witness
 * saw it; the program in our process group).
 */
static void runsig_pass(int s, int code, bool witnessed)
{
	pid_t child = *rs.child;

	if (child <= 0)
		return; /* reaped: its pid may be another process's */
	if (rs.wfd < 0 && code == SI_KERNEL)
		witnessed = true; /* the terminal's: sent to our group */
	if (witnessed && getpgid(child) == getpgrp())
		return;
	kill(child, s);
}

/*
 * What the relay knows of one signal.  Like the kernel's, a second signal
 * of a number while one waits is the same one: timeout's kill of rip and
 * its kill of the group are two signals to rip, one to the program.
 */
struct runsig_state {
	bool want;	/* ours, waiting for the witness's word until until */
	bool seen;	/* the witness's, not matched yet, until seen_until */
	uint32_t owed;	/* reports of the witness to come for signals decided already */
	uint64_t first; /* when want came */
	uint64_t until, seen_until;
	uint64_t quiet; /* ours until then belong to the kill the witness saw */
	int code;	/* want's si_code and sender */
	pid_t from;
};

/* Signal s, witnessed or not, decided at now: passed on or not; ours for a while are the same. */
static void runsig_decide(struct runsig_state *st, int s, bool witnessed, uint64_t now)
{
	st->want = false;
	runsig_pass(s, st->code, witnessed);
	if (witnessed)
		st->quiet = now + RUNSIG_WAIT_NS;
}

static void *runsig_main(void *arg)
{
	struct runsig_state sig[RUNSIG_NSIG];

	(void)arg;
	memset(sig, 0, sizeof(sig));
	for (;;) {
		struct pollfd pf[3] = { { .fd = rs.stop[0], .events = POLLIN },
					{ .fd = rs.sfd, .events = POLLIN },
					{ .fd = rs.wfd, .events = POLLIN } };
		uint64_t now = runsig_now(), next = UINT64_MAX;
		int timeout = -1;

		for (int s = 1; s < RUNSIG_NSIG; s++) {
			if (sig[s].want && sig[s].until < next)
				next = sig[s].until;
			if (sig[s].seen && sig[s].seen_until < next)
				next = sig[s].seen_until;
		}
		if (next != UINT64_MAX)
			timeout = next <= now ? 0 : (int)((next - now + 999999) / 1000000);
		if (poll(pf, rs.wfd >= 0 ? 3 : 2, timeout) < 0 && errno != EINTR)
			break;
		if (pf[0].revents)
			break;
		now = runsig_now();
		if (pf[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(rs.sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				struct runsig_state *st;

				if (si.ssi_signo == 0 || si.ssi_signo >= RUNSIG_NSIG)
					continue;
				st = &sig[si.ssi_signo];
				if (st->want || now < st->quiet)
					continue; /* the one waiting, or the one just witnessed */
				st->code = si.ssi_code;
				st->from = (pid_t)si.ssi_pid;
				if (st->seen) { /* the witness saw it first */
					st->seen = false;
					runsig_decide(st, (int)si.ssi_signo, true, now);
					continue;
				}
				st->want = true;
				st->first = now;
				st->until = now + RUNSIG_WAIT_NS;
			}
		}
		if (pf[2].revents) {
			struct runsig_seen r;

			if (read(rs.wfd, &r, sizeof(r)) != (ssize_t)sizeof(r)) {
				close(rs.wfd); /* the witness is gone: as before it */
				rs.wfd = -1;
			} else if (r.sig > 0 && r.sig < RUNSIG_NSIG) {
				struct runsig_state *st = &sig[r.sig];

				if (st->owed) {
					st->owed--; /* decided already, from its pending signals */
				} else if (st->want) {
					runsig_decide(st, r.sig, true, now);
				} else if (now >= st->quiet) {
					st->seen = true;
					st->seen_until = now + RUNSIG_WAIT_NS;
				}
			}
		}
		for (int s = 1; s < RUNSIG_NSIG; s++) {
			struct runsig_state *st = &sig[s];

			if (st->seen && st->seen_until <= now)
				st->seen =
					false; /* the group's, ours coalesced with an earlier one */
			if (!st->want || st->until > now)
				continue;
			/* the witness may not have run yet: a signal pending there was sent to it */
			if (rs.wfd >= 0 && runsig_pending(s)) {
				st->owed++;
				runsig_decide(st, s, true, now);
			} else if (rs.wfd >= 0 && now - st->first < RUNSIG_WAIT_MAX_NS &&
				   runsig_running(st->from)) {
				st->until = now + RUNSIG_WAIT_NS; /* its sender may not be done */
			} else {
				runsig_decide(st, s, false, now);
			}
		}
	}
	return NULL;
}

int runsig_start(volatile sig_atomic_t *child)
{
	sigset_t set, old;
	int ret;

	runsig_set(&set);
	rs.child = child;
	ret = -pthread_sigmask(SIG_BLOCK, &set, &old);
	if (ret)
		return ret;
	rs.sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (rs.sfd < 0) {
		ret = -errno;
		goto out_mask;
	}
	if (pipe2(rs.stop, O_CLOEXEC)) {
		ret = -errno;
		goto out_sfd;
	}
	ret = -pthread_create(&rs.thread, NULL, runsig_main, NULL);
	if (ret)
		goto out_pipe;
	rs.on = true;
	return 0;

out_pipe:
	close(rs.stop[0]);
	close(rs.stop[1]);
	rs.stop[0] = rs.stop[1] = -1;
out_sfd:
	close(rs.sfd);
	rs.sfd = -1;
out_mask:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

void runsig_stop(void)
{
	if (rs.on) {
		if (write(rs.stop[1], "x", 1) != 1)
			pthread_cancel(rs.thread);
		pthread_join(rs.thread, NULL);
		rs.on = false;
		close(rs.stop[0]);
		close(rs.stop[1]);
		close(rs.sfd);
		rs.stop[0] = rs.stop[1] = rs.sfd = -1;
	}
	if (rs.wfd >= 0)
		close(rs.wfd);
	/* the witness ends when it sees life closed (no kill: its pid may be another's by now) */
	if (rs.life >= 0)
		close(rs.life);
	rs.wfd = rs.life = -1;
	rs.witness = 0;
}
