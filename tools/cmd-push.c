/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/cmd-push.c - `rip push --pyroscope=URL`: the pprof profile of a
 * trace or a ring file (analysis/pprof.c, what rip export --format=pprof
 * writes) sent to a Grafana Pyroscope server's ingest API.
 *
 * The request is the one Pyroscope documents for pprof data:
 *
 *	POST PREFIX/ingest?name=APP[{k=v,...}]&from=S&until=S&format=pprof&spyName=rip
 *	Content-Type: multipart/form-data; boundary=...
 *	  part "profile"             the gzipped profile.proto
 *	  part "sample_type_config"  JSON: units, aggregation and display name
 *	                             of each sample type of the profile
 *
 * from and until are the first and last event's CLOCK_REALTIME in seconds
 * (for the threads of a ring file: now).  The HTTP/1.1 client is the
 * smallest that does this (tools/http.c): one request on one TCP
 * connection (IPv4 or IPv6, through getaddrinfo), Connection: close, the
 * status line and the start of the body read back.  No TLS: an https://
 * URL is refused with a message saying so.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rip/abi.h>

#include "analysis/pprof.h"
#include "read/evsource.h"
#include "tools/http.h"
#include "tools/progress.h"
#include "tools/tool.h"

static int cmd_push(int argc, char **argv);

static const struct rip_cmd cmd_push_def = {
	.name = "push",
	.run = cmd_push,
	.summary = "send the pprof profile of a trace or a ring file to Pyroscope",
	.usage = "usage: rip push --pyroscope=URL [options] TRACE-OR-TARGET\n"
		 "\n"
		 "Make the pprof profile 'rip export --format=pprof' writes (a heap profile\n"
		 "of the memory events, a CPU profile of the samples of rip run --sample,\n"
		 "where the threads of a ring file were, or events by stack) and send it to\n"
		 "the ingest API of a Grafana Pyroscope server:\n"
		 "POST URL/ingest?name=APP[{LABELS}]&from=..&until=..&format=pprof.\n"
		 "\n"
		 "  -p, --pyroscope=URL      the server: http://HOST[:PORT][/PREFIX]\n"
		 "                           (no TLS: put a proxy in front for https)\n"
		 "  -a, --app=NAME           application name (default: the traced\n"
		 "                           program's command name)\n"
		 "  -l, --label=KEY=VALUE    a label of the series; may be repeated\n"
		 "      --tenant=ID          send X-Scope-OrgID: ID (multi-tenant servers)\n"
		 "      --leaks              only what was never freed (inuse_* sample types)\n"
		 "      --profile=KIND       heap, cpu, threads or events instead of the one\n"
		 "                           the source suggests\n"
		 "      --timeout=SECONDS    give up connecting, sending or waiting for the\n"
		 "                           answer after this long (default 30)\n"
		 "      --sysroot=DIR        find the traced host's binaries under DIR\n"
		 "      --debug-dir=DIR      look for separate debug files in DIR first\n"
		 "  -h, --help               this text\n"
		 "\n"
		 "Exit status: 0 the server took the profile, 1 failure (unreadable trace,\n"
		 "no connection, the server answered other than 2xx), 2 usage.\n",
};

RIP_COMMAND(cmd_push_def);

#define PUSH_MAX_LABELS 32

struct push_url {
	char host[256];	  /* without the brackets of an IPv6 address */
	char port[8];
	char prefix[1024]; /* the path before /ingest, without a trailing '/' */
	bool v6;
};

/* ---- the URL ------------------------------------------------------------------------ */

