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
 * RIP_CONSUMER=PID:START names us the consumer of every ring file the
 * family creates (the program's, and those of the children and images we
 * follow: the others open none), so their writers block for us from their
 * first event, before we have attached.  A file librip could not create
 * (a full tmpfs) leaves a marker, NAME.failed-ERRNO-BYTES, that we report.
 * The summary gives the program's trace and every child's, with losses.
 *
 * Every dynamically linked program gets librip-preload.so (unless
 * --no-waits): each of its threads takes a slot at birth and its wrappers of
 * blocking calls record what each thread waits in, so that `rip ps PID`
 * works for a program that never heard of librip; its resource hooks only
 * forward then (RIP_RESOURCES=0).  A program the preload library cannot reach (static,
 * secure execution) just runs without it.
 *
 * Resource tracing (--mem, --fd, --shm) preloads librip-preload.so, whose
 * hooks record allocations, descriptors and shared memory with backtraces
 * (rip/resource.h); RIP_DISABLE turns off the categories not asked for, so
 * `rip enable PID mem` can still turn them on later.  A statically linked
 * program cannot be preloaded into: we look at its ELF program headers
 * first and say so rather than record an empty trace.
 *
 * Children and new images: librip gives a forked child a ring file of its
 * own, and an execve'd image a new rip-PID-START.N.ring.  With
 * --follow-fork / --follow-exec each such file is recorded into
 * DIR/PID[.N]/, a trace of its own; files we do not follow are silenced
 * (every category turned off, nobody waited for) and removed at the end.
 *
 * The program keeps our stdin, stdout and stderr, and its exit status is
 * ours (128 + N for a death by signal N).  A SIGINT, SIGTERM, SIGHUP or
 * SIGQUIT sent to us is passed on to it; one from the terminal already
 * reached it (same process group) and is not sent twice.  Either way we
 * keep recording until it exits.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <internal/clock.h>
#include <rip/proc.h>
#include <rip/resource.h>

#include "read/consume.h"
#include "tools/format.h"
#include "tools/relay.h"
#include "tools/tool.h"

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
		 "      --off             preload, but start with all three off: turn them on\n"
		 "                        later with rip enable PID mem (or fd, shm)\n"
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
		 "      --functions       record the calls of code built with\n"
		 "                        -finstrument-functions (rip report --functions);\n"
		 "                        without it only the call stacks are kept (rip ps\n"
		 "                        --stacks), and rip enable PID func records later\n"
		 "                        (code built with -fpatchable-function-entry is\n"
		 "                        traced from rip enable PID func on)\n"
		 "      --follow-fork     trace forked children too, each into DIR/PID/\n"
		 "      --follow-exec     trace the programs exec'd into, into DIR/PID.N/\n"
		 "                        (spawned programs, fork + exec: give both)\n"
		 "\n"
		 "\n" RELAY_HELP
		 "\n"
		 "  -q, --quiet           no summary unless something was lost\n"
		 "  -h, --help            this text\n"
		 "\n"
		 "The trace keeps a copy of PROG's ring file (DIR/.rip-ring) for rip ps DIR;\n"
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

#define RUN_IDLE_MIN_NS 50000L	 /* sleep after a pass that found nothing: at first, */
#define RUN_IDLE_MAX_NS 2000000L /* doubling up to this while there is nothing */
#define RUN_ALIVE_NS 100000000L /* a child that says nothing: /proc is read this often */
#define RUN_ATTACH_NS 20000L	 /* poll for the ring file's magic while it is being created */
/*
 * The directory of unwind rules the family shares (preload/rulecache.c),
 * inside the ring directory: files there are not ring files, and a
 * subdirectory's are not seen by our watch of the ring directory.
 */
#define RUN_RULES_DIR "rules"

#define RUN_RES_MEM 0x1u
#define RUN_RES_FD 0x2u
#define RUN_RES_SHM 0x4u
#define RUN_RES_ALL (RUN_RES_MEM | RUN_RES_FD | RUN_RES_SHM)

struct run_opts {
	const char *out, *mode, *buffer;
	bool preload, quiet;
	unsigned res;	  /* RUN_RES_*: resource tracing asked for */
	bool off;	  /* preload with every resource category off */
	bool follow_fork, follow_exec;
	unsigned depth;	  /* 0: the preload library's default */
	const char *pagemap_signal; /* RIP_PAGEMAP_SIGNAL for the preload library */
	bool no_pagemap;  /* RIP_PAGEMAP=0: no snapshot at exit */
	struct relay_opts relay; /* --relayd */
	unsigned long long buffer_bytes; /* --buffer, 0: librip's default */
	bool waits;	  /* preload librip-preload.so for slots and waits only */
	bool no_waits;	  /* --no-waits: no slots at birth, no wait records (RIP_WAITS=0) */
	unsigned sample;  /* RIP_SAMPLE: CPU samples per second per thread, 0: none */
	bool functions;	  /* --functions: the func category on (function records streamed) */
};

/* Is resource tracing on (the preload library goes in)? */
static bool run_resources(const struct run_opts *o)
{
	return o->res || o->off || o->sample;
}

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

static volatile sig_atomic_t run_chld; /* a SIGCHLD since run_loop last looked */

static void run_on_child(int sig)
{
	(void)sig;
	run_chld = 1; /* and the sleep it interrupts ends */
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
	/*
	 * A child's exit ends run_loop's idle sleep at once (nanosleep is never
	 * restarted after a handler), or the sleep is skipped (run_chld),
	 * instead of waiting up to RUN_IDLE_MAX_NS; SA_RESTART for the rest.
	 */
	if (install) {
		sa.sa_handler = run_on_child;
		sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	}
	sigaction(SIGCHLD, &sa, NULL);
}

/*
 * The TSC's rate for the family (0: not to be used), measured once per boot:
 * kept with the boot's id in $XDG_CACHE_HOME/rip/clock (~/.cache/rip/clock),
 * so that only the first rip run of a boot spends the 5 ms.  The file is
 * read as hostile (its size bounded, the id compared, the rate in range)
 * and replaced whole (a new file renamed over it).
 */
static uint64_t run_clock_hz(void)
{
	const char *base = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char id[40], dir[PATH_MAX], path[PATH_MAX + 16], tmp[PATH_MAX + 48], buf[96];
	unsigned long long hz = 0;
	ssize_t n;
	int fd, len;

	if (!rip_clock_tsc_usable())
		return 0;
	if (base && base[0] == '/')
		len = snprintf(dir, sizeof(dir), "%s/rip", base);
	else if (home && home[0] == '/')
		len = snprintf(dir, sizeof(dir), "%s/.cache/rip", home);
	else
		len = -1;
	rr_boot_id(id, sizeof(id));
	if (len < 0 || (size_t)len >= sizeof(dir) || strlen(id) != 36 || rr_mkdirs(dir))
		return rip_clock_tsc_synced() ? rip_clock_tsc_rate() : 0;
	snprintf(path, sizeof(path), "%s/clock", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd >= 0) {
		char *end;

		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = 0;
		/* "BOOT-ID HZ\n": this boot's, and a rate in range */
		if (!strncmp(buf, id, 36) && buf[36] == ' ' && buf[37] >= '1' && buf[37] <= '9') {
			errno = 0;
			hz = strtoull(buf + 37, &end, 10);
			if (!errno && *end == '\n' && hz >= RIP_CLOCK_HZ_MIN && hz <= RIP_CLOCK_HZ_MAX)
				return hz;
		}
	}
	/* once per boot: the TSC must not go back from one CPU to another */
	hz = rip_clock_tsc_synced() ? rip_clock_tsc_rate() : 0;
	if (!hz)
		return 0;
	snprintf(tmp, sizeof(tmp), "%s/.clock.%ld", dir, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		len = snprintf(buf, sizeof(buf), "%s %llu\n", id, hz);
		n = write(fd, buf, (size_t)len);
		close(fd);
		if (n != len || rename(tmp, path))
			unlink(tmp);
	}
	return hz;
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
		if (snprintf(buf, len, "%s/" RR_RUN_DIR_PREFIX "XXXXXX", dirs[i]) >= (int)len)
			continue;
		if (mkdtemp(buf))
			return 0;
	}
	return -errno;
}

