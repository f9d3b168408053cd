/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/cmd-ls.c - `rip ls` lists the ring files in the ring directories
 * (pid, program, alive or dead, slots in use) and `rip gc` removes those of
 * processes that are gone.  Files that are not valid ring files are shown
 * as such and never removed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "read/ringfile.h"
#include "read/ringname.h"
#include "record/family.h"
#include "tools/tool.h"

static int cmd_ls(int argc, char **argv);
static int cmd_gc(int argc, char **argv);

static const struct rip_cmd cmd_ls_def = {
	.name = "ls",
	.run = cmd_ls,
	.summary = "list ring files: pid, program, alive or dead, slots in use",
	.usage = "usage: rip ls [options]\n"
		 "\n"
		 "List the ring files in $RIP_DIR, else $XDG_RUNTIME_DIR/rip and /dev/shm,\n"
		 "and in the directories rip run keeps there (rip-run.XXXXXX): yours only.\n"
		 "\n"
		 "  -d, --dir DIR   look in DIR instead\n"
		 "  -j, --json      machine-readable output\n"
		 "  -h, --help      this text\n"
		 "\n"
		 "Exit status: 0 success (bad files are listed as such), 1 failure (--dir or\n"
		 "RIP_DIR missing or not a directory), 2 usage.\n",
};

static const struct rip_cmd cmd_gc_def = {
	.name = "gc",
	.run = cmd_gc,
	.summary = "remove the ring files of processes that are gone",
	.usage = "usage: rip gc [options]\n"
		 "\n"
		 "Remove the ring files of dead processes from $RIP_DIR, else\n"
		 "$XDG_RUNTIME_DIR/rip and /dev/shm, and from the directories rip run keeps\n"
		 "there (rip-run.XXXXXX), with such a directory once no rip run holds it.\n"
		 "Live processes' files, files that are not valid ring files and other\n"
		 "users' files are left alone.\n"
		 "\n"
		 "  -d, --dir DIR   look in DIR instead\n"
		 "  -a, --all-users every user's files of dead processes too (root)\n"
		 "  -n, --dry-run   only say what would be removed\n"
		 "  -j, --json      machine-readable output\n"
		 "  -h, --help      this text\n"
		 "\n"
		 "Exit status: 0 success, 1 failure (a file that could not be removed, --dir\n"
		 "or RIP_DIR missing or not a directory), 2 usage.\n",
};

struct ls_entry {
	char path[PATH_MAX];
	dev_t dev; /* the file that was read, for rip gc to remove that one only */
	ino_t ino;
	bool valid;
	char why[RR_ERR_MAX];
	int alive;
	struct rip_file_hdr hdr;
	uint64_t threads, coros;
	uint32_t used;
	time_t mtime;
	bool clean_exit;
	bool execed;
	bool closed;
};

typedef int (*ls_fn)(struct ls_entry *e, void *arg);

struct ls_walk {
	ls_fn fn;
	void *arg;
	int (*dir_fn)(const char *path, void *arg); /* rip run's directories, after their files */
};

/* One file of rr_each_file: a ring file (magic or rip-*.ring name) goes to the walk's fn. */
static int ls_one(const char *path, const struct stat *st, void *arg)
{
	struct ls_walk *w = arg;
	const char *base = strrchr(path, '/');
	struct ls_entry *e;
	struct rr_file f;
	char magic[8] = "";
	struct rn_name rn;
	int fd, ret;

	base = base ? base + 1 : path;
	if (S_ISDIR(st->st_mode))
		return w->dir_fn ? w->dir_fn(path, w->arg) : 0;
	/*
	 * What the scan saw (lstat) is checked again on the descriptor: a name
	 * in a shared directory can be swapped for a link, a FIFO or another
	 * user's file in between.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY);
	if (fd >= 0) {
		struct stat fst;

		if (fstat(fd, &fst) || !S_ISREG(fst.st_mode) || fst.st_uid != st->st_uid ||
		    pread(fd, magic, sizeof(magic), 0) != (ssize_t)sizeof(magic))
			magic[0] = 0;
		close(fd);
	}
	if (rn_parse(base, &rn) && memcmp(magic, RIP_MAGIC, sizeof(magic)))
		return 0;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	snprintf(e->path, sizeof(e->path), "%s", path);
	e->mtime = st->st_mtime;
	/* The owner the scan saw, checked on the descriptor; a link is not followed. */
	if (rr_open_owned(e->path, st->st_uid, &f, e->why, sizeof(e->why)) == 0) {
		struct rip_file_hdr live;
		char why[RR_ERR_MAX];

		/* the file shrank since it was opened: what it said then */
		rr_live_hdr(&f, &live, why, sizeof(why));
		e->valid = true;
		e->dev = f.st.st_dev;
		e->ino = f.st.st_ino;
		e->hdr = f.hdr;
		e->alive = rr_alive(&f);
		e->threads = live.live_threads;
		e->coros = live.live_coros;
		e->used = live.fresh;
		e->clean_exit = live.proc_flags & (RIP_P_EXITED | RIP_P_CLOSED);
		e->execed = (live.proc_flags & RIP_P_EXECED) || (!e->alive && rr_replaced(&f));
		e->closed = !(live.proc_flags & RIP_P_EXITED) && (live.proc_flags & RIP_P_CLOSED);
		rr_close(&f);
	}
	ret = w->fn(e, w->arg);
	free(e);
	return ret;
}

