/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/sink-dir.c - the consumer's local trace (record/sink.h): packets
 * into a CTF directory through the trace writer (record/tracew.h), its
 * metadata and index at the end, and with the consumer's keep_ring a copy
 * of the ring file in it (RR_TRACE_RING), for rip ps and rip top after the
 * process.  Its failure is the recording's: it is not optional.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "record/consume.h"
#include "record/sink.h"
#include "record/tracew.h"

struct rec_dir {
	struct rec_sink s; /* first: the sink is the struct */
	struct trace_w *w; /* NULL once ended */
};

static int rec_dir_packet(struct rec_sink *s, uint32_t stream, const struct rip_packet *hdr,
			  const uint8_t *body, size_t blen, char *err, size_t errlen)
{
	struct rec_dir *d = (struct rec_dir *)s;
	struct ev_packet p = { .ring = stream, .hdr = *hdr, .len = sizeof(*hdr) + blen };

	/* trace_w_packet writes p.hdr, then the bytes after the header */
	p.data = (uint8_t *)body - sizeof(*hdr);
	return trace_w_packet(d->w, &p, err, errlen);
}

/* The copy of the ring file in the trace (keep_ring); ring_err says why not. */
static void rec_dir_keep_ring(struct rec *r)
{
	char path[PATH_MAX + 16];

	if (snprintf(path, sizeof(path), "%s/%s", r->dir, RR_TRACE_RING) >= (int)sizeof(path)) {
		rr_fail(r->ring_err, sizeof(r->ring_err), -ENAMETOOLONG, "%s: path too long",
			r->dir);
		return;
	}
	if (!rr_copy(&r->f, path, !r->nosync, r->ring_err, sizeof(r->ring_err)))
		r->ring_kept = true;
}

static int rec_dir_end(struct rec_sink *s, struct trace_info *info, bool ok, char *err,
		       size_t errlen)
{
	struct rec_dir *d = (struct rec_dir *)s;
	struct trace_w *w = d->w;
	char ignore[RR_ERR_MAX];
	int ret;

	d->w = NULL;
	if (s->rec->nosync)
		trace_w_nosync(w);
	if (!ok) {
		/* Close what was written; the consumer's error is the one to report. */
		trace_w_finish(w, info, ignore, sizeof(ignore));
		return 0;
	}
	ret = trace_w_finish(w, info, err, errlen);
	if (!ret && s->rec->keep_ring)
		rec_dir_keep_ring(s->rec);
	return ret;
}

static void rec_dir_free(struct rec_sink *s)
{
	struct rec_dir *d = (struct rec_dir *)s;

	/* Never ended: remove what was written. */
	if (d->w)
		trace_w_abort(d->w);
	free(d);
}

static const struct rec_sink_ops rec_dir_ops = {
	.packet = rec_dir_packet,
	.end = rec_dir_end,
	.free = rec_dir_free,
};

int rec_open_trace(struct rec *r, const char *dir, char *err, size_t errlen)
{
	struct rec_dir *d = calloc(1, sizeof(*d));
	int ret;

	if (!d)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	ret = trace_w_open(dir, &d->w, err, errlen);
	if (ret) {
		free(d);
		return ret;
	}
	d->s.ops = &rec_dir_ops;
	snprintf(r->dir, sizeof(r->dir), "%s", dir);
	rec_sink_add(r, &d->s);
	return 0;
}