/* A library next to the rip binary (the build tree), else in the install libdir. */
static int run_find_lib(const char *name, char *buf, size_t len)
{
	static const char *const rel[] = { "", "../lib/", "../lib64/", "../" };
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

		snprintf(cand, sizeof(cand), "%s/%s%s", self, rel[i], name);
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

/*
 * Is name a ring file name, rip-PID-START[.N].ring?  Its pid (0 if not),
 * and N in *gen (0 for the first image of the process).
 */
static pid_t run_ring_name(const char *name, unsigned *gen)
{
	size_t n = strlen(name);
	long pid;
	char *end;

	*gen = 0;
	if (strncmp(name, "rip-", 4) || n < 10 || strcmp(name + n - 5, ".ring"))
		return 0;
	pid = strtol(name + 4, &end, 10);
	if (*end != '-' || pid <= 0)
		return 0;
	strtoull(end + 1, &end, 10);
	if (*end == '.' && end[1] != 'r')
		*gen = (unsigned)strtoul(end + 1, NULL, 10);
	return (pid_t)pid;
}

/*
 * The ring file to record: the program's own first image, else its first
 * one that appeared, else any (a wrapper's child).  Fills path; counts
 * every ring file in *n.
 */
static bool run_find_ring(const char *dir, pid_t child, char *path, size_t len, int *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int best = 0; /* 3: child's first image, 2: child's later image, 1: another's */
	unsigned best_gen = 0;

	*n = 0;
	if (!d)
		return false;
	while ((e = readdir(d))) {
		unsigned gen;
		pid_t pid = run_ring_name(e->d_name, &gen);
		int rank;

		if (!pid)
			continue;
		(*n)++;
		rank = pid != child ? 1 : gen ? 2 : 3;
		if ((rank > best || (rank == 2 && best == 2 && gen < best_gen)) &&
		    snprintf(path, len, "%s/%s", dir, e->d_name) < (int)len) {
			best = rank;
			best_gen = gen;
		}
	}
	closedir(d);
	return best > 0;
}

/* ---- statically linked programs ---------------------------------------------------- */

/* PROG as execvp would find it. */
static int run_which(const char *prog, char *buf, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(prog, '/'))
		return snprintf(buf, len, "%s", prog) < (int)len ? 0 : -ENAMETOOLONG;
	if (!path)
		path = "/bin:/usr/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		if (snprintf(buf, len, "%.*s%s%s", (int)n, n ? path : ".", "/", prog) < (int)len &&
		    access(buf, X_OK) == 0)
			return 0;
		path += n + (path[n] == ':');
	}
	return -ENOENT;
}

/*
 * Does the ELF file at fd load a dynamic linker, or need shared libraries?
 * 1 yes, 0 no (static), -1 not an ELF file we understand.
 */
static int run_elf_dynamic(int fd)
{
	unsigned char id[EI_NIDENT];
	Elf64_Ehdr eh;
	bool is64;

	if (pread(fd, id, sizeof(id), 0) != (ssize_t)sizeof(id) || memcmp(id, ELFMAG, SELFMAG))
		return -1;
	is64 = id[EI_CLASS] == ELFCLASS64;
	if (is64) {
		if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
			return -1;
	} else {
		Elf32_Ehdr e32;

		if (id[EI_CLASS] != ELFCLASS32 || pread(fd, &e32, sizeof(e32), 0) != (ssize_t)sizeof(e32))
			return -1;
		eh.e_phoff = e32.e_phoff;
		eh.e_phnum = e32.e_phnum;
		eh.e_phentsize = e32.e_phentsize;
	}
	if (eh.e_phentsize != (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) || eh.e_phnum > 4096)
		return -1;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		uint64_t type, off, size;
		off_t at = (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize);

		if (is64) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), at) != (ssize_t)sizeof(ph))
				return -1;
			type = ph.p_type, off = ph.p_offset, size = ph.p_filesz;
		} else {
			Elf32_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), at) != (ssize_t)sizeof(ph))
				return -1;
			type = ph.p_type, off = ph.p_offset, size = ph.p_filesz;
		}
		if (type == PT_INTERP)
			return 1;
		if (type != PT_DYNAMIC)
			continue;
		/* static-pie has a dynamic section but needs nothing */
		for (uint64_t o = 0; o + (is64 ? 16 : 8) <= size && o < (1u << 20);
		     o += is64 ? 16 : 8) {
			int64_t tag;

			if (is64) {
				Elf64_Dyn d;

				if (pread(fd, &d, sizeof(d), (off_t)(off + o)) != (ssize_t)sizeof(d))
					break;
				tag = d.d_tag;
			} else {
				Elf32_Dyn d;

				if (pread(fd, &d, sizeof(d), (off_t)(off + o)) != (ssize_t)sizeof(d))
					break;
				tag = d.d_tag;
			}
			if (tag == DT_NEEDED)
				return 1;
			if (tag == DT_NULL)
				break;
		}
	}
	return 0;
}

/*
 * Will the kernel run the program at path in secure-execution mode
 * (AT_SECURE), where the dynamic loader ignores an LD_PRELOAD path?  That is
 * when exec changes our credentials: set-user-ID to another user,
 * set-group-ID (with group execute) to another group, or file capabilities
 * for a user other than root; not on a file system mounted nosuid.  What it
 * is, for the message, or NULL.
 */
static const char *run_secure_exec(const char *path)
{
	struct statvfs vfs;
	struct stat st;

	if (stat(path, &st) || (statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOSUID)))
		return NULL;
	if ((st.st_mode & S_ISUID) && st.st_uid != getuid())
		return st.st_uid ? "set-user-ID (to its owner)" : "set-user-ID root";
	if ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) && st.st_gid != getgid())
		return "set-group-ID";
	if (getuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0)
		return "given file capabilities (setcap)";
	return NULL;
}

/* Does the file at path hold librip's magic (a static program that links librip)? */
static bool run_has_librip(const char *path)
{
	static char buf[1 << 20];
	const size_t tail = sizeof(RIP_MAGIC) - 1; /* kept from a chunk for a magic across two */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t have = 0;
	bool found = false;
	ssize_t n = 0;

	if (fd < 0)
		return true; /* cannot tell: say nothing yet */
	while (!found && (n = read(fd, buf + have, sizeof(buf) - have)) > 0) {
		have += (size_t)n;
		found = memmem(buf, have, RIP_MAGIC, sizeof(RIP_MAGIC)) != NULL;
		if (have > tail) {
			memmove(buf, buf + have - tail, tail);
			have = tail;
		}
	}
	close(fd);
	return found || n < 0;
}

enum { RUN_PRELOADABLE, RUN_STATIC, RUN_SECURE };

/*
 * Can LD_PRELOAD reach PROG?  RUN_STATIC when it is statically linked,
 * RUN_SECURE when the loader will ignore LD_PRELOAD for it (secure
 * execution), with the message in why and the file in path.  A script is
 * judged by its interpreter; what we cannot read or do not understand is
 * left to execve.
 */
