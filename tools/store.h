/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/store.h - the options rip run and rip record share for how the
 * local trace is stored (record/tracew.h): packed (the default) or CTF,
 * and how big it may grow.
 */
#ifndef RIP_TOOLS_STORE_H
#define RIP_TOOLS_STORE_H

#include <getopt.h>

#include "record/tracew.h"
#include "tools/tool.h"

#define STORE_OPT_CTF 0x1101
#define STORE_OPT_MAX 0x1102
#define STORE_OPT_CHUNK 0x1103
#define STORE_OPT_ROTATE 0x1104
#define STORE_OPT_ON_ROTATE 0x1105

/* The long options, for each command's table. */
#define STORE_LONGOPTS                                                                           \
	{ "ctf", no_argument, NULL, STORE_OPT_CTF },                                             \
		{ "max-size", required_argument, NULL, STORE_OPT_MAX },                          \
		{ "chunk-size", required_argument, NULL, STORE_OPT_CHUNK },                      \
		{ "rotate", required_argument, NULL, STORE_OPT_ROTATE },                         \
	{                                                                                        \
		"on-rotate", required_argument, NULL, STORE_OPT_ON_ROTATE                        \
	}

/* The lines of --help. */
#define STORE_HELP                                                                               \
	"The trace on disk (packed by default: about 3 bytes an event, read by every rip\n"       \
	"command; rip export --format=ctf writes it as CTF for babeltrace2):\n"                    \
	"      --ctf             write CTF instead (stream files and metadata, about\n"            \
	"                        24 bytes an event, that babeltrace2 reads as they are)\n"        \
	"      --max-size=SIZE   keep only the last SIZE (like 100M or 2G): the trace is\n"       \
	"                        cut into chunks of SIZE/4 and the oldest are removed;\n"          \
	"                        what they held is counted as lost in every report\n"            \
	"      --chunk-size=SIZE start a new chunk file every SIZE (default: one file;\n"         \
	"                        SIZE/4 of --max-size)\n"                                        \
	"      --rotate=SIZE|TIME  close the chunk being written every SIZE (like 64M:\n"        \
	"                        --chunk-size) or every TIME (like 30s, 10min, 1h, 1d)\n"        \
	"      --on-rotate=CMD   run CMD (a program, no shell) with each closed chunk's\n"       \
	"                        path as its argument; the chunk is CMD's from then on.\n"       \
	"                        Without it closed chunks stay for collection.  Readers\n"       \
	"                        count the chunks no longer there as lost.  A closed\n"          \
	"                        chunk carries the trace's index: it is read alone at\n"         \
	"                        once, and the directory while the recording goes on\n"

/* Take option c (a STORE_OPT_*) into o; EXIT_OK or a usage error's status. */
int store_opt(const struct rip_cmd *cmd, struct trace_w_opts *o, int c, const char *arg);
/* After parsing: options that do not go together.  EXIT_OK or a usage error. */
int store_check(const struct rip_cmd *cmd, const struct trace_w_opts *o);

#endif /* RIP_TOOLS_STORE_H */
