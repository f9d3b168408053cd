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
#include "tools/tool.h"

static int cmd_ls(int argc, char **argv);
static int cmd_gc(int argc, char **argv);

static const struct rip_cmd cmd_ls_def = {
	.name = "ls",
	.run = cmd_ls,
	.summary = "list ring files: pid, program, alive or dead, slots in use",
	.usage = "usage: rip ls [options]\n"
		 "\n"
		 "List the ring files in $RIP_DIR, else $XDG_RUNTIME_DIR/rip and /dev/shm.\n"
		 "\n"
		 "  -d, --dir DIR   look in DIR instead\n"
		 "  -j, --json      machine-readable output\n"
		 "  -h, --help      this text\n",
};

static const struct rip_cmd cmd_gc_def = {
	.name = "gc",
	.run = cmd_gc,
	.summary = "remove the ring files of processes that are gone",
	.usage = "usage: rip gc [options]\n"
		 "\n"
		 "Remove the ring files of dead processes from $RIP_DIR, else\n"
		 "$XDG_RUNTIME_DIR/rip and /dev/shm.  Live processes' files, and files that\n"
		 "are not valid ring files, are left alone.\n"
		 "\n"
		 "  -d, --dir DIR   look in DIR instead\n"
		 "  -n, --dry-run   only say what would be removed\n"
		 "  -j, --json      machine-readable output\n"
		 "  -h, --help      this text\n",
};

struct ls_entry {
	char path[PATH_MAX];
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

/* Visit every file that looks like a ring file (magic or rip-*.ring name). */
static int ls_scan(const char *only_dir, ls_fn fn, void *arg, size_t *seen)
{
	char dirs[3][PATH_MAX];
	int nd, ret = 0;

	if (only_dir) {
		snprintf(dirs[0], PATH_MAX, "%s", only_dir);
		nd = 1;
	} else {
		nd = rr_dirs(dirs, 3);
	}
	for (int i = 0; i < nd && !ret; i++) {
		struct dirent **names;
		int n = scandir(dirs[i], &names, NULL, alphasort);

		if (n < 0) {
			if (only_dir) {
				tool_err("%s: %s", only_dir, strerror(errno));
				return -errno;
			}
			continue;
		}
		for (int k = 0; k < n; k++) {
			struct ls_entry *e = calloc(1, sizeof(*e));
			struct rr_file f;
			struct stat st;
			char magic[8] = "";
			int fd, len;
			bool named;

			if (!e) {
				ret = -ENOMEM;
				break;
			}
			len = snprintf(e->path, sizeof(e->path), "%s/%s", dirs[i], names[k]->d_name);
			if (len < 0 || (size_t)len >= sizeof(e->path) || lstat(e->path, &st) ||
			    !S_ISREG(st.st_mode))
				goto next;
			named = !strncmp(names[k]->d_name, "rip-", 4) &&
				strlen(names[k]->d_name) > 5 &&
				!strcmp(names[k]->d_name + strlen(names[k]->d_name) - 5, ".ring");
			fd = open(e->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
			if (fd >= 0) {
				if (pread(fd, magic, sizeof(magic), 0) != (ssize_t)sizeof(magic))
					magic[0] = 0;
				close(fd);
			}
			if (!named && memcmp(magic, RIP_MAGIC, sizeof(magic)))
				goto next;
			e->mtime = st.st_mtime;
			if (rr_open(e->path, &f, e->why, sizeof(e->why)) == 0) {
				struct rip_file_hdr live;
				char why[RR_ERR_MAX];

				/* the file shrank since it was opened: what it said then */
				rr_live_hdr(&f, &live, why, sizeof(why));
				e->valid = true;
				e->hdr = f.hdr;
				e->alive = rr_alive(&f);
				e->threads = live.live_threads;
				e->coros = live.live_coros;
				e->used = live.fresh;
				e->clean_exit = live.proc_flags & (RIP_P_EXITED | RIP_P_CLOSED);
				e->execed = (live.proc_flags & RIP_P_EXECED) ||
					    (!e->alive && rr_replaced(&f));
				e->closed = !(live.proc_flags & RIP_P_EXITED) &&
					    (live.proc_flags & RIP_P_CLOSED);
				rr_close(&f);
			}
			if (seen)
				(*seen)++;
			ret = fn(e, arg);
		next:
			free(e);
			free(names[k]);
			if (ret) {
				for (int q = k + 1; q < n; q++)
					free(names[q]);
				break;
			}
		}
		free(names);
	}
	return ret;
}

struct ls_out {
	bool json;
	size_t n;
};

static int ls_print(struct ls_entry *e, void *arg)
{
	struct ls_out *o = arg;
	const char *base = strrchr(e->path, '/');

	base = base ? base + 1 : e->path;
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
			return tool_usage_error(&cmd_ls_def, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc)
		return tool_usage_error(&cmd_ls_def, "unexpected argument '%s'", argv[optind]);
	if (o.json)
		printf("[");
	else
		printf("%-8s %-16s %-7s %8s %8s %14s %19s  %s\n", "PID", "PROGRAM", "STATE",
		       "THREADS", "COROS", "INUSE/SLOTS", "CREATED", "FILE");
	ret = ls_scan(dir, ls_print, &o, NULL);
	if (o.json)
		printf("]\n");
	return ret ? EXIT_FAIL : EXIT_OK;
}

struct gc_state {
	bool dry, json;
	size_t removed, failed, kept;
};

static int gc_one(struct ls_entry *e, void *arg)
{
	struct gc_state *g = arg;

	if (!e->valid || e->alive) {
		g->kept++;
		return 0;
	}
	if (!g->dry && unlink(e->path)) {
		tool_err("cannot remove %s: %s", e->path, strerror(errno));
		g->failed++;
		return 0;
	}
	if (g->json) {
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

static int cmd_gc(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dir", required_argument, NULL, 'd' },
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
	while ((c = getopt_long(argc, argv, "d:njh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
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
			return tool_usage_error(&cmd_gc_def, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc)
		return tool_usage_error(&cmd_gc_def, "unexpected argument '%s'", argv[optind]);
	if (g.json)
		printf("[");
	ret = ls_scan(dir, gc_one, &g, NULL);
	if (g.json)
		printf("]\n");
	else
		printf("%zu %s, %zu kept (alive or not ring files)%s\n", g.removed,
		       g.dry ? "would be removed" : "removed", g.kept,
		       g.failed ? ", some could not be removed" : "");
	return ret || g.failed ? EXIT_FAIL : EXIT_OK;
}
