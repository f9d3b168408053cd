/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/sink-dir.c - the consumer's local trace (record/sink.h): packets
 * into a CTF directory through the trace writer (record/tracew.h), its
 * metadata and index at the end, and with the consumer's keep_ring a copy
 * of the ring file in it (RR_TRACE_RING), for rip ps and rip top after the
 * process.  Its failure is the recording's: it is not optional.
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Are the n bytes at p all zero? */
static bool rec_dir_zero(const uint8_t *p, size_t n)
{
	const uint64_t *w = (const uint64_t *)p;
	size_t k;

	for (k = 0; k < n / 8; k++)
		if (w[k])
			return false;
	for (k *= 8; k < n; k++)
		if (p[k])
			return false;
	return true;
}

/*
 * The next byte from off on that rec_dir_copy leaves out: the event rings'
 * data, which the trace holds already (1,000 threads' rings: 16 MiB, ten
 * times the packed trace).  *end: where that part ends; UINT64_MAX: none.
 */
static uint64_t rec_dir_skip(const struct rip_file_hdr *h, uint64_t off, uint64_t *end)
{
	uint64_t a[2][2] = {
		{ h->ev_off, h->ev_off + (uint64_t)(h->ev_big ? h->ev_big : h->ev_rings) * h->ev_ring_size },
		{ h->ev_small_off,
		  h->ev_small_off + (uint64_t)(h->ev_big ? h->ev_rings - h->ev_big : 0) *
					    h->ev_small_ring_size },
	};
	uint64_t best = UINT64_MAX;

	*end = UINT64_MAX;
	for (int i = 0; i < 2; i++) {
		if (!a[i][0] || a[i][1] <= a[i][0] || a[i][1] <= off)
			continue;
		if ((a[i][0] > off ? a[i][0] : off) < best) {
			best = a[i][0] > off ? a[i][0] : off;
			*end = a[i][1];
		}
	}
	return best;
}

/*
 * Copy the ring file f to dst, a new file (O_EXCL|O_NOFOLLOW, mode 0600):
 * its holes stay holes (a ring file reserves its whole size, of which a
 * process touches little), and so do pages of zeros and the event rings'
 * data (rec_dir_skip): rip ps and rip top read the slots of the copy.  With sync, fsync'd.
 * Read through the descriptor, never the mapping: a file that shrinks under
 * us gives a short copy, not a SIGBUS.  0, or -errno with a message (what
 * was written is removed).
 */
static int rec_dir_copy(const struct rr_file *f, const char *dst, bool sync, char *err,
			size_t errlen)
{
	const size_t chunk = 1u << 20;
	uint64_t size = f->len, off = 0;
	uint8_t *buf = NULL;
	int out, ret = 0;

	if (f->fd < 0 || f->legacy_raw)
		return rr_fail(err, errlen, -EINVAL, "%s: not a ring file to copy", f->path);
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return rr_fail(err, errlen, -errno, "%s: %s", dst, strerror(errno));
	buf = malloc(chunk);
	if (!buf) {
		ret = rr_fail(err, errlen, -ENOMEM, "out of memory");
		goto err_unlink;
	}
	while (off < size) {
		off_t data = lseek(f->fd, (off_t)off, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			break; /* holes to the end */
		if (data < 0)
			data = (off_t)off; /* no SEEK_DATA here: read it all, zeros stay holes */
		hole = lseek(f->fd, data, SEEK_HOLE);
		if (hole < 0 || (uint64_t)hole > size)
			hole = (off_t)size;
		for (uint64_t p = (uint64_t)data; p < (uint64_t)hole;) {
			uint64_t skip_end, skip = rec_dir_skip(&f->hdr, p, &skip_end);
			size_t want = (uint64_t)hole - p < chunk ? (size_t)((uint64_t)hole - p) : chunk;
			ssize_t n;

			if (skip <= p) { /* in the rings: a hole */
				p = skip_end;
				continue;
			}
			if (skip - p < want)
				want = (size_t)(skip - p);
			n = pread(f->fd, buf, want, (off_t)p);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				ret = rr_fail(err, errlen, -errno, "%s: %s", f->path, strerror(errno));
				goto err_unlink;
			}
			if (n == 0) {
				size = p; /* it shrank: what is there */
				break;
			}
			if (!rec_dir_zero(buf, (size_t)n)) {
				ssize_t w = pwrite(out, buf, (size_t)n, (off_t)p);
				int e = w < 0 ? errno : ENOSPC; /* a short write: the disk is full */

				if (w < 0 && e == EINTR)
					continue;
				if (w != n) {
					ret = rr_fail(err, errlen, -e, "%s: %s", dst, strerror(e));
					goto err_unlink;
				}
			}
			p += (uint64_t)n;
		}
		off = (uint64_t)hole;
	}
	if (ftruncate(out, (off_t)size) || (sync && fsync(out))) {
		ret = rr_fail(err, errlen, -errno, "%s: %s", dst, strerror(errno));
		goto err_unlink;
	}
	free(buf);
	if (close(out))
		return rr_fail(err, errlen, -errno, "%s: %s", dst, strerror(errno));
	return 0;

err_unlink:
	free(buf);
	close(out);
	unlink(dst);
	return ret;
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
	if (!rec_dir_copy(&r->f, path, !r->nosync, r->ring_err, sizeof(r->ring_err)))
		r->ring_kept = true;
}

