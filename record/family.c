/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/family.c - the ring files of rip run's family (record/family.h):
 * the private directory and the environment that sends every ring file
 * there, finding the program's own, and recording or silencing the others.
 *
 * Every name in the directory is read with read/ringname.h: a ring file
 * (rip-PID-START[.N].ring) or librip's marker of one it could not create.
 * The others are found when the watch (inotify) says the directory
 * changed, or while one of them is still being created.  A name we
 * recorded and removed can come back (its process exec'd after we
 * finished its file): its images are counted, so that each gets a trace of
 * its own, DIR/PID.N.  Whether an other's process is gone is asked of its
 * file's flags first, of /proc at most every FAM_ALIVE_NS.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <internal/clock.h>
#include <internal/grow.h>
#include <internal/track.h>
#include <rip/proc.h>

#include "read/ringname.h"
#include "record/family.h"

#define FAM_ALIVE_NS 100000000L /* an other that says nothing: /proc is read this often */
#define FAM_EXEC_NS 10000000L	/* how often to look for an exec we do not follow */
#define FAM_WAIT_NS 50000L	/* without a watch: the wait for the program's ring file */

bool fam_resources(const struct fam_opts *o)
{
	return o->res || o->off || o->sample || o->track;
}

/* Hand a message to the caller's warn callback (the library never prints). */
static void fam_warn(const struct fam *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fam_warn(const struct fam *f, const char *fmt, ...)
{
	char msg[2 * PATH_MAX + RR_ERR_MAX];
	va_list ap;

	if (!f->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	f->warn(msg, f->warn_arg);
}

void fam_init(struct fam *f, const struct fam_opts *o)
{
	memset(f, 0, sizeof(*f));
	f->o = o;
	f->lock = -1;
	f->inotify = -1;
	f->watch = -1;
	rec_init(&f->rec);
}

/* ---- the directory ---------------------------------------------------------------------- */

/*
 * A private directory for the ring files, on the ring file system if we
 * can.  In RIP_DIR when it is set, or nowhere: rip ls, rip gc and rip ps
 * look there only, and it must exist (rip.1): one missing was made, one
 * not writable left the files in /tmp, where none of them found them.
 */
static int fam_mkdtemp(char *buf, size_t len)
{
	char dirs[4][PATH_MAX];
	int n = rr_dirs(dirs, 3);
	const char *tmp = getenv("TMPDIR"), *rip_dir = getenv("RIP_DIR");

	if (rip_dir && *rip_dir) {
		if (snprintf(buf, len, "%s/" RR_RUN_DIR_PREFIX "XXXXXX", rip_dir) >= (int)len)
			return -ENAMETOOLONG;
		return mkdtemp(buf) ? 0 : -errno;
	}
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

/* Lock dir for as long as the descriptor returned is open (-errno: no lock): rr_run_dir_held. */
static int fam_hold(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

int fam_open(struct fam *f)
{
	char path[PATH_MAX];
	int ret;

	ret = fam_mkdtemp(f->ringdir, sizeof(f->ringdir));
	if (ret)
		return ret;
	f->lock = fam_hold(f->ringdir);
	/*
	 * The unwind rules, before the watch: not a ring file to look at (a
	 * failure only costs speed: every process computes its rules).
	 */
	if (fam_resources(f->o) &&
	    snprintf(path, sizeof(path), "%s/" FAM_RULES_DIR, f->ringdir) < (int)sizeof(path))
		mkdir(path, 0700);
	/* The marks of the functions --track finds (preload/track.c). */
	if (f->o->track &&
	    snprintf(path, sizeof(path), "%s/" FAM_TRACK_DIR, f->ringdir) < (int)sizeof(path))
		mkdir(path, 0700);
	f->inotify = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (f->inotify >= 0)
		f->watch = inotify_add_watch(f->inotify, f->ringdir, IN_CREATE | IN_MOVED_TO);
	return 0;
}

/* Remove the directory sub of the ring directory (rules, --track's marks) and what it holds. */
static void fam_sub_cleanup(const char *ringdir, const char *sub)
{
	char path[PATH_MAX];
	DIR *d;
	struct dirent *e;

	if (snprintf(path, sizeof(path), "%s/%s", ringdir, sub) >= (int)sizeof(path))
		return;
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    unlinkat(dirfd(d), e->d_name, 0) && errno == EISDIR)
			unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
	closedir(d);
	rmdir(path);
}

bool fam_track_found(const struct fam *f, const char *name)
{
	char path[PATH_MAX];

	return snprintf(path, sizeof(path), "%s/" FAM_TRACK_DIR "/%s", f->ringdir, name) <
		       (int)sizeof(path) &&
	       !access(path, F_OK);
}

/*
 * Move the ring file at path, in one of rip run's directories, to the
 * ring directory above it, under the same name (never replacing a file
 * there): where it outlives rip run, and rip ls, rip gc and rip ps PID find
 * it as any other.  Its new path into out.  0 or -errno.
 */
static int fam_release(const char *path, char *out, size_t len)
{
	const char *base = strrchr(path, '/'), *dir;
	int n;

	if (!base || base == path)
		return -EINVAL;
	/* the directory that holds rip run's: path is PARENT/rip-run.XXXXXX/NAME */
	for (dir = base - 1; dir > path && *dir != '/'; dir--)
		;
	if (*dir != '/' || strncmp(dir + 1, RR_RUN_DIR_PREFIX, strlen(RR_RUN_DIR_PREFIX)))
		return -EINVAL;
	n = snprintf(out, len, "%.*s%s", (int)(dir - path), path, base);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	/* link never replaces a file; a rename would */
	if (link(path, out))
		return -errno;
	if (unlink(path)) {
		int e = errno;

		unlink(out);
		return -e;
	}
	return 0;
}

bool fam_keep(struct fam *f, const char *path, pid_t pid, const char *comm, int sig)
{
	struct fam_kept *v = realloc(f->kept, (f->nkept + 1) * sizeof(*v)), *k;
	int ret;

	if (!v)
		return false;
	f->kept = v;
	k = &v[f->nkept];
	ret = fam_release(path, k->path, sizeof(k->path));
	if (ret) {
		fam_warn(f, "cannot keep %s: %s", path, strerror(-ret));
		return false;
	}
	k->pid = pid;
	k->sig = sig;
	snprintf(k->comm, sizeof(k->comm), "%.16s", comm && *comm ? comm : "?");
	f->nkept++;
	return true;
}

bool fam_keep_last(struct fam *f, int sig)
{
	char path[PATH_MAX + NAME_MAX + 2];

	if (!f->last_ring[0])
		return false;
	/* its own name again, which fam_keep gives it in the ring directory */
	snprintf(path, sizeof(path), "%s/%s", f->ringdir, f->last_name);
	if (rename(f->last_ring, path))
		return false;
	f->last_ring[0] = 0;
	if (!fam_keep(f, path, f->child, f->last_comm, sig)) {
		unlink(path);
		return false;
	}
	f->last_kept = true;
	return true;
}

void fam_cleanup(struct fam *f, bool keep)
{
	DIR *d;
	struct dirent *e;

	rec_close(&f->rec);
	if (f->last_ring[0])
		unlink(f->last_ring);
	f->last_ring[0] = 0;
	if (!f->ringdir[0])
		return;
	if (f->attached && f->ring[0] && !keep)
		unlink(f->ring);
	fam_sub_cleanup(f->ringdir, FAM_RULES_DIR);
	fam_sub_cleanup(f->ringdir, FAM_TRACK_DIR);
	d = opendir(f->ringdir);
	while (d && (e = readdir(d))) {
		char path[PATH_MAX + NAME_MAX + 2], err[RR_ERR_MAX];
		struct rr_file rf;
		struct rn_name rn;

		if (!rn_parse_gone(e->d_name, &rn)) {
			unlinkat(dirfd(d), e->d_name, 0); /* fam_note_gone's: only while we run */
			continue;
		}
		if (rn_parse(e->d_name, &rn))
			continue;
		snprintf(path, sizeof(path), "%s/%s", f->ringdir, e->d_name);
		if (!rr_is_ring(path) || rr_open(path, &rf, err, sizeof(err)))
			continue;
		if (rr_alive(&rf) == 1)
			fam_keep(f, path, rf.hdr.pid, rf.hdr.comm, 0);
		rr_close(&rf);
	}
	if (d)
		closedir(d);
	if (rmdir(f->ringdir) && errno != ENOENT)
		fam_warn(f,
			 "note: files of other processes (PROG's children, still being created?) "
			 "were left in %s: rip ls and rip gc see them there",
			 f->ringdir);
}

void fam_free(struct fam *f)
{
	for (size_t i = 0; i < f->nsubs; i++)
		free(f->subs[i]);
	free(f->subs);
	free(f->kept);
	if (f->inotify >= 0)
		close(f->inotify);
	if (f->lock >= 0)
		close(f->lock);
	f->subs = NULL;
	f->nsubs = 0;
	f->kept = NULL;
	f->nkept = 0;
	f->inotify = f->watch = f->lock = -1;
}

/* ---- the environment ------------------------------------------------------------------- */

/*
 * The TSC's rate for the family (0: not to be used), measured once per boot:
 * kept with the boot's id in $XDG_CACHE_HOME/rip/clock (~/.cache/rip/clock),
 * so that only the first rip run of a boot spends the 5 ms.  The file is
 * read as hostile (its size bounded, the id compared, the rate in range)
 * and replaced whole (a new file renamed over it).
 */
static uint64_t fam_clock_hz(void)
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
			if (!errno && *end == '\n' && hz >= RIP_CLOCK_HZ_MIN &&
			    hz <= RIP_CLOCK_HZ_MAX)
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

void fam_clock_env(void)
{
	uint64_t hz;
	char v[24];

	/* found once here for every process of the family, instead of 5 ms in each */
	if (rip_clock_env_hz())
		return;
	hz = fam_clock_hz();
	if (hz) {
		snprintf(v, sizeof(v), "%" PRIu64, hz);
		setenv(RIP_CLOCK_HZ_ENV, v, 1);
	} else if (rip_clock_tsc_usable()) {
		/* usable by its flags, but not here (it goes back across CPUs): nobody uses it */
		setenv("RIP_CLOCK", "mono", 1);
	}
}

/*
 * An audit library gets a namespace of its own, with a libc of its own, and
 * both take static TLS from the small surplus glibc keeps for libraries
 * dlopen'd with initial-exec TLS (1664 bytes on x86-64): under --track such
 * a library failed to load ("cannot allocate memory in static TLS block")
 * where the program alone loads it.  So the surplus grows by 3.5 KiB (a
 * value of glibc.rtld.optional_static_tls of 4096, not 512), unless the
 * user chose one; the user's other tunables stay.
 */
static void fam_env_static_tls(void)
{
	static const char tls[] = "glibc.rtld.optional_static_tls";
	const char *old = getenv("GLIBC_TUNABLES");
	char *v = NULL;

	if (old && strstr(old, tls))
		return;
	if (asprintf(&v, "%s%s%s=4096", old && *old ? old : "", old && *old ? ":" : "", tls) < 0)
		return; /* no memory: traced as before, with the default surplus */
	setenv("GLIBC_TUNABLES", v, 1);
	free(v);
}

/* The preload library's settings, for resource tracing. */
static void fam_env_resources(const struct fam *f)
{
	static const char *const cats[] = { "1", "2", "3", "7" }; /* RIP_CAT_MEM, _FD, _SHM, _RES */
	const struct fam_opts *o = f->o;
	char disable[16] = "", rules[PATH_MAX];

	/*
	 * By number: the names are the preload library's to register.  The
	 * modules' category is on with any resource tracing: a program that
	 * reports the blocks of an allocator of its own through <rip/module.h>
	 * (its own RIP_MODULE and RIP_KIND) had them dropped under --mem.
	 */
	for (int i = 0; i < 4; i++) {
		if (!o->off && (o->res & (i == 3 ? FAM_RES_ALL | FAM_RES_MOD : 1u << i)))
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
	if (o->track && o->audit) {
		const char *old = getenv("LD_AUDIT");
		char audit[2 * PATH_MAX + 2];

		/* librip-track.so, the loader's audit library, before any the user has */
		setenv(RIP_TRACK_ENV, o->track, 1);
		if (old && *old)
			snprintf(audit, sizeof(audit), "%s:%s", o->audit, old);
		else
			snprintf(audit, sizeof(audit), "%s", o->audit);
		setenv("LD_AUDIT", audit, 1);
		fam_env_static_tls();
	}
	/* unwind rules computed once for the family (fam_open made the directory) */
	if (snprintf(rules, sizeof(rules), "%s/" FAM_RULES_DIR, f->ringdir) < (int)sizeof(rules) &&
	    !access(rules, W_OK))
		setenv("RIP_RULE_CACHE", rules, 1);
}

/*
 * The settings of an enclosing rip run, removed before this run's are set.
 * A rip run started inside a traced family (RIP_ROOT, which only rip run
 * sets, is in its environment: a script or a build under rip run runs
 * rip run again) inherits that run's settings, and they are not this
 * run's: the outer run's RIP_RESOURCES=0 (slots and waits only) turned the
 * inner run's --mem off, and its program recorded no resource event.
 * Each is set again below from this run's options, or stays unset.  What
 * rip run never sets (RIP_CLOCK, RIP_SLOTS...) stays as the user set it.
 */
static void fam_env_unnest(void)
{
	static const char *const session[] = {
		"RIP_RING",
		"RIP_MODE",
		"RIP_CONSUMER",
		"RIP_RESOURCES",
		"RIP_DISABLE",
		"RIP_FOLLOW",
		"RIP_ROOT",
		"RIP_SAMPLE",
		"RIP_MODULES",
		"RIP_RULE_CACHE",
		RIP_TRACK_ENV,
		"RIP_DEPTH",
		"RIP_PAGEMAP",
		"RIP_PAGEMAP_SIGNAL",
		"RIP_WAITS",
		"RIP_FUNCTIONS",
		"RIP_EVENT_RING_SIZE",
		"RIP_EVENT_PACKET_SIZE",
	};

	if (!getenv("RIP_ROOT"))
		return;
	for (size_t i = 0; i < sizeof(session) / sizeof(session[0]); i++)
		unsetenv(session[i]);
}

void fam_env(const struct fam *f, const char *lib)
{
	const struct fam_opts *o = f->o;
	char ring[PATH_MAX + 2], pre[2 * PATH_MAX + 2], root[16], state, *all = NULL;
	const char *old;

	fam_env_unnest();
	old = getenv("LD_PRELOAD");
	snprintf(ring, sizeof(ring), "%s/", f->ringdir);
	setenv("RIP_RING", ring, 1);
	setenv("RIP_MODE", o->mode, 1);
	/*
	 * Ask librip to count us as every ring's consumer from the first event
	 * (read when a ring file is created, by the program and by every child
	 * and image we follow): without it, what they emit before we attach
	 * would be overwritten.  Our start time tells us from a later process
	 * with our pid.
	 */
	snprintf(pre, sizeof(pre), "%d:%llu", (int)getppid(),
		 (unsigned long long)rip_proc_start((int)getppid(), &state));
	setenv("RIP_CONSUMER", pre, 1);
	if (o->buffer)
		setenv("RIP_EVENT_RING_SIZE", o->buffer, 1);
	if (o->relayd && !getenv("RIP_EVENT_PACKET_SIZE") &&
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
	if (fam_resources(o)) {
		unsetenv("RIP_RESOURCES"); /* the user's "0" would turn the options off */
		fam_env_resources(f);
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
	if (o->function_globs)
		setenv("RIP_FUNCTIONS", o->function_globs, 1);
	if (!o->functions) {
		/* Function records (category 6, func) only when asked for: shadow stacks are kept. */
		const char *d = getenv("RIP_DISABLE");
		char off[256];

		snprintf(off, sizeof(off), "%s%s6", d && *d ? d : "", d && *d ? "," : "");
		setenv("RIP_DISABLE", off, 1);
	}
	/*
	 * What is not recorded is best not traced at all: a forked child or an
	 * exec'd image we do not follow opens no ring file (librip reads these
	 * two in its constructor).
	 */
	setenv("RIP_FOLLOW",
	       o->follow_fork ? (o->follow_exec ? "fork,exec" : "fork") :
				(o->follow_exec ? "exec" : "none"),
	       1);
	snprintf(root, sizeof(root), "%d", (int)getpid());
	setenv("RIP_ROOT", root, 1);
	if (lib) {
		/* the modules after librip-preload.so: their wrappers call into it */
		const char *mods = fam_resources(o) && o->modules ? o->modules : NULL;

		/* which of LD_PRELOAD an image not followed drops with librip's own (lib/ring.c) */
		if (mods)
			setenv("RIP_MODULES", mods, 1);
		else
			unsetenv("RIP_MODULES");

		if (asprintf(&all, "%s%s%s%s%s", lib, mods ? ":" : "", mods ? mods : "",
			     old && *old ? ":" : "", old && *old ? old : "") < 0)
			all = NULL;
		if (all)
			setenv("LD_PRELOAD", all, 1);
		free(all);
	}
}

/* ---- the program's ring file ----------------------------------------------------------- */

bool fam_find(struct fam *f)
{
	DIR *d = opendir(f->ringdir);
	struct dirent *e;
	int best = 0; /* 3: child's first image, 2: child's later image, 1: another's */
	unsigned best_gen = 0;
	pid_t pid = 0;

	if (!d)
		return false;
	while ((e = readdir(d))) {
		struct rn_name rn;
		int rank;

		if (rn_parse(e->d_name, &rn))
			continue;
		rank = rn.pid != f->child ? 1 : rn.gen ? 2 : 3;
		if ((rank > best || (rank == 2 && best == 2 && rn.gen < best_gen)) &&
		    snprintf(f->ring, sizeof(f->ring), "%s/%s", f->ringdir, e->d_name) <
			    (int)sizeof(f->ring)) {
			best = rank;
			best_gen = rn.gen;
			pid = rn.pid;
		}
	}
	closedir(d);
	if (!best)
		return false;
	f->main_pid = pid;
	f->rescan = true; /* others may be there already */
	return true;
}

int fam_ready(struct fam *f)
{
	if (rr_is_ring(f->ring))
		return 1;
	if (access(f->ring, F_OK) && errno == ENOENT) {
		f->ring[0] = 0;
		return -ENOENT;
	}
	return 0;
}

void fam_wait(struct fam *f)
{
	struct pollfd pfd = { .fd = f->inotify, .events = POLLIN };
	struct timespec ts = { 0, FAM_WAIT_NS };
	char buf[4096];

	if (f->inotify < 0)
		nanosleep(&ts, NULL);
	else if (poll(&pfd, 1, 5) > 0)
		while (read(f->inotify, buf, sizeof(buf)) > 0)
			;
	if (!f->main_nofile)
		fam_take_failed(f, false);
}

int fam_attach(struct fam *f, char *err, size_t errlen)
{
	int ret;

	f->attached = true;
	ret = rec_attach(&f->rec, f->ring, err, errlen);
	f->rec.store = f->o->store;
	if (!ret && !f->no_local)
		ret = rec_open_trace(&f->rec, f->dir, err, errlen);
	if (ret)
		rec_close(&f->rec);
	return ret;
}

/* The RIP_P_* flags of rf's process as its file has them now: 0, or -errno (it shrank). */
static int fam_flags(const struct rr_file *rf, uint32_t *flags)
{
	return rr_live_u32(rf, offsetof(struct rip_file_hdr, proc_flags), flags, NULL, 0);
}

void fam_exec_check(struct fam *f, bool exited, bool killed)
{
	char img[PATH_MAX];
	int64_t now = rr_mono_ns();
	uint32_t flags = 0;
	int ret;

	if (f->o->follow_exec || f->rec.f.fd < 0 || (!exited && now < f->exec_next))
		return;
	f->exec_next = now + FAM_EXEC_NS;
	/* a path seen while it ran says more than a name at the end (of a symbolic link, often) */
	if (exited && f->exec_img[0])
		return;
	ret = rr_exec_image(&f->rec.f, f->child, exited, img, sizeof(img));
	if (!ret && !exited) {
		snprintf(f->own_name, sizeof(f->own_name), "%.63s", img);
	} else if (ret == 1 && exited) {
		/*
		 * Only a name: not an exec if the traced image had it (it renamed
		 * itself, as servers and pools do), nor if that image exited (a
		 * name set by the program since the last look), and not said
		 * when a signal ended a program that renamed itself (killed right
		 * after, it looks the same).  A file that cannot be read says
		 * nothing either.
		 */
		if (!strcmp(img, f->own_name) || fam_flags(&f->rec.f, &flags) ||
		    (flags & RIP_P_EXITED) || (killed && (flags & RIP_P_RENAMED)))
			return;
		snprintf(f->exec_img, sizeof(f->exec_img), "%s", img);
	} else if (ret == 1) {
		snprintf(f->exec_img, sizeof(f->exec_img), "%s", img);
	}
}

int fam_pass(struct fam *f, char *err, size_t errlen)
{
	int n;

	fam_look(f);
	n = rec_pass(&f->rec, f->live_ns, &f->next_tick, err, errlen);
	fam_exec_check(f, false, false);
	return n < 0 ? n : n + fam_poll(f);
}

void fam_unwatch(struct fam *f)
{
	if (f->inotify >= 0 && f->watch >= 0)
		inotify_rm_watch(f->inotify, f->watch);
	f->watch = -1;
}

/* Add the function ids rf's process handed out (a function entered) to f->fn_ids. */
static void fam_fn_ids(struct fam *f, const struct rr_file *rf)
{
	char ignore[RR_ERR_MAX];
	uint32_t n = 0;

	if (rf->fd >= 0 && rf->hdr.fn_ids &&
	    !rr_live_u32(rf, offsetof(struct rip_file_hdr, fn_count), &n, ignore, sizeof(ignore)))
		f->fn_ids += n < rf->hdr.fn_ids ? n : rf->hdr.fn_ids;
}

/*
 * Did the program's own librip (linked in statically) stay off in the
 * process of file rf (RIP_P_SECOND_OFF)?  Say so: its snaps are not here.
 */
static void fam_second_off(const struct fam *f, const struct rr_file *rf)
{
	uint32_t flags = 0;

	if (!fam_flags(rf, &flags) && (flags & RIP_P_SECOND_OFF))
		fam_warn(f,
			 "pid %d: the program's own librip (linked in statically) stayed off under "
			 "librip-preload.so: its rip_snap() calls are not recorded (link it with "
			 "-lrip)",
			 (int)rf->hdr.pid);
}

/*
 * The forked children of the process of rf that could not create their
 * ring files for lack of permission (its header's forks_denied: one that
 * changed its user cannot create files in our directory), into f's count.
 * Read once the process is done.
 */
static void fam_count_denied(struct fam *f, const struct rr_file *rf)
{
	struct rip_file_hdr h;
	char ignore[RR_ERR_MAX];

	if (rr_live_hdr(rf, &h, ignore, sizeof(ignore)) || !h.forks_denied)
		return;
	f->forks_denied += h.forks_denied;
	if (f->denied_pid)
		return;
	f->denied_pid = h.pid;
	f->denied_err = h.forks_denied_err;
	snprintf(f->denied_comm, sizeof(f->denied_comm), "%.16s", h.comm);
}

int fam_finish(struct fam *f, char *err, size_t errlen)
{
	char ignore[RR_ERR_MAX];

	/* the files made since the last look; the copy of the ring file for rip ps and top DIR */
	fam_scan(f);
	f->rec.keep_ring = true;
	fam_fn_ids(f, &f->rec.f);
	fam_second_off(f, &f->rec.f);
	/* rip ps of the trace says "replaced by execve", not "dead (killed or crashed)" */
	if (f->exec_img[0])
		rr_mark_execed(&f->rec.f, ignore, sizeof(ignore));
	fam_count_denied(f, &f->rec.f);
	return rec_finish(&f->rec, err, errlen);
}

void fam_take_failed(struct fam *f, bool attached)
{
	DIR *d = opendir(f->ringdir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[PATH_MAX + NAME_MAX + 2];
		struct rn_name rn;
		uint64_t need;
		int err;

		if (rn_parse_failed(e->d_name, &rn, &err, &need))
			continue;
		snprintf(path, sizeof(path), "%s/%s", f->ringdir, e->d_name);
		unlink(path);
		if (!attached && rn.pid == f->child) {
			f->main_nofile = true;
			f->main_err = err;
			f->main_need = need;
		} else {
			if (!f->sub_nofile++) {
				f->sub_err = err;
				f->sub_need = need;
			}
		}
	}
	closedir(d);
}

/* ---- the others: children and new images ------------------------------------------------ */

static struct fam_sub *fam_sub_find(struct fam *f, const char *name)
{
	for (size_t i = 0; i < f->nsubs; i++)
		if (!strcmp(f->subs[i]->name, name))
			return f->subs[i];
	return NULL;
}

/* Start recording sub (its file is complete); false to try again later. */
static bool fam_sub_start(struct fam *f, struct fam_sub *sub)
{
	char path[PATH_MAX + NAME_MAX + 2], err[RR_ERR_MAX];

	snprintf(path, sizeof(path), "%s/%s", f->ringdir, sub->name);
	if (!sub->follow) {
		if (rec_silence(path, err, sizeof(err)))
			return false; /* not complete yet: again later */
		sub->done = true;
		return true;
	}
	if (!rr_is_ring(path))
		return false;
	if ((size_t)(sub->gen ? snprintf(sub->dir, sizeof(sub->dir), "%s/%d.%u", f->dir,
					 (int)sub->pid, sub->gen) :
				snprintf(sub->dir, sizeof(sub->dir), "%s/%d", f->dir,
					 (int)sub->pid)) >= sizeof(sub->dir)) {
		fam_warn(f, "pid %d: trace directory name too long; it is not recorded",
			 (int)sub->pid);
		f->failed++;
		sub->done = true;
		return true;
	}
	rec_init(&sub->rec);
	sub->rec.store = f->o->store;
	if (rec_attach(&sub->rec, path, err, sizeof(err)) ||
	    rec_open_trace(&sub->rec, sub->dir, err, sizeof(err))) {
		fam_warn(f, "pid %d: %s; it is not recorded", (int)sub->pid, err);
		rec_close(&sub->rec);
		f->failed++;
		sub->done = true;
		return true;
	}
	/* Many small traces: one syncfs at the end (fam_end), not an fsync per file. */
	rec_defer_sync(&sub->rec);
	sub->active = true;
	return true;
}

/* A ring file's name in the directory, parsed (fam_scan). */
struct fam_entry {
	struct rn_name rn;
	char name[NAME_MAX + 1];
};

/* By pid, then image: a process's first image before the ones it exec'd. */
static int fam_entry_cmp(const void *a, const void *b)
{
	const struct fam_entry *x = a, *y = b;

	if (x->rn.pid != y->rn.pid)
		return x->rn.pid < y->rn.pid ? -1 : 1;
	return x->rn.gen < y->rn.gen ? -1 : x->rn.gen > y->rn.gen;
}

/*
 * The ring files in the directory but the program's, in order
 * (fam_entry_cmp: readdir's is any, tmpfs lists the newest first, and an
 * image's file seen before its predecessor's took the predecessor for
 * one that came back); *n of them.  NULL with *n 0: none, or no memory.
 */
static struct fam_entry *fam_entries(struct fam *f, const char *main_name, size_t *n)
{
	struct fam_entry *v = NULL;
	size_t cap = 0;
	struct dirent *e;
	DIR *d = opendir(f->ringdir);

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		struct rn_name rn;

		if (rn_parse(e->d_name, &rn) || !strcmp(e->d_name, main_name) ||
		    strlen(e->d_name) > NAME_MAX)
			continue;
		if (RIP_GROW(v, cap, *n + 1, 16))
			break;
		v[*n].rn = rn;
		snprintf(v[*n].name, sizeof(v[*n].name), "%s", e->d_name);
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), fam_entry_cmp);
	return v;
}

/*
 * The copy of finished image sub's ring file in its trace (DIR/.rip-ring),
 * marked exec'd: our own file, the process's flags word only.
 */
static void fam_copy_mark_execed(const struct fam_sub *sub)
{
	const off_t off = offsetof(struct rip_file_hdr, proc_flags);
	char path[PATH_MAX + 16];
	uint32_t flags;
	struct stat st;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", sub->dir, RR_TRACE_RING) >= (int)sizeof(path))
		return;
	fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	if (!fstat(fd, &st) && S_ISREG(st.st_uid == geteuid() ? st.st_mode : 0) &&
	    pread(fd, &flags, sizeof(flags), off) == (ssize_t)sizeof(flags) &&
	    !(flags & (RIP_P_EXITED | RIP_P_EXECED))) {
		flags |= RIP_P_EXECED;
		/* the summary says it exec'd either way; the copy then keeps "killed" */
		(void)!pwrite(fd, &flags, sizeof(flags), off);
	}
	close(fd);
}

/*
 * The process pid (started at start) made a file under a name one of its
 * images had before: it exec'd after we finished that one, and the image
 * it left, its latest before this one, exec'd too (it could not mark its
 * predecessor's file, gone: rip ps DIR/PID.N and the summary said it
 * died).  Marked, in its live file or in its trace's copy.
 */
static void fam_came_back(struct fam *f, pid_t pid, uint64_t start)
{
	char ignore[RR_ERR_MAX];
	struct fam_sub *last = NULL;
	uint32_t flags = 0;

	for (size_t i = 0; i < f->nsubs; i++) {
		struct fam_sub *s = f->subs[i];

		if (s->pid == pid && s->start == start && (!last || s->gen > last->gen))
			last = s;
	}
	if (!last)
		return;
	if (last->active) {
		if (!fam_flags(&last->rec.f, &flags) && !(flags & (RIP_P_EXITED | RIP_P_EXECED)))
			rr_mark_execed(&last->rec.f, ignore, sizeof(ignore));
		return;
	}
	if (last->end != FAM_END_DEAD)
		return;
	last->end = FAM_END_EXEC;
	if (last->recorded)
		fam_copy_mark_execed(last);
}

void fam_scan(struct fam *f)
{
	const char *main_name = strrchr(f->ring, '/');
	struct fam_entry *ents;
	size_t n;

	f->rescan = false;
	fam_take_failed(f, true);
	main_name = main_name ? main_name + 1 : f->ring;
	ents = fam_entries(f, main_name, &n);
	for (size_t k = 0; k < n; k++) {
		const char *name = ents[k].name;
		struct fam_sub *sub, **v;
		unsigned gen = ents[k].rn.gen;
		pid_t pid = ents[k].rn.pid;

		sub = fam_sub_find(f, name);
		if (!sub) {
			sub = calloc(1, sizeof(*sub));
			v = realloc(f->subs, (f->nsubs + 1) * sizeof(*v));
			if (!sub || !v) {
				free(sub);
				if (v)
					f->subs = v;
				break;
			}
			f->subs = v;
			/*
			 * A name we recorded and removed can come back: the process
			 * exec'd after we finished its file.  Count its images.
			 */
			for (size_t i = 0; i < f->nsubs; i++)
				if (f->subs[i]->pid == pid && f->subs[i]->gen >= gen)
					gen = f->subs[i]->gen + 1;
			if (gen > ents[k].rn.gen)
				fam_came_back(f, pid, ents[k].rn.start);
			if (pid == f->main_pid && !gen)
				gen = 1;
			f->subs[f->nsubs++] = sub;
			snprintf(sub->name, sizeof(sub->name), "%s", name);
			sub->pid = pid;
			sub->start = ents[k].rn.start;
			sub->gen = gen;
			sub->follow = (pid == f->main_pid || f->o->follow_fork) &&
				      (!gen || f->o->follow_exec);
		}
		if (!sub->active && !sub->done && !fam_sub_start(f, sub))
			f->rescan = true; /* being created: look again soon */
	}
	free(ents);
}

void fam_look(struct fam *f)
{
	char buf[4096];

	if (f->inotify >= 0)
		while (read(f->inotify, buf, sizeof(buf)) > 0)
			f->rescan = true;
	if (f->rescan)
		fam_scan(f);
}

/* Did the image that wrote rf exec (its successor marked the file)? */
static bool fam_execed(const struct rr_file *rf)
{
	uint32_t flags = 0;

	return !fam_flags(rf, &flags) && (flags & RIP_P_EXECED);
}

/*
 * Did sub's process, gone from its file (fam_sub_gone: no longer mapped),
 * exec another image (a shell's child that runs a command: exec'd, not
 * killed)?  Its file then says "replaced by execve" to rip ps DIR/PID, not
 * "dead (killed or crashed)".  Told only while the process runs the other
 * image (the same process by its start time, not a zombie); once that image
 * ended too, it cannot be.  A followed image marks the file itself, but
 * often only after we finished it.
 */
static void fam_sub_execed(struct fam_sub *sub)
{
	struct rr_file *f = &sub->rec.f;
	char ignore[RR_ERR_MAX];
	uint32_t flags = 0;
	int ret;

	sub->exec_img[0] = 0;
	if (f->fd < 0 || fam_flags(f, &flags) || (flags & RIP_P_EXITED) ||
	    rr_proc_start_ticks(f->hdr.pid) != f->hdr.start_ticks)
		return;
	/*
	 * its image's path, unless it exec'd its own program again; none to
	 * read: it is exiting (its memory went before it is a zombie), not exec'd
	 */
	ret = rr_exec_image(f, f->hdr.pid, false, sub->exec_img, sizeof(sub->exec_img));
	if (ret < 0) {
		sub->exec_img[0] = 0;
		return;
	}
	if (ret != 1)
		sub->exec_img[0] = 0;
	if (!(flags & RIP_P_EXECED)) /* (a followed image marks it itself, often later) */
		rr_mark_execed(f, ignore, sizeof(ignore));
}

/* How sub's traced image ended, by its file's marks (sub.end). */
static int fam_sub_end(const struct fam_sub *sub)
{
	uint32_t flags = 0;

	if (sub->cut)
		return 0;
	if (fam_flags(&sub->rec.f, &flags))
		return FAM_END_DEAD;
	return flags & RIP_P_EXITED ? FAM_END_EXIT :
	       flags & RIP_P_EXECED ? FAM_END_EXEC :
				      FAM_END_DEAD;
}

/*
 * The note RING.gone beside the ring file of sub, a followed child that
 * died (killed or crashed) while we run: the absolute path of the copy of
 * its file that its trace keeps, which rr_find_pid reads, so that rip ps
 * PID of a server's worker that was killed shows where its threads were,
 * as it does for the program, without keeping the file itself (a pool's
 * workers ended by their parent's SIGTERM would each leave one).  Written
 * under a name no reader takes, then renamed; fam_cleanup removes the notes.
 */
static void fam_note_gone(struct fam *f, const struct fam_sub *sub)
{
	char copy[PATH_MAX + 16], abs[PATH_MAX], tmp[PATH_MAX + NAME_MAX + 16],
		note[PATH_MAX + NAME_MAX + 16];
	size_t len;
	int fd;

	if (snprintf(copy, sizeof(copy), "%s/" RR_TRACE_RING, sub->dir) >= (int)sizeof(copy) ||
	    !realpath(copy, abs) ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s" RN_GONE, f->ringdir, sub->name) >=
		    (int)sizeof(tmp) ||
	    snprintf(note, sizeof(note), "%s/%s" RN_GONE, f->ringdir, sub->name) >=
		    (int)sizeof(note))
		return;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	len = strlen(abs);
	if (write(fd, abs, len) != (ssize_t)len || close(fd) || rename(tmp, note))
		unlink(tmp);
}

/*
 * Finish sub's trace: drain, metadata, index; its ring file goes.  gone:
 * fam_sub_gone saw its image go; else (the program ended first) whether it
 * still runs is asked now.  Not asked again after fam_sub_gone: an image
 * that exec'd is seen mapped for a moment while its successor marks the
 * file (lib/ring.c rip_mark_execed), and was then reported cut.
 */
static void fam_sub_finish(struct fam *f, struct fam_sub *sub, bool gone)
{
	char err[RR_ERR_MAX], path[PATH_MAX + NAME_MAX + 2];

	if (!sub->active)
		return;
	sub->active = false;
	sub->done = true;
	sub->cut = !gone && rr_alive(&sub->rec.f) == 1;
	if (gone)
		fam_sub_execed(sub);
	sub->end = fam_sub_end(sub);
	snprintf(sub->comm, sizeof(sub->comm), "%.16s", sub->rec.f.hdr.comm);
	/*
	 * The copy of its ring file, as the program's: rip ps and top DIR/PID, and
	 * the names of the functions a forked child's calls use that its parent
	 * named before the fork (in the file's table, not in this trace).
	 */
	sub->rec.keep_ring = true;
	fam_fn_ids(f, &sub->rec.f);
	fam_second_off(f, &sub->rec.f);
	fam_count_denied(f, &sub->rec.f);
	if (rec_finish(&sub->rec, err, sizeof(err))) {
		fam_warn(f, "pid %d: %s", (int)sub->pid, err);
		f->failed++;
	} else {
		f->traces++;
		sub->recorded = true;
		sub->events = sub->rec.st.events;
		sub->lost = rec_lost_events(&sub->rec);
		sub->corrupt = sub->rec.st.corrupt;
		sub->samples = sub->rec.st.samples;
		sub->samples_lost = sub->rec.st.samples_lost;
		if (!sub->rec.ring_kept)
			fam_warn(f, "pid %d: no copy of its ring file in %s (%s)", (int)sub->pid,
				 sub->dir, sub->rec.ring_err);
	}
	snprintf(path, sizeof(path), "%s/%s", f->ringdir, sub->name);
	/*
	 * The program's image that no other replaced: if a signal killed the
	 * program, it killed this one, whose file rip ps PID then reads.
	 */
	if (sub->recorded && !sub->cut && sub->pid == f->child && !fam_execed(&sub->rec.f)) {
		if (f->last_ring[0])
			unlink(f->last_ring);
		snprintf(f->last_ring, sizeof(f->last_ring), "%s/.last-%s", f->ringdir, sub->name);
		if (rename(path, f->last_ring)) {
			unlink(path);
			f->last_ring[0] = 0;
		}
		snprintf(f->last_name, sizeof(f->last_name), "%s", sub->name);
		snprintf(f->last_comm, sizeof(f->last_comm), "%s", sub->comm);
		snprintf(f->last_dir, sizeof(f->last_dir), "%s", sub->dir);
		rec_close(&sub->rec);
		sub->name[0] = 0;
		return;
	}
	rec_close(&sub->rec);
	/* A child killed while we run: rip ps PID is sent to the copy its trace keeps. */
	if (sub->recorded && sub->rec.ring_kept && sub->end == FAM_END_DEAD)
		fam_note_gone(f, sub);
	/* A process that outlives us (a daemon's child) keeps its file, where rip ps finds it. */
	if (!sub->cut || !fam_keep(f, path, sub->pid, sub->comm, 0))
		unlink(path);
	sub->name[0] = 0; /* the name is free for the next image */
}

/*
 * Has sub's process exited or exec'd, so that its file is done?  rr_alive
 * reads /proc, and a compiler's maps are long: polled at every pass, that
 * was most of what rip run spent on a followed make.  The file's own flags
 * answer first; a process that says nothing is asked at most every
 * FAM_ALIVE_NS (a child killed outright is finished that much later).
 */
static bool fam_sub_gone(struct fam_sub *sub)
{
	struct rr_file *f = &sub->rec.f;
	uint32_t flags = 0;
	int64_t now;

	if (!fam_flags(f, &flags)) {
		if (flags & RIP_P_EXECED)
			return true;	  /* its new image marked it: it is written no more */
		if (flags & RIP_P_EXITED) /* exiting: gone once the process is */
			return rr_proc_start_ticks(f->hdr.pid) != f->hdr.start_ticks;
	}
	now = rr_mono_ns();
	if (now - sub->alive_ns < FAM_ALIVE_NS)
		return false;
	sub->alive_ns = now;
	return rr_alive(f) == 0;
}

int fam_poll(struct fam *f)
{
	char err[RR_ERR_MAX];
	int total = 0;

	for (size_t i = 0; i < f->nsubs; i++) {
		struct fam_sub *sub = f->subs[i];
		int n;

		if (!sub->active)
			continue;
		n = rec_poll(&sub->rec, err, sizeof(err));
		if (n < 0) {
			fam_warn(f, "pid %d: %s; its trace is removed", (int)sub->pid, err);
			rec_close(&sub->rec);
			sub->active = false;
			sub->done = true;
			f->failed++;
			continue;
		}
		total += n;
		/* Its process exited or exec'd: finish now. */
		if (!n && fam_sub_gone(sub))
			fam_sub_finish(f, sub, true);
	}
	return total;
}

void fam_end(struct fam *f, bool failed, bool sync)
{
	char path[PATH_MAX + NAME_MAX + 2];
	int fd;

	if (failed)
		f->failed = 0;
	for (size_t i = 0; i < f->nsubs; i++) {
		struct fam_sub *sub = f->subs[i];

		if (sub->active && !failed)
			fam_sub_finish(f, sub, false);
		else if (sub->active)
			rec_close(&sub->rec); /* the program's trace failed: the others go too */
		if ((!sub->follow || failed) && sub->name[0]) {
			snprintf(path, sizeof(path), "%s/%s", f->ringdir, sub->name);
			unlink(path);
		}
	}
	fam_take_failed(f, true);
	/* The others' traces were written without fsync: make them durable together. */
	if (!f->traces || !sync)
		return;
	fd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || syncfs(fd)) {
		fam_warn(f, "%s: the children's traces may not be on disk yet: %s", f->dir,
			 strerror(errno));
		f->failed++;
	}
	if (fd >= 0)
		close(fd);
}

void fam_totals(const struct fam *f, struct fam_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < f->nsubs; i++) {
		const struct fam_sub *sub = f->subs[i];

		if (!sub->recorded)
			continue;
		t->events += sub->events;
		t->lost += sub->lost;
		t->lossy += sub->lost || sub->corrupt;
		t->cut += sub->cut;
	}
}