static int run_preloadable(const char *prog, char *why, size_t len, char *path)
{
	char line[PATH_MAX];
	int fd, dyn;

	if (run_which(prog, path, PATH_MAX))
		return RUN_PRELOADABLE; /* execvp reports it */
	for (int depth = 0; depth < 2; depth++) {
		ssize_t n;

		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return RUN_PRELOADABLE;
		dyn = run_elf_dynamic(fd);
		n = dyn < 0 ? pread(fd, line, sizeof(line) - 1, 0) : 0;
		close(fd);
		if (dyn == 0) {
			snprintf(why, len,
				 "%s is statically linked: LD_PRELOAD cannot trace it (link it "
				 "dynamically, or link librip and emit events yourself)",
				 depth ? path : prog);
			return RUN_STATIC;
		}
		if (dyn > 0) {
			const char *what = run_secure_exec(path);

			if (!what)
				return RUN_PRELOADABLE;
			snprintf(why, len,
				 "%s is %s: the dynamic loader ignores LD_PRELOAD for it (secure "
				 "execution), so rip cannot trace it as you; run rip as the user it "
				 "becomes (root for file capabilities), or trace a copy without that "
				 "privilege",
				 depth ? path : prog, what);
			return RUN_SECURE;
		}
		if (n < 3 || line[0] != '#' || line[1] != '!')
			return true;
		/* #!interpreter: check that instead */
		line[n] = 0;
		{
			char *p = line + 2, *end;

			p += strspn(p, " \t");
			end = p + strcspn(p, " \t\n");
			*end = 0;
			if (!*p || snprintf(path, PATH_MAX, "%s", p) >= PATH_MAX)
				return RUN_PRELOADABLE;
		}
	}
	return RUN_PRELOADABLE;
}

/* Wait until the header is complete: librip stores the magic last. */
/* Another ring file in our directory: a child's or a new image's. */
struct run_sub {
	char name[NAME_MAX + 1];
	pid_t pid;
	unsigned gen;
	bool follow;   /* recorded into DIR/PID[.N]/; else silenced */
	bool active;   /* being recorded */
	bool done;     /* finished (or given up): nothing more to do */
	bool recorded; /* its trace was written: the figures below are its */
	bool cut;      /* the process still ran when we finished its trace */
	char comm[17]; /* the process's name, from its ring file */
	uint64_t events, lost, corrupt;
	int64_t alive_ns; /* when rr_alive last said it runs (run_sub_gone) */
	struct rec rec;
	char dir[PATH_MAX];
};

struct run_state {
	struct run_opts o;
	struct rec rec;
	char ringdir[PATH_MAX], ring[PATH_MAX], dir[PATH_MAX], lib[PATH_MAX];
	pid_t child, main_pid;
	int status;
	bool exited, failed, rescan;
	int inotify;
	struct run_sub **subs;
	size_t nsubs;
	unsigned sub_traces, sub_failed;
	/* Ring files librip could not create (its *.failed-ERRNO-BYTES markers): */
	bool main_nofile;		/* the program's own: main_err, main_need say why */
	int main_err, sub_err;		/* the error, the first child's */
	unsigned long long main_need, sub_need;
	unsigned sub_nofile;		/* children and images that have no trace for it */
	bool nofile_failed;		/* the program's could not be created: we fail */
	struct rly *rly;		/* relayd, connected before PROG starts */
	bool relay_lost;		/* and lost since: we fail, the local trace is whole */
	bool relay_gap;			/* lost, then connected again: we fail too */
	bool no_local;			/* -o -: relayd only */
	int64_t next_tick;		/* the next live period's end (CLOCK_MONOTONIC ns) */
	int ringdir_lock;		/* held while we live: rip gc leaves the directory alone */
	char untraced[PATH_MAX + 400];	/* why LD_PRELOAD cannot reach PROG, if it cannot */
	bool untraced_said;		/* and that was said at the start */
	char exec_img[PATH_MAX];	/* the image the program exec'd into, not followed */
	int64_t exec_next;		/* when to look for one next (CLOCK_MONOTONIC ns) */
};

#define RUN_EXEC_NS 10000000L /* how often to look for an exec we do not follow */

/*
 * Did the program exec an image we do not follow (one that loads no
 * librip: a shim that execs the real program)?  Its path, looked for now
 * and then while it runs; exited (not reaped yet), the name of its last.
 */
static void run_exec_check(struct run_state *s, bool exited)
{
	char img[PATH_MAX];
	int64_t now = rr_mono_ns();

	if (s->o.follow_exec || s->rec.f.fd < 0 || (!exited && now < s->exec_next))
		return;
	s->exec_next = now + RUN_EXEC_NS;
	/* a path seen while it ran says more than a name at the end (of a symbolic link, often) */
	if ((!exited || !s->exec_img[0]) &&
	    rr_exec_image(&s->rec.f, s->child, exited, img, sizeof(img)) == 1)
		snprintf(s->exec_img, sizeof(s->exec_img), "%s", img);
}