static int rec_dir_pass(struct rec_sink *s, char *err, size_t errlen)
{
	struct rec_dir *d = (struct rec_dir *)s;

	return d->w ? trace_w_pass(d->w, err, errlen) : 0;
}

static int rec_dir_end(struct rec_sink *s, struct trace_info *info, bool ok, char *err,
		       size_t errlen)
{
	struct rec_dir *d = (struct rec_dir *)s;
	struct trace_w *w = d->w;
	char ignore[RR_ERR_MAX];
	uint64_t n, mem, gone;
	int ret;

	d->w = NULL;
	trace_w_defs(w, &n, &mem, &gone);
	/* kept for the chunks after the first, and for the recorders that join */
	if (gone && s->rec->warn &&
	    (s->rec->store.chunk_bytes || s->rec->store.max_bytes || s->rec->store.rotate_ns ||
	     s->rec->subs_ever)) {
		snprintf(ignore, sizeof(ignore),
			 "%" PRIu64 " stacks or function ids met past the %" PRIu64
			 " kept (%" PRIu64 " bytes) are not copied into the chunks after theirs "
			 "nor to recorders that joined later: those read without it do not name "
			 "them",
			 gone, n, mem);
		s->rec->warn(ignore, s->rec->warn_arg);
	}
	if (s->rec->nosync)
		trace_w_nosync(w);
	if (!ok) {
		/* Close what was written; the consumer's error is the one to report. */
		trace_w_finish(w, info, ignore, sizeof(ignore));
		return 0;
	}
	ret = trace_w_finish(w, info, err, errlen);
	s->rec->stored = info->store;
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

static int rec_dir_defs(struct rec_sink *s, size_t *from, uint64_t ts, trace_w_pkt_fn *fn,
			void *arg)
{
	struct rec_dir *d = (struct rec_dir *)s;

	return d->w ? trace_w_defs_copy(d->w, from, ts, fn, arg) : 0;
}

static const struct rec_sink_ops rec_dir_ops = {
	.packet = rec_dir_packet,
	.pass = rec_dir_pass,
	.defs = rec_dir_defs,
	.end = rec_dir_end,
	.free = rec_dir_free,
};

int rec_open_trace(struct rec *r, const char *dir, char *err, size_t errlen)
{
	struct rec_dir *d = calloc(1, sizeof(*d));
	int ret;

	if (!d)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	r->store.types = r->types;
	r->store.info = rec_info_now; /* each chunk closed carries the index as it is then */
	r->store.info_arg = r;
	r->store.info_gen = rec_info_gen;
	/* past the rings' streams and the samples' (rec_samples: nrings) */
	r->store.defs = r->nrings + 1 < TRACE_MAX_STREAMS;
	r->store.defs_stream = r->nrings + 1;
	ret = trace_w_open(dir, &r->store, &d->w, err, errlen);
	if (ret) {
		free(d);
		return ret;
	}
	d->s.ops = &rec_dir_ops;
	snprintf(r->dir, sizeof(r->dir), "%s", dir);
	rec_sink_add(r, &d->s);
	return 0;
}
