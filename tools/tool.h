/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/tool.h - what the rip subcommands share: the command table, exit
 * codes, error printing and a small JSON writer.
 */
#ifndef RIP_TOOLS_TOOL_H
#define RIP_TOOLS_TOOL_H

#include <stdbool.h>
#include <stdio.h>

#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2

struct rip_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	const char *usage; /* full --help text */
};

/*
 * Each cmd-<name>.c registers its command with RIP_COMMAND(def): a pointer
 * in the rip_cmds section, which rip.c walks; no central table to edit.
 */
#define RIP_COMMAND(DEF)                                                                           \
	static const struct rip_cmd *const DEF##__ptr                                              \
		__attribute__((used, section("rip_cmds"), aligned(sizeof(void *)))) = &DEF

extern const char *rip_prog;

void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tool_usage_error(const struct rip_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void tool_help(const struct rip_cmd *cmd);

/*
 * Open TARGET (a pid or a ring file) for cmd: 0, else the exit status to
 * return, the message printed (a number that is no pid is a usage error).
 */
struct rr_file;
int tool_open_target(const struct rip_cmd *cmd, const char *target, struct rr_file *f);

/* JSON output: strings are escaped; the caller writes the punctuation. */
void json_str(FILE *out, const char *s);


#endif /* RIP_TOOLS_TOOL_H */
