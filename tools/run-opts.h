/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/run-opts.h - the options of `rip run`: what the user asked for,
 * parsed and checked (tools/run-opts.c), before cmd-run.c starts anything.
 * --track specs are checked by internal/track.h's grammar, --module files
 * by read/modinfo.h; --list-modules is answered here.
 */
#ifndef RIP_TOOLS_RUN_OPTS_H
#define RIP_TOOLS_RUN_OPTS_H

#include <stdbool.h>

#include <internal/track.h>

#include "record/family.h"
#include "tools/relay.h"
#include "tools/tool.h"

#define RUN_MODULES_MAX 16 /* --module at most */
#define RUN_MAX_GLOBS 32 /* --functions=GLOB: as many as the preload library takes */

struct run_opts {
	const char *out;
	bool preload, quiet;
	struct rip_track_spec track[RIP_TRACK_MAX]; /* --track, checked */
	unsigned ntrack;
	char track_env[RIP_TRACK_MAX * 320];	    /* the same as RIP_TRACK says them */
	bool list_modules;		      /* --list-modules */
	unsigned nmodules;		      /* --module: their paths in modules, ':' between */
	char modules[RUN_MODULES_MAX * 512];
	char globs[4096]; /* --functions=GLOB, joined by commas */
	unsigned nglobs;
	struct relay_opts relay; /* --relayd */
	struct fam_opts fam;	 /* what the family runs with */
};

/*
 * Parse and check rip run's options into o (zeroed by the caller); optind
 * is left at PROG.  0; 2 (EXIT_USAGE) after a usage error was said; -1
 * when there is nothing more to do (--help, --list-modules answered).
 */
int runo_parse(const struct rip_cmd *cmd, int argc, char **argv, struct run_opts *o);

#endif
