/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/cmd-dump.c - `rip dump`: every event of a trace directory or a ring
 * file as text, one line per event in time order, then a summary line that
 * reports every loss; or the same as JSON Lines.
 *
 * The format itself is analysis/dump.c, which `rip export --format=text`
 * writes too.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rip/resource.h>

#include "read/evsource.h"
#include "analysis/leaks.h"
#include "read/sym.h"
#include "analysis/stacks.h"
#include "analysis/dump.h"
#include "tools/progress.h"
#include "tools/tool.h"

static int cmd_dump(int argc, char **argv);

static const struct rip_cmd cmd_dump_def = {
	.name = "dump",
	.run = cmd_dump,
	.summary = "print every event of a trace or a ring file",
	.usage = "usage: rip dump [options] TRACE-OR-TARGET\n"
		 "\n"
		 "Print every event, one per line in time order, then a summary line with the\n"
		 "number of events and streams and every loss: events discarded or overwritten\n"
		 "by the writers, packets lost between them.  TRACE-OR-TARGET is a recorded\n"
		 "trace directory, a pid or a ring file (of a live or a dead process).\n"
		 "\n"
		 "A line: seconds since the first event, thread name/tid, [coroutine] when one\n"
		 "ran, the event's name and its fields as name=value.  The kind of a resource\n"
		 "event (mem:*, fd:*, shm:*) is shown by name (kind=malloc), a backtrace\n"
		 "(rip:bt) as its list of frames.\n"
		 "\n"
		 "  -j, --json     one JSON object per line (JSON Lines), then a summary object\n"
		 "  -v, --verbose  add the wall-clock time of each event, and symbolize the\n"
		 "                 frames of backtraces: 0xADDR<function+0xOFF>\n"
		 "  -h, --help     this text\n"
		 "\n"
		 "Exit status: 0 success, 1 failure (no such process, corrupt trace), 2 usage.\n",
};

RIP_COMMAND(cmd_dump_def);

/* ---- the command -------------------------------------------------------------------- */

static int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static char obuf[1 << 16];
	char err[RR_ERR_MAX + PATH_MAX];
	unsigned flags = 0;
	struct evs *s;
	int c, ret;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "jvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			flags |= DUMP_JSON;
			break;
		case 'v':
			flags |= DUMP_WALL | DUMP_SYM;
			break;
		case 'h':
			tool_help(&cmd_dump_def);
			return EXIT_OK;
		default:
			return tool_bad_option(&cmd_dump_def, argv, longopts);
		}
	}
	if (optind + 1 != argc)
		return tool_usage_error(&cmd_dump_def,
					optind == argc ? "what to dump? give a trace directory, a "
							 "pid or a ring file"
						       : "one TRACE-OR-TARGET only");
	ret = tool_evs_open(argv[optind], &s, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		return EXIT_FAIL;
	}
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	if (!isatty(STDOUT_FILENO)) /* not in the middle of the dump itself */
		progress_bar(s, "rip dump");
	ret = dump_write(s, stdout, flags, err, sizeof(err));
	fflush(stdout);
	tool_evs_close(s);
	if (ret) {
		tool_err("%s", err);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}
