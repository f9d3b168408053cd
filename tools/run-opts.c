/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/run-opts.c - `rip run`'s options: getopt, the checks that make a
 * usage error (which names the option and what is wrong), --track specs
 * joined into RIP_TRACK's value, --module files found and read for their
 * kinds, --functions=GLOB joined into RIP_FUNCTIONS's, and --list-modules
 * (the installed modules with their kinds, as sp-rtrace -l did).
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rip/module.h>
#include <rip/resource.h>
#include <internal/pagemap.h>

#include "record/prog.h"
#include "read/modinfo.h"
#include "tools/format.h"
#include "tools/run-opts.h"
#include "tools/store.h"

static void run_list_kind(const struct mi_kind *k)
{
	printf("  kind %s: %s%s\n", k->name, k->desc,
	       k->flags & RIP_KIND_REFCOUNT   ? " (refcounted)"
	       : k->flags & RIP_KIND_COUNTER ? " (a counter: bytes per stack)"
					      : "");
}

/* One --track: checked against the grammar and the others, added to RIP_TRACK's value. */
static int run_track_opt(const struct rip_cmd *cmd, struct run_opts *o, const char *spec)
{
	size_t len = strlen(o->track_env), n = strlen(spec);
	char err[256];

	if (rip_track_add(spec, n, o->track, &o->ntrack, RIP_TRACK_MAX, err, sizeof(err)))
		return tool_usage_error(cmd, "--track='%s': %s", spec, err);
	if (len + n + 2 > sizeof(o->track_env))
		return tool_usage_error(cmd, "--track='%s': the specs are too long",
					spec);
	snprintf(o->track_env + len, sizeof(o->track_env) - len, "%s%s", len ? ";" : "", spec);
	o->fam.track = o->track_env;
	o->fam.res |= FAM_RES_MOD; /* the category of the modules' kinds, which ours are */
	return 0;
}

/* --list-modules: the modules rip run finds, with their kinds (as sp-rtrace -l did). */
static void run_list_modules(void)
{
	char dirs[PROG_MODULE_DIRS][4096], err[512];
	int n = prog_module_dirs(dirs), shown = 0;

	printf("Built in (librip-preload.so): --mem, --fd, --shm\n"
	       "  kind mem: heap blocks and anonymous mappings\n"
	       "  kind fd: file descriptors\n"
	       "  kind shm: shared memory segments\n"
	       "  kind shm-map: attachments of shared memory\n");
	for (int d = 0; d < n; d++) {
		struct dirent **ents;
		int k = scandir(dirs[d], &ents, NULL, alphasort);

		for (int i = 0; i < k; i++) {
			const char *name = ents[i]->d_name;
			size_t len = strlen(name);
			char path[4096 + 258];
			struct mi_module m;

			if (len > 3 && !strcmp(name + len - 3, ".so")) {
				snprintf(path, sizeof(path), "%.4095s/%.255s", dirs[d], name);
				if (!mi_read(path, &m, err, sizeof(err))) {
					printf("\n--module=%.*s: %s (%s)\n", (int)(len - 3), name,
					       m.desc, path);
					for (uint32_t j = 0; j < m.nkinds; j++)
						run_list_kind(&m.kinds[j]);
					shown++;
				}
			}
			free(ents[i]);
		}
		if (k >= 0)
			free(ents);
	}
	if (!shown)
		printf("\nno tracing module found (looked in %s%s)\n", n ? dirs[0] : "no directory",
		       n > 1 ? " and others" : "");
}

/* --module=NAME|PATH.so: found, and a tracing module; its path added to o->modules. */
static int run_add_module(const struct rip_cmd *cmd, struct run_opts *o, const char *spec)
{
	char path[PATH_MAX], err[PATH_MAX + 128];
	size_t len = strlen(o->modules);
	struct mi_module m;

	if (o->nmodules == RUN_MODULES_MAX)
		return tool_usage_error(cmd, "--module: %d modules at most",
					RUN_MODULES_MAX);
	if (prog_find_module(spec, path, sizeof(path)))
		return tool_usage_error(cmd,
					"--module=%s: no such %s (rip run --list-modules lists "
					"the installed ones)",
					spec, strchr(spec, '/') ? "file" : "module");
	if (mi_read(path, &m, err, sizeof(err))) {
		return tool_usage_error(cmd, "--module=%s: %s", spec, err);
	}
	if (strpbrk(path, ": \t") || len + strlen(path) + 2 > sizeof(o->modules))
		return tool_usage_error(cmd,
					"--module=%s: LD_PRELOAD cannot hold %s (a ':' or blank in "
					"it, or too long)",
					spec, path);
	snprintf(o->modules + len, sizeof(o->modules) - len, "%s%s", len ? ":" : "", path);
	o->nmodules++;
	o->fam.res |= FAM_RES_MOD;
	o->fam.modules = o->modules;
	return 0;
}

/*
 * One more glob of --functions=GLOB, into o->fam.function_globs (joined
 * by commas, as RIP_FUNCTIONS takes them).  0, or -EINVAL: empty, holds a
 * comma, or one too many.
 */
static int run_add_glob(struct run_opts *o, const char *g)
{
	size_t have = strlen(o->globs);

	if (!*g || strchr(g, ',') || o->nglobs == RUN_MAX_GLOBS ||
	    have + !!have + strlen(g) >= sizeof(o->globs))
		return -EINVAL;
	if (have)
		o->globs[have++] = ',';
	strcpy(o->globs + have, g);
	o->nglobs++;
	o->fam.function_globs = o->globs;
	return 0;
}

