/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/cmd-snapshot.c - `rip snapshot`: write what a process's event rings
 * hold (the flight recorder) as a CTF 1.8 trace directory, whether the
 * process is running or dead.
 *
 * Each event ring becomes stream_N: its packets in sequence order, copied
 * with ev_copy_ring (the open packet closed in the copy, packets that a live
 * writer reused under us dropped and counted).  The metadata and our index
 * come from the ring file.  Events the flight recorder overwrote or
 * dropped before the snapshot are reported by the packets' events_discarded,
 * which CTF readers turn into "discarded events" notices.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/evread.h"
#include "read/ringfile.h"
#include "read/trace.h"
#include "record/relayd.h"
#include "record/tracew.h"
#include "tools/relay.h"
#include "tools/tool.h"

static int cmd_snapshot(int argc, char **argv);

static const struct rip_cmd cmd_snapshot_def = {
	.name = "snapshot",
	.run = cmd_snapshot,
	.summary = "write the flight-recorder contents of a process as a CTF trace",
	.usage = "usage: rip snapshot [options] TARGET\n"
		 "\n"
		 "Write the events a process's rings hold now as a CTF 1.8 trace directory\n"
		 "that babeltrace2 and Trace Compass read.  TARGET is a pid or a ring file;\n"
		 "the process may be running or dead (killed, crashed): its ring file is\n"
		 "enough.  Each thread's ring becomes one stream.\n"
		 "\n"
		 "  -o, --output DIR   write the trace to DIR, which must not exist\n"
		 "                     (default: rip-COMM-PID-snapshot in the current directory;\n"
		 "                     -: none, with --relayd)\n"
		 "  -j, --json         print the summary as JSON\n"
		 "  -h, --help         this text\n"
		 "\n" RELAY_HELP
		 "\n"
		 "The summary line counts the events and packets written, the streams, the\n"
		 "events lost before the snapshot (overwritten by the flight recorder or\n"
		 "dropped by a full ring) and the packets a running writer reused while they\n"
		 "were copied (dropped: take the snapshot again, or of the stopped process).\n"
		 "\n"
		 "Exit status: 0 success, 1 failure (no such process, corrupt file, DIR\n"
		 "exists, relayd refused or lost: the local trace is whole), 2 usage.\n",
};

struct snap_sum {
	uint64_t events, packets, lost, torn;
	uint32_t streams;
};

/* rip-COMM-PID-snapshot, with the program name reduced to safe characters. */
static void default_dir(const struct rip_file_hdr *h, char *out, size_t len)
{
	char comm[sizeof(h->comm) + 1];
	size_t n = 0;

	for (size_t i = 0; i < sizeof(h->comm) && h->comm[i]; i++) {
		char c = h->comm[i];

		comm[n++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
					    (c >= '0' && c <= '9') || c == '.' || c == '_' ||
					    c == '-'
				    ? c
				    : '_';
	}
	comm[n] = 0;
	if (!n || comm[0] == '.')
		snprintf(comm, sizeof(comm), "proc");
	snprintf(out, len, "rip-%s-%d-snapshot", comm, (int)h->pid);
}

/* After a failure: remove what we wrote (only the names a trace has) and the directory. */
static void remove_partial(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "stream_", 7) && strcmp(e->d_name, "metadata") &&
		    strcmp(e->d_name, TRACE_INDEX))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
			unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/*
 * Where the losses go.  The writer counts an overwritten packet's events
 * into ring->discarded when it opens the packet that replaces it, so each
 * surviving packet's cumulative events_discarded grows by one old packet's
 * worth: a CTF reader would report the losses between packets that are in
 * fact contiguous, and the first packet's share as an unknown amount.  The
 * events a flight recorder lost all come before its oldest packet, so the
 * copy says so: every packet carries the ring's total, and an empty packet
 * (sequence number one less, no time span, nothing discarded yet) goes
 * first, which makes babeltrace2 print "discarded N events" once, with the
 * exact N, right before the oldest event kept.  Returns the total.
 */
static uint64_t snap_fix_discarded(struct ev_packet *v, size_t n, struct ev_packet *lead,
				   struct rip_packet *lead_hdr)
{
	uint64_t total = 0;

