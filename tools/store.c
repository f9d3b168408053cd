/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/store.c - the storage options of rip run and rip record
 * (tools/store.h): --ctf, --max-size, --chunk-size.
 */
#include <errno.h>
#include <stdlib.h>

#include "tools/store.h"

/* SIZE: a number of bytes, with k, m, g or t (powers of 1024) after it. */
static int store_size(const char *arg, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	if (!arg[0] || arg[0] < '0' || arg[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case 't':
	case 'T':
		shift = 40;
		break;
	case 0:
		break;
	default:
		return -EINVAL;
	}
	if (*end && end[1] && !((end[1] == 'b' || end[1] == 'B' || end[1] == 'i') && !end[2]))
		return -EINVAL;
	if (v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

int store_opt(const struct rip_cmd *cmd, struct trace_w_opts *o, int c, const char *arg)
{
	uint64_t v;

	switch (c) {
	case STORE_OPT_CTF:
		o->ctf = true;
		return EXIT_OK;
	case STORE_OPT_MAX:
		if (store_size(arg, &v) || v < (4u << 20))
			return tool_usage_error(cmd,
						"--max-size wants a size of at least 4M, like 100M or "
						"2G, not '%s'",
						arg);
		o->max_bytes = v;
		return EXIT_OK;
	case STORE_OPT_CHUNK:
		if (store_size(arg, &v) || v < (1u << 20))
			return tool_usage_error(cmd,
						"--chunk-size wants a size of at least 1M, like 64M, "
						"not '%s'",
						arg);
		o->chunk_bytes = v;
		return EXIT_OK;
	}
	return tool_usage_error(cmd, "unknown storage option");
}

int store_check(const struct rip_cmd *cmd, const struct trace_w_opts *o)
{
	if (o->ctf && (o->max_bytes || o->chunk_bytes))
		return tool_usage_error(cmd, "--%s is for packed traces, not with --ctf",
					o->max_bytes ? "max-size" : "chunk-size");
	return EXIT_OK;
}