int runo_parse(const struct rip_cmd *cmd, int argc, char **argv, struct run_opts *o)
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
		STORE_LONGOPTS,
		{ "no-waits", no_argument, NULL, 'W' },
		{ "sample", optional_argument, NULL, 's' },
		{ "functions", optional_argument, NULL, 'U' },
		{ "track", required_argument, NULL, 'T' },
		{ "module", required_argument, NULL, 'X' },
		{ "list-modules", no_argument, NULL, 'L' },
		{ 0 },
	};
	int c, ret;

	memset(o, 0, sizeof(*o));
	relay_opts_init(&o->relay);
	o->fam.mode = "block";
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
					cmd,
					"--mode is block, discard or overwrite, not "
					"'%s'",
					optarg);
			o->fam.mode = optarg;
			break;
		case 'b': {
			char *end;
			unsigned long long v = strtoull(optarg, &end, 10);

			if (*end == 'k' || *end == 'K')
				v <<= 10, end++;
			else if (*end == 'm' || *end == 'M')
				v <<= 20, end++;
			if (*end || v < 32768 || v > (1ull << 30) || (v & (v - 1)))
				return tool_usage_error(cmd,
							"--buffer wants a power of two from 32k to "
							"1024m, like 1m, not '%s'",
							optarg);
			o->fam.buffer = optarg;
			o->fam.buffer_bytes = v;
			break;
		}
		case 'p':
			o->preload = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'M':
			o->fam.res |= FAM_RES_MEM;
			break;
		case 'F':
			o->fam.res |= FAM_RES_FD;
			break;
		case 'S':
			o->fam.res |= FAM_RES_SHM;
			break;
		case 'A':
			o->fam.res |= FAM_RES_ALL;
			break;
		case 'O':
			o->fam.off = true;
			break;
		case 'd': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || !*optarg || v < 1 || v > RIP_BT_MAX_DEPTH)
				return tool_usage_error(cmd,
							"--depth wants a number of frames from 1 to "
							"%u, not '%s'",
							RIP_BT_MAX_DEPTH, optarg);
			o->fam.depth = (unsigned)v;
			break;
		}
		case 'P':
			if (!rip_pagemap_signal(optarg))
				return tool_usage_error(cmd,
							"--pagemap-signal wants USR1, USR2, RTMIN+N or "
							"a signal number, not '%s'",
							optarg);
			o->fam.pagemap_signal = optarg;
			break;
		case 'N':
			o->fam.no_pagemap = true;
			break;
		case 'f':
			o->fam.follow_fork = true;
			break;
		case 's': {
			char *end;
			unsigned long v = optarg ? strtoul(optarg, &end, 10) : 100;

			if (optarg && (*end || !*optarg || v < 1 || v > 1000))
				return tool_usage_error(cmd,
							"--sample wants a rate from 1 to 1000 (samples "
							"per second of CPU time), not '%s'",
							optarg);
			o->fam.sample = (unsigned)v;
			break;
		}
		case 'e':
			o->fam.follow_exec = true;
			break;
		case 'W':
			o->fam.no_waits = true;
			break;
		case 'U':
			o->fam.functions = true;
			if (optarg && run_add_glob(o, optarg))
				return tool_usage_error(cmd,
							"--functions=GLOB: an empty glob, a comma in "
							"one, or more than %d of them",
							RUN_MAX_GLOBS);
			break;
		case 'T':
			ret = run_track_opt(cmd, o, optarg);
			if (ret)
				return ret;
			break;
		case 'X':
			ret = run_add_module(cmd, o, optarg);
			if (ret)
				return ret;
			break;
		case 'L':
			o->list_modules = true;
			break;
		case 'h':
			tool_help(cmd);
			return -1;
		case RELAY_OPT_URL:
		case RELAY_OPT_SESSION:
		case RELAY_OPT_HOSTNAME:
		case RELAY_OPT_LIVE:
			ret = relay_opt(cmd, &o->relay, c, optarg);
			if (ret)
				return ret;
			break;
		case STORE_OPT_CTF:
		case STORE_OPT_MAX:
		case STORE_OPT_CHUNK:
		case STORE_OPT_ROTATE:
		case STORE_OPT_ON_ROTATE:
			ret = store_opt(cmd, &o->fam.store, c, optarg);
			if (ret)
				return ret;
			break;
		case '?':
		default:
			return tool_bad_option(cmd, argv, longopts);
		}
	}
	ret = relay_check(cmd, &o->relay);
	if (!ret)
		ret = store_check(cmd, &o->fam.store);
	if (ret)
		return ret;
	if (o->list_modules) {
		run_list_modules();
		return -1;
	}
	o->fam.relayd = o->relay.url != NULL;
	if (o->out && !strcmp(o->out, "-") && !o->relay.url)
		return tool_usage_error(cmd,
					"-o - writes no trace: it is for --relayd=URL only");
	if (optind == argc)
		return tool_usage_error(cmd,
					"which program? rip run [options] -- PROG [ARGS...]");
	if (o->fam.depth && !fam_resources(&o->fam))
		return tool_usage_error(cmd,
					"--depth is for resource tracing: add --mem, --fd, --shm, "
					"--all or --module");
	if ((o->fam.pagemap_signal || o->fam.no_pagemap) && !(o->fam.res & FAM_RES_MEM) &&
	    !o->fam.off)
		return tool_usage_error(cmd,
					"--pagemap-signal and --no-pagemap are for memory tracing: "
					"add --mem");
	return 0;
}