	memset(lead, 0, sizeof(*lead));
	for (size_t i = 0; i < n; i++)
		if (v[i].hdr.events_discarded > total)
			total = v[i].hdr.events_discarded;
	if (!n || !total)
		return total;
	if (!v[0].hdr.packet_seq_num) {
		/* nothing was overwritten: the losses are in place, keep them (monotonic) */
		for (size_t i = 1; i < n; i++)
			if (v[i].hdr.events_discarded < v[i - 1].hdr.events_discarded)
				v[i].hdr.events_discarded = v[i - 1].hdr.events_discarded;
	} else {
		*lead_hdr = v[0].hdr;
		lead_hdr->packet_seq_num--;
		lead_hdr->timestamp_end = lead_hdr->timestamp_begin;
		lead_hdr->content_size = lead_hdr->packet_size = RIP_PACKET_HDR_SIZE * 8;
		lead_hdr->events_discarded = 0;
		lead_hdr->events = 0;
		lead_hdr->open = 0;
		lead->ring = v[0].ring;
		lead->hdr = *lead_hdr;
		lead->data = (uint8_t *)lead_hdr;
		lead->len = RIP_PACKET_HDR_SIZE;
		for (size_t i = 0; i < n; i++)
			v[i].hdr.events_discarded = total;
	}
	for (size_t i = 0; i < n; i++)
		memcpy(v[i].data, &v[i].hdr, sizeof(v[i].hdr));
	return total;
}

/* Where a snapshot goes: the trace directory, relayd, or both. */
struct snap_out {
	struct trace_w *w;
	struct rly *rly;
	bool rly_failed;
	char rly_err[RR_ERR_MAX];
	uint32_t nstreams; /* highest stream written + 1 */
};

/* Metadata text to relayd (its failure only noted: the local trace goes on). */
static void snap_rly_text(struct snap_out *o, const char *text, size_t len)
{
	if (o->rly && !o->rly_failed && rly_metadata(o->rly, text, len, o->rly_err,
						     sizeof(o->rly_err)))
		o->rly_failed = true;
}

/* The head of the metadata and every event type, before the packets. */
static int snap_rly_head(struct snap_out *o, const struct trace_info *info)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int ret;

	if (!out)
		return -ENOMEM;
	ret = ctf_write_head(out, info, true);
	for (uint32_t id = 0; id < EV_MAX_TYPES && !ret; id++)
		if (info->types.t[id].valid)
			ret = ctf_write_event(out, &info->types.t[id]);
	if (fclose(out) && !ret)
		ret = -ENOMEM;
	if (!ret)
		snap_rly_text(o, text, len);
	free(text);
	return ret;
}

/* The end for relayd: the counts and the index in the metadata, then close. */
static void snap_rly_end(struct snap_out *o, struct trace_info *info)
{
	char *text = NULL;
	uint8_t *idx = NULL;
	size_t len = 0, ilen = 0;
	FILE *out;

	if (!o->rly || o->rly_failed)
		return;
	if (trace_index_pack(info, &idx, &ilen, o->rly_err, sizeof(o->rly_err))) {
		o->rly_failed = true;
		return;
	}
	out = open_memstream(&text, &len);
	if (!out || ctf_write_index_env(out, info, idx, ilen) || fclose(out)) {
		snprintf(o->rly_err, sizeof(o->rly_err), "cannot write the index for relayd");
		o->rly_failed = true;
	} else {
		snap_rly_text(o, text, len);
	}
	free(idx);
	free(text);
	if (!o->rly_failed && rly_close(o->rly, 30000, 0, o->rly_err, sizeof(o->rly_err)))
		o->rly_failed = true;
}

/* One packet to the trace and to relayd. */
static int snap_packet(struct snap_out *o, const struct ev_packet *p, char *err, size_t errlen)
{
	struct rip_packet hdr = p->hdr;
	int ret = o->w ? trace_w_packet(o->w, p, err, errlen) : 0;

	if (!ret && p->ring >= o->nstreams)
		o->nstreams = p->ring + 1;
	if (ret || !o->rly || o->rly_failed)
		return ret;
	/* as the trace has it: cut to its content */
	hdr.packet_size = hdr.content_size = (uint64_t)p->len * 8;
	hdr.open = 0;
	if (rly_packet(o->rly, p->ring, &hdr, p->data + sizeof(hdr), p->len - sizeof(hdr),
		       o->rly_err, sizeof(o->rly_err))) {
		o->rly_failed = true;
		if (!o->w)
			return rr_fail(err, errlen, -EIO, "%s", o->rly_err);
	}
	return 0;
}

