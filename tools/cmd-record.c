/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/cmd-record.c - `rip record`: attach to a running process's ring
 * file and stream its events into a CTF trace directory until it exits,
 * the duration is up, or we get SIGINT / SIGTERM.
 *
 * We become the consumer of every event ring (record/consume.c), or, when
 * another recorder is that already, its subscriber (record/sub.h).  What the
 * process's writers do when we fall behind is the mode its ring was
 * opened with: in overwrite mode they do not wait, so packets can be
 * overwritten before we read them; those are counted and reported, and the
 * trace says how many events were lost where (events_discarded).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record/consume.h"
#include "tools/relay.h"
#include "tools/store.h"
#include "tools/summary.h"
#include "tools/tool.h"

static int cmd_record(int argc, char **argv);

static const struct rip_cmd cmd_record_def = {
	.name = "record",
	.run = cmd_record,
	.summary = "stream a running process's events into a trace",
	.usage = "usage: rip record [options] TARGET\n"
		 "\n"
		 "Attach to a running process and stream its events into a CTF trace directory\n"
		 "until it exits, the --duration is up, or rip gets Ctrl-C (SIGINT) or SIGTERM.\n"
		 "TARGET is a pid or a ring file.  A summary goes to stderr at the end.\n"
		 "\n"
		 "  -o, --output=DIR        write the trace to DIR, which must not exist\n"
		 "                          (default: rip-PROG-PID in the current directory;\n"
		 "                          -: none, with --relayd)\n"
		 "  -d, --duration=DURATION stop after DURATION (e.g. 10s, 500ms, 2m)\n"
		 "  -q, --quiet             no summary line unless events were lost\n"
		 "  -h, --help              this text\n"
		 "\n" STORE_HELP
		 "\n" RELAY_HELP
		 "\n"
		 "A process that rip run or another rip record already records can be recorded\n"
		 "again: this one then subscribes to that recorder, which copies it every packet\n"
		 "from now on (the program waits for the first recorder only).  When the first\n"
		 "stops while the process runs, the oldest second one takes over, with no gap.\n"
		 "Not with --relayd.\n"
		 "\n"
		 "In overwrite mode (librip's default) the threads do not wait for rip: what\n"
		 "they overwrite before rip reads it is lost, and reported.  Run the program\n"
		 "with RIP_MODE=block (or under rip run) to lose nothing.\n"
		 "\n"
		 "Exit status: 0 success (lost events are reported, not an error), 1 failure\n"
		 "(no such process, not running, recorded by a recorder that takes no second one,\n"
		 "trace not written, relayd lost: the local trace is whole), 2 usage.\n",
};

RIP_COMMAND(cmd_record_def);

#define RECORD_ALIVE_NS 50000000L /* how often we ask whether the process still runs */

static volatile sig_atomic_t record_stop;

static void record_on_signal(int sig)
{
	record_stop = sig;
}

static void record_summary(const struct rec *r, bool quiet)
{
	const struct rec_stats *st = &r->st;

	if (quiet && !st->discarded && !st->lost_packets && !st->corrupt)
		return;
	sum_recorded("record", r, st->discarded, " while recording");
	if (st->discarded_before)
		fprintf(stderr, "%s record: %llu events had been overwritten before rip attached\n",
			rip_prog, (unsigned long long)st->discarded_before);
	if (st->discarded && r->f.hdr.ev_mode == RIP_MODE_OVERWRITE)
		fprintf(stderr,
			"%s record: the process runs in overwrite mode; with RIP_MODE=block its "
			"threads would wait for rip instead\n",
			rip_prog);
}

