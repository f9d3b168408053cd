/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/sink-sub.c - the consumer's side of several recorders
 * (record/sub.h): the socket it listens on for a second rip record, and a
 * sink per subscriber that sends it every packet the consumer takes, cut
 * to what came after the subscriber's start, through a queue that never
 * makes the consumer wait: a subscriber that falls REC_SUB_QUEUE_MAX bytes
 * behind loses packets, counted and told (MISSED), and nobody else does.
 * A subscriber's sink is optional: whatever happens to it, the consumer's
 * own recording goes on.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <internal/grow.h>

#include "record/consume.h"
#include "record/sink.h"
#include "record/sub.h"

#define SUB_ACCEPT_NS 20000000L	     /* how often the consumer looks for a subscriber */
#define SUB_END_WAIT_NS 10000000000L /* a subscriber that reads nothing that long is dropped */
#define SUB_FRAME_SIZE(len) (sizeof(struct rec_sub_frame) + (((size_t)(len) + 7) & ~(size_t)7))

struct rec_srv {
	int fd;
	int64_t next; /* when to look for subscribers again (rr_mono_ns) */
	unsigned subs;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

struct rec_sub {
	struct rec_sink s; /* first: the sink is the struct */
	int fd;
	pid_t pid;	     /* its (SO_PEERCRED) */
	bool ready;	     /* it said HELLO: it gets packets */
	bool leaving;	     /* END queued: it gets nothing more */
	int64_t leave_by;    /* when a leaving subscriber is dropped (rr_mono_ns) */
	struct rec_cut *cut; /* per ring: where its recording starts */
	uint32_t nstreams;   /* miss[] holds nstreams */
	uint64_t *miss_ev;   /* per stream: events dropped for it and not yet told */
	uint32_t *miss_pk;
	uint64_t missed_ev, missed_pk; /* in all */
	uint8_t *q;		       /* bytes to send, from qoff to qlen */
	size_t qoff, qlen, qcap;
	uint8_t in[64]; /* its requests, read so far */
	size_t inlen;
	size_t defs_from; /* the definitions sent it so far (trace_w_defs_copy) */
	uint64_t defs_ts; /* their time: before any event of its */
};

static int sub_dir(char *buf, size_t len, bool make, char *err, size_t errlen)
{
	uid_t uid = getuid();
	struct stat st;
	int n;

	n = snprintf(buf, len, "/run/user/%u", (unsigned)uid);
	if (n > 0 && (size_t)n < len && !lstat(buf, &st) && S_ISDIR(st.st_mode) &&
	    st.st_uid == uid && !(st.st_mode & 077))
		return 0;
	n = snprintf(buf, len, "/tmp/rip-rec-%u", (unsigned)uid);
	if (n < 0 || (size_t)n >= len)
		return rr_fail(err, errlen, -ENAMETOOLONG, "socket directory: name too long");
	if (make && mkdir(buf, 0700) && errno != EEXIST)
		return rr_fail(err, errlen, -errno, "%s: %s", buf, strerror(errno));
	if (lstat(buf, &st))
		return rr_fail(err, errlen, -errno, "%s: %s", buf, strerror(errno));
	/* another user's, or open to others: never ours to trust */
	if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077))
		return rr_fail(err, errlen, -EPERM,
			       "%s is not a private directory of this user (mode 0700): remove it",
			       buf);
	return 0;
}

