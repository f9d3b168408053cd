/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/cmd-enable.c - `rip enable` and `rip disable`: turn event
 * categories of a running process on and off from outside.
 *
 * The ring file's header holds one enable bit per category
 * (hdr.enable[], 256 bits), which the event fast path tests with a plain
 * load.  We map the header writable and flip bits with relaxed atomic
 * read-modify-writes: no ordering is needed, the next event the program
 * emits sees the bit, and other bits flipped at the same time by someone
 * else are kept.  A category is named by the file's category table
 * (rip_category_name(), e.g. "coro"), by its bit number, or "all".
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "read/evread.h"
#include "read/ringfile.h"
#include "tools/enable-funcs.h"
#include "tools/tool.h"

static int cmd_enable(int argc, char **argv);
static int cmd_disable(int argc, char **argv);

#define ENABLE_USAGE(VERB, WHAT)                                                                   \
	"usage: rip " VERB " [options] TARGET [CATEGORY...]\n"                                     \
	"\n"                                                                                       \
	"Turn event categories " WHAT " in a running process, from outside: the next\n"            \
	"event sees it.  TARGET is a pid or a ring file.  CATEGORY is a category name\n"           \
	"(as the program named it; \"coro\" is librip's coroutine switches), a bit\n"              \
	"number from 0 to 255, or \"all\".  With no CATEGORY, list the categories and\n"           \
	"whether each is on.  \"func\" in a program built with -fpatchable-function-entry\n"      \
	"and run under rip run also patches (or unpatches) the entries of its functions.\n"       \
	"\n"                                                                                       \
	"  -q, --quiet            print nothing on success\n"                                      \
	"      --functions=GLOB   func: only the functions whose name matches GLOB (!GLOB:\n"      \
	"                         not those); repeatable\n"                                         \
	"  -h, --help             this text\n"                                                     \
	"\n"                                                                                       \
	"Exit status: 0 success, 1 failure (no such process, not running, no write\n"              \
	"access to its ring file), 2 usage error or unknown category.\n"

static const struct rip_cmd cmd_enable_def = {
	.name = "enable",
	.run = cmd_enable,
	.summary = "turn event categories on in a running process",
	.usage = ENABLE_USAGE("enable", "on"),
};

static const struct rip_cmd cmd_disable_def = {
	.name = "disable",
	.run = cmd_disable,
	.summary = "turn event categories off in a running process",
	.usage = ENABLE_USAGE("disable", "off"),
};

RIP_COMMAND(cmd_enable_def);
RIP_COMMAND(cmd_disable_def);

struct en_state {
	struct rr_file f;
	struct ev_types *types;
	bool alive;
};

static bool en_bit_on(const uint64_t *enable, unsigned bit)
{
	return (__atomic_load_n(&enable[bit / 64], __ATOMIC_RELAXED) >> (bit % 64)) & 1;
}

/* Is the bit worth listing: named, or the category of some event type? */
static bool en_bit_known(const struct ev_types *t, unsigned bit)
{
	if (t->cats[bit][0])
		return true;
	for (uint32_t i = 0; i < EV_MAX_TYPES; i++)
		if (t->t[i].valid && t->t[i].category == bit)
			return true;
	return false;
}

static void en_print_bit(const struct ev_types *t, const uint64_t *enable, unsigned bit)
{
	int shown = 0;

	printf("%4u  %-4s %-16s", bit, en_bit_on(enable, bit) ? "on" : "off",
	       t->cats[bit][0] ? t->cats[bit] : "-");
	for (uint32_t i = 0; i < EV_MAX_TYPES; i++) {
		if (!t->t[i].valid || t->t[i].category != bit)
			continue;
		if (shown++ == 4) {
			printf(" ...");
			break;
		}
		printf("%s%s", shown > 1 ? ", " : " ", t->t[i].name);
	}
	putchar('\n');
}

static void en_list(const struct en_state *s, const uint64_t *enable)
{
	printf("%s (pid %d) %s\n", s->f.hdr.comm, s->f.hdr.pid, s->alive ? "alive" : "not running");
	printf(" BIT  STATE CATEGORY         EVENTS\n");
	for (unsigned bit = 0; bit < RIP_CATEGORIES; bit++)
		if (en_bit_known(s->types, bit))
			en_print_bit(s->types, enable, bit);
}

static void en_known(const struct ev_types *t)
{
	bool first = true;

	fprintf(stderr, "known categories:");
	for (unsigned bit = 0; bit < RIP_CATEGORIES; bit++) {
		if (!t->cats[bit][0])
			continue;
		fprintf(stderr, "%s %s (%u)", first ? "" : ",", t->cats[bit], bit);
		first = false;
	}
	fprintf(stderr, "%s; or a bit number 0-255, or all\n", first ? " none named" : "");
}

/* Parse one CATEGORY into bits (a 256-bit set); -1 if unknown. */
static int en_parse(const struct ev_types *t, const char *arg, uint64_t *bits)
{
	if (!strcmp(arg, "all")) {
		memset(bits, 0xff, RIP_CATEGORY_WORDS * sizeof(*bits));
		return 0;
	}
	if (rr_all_digits(arg)) {
		long bit = strtol(arg, NULL, 10);

		if (bit < 0 || bit >= (long)RIP_CATEGORIES)
			return -1;
		bits[bit / 64] |= 1ull << (bit % 64);
		return 0;
	}
	for (unsigned bit = 0; bit < RIP_CATEGORIES; bit++) {
		if (!strcmp(t->cats[bit], arg)) {
			bits[bit / 64] |= 1ull << (bit % 64);
			return 0;
		}
	}
	return -1;
}