/* A second recorder's own lines: what the first dropped for it, and how it ended. */
static void record_sub_summary(const struct rec *r, bool quiet)
{
	if (!r->sub_pid)
		return;
	if (r->sub_missed_events || r->sub_missed_packets)
		fprintf(stderr,
			"%s record: pid %d dropped %llu packets (%llu events) for this recorder, "
			"which read too slowly; they are counted in the lost events above\n",
			rip_prog, (int)r->sub_pid, (unsigned long long)r->sub_missed_packets,
			(unsigned long long)r->sub_missed_events);
	if (r->sub_end == REC_SUB_END_TAKEN && r->sub_died && (r->sub_gap || !quiet))
		fprintf(stderr,
			"%s record: pid %d, the recorder that consumed the rings, died while the "
			"process ran: this one took over from what it had sent, and read again "
			"what it took and never sent; %llu packets of that were gone from the "
			"rings (counted lost)\n",
			rip_prog, (int)r->sub_pid, (unsigned long long)r->sub_gap);
	else if (r->sub_end == REC_SUB_END_TAKEN && !quiet)
		fprintf(stderr,
			"%s record: pid %d, the recorder that consumed the rings, stopped while "
			"the process ran: this one took over from exactly there, with no gap\n",
			rip_prog, (int)r->sub_pid);
	else if (r->sub_end == REC_SUB_END_STOP)
		fprintf(stderr,
			"%s record: pid %d, the recorder that consumed the rings, stopped while "
			"the process runs: this trace ends there (the first recorder that "
			"subscribed took the rings over; rip record again to go on)\n",
			rip_prog, (int)r->sub_pid);
	else if (r->sub_end == REC_SUB_END_LOST)
		fprintf(stderr,
			"%s record: pid %d, the recorder that consumed the rings, went away "
			"without a word: events after that are not in this trace\n",
			rip_prog, (int)r->sub_pid);
}