/* Remove the sockets in dir of consumers that are gone (killed: they could not). */
static void sub_sweep(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		unsigned long long dev, ino;
		int pid, end = 0;

		if (sscanf(e->d_name, "ring-%llx-%llu-%d.sock%n", &dev, &ino, &pid, &end) != 3 ||
		    e->d_name[end] || pid <= 0 || !kill(pid, 0) || errno != ESRCH)
			continue;
		unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

int rec_sub_path(const struct rr_file *f, pid_t consumer, bool make, char *buf, size_t len,
		 char *err, size_t errlen)
{
	char dir[128];
	struct stat st;
	int ret, n;

	if (f->fd < 0 || fstat(f->fd, &st))
		return rr_fail(err, errlen, -EBADF, "%s: not an open ring file", f->path);
	ret = sub_dir(dir, sizeof(dir), make, err, errlen);
	if (ret)
		return ret;
	if (make)
		sub_sweep(dir);
	/* the ring file's identity, whatever path either side opened it by, and the consumer */
	n = snprintf(buf, len, "%s/ring-%llx-%llu-%d.sock", dir, (unsigned long long)st.st_dev,
		     (unsigned long long)st.st_ino, (int)consumer);
	if (n < 0 || (size_t)n >= len)
		return rr_fail(err, errlen, -ENAMETOOLONG, "%s: socket name too long", dir);
	return 0;
}

/* ---- the queue ---- */

/* Send what is queued, without waiting.  0, or -errno when the subscriber is gone. */
static int sub_flush(struct rec_sub *u)
{
	while (u->qoff < u->qlen) {
		ssize_t n =
			send(u->fd, u->q + u->qoff, u->qlen - u->qoff, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		u->qoff += (size_t)n;
	}
	if (u->qoff == u->qlen) {
		u->qoff = u->qlen = 0;
	} else if (u->qoff > u->qcap / 2) {
		memmove(u->q, u->q + u->qoff, u->qlen - u->qoff);
		u->qlen -= u->qoff;
		u->qoff = 0;
	}
	return 0;
}

/* Queue a frame of kind: a then b (either may be empty).  0 or -ENOMEM. */
static int sub_queue(struct rec_sub *u, uint32_t kind, const void *a, size_t alen, const void *b,
		     size_t blen)
{
	struct rec_sub_frame fr = { .magic = REC_SUB_MAGIC,
				    .kind = kind,
				    .len = (uint32_t)(alen + blen) };
	size_t size = SUB_FRAME_SIZE(alen + blen);

	if (RIP_GROW(u->q, u->qcap, u->qlen + size, 1u << 16))
		return -ENOMEM;
	memcpy(u->q + u->qlen, &fr, sizeof(fr));
	if (alen)
		memcpy(u->q + u->qlen + sizeof(fr), a, alen);
	if (blen)
		memcpy(u->q + u->qlen + sizeof(fr) + alen, b, blen);
	memset(u->q + u->qlen + sizeof(fr) + alen + blen, 0, size - sizeof(fr) - alen - blen);
	u->qlen += size;
	return 0;
}

/* Tell it what it missed of stream (all streams: UINT32_MAX). */
static int sub_tell_missed(struct rec_sub *u, uint32_t stream)
{
	for (uint32_t i = 0; i < u->nstreams; i++) {
		struct rec_sub_missed m = { .stream = i,
					    .packets = u->miss_pk[i],
					    .events = u->miss_ev[i] };

		if ((stream != UINT32_MAX && i != stream) || !m.packets)
			continue;
		if (sub_queue(u, REC_SUB_MISSED, &m, sizeof(m), NULL, 0))
			return -ENOMEM;
		u->miss_pk[i] = 0;
		u->miss_ev[i] = 0;
	}
	return 0;
}

/* It is gone (or must go): nothing more is sent; freed after the pass. */
static void sub_drop(struct rec_sub *u)
{
	if (u->fd >= 0)
		close(u->fd);
	u->fd = -1;
	u->s.gone = true;
	u->leaving = true;
}

/* ---- the sink ---- */

/* src's bytes cut to what lies after u's start in ring stream: false when none does. */
static bool sub_cut(const struct rec_sub *u, uint32_t stream, const struct rec_src *src,
		    struct rip_packet *hdr, struct rec_src *out, const uint8_t **body, size_t *blen)
{
	static const struct rec_src own;

	if (!src)
		src = &own;
	if (stream >= u->s.rec->nrings) {
		*out = *src;
		return true;
	}
	return rec_cut_apply(&u->cut[stream], src, hdr, out, body, blen);
}

static int sub_packet(struct rec_sink *s, uint32_t stream, const struct rip_packet *hdr0,
		      const uint8_t *body, size_t blen, char *err, size_t errlen)
{
	struct rec_sub *u = (struct rec_sub *)s;
	struct rip_packet hdr = *hdr0;
	struct rec_sub_pkt pk;
	struct rec_src src;

	(void)err;
	(void)errlen;
	if (!u->ready || u->leaving || stream >= u->nstreams)
		return 0;
	if (!sub_cut(u, stream, s->rec->src, &hdr, &src, &body, &blen))
		return 0;
	if (src.ring && !hdr.events && hdr0->events)
		return 0; /* cut to nothing */
	/*
	 * Events not out of a ring are the consumer's CPU samples (rip run
	 * --sample), whose type and threads only its own trace's index
	 * declares: they stay there, and so does what the sampler lost (the
	 * empty packet of their stream at the end).
	 */
	if (!src.ring && (hdr.events || stream == s->rec->nrings))
		return 0;
	hdr.packet_size = hdr.content_size = (uint64_t)(sizeof(hdr) + blen) * 8;
	/* it does not read: drop for it alone, count, and tell it when it reads again */
	if (u->qlen - u->qoff + SUB_FRAME_SIZE(sizeof(pk) + blen) > REC_SUB_QUEUE_MAX) {
		u->miss_pk[stream]++;
		u->miss_ev[stream] += hdr.events;
		u->missed_pk++;
		u->missed_ev += hdr.events;
		goto flush;
	}
	pk = (struct rec_sub_pkt){ .stream = stream,
				   .from_ring = src.ring,
				   .seq = src.seq,
				   .off = src.off,
				   .events = src.events,
				   .hdr = hdr };
	if (sub_tell_missed(u, stream) ||
	    sub_queue(u, REC_SUB_PACKET, &pk, sizeof(pk), body, blen)) {
		sub_drop(u); /* out of memory: this subscriber only */
		return 0;
	}
flush:
	if (sub_flush(u))
		sub_drop(u);
	return 0;
}

/* Queue a packet of definitions (trace_w_pkt_fn): -EAGAIN while its queue is full. */
static int sub_def_pkt(void *arg, uint32_t stream, const uint8_t *pkt, size_t len)
{
	struct rec_sub *u = arg;
	struct rec_sub_pkt pk = { .stream = stream };
	size_t blen = len - sizeof(pk.hdr);

	if (u->qlen - u->qoff + SUB_FRAME_SIZE(sizeof(pk) + blen) > REC_SUB_QUEUE_MAX)
		return -EAGAIN; /* the rest at a later pass */
	memcpy(&pk.hdr, pkt, sizeof(pk.hdr));
	return sub_queue(u, REC_SUB_PACKET, &pk, sizeof(pk), pkt + sizeof(pk.hdr), blen);
}

/*
 * The stacks and functions defined before it joined, and those the local
 * trace met since (in packets taken before its start, or cut from its
 * share of a packet): without them its trace would not name them.  Those
 * it also gets in its packets come twice, and are written once.
 */
static void sub_defs(struct rec_sub *u)
{
	for (struct rec_sink *s = u->s.rec->sinks; s; s = s->next) {
		int ret;

		if (!s->ops->defs || s->failed || s->gone)
			continue;
		ret = s->ops->defs(s, &u->defs_from, u->defs_ts, sub_def_pkt, u);
		if (ret && ret != -EAGAIN)
			sub_drop(u); /* out of memory: this subscriber only */
		return;
	}
}

/* Its HELLO: the cut, then WELCOME. */
static void sub_hello(struct rec_sub *u, const uint8_t *p, size_t len)
{
	struct rec *r = u->s.rec;
	struct rec_sub_welcome w = { .pid = (uint32_t)getpid() };
	uint32_t version, n;

	if (len < sizeof(version)) {
		sub_drop(u);
		return;
	}
	memcpy(&version, p, sizeof(version));
	if (version != REC_SUB_VERSION || u->ready) {
		sub_drop(u);
		return;
	}
	u->defs_ts = rr_now_ticks(&r->f.hdr);
	rec_cut_now(r, u->cut);
	w.ticks = rr_now_ticks(&r->f.hdr);
	/* and the cut, for it to take over from if we die */
	n = rec_rings_used(r) < r->nrings ? rec_rings_used(r) : r->nrings;
	if ((size_t)n * sizeof(*u->cut) > REC_SUB_FRAME_MAX - sizeof(w))
		n = 0;
	if (sub_queue(u, REC_SUB_WELCOME, &w, sizeof(w), u->cut, (size_t)n * sizeof(*u->cut))) {
		sub_drop(u);
		return;
	}
	/* before what each ring holds of its events (a ring's times never go back) */
	for (uint32_t i = 0; i < n; i++)
		if (u->cut[i].ts && u->cut[i].ts < u->defs_ts)
			u->defs_ts = u->cut[i].ts;
	u->defs_ts -= u->defs_ts > 0;
	u->ready = true;
	r->subs_ever = true;
	sub_defs(u);
}

/* Queue the END (after what it missed), and it is leaving. */
static void sub_end(struct rec_sub *u, uint32_t why)
{
	struct rec_sub_end e = { .why = why,
				 .missed_packets = u->missed_pk,
				 .missed_events = u->missed_ev };

	if (u->leaving)
		return;
	if (sub_tell_missed(u, UINT32_MAX) || sub_queue(u, REC_SUB_END, &e, sizeof(e), NULL, 0)) {
		sub_drop(u);
		return;
	}
	u->leaving = true;
	u->leave_by = rr_mono_ns() + SUB_END_WAIT_NS;
}

/* Its BYE: what the open packets hold for it, then END. */
static void sub_bye(struct rec_sub *u)
{
	char why[RR_ERR_MAX];

	if (!u->ready || u->leaving) {
		sub_drop(u);
		return;
	}
	/* a ring that cannot be read now: its tail is lost to this subscriber only */
	rec_flush_to(u->s.rec, &u->s, why, sizeof(why));
	sub_end(u, REC_SUB_END_BYE);
}

/* Read its requests. */
static void sub_read(struct rec_sub *u)
{
	for (;;) {
		struct rec_sub_frame fr;
		ssize_t n;

		n = recv(u->fd, u->in + u->inlen, sizeof(u->in) - u->inlen, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			sub_drop(u); /* it went away */
			return;
		}
		u->inlen += (size_t)n;
		while (u->fd >= 0 && u->inlen >= sizeof(fr)) {
			size_t size;

			memcpy(&fr, u->in, sizeof(fr));
			size = SUB_FRAME_SIZE(fr.len);
			if (fr.magic != REC_SUB_MAGIC || size > sizeof(u->in)) {
				sub_drop(u);
				return;
			}
			if (u->inlen < size)
				break;
			if (fr.kind == REC_SUB_HELLO)
				sub_hello(u, u->in + sizeof(fr), fr.len);
			else if (fr.kind == REC_SUB_BYE)
				sub_bye(u);
			else
				sub_drop(u);
			memmove(u->in, u->in + size, u->inlen - size);
			u->inlen -= size;
		}
		if (u->fd < 0)
			return;
	}
}

static int sub_pass(struct rec_sink *s, char *err, size_t errlen)
{
	struct rec_sub *u = (struct rec_sub *)s;

	(void)err;
	(void)errlen;
	if (u->fd < 0)
		return 0;
	if (!u->leaving)
		sub_read(u);
	if (u->fd >= 0 && u->ready && !u->leaving)
		sub_defs(u);
	if (u->fd >= 0 && sub_flush(u))
		sub_drop(u);
	/* all sent (or it stopped reading): done */
	if (u->fd >= 0 && u->leaving && (u->qlen == u->qoff || rr_mono_ns() > u->leave_by))
		sub_drop(u);
	return 0;
}

/*
 * The consumer stops while the process runs: the first subscriber that can
 * takes the rings over (record/sub.h).  0 when u did (END queued), else
 * -errno.
 */
static int sub_hand_over(struct rec_sub *u)
{
	struct rec *r = u->s.rec;
	uint32_t n = rec_rings_used(r);
	char why[RR_ERR_MAX];
	int ret;

	/* not one that is leaving already (its END is queued) */
	if (r->handed || !r->endcut || !u->ready || u->leaving || n > r->nrings ||
	    (size_t)n * sizeof(struct rec_cut) > REC_SUB_FRAME_MAX)
		return -EALREADY;
	ret = sub_queue(u, REC_SUB_TAKEOVER, r->endcut, (size_t)n * sizeof(struct rec_cut), NULL,
			0);
	if (ret)
		return ret;
	/*
	 * Writers in block mode wait for it from now on (rip_file_set_consumer's
	 * release: it started from the consumed words we leave); rec_close
	 * then leaves the word alone, as it is not ours any more.
	 */
	ret = rr_set_consumer(&r->f, (uint32_t)u->pid, why, sizeof(why));
	if (ret)
		return ret;
	r->handed = true;
	sub_end(u, REC_SUB_END_STOP);
	return 0;
}

static int sub_end_op(struct rec_sink *s, struct trace_info *info, bool ok, char *err,
		      size_t errlen)
{
	struct rec_sub *u = (struct rec_sub *)s;
	int64_t until;

	(void)info;
	(void)ok;
	(void)err;
	(void)errlen;
	if (u->fd < 0)
		return 0;
	if (!u->ready) {
		sub_drop(u);
		return 0;
	}
	/* the consumer ends: everything it took went out to every sink already */
	if (rr_alive(&s->rec->f) != 1)
		sub_end(u, REC_SUB_END_EXIT);
	else if (!ok || sub_hand_over(u))
		sub_end(u, REC_SUB_END_STOP);
	until = rr_mono_ns() + SUB_END_WAIT_NS;
	/* wait for it to read all, as long as it reads */
	while (u->fd >= 0 && u->qoff < u->qlen && rr_mono_ns() < until) {
		struct pollfd pfd = { .fd = u->fd, .events = POLLOUT };
		size_t before = u->qlen - u->qoff;

		if (poll(&pfd, 1, 100) < 0 && errno != EINTR)
			break;
		if (sub_flush(u))
			break;
		if (u->qlen - u->qoff < before)
			until = rr_mono_ns() + SUB_END_WAIT_NS;
	}
	sub_drop(u);
	return 0;
}

static void sub_free(struct rec_sink *s)
{
	struct rec_sub *u = (struct rec_sub *)s;
	struct rec *r = s->rec;

	if (u->fd >= 0)
		close(u->fd);
	if (r && r->srv && r->srv->subs)
		r->srv->subs--;
	free(u->cut);
	free(u->miss_ev);
	free(u->miss_pk);
	free(u->q);
	free(u);
}

static const struct rec_sink_ops sub_ops = {
	.packet = sub_packet,
	.pass = sub_pass,
	.end = sub_end_op,
	.free = sub_free,
};

/* ---- the socket ---- */

int rec_srv_open(struct rec *r, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct rec_srv *v;
	struct stat st;
	int ret;

	v = calloc(1, sizeof(*v));
	if (!v)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	v->fd = -1;
	ret = rec_sub_path(&r->f, getpid(), true, v->path, sizeof(v->path), err, errlen);
	if (ret)
		goto err_free;
	/* one left by a consumer that died (we are the consumer now): ours only */
	if (!lstat(v->path, &st)) {
		if (!S_ISSOCK(st.st_mode) || st.st_uid != getuid()) {
			ret = rr_fail(err, errlen, -EEXIST, "%s: not our socket", v->path);
			goto err_free;
		}
		unlink(v->path);
	}
	v->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (v->fd < 0) {
		ret = rr_fail(err, errlen, -errno, "socket: %s", strerror(errno));
		goto err_free;
	}
	memcpy(sa.sun_path, v->path, strlen(v->path) + 1);
	/* in a directory of ours, mode 0700; the socket itself 0600 too */
	if (bind(v->fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(v->path, 0600) ||
	    listen(v->fd, 8)) {
		ret = rr_fail(err, errlen, -errno, "%s: %s", v->path, strerror(errno));
		unlink(v->path);
		goto err_close;
	}
	r->srv = v;
	return 0;

err_close:
	close(v->fd);
err_free:
	free(v);
	return ret;
}

/* A subscriber knocked on fd: its sink, fed from its HELLO on. */
static void rec_srv_take(struct rec *r, int fd)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	struct rec_sub *u;

	/* only this user's own processes */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.uid != getuid())
		goto err_close;
	u = calloc(1, sizeof(*u));
	if (!u)
		goto err_close;
	u->fd = fd;
	u->pid = cred.pid;
	u->nstreams = r->nrings + 1; /* the rings', then the samples' */
	u->cut = calloc(r->nrings, sizeof(*u->cut));
	u->miss_ev = calloc(u->nstreams, sizeof(*u->miss_ev));
	u->miss_pk = calloc(u->nstreams, sizeof(*u->miss_pk));
	if (!u->cut || !u->miss_ev || !u->miss_pk) {
		u->s.rec = r;
		sub_free(&u->s);
		return;
	}
	u->s.ops = &sub_ops;
	u->s.optional = true;
	rec_sink_add(r, &u->s);
	r->srv->subs++;
	return;

err_close:
	close(fd);
}

void rec_srv_poll(struct rec *r)
{
	struct rec_srv *v = r->srv;
	int64_t now;

	if (!v || (now = rr_mono_ns()) < v->next)
		return;
	v->next = now + SUB_ACCEPT_NS;
	for (;;) {
		int fd = accept4(v->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		rec_srv_take(r, fd);
	}
}

unsigned rec_srv_count(const struct rec *r)
{
	return r->srv ? r->srv->subs : 0;
}

void rec_srv_close(struct rec *r)
{
	struct rec_srv *v = r->srv;

	if (!v)
		return;
	/* the subscribers' sinks outlive it (freed with the consumer's): they stop counting */
	r->srv = NULL;
	close(v->fd);
	unlink(v->path);
	free(v);
}