/*
 * Visit every ring file of ours (magic or rip-*.ring name) in the ring
 * directories and in the directories rip run keeps there (rr_each_file);
 * dir_fn, if given, gets each of rip run's directories after its files.
 */
static int ls_scan(const char *only_dir, unsigned flags, ls_fn fn,
		   int (*dir_fn)(const char *path, void *arg), void *arg)
{
	struct ls_walk w = { .fn = fn, .arg = arg, .dir_fn = dir_fn };
	char err[RR_ERR_MAX];
	int ret = rr_each_file(only_dir, flags, ls_one, &w, err, sizeof(err));

	if (ret < 0)
		tool_err("%s", err);
	return ret;
}

struct ls_out {
	bool json;
	size_t n;
};

/* The table's header, or the JSON array's start: before the first file, not before an error. */
static void ls_head(const struct ls_out *o)
{
	if (o->json)
		printf("[");
	else
		printf("%-8s %-16s %-7s %8s %8s %14s %19s  %s\n", "PID", "PROGRAM", "STATE",
		       "THREADS", "COROS", "INUSE/SLOTS", "CREATED", "FILE");
}

static int ls_print(struct ls_entry *e, void *arg)
{
	struct ls_out *o = arg;
	const char *base = strrchr(e->path, '/');

	base = base ? base + 1 : e->path;
	if (!o->n)
		ls_head(o);
	if (o->json) {
		printf("%s{\"path\":", o->n ? "," : "");
		json_str(stdout, e->path);
		if (e->valid) {
			printf(",\"valid\":true,\"pid\":%d,\"comm\":", e->hdr.pid);
			json_str(stdout, e->hdr.comm);
			printf(",\"exe\":");
			json_str(stdout, e->hdr.exe);
			printf(",\"alive\":%s,\"exec_replaced\":%s,\"ring_closed\":%s",
			       e->alive ? "true" : "false", e->execed ? "true" : "false",
			       e->closed ? "true" : "false");
			printf(",\"exited_cleanly\":%s,\"threads\":%llu,"
			       "\"coroutines\":%llu,\"slots_ever_used\":%u,\"slots\":%u,\"bytes\":%llu}",
			       e->clean_exit ? "true" : "false",
			       (unsigned long long)e->threads, (unsigned long long)e->coros,
			       e->used, e->hdr.slot_count, (unsigned long long)e->hdr.file_size);
		} else {
			printf(",\"valid\":false,\"error\":");
			json_str(stdout, e->why);
			printf("}");
		}
	} else if (e->valid) {
		char when[32];
		struct tm tm;
		time_t t = (time_t)(e->hdr.create_realtime / 1000000000u);

		localtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		printf("%-8d %-16s %-7s %8llu %8llu %6llu/%-7u %s  %s\n", e->hdr.pid, e->hdr.comm,
		       e->alive ? "alive" : e->closed ? "closed" : e->clean_exit ? "exited"
				  : e->execed ? "exec'd" : "dead",
		       (unsigned long long)e->threads, (unsigned long long)e->coros,
		       (unsigned long long)(e->threads + e->coros), e->hdr.slot_count, when, e->path);
	} else {
		printf("%-8s %-16s %-7s %8s %8s %14s %19s  %s (%s)\n", "-", "-", "bad", "-", "-",
		       "-", "-", e->path, e->why);
	}
	o->n++;
	return 0;
}