/* Parse http://HOST[:PORT][/PREFIX].  0, or -EINVAL with why in err. */
static int push_parse_url(const char *url, struct push_url *u, char *err, size_t errlen)
{
	const char *p, *host, *hend, *path;
	size_t n;

	*u = (struct push_url){ .port = "80" };
	if (!strncasecmp(url, "https://", 8)) {
		snprintf(err, errlen, "%s: https is not supported (no TLS here); use http://, "
			 "or a local proxy that adds TLS", url);
		return -EINVAL;
	}
	if (strncasecmp(url, "http://", 7)) {
		snprintf(err, errlen, "%s: not an http:// URL (want http://HOST[:PORT][/PREFIX])",
			 url);
		return -EINVAL;
	}
	host = url + 7;
	path = host + strcspn(host, "/?#");
	if (strpbrk(path, "?#")) {
		snprintf(err, errlen, "%s: no query or fragment, please: the path only", url);
		return -EINVAL;
	}
	if (memchr(host, '@', (size_t)(path - host))) {
		snprintf(err, errlen, "%s: user names in URLs are not supported", url);
		return -EINVAL;
	}
	if (*host == '[') {
		hend = memchr(host, ']', (size_t)(path - host));
		if (!hend) {
			snprintf(err, errlen, "%s: an IPv6 address without its ']'", url);
			return -EINVAL;
		}
		host++;
		p = hend + 1;
		u->v6 = true;
	} else {
		hend = host;
		while (hend < path && *hend != ':')
			hend++;
		p = hend;
	}
	n = (size_t)(hend - host);
	if (!n || n >= sizeof(u->host)) {
		snprintf(err, errlen, "%s: %s host name", url, n ? "too long a" : "no");
		return -EINVAL;
	}
	memcpy(u->host, host, n);
	u->host[n] = 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)u->host[i] <= ' ' || u->host[i] == '%' || u->host[i] == '"') {
			snprintf(err, errlen, "%s: a bad character in the host name", url);
			return -EINVAL;
		}
	if (p < path) {
		unsigned long port;
		char *end;

		if (*p != ':' || p + 1 == path) {
			snprintf(err, errlen, "%s: a bad port", url);
			return -EINVAL;
		}
		errno = 0;
		port = strtoul(p + 1, &end, 10);
		if (errno || end != path || port == 0 || port > 65535 || p[1] == '+' ||
		    p[1] == '-') {
			snprintf(err, errlen, "%s: the port is not a number from 1 to 65535", url);
			return -EINVAL;
		}
		snprintf(u->port, sizeof(u->port), "%lu", port);
	}
	n = strlen(path);
	while (n && path[n - 1] == '/')
		n--;
	if (n >= sizeof(u->prefix)) {
		snprintf(err, errlen, "%s: too long a path", url);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)path[i] <= ' ' || (unsigned char)path[i] >= 0x7f) {
			snprintf(err, errlen, "%s: a space or control character in the path", url);
			return -EINVAL;
		}
	memcpy(u->prefix, path, n);
	u->prefix[n] = 0;
	return 0;
}

/* ---- the request -------------------------------------------------------------------- */

/* Append s to b, percent-encoded as a query value (RFC 3986 unreserved characters kept). */
static void push_qesc(struct pb_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~') {
			pb_put(b, s, 1);
		} else {
			char e[3] = { '%', hex[c >> 4], hex[c & 15] };

			pb_put(b, e, 3);
		}
	}
}

static void push_str(struct pb_buf *b, const char *s)
{
	pb_put(b, s, strlen(s));
}

static void push_fmt(struct pb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void push_fmt(struct pb_buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		pb_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* How Pyroscope should aggregate and show each sample type rip makes. */
static void push_type_config(struct pb_buf *b, enum pp_kind kind, bool leaks)
{
	static const struct {
		const char *type, *units, *aggregation;
		enum pp_kind kind;
		bool leaks;
	} t[] = {
		{ "alloc_objects", "objects", "sum", PP_HEAP, false },
		{ "alloc_space", "bytes", "sum", PP_HEAP, false },
		{ "inuse_objects", "objects", "average", PP_HEAP, true },
		{ "inuse_space", "bytes", "average", PP_HEAP, true },
		{ "threads", "goroutines", "average", PP_THREADS, true },
		{ "events", "samples", "sum", PP_EVENTS, true },
		{ "samples", "samples", "sum", PP_CPU, true },
		{ "cpu", "nanoseconds", "sum", PP_CPU, true },
	};
	bool first = true;

	push_str(b, "{");
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (t[i].kind != kind || (leaks && !t[i].leaks))
			continue;
		push_fmt(b, "%s\"%s\":{\"units\":\"%s\",\"aggregation\":\"%s\","
			 "\"display-name\":\"%s\"}", first ? "" : ",", t[i].type, t[i].units,
			 t[i].aggregation, t[i].type);
		first = false;
	}
	push_str(b, "}");
}

/* The multipart body: the profile and its sample type configuration. */
static void push_body(struct pb_buf *b, const char *boundary, const struct pb_buf *prof,
		      enum pp_kind kind, bool leaks)
{
	push_fmt(b, "--%s\r\nContent-Disposition: form-data; name=\"profile\"; "
		 "filename=\"profile.pb.gz\"\r\nContent-Type: application/octet-stream\r\n\r\n",
		 boundary);
	pb_put(b, prof->p, prof->len);
	push_fmt(b, "\r\n--%s\r\nContent-Disposition: form-data; name=\"sample_type_config\"; "
		 "filename=\"sample_type_config.json\"\r\nContent-Type: application/json\r\n\r\n",
		 boundary);
	push_type_config(b, kind, leaks);
	push_fmt(b, "\r\n--%s--\r\n", boundary);
}

/* ---- the command ----------------------------------------------------------------------- */

/* A label key Pyroscope takes: [A-Za-z_][A-Za-z0-9_.]*; a value without {},= or quotes. */
static bool push_label_ok(const char *kv, const char *eq)
{
	if (eq == kv)
		return false;
	for (const char *p = kv; p < eq; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
		      (p > kv && ((*p >= '0' && *p <= '9') || *p == '.'))))
			return false;
	if (!eq[1])
		return false;
	return !strpbrk(eq + 1, "{},=\"\n\r");
}