/* Has the program exited?  Reaps it (and forgets its pid: no signal goes to a reused one). */
static bool run_reap(struct run_state *s, int flags)
{
	siginfo_t si;
	pid_t p;

	if (s->exited)
		return true;
	memset(&si, 0, sizeof(si));
	if (!s->o.follow_exec && s->rec.f.fd >= 0 &&
	    !waitid(P_PID, (id_t)s->child, &si, WEXITED | WNOHANG | WNOWAIT) &&
	    si.si_pid == s->child)
		run_exec_check(s, true); /* exited: what it ran last, before it is reaped */
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
	static const char *const cats[] = { "1", "2", "3" }; /* RIP_CAT_MEM, _FD, _SHM */
	char disable[16] = "";
	char ring[PATH_MAX + 2], pre[2 * PATH_MAX + 2], rules[PATH_MAX];
	const char *old = getenv("LD_PRELOAD");
	char c;
	int e;

	run_signals(false);
	/*
	 * The TSC's rate, found once here for every process of the family,
	 * instead of 5 ms in each (internal/clock.h).
	 */
	if (!rip_clock_env_hz()) {
		uint64_t hz = run_clock_hz();
		char v[24];

		if (hz) {
			snprintf(v, sizeof(v), "%" PRIu64, hz);
			setenv(RIP_CLOCK_HZ_ENV, v, 1);
		} else if (rip_clock_tsc_usable()) {
			/* usable by its flags, but not here (it goes back across CPUs): nobody uses it */
			setenv("RIP_CLOCK", "mono", 1);
		}
	}
	if (read(go, &c, 1) != 1)
		_exit(127); /* rip gave up before starting PROG */
	snprintf(ring, sizeof(ring), "%s/", ringdir);
	setenv("RIP_RING", ring, 1);
	setenv("RIP_MODE", o->mode, 1);
	/*
	 * Ask librip to count us as every ring's consumer from the first event
	 * (read when a ring file is created, by the program and by every child
	 * and image we follow): without it, what they emit before we attach
	 * would be overwritten.  Our start time tells us from a later process
	 * with our pid.
	 */
	{
		char state;

		snprintf(pre, sizeof(pre), "%d:%llu", (int)getppid(),
			 (unsigned long long)rip_proc_start((int)getppid(), &state));
		setenv("RIP_CONSUMER", pre, 1);
	}
	if (o->buffer)
		setenv("RIP_EVENT_RING_SIZE", o->buffer, 1);
	if (o->relay.url && !getenv("RIP_EVENT_PACKET_SIZE") &&
	    (o->buffer || !getenv("RIP_EVENT_RING_SIZE"))) {
		/*
		 * To relayd, bigger packets: each costs an index and a write there
		 * (16 KiB packets halve the rate of 64 KiB ones on loopback).  A
		 * quarter of the ring at most, so that writers still overlap rip.
		 */
		unsigned long long rsize = o->buffer_bytes ? o->buffer_bytes : 256u << 10;
		char ps[24];

		snprintf(ps, sizeof(ps), "%llu", rsize / 4 < 65536 ? rsize / 4 : 65536);
		setenv("RIP_EVENT_PACKET_SIZE", ps, 1);
	}
	if (run_resources(o)) {
		/* By number: the names are the preload library's to register. */
		for (int i = 0; i < 3; i++) {
			if (!o->off && (o->res & (1u << i)))
				continue;
			if (disable[0])
				strcat(disable, ",");
			strcat(disable, cats[i]);
		}
		if (disable[0])
			setenv("RIP_DISABLE", disable, 1);
		else
			unsetenv("RIP_DISABLE");
		if (o->depth) {
			char depth[16];

			snprintf(depth, sizeof(depth), "%u", o->depth);
			setenv("RIP_DEPTH", depth, 1);
		}
		if (o->pagemap_signal)
			setenv("RIP_PAGEMAP_SIGNAL", o->pagemap_signal, 1);
		if (o->no_pagemap)
			setenv("RIP_PAGEMAP", "0", 1);
		if (o->no_waits)
			setenv("RIP_WAITS", "0", 1);
		/* unwind rules computed once for the family (run_rules_dir made it) */
		if (snprintf(rules, sizeof(rules), "%s/" RUN_RULES_DIR, ringdir) < (int)sizeof(rules) &&
		    !access(rules, W_OK))
			setenv("RIP_RULE_CACHE", rules, 1);
	} else if (o->waits) {
		/*
		 * Slots and waits only: the resource hooks forward and leave the
		 * categories alone, for a program that emits such events itself.
		 */
		setenv("RIP_RESOURCES", "0", 1);
	}
	if (o->sample) {
		char hz[16];

		snprintf(hz, sizeof(hz), "%u", o->sample);
		setenv("RIP_SAMPLE", hz, 1);
	} else {
		unsetenv("RIP_SAMPLE");
	}
	if (!o->functions) {
		/* Function records (category 6, func) only when asked for: shadow stacks are kept. */
		const char *d = getenv("RIP_DISABLE");
		char off[256];

		snprintf(off, sizeof(off), "%s%s6", d && *d ? d : "", d && *d ? "," : "");
		setenv("RIP_DISABLE", off, 1);
	}
	{
		/*
		 * What is not recorded is best not traced at all: a forked child or
		 * an exec'd image we do not follow opens no ring file (librip reads
		 * these two in its constructor).
		 */
		char root[16];

		setenv("RIP_FOLLOW",
		       o->follow_fork ? (o->follow_exec ? "fork,exec" : "fork")
				      : (o->follow_exec ? "exec" : "none"),
		       1);
		snprintf(root, sizeof(root), "%d", (int)getpid());
		setenv("RIP_ROOT", root, 1);
	}
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

/*
 * Is s a signal librip-preload.so takes for RIP_PAGEMAP_SIGNAL: USR1, USR2,
 * HUP, URG, PWR, WINCH, TTIN, TTOU (SIG prefix allowed), RTMIN or RTMIN+N,
 * or a number other than KILL and STOP?
 */
static bool run_signal_name(const char *s)
{
	static const char *const names[] = { "USR1", "USR2", "HUP",  "URG",
					     "PWR",  "WINCH", "TTIN", "TTOU" };
	char *end;
	long v;

	if (!strncmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return true;
	if (!strncmp(s, "RTMIN", 5)) {
		if (!s[5])
			return true;
		v = s[5] == '+' && s[6] >= '0' && s[6] <= '9' ? strtol(s + 6, &end, 10) : -1;
		return v >= 0 && !*end && SIGRTMIN + v <= SIGRTMAX;
	}
	v = strtol(s, &end, 10);
	return end != s && !*end && v > 0 && v < NSIG && v != SIGKILL && v != SIGSTOP;
}

/* Make it (a failure only costs speed: every process computes its rules). */
static void run_rules_dir(const char *ringdir)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/" RUN_RULES_DIR, ringdir) < (int)sizeof(path))
		mkdir(path, 0700);
}

/* Remove the rules directory and what it holds. */
static void run_rules_cleanup(const char *ringdir)
{
	char path[PATH_MAX];
	DIR *d;
	struct dirent *e;

	if (snprintf(path, sizeof(path), "%s/" RUN_RULES_DIR, ringdir) >= (int)sizeof(path))
		return;
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	rmdir(path);
}

/* A ring file that outlives us (rr_run_dir_release), for the last lines. */
struct run_kept {
	pid_t pid;
	char comm[17];
	char path[PATH_MAX];
	int sig; /* the program's, killed by this signal; 0: a process that still runs */
};

static struct run_kept *run_kept;
static size_t run_nkept;

/* Move the ring file at path up into the ring directory, where it stays; false if it cannot. */
static bool run_keep(const char *path, pid_t pid, const char *comm, int sig)
{
	struct run_kept *v = realloc(run_kept, (run_nkept + 1) * sizeof(*v)), *k;
	int ret;

	if (!v)
		return false;
	run_kept = v;
	k = &v[run_nkept];
	ret = rr_run_dir_release(path, k->path, sizeof(k->path));
	if (ret) {
		tool_err("cannot keep %s: %s", path, strerror(-ret));
		return false;
	}
	k->pid = pid;
	k->sig = sig;
	snprintf(k->comm, sizeof(k->comm), "%.16s", comm && *comm ? comm : "?");
	run_nkept++;
	return true;
}

/*
 * Remove our ring file and directory.  A complete ring file of a live
 * process found there (one made after our last look: a daemon's child) is
 * kept; anything else left (a file being created) is named.
 */
static void run_cleanup_ringdir(const char *dir, const char *recorded, bool keep)
{
	DIR *d;
	struct dirent *e;

	if (recorded && *recorded && !keep)
		unlink(recorded);
	run_rules_cleanup(dir);
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		char path[PATH_MAX + NAME_MAX + 2], err[RR_ERR_MAX];
		struct rr_file f;

		if (!rr_ring_name_pid(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!rr_is_ring(path) || rr_open(path, &f, err, sizeof(err)))
			continue;
		if (rr_alive(&f) == 1)
			run_keep(path, f.hdr.pid, f.hdr.comm, 0);
		rr_close(&f);
	}
	if (d)
		closedir(d);
	if (rmdir(dir) && errno != ENOENT)
		tool_err("note: files of other processes (PROG's children, still being created?) "
			 "were left in %s: rip ls and rip gc see them there",
			 dir);
}

/* The last lines: the ring files that stay, and what to do with them. */
static void run_kept_lines(const char *trace, bool trace_ring)
{
	for (size_t i = 0; i < run_nkept; i++) {
		const struct run_kept *k = &run_kept[i];

		if (k->sig)
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
	free(run_kept);
	run_kept = NULL;
	run_nkept = 0;
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
		{ "mem", no_argument, NULL, 'M' },
		{ "fd", no_argument, NULL, 'F' },
		{ "shm", no_argument, NULL, 'S' },
		{ "all", no_argument, NULL, 'A' },
		{ "off", no_argument, NULL, 'O' },
		{ "depth", required_argument, NULL, 'd' },
		{ "pagemap-signal", required_argument, NULL, 'P' },
		{ "no-pagemap", no_argument, NULL, 'N' },
		{ "follow-fork", no_argument, NULL, 'f' },
		{ "follow-exec", no_argument, NULL, 'e' },
		RELAY_LONGOPTS,
		{ "no-waits", no_argument, NULL, 'W' },
		{ "sample", optional_argument, NULL, 's' },
		{ "functions", no_argument, NULL, 'U' },
		{ 0 },
	};
	int c, ret;

	memset(o, 0, sizeof(*o));
	relay_opts_init(&o->relay);
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
			o->buffer_bytes = v;
			break;
		}
		case 'p':
			o->preload = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'M':
			o->res |= RUN_RES_MEM;
			break;
		case 'F':
			o->res |= RUN_RES_FD;
			break;
		case 'S':
			o->res |= RUN_RES_SHM;
			break;
		case 'A':
			o->res |= RUN_RES_ALL;
			break;
		case 'O':
			o->off = true;
			break;
		case 'd': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || !*optarg || v < 1 || v > RIP_BT_MAX_DEPTH)
				return tool_usage_error(&cmd_run_def,
							"--depth wants a number of frames from 1 to "
							"%u, not '%s'",
							RIP_BT_MAX_DEPTH, optarg);
			o->depth = (unsigned)v;
			break;
		}
		case 'P':
			if (!run_signal_name(optarg))
				return tool_usage_error(&cmd_run_def,
							"--pagemap-signal wants USR1, USR2, RTMIN+N or "
							"a signal number, not '%s'",
							optarg);
			o->pagemap_signal = optarg;
			break;
		case 'N':
			o->no_pagemap = true;
			break;
		case 'f':
			o->follow_fork = true;
			break;
		case 's': {
			char *end;
			unsigned long v = optarg ? strtoul(optarg, &end, 10) : 100;

			if (optarg && (*end || !*optarg || v < 1 || v > 1000))
				return tool_usage_error(&cmd_run_def,
							"--sample wants a rate from 1 to 1000 (samples "
							"per second of CPU time), not '%s'",
							optarg);
			o->sample = (unsigned)v;
			break;
		}
		case 'e':
			o->follow_exec = true;
			break;
		case 'W':
			o->no_waits = true;
			break;
		case 'U':
			o->functions = true;
			break;
		case 'h':
			tool_help(&cmd_run_def);
			return -1;
		case RELAY_OPT_URL:
		case RELAY_OPT_SESSION:
		case RELAY_OPT_HOSTNAME:
		case RELAY_OPT_LIVE:
			ret = relay_opt(&cmd_run_def, &o->relay, c, optarg);
			if (ret)
				return ret;
			break;
		case '?':
		default:
			return tool_usage_error(&cmd_run_def, "unknown option '%s'",
						argv[optind - 1]);
		}
	}
	ret = relay_check(&cmd_run_def, &o->relay);
	if (ret)
		return ret;
	if (o->out && !strcmp(o->out, "-") && !o->relay.url)
		return tool_usage_error(&cmd_run_def,
					"-o - writes no trace: it is for --relayd=URL only");
	if (optind == argc)
		return tool_usage_error(&cmd_run_def,
					"which program? rip run [options] -- PROG [ARGS...]");
	if (o->depth && !run_resources(o))
		return tool_usage_error(&cmd_run_def,
					"--depth is for resource tracing: add --mem, --fd, --shm "
					"or --all");
	if ((o->pagemap_signal || o->no_pagemap) && !(o->res & RUN_RES_MEM) && !o->off)
		return tool_usage_error(&cmd_run_def,
					"--pagemap-signal and --no-pagemap are for memory tracing: "
					"add --mem");
	return 0;
}

