/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/subscribe.c - the subscriber's side of several recorders
 * (record/sub.h): a second rip record on a process that has a consumer
 * does not touch the rings; it asks the consumer for a copy of every
 * packet from now on and writes them with its own sinks, exactly as a
 * consumer would (rec_emit), with its own type table read from the ring
 * file and its own counts: what the writers dropped while it recorded,
 * and what the consumer dropped for it alone (MISSED), which goes into the
 * next packets' events_discarded of that stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <internal/grow.h>

#include "record/consume.h"
#include "record/sub.h"

#define SUB_WELCOME_MS 5000	    /* how long the consumer may take to answer HELLO */
#define SUB_SILENCE_NS 10000000000L /* at the end: no byte that long, the consumer is gone */
#define SUB_DYING_NS 1000000000L    /* how long a consumer that hung up may take to die */
#define SUB_FRAME_SIZE(len) (sizeof(struct rec_sub_frame) + (((size_t)(len) + 7) & ~(size_t)7))

static int sub_send(int fd, uint32_t kind, const void *p, uint32_t len)
{
	uint8_t buf[sizeof(struct rec_sub_frame) + 8] = { 0 };
	struct rec_sub_frame fr = { .magic = REC_SUB_MAGIC, .kind = kind, .len = len };
	size_t size = SUB_FRAME_SIZE(len), off = 0;

	memcpy(buf, &fr, sizeof(fr));
	if (len)
		memcpy(buf + sizeof(fr), p, len);
	while (off < size) {
		ssize_t n = send(fd, buf + off, size - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			poll(&pfd, 1, 100);
			continue;
		}
		if (n <= 0)
			return -EPIPE;
		off += (size_t)n;
	}
	return 0;
}

/* Connect to the consumer's socket, checked to be ours and the consumer's.  fd or -errno. */
static int sub_connect(struct rec *r, pid_t consumer, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { SUB_WELCOME_MS / 1000, (SUB_WELCOME_MS % 1000) * 1000 };
	char path[sizeof(sa.sun_path)];
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	struct stat st;
	int fd, ret;

	ret = rec_sub_path(&r->f, consumer, false, path, sizeof(path), err, errlen);
	if (ret)
		return ret;
	if (lstat(path, &st))
		return rr_fail(err, errlen, -errno,
			       "no socket %s (an older rip, or another user's recorder)", path);
	if (!S_ISSOCK(st.st_mode) || st.st_uid != getuid())
		return rr_fail(err, errlen, -EPERM, "%s: not a socket of this user", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return rr_fail(err, errlen, -errno, "socket: %s", strerror(errno));
	/*
	 * A consumer that does not accept (stopped, wedged) with its backlog
	 * full (the connections of recorders that gave up on it stay queued)
	 * would keep connect waiting for ever: as long as for the WELCOME.
	 */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			ret = rr_fail(err, errlen, -ETIMEDOUT,
				      "pid %d did not answer (is it stopped? it takes no more "
				      "recorders)",
				      (int)consumer);
		else
			ret = rr_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
		goto err_close;
	}
	/* the consumer the ring file names, of this user: nobody else's copy of the events */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.uid != getuid() ||
	    cred.pid != consumer) {
		ret = rr_fail(err, errlen, -EPERM, "%s: answered by pid %d, not the consumer %d",
			      path, (int)cred.pid, (int)consumer);
		goto err_close;
	}
	return fd;

err_close:
	close(fd);
	return ret;
}