RIP_COMMAND(cmd_ls_def);
RIP_COMMAND(cmd_gc_def);

static int cmd_ls(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct ls_out o = { 0 };
	const char *dir = NULL;
	int c, ret;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "d:jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			tool_help(&cmd_ls_def);
			return EXIT_OK;
		default:
			return tool_bad_option(&cmd_ls_def, argv, longopts);
		}
	}
	if (optind != argc)
		return tool_usage_error(&cmd_ls_def, "unexpected argument '%s'", argv[optind]);
	ret = ls_scan(dir, 0, ls_print, NULL, &o);
	if (!ret && !o.n)
		ls_head(&o); /* no file: the empty table */
	if (o.json && (o.n || !ret))
		printf("]\n");
	return ret ? EXIT_FAIL : EXIT_OK;
}

struct gc_state {
	bool dry, json, all;
	bool opened; /* the JSON array's "[" is out */
	size_t removed, failed, kept;
	size_t dirs; /* rip run's directories removed, of removed (not files: the summary) */
};

/* The JSON array's start, before its first entry: not before an error. */
static void gc_open(struct gc_state *g)
{
	if (g->json && !g->opened)
		printf("[");
	g->opened = true;
}

static int gc_one(struct ls_entry *e, void *arg)
{
	struct gc_state *g = arg;
	char dir[PATH_MAX];
	const char *base;
	struct stat st;
	int dfd;

	if (!e->valid || e->alive) {
		g->kept++;
		return 0;
	}
	/*
	 * The file that was read, still there under its name: not one swapped in
	 * since.  Looked at and removed under a descriptor of its directory: with
	 * --all-users that may be another user's rip run directory, which they
	 * may swap for a link to another directory meanwhile.
	 */
	base = strrchr(e->path, '/');
	if (base)
		snprintf(dir, sizeof(dir), "%.*s", base == e->path ? 1 : (int)(base - e->path),
			 e->path);
	dfd = open(base ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	base = base ? base + 1 : e->path;
	if (dfd < 0 || fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) || st.st_dev != e->dev ||
	    st.st_ino != e->ino) {
		if (dfd >= 0)
			close(dfd);
		g->kept++;
		return 0;
	}
	if (!g->dry && unlinkat(dfd, base, 0)) {
		tool_err("cannot remove %s: %s", e->path, strerror(errno));
		close(dfd);
		g->failed++;
		return 0;
	}
	close(dfd);
	if (g->json) {
		gc_open(g);
		printf("%s{\"path\":", g->removed ? "," : "");
		json_str(stdout, e->path);
		printf(",\"pid\":%d,\"comm\":", e->hdr.pid);
		json_str(stdout, e->hdr.comm);
		printf(",\"removed\":%s}", g->dry ? "false" : "true");
	} else {
		printf("%s %s (pid %d, %s)\n", g->dry ? "would remove" : "removed", e->path,
		       e->hdr.pid, e->hdr.comm);
	}
	g->removed++;
	return 0;
}

/*
 * Empty the directory name under dir (rip run's unwind rules) and remove it:
 * opened without following a link, and only if it is still the directory
 * *st of owner that was judged junk.  false if something stays.
 */
static bool gc_sub_dir(int dir, const char *name, const struct stat *st, uid_t owner)
{
	int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat fst;
	struct dirent *x;
	DIR *r;

	if (fd < 0)
		return false;
	if (fstat(fd, &fst) || fst.st_dev != st->st_dev || fst.st_ino != st->st_ino ||
	    fst.st_uid != owner || !(r = fdopendir(fd))) {
		close(fd);
		return false;
	}
	/* --track's marks are directories (empty), the rules files */
	while ((x = readdir(r)))
		if (strcmp(x->d_name, ".") && strcmp(x->d_name, "..") &&
		    unlinkat(dirfd(r), x->d_name, 0) && errno == EISDIR)
			unlinkat(dirfd(r), x->d_name, AT_REMOVEDIR);
	closedir(r);
	return !unlinkat(dir, name, AT_REMOVEDIR);
}