/*
 * Is name librip's marker of a ring file it could not create,
 * RING.failed-ERRNO-BYTES?  Its pid (0 if not), with the error and the
 * bytes the file needed.
 */
static pid_t run_failed_name(const char *name, int *err, unsigned long long *need)
{
	const char *m = strstr(name, ".ring.failed-");
	char ring[NAME_MAX + 1], *end;
	unsigned gen;
	pid_t pid;
	long e;

	if (!m || (size_t)(m - name) + 5 >= sizeof(ring))
		return 0;
	snprintf(ring, sizeof(ring), "%.*s", (int)(m - name) + 5, name);
	pid = run_ring_name(ring, &gen);
	e = strtol(m + 13, &end, 10);
	if (!pid || *end != '-' || e <= 0 || e > 4095)
		return 0;
	*need = strtoull(end + 1, &end, 10);
	if (*end)
		return 0;
	*err = (int)e;
	return pid;
}

/*
 * Take librip's markers of ring files it could not create (removing them):
 * the program's own before we attached to it, else a child's or a new
 * image's, counted.
 */
static void run_take_failed(struct run_state *s, bool attached)
{
	DIR *d = opendir(s->ringdir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[PATH_MAX + NAME_MAX + 2];
		unsigned long long need;
		int err;
		pid_t pid = run_failed_name(e->d_name, &err, &need);

		if (!pid)
			continue;
		snprintf(path, sizeof(path), "%s/%s", s->ringdir, e->d_name);
		unlink(path);
		if (!attached && pid == s->child) {
			s->main_nofile = true;
			s->main_err = err;
			s->main_need = need;
		} else {
			if (!s->sub_nofile++) {
				s->sub_err = err;
				s->sub_need = need;
			}
		}
	}
	closedir(d);
}

/* The directory the user chose for ring files: our private one's parent. */
static void run_ring_parent(const struct run_state *s, char *buf, size_t len)
{
	const char *slash = strrchr(s->ringdir, '/');

	snprintf(buf, len, "%.*s", slash && slash != s->ringdir ? (int)(slash - s->ringdir) : 1,
		 slash ? s->ringdir : ".");
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
	if (statvfs(s->ringdir, &vfs) == 0)
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
	int nfiles, ret;

	if (!run_find_ring(s->ringdir, s->child, s->ring, sizeof(s->ring), &nfiles))
		return false;
	/* It is being created: the header takes a few ms; poll it closely. */
	while (!rr_is_ring(s->ring)) {
		if (access(s->ring, F_OK) && errno == ENOENT) {
			/* Its creator gave up (no space: see run_take_failed). */
			s->ring[0] = 0;
			return false;
		}
		if (run_reap(s, WNOHANG))
			break;
		run_sleep(RUN_ATTACH_NS);
	}
	{
		const char *base = strrchr(s->ring, '/');
		unsigned gen;

		s->main_pid = run_ring_name(base ? base + 1 : s->ring, &gen);
		s->rescan = true; /* others may be there already */
	}
	ret = rec_attach(&s->rec, s->ring, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		s->failed = true;
		return true;
	}
	ret = s->no_local ? 0 : rec_open_trace(&s->rec, s->dir, err, sizeof(err));
	if (!ret && s->rly) {
		s->rec.rly_linger_ms = relay_linger_ms(&s->o.relay);
		ret = rec_relayd(&s->rec, s->rly, err, sizeof(err));
		s->rly = NULL; /* the recorder's now */
		if (ret && !s->no_local) {
			/* relayd went away already: the local trace goes on */
			tool_err("%s; streaming to relayd stops, the local trace goes on", err);
			s->relay_lost = true;
			rly_free(s->rec.rly);
			s->rec.rly = NULL;
			ret = 0;
		}
	}
	if (ret) {
		tool_err("%s", err);
		rec_close(&s->rec);
		s->failed = true;
	}
	return true;
}

#define RUN_SUB_LINES 10 /* child traces listed one per line; past that, those with loss */

/* One line on a child's trace. */
static void run_sub_line(const struct run_state *s, const struct run_sub *sub)
{
	const char *base = strrchr(sub->dir, '/');

	fprintf(stderr, "%s run:   %s (%s): %llu events, %llu lost", rip_prog,
		base ? base + 1 : sub->dir, sub->comm[0] ? sub->comm : "?",
		(unsigned long long)sub->events, (unsigned long long)sub->lost);
	if (sub->corrupt)
		fprintf(stderr, ", %llu corrupt packets skipped", (unsigned long long)sub->corrupt);
	if (sub->cut)
		fprintf(stderr, "; still running when the program exited: recorded until then");
	fputc('\n', stderr);
}