/* 0, or the exit status to return (the message printed). */
static int en_open(const struct rip_cmd *cmd, struct en_state *s, const char *target)
{
	char err[RR_ERR_MAX];
	int ret = tool_open_target(cmd, target, &s->f);

	if (ret)
		return ret;
	if (s->f.legacy_raw) {
		tool_err("%s: a file of the original librip has no event categories", target);
		return EXIT_FAIL;
	}
	s->types = calloc(1, sizeof(*s->types));
	if (!s->types) {
		tool_err("out of memory");
		return EXIT_FAIL;
	}
	if (ev_read_types(&s->f, s->types, err, sizeof(err))) {
		tool_err("%s", err);
		return EXIT_FAIL;
	}
	s->alive = rr_alive(&s->f) == 1;
	return 0;
}

static int en_run(const struct rip_cmd *cmd, bool on, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "functions", required_argument, NULL, 'F' },
		{ 0 },
	};
	const char *globs[ENF_MAX_GLOBS];
	size_t nglobs = 0;
	uint64_t bits[RIP_CATEGORY_WORDS] = { 0 }, named[RIP_CATEGORY_WORDS] = { 0 };
	uint64_t before[RIP_CATEGORY_WORDS];
	char err[RR_ERR_MAX];
	struct en_state s;
	bool quiet = false;
	int c, ret, status = EXIT_FAIL;

	memset(&s, 0, sizeof(s));
	s.f.fd = -1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'q':
			quiet = true;
			break;
		case 'F':
			if (nglobs == ENF_MAX_GLOBS)
				return tool_usage_error(cmd, "at most %d --functions", ENF_MAX_GLOBS);
			globs[nglobs++] = optarg;
			break;
		case 'h':
			tool_help(cmd);
			return EXIT_OK;
		default:
			return tool_bad_option(cmd, argv, longopts);
		}
	}
	if (optind == argc)
		return tool_usage_error(cmd, "which process? give a pid or a ring file");
	ret = en_open(cmd, &s, argv[optind]);
	if (ret) {
		status = ret;
		goto out;
	}
	if (optind + 1 == argc) {
		struct rip_file_hdr live;
		char why[RR_ERR_MAX];

		rr_live_hdr(&s.f, &live, why, sizeof(why)); /* shrank: the bits at open */
		en_list(&s, live.enable);
		status = EXIT_OK;
		goto out;
	}
	for (int i = optind + 1; i < argc; i++) {
		if (en_parse(s.types, argv[i], strcmp(argv[i], "all") ? named : bits)) {
			fprintf(stderr, "%s %s: no category '%s' in %s (pid %d)\n", rip_prog,
				cmd->name, argv[i], s.f.hdr.comm, s.f.hdr.pid);
			en_known(s.types);
			status = EXIT_USAGE;
			goto out;
		}
	}
	for (unsigned w = 0; w < RIP_CATEGORY_WORDS; w++)
		bits[w] |= named[w];
	if (!s.alive) {
		tool_err("%s (pid %d) is not running: there is nothing to %s", s.f.hdr.comm,
			 s.f.hdr.pid, cmd->name);
		goto out;
	}
	if (nglobs && !((named[RIP_CAT_FUNC / 64] >> (RIP_CAT_FUNC % 64)) & 1))
		return tool_usage_error(cmd, "--functions goes with the category func");
	/* Patched entries first, records after: so the first records have their entries. */
	if (on && ((named[RIP_CAT_FUNC / 64] >> (RIP_CAT_FUNC % 64)) & 1)) {
		ret = enf_run(&s.f, true, globs, nglobs, quiet);
		if (ret) {
			status = ret;
			goto out;
		}
	}
	if (rr_enable_set(&s.f, bits, on, before, err, sizeof(err))) {
		tool_err("%s", err);
		goto out;
	}
	if (!on && ((named[RIP_CAT_FUNC / 64] >> (RIP_CAT_FUNC % 64)) & 1)) {
		ret = enf_run(&s.f, false, globs, nglobs, quiet);
		if (ret) {
			status = ret;
			goto out;
		}
	}
	status = EXIT_OK;
	if (quiet)
		goto out;
	for (unsigned bit = 0; bit < RIP_CATEGORIES; bit++) {
		bool was = (before[bit / 64] >> (bit % 64)) & 1;

		if (!((bits[bit / 64] >> (bit % 64)) & 1))
			continue;
		/* "all" touches 256 bits: show the ones that mean something */
		if (!en_bit_known(s.types, bit) && !((named[bit / 64] >> (bit % 64)) & 1))
			continue;
		printf("%s (pid %d): %s (bit %u) %s%s\n", s.f.hdr.comm, s.f.hdr.pid,
		       s.types->cats[bit][0] ? s.types->cats[bit] : "unnamed", bit,
		       on ? "on" : "off", was == on ? " (already)" : "");
	}
out:
	if (s.f.fd >= 0 || s.f.map)
		rr_close(&s.f);
	free(s.types);
	return status;
}

static int cmd_enable(int argc, char **argv)
{
	return en_run(&cmd_enable_def, true, argc, argv);
}

static int cmd_disable(int argc, char **argv)
{
	return en_run(&cmd_disable_def, false, argc, argv);
}
