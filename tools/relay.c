/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/relay.c - the --relayd options of rip run, rip record and rip
 * snapshot (tools/relay.h): parsing, connecting with a bounded retry, and
 * the names relayd files the trace under.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "read/ringfile.h"
#include "record/consume.h"
#include "tools/relay.h"

#define RELAY_ATTEMPTS 4     /* connection attempts: 0.2 s, 0.4 s, 0.8 s apart */
#define RELAY_BACKOFF_MS 200
#define RELAY_TIMEOUT_MS 10000 /* a relayd that does not answer in this long is gone */

void relay_opts_init(struct relay_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->live_ns = (int64_t)RLY_DEFAULT_LIVE_US * 1000;
}

int relay_opt(const struct rip_cmd *cmd, struct relay_opts *o, int c, const char *arg)
{
	char err[RR_ERR_MAX];

	switch (c) {
	case RELAY_OPT_URL:
		if (rly_url_parse(arg, &o->u, err, sizeof(err)))
			return tool_usage_error(cmd, "--relayd: %s", err);
		o->url = arg;
		return EXIT_OK;
	case RELAY_OPT_SESSION:
		if (!rly_name_ok(arg, RLY_NAME_MAX))
			return tool_usage_error(cmd,
						"--session wants up to %d letters, digits, '-', "
						"'_' or '.', not '%s'",
						RLY_NAME_MAX, arg);
		o->session = arg;
		return EXIT_OK;
	case RELAY_OPT_HOSTNAME:
		if (!rly_name_ok(arg, RLY_HOST_MAX))
			return tool_usage_error(cmd,
						"--hostname wants up to %d letters, digits, '-', "
						"'_' or '.', not '%s'",
						RLY_HOST_MAX, arg);
		o->hostname = arg;
		return EXIT_OK;
	case RELAY_OPT_LIVE:
		if ((strcmp(arg, "0") && rr_parse_duration(arg, &o->live_ns)) || o->live_ns < 0 ||
		    o->live_ns / 1000 > UINT32_MAX || (o->live_ns && o->live_ns < 1000000))
			return tool_usage_error(cmd,
						"--live-timer wants a duration from 1ms, like 1s "
						"or 200ms (0: no live reading), not '%s'",
						arg);
		if (!strcmp(arg, "0"))
			o->live_ns = 0;
		o->live_set = true;
		return EXIT_OK;
	}
	return tool_usage_error(cmd, "unknown option");
}

int relay_check(const struct rip_cmd *cmd, struct relay_opts *o)
{
	if (!o->url && (o->session || o->hostname || o->live_set))
		return tool_usage_error(cmd,
					"--session, --hostname and --live-timer are for "
					"streaming: add --relayd=net://HOST");
	return EXIT_OK;
}

/* name made safe for relayd: other characters become '_', cut to max */
static void relay_clean(char *buf, size_t len, const char *name, size_t max)
{
	size_t n = 0;

	for (; *name && n < len - 1 && n < max; name++) {
		char c = *name;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '-' || c == '_' || (c == '.' && n);

		buf[n++] = ok ? c : '_';
	}
	buf[n] = 0;
	if (!n)
		snprintf(buf, len, "rip");
}

int relay_connect(struct relay_opts *o, const char *session_default, struct rly **out)
{
	char err[RR_ERR_MAX], host[RLY_HOST_MAX + 1], sess[RLY_NAME_MAX + 1], h[256];
	const char *base = strrchr(session_default, '/');

	if (o->hostname) {
		snprintf(host, sizeof(host), "%s", o->hostname);
	} else {
		if (gethostname(h, sizeof(h) - 1))
			snprintf(h, sizeof(h), "localhost");
		h[sizeof(h) - 1] = 0;
		relay_clean(host, sizeof(host), h, RLY_HOST_MAX);
	}
	if (o->session)
		snprintf(sess, sizeof(sess), "%s", o->session);
	else
		relay_clean(sess, sizeof(sess), base && base[1] ? base + 1 : session_default,
			    RLY_NAME_MAX);
	if (rly_open(&o->u, sess, host, (uint32_t)(o->live_ns / 1000), RELAY_ATTEMPTS,
		     RELAY_BACKOFF_MS, RELAY_TIMEOUT_MS, out, err, sizeof(err))) {
		tool_err("%s", err);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int64_t relay_live_ns(const struct relay_opts *o)
{
	return o->url ? o->live_ns : 0; /* no relayd: the passes' own period (rec_pass) */
}

unsigned relay_linger_ms(const struct relay_opts *o)
{
	int64_t ms = o->live_ns / 1000000 * 2 + 500;

	return !o->live_ns ? 0 : ms > 5000 ? 5000 : (unsigned)ms;
}

void relay_where(const struct relay_opts *o, const char *path, char *buf, size_t len)
{
	snprintf(buf, len, "relayd %s (%s)", o->url, path);
}

void relay_report(const struct rec *r, const char *dir, struct relay_said *said)
{
	const char *why = rec_relayd_error(r), *gap = rec_relayd_gap(r);

	if (gap && !said->gap) {
		said->gap = true;
		tool_err("%s", gap);
	}
	if (!why || said->lost)
		return;
	said->lost = true;
	if (dir)
		tool_err("%s; streaming to relayd stops, the local trace %s goes on", why, dir);
}