static void run_summary(struct run_state *s)
{
	const struct rec_stats *st = &s->rec.st;
	uint64_t lost = rec_lost_events(&s->rec), sub_events = 0, sub_lost = 0;
	unsigned lossy = 0, shown = 0, cut = 0;
	bool sub_bad;
	char b[32];

	for (size_t i = 0; i < s->nsubs; i++) {
		const struct run_sub *sub = s->subs[i];

		if (!sub->recorded)
			continue;
		sub_events += sub->events;
		sub_lost += sub->lost;
		lossy += sub->lost || sub->corrupt;
		cut += sub->cut;
	}
	sub_bad = lossy || s->sub_failed || s->sub_nofile;
	if (s->o.quiet && !lost && !st->corrupt && !sub_bad && !st->samples_lost &&
	    !s->rec.smp_err[0])
		return;
	if (s->rec.rly && !s->relay_lost && !s->relay_gap) {
		char where[PATH_MAX + 300];

		relay_where(&s->o.relay, s->rec.rly, where, sizeof(where));
		fprintf(stderr, "%s run: streamed to %s\n", rip_prog, where);
	}
	fprintf(stderr, "%s run: %llu events (%s) recorded in %s%s, %llu lost", rip_prog,
		(unsigned long long)st->events, fmt_bytes(st->bytes, b, sizeof(b)),
		s->no_local ? "relayd only" : s->dir, s->no_local ? "" : "/",
		(unsigned long long)lost);
	if (st->lost_packets)
		fprintf(stderr, " (%llu packets overwritten before rip read them)",
			(unsigned long long)st->lost_packets);
	if (st->corrupt)
		fprintf(stderr, ", %llu corrupt packets skipped", (unsigned long long)st->corrupt);
	fputc('\n', stderr);
	if (st->samples || st->samples_lost || s->rec.smp_err[0])
		fprintf(stderr, "%s run: %llu CPU samples of them%s%s%s, %llu lost%s%s\n", rip_prog,
			(unsigned long long)st->samples, s->no_local ? "" : " (rip top ",
			s->no_local ? "" : s->dir, s->no_local ? "" : ")",
			(unsigned long long)st->samples_lost, s->rec.smp_err[0] ? ": " : "",
			s->rec.smp_err);
	if (s->sub_traces) {
		fprintf(stderr,
			"%s run: %u child trace%s (children, new images) in %s/PID[.N]/: %llu "
			"events, %llu lost\n",
			rip_prog, s->sub_traces, s->sub_traces == 1 ? "" : "s", s->dir,
			(unsigned long long)sub_events, (unsigned long long)sub_lost);
		/* Every one when they are few; else those that lost events. */
		for (size_t i = 0; i < s->nsubs; i++) {
			const struct run_sub *sub = s->subs[i];
			bool bad = sub->lost || sub->corrupt || sub->cut;

			if (!sub->recorded || (s->sub_traces > RUN_SUB_LINES && !bad) ||
			    (s->o.quiet && !bad))
				continue;
			if (shown++ == RUN_SUB_LINES && s->sub_traces > RUN_SUB_LINES) {
				fprintf(stderr, "%s run:   ... and more: rip report DIR/PID shows each\n",
					rip_prog);
				break;
			}
			run_sub_line(s, sub);
		}
	}
	if (s->sub_failed)
		fprintf(stderr, "%s run: %u child trace%s could not be recorded (see above)\n",
			rip_prog, s->sub_failed, s->sub_failed == 1 ? "" : "s");
	if (s->sub_nofile) {
		char why[PATH_MAX + 200];

		run_nofile_why(s, s->sub_err, s->sub_need,
			       s->sub_nofile == 1 ? "its ring file" : "their ring files",
			       s->sub_nofile == 1 ? "" : "each ", why, sizeof(why));
		fprintf(stderr, "%s run: warning: %u child%s or new image%s not traced: %s\n",
			rip_prog, s->sub_nofile, s->sub_nofile == 1 ? "" : "ren",
			s->sub_nofile == 1 ? " was" : "s were", why);
	}
	if (lossy)
		fprintf(stderr, "%s run: warning: %u child trace%s incomplete: events were lost%s\n",
			rip_prog, lossy, lossy == 1 ? " is" : "s are",
			s->sub_traces > RUN_SUB_LINES ? " (listed above)" : "");
	if (cut && !s->o.quiet)
		fprintf(stderr,
			"%s run: %u child%s still running when the program exited: %s recorded "
			"until then\n",
			rip_prog, cut, cut == 1 ? " was" : "ren were", cut == 1 ? "its trace is" :
			"their traces are");
	if (lost && st->noring)
		fprintf(stderr,
			"%s run: %llu events found no free event ring (more threads emitting at "
			"once than RIP_EVENT_RINGS + RIP_EVENT_SMALL_RINGS)\n",
			rip_prog, (unsigned long long)st->noring);
	if (lost && st->discarded_before > st->noring_before && !strcmp(s->o.mode, "block"))
		fprintf(stderr,
			"%s run: %llu events were lost before rip attached: a bigger --buffer "
			"gives the program more room at start\n",
			rip_prog, (unsigned long long)(st->discarded_before - st->noring_before));
	else if ((lost || sub_lost) && strcmp(s->o.mode, "block"))
		fprintf(stderr, "%s run: --mode=block loses nothing (threads wait for rip)\n",
			rip_prog);
}

/* ---- other ring files: children and new images ------------------------------------------ */

static struct run_sub *run_sub_find(struct run_state *s, const char *name)
{
	for (size_t i = 0; i < s->nsubs; i++)
		if (!strcmp(s->subs[i]->name, name))
			return s->subs[i];
	return NULL;
}

/* Start recording sub (its file is complete); false to try again later. */
static bool run_sub_start(struct run_state *s, struct run_sub *sub)
{
	char path[PATH_MAX + NAME_MAX + 2], err[RR_ERR_MAX];

	snprintf(path, sizeof(path), "%s/%s", s->ringdir, sub->name);
	if (!sub->follow) {
		if (rec_silence(path, err, sizeof(err)))
			return false; /* not complete yet: again later */
		sub->done = true;
		return true;
	}
	if (!rr_is_ring(path))
		return false;
	if ((size_t)(sub->gen ? snprintf(sub->dir, sizeof(sub->dir), "%s/%d.%u", s->dir,
					  (int)sub->pid, sub->gen)
			      : snprintf(sub->dir, sizeof(sub->dir), "%s/%d", s->dir, (int)sub->pid)) >=
	    sizeof(sub->dir)) {
		tool_err("pid %d: trace directory name too long; it is not recorded", (int)sub->pid);
		s->sub_failed++;
		sub->done = true;
		return true;
	}
	rec_init(&sub->rec);
	if (rec_attach(&sub->rec, path, err, sizeof(err)) ||
	    rec_open_trace(&sub->rec, sub->dir, err, sizeof(err))) {
		tool_err("pid %d: %s; it is not recorded", (int)sub->pid, err);
		rec_close(&sub->rec);
		s->sub_failed++;
		sub->done = true;
		return true;
	}
	/* Many small traces: one syncfs at the end (run_subs_sync), not an fsync per file. */
	rec_defer_sync(&sub->rec);
	sub->active = true;
	return true;
}