static int cmd_push(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pyroscope", required_argument, NULL, 'p' },
		{ "app", required_argument, NULL, 'a' },
		{ "label", required_argument, NULL, 'l' },
		{ "tenant", required_argument, NULL, 'T' },
		{ "leaks", no_argument, NULL, 'L' },
		{ "profile", required_argument, NULL, 'P' },
		{ "timeout", required_argument, NULL, 't' },
		{ "sysroot", required_argument, NULL, 'S' },
		{ "debug-dir", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char err[RR_ERR_MAX + PATH_MAX];
	const char *url = NULL, *app = NULL, *tenant = NULL, *labels[PUSH_MAX_LABELS];
	char comm[sizeof(((struct rip_file_hdr *)0)->comm)];
	struct pb_buf prof = { 0 }, head = { 0 }, body = { 0 };
	struct pp_opts po = { 0 };
	struct pp_result res;
	struct push_url u;
	struct evs *s = NULL;
	char boundary[64];
	struct timespec now;
	int64_t from, until;
	int c, ret, status, nlabels = 0, timeout = 30, rc = EXIT_FAIL;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:a:l:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			url = optarg;
			break;
		case 'a':
			app = optarg;
			break;
		case 'l': {
			const char *eq = strchr(optarg, '=');

			if (!eq || !push_label_ok(optarg, eq))
				return tool_usage_error(&cmd_push_def,
							"--label=%s: want KEY=VALUE, KEY of letters, "
							"digits, '_' and '.', VALUE without {},=\"",
							optarg);
			if (nlabels == PUSH_MAX_LABELS)
				return tool_usage_error(&cmd_push_def, "at most %d labels",
							PUSH_MAX_LABELS);
			labels[nlabels++] = optarg;
			break;
		}
		case 'T':
			tenant = optarg;
			if (!*tenant || strpbrk(tenant, "\r\n"))
				return tool_usage_error(&cmd_push_def, "--tenant: a bad tenant id");
			break;
		case 'L':
			po.leaks = true;
			break;
		case 'P':
			if (pp_kind_parse(optarg, &po.kind))
				return tool_usage_error(&cmd_push_def,
							"--profile=%s: heap, cpu, threads or events",
							optarg);
			break;
		case 't': {
			char *end;
			long v;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1 || v > 3600)
				return tool_usage_error(&cmd_push_def,
							"--timeout=%s: seconds, 1 to 3600", optarg);
			timeout = (int)v;
			break;
		}
		case 'S':
			po.sysroot = optarg;
			break;
		case 'D':
			po.debug_dir = optarg;
			break;
		case 'h':
			tool_help(&cmd_push_def);
			return EXIT_OK;
		default:
			return tool_bad_option(&cmd_push_def, argv, longopts);
		}
	}
	if (!url)
		return tool_usage_error(&cmd_push_def, "where to? give --pyroscope=http://HOST:PORT");
	if (push_parse_url(url, &u, err, sizeof(err)))
		return tool_usage_error(&cmd_push_def, "%s", err);
	if (po.leaks && po.kind != PP_AUTO && po.kind != PP_HEAP)
		return tool_usage_error(&cmd_push_def, "--leaks is for heap profiles");
	if (app && (!*app || strpbrk(app, "{},=\"\r\n")))
		return tool_usage_error(&cmd_push_def, "--app=%s: a name without {},=\"", app);
	if (optind + 1 != argc)
		return tool_usage_error(&cmd_push_def,
					optind == argc ? "what to push? give a trace directory, "
							 "a pid or a ring file"
						       : "one TRACE-OR-TARGET only");

	ret = tool_evs_open(argv[optind], &s, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		return EXIT_FAIL;
	}
	if (isatty(STDERR_FILENO))
		progress_bar(s, "rip push");
	ret = pp_export(s, &po, &prof, &res, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		goto out;
	}
	if (res.no_symbols)
		tool_err("warning: no symbols, frames are addresses: %s", res.sym_err);
	if (res.kind != PP_CPU)
		res.tot.samples_lost = 0; /* not this profile's values */
	if (res.tot.discarded || res.tot.samples_lost || res.tot.lost_packets || res.tot.torn)
		tool_err("warning: this trace is incomplete (%" PRIu64 " events discarded or "
			 "overwritten, %" PRIu64 " packets lost): the values are too",
			 res.tot.discarded + res.tot.samples_lost,
			 res.tot.lost_packets + res.tot.torn);
	if (!app || !*app) {
		/*
		 * The traced program names itself (its comm): what Pyroscope reads
		 * as labels ("x{env=prod}") or cuts a name at is no name of ours.
		 */
		snprintf(comm, sizeof(comm), "%s",
			 evs_file_hdr(s)->comm[0] ? evs_file_hdr(s)->comm : "rip");
		for (char *q = comm; *q; q++)
			if ((unsigned char)*q <= ' ' || (unsigned char)*q >= 0x7f ||
			    strchr("{},=\"", *q))
				*q = '_';
		app = comm;
	}

	/* Whole seconds that cover the profile: from rounds down, until up. */
	from = res.start_ns / 1000000000;
	until = (res.end_ns + 999999999) / 1000000000;
	if (until <= from)
		until = from + 1;
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(boundary, sizeof(boundary), "rip-%jx-%jx-%x", (intmax_t)now.tv_sec,
		 (intmax_t)now.tv_nsec, (unsigned)getpid());
	push_body(&body, boundary, &prof, res.kind, po.leaks);

	push_str(&head, "POST ");
	push_str(&head, u.prefix); /* checked: no spaces, controls, '?' or '#' */
	push_str(&head, "/ingest?name=");
	{
		struct pb_buf name = { 0 };

		push_str(&name, app);
		for (int i = 0; i < nlabels; i++) {
			push_str(&name, i ? "," : "{");
			push_str(&name, labels[i]);
		}
		if (nlabels)
			push_str(&name, "}");
		pb_put(&name, "", 1);
		if (!name.oom)
			push_qesc(&head, (const char *)name.p);
		head.oom |= name.oom;
		pb_buf_free(&name);
	}
	push_fmt(&head, "&from=%" PRId64 "&until=%" PRId64 "&format=pprof&spyName=rip HTTP/1.1\r\n",
		 from, until);
	push_fmt(&head, "Host: %s%s%s%s%s\r\n", u.v6 ? "[" : "", u.host, u.v6 ? "]" : "",
		 strcmp(u.port, "80") ? ":" : "", strcmp(u.port, "80") ? u.port : "");
	push_str(&head, "User-Agent: rip/" RIP_VERSION_STRING "\r\n");
	if (tenant)
		push_fmt(&head, "X-Scope-OrgID: %s\r\n", tenant);
	push_fmt(&head, "Content-Type: multipart/form-data; boundary=%s\r\n", boundary);
	push_fmt(&head, "Content-Length: %zu\r\nConnection: close\r\n\r\n", body.len);
	if (head.oom || body.oom) {
		tool_err("out of memory");
		goto out;
	}
	if (http_post(u.host, u.port, u.v6, head.p, head.len, body.p, body.len, timeout, &status,
		      err, sizeof(err))) {
		tool_err("%s: %s", url, err);
		goto out;
	}
	fprintf(stderr, "rip push: %s profile of %" PRIu64 " samples (%zu bytes) sent to %s as "
		"%s: %d\n", pp_kind_name(res.kind), res.samples, prof.len, url, app, status);
	rc = EXIT_OK;
out:
	pb_buf_free(&prof);
	pb_buf_free(&head);
	pb_buf_free(&body);
	tool_evs_close(s);
	return rc;
}