/* Read what is there (wait: up to ms for the first byte).  Bytes read, 0 at EOF, or -errno. */
static ssize_t sub_recv(struct rec *r, int ms)
{
	ssize_t n;

	if (ms) {
		struct pollfd pfd = { .fd = r->sub_fd, .events = POLLIN };

		if (poll(&pfd, 1, ms) == 0)
			return -EAGAIN;
	}
	if (RIP_GROW(r->sub_buf, r->sub_cap, r->sub_len + (1u << 16), 1u << 17))
		return -ENOMEM;
	do
		n = recv(r->sub_fd, r->sub_buf + r->sub_len, r->sub_cap - r->sub_len, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	r->sub_len += (size_t)n;
	return n;
}

static int sub_event(const struct ev_event *e, void *arg)
{
	(void)e;
	(void)arg;
	return 0;
}

/*
 * Do the events at data (a packet header, then len bytes in all) decode,
 * hdr->events of them?  As the consumer checked its copies out of the
 * rings, we check what comes over the socket: 0, or -EBADMSG with why.
 */
static int sub_check(struct rec *r, const struct rip_packet *hdr, const uint8_t *data, size_t len,
		     char *why, size_t whylen)
{
	struct rip_packet h = *hdr;
	int n;

	/* its magic and times (the sizes are the frame's) */
	h.packet_size = h.content_size = (uint64_t)len * 8;
	n = ev_check_packet(&h, len, why, whylen);
	if (!n)
		n = ev_decode(r->types, data, len, hdr->timestamp_begin, sub_event, NULL, why,
			      whylen);
	if (n >= 0 && (uint32_t)n != hdr->events)
		return rr_fail(why, whylen, -EBADMSG, "a packet of %u events holds %d", hdr->events,
			       n);
	return n < 0 ? n : 0;
}

/* A PACKET: into the sinks.  0 or -errno. */
static int sub_packet(struct rec *r, const uint8_t *p, size_t len, char *err, size_t errlen)
{
	char why[RR_ERR_MAX];
	struct rec_sub_pkt pk;
	struct rec_src src;
	uint32_t types, events;
	size_t blen;

	if (len < sizeof(pk))
		return rr_fail(err, errlen, -EBADMSG, "the consumer sent a short packet");
	blen = len - sizeof(pk);
	memcpy(&pk, p, sizeof(pk));
	/* the rings', the samples' (nrings), and the definitions' copies (store.defs_stream) */
	if (pk.stream > r->nrings &&
	    (pk.from_ring || !r->store.defs || pk.stream != r->store.defs_stream))
		return rr_fail(err, errlen, -EBADMSG, "the consumer sent stream %u of %u",
			       pk.stream, r->nrings);
	/*
	 * Types registered since we read the table: the consumer decoded them.
	 * rr_live_u32's acquire pairs with the writer's release of types_count.
	 */
	if (!rr_live_u32(&r->f, offsetof(struct rip_file_hdr, types_count), &types, why,
			 sizeof(why)) &&
	    types != r->types_seen) {
		r->types_seen = types;
		if (ev_read_types_more(&r->f, r->types, why, sizeof(why)) && r->warn)
			r->warn(why, r->warn_arg);
	}
	/* the body has the header's bytes before it: pk.hdr, last in rec_sub_pkt */
	if (sub_check(r, &pk.hdr, p + sizeof(pk) - sizeof(pk.hdr),
		      len - sizeof(pk) + sizeof(pk.hdr), why, sizeof(why))) {
		/* a type registered since: read the table again, then give up on the packet */
		if (ev_read_types_more(&r->f, r->types, why, sizeof(why)) ||
		    sub_check(r, &pk.hdr, p + sizeof(pk) - sizeof(pk.hdr),
			      len - sizeof(pk) + sizeof(pk.hdr), why, sizeof(why))) {
			if (r->st.corrupt++ < 10 && r->warn) {
				char msg[RR_ERR_MAX + 64];

				snprintf(msg, sizeof(msg), "warning: stream %u: %s: packet skipped",
					 pk.stream, why);
				r->warn(msg, r->warn_arg);
			}
			return 0;
		}
	}
	src = (struct rec_src){
		.ring = pk.from_ring, .seq = pk.seq, .off = (size_t)pk.off, .events = pk.events
	};
	events = pk.hdr.events;
	if (pk.stream <= r->nrings)
		pk.hdr.events_discarded += r->sub_disc[pk.stream];
	if (rec_emit(r, pk.stream, &src, &pk.hdr, p + sizeof(pk), blen)) {
		snprintf(err, errlen, "%s", r->cb_err);
		return -EIO;
	}
	/* where what we have of this ring ends, should we take over without a word */
	if (pk.from_ring && pk.stream < r->nrings)
		r->cut[pk.stream] = (struct rec_cut){ .seq1 = pk.seq + 1,
						      .off = (size_t)pk.off + blen,
						      .events = pk.events + events,
						      .ts = pk.hdr.timestamp_end };
	return 0;
}

/* TAKEOVER: where the consumer stopped in each ring, into r->cut.  0 or -errno. */
static int sub_takeover(struct rec *r, const uint8_t *p, size_t len, char *err, size_t errlen)
{
	size_t n = len / sizeof(struct rec_cut);

	if (n > r->nrings || !r->cut || r->sub_offered)
		return rr_fail(err, errlen, -EBADMSG, "the consumer sent a bad takeover");
	memset(r->cut, 0, (size_t)r->nrings * sizeof(*r->cut));
	memcpy(r->cut, p, n * sizeof(*r->cut));
	r->sub_offered = true;
	return 0;
}

/* Is pid gone (or a zombie: its parent has not reaped it yet)? */
static bool sub_gone_now(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	if (kill(pid, 0) && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	/* the state follows the name, which may hold anything: after its last ')' */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/*
 * Is pid, which closed its end of our connection, gone?  A process that is
 * killed closes its descriptors before it is a zombie: it is given up to
 * SUB_DYING_NS to become one.
 */
static bool sub_gone(pid_t pid)
{
	int64_t until = rr_mono_ns() + SUB_DYING_NS;

	while (!sub_gone_now(pid)) {
		struct timespec ms = { 0, 5000000 };

		if (rr_mono_ns() > until)
			return false;
		nanosleep(&ms, NULL);
	}
	return true;
}

/*
 * The consumer named us the rings' consumer and we are ending anyway:
 * give the word back (to nobody), so that no writer waits for us.
 */
static void sub_decline(struct rec *r)
{
	char why[RR_ERR_MAX];
	uint32_t self = (uint32_t)getpid();
	sigjmp_buf jb;

	if (rr_map_writable(&r->f, why, sizeof(why)) || rr_guard_enter(&jb))
		return;
	/*
	 * As rec_close, only if nobody took it since: release, pairs with the
	 * writers' load in rip_file_consumer (a hint: rip/abi.h).
	 */
	__atomic_compare_exchange_n(&((struct rip_file_hdr *)r->f.wmap)->ev_consumer, &self, 0,
				    false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	rr_guard_leave();
}

/* The frames read so far: handled.  Packets taken, or -errno. */
static int sub_frames(struct rec *r, char *err, size_t errlen)
{
	size_t off = 0;
	int n = 0, ret = 0;

	while (r->sub_len - off >= sizeof(struct rec_sub_frame)) {
		struct rec_sub_frame fr;
		const uint8_t *p;
		size_t size;

		memcpy(&fr, r->sub_buf + off, sizeof(fr));
		if (fr.magic != REC_SUB_MAGIC || fr.len > REC_SUB_FRAME_MAX) {
			ret = rr_fail(err, errlen, -EBADMSG, "the consumer sent a bad frame");
			break;
		}
		size = SUB_FRAME_SIZE(fr.len);
		if (r->sub_len - off < size)
			break;
		p = r->sub_buf + off + sizeof(fr);
		if (fr.kind == REC_SUB_PACKET) {
			ret = sub_packet(r, p, fr.len, err, errlen);
			if (ret)
				break;
			n++;
		} else if (fr.kind == REC_SUB_MISSED && fr.len >= sizeof(struct rec_sub_missed)) {
			struct rec_sub_missed m;

			memcpy(&m, p, sizeof(m));
			if (m.stream <= r->nrings)
				r->sub_disc[m.stream] += m.events;
			r->sub_missed_events += m.events;
			r->sub_missed_packets += m.packets;
		} else if (fr.kind == REC_SUB_TAKEOVER) {
			ret = sub_takeover(r, p, fr.len, err, errlen);
			if (ret)
				break;
		} else if (fr.kind == REC_SUB_END && fr.len >= sizeof(struct rec_sub_end)) {
			struct rec_sub_end e;

			memcpy(&e, p, sizeof(e));
			r->sub_end = e.why >= REC_SUB_END_BYE && e.why <= REC_SUB_END_STOP ?
					     (enum rec_sub_why)e.why :
					     REC_SUB_END_LOST;
		} else if (fr.kind != REC_SUB_WELCOME) {
			ret = rr_fail(err, errlen, -EBADMSG, "the consumer sent frame kind %u",
				      fr.kind);
			break;
		}
		off += size;
	}
	memmove(r->sub_buf, r->sub_buf + off, r->sub_len - off);
	r->sub_len -= off;
	return ret ? ret : n;
}

/*
 * Name us the rings' consumer if the word still says was: one subscriber
 * of a consumer that died wins, the others end.  True when we did.
 */
static bool sub_claim(struct rec *r, uint32_t was)
{
	char why[RR_ERR_MAX];
	sigjmp_buf jb;
	bool won;

	if (rr_map_writable(&r->f, why, sizeof(why)) || rr_guard_enter(&jb))
		return false;
	/*
	 * The release as rip_file_set_consumer's: pairs with the writers' load
	 * in rip_file_consumer (a hint: rip/abi.h); the acquire with another
	 * subscriber's CAS here, which then fails.
	 */
	won = __atomic_compare_exchange_n(&((struct rip_file_hdr *)r->f.wmap)->ev_consumer, &was,
					  (uint32_t)getpid(), false, __ATOMIC_ACQ_REL,
					  __ATOMIC_ACQUIRE);
	rr_guard_leave();
	return won;
}

/*
 * After the END: take the rings over when they were handed to us, or
 * decline.  After no END: take them over when the consumer died (and
 * nobody else took them) while the process runs.
 */
static int sub_ended(struct rec *r, char *err, size_t errlen)
{
	if (r->sub_end == REC_SUB_END_STOP && r->sub_offered) {
		if (!r->sub_ending)
			return rec_take_over(r, false, err, errlen);
		sub_decline(r);
		return 0;
	}
	if (r->sub_end != REC_SUB_END_LOST || r->sub_ending || !sub_gone(r->sub_pid) ||
	    rr_alive(&r->f) != 1)
		return 0;
	/* nobody else took the rings: the word still names the dead one (or nobody) */
	if (!sub_claim(r, (uint32_t)r->sub_pid) && !sub_claim(r, 0))
		return 0;
	return rec_take_over(r, true, err, errlen);
}

int rec_sub_poll(struct rec *r, bool wait, char *err, size_t errlen)
{
	int n = 0, ret;

	if (r->sub_end != REC_SUB_ON)
		return 0;
	/* a pass: what is there now, a few MiB at most, so that the caller checks the time */
	for (int i = 0; i < 64; i++) {
		ssize_t got = sub_recv(r, wait && !i ? 100 : 0);

		if (got == -EAGAIN)
			break;
		if (got <= 0) {
			/* the consumer went without END: what it sent is all there is */
			ret = sub_frames(r, err, errlen);
			if (ret < 0)
				return ret;
			if (r->sub_end == REC_SUB_ON)
				r->sub_end = REC_SUB_END_LOST;
			n += ret;
			ret = sub_ended(r, err, errlen);
			return ret < 0 ? ret : n;
		}
		ret = sub_frames(r, err, errlen);
		if (ret < 0)
			return ret;
		n += ret;
		if (r->sub_end != REC_SUB_ON) {
			ret = sub_ended(r, err, errlen);
			return ret < 0 ? ret : n;
		}
	}
	return n;
}

int rec_sub_finish(struct rec *r, char *err, size_t errlen)
{
	int64_t until = rr_mono_ns() + SUB_SILENCE_NS;

	/* the consumer sends what the open packets hold for us, then END */
	r->sub_ending = true;
	if (r->sub_end == REC_SUB_ON && sub_send(r->sub_fd, REC_SUB_BYE, NULL, 0))
		r->sub_end = REC_SUB_END_LOST;
	while (r->sub_end == REC_SUB_ON) {
		size_t before = r->sub_len;
		uint64_t packets = r->st.packets;
		int n = rec_sub_poll(r, true, err, errlen);

		if (n < 0)
			return n;
		if (r->st.packets != packets || r->sub_len != before)
			until = rr_mono_ns() + SUB_SILENCE_NS;
		else if (rr_mono_ns() > until)
			r->sub_end = REC_SUB_END_LOST;
	}
	return 0;
}

int rec_subscribe(struct rec *r, const char *path, pid_t consumer, char *err, size_t errlen)
{
	uint32_t version = REC_SUB_VERSION;
	int64_t until;
	int ret;

	ret = rec_open_ro(r, path, err, errlen);
	if (ret)
		return ret;
	r->sub_disc = calloc((size_t)r->nrings + 1, sizeof(*r->sub_disc));
	if (!r->sub_disc) {
		ret = rr_fail(err, errlen, -ENOMEM, "out of memory");
		goto err_close;
	}
	ret = sub_connect(r, consumer, err, errlen);
	if (ret < 0)
		goto err_close;
	r->sub_fd = ret;
	r->sub_pid = consumer;
	if (sub_send(r->sub_fd, REC_SUB_HELLO, &version, sizeof(version))) {
		ret = rr_fail(err, errlen, -EPIPE, "pid %d hung up", (int)consumer);
		goto err_close;
	}
	/* WELCOME: from now on every event is ours */
	until = rr_mono_ns() + (int64_t)SUB_WELCOME_MS * 1000000;
	for (;;) {
		struct rec_sub_frame fr;
		ssize_t n;

		if (r->sub_len >= sizeof(fr)) {
			memcpy(&fr, r->sub_buf, sizeof(fr));
			if (fr.magic != REC_SUB_MAGIC || fr.kind != REC_SUB_WELCOME ||
			    fr.len < sizeof(struct rec_sub_welcome) || fr.len > REC_SUB_FRAME_MAX) {
				ret = rr_fail(err, errlen, -EBADMSG,
					      "pid %d answered something else", (int)consumer);
				goto err_close;
			}
			if (r->sub_len >= SUB_FRAME_SIZE(fr.len))
				break;
		}
		n = rr_mono_ns() < until ? sub_recv(r, 100) : 0;
		if (n == -EAGAIN)
			continue;
		if (n <= 0) {
			ret = rr_fail(err, errlen, -ETIMEDOUT, "pid %d did not answer",
				      (int)consumer);
			goto err_close;
		}
	}
	/* where we start in each ring: where we go on from, should the consumer die */
	r->cut = calloc(r->nrings, sizeof(*r->cut));
	if (!r->cut) {
		ret = rr_fail(err, errlen, -ENOMEM, "out of memory");
		goto err_close;
	}
	{
		struct rec_sub_frame fr;
		size_t n;

		memcpy(&fr, r->sub_buf, sizeof(fr));
		n = fr.len > sizeof(struct rec_sub_welcome) ?
			    (fr.len - sizeof(struct rec_sub_welcome)) / sizeof(*r->cut) :
			    0;
		if (n > r->nrings || r->sub_len < SUB_FRAME_SIZE(fr.len)) {
			ret = rr_fail(err, errlen, -EBADMSG, "pid %d sent a bad welcome",
				      (int)consumer);
			goto err_close;
		}
		memcpy(r->cut, r->sub_buf + sizeof(fr) + sizeof(struct rec_sub_welcome),
		       n * sizeof(*r->cut));
	}
	/* the WELCOME stays in the buffer: sub_frames passes over it */
	rec_baseline(r);
	return 0;

err_close:
	rec_close(r);
	return ret;
}