/* Look for new ring files (after inotify said something, or while one is incomplete). */
static void run_scan(struct run_state *s)
{
	const char *main_name = strrchr(s->ring, '/');
	DIR *d = opendir(s->ringdir);
	struct dirent *e;

	s->rescan = false;
	if (!d)
		return;
	run_take_failed(s, true);
	main_name = main_name ? main_name + 1 : s->ring;
	while ((e = readdir(d))) {
		struct run_sub *sub, **v;
		unsigned gen;
		pid_t pid = run_ring_name(e->d_name, &gen);

		if (!pid || !strcmp(e->d_name, main_name) || strlen(e->d_name) > NAME_MAX)
			continue;
		sub = run_sub_find(s, e->d_name);
		if (!sub) {
			sub = calloc(1, sizeof(*sub));
			v = realloc(s->subs, (s->nsubs + 1) * sizeof(*v));
			if (!sub || !v) {
				free(sub);
				if (v)
					s->subs = v;
				break;
			}
			s->subs = v;
			/*
			 * A name we recorded and removed can come back: the process
			 * exec'd after we finished its file.  Count its images.
			 */
			for (size_t i = 0; i < s->nsubs; i++)
				if (s->subs[i]->pid == pid && s->subs[i]->gen >= gen)
					gen = s->subs[i]->gen + 1;
			if (pid == s->main_pid && !gen)
				gen = 1;
			s->subs[s->nsubs++] = sub;
			snprintf(sub->name, sizeof(sub->name), "%s", e->d_name);
			sub->pid = pid;
			sub->gen = gen;
			sub->follow = (pid == s->main_pid || s->o.follow_fork) &&
				      (!gen || s->o.follow_exec);
		}
		if (!sub->active && !sub->done && !run_sub_start(s, sub))
			s->rescan = true; /* being created: look again soon */
	}
	closedir(d);
}

/*
 * Finish sub's trace: drain, metadata, index; its ring file goes.  gone:
 * run_sub_gone saw its image go; else (the program ended first) whether it
 * still runs is asked now.  Not asked again after run_sub_gone: an image
 * that exec'd is seen mapped for a moment while its successor marks the
 * file (lib/ring.c rip_mark_execed), and was then reported cut.
 */
static void run_sub_finish(struct run_state *s, struct run_sub *sub, bool gone)
{
	char err[RR_ERR_MAX], path[PATH_MAX + NAME_MAX + 2];

	if (!sub->active)
		return;
	sub->active = false;
	sub->done = true;
	sub->cut = !gone && rr_alive(&sub->rec.f) == 1;
	snprintf(sub->comm, sizeof(sub->comm), "%.16s", sub->rec.f.hdr.comm);
	if (rec_finish(&sub->rec, err, sizeof(err))) {
		tool_err("pid %d: %s", (int)sub->pid, err);
		s->sub_failed++;
	} else {
		s->sub_traces++;
		sub->recorded = true;
		sub->events = sub->rec.st.events;
		sub->lost = rec_lost_events(&sub->rec);
		sub->corrupt = sub->rec.st.corrupt;
	}
	rec_close(&sub->rec);
	snprintf(path, sizeof(path), "%s/%s", s->ringdir, sub->name);
	/* A process that outlives us (a daemon's child) keeps its file, where rip ps finds it. */
	if (!sub->cut || !run_keep(path, sub->pid, sub->comm, 0))
		unlink(path);
	sub->name[0] = 0; /* the name is free for the next image */
}

/*
 * Has sub's process exited or exec'd, so that its file is done?  rr_alive
 * reads /proc, and a compiler's maps are long: polled at every pass, that
 * was most of what rip run spent on a followed make.  The file's own flags
 * answer first; a process that says nothing is asked at most every
 * RUN_ALIVE_NS (a child killed outright is finished that much later).
 */
static bool run_sub_gone(struct run_sub *sub)
{
	struct rr_file *f = &sub->rec.f;
	char err[RR_ERR_MAX];
	uint32_t flags = 0;
	int64_t now;

	if (!rr_live_u32(f, offsetof(struct rip_file_hdr, proc_flags), &flags, err, sizeof(err))) {
		if (flags & RIP_P_EXECED)
			return true; /* its new image marked it: it is written no more */
		if (flags & RIP_P_EXITED) /* exiting: gone once the process is */
			return rr_proc_start_ticks(f->hdr.pid) != f->hdr.start_ticks;
	}
	now = rr_mono_ns();
	if (now - sub->alive_ns < RUN_ALIVE_NS)
		return false;
	sub->alive_ns = now;
	return rr_alive(f) == 0;
}

/* One pass over the recorded children; returns the packets taken. */
static int run_subs_poll(struct run_state *s)
{
	char err[RR_ERR_MAX];
	int total = 0;

	for (size_t i = 0; i < s->nsubs; i++) {
		struct run_sub *sub = s->subs[i];
		int n;

		if (!sub->active)
			continue;
		n = rec_poll(&sub->rec, err, sizeof(err));
		if (n < 0) {
			tool_err("pid %d: %s; its trace is removed", (int)sub->pid, err);
			rec_close(&sub->rec);
			sub->active = false;
			sub->done = true;
			s->sub_failed++;
			continue;
		}
		total += n;
		/* Its process exited or exec'd: finish now. */
		if (!n && run_sub_gone(sub))
			run_sub_finish(s, sub, true);
	}
	return total;
}

/* The end: finish every child's trace, remove the files we did not record (run_subs_free after). */
static void run_subs_end(struct run_state *s)
{
	char path[PATH_MAX + NAME_MAX + 2];

	if (s->failed)
		s->sub_failed = 0;
	for (size_t i = 0; i < s->nsubs; i++) {
		struct run_sub *sub = s->subs[i];

		if (sub->active && !s->failed)
			run_sub_finish(s, sub, false);
		else if (sub->active)
			rec_close(&sub->rec); /* the main trace failed: its children go too */
		if ((!sub->follow || s->failed) && sub->name[0]) {
			snprintf(path, sizeof(path), "%s/%s", s->ringdir, sub->name);
			unlink(path);
		}
	}
	run_take_failed(s, true);
}

/* The children's traces were written without fsync: make them durable together. */
static void run_subs_sync(struct run_state *s)
{
	int fd;

	if (!s->sub_traces || s->no_local)
		return;
	fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || syncfs(fd)) {
		tool_err("%s: the children's traces may not be on disk yet: %s", s->dir,
			 strerror(errno));
		s->sub_failed++;
	}
	if (fd >= 0)
		close(fd);
}

static void run_subs_free(struct run_state *s)
{
	for (size_t i = 0; i < s->nsubs; i++)
		free(s->subs[i]);
	free(s->subs);
	s->subs = NULL;
	s->nsubs = 0;
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
	if (s->main_nofile) {
		run_nofile_why(s, s->main_err, s->main_need, "its ring file", "", why, sizeof(why));
		tool_err("the program cannot be traced: %s%s", why,
			 s->exited ? "" : " (it runs on untraced)");
		return;
	}
	/* librip could not even leave its marker: a full file system says why. */
	if (statvfs(s->ringdir, &vfs) == 0 && (vfs.f_bavail < 64 || vfs.f_favail == 0)) {
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
		 s->ring[0] ? s->ring : "the program");
}

/* Say once that relayd went away; the local trace goes on. */
static void run_relay_check(struct run_state *s)
{
	const char *why = rec_relayd_error(&s->rec), *gap = rec_relayd_gap(&s->rec);

	if (gap && !s->relay_gap) {
		s->relay_gap = true;
		tool_err("%s", gap);
	}
	if (!why || s->relay_lost)
		return;
	s->relay_lost = true;
	if (s->no_local)
		return; /* the recording fails with it: said there */
	tool_err("%s; streaming to relayd stops, the local trace %s goes on", why, s->dir);
}

