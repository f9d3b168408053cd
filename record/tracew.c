/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/tracew.c - writing a recorded trace (record/tracew.h): a CTF
 * directory of stream files, then the TSDL metadata (read/ctf.c) and our
 * own .rip-index (trace_index_pack), in the format read/trace.c reads.
 *
 * The directory is created with mkdir (never an existing one), files with
 * O_EXCL|O_NOFOLLOW, mode 0600 (the directory 0700): a trace holds a
 * program's addresses, paths and data, for its owner only.  A packet is
 * written as the ring held it, its packet_size cut down to its content.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/tracew.h"

static int tr_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

struct trace_w {
	char dir[PATH_MAX];
	int *fds; /* per stream, -1 until the first packet */
	uint32_t nfds;
	uint32_t nstreams; /* highest stream written + 1 */
	uint64_t events;
	bool nosync; /* trace_w_nosync: the caller syncs the file system */
};

static int tr_create(const char *dir, const char *name, mode_t mode, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int fd, n = snprintf(path, sizeof(path), "%s/%s", dir, name);

	if (n < 0 || (size_t)n >= sizeof(path))
		return rr_fail(err, errlen, -ENAMETOOLONG, "%s/%s: path too long", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return rr_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	return fd;
}

int trace_w_open(const char *dir, struct trace_w **out, char *err, size_t errlen)
{
	struct trace_w *w;

	*out = NULL;
	if (strlen(dir) >= sizeof(w->dir) - 32)
		return rr_fail(err, errlen, -ENAMETOOLONG, "%s: path too long", dir);
	if (mkdir(dir, 0700)) {
		if (errno == EEXIST)
			return rr_fail(err, errlen, -EEXIST,
				       "%s exists: traces are never overwritten; choose another "
				       "with -o",
				       dir);
		return rr_fail(err, errlen, -errno, "%s: %s", dir, strerror(errno));
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		rmdir(dir);
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	}
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	*out = w;
	return 0;
}

int trace_w_packet(struct trace_w *w, const struct ev_packet *p, char *err, size_t errlen)
{
	struct rip_packet hdr;
	char name[32];
	int ret;

	if (p->ring >= TRACE_MAX_STREAMS || p->len < sizeof(hdr))
		return rr_fail(err, errlen, -EINVAL, "bad packet for stream %u", p->ring);
	if (p->ring >= w->nfds) {
		uint32_t n = p->ring + 1 > w->nfds * 2 ? p->ring + 1 : w->nfds * 2;
		int *fds = realloc(w->fds, n * sizeof(*fds));

		if (!fds)
			return rr_fail(err, errlen, -ENOMEM, "out of memory");
		w->fds = fds;
		for (uint32_t i = w->nfds; i < n; i++)
			fds[i] = -1;
		w->nfds = n;
	}
	if (w->fds[p->ring] < 0) {
		snprintf(name, sizeof(name), "stream_%u", p->ring);
		ret = tr_create(w->dir, name, 0600, err, errlen);
		if (ret < 0)
			return ret;
		w->fds[p->ring] = ret;
	}
	if (p->ring >= w->nstreams)
		w->nstreams = p->ring + 1;
	/* The packet as the ring held it, cut to its content. */
	hdr = p->hdr;
	hdr.packet_size = hdr.content_size = (uint64_t)p->len * 8;
	hdr.open = 0;
	ret = tr_write_all(w->fds[p->ring], &hdr, sizeof(hdr));
	if (!ret)
		ret = tr_write_all(w->fds[p->ring], p->data + sizeof(hdr), p->len - sizeof(hdr));
	if (ret)
		return rr_fail(err, errlen, ret, "%s/stream_%u: %s", w->dir, p->ring,
			       strerror(-ret));
	w->events += p->hdr.events;
	return 0;
}

static int tr_write_index(struct trace_w *w, struct trace_info *info, char *err, size_t errlen)
{
	uint8_t *buf;
	size_t len;
	int fd, ret;

	ret = trace_index_pack(info, &buf, &len, err, errlen);
	if (ret)
		return ret;
	fd = tr_create(w->dir, TRACE_INDEX, 0600, err, errlen);
	if (fd < 0) {
		free(buf);
		return fd;
	}
	ret = tr_write_all(fd, buf, len);
	free(buf);
	if (!ret && !w->nosync && fsync(fd))
		ret = -errno;
	close(fd);
	if (ret)
		return rr_fail(err, errlen, ret, "%s/%s: %s", w->dir, TRACE_INDEX, strerror(-ret));
	return 0;
}

void trace_w_abort(struct trace_w *w)
{
	char path[PATH_MAX + 32];

	for (uint32_t i = 0; i < w->nfds; i++) {
		if (w->fds[i] < 0)
			continue;
		close(w->fds[i]);
		snprintf(path, sizeof(path), "%s/stream_%u", w->dir, i);
		unlink(path);
	}
	rmdir(w->dir);
	free(w->fds);
	free(w);
}

void trace_w_nosync(struct trace_w *w)
{
	w->nosync = true;
}

int trace_w_finish(struct trace_w *w, struct trace_info *info, char *err, size_t errlen)
{
	FILE *meta = NULL;
	int fd, ret = 0;

	for (uint32_t i = 0; i < w->nfds; i++) {
		if (w->fds[i] >= 0 && !w->nosync && fsync(w->fds[i]) && !ret)
			ret = rr_fail(err, errlen, -errno, "%s/stream_%u: %s", w->dir, i,
				      strerror(errno));
		if (w->fds[i] >= 0)
			close(w->fds[i]);
	}
	if (ret)
		goto out_free;
	info->idx.nstreams = w->nstreams;
	info->idx.events = w->events;
	fd = tr_create(w->dir, "metadata", 0600, err, errlen);
	if (fd < 0) {
		ret = fd;
		goto out_free;
	}
	meta = fdopen(fd, "w");
	if (!meta) {
		ret = rr_fail(err, errlen, -errno, "%s/metadata: %s", w->dir, strerror(errno));
		close(fd);
		goto out_free;
	}
	ret = ctf_write_metadata(meta, info);
	if (fflush(meta) || ferror(meta))
		ret = ret ? ret : -EIO;
	if (fclose(meta) && !ret)
		ret = -errno;
	if (ret) {
		rr_fail(err, errlen, ret, "%s/metadata: %s", w->dir, strerror(-ret));
		goto out_free;
	}
	ret = tr_write_index(w, info, err, errlen);
out_free:
	free(w->fds);
	free(w);
	return ret;
}
