/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/relay.h - the --relayd options that rip run, rip record and rip
 * snapshot share, and their messages: parse them, connect, report a
 * relayd that went away.
 */
#ifndef RIP_TOOLS_RELAY_H
#define RIP_TOOLS_RELAY_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "record/relayd.h"
#include "tools/tool.h"

#define RELAY_OPT_URL 0x1001
#define RELAY_OPT_SESSION 0x1002
#define RELAY_OPT_HOSTNAME 0x1003
#define RELAY_OPT_LIVE 0x1004

/* The long options, for each command's table. */
#define RELAY_LONGOPTS                                                                           \
	{ "relayd", required_argument, NULL, RELAY_OPT_URL },                                    \
		{ "session", required_argument, NULL, RELAY_OPT_SESSION },                       \
		{ "hostname", required_argument, NULL, RELAY_OPT_HOSTNAME },                     \
	{                                                                                        \
		"live-timer", required_argument, NULL, RELAY_OPT_LIVE                            \
	}

/* The lines of --help. */
#define RELAY_HELP                                                                               \
	"Streaming to LTTng's relay daemon (lttng-relayd), for many machines:\n"                  \
	"      --relayd=URL      also stream every packet to relayd at URL,\n"                    \
	"                        net://HOST[:CTRL[:DATA]] (ports 5342, 5343 by default);\n"        \
	"                        with -o - only there.  babeltrace2 reads it live:\n"             \
	"                        babeltrace2 net://HOST/host/HOSTNAME/SESSION\n"                  \
	"      --session=NAME    the session on relayd (default: the trace's name)\n"             \
	"      --hostname=NAME   the host it is filed under (default: this host's name)\n"        \
	"      --live-timer=DURATION  how often open packets and idle streams are sent\n"         \
	"                        to live readers (default 1s; 0: not a live session)\n"

struct relay_opts {
	const char *url, *session, *hostname;
	int64_t live_ns;
	bool live_set;
	struct rly_url u;
};

void relay_opts_init(struct relay_opts *o);
/* Take option c (a RELAY_OPT_*); EXIT_OK or a usage error's status. */
int relay_opt(const struct rip_cmd *cmd, struct relay_opts *o, int c, const char *arg);
/* After parsing: options that need --relayd.  EXIT_OK or a usage error. */
int relay_check(const struct rip_cmd *cmd, struct relay_opts *o);
/*
 * Connect to relayd and create the session (its name: --session, else
 * session_default made safe).  Errors are printed; EXIT_OK or EXIT_FAIL.
 */
int relay_connect(struct relay_opts *o, const char *session_default, struct rly **out);
/* The live period in ns (0: none, or no relayd). */
int64_t relay_live_ns(const struct relay_opts *o);
/* How long to stay connected after the end, for live readers to read the tail (ms). */
unsigned relay_linger_ms(const struct relay_opts *o);
/* What was said about relayd during a recording (relay_report), so that it is said once. */
struct relay_said {
	bool lost, gap;
};
/*
 * After a pass of the recorder r: say once that relayd was lost and
 * connected again (rec_relayd_gap), and once that it is lost for good
 * (rec_relayd_error): "...; streaming to relayd stops, the local trace DIR
 * goes on", or nothing with no local trace (dir NULL: the recording fails
 * with it and says so).
 */
struct rec;
void relay_report(const struct rec *r, const char *dir, struct relay_said *said);
/* Where the trace went on relayd (path: rly_path's), for a summary line. */
void relay_where(const struct relay_opts *o, const char *path, char *buf, size_t len);

#endif /* RIP_TOOLS_RELAY_H */
