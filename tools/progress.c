// SPDX-License-Identifier: Apache-2.0
/*
 * tools/progress.c - the progress bar (see progress.h), fed by the event
 * source's progress callback.  One bar at a time: the commands read one
 * source.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "read/evsource.h"
#include "tools/format.h"
#include "tools/progress.h"

static struct {
	const char *what;
	bool shown, now;
	struct timespec start, last;
} bar;

static double secs(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void progress_draw(uint64_t done_b, uint64_t total_b, bool end, void *arg)
{
	struct timespec now;
	char done[32], total[32], eta[32] = "";
	double frac, el;
	int fill;

	(void)arg;
	if (!bar.what)
		return;
	if (end) {
		if (bar.shown)
			fputs("\r\033[K", stderr);
		bar.what = NULL;
		bar.shown = false;
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	el = secs(&bar.start, &now);
	if ((el < 0.5 && !bar.now) || (bar.shown && secs(&bar.last, &now) < 0.1))
		return;
	bar.last = now;
	bar.shown = true;
	frac = total_b ? (double)done_b / (double)total_b : 0;
	if (frac > 1)
		frac = 1;
	fill = (int)(frac * 30);
	fmt_size_bin(done_b, done, sizeof(done));
	fmt_size_bin(total_b, total, sizeof(total));
	if (frac > 0.02)
		snprintf(eta, sizeof(eta), ", %.0f s left", el / frac - el);
	fprintf(stderr, "\r%s: [%.*s%*s] %3d%%  %s of %s%s\033[K", bar.what, fill,
		"##############################", 30 - fill, "", (int)(frac * 100), done, total,
		eta);
}

void progress_begin(const char *what)
{
	const char *env = getenv("RIP_PROGRESS");

	if (env ? !strcmp(env, "0") : !isatty(STDERR_FILENO))
		return;
	bar.what = what;
	bar.shown = false;
	bar.now = env && !strcmp(env, "1"); /* asked for: from the first packet on */
	clock_gettime(CLOCK_MONOTONIC, &bar.start);
}

void progress_step(uint64_t done, uint64_t total, void *arg)
{
	progress_draw(done, total, false, arg);
}

void progress_end(void)
{
	progress_draw(0, 0, true, NULL);
}

void progress_bar(struct evs *s, const char *what)
{
	progress_begin(what);
	if (bar.what)
		evs_set_progress(s, progress_draw, NULL);
}
