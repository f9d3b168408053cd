/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/ringname.c - parsing ring file names (read/ringname.h).  Strict: the
 * grammar is what lib/ring.c writes, every number is bounded without
 * overflow, and the whole name must match (nothing before, nothing after).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "read/ringname.h"

/*
 * A decimal number at *s, as librip writes them: digits, no sign, no
 * leading zero (but "0" itself), at most max.  *s moves past it.  false
 * when there is none or it is out of range.
 */
static bool rn_num(const char **s, uint64_t max, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;

	if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9'))
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*s = p;
	*out = v;
	return true;
}

/* The ring name at the start of name, through ".ring"; *end after it. */
static int rn_parse_prefix(const char *name, struct rn_name *out, const char **end)
{
	const char *p = name;
	uint64_t pid, start, gen = 0;
	char tag[RN_TAG_LEN + 1] = "";

	if (strncmp(p, "rip-", 4))
		return -EINVAL;
	p += 4;
	if (!rn_num(&p, RN_PID_MAX, &pid) || !pid || *p++ != '-' || !rn_num(&p, UINT64_MAX, &start))
		return -EINVAL;
	if (*p == '.' && p[1] >= '0' && p[1] <= '9') {
		p++;
		if (!rn_num(&p, UINT32_MAX, &gen) || !gen)
			return -EINVAL;
	}
	/* the random part: exactly RN_TAG_LEN lowercase letters (it may begin with "ring") */
	if (*p == '.' && strspn(p + 1, "abcdefghijklmnopqrstuvwxyz") == RN_TAG_LEN &&
	    p[1 + RN_TAG_LEN] == '.') {
		memcpy(tag, p + 1, RN_TAG_LEN);
		p += 1 + RN_TAG_LEN;
	}
	if (strncmp(p, ".ring", 5))
		return -EINVAL;
	out->pid = (pid_t)pid;
	out->start = start;
	out->gen = (unsigned)gen;
	memcpy(out->tag, tag, sizeof(out->tag));
	*end = p + 5;
	return 0;
}

int rn_parse(const char *name, struct rn_name *out)
{
	struct rn_name n;
	const char *end;

	if (rn_parse_prefix(name, &n, &end) || *end)
		return -EINVAL;
	*out = n;
	return 0;
}

int rn_parse_failed(const char *name, struct rn_name *ring, int *err, uint64_t *need)
{
	struct rn_name n;
	const char *p;
	uint64_t e, bytes;

	if (rn_parse_prefix(name, &n, &p) || strncmp(p, RN_FAILED, strlen(RN_FAILED)))
		return -EINVAL;
	p += strlen(RN_FAILED);
	if (!rn_num(&p, 4095, &e) || !e || *p++ != '-' || !rn_num(&p, UINT64_MAX, &bytes) || *p)
		return -EINVAL;
	*ring = n;
	*err = (int)e;
	*need = bytes;
	return 0;
}

int rn_parse_gone(const char *name, struct rn_name *ring)
{
	struct rn_name n;
	const char *p;

	if (rn_parse_prefix(name, &n, &p) || strcmp(p, RN_GONE))
		return -EINVAL;
	*ring = n;
	return 0;
}