/* The main trace's pass: a live tick once per --live-timer period with relayd, else a poll. */
static int run_poll(struct run_state *s, char *err, size_t errlen)
{
	int64_t live = relay_live_ns(&s->o.relay), now;
	int n;

	if (!s->rec.rly || !live) {
		n = rec_poll(&s->rec, err, errlen);
	} else if ((now = rr_mono_ns()) >= s->next_tick) {
		s->next_tick = now + live;
		n = rec_tick(&s->rec, live / 2 < 20000000 ? (uint64_t)live / 2 : 20000000, err,
			     errlen);
	} else {
		n = rec_poll(&s->rec, err, errlen);
	}
	run_relay_check(s);
	return n;
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
			char buf[4096];

			if (s->inotify >= 0)
				while (read(s->inotify, buf, sizeof(buf)) > 0)
					s->rescan = true;
			if (s->rescan)
				run_scan(s);
			n = run_poll(s, err, sizeof(err));
			run_exec_check(s, false);
			if (n < 0) {
				tool_err(
					"%s; recording stops (the trace is removed), the program runs on",
					err);
				rec_close(&s->rec);
				s->failed = true;
			}
			if (n >= 0)
				n += run_subs_poll(s);
			if (n > 0) {
				idle = RUN_IDLE_MIN_NS;
				continue;
			}
			/* A busy writer fills a ring in about a ms: look again soon. */
			if (!run_chld)
				run_sleep(idle);
			run_chld = 0;
			idle = idle * 2 > RUN_IDLE_MAX_NS ? RUN_IDLE_MAX_NS : idle * 2;
		} else if (!attached) {
			struct pollfd pfd = { .fd = s->inotify, .events = POLLIN };
			char buf[4096];

			if (s->inotify < 0)
				run_sleep(RUN_IDLE_MIN_NS);
			else if (poll(&pfd, 1, 5) > 0)
				while (read(s->inotify, buf, sizeof(buf)) > 0)
					;
			if (!s->main_nofile) {
				run_take_failed(s, false);
				if (s->main_nofile)
					run_no_trace(s); /* now: it runs on untraced */
			}
		} else {
			/* Recording failed: just wait for the program. */
			run_reap(s, 0);
		}
	}
	if (!attached) {
		run_take_failed(s, false);
		run_no_trace(s);
		run_subs_end(s);
		run_subs_free(s);
		return;
	}
	if (!s->failed)
		run_scan(s); /* files made since the last look */
	s->rec.keep_ring = true; /* for rip ps DIR and rip top DIR */
	if (!s->failed && rec_finish(&s->rec, err, sizeof(err))) {
		tool_err("%s", err);
		s->failed = true;
	}
	if (!s->failed && !s->no_local && !s->rec.ring_kept)
		tool_err("warning: no copy of the ring file in %s (rip ps %s will not work): %s",
			 s->dir, s->dir, s->rec.ring_err);
	if (!s->failed)
		run_relay_check(s);
	run_subs_end(s);
	run_subs_sync(s);
	if (!s->failed)
		run_summary(s);
	if (s->exec_img[0] && !s->o.quiet)
		fprintf(stderr, "%s run: %s exec'd %s (not followed; --follow-exec records it)\n",
			rip_prog, s->rec.f.hdr.comm[0] ? s->rec.f.hdr.comm : "the program",
			s->exec_img);
	run_subs_free(s);
}

static int cmd_run(int argc, char **argv)
{
	struct run_state *s;
	char bin[PATH_MAX];
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
	s->ringdir_lock = -1;
	ret = run_parse(argc, argv, &s->o);
	if (ret) {
		free(s);
		return ret < 0 ? EXIT_OK : ret;
	}
	argv += optind;
	if (run_resources(&s->o) &&
	    run_find_lib("librip-preload.so", s->lib, sizeof(s->lib))) {
		tool_err("resource tracing needs librip-preload.so, which is not next to %s nor "
			 "in its lib directory: build it (make) or install it",
			 rip_prog);
		goto out_free;
	}
	if (!run_resources(&s->o) && s->o.preload &&
	    run_find_lib("librip.so", s->lib, sizeof(s->lib))) {
		tool_err("--preload: cannot find librip.so next to %s or in its lib directory",
			 rip_prog);
		goto out_free;
	}
	if ((run_resources(&s->o) || s->o.preload) &&
	    run_preloadable(argv[0], s->untraced, sizeof(s->untraced), bin)) {
		tool_err("%s", s->untraced);
		goto out_free;
	}
	/* Plain rip run: the wait wrappers, where the preload library can go (quietly). */
	if (!run_resources(&s->o) && !s->o.preload && !s->o.no_waits &&
	    !run_find_lib("librip-preload.so", s->lib, sizeof(s->lib))) {
		ret = run_preloadable(argv[0], s->untraced, sizeof(s->untraced), bin);
		s->o.waits = ret == RUN_PRELOADABLE;
		/* Untraced for sure (librip ignores RIP_* under secure execution too): say so now. */
		if (ret == RUN_SECURE || (ret == RUN_STATIC && !run_has_librip(bin))) {
			tool_err("%s; it runs untraced", s->untraced);
			s->untraced_said = true;
		}
	}
	if (!run_resources(&s->o) && !s->o.preload && !s->o.waits)
		s->lib[0] = 0;
	s->no_local = s->o.out && !strcmp(s->o.out, "-");
	if (s->o.out && !s->no_local && lstat(s->o.out, &st) == 0) {
		tool_err("%s exists: traces are never overwritten; choose another with -o",
			 s->o.out);
		goto out_free;
	}
	if (s->o.out && !s->no_local && run_parent_writable(s->o.out)) {
		tool_err("cannot create %s: %s", s->o.out, strerror(errno));
		goto out_free;
	}
	ret = run_ring_dir(s->ringdir, sizeof(s->ringdir));
	if (ret) {
		tool_err("cannot create a directory for the ring file: %s", strerror(-ret));
		goto out_free;
	}
	s->ringdir_lock = rr_run_dir_hold(s->ringdir);
	if (run_resources(&s->o))
		run_rules_dir(s->ringdir); /* before the watch: not a ring file to look at */
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
		run_exec(&s->o, s->ringdir, s->lib[0] ? s->lib : NULL, go[0], rep[1], argv);
	}
	close(go[0]);
	close(rep[1]);
	go[0] = rep[1] = -1;
	if (s->o.out && !s->no_local)
		snprintf(s->dir, sizeof(s->dir), "%s", s->o.out);
	else
		rec_default_dir(s->dir, sizeof(s->dir), argv[0], s->child);
	if (!s->no_local && lstat(s->dir, &st) == 0) {
		tool_err("%s exists: traces are never overwritten; choose another with -o", s->dir);
		close(go[1]); /* the child exits without running PROG */
		go[1] = -1;
		waitpid(s->child, NULL, 0);
		goto out_dir;
	}
	/* relayd before PROG starts: one that cannot be reached is an error, not a surprise later */
	if (s->o.relay.url && relay_connect(&s->o.relay, s->dir, &s->rly)) {
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
	if ((s->failed || s->nofile_failed || s->relay_lost || s->relay_gap) && status == 0)
		status = EXIT_FAIL;
	/* Killed: its file stays where rip ps PID looks (and rip gc collects it). */
	if (WIFSIGNALED(s->status) && s->ring[0] && s->rec.f.fd >= 0 &&
	    run_keep(s->ring, s->rec.f.hdr.pid, s->rec.f.hdr.comm, WTERMSIG(s->status)))
		s->ring[0] = 0;
	rec_close(&s->rec);
	run_cleanup_ringdir(s->ringdir, s->ring, s->failed);
	run_kept_lines(s->dir, s->rec.ring_kept);
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
	if (s->ringdir_lock >= 0)
		close(s->ringdir_lock);
	rly_free(s->rly);
	free(s);
	return status;
}