/* Copy every ring's packets into the trace.  0 or -errno with err set. */
static int snap_rings(struct rr_file *f, const struct trace_info *info, struct snap_out *o,
		      struct snap_sum *sum, char *err, size_t errlen)
{
	uint32_t nrings = info->idx.file.ev_fresh;

	if (nrings > f->hdr.ev_rings)
		nrings = f->hdr.ev_rings;
	for (uint32_t r = 0; r < nrings; r++) {
		struct ev_packet *v = NULL, lead;
		struct rip_packet lead_hdr;
		size_t n = 0, torn = 0;
		uint64_t lost = 0;
		int ret;

		ret = ev_copy_ring(f, &info->types, r, &v, &n, &torn, err, errlen);
		if (ret)
			return ret;
		lost = snap_fix_discarded(v, n, &lead, &lead_hdr);
		if (lead.data)
			ret = snap_packet(o, &lead, err, errlen);
		for (size_t i = 0; i < n && !ret; i++) {
			ret = snap_packet(o, &v[i], err, errlen);
			sum->events += v[i].hdr.events;
		}
		ev_packets_free(v, n);
		if (ret)
			return ret;
		sum->packets += n;
		sum->streams += n > 0;
		sum->lost += lost;
		sum->torn += torn;
	}
	return 0;
}

static void print_summary(const char *dir, const struct rip_file_hdr *h, bool alive,
			  const struct snap_sum *s, bool json)
{
	if (json) {
		fputs("{\"trace\": ", stdout);
		json_str(stdout, dir);
		fputs(", \"program\": ", stdout);
		json_str(stdout, h->comm);
		printf(", \"pid\": %d, \"alive\": %s, \"events\": %llu, \"packets\": %llu, "
		       "\"streams\": %u, \"events_lost\": %llu, \"torn_packets\": %llu}\n",
		       (int)h->pid, alive ? "true" : "false", (unsigned long long)s->events,
		       (unsigned long long)s->packets, s->streams, (unsigned long long)s->lost,
		       (unsigned long long)s->torn);
		return;
	}
	printf("%s: %llu events, %llu packets, %u streams; %llu events lost (discarded or "
	       "overwritten), %llu torn packets dropped%s\n",
	       dir, (unsigned long long)s->events, (unsigned long long)s->packets, s->streams,
	       (unsigned long long)s->lost, (unsigned long long)s->torn,
	       alive ? "" : " (process dead)");
}

RIP_COMMAND(cmd_snapshot_def);

