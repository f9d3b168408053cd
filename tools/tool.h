/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/tool.h - what the rip subcommands share: the command table, exit
 * codes, error printing and a small JSON writer.
 */
#ifndef RIP_TOOLS_TOOL_H
#define RIP_TOOLS_TOOL_H

#include <stdbool.h>
#include <stdint.h>
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
 * The usage error of getopt_long's '?' (opterr 0), argv[optind - 1] the
 * option it stopped at: an option that needs a value and has none, one
 * that takes none and was given one ("--json=1"), an abbreviation of
 * several, or one that does not exist; longopts is the table getopt_long
 * was given.  Returns EXIT_USAGE.
 */
struct option;
int tool_bad_option(const struct rip_cmd *cmd, char *const argv[], const struct option *longopts);

/*
 * Open TARGET (a pid or a ring file) for cmd: 0, else the exit status to
 * return, the message printed (a number that is no pid is a usage error).
 */
struct rr_file;
struct stat;
int tool_open_target(const struct rip_cmd *cmd, const char *target, struct rr_file *f);

/*
 * evs_open for a command that reads events, and a warning on stderr when
 * the trace is read while its recording goes on (evs_recording_on): its
 * answers hold the chunks closed so far, not what came after.
 */
struct evs;
int tool_evs_open(const char *target, struct evs **out, char *err, size_t errlen);
/*
 * evs_close, after a warning on stderr when damaged blocks of a packed
 * trace were skipped (evs_damage; said once).  tool_exit_unfreed says it
 * for every source still open.
 */
void tool_evs_close(struct evs *s);
/* That warning, of source src, for a reader that closed its own (why NULL: none). */
void tool_damage_warn(const char *src, uint32_t blocks, const char *why);

/*
 * Create an output file for writing: mode 0600, never through a symbolic
 * link; an existing file is replaced (truncated) only when replace is set,
 * else it is an error (EEXIST), and only if it is the caller's own regular
 * file with one name, or a device such as /dev/null (else EPERM: another
 * user's file, FIFO or hard link planted in /tmp).  NULL with errno set when
 * it failed (no message printed).
 */
FILE *tool_create(const char *path, bool replace);
/* Why tool_create failed with errno err, for a message: a link, another's file, or strerror. */
const char *tool_create_why(int err);

/*
 * Remove path if it is still the regular file *st (fstat of what
 * tool_create opened): a partial output after a failure.  Never a device
 * (/dev/null) nor another file put in its place.
 */
void tool_unlink_same(const char *path, const struct stat *st);

/*
 * For a command about to read a whole trace: its heap in huge pages where
 * the kernel gives them on request (transparent_hugepage = madvise), one
 * heap for every thread, big blocks reused rather than mapped and
 * unmapped (nothing of this under ASan or TSan); and its soft limit of
 * open files raised to the hard one (a stream file per thread).
 * Where every first touch of a page is a fault that costs microseconds
 * (virtual machines), most of a reader's page faults go with the huge
 * pages, and with them much of its time on a trace of many threads
 * (doc/design.md, "Reading a trace fast").
 */
void tool_heap_big(void);

/*
 * For a recorder (rip run after it forked the program, rip record): its
 * thread TOOL_RECORDER_LEAD nice levels above where it runs, as far as the
 * limits allow (CAP_SYS_NICE, RLIMIT_NICE; else as it was).  Writers whose
 * packets wait sleep: the thread that frees them should be the one that
 * runs (doc/design.md, "A recorder that runs first").  Nothing of the
 * program's changes, and what the recorder starts (an --on-rotate command)
 * runs where it ran before: store's nice, which it sets.
 */
#define TOOL_RECORDER_LEAD 10
struct trace_w_opts;
void tool_recorder_first(struct trace_w_opts *store);

/*
 * A command that has said everything, successfully, ends here: exit with
 * status without freeing what it holds, as the kernel takes memory and
 * descriptors back at once (freeing the symbol tables and closing a
 * thousand stream files is a few per cent of a reader's time).  In a
 * build with a sanitizer it returns, and the caller frees as usual, so
 * that the leak checker still sees every path.  Damaged blocks of the
 * sources still open are said first (as tool_evs_close does).
 */
void tool_exit_unfreed(int status);

/* Flush out (stdout): 0, or -1 with "write error" printed. */
int tool_flush(FILE *out);

/* The last component of a path (the path itself without a slash; NULL stays NULL). */
const char *tool_base(const char *path);
/*
 * Is category cat off in header h (what a reader of its trace takes for
 * "not traced": rip run --mem leaves fd and shm off)?  false without h.
 */
bool tool_cat_off(const struct rip_file_hdr *h, unsigned cat);

/*
 * "4096", "64k", "2M", "1g", "1T" (powers of 1024; B or iB may follow the
 * unit) into bytes: 0, or -1 when malformed or past 2^64.
 */
int tool_parse_size(const char *s, uint64_t *out);

/*
 * rip_sym_problems callback printing "note: modules without full symbols:"
 * once, then a line per module, on stderr; arg points to an unsigned count.
 */
void tool_sym_problem(const char *path, const char *why, unsigned hits, void *arg);
/*
 * The same as JSON objects {"module","why","addresses"}, comma-separated:
 * arg points to { FILE *out, unsigned *count }.
 */
void tool_sym_problem_json(const char *path, const char *why, unsigned hits, void *arg);

/* JSON strings and byte counts: tools/format.h */
#include "tools/format.h"


#endif /* RIP_TOOLS_TOOL_H */