/*
 * What is left in a directory of rip run's (RR_RUN_DIR_PREFIX) that no rip
 * run holds any more: librip's markers of files it could not create, the
 * unwind rules the family shared, the marks of --track's functions found,
 * files of processes that died while creating them; then the directory
 * itself.  Ring files were seen first
 * (gc_one), and one of a live process keeps the directory.  With
 * --all-users the directory may be another user's, who can swap anything in
 * it for a link meanwhile: it is read and emptied through descriptors, its
 * names looked at without following links.
 */
static int gc_run_dir(const char *path, void *arg)
{
	struct gc_state *g = arg;
	struct stat dst;
	struct dirent *e;
	bool rest = false;
	int fd;
	DIR *d;

	if (rr_run_dir_held(path))
		return 0; /* its rip run runs */
	/* The directory's owner's files (the caller's but with --all-users) */
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &dst) || !(d = fdopendir(fd))) {
		close(fd);
		return 0;
	}
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		struct rn_name rn;
		struct stat st;
		uint64_t need;
		bool junk;
		int err;

		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		if (fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) || st.st_uid != dst.st_uid) {
			rest = true;
			continue;
		}
		if (S_ISDIR(st.st_mode) &&
		    (!strcmp(n, FAM_RULES_DIR) || !strcmp(n, FAM_TRACK_DIR))) {
			junk = true;
		} else if (S_ISREG(st.st_mode) && !rn_parse_failed(n, &rn, &err, &need)) {
			junk = true;
		} else if (S_ISREG(st.st_mode) && !rn_parse_gone(n, &rn)) {
			junk = true; /* a note of rip run's on a dead child (fam_note_gone) */
		} else if (S_ISREG(st.st_mode) && !rn_parse(n, &rn)) {
			/*
			 * A ring file gc_one kept: one never finished (invalid), junk once
			 * its process (pid, start time) is gone; or one gc_one would remove
			 * but for --dry-run.
			 */
			junk = rr_proc_start_ticks(rn.pid) != rn.start;
		} else {
			junk = false; /* not ours to judge */
		}
		if (!junk) {
			rest = true;
			continue;
		}
		if (g->dry)
			continue;
		if (S_ISDIR(st.st_mode) ? !gc_sub_dir(dirfd(d), n, &st, dst.st_uid) :
					  unlinkat(dirfd(d), n, 0) != 0)
			rest = true;
	}
	closedir(d);
	if (rest || (!g->dry && rmdir(path)))
		return 0;
	if (g->json) {
		gc_open(g);
		printf("%s{\"path\":", g->removed ? "," : "");
		json_str(stdout, path);
		printf(",\"directory\":true,\"removed\":%s}", g->dry ? "false" : "true");
	} else {
		printf("%s %s (a directory rip run left)\n", g->dry ? "would remove" : "removed",
		       path);
	}
	g->removed++;
	g->dirs++;
	return 0;
}

/* The last line: ring files removed and kept, then rip run's directories removed apart. */
static void gc_summary(const struct gc_state *g)
{
	const char *verb = g->dry ? "would be removed" : "removed";
	char dirs[96] = "";

	if (g->dirs)
		snprintf(dirs, sizeof(dirs), "; %zu director%s rip run left %s", g->dirs,
			 g->dirs == 1 ? "y" : "ies", verb);
	printf("%zu %s, %zu kept (alive or not ring files)%s%s\n", g->removed - g->dirs, verb,
	       g->kept, dirs, g->failed ? ", some could not be removed" : "");
}

static int cmd_gc(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "all-users", no_argument, NULL, 'a' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct gc_state g = { 0 };
	const char *dir = NULL;
	int c, ret;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "d:anjh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'a':
			g.all = true;
			break;
		case 'n':
			g.dry = true;
			break;
		case 'j':
			g.json = true;
			break;
		case 'h':
			tool_help(&cmd_gc_def);
			return EXIT_OK;
		default:
			return tool_bad_option(&cmd_gc_def, argv, longopts);
		}
	}
	if (optind != argc)
		return tool_usage_error(&cmd_gc_def, "unexpected argument '%s'", argv[optind]);
	ret = ls_scan(dir, g.all ? RR_EACH_ALL_USERS : 0, gc_one, gc_run_dir, &g);
	if (g.json && (g.opened || !ret)) {
		gc_open(&g);
		printf("]\n");
	} else if (!g.json && (!ret || g.removed || g.kept || g.failed)) {
		/* no summary of nothing done when the directory could not be read */
		gc_summary(&g);
	}
	return ret || g.failed ? EXIT_FAIL : EXIT_OK;
}