static int cmd_snapshot(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		RELAY_LONGOPTS,
		{ 0 },
	};
	char dirbuf[PATH_MAX], err[RR_ERR_MAX];
	const char *target, *dir = NULL;
	struct trace_info *info = NULL; /* 430 KB (its type table): not on the stack */
	struct snap_out o = { 0 };
	struct relay_opts relay;
	bool no_local;
	struct snap_sum sum = { 0 };
	uint64_t lost;
	struct rr_file f;
	bool json = false, alive;
	int c, ret, status = EXIT_FAIL;

	memset(&f, 0, sizeof(f));
	f.fd = -1;
	relay_opts_init(&relay);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return tool_usage_error(&cmd_snapshot_def, "-o wants a directory");
			dir = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			tool_help(&cmd_snapshot_def);
			return EXIT_OK;
		case RELAY_OPT_URL:
		case RELAY_OPT_SESSION:
		case RELAY_OPT_HOSTNAME:
		case RELAY_OPT_LIVE:
			ret = relay_opt(&cmd_snapshot_def, &relay, c, optarg);
			if (ret)
				return ret;
			break;
		case ':':
			return tool_usage_error(&cmd_snapshot_def, "'%s' needs an argument",
						argv[optind - 1]);
		default:
			return tool_bad_option(&cmd_snapshot_def, argv, longopts);
		}
	}
	if (optind + 1 != argc)
		return tool_usage_error(&cmd_snapshot_def,
					optind == argc ? "which process? give a pid or a ring file"
						       : "one TARGET only");
	ret = relay_check(&cmd_snapshot_def, &relay);
	if (ret)
		return ret;
	no_local = dir && !strcmp(dir, "-");
	if (no_local && !relay.url)
		return tool_usage_error(&cmd_snapshot_def,
					"-o - writes no trace: it is for --relayd=URL only");
	target = argv[optind];
	ret = tool_open_target(&cmd_snapshot_def, target, &f);
	if (ret)
		return ret;
	if (f.legacy_raw || !f.hdr.ev_rings) {
		tool_err("%s: this process records no events (its ring file has no event rings; "
			 "RIP_EVENT_RINGS=0?)",
			 f.path);
		goto out_close;
	}
	alive = rr_alive(&f) == 1;
	info = calloc(1, sizeof(*info));
	if (!info) {
		tool_err("out of memory");
		goto out_close;
	}
	ret = trace_info_from_file(&f, info, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		goto out_info;
	}
	if (!dir || no_local) {
		default_dir(&info->idx.file, dirbuf, sizeof(dirbuf));
		dir = dirbuf;
	}
	if (!no_local) {
		ret = trace_w_open(dir, NULL, &o.w, err, sizeof(err));
		if (ret) {
			tool_err("%s", err);
			goto out_info;
		}
	}
	if (relay.url) {
		if (relay_connect(&relay, dir, &o.rly)) {
			if (o.w)
				trace_w_abort(o.w);
			goto out_info;
		}
		info->idx.flags |= TRACE_F_SNAPSHOT | (alive ? 0 : TRACE_F_DEAD);
		ret = snap_rly_head(&o, info);
		if (ret || (o.rly_failed && !o.w)) {
			tool_err("%s", ret ? "cannot write the metadata" : o.rly_err);
			if (o.w)
				trace_w_abort(o.w);
			goto out_info;
		}
	}
	ret = snap_rings(&f, info, &o, &sum, err, sizeof(err));
	if (ret == -EBADMSG && alive && !sum.packets) {
		/* maybe a type registered after we read the table: read it again, once */
		struct trace_info *again = calloc(1, sizeof(*again));

		if (again && !trace_info_from_file(&f, again, err, sizeof(err))) {
			trace_info_free(info);
			free(info);
			info = again;
			again = NULL;
			memset(&sum, 0, sizeof(sum));
			if (o.rly)
				snap_rly_head(&o, info); /* the types added: declared again */
			ret = snap_rings(&f, info, &o, &sum, err, sizeof(err));
		}
		free(again);
	}
	if (ret) {
		tool_err("%s", err);
		if (o.w)
			trace_w_abort(o.w);
		goto out_info;
	}
	info->idx.flags |= TRACE_F_SNAPSHOT | (alive ? 0 : TRACE_F_DEAD);
	/*
	 * What the packets say was lost, so that our readers agree with CTF
	 * readers, and the events no ring could count (the header's ev_lost),
	 * which only our readers can show.
	 */
	if (!rr_live_u64(&f, offsetof(struct rip_file_hdr, ev_lost), &lost, err, sizeof(err)))
		sum.lost += lost; /* (the file shrank: the packets' count only) */
	info->idx.discarded = sum.lost;
	info->idx.lost_packets = sum.torn;
	/* as trace_w_finish counts them, for relayd's index */
	info->idx.nstreams = o.nstreams;
	info->idx.events = sum.events;
	ret = o.w ? trace_w_finish(o.w, info, err, sizeof(err)) : 0;
	if (ret) {
		tool_err("%s", err);
		remove_partial(dir);
		goto out_info;
	}
	snap_rly_end(&o, info);
	if (o.rly_failed) {
		tool_err("%s%s", o.rly_err, no_local ? "" : "; the local trace is whole");
		print_summary(no_local ? "relayd" : dir, &info->idx.file, alive, &sum, json);
		goto out_info;
	}
	if (o.rly && !json) {
		char where[PATH_MAX + 300];

		relay_where(&relay, rly_path(o.rly), where, sizeof(where));
		printf("sent to %s\n", where);
	}
	if (sum.torn)
		tool_err("warning: %llu packets were reused by the running process while being "
			 "copied and were left out",
			 (unsigned long long)sum.torn);
	print_summary(no_local ? "relayd" : dir, &info->idx.file, alive, &sum, json);
	status = EXIT_OK;
out_info:
	trace_info_free(info);
	rly_free(o.rly);
out_close:
	rr_close(&f);
	free(info);
	return status;
}