static int cmd_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		RELAY_LONGOPTS,
		STORE_LONGOPTS,
		{ 0 },
	};
	const char *out = NULL, *target;
	struct relay_opts relay;
	struct trace_w_opts store = { 0 };
	struct rly *rly = NULL;
	int64_t live, next_tick = 0;
	struct relay_said said = { 0 };
	bool no_local;
	char path[PATH_MAX], dir[PATH_MAX], err[RR_ERR_MAX];
	int64_t duration = 0, start, last_alive, idle = REC_IDLE_MIN_NS;
	struct sigaction sa;
	struct rec *r;
	bool quiet = false, taken = false;
	int c, ret, n, status = EXIT_FAIL;
	pid_t other;

	relay_opts_init(&relay);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:d:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'd':
			if (rr_parse_duration(optarg, &duration) || duration <= 0)
				return tool_usage_error(&cmd_record_def,
							"--duration wants a duration like 10s or "
							"500ms, not '%s'",
							optarg);
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			tool_help(&cmd_record_def);
			return EXIT_OK;
		case RELAY_OPT_URL:
		case RELAY_OPT_SESSION:
		case RELAY_OPT_HOSTNAME:
		case RELAY_OPT_LIVE:
			ret = relay_opt(&cmd_record_def, &relay, c, optarg);
			if (ret)
				return ret;
			break;
		case STORE_OPT_CTF:
		case STORE_OPT_MAX:
		case STORE_OPT_CHUNK:
		case STORE_OPT_ROTATE:
		case STORE_OPT_ON_ROTATE:
			ret = store_opt(&cmd_record_def, &store, c, optarg);
			if (ret)
				return ret;
			break;
		default:
			return tool_bad_option(&cmd_record_def, argv, longopts);
		}
	}
	if (optind + 1 != argc)
		return tool_usage_error(&cmd_record_def, optind == argc ?
								 "which process? give a pid or a "
								 "ring file" :
								 "one TARGET only");
	ret = relay_check(&cmd_record_def, &relay);
	if (!ret)
		ret = store_check(&cmd_record_def, &store);
	if (ret)
		return ret;
	no_local = out && !strcmp(out, "-");
	if (no_local && !relay.url)
		return tool_usage_error(&cmd_record_def,
					"-o - writes no trace: it is for --relayd=URL only");
	live = relay_live_ns(&relay);
	target = argv[optind];
	r = malloc(sizeof(*r));
	if (!r) {
		tool_err("out of memory");
		return EXIT_FAIL;
	}
	rec_init(r);
	/* Look before we touch: a dead process or another consumer is an error. */
	ret = tool_open_target(&cmd_record_def, target, &r->f);
	if (ret) {
		status = ret;
		goto out_free;
	}
	if (rr_alive(&r->f) != 1) {
		tool_err("%s (pid %d) is not running: nothing to stream; rip snapshot writes "
			 "what its rings hold",
			 r->f.hdr.comm, r->f.hdr.pid);
		goto out_close;
	}
	/* another recorder consumes the rings: we subscribe to it (record/sub.h) */
	other = rec_other_consumer(&r->f);
	if (other && relay.url) {
		tool_err("%s (pid %d) is already being recorded by pid %d: a second recorder "
			 "cannot stream to relayd (record to a directory, or stop pid %d first)",
			 r->f.hdr.comm, r->f.hdr.pid, (int)other, (int)other);
		goto out_close;
	}
	if (out && !no_local)
		snprintf(dir, sizeof(dir), "%s", out);
	else
		rec_default_dir(dir, sizeof(dir), r->f.hdr.comm, r->f.hdr.pid);
	if (relay.url && relay_connect(&relay, dir, &rly))
		goto out_close;
	snprintf(path, sizeof(path), "%s", r->f.path);
	rr_close(&r->f);
	rec_init(r);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = record_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	ret = other ? rec_subscribe(r, path, other, err, sizeof(err)) :
		      rec_attach(r, path, err, sizeof(err));
	if (ret && other) {
		tool_err("%s (pid %d) is already being recorded by pid %d, which does not take a "
			 "second recorder: %s",
			 r->f.hdr.comm, r->f.hdr.pid, (int)other, err);
		goto out_free;
	}
	if (ret) {
		tool_err("%s", err);
		goto out_free;
	}
	tool_recorder_first(&store);
	r->store = store;
	ret = no_local ? 0 : rec_open_trace(r, dir, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		goto out_close;
	}
	if (rly) {
		ret = rec_relayd(r, rly, relay_linger_ms(&relay), err, sizeof(err));
		rly = NULL; /* the recorder's now */
		if (ret) {
			tool_err("%s", err);
			goto out_close;
		}
	}
	if (!quiet)
		fprintf(stderr, "%s record: recording %s (pid %d) into %s%s%s; Ctrl-C to stop\n",
			rip_prog, r->f.hdr.comm, r->f.hdr.pid, no_local ? "relayd" : dir,
			no_local ? "" : "/",
			other ? ", alongside the recorder that consumes its rings" : "");
	if (other && !quiet)
		fprintf(stderr,
			"%s record: pid %d consumes the rings and copies every packet to us from "
			"now on\n",
			rip_prog, (int)other);
	start = last_alive = rr_mono_ns();
	while (!record_stop) {
		struct timespec ts = { 0, 0 };
		int64_t now;

		n = rec_pass(r, live, &next_tick, err, sizeof(err));
		if (n < 0) {
			tool_err("%s", err);
			goto out_close;
		}
		relay_report(r, no_local ? NULL : dir, &said);
		if (r->sub_end == REC_SUB_END_TAKEN && !taken) {
			taken = true;
			fprintf(stderr, "%s record: pid %d %s: this one consumes the rings now\n",
				rip_prog, (int)r->sub_pid,
				r->sub_died ? "died" : "stopped and handed them over");
		}
		now = rr_mono_ns();
		if (duration && now - start >= duration)
			break;
		if (r->sub_fd >= 0 && r->sub_end != REC_SUB_ON)
			break; /* the recorder we subscribed to ended */
		if (now - last_alive >= RECORD_ALIVE_NS) {
			if (rr_alive(&r->f) != 1)
				break;
			last_alive = now;
		}
		if (n > 0) {
			idle = REC_IDLE_MIN_NS;
			continue;
		}
		ts.tv_nsec = idle;
		nanosleep(&ts, NULL);
		idle = rec_idle_next(idle);
	}
	ret = rec_finish(r, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		goto out_close;
	}
	if (!said.lost && rec_relayd_error(r)) {
		said.lost = true;
		tool_err("%s%s", rec_relayd_error(r),
			 no_local ? "" : "; the local trace is whole");
	}
	if (rec_relayd_path(r) && !said.lost && !quiet) {
		char where[PATH_MAX + 300];

		relay_where(&relay, rec_relayd_path(r), where, sizeof(where));
		fprintf(stderr, "%s record: streamed to %s\n", rip_prog, where);
	}
	record_summary(r, quiet);
	record_sub_summary(r, quiet);
	if (!said.gap && rec_relayd_gap(r)) {
		said.gap = true;
		tool_err("%s", rec_relayd_gap(r));
	}
	status = said.lost || said.gap ? EXIT_FAIL : EXIT_OK;
out_close:
	rec_close(r);
out_free:
	rly_free(rly);
	free(r);
	return status;
}
