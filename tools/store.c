/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/store.c - the storage options of rip run and rip record
 * (tools/store.h): --ctf, --max-size, --chunk-size, --rotate, --on-rotate.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/store.h"

/* TIME: a number of seconds with s, min, h or d after it (m alone is a size: MiB). */
static int store_time(const char *arg, int64_t *ns)
{
	static const struct {
		const char *unit;
		int64_t s;
	} u[] = { { "s", 1 }, { "sec", 1 }, { "min", 60 }, { "h", 3600 }, { "d", 86400 } };
	unsigned long long v;
	char *end;

	if (arg[0] < '0' || arg[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || !v)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		if (!strcmp(end, u[i].unit)) {
			if (v > (unsigned long long)(INT64_MAX / 1000000000 / u[i].s))
				return -EINVAL;
			*ns = (int64_t)v * u[i].s * 1000000000;
			return 0;
		}
	return -EINVAL;
}

int store_opt(const struct rip_cmd *cmd, struct trace_w_opts *o, int c, const char *arg)
{
	int64_t ns;
	uint64_t v;

	switch (c) {
	case STORE_OPT_CTF:
		o->ctf = true;
		return EXIT_OK;
	case STORE_OPT_MAX:
		if (tool_parse_size(arg, &v) || v < (4u << 20))
			return tool_usage_error(
				cmd,
				"--max-size wants a size like 100M or 2G, 4M at least "
				"and under 16E, not '%s'",
				arg);
		o->max_bytes = v;
		return EXIT_OK;
	case STORE_OPT_CHUNK:
		if (tool_parse_size(arg, &v) || v < (1u << 20))
			return tool_usage_error(
				cmd,
				"--chunk-size wants a size like 64M, 1M at least and "
				"under 16E, not '%s'",
				arg);
		o->chunk_bytes = v;
		return EXIT_OK;
	case STORE_OPT_ROTATE:
		if (!store_time(arg, &ns)) {
			o->rotate_ns = ns;
			return EXIT_OK;
		}
		if (tool_parse_size(arg, &v) || v < (1u << 20))
			return tool_usage_error(cmd,
						"--rotate wants a size of at least 1M (like 64M) or a "
						"time (like 30s, 10min, 1h, 1d), not '%s'",
						arg);
		o->chunk_bytes = v;
		return EXIT_OK;
	case STORE_OPT_ON_ROTATE:
		if (!arg[0])
			return tool_usage_error(cmd, "--on-rotate wants a program");
		o->on_rotate = arg;
		return EXIT_OK;
	}
	return tool_usage_error(cmd, "unknown storage option");
}

/*
 * Can prog be run, as posix_spawnp finds it (a name with a slash as it is,
 * else along PATH)?  A command that is not there failed at each chunk, and
 * rip run -q said nothing of it.
 */
static bool store_runnable(const char *prog)
{
	const char *path = getenv("PATH"), *p;
	char buf[PATH_MAX];
	struct stat st;

	if (strchr(prog, '/'))
		return !stat(prog, &st) && S_ISREG(st.st_mode) && !access(prog, X_OK);
	for (p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; p;) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? p : ".", prog) <
			    (int)sizeof(buf) &&
		    !stat(buf, &st) && S_ISREG(st.st_mode) && !access(buf, X_OK))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

int store_check(const struct rip_cmd *cmd, const struct trace_w_opts *o)
{
	if (o->ctf && (o->max_bytes || o->chunk_bytes || o->rotate_ns || o->on_rotate))
		return tool_usage_error(cmd, "--%s is for packed traces, not with --ctf",
					o->max_bytes	 ? "max-size"
					: o->on_rotate ? "on-rotate"
					: o->rotate_ns ? "rotate"
							 : "chunk-size or --rotate");
	if (o->on_rotate && o->max_bytes)
		return tool_usage_error(cmd, "--max-size with --on-rotate: the closed chunks are "
					     "the command's, there is none to drop");
	/* the size kept is whole chunks: one bigger than it was kept whole, twice over */
	if (o->max_bytes && o->chunk_bytes > o->max_bytes / 2)
		return tool_usage_error(
			cmd,
			"--max-size=%" PRIu64 " with chunks of %" PRIu64
			" bytes (--chunk-size or --rotate): a chunk is half of it "
			"at most (the oldest is dropped whole; by default a quarter)",
			o->max_bytes, o->chunk_bytes);
	if (o->on_rotate && !o->chunk_bytes && !o->rotate_ns)
		return tool_usage_error(cmd, "--on-rotate wants --rotate=SIZE|TIME: when to hand "
					     "a chunk on");
	if (o->on_rotate && !store_runnable(o->on_rotate))
		return tool_usage_error(cmd,
					"--on-rotate: '%s' is no program that can be run (it is run "
					"without a shell, the chunk's path its one argument)",
					o->on_rotate);
	return EXIT_OK;
}
