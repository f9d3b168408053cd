/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/relayd.c - a producer for lttng-relayd (record/relayd.h), written from
 * the behaviour of relayd 2.13: the encodings below are our own.
 *
 * Two TCP connections.  The control one carries commands, each a 24-byte
 * header (u64 circuit, always 0; u64 payload bytes; u32 command; u32
 * command version, 0) and its payload; every integer on the wire is
 * big-endian.  The data one carries the packets, each behind a 32-byte
 * header (u64 circuit; u64 relayd's stream handle; u64 the stream's network
 * sequence number, from 0; u32 bytes; u32 padding bytes).  relayd pairs a
 * packet with the index we send for it on the control connection by that
 * sequence number.
 *
 * Commands, with the 2.10 payloads (R: what relayd answers):
 *   VERSION	   u32 major, u32 minor                    R: u32 major, u32 minor
 *   CREATE_SESSION name[255], host[64], u32 live timer (us), u32 snapshot
 *						   R: u64 session id, u32 status
 *   ADD_STREAM   channel[264], path[4096], u64 file size limit, u64 file count
 *						   R: u64 stream handle, u32 status
 *   STREAMS_SENT (nothing: publishes the streams added to live readers)  R: u32 status
 *   SEND_METADATA u64 handle, u32 padding, TSDL text  (no answer)
 *   SEND_INDEX   u64 handle, u64 net seq, u64 packet bits, u64 content bits,
 *		  u64 begin, u64 end, u64 discarded, u64 stream class, u64 instance,
 *		  u64 packet seq                         R: u32 status
 *		  (packet bits 0: a live beacon, end = "nothing before this")
 *   CLOSE_STREAM u64 handle, u64 last net seq (all ones: none to wait for)
 *						   R: u32 status
 *   DATA_PENDING u64 handle, u64 last net seq      R: u32 1 pending, 0 not
 * Status 10 is success.
 *
 * SEND_INDEX answers are not waited for one by one: they are counted and
 * read in order later (relayd answers each connection in order), before
 * any command whose answer we need and whenever many are outstanding, so
 * that neither side's socket buffer fills with answers nobody reads.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <internal/deadline.h>
#include <rip/abi.h>

#include "read/ringfile.h"
#include "record/relayd.h"

enum {
	RLY_ADD_STREAM = 1,
	RLY_CREATE_SESSION = 2,
	RLY_VERSION = 5,
	RLY_SEND_METADATA = 6,
	RLY_CLOSE_STREAM = 7,
	RLY_DATA_PENDING = 8,
	RLY_SEND_INDEX = 13,
	RLY_STREAMS_SENT = 16,
};

#define RLY_OK 10u
#define RLY_MAJOR 2u
#define RLY_MINOR 10u
#define RLY_CTRL_HDR 24
#define RLY_DATA_HDR 32
#define RLY_SESSION_LEN (255 + 64 + 4 + 4)
#define RLY_CHANNEL_MAX 264
#define RLY_PATH_MAX 4096
#define RLY_STREAM_LEN (RLY_CHANNEL_MAX + RLY_PATH_MAX + 8 + 8)
#define RLY_INDEX_LEN (10 * 8)
#define RLY_PENDING_MAX 256 /* SEND_INDEX answers outstanding before we read them */
#define RLY_BATCH 32	    /* SEND_INDEX commands sent together (rly_flush) */
#define RLY_MAX_STREAMS 65536u

struct rly_stream {
	uint64_t handle;
	uint64_t next_net;  /* network sequence number of the next packet */
	uint64_t last_end;  /* timestamp_end of the last packet or beacon */
	bool added, sent;
};

struct rly {
	int ctrl, data;
	bool broken, closed, unpublished;
	uint32_t minor;
	unsigned timeout_ms;
	uint64_t session_id, meta;
	uint32_t pending;     /* SEND_INDEX answers not read yet */
	uint8_t ibuf[RLY_BATCH * (RLY_CTRL_HDR + RLY_INDEX_LEN)]; /* SEND_INDEX not sent yet */
	uint32_t ibatch;      /* commands in ibuf */
	struct rly_stream *s;
	uint32_t ns;	      /* entries in s */
	uint32_t used;	      /* highest stream sent + 1 */
	struct rly_stats st;
	char path[RLY_NAME_MAX + RLY_HOST_MAX + 40];
	/* what rly_reconnect needs */
	struct rly_url url;
	char session[RLY_NAME_MAX + 1], hostname[RLY_HOST_MAX + 1];
	uint32_t live_us;
	unsigned reconnects;
};

/* ---- URLs ---------------------------------------------------------------------------- */

static int rly_port(const char *s, size_t n, uint16_t *out)
{
	unsigned long v = 0;

	if (!n || n > 5)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (!v || v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

int rly_url_parse(const char *url, struct rly_url *u, char *err, size_t errlen)
{
	const char *p, *end, *colon;
	size_t n;

	memset(u, 0, sizeof(*u));
	if (!strncmp(url, "net://", 6))
		p = url + 6;
	else if (!strncmp(url, "net6://", 7))
		p = url + 7;
	else if (!strncmp(url, "tcp://", 6))
		p = url + 6;
	else if (!strncmp(url, "tcp6://", 7))
		p = url + 7;
	else
		return rr_fail(err, errlen, -EINVAL,
			       "relayd URL '%s': it starts with net:// or tcp:// "
			       "(net://HOST[:CTRL[:DATA]])",
			       url);
	if (*p == '[') {
		end = strchr(p, ']');
		if (!end || end == p + 1)
			return rr_fail(err, errlen, -EINVAL, "relayd URL '%s': unclosed [ address",
				       url);
		n = (size_t)(end - p - 1);
		if (n >= sizeof(u->host))
			goto too_long;
		memcpy(u->host, p + 1, n);
		p = end + 1;
		if (*p && *p != ':' && *p != '/')
			goto bad;
	} else {
		n = strcspn(p, ":/");
		if (!n)
			return rr_fail(err, errlen, -EINVAL, "relayd URL '%s': no host", url);
		if (n >= sizeof(u->host))
			goto too_long;
		memcpy(u->host, p, n);
		p += n;
	}
	for (const char *c = u->host; *c; c++)
		if (*c <= ' ' || *c >= 0x7f)
			goto bad;
	u->ctrl = RLY_DEFAULT_CTRL;
	u->data = RLY_DEFAULT_DATA;
	if (*p == ':') {
		p++;
		colon = p + strcspn(p, ":/");
		if (rly_port(p, (size_t)(colon - p), &u->ctrl))
			return rr_fail(err, errlen, -EINVAL,
				       "relayd URL '%s': the control port is a number from 1 to "
				       "65535",
				       url);
		u->data = u->ctrl < 65535 ? (uint16_t)(u->ctrl + 1) : 0;
		p = colon;
		if (*p == ':') {
			p++;
			colon = p + strcspn(p, "/");
			if (rly_port(p, (size_t)(colon - p), &u->data))
				return rr_fail(err, errlen, -EINVAL,
					       "relayd URL '%s': the data port is a number from 1 "
					       "to 65535",
					       url);
			p = colon;
		}
		if (!u->data)
			return rr_fail(err, errlen, -EINVAL, "relayd URL '%s': give the data port",
				       url);
	}
	if (*p == '/' && !p[1])
		p++;
	if (*p)
		goto bad;
	if (u->ctrl == u->data)
		return rr_fail(err, errlen, -EINVAL,
			       "relayd URL '%s': the control and data ports must differ", url);
	return 0;
bad:
	return rr_fail(err, errlen, -EINVAL, "relayd URL '%s': not net://HOST[:CTRL[:DATA]]", url);
too_long:
	return rr_fail(err, errlen, -EINVAL, "relayd URL '%s': host name too long", url);
}

bool rly_name_ok(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (!n || n > max || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}

/* ---- bytes on the wire ----------------------------------------------------------------- */

static void rly_put64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, 8);
}

static void rly_put32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, 4);
}

static uint64_t rly_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return be64toh(v);
}

static uint32_t rly_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return be32toh(v);
}

static int rly_broke(struct rly *r, int code, char *err, size_t errlen, const char *what)
{
	r->broken = true;
	return rr_fail(err, errlen, code, "relayd lost (%s): %s", what,
		       code == -EAGAIN	    ? "no answer in time"
		       : code == -ENODATA ? "it closed the connection"
					  : strerror(-code));
}

/* When what starts now must be done by: r->timeout_ms from now (0: never). */
static int64_t rly_deadline(const struct rly *r)
{
	return r->timeout_ms ? rip_now_ms() + r->timeout_ms : INT64_MAX;
}

/* Send it all within r->timeout_ms. */
static int rly_sendv(struct rly *r, int fd, struct iovec *iov, int n, char *err, size_t errlen,
		     const char *what)
{
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };
	int64_t deadline = rly_deadline(r);

	if (r->broken)
		return rr_fail(err, errlen, -EPIPE, "relayd: the connection was lost before");
	while (m.msg_iovlen) {
		int w = rip_wait_until(fd, POLLOUT, deadline);
		ssize_t k;

		if (w)
			return rly_broke(r, w, err, errlen, what);
		k = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (k < 0)
			return rly_broke(r, errno == EWOULDBLOCK ? -EAGAIN : -errno, err, errlen,
					 what);
		while (m.msg_iovlen && (size_t)k >= m.msg_iov->iov_len) {
			k -= (ssize_t)m.msg_iov->iov_len;
			m.msg_iov++;
			m.msg_iovlen--;
		}
		if (m.msg_iovlen) {
			m.msg_iov->iov_base = (char *)m.msg_iov->iov_base + k;
			m.msg_iov->iov_len -= (size_t)k;
		}
	}
	return 0;
}

/* An answer of len bytes, all by the deadline (rly_deadline). */
static int rly_recv(struct rly *r, void *buf, size_t len, int64_t deadline, char *err,
		    size_t errlen, const char *what)
{
	uint8_t *p = buf;

	if (r->broken)
		return rr_fail(err, errlen, -EPIPE, "relayd: the connection was lost before");
	while (len) {
		int w = rip_wait_until(r->ctrl, POLLIN, deadline);
		ssize_t k;

		if (w)
			return rly_broke(r, w, err, errlen, what);
		k = recv(r->ctrl, p, len, MSG_DONTWAIT);
		if (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (k <= 0)
			return rly_broke(r, k == 0 ? -ENODATA
					    : errno == EWOULDBLOCK ? -EAGAIN
								   : -errno,
					 err, errlen, what);
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

/* Read the outstanding SEND_INDEX answers (all, or only those already there). */
static int rly_drain(struct rly *r, bool all, char *err, size_t errlen)
{
	int64_t deadline = rly_deadline(r);
	uint8_t b[4];

	/* all of them within the timeout: answers come at once from a relayd that is there */
	while (r->pending) {
		if (!all) {
			ssize_t k = recv(r->ctrl, b, sizeof(b), MSG_DONTWAIT | MSG_PEEK);

			if (k < (ssize_t)sizeof(b))
				return 0;
		}
		if (rly_recv(r, b, sizeof(b), deadline, err, errlen, "reading an index answer"))
			return -EIO;
		r->pending--;
		if (rly_get32(b) != RLY_OK) {
			r->broken = true;
			return rr_fail(err, errlen, -EPROTO,
				       "relayd refused a packet index (status %u): see its log",
				       rly_get32(b));
		}
	}
	return 0;
}

int rly_flush(struct rly *r, char *err, size_t errlen)
{
	struct iovec iov = { r->ibuf, (size_t)r->ibatch * (RLY_CTRL_HDR + RLY_INDEX_LEN) };
	uint32_t n = r->ibatch;

	if (!n)
		return 0;
	r->ibatch = 0;
	if (rly_sendv(r, r->ctrl, &iov, 1, err, errlen, "sending indexes"))
		return -EIO;
	r->pending += n;
	return rly_drain(r, r->pending >= RLY_PENDING_MAX, err, errlen);
}

/* A command on the control connection; its answer (reply_len bytes) into reply. */
static int rly_cmd(struct rly *r, uint32_t cmd, const void *payload, size_t len, void *reply,
		   size_t reply_len, char *err, size_t errlen, const char *what)
{
	uint8_t h[RLY_CTRL_HDR];
	struct iovec iov[2] = { { h, sizeof(h) }, { (void *)payload, len } };

	if (rly_flush(r, err, errlen))
		return -EIO;
	if (reply_len && rly_drain(r, true, err, errlen))
		return -EIO;
	rly_put64(h, 0);
	rly_put64(h + 8, len);
	rly_put32(h + 16, cmd);
	rly_put32(h + 20, 0);
	if (rly_sendv(r, r->ctrl, iov, len ? 2 : 1, err, errlen, what))
		return -EIO;
	if (reply_len && rly_recv(r, reply, reply_len, rly_deadline(r), err, errlen, what))
		return -EIO;
	return 0;
}

/* A command answered by a u32 status. */
static int rly_cmd_status(struct rly *r, uint32_t cmd, const void *payload, size_t len,
			  char *err, size_t errlen, const char *what)
{
	uint8_t b[4];

	if (rly_cmd(r, cmd, payload, len, b, sizeof(b), err, errlen, what))
		return -EIO;
	if (rly_get32(b) != RLY_OK) {
		r->broken = true;
		return rr_fail(err, errlen, -EPROTO, "relayd: %s refused (status %u): see its log",
			       what, rly_get32(b));
	}
	return 0;
}

/* ---- connecting ------------------------------------------------------------------------ */

static void rly_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int rly_connect1(const char *host, uint16_t port, unsigned timeout_ms, char *err,
			size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC };
	struct addrinfo *res, *a;
	struct timeval tv = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000 };
	char portstr[8];
	int fd = -1, e = ECONNREFUSED, one = 1, ret;

	snprintf(portstr, sizeof(portstr), "%u", port);
	ret = getaddrinfo(host, portstr, &hints, &res);
	if (ret)
		return rr_fail(err, errlen, -EHOSTUNREACH, "relayd host '%s': %s", host,
			       gai_strerror(ret));
	for (a = res; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		e = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return rr_fail(err, errlen, -e, "relayd at %s port %u: %s%s", host, port,
			       strerror(e),
			       e == ECONNREFUSED ? " (is lttng-relayd running, on these ports?)"
						 : "");
	return fd;
}

static int rly_handshake(struct rly *r, const char *session, const char *hostname,
			 uint32_t live_us, char *err, size_t errlen)
{
	uint8_t ver[8], rep[12], sess[RLY_SESSION_LEN], *add;
	uint32_t major, minor, code;
	struct tm tm;
	time_t now = time(NULL);
	int ret;

	rly_put32(ver, RLY_MAJOR);
	rly_put32(ver + 4, RLY_MINOR);
	if (rly_cmd(r, RLY_VERSION, ver, sizeof(ver), ver, sizeof(ver), err, errlen, "version"))
		return -EIO;
	major = rly_get32(ver);
	minor = rly_get32(ver + 4);
	if (major != RLY_MAJOR || minor < RLY_MINOR)
		return rr_fail(err, errlen, -EPROTONOSUPPORT,
			       "relayd speaks protocol %u.%u; rip needs 2.10 or later (lttng-tools "
			       "2.10+)",
			       major, minor);
	r->minor = RLY_MINOR;

	memset(sess, 0, sizeof(sess));
	memcpy(sess, session, strlen(session));
	memcpy(sess + 255, hostname, strlen(hostname));
	rly_put32(sess + 255 + 64, live_us);
	rly_put32(sess + 255 + 64 + 4, 0);
	if (rly_cmd(r, RLY_CREATE_SESSION, sess, sizeof(sess), rep, 12, err, errlen,
		    "create session"))
		return -EIO;
	code = rly_get32(rep + 8);
	if (code != RLY_OK)
		return rr_fail(err, errlen, -EPROTO,
			       "relayd refused session '%s' of host '%s' (status %u): see its log",
			       session, hostname, code);
	r->session_id = rly_get64(rep);

	localtime_r(&now, &tm);
	snprintf(r->path, sizeof(r->path), "%s/%s-%04d%02d%02d-%02d%02d%02d", hostname, session,
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	if (r->reconnects) /* never the files of the session before */
		snprintf(r->path + strlen(r->path), sizeof(r->path) - strlen(r->path), "-r%u",
			 r->reconnects);
	add = calloc(1, RLY_STREAM_LEN);
	if (!add)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	memcpy(add, "metadata", 8);
	memcpy(add + RLY_CHANNEL_MAX, r->path, strlen(r->path));
	ret = rly_cmd(r, RLY_ADD_STREAM, add, RLY_STREAM_LEN, rep, 12, err, errlen, "add stream");
	free(add);
	if (ret)
		return -EIO;
	if (rly_get32(rep + 8) != RLY_OK)
		return rr_fail(err, errlen, -EPROTO,
			       "relayd refused the metadata stream (status %u): see its log",
			       rly_get32(rep + 8));
	r->meta = rly_get64(rep);
	return 0;
}

/* Connect both sockets (bounded retry) and set the session up. */
static int rly_connect(struct rly *r, unsigned attempts, unsigned backoff_ms, char *err,
		       size_t errlen)
{
	const struct rly_url *u = &r->url;
	int ret = -EINVAL;

	for (unsigned i = 0; i < (attempts ? attempts : 1); i++) {
		if (i) {
			rly_sleep_ms(backoff_ms);
			backoff_ms = backoff_ms * 2 > 5000 ? 5000 : backoff_ms * 2;
		}
		ret = rly_connect1(u->host, u->ctrl, r->timeout_ms, err, errlen);
		if (ret < 0) {
			if (ret == -EHOSTUNREACH)
				break; /* a name that does not resolve will not */
			continue;
		}
		r->ctrl = ret;
		ret = rly_connect1(u->host, u->data, r->timeout_ms, err, errlen);
		if (ret >= 0)
			break;
		close(r->ctrl);
		r->ctrl = -1;
	}
	if (ret < 0)
		return ret;
	r->data = ret;
	return rly_handshake(r, r->session, r->hostname, r->live_us, err, errlen);
}

int rly_open(const struct rly_url *u, const char *session, const char *hostname,
	     uint32_t live_us, unsigned attempts, unsigned backoff_ms, unsigned timeout_ms,
	     struct rly **out, char *err, size_t errlen)
{
	struct rly *r;
	int ret = -EINVAL;

	*out = NULL;
	if (!rly_name_ok(session, RLY_NAME_MAX))
		return rr_fail(err, errlen, -EINVAL,
			       "session name '%s': up to %d letters, digits, '-', '_', '.'",
			       session, RLY_NAME_MAX);
	if (!rly_name_ok(hostname, RLY_HOST_MAX))
		return rr_fail(err, errlen, -EINVAL,
			       "host name '%s': up to %d letters, digits, '-', '_', '.'", hostname,
			       RLY_HOST_MAX);
	r = calloc(1, sizeof(*r));
	if (!r)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	r->ctrl = r->data = -1;
	r->timeout_ms = timeout_ms;
	r->url = *u;
	snprintf(r->session, sizeof(r->session), "%s", session);
	snprintf(r->hostname, sizeof(r->hostname), "%s", hostname);
	r->live_us = live_us;
	ret = rly_connect(r, attempts, backoff_ms, err, errlen);
	if (ret)
		goto err_free;
	*out = r;
	return 0;

err_free:
	rly_free(r);
	return ret;
}

int rly_reconnect(struct rly *r, unsigned attempts, unsigned backoff_ms, char *err,
		  size_t errlen)
{
	if (r->data >= 0)
		close(r->data);
	if (r->ctrl >= 0)
		close(r->ctrl);
	r->ctrl = r->data = -1;
	/* a new session: every stream announced again, numbered from 0 */
	r->broken = r->closed = false;
	r->pending = r->ibatch = 0;
	for (uint32_t i = 0; i < r->ns; i++) {
		r->s[i].added = r->s[i].sent = false;
		r->s[i].next_net = 0;
		r->s[i].handle = 0;
	}
	r->reconnects++;
	if (rly_connect(r, attempts, backoff_ms, err, errlen)) {
		r->broken = true;
		return -EIO;
	}
	return 0;
}

/* ---- streaming --------------------------------------------------------------------------- */

int rly_metadata(struct rly *r, const void *text, size_t len, char *err, size_t errlen)
{
	static const char sig[] = "/* CTF 1.8 */\n";
	size_t pre = len >= 6 && !memcmp(text, sig, 6) ? 0 : sizeof(sig) - 1;
	uint8_t *buf;
	int ret;

	if (!len)
		return 0;
	/*
	 * babeltrace2's live reader wants every piece of plain-text metadata
	 * to start with the signature (a comment, so harmless in the file).
	 */
	buf = malloc(12 + pre + len);
	if (!buf)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	rly_put64(buf, r->meta);
	rly_put32(buf + 8, 0);
	memcpy(buf + 12, sig, pre);
	memcpy(buf + 12 + pre, text, len);
	ret = rly_cmd(r, RLY_SEND_METADATA, buf, 12 + pre + len, NULL, 0, err, errlen,
		      "metadata");
	free(buf);
	return ret ? -EIO : 0;
}

static struct rly_stream *rly_stream_get(struct rly *r, uint32_t stream, char *err,
					 size_t errlen)
{
	if (stream >= RLY_MAX_STREAMS) {
		rr_fail(err, errlen, -EINVAL, "stream %u out of range", stream);
		return NULL;
	}
	if (stream >= r->ns) {
		uint32_t n = stream + 1 > r->ns * 2 ? stream + 1 : r->ns * 2;
		struct rly_stream *s = realloc(r->s, n * sizeof(*s));

		if (!s) {
			rr_fail(err, errlen, -ENOMEM, "out of memory");
			return NULL;
		}
		memset(s + r->ns, 0, (n - r->ns) * sizeof(*s));
		r->s = s;
		r->ns = n;
	}
	return &r->s[stream];
}

static int rly_add(struct rly *r, uint32_t stream, struct rly_stream *s, char *err,
		   size_t errlen)
{
	uint8_t rep[12], *add = calloc(1, RLY_STREAM_LEN);
	int ret;

	if (!add)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	snprintf((char *)add, RLY_CHANNEL_MAX, "stream_%u", stream);
	memcpy(add + RLY_CHANNEL_MAX, r->path, strlen(r->path));
	ret = rly_cmd(r, RLY_ADD_STREAM, add, RLY_STREAM_LEN, rep, sizeof(rep), err, errlen,
		      "add stream");
	free(add);
	if (ret)
		return -EIO;
	if (rly_get32(rep + 8) != RLY_OK) {
		r->broken = true;
		return rr_fail(err, errlen, -EPROTO,
			       "relayd refused stream %u (status %u): see its log", stream,
			       rly_get32(rep + 8));
	}
	s->handle = rly_get64(rep);
	if (s->handle == r->meta || s->handle == UINT64_MAX) {
		r->broken = true;
		return rr_fail(err, errlen, -EPROTO, "relayd gave stream %u a bad handle", stream);
	}
	for (uint32_t i = 0; i < r->ns; i++)
		if (r->s[i].added && r->s[i].handle == s->handle) {
			r->broken = true;
			return rr_fail(err, errlen, -EPROTO,
				       "relayd gave streams %u and %u the same handle", i, stream);
		}
	s->added = true;
	/* Published to live readers together, before their first packet's index. */
	return rly_cmd_status(r, RLY_STREAMS_SENT, NULL, 0, err, errlen, "streams sent");
}

/* Queue the index of a packet (or a beacon) for rly_flush: SEND_INDEX, answered later. */
static int rly_index(struct rly *r, struct rly_stream *s, uint64_t net, const struct rip_packet *h,
		     uint64_t bits, char *err, size_t errlen)
{
	uint8_t *c = r->ibuf + (size_t)r->ibatch * (RLY_CTRL_HDR + RLY_INDEX_LEN), *b;

	rly_put64(c, 0);
	rly_put64(c + 8, RLY_INDEX_LEN);
	rly_put32(c + 16, RLY_SEND_INDEX);
	rly_put32(c + 20, 0);
	b = c + RLY_CTRL_HDR;
	rly_put64(b, s->handle);
	rly_put64(b + 8, net);
	rly_put64(b + 16, bits);
	rly_put64(b + 24, bits);
	rly_put64(b + 32, h->timestamp_begin);
	rly_put64(b + 40, h->timestamp_end);
	rly_put64(b + 48, h->events_discarded);
	rly_put64(b + 56, h->stream_id);
	rly_put64(b + 64, h->stream_instance_id);
	rly_put64(b + 72, h->packet_seq_num);
	if (++r->ibatch == RLY_BATCH)
		return rly_flush(r, err, errlen);
	return 0;
}

int rly_packet(struct rly *r, uint32_t stream, const struct rip_packet *hdr, const void *body,
	       size_t len, char *err, size_t errlen)
{
	struct rly_stream *s = rly_stream_get(r, stream, err, errlen);
	uint8_t dh[RLY_DATA_HDR];
	size_t total = sizeof(*hdr) + len;
	struct iovec iov[3] = { { dh, sizeof(dh) }, { (void *)hdr, sizeof(*hdr) },
				{ (void *)body, len } };

	if (!s)
		return -ENOMEM;
	if (r->closed)
		return rr_fail(err, errlen, -EINVAL, "relayd: the session is closed");
	if (total > UINT32_MAX || hdr->content_size != (uint64_t)total * 8)
		return rr_fail(err, errlen, -EINVAL, "bad packet for stream %u", stream);
	if (!s->added && rly_add(r, stream, s, err, errlen))
		return -EIO;
	rly_put64(dh, 0);
	rly_put64(dh + 8, s->handle);
	rly_put64(dh + 16, s->next_net);
	rly_put32(dh + 24, (uint32_t)total);
	rly_put32(dh + 28, 0);
	if (rly_sendv(r, r->data, iov, len ? 3 : 2, err, errlen, "sending a packet"))
		return -EIO;
	if (rly_index(r, s, s->next_net, hdr, (uint64_t)total * 8, err, errlen))
		return -EIO;
	s->next_net++;
	s->sent = true;
	s->last_end = hdr->timestamp_end;
	if (stream >= r->used)
		r->used = stream + 1;
	r->st.packets++;
	r->st.bytes += total;
	return 0;
}

int rly_beacon(struct rly *r, uint32_t stream, uint64_t ts, char *err, size_t errlen)
{
	struct rly_stream *s = stream < r->ns ? &r->s[stream] : NULL;
	struct rip_packet h;

	if (!s || !s->sent || r->closed || ts <= s->last_end)
		return 0;
	memset(&h, 0, sizeof(h));
	h.stream_instance_id = stream;
	h.timestamp_begin = ts;
	h.timestamp_end = ts;
	/* the number relayd pairs it with: the last packet's (a beacon is no packet) */
	if (rly_index(r, s, s->next_net - 1, &h, 0, err, errlen))
		return -EIO;
	s->last_end = ts;
	r->st.beacons++;
	return 0;
}

uint64_t rly_stream_end(const struct rly *r, uint32_t stream)
{
	return stream < r->ns ? r->s[stream].last_end : 0;
}

uint32_t rly_streams(const struct rly *r)
{
	return r->used;
}

int rly_close(struct rly *r, unsigned timeout_ms, unsigned linger_ms, char *err, size_t errlen)
{
	int64_t deadline = rip_now_ms() + timeout_ms;
	uint64_t end = 0;
	uint8_t b[16];

	if (r->closed)
		return 0;
	if (rly_flush(r, err, errlen) || rly_drain(r, true, err, errlen))
		return -EIO;
	/* Everything sent has arrived, data and index, before any stream closes. */
	for (uint32_t i = 0; i < r->ns; i++) {
		struct rly_stream *s = &r->s[i];

		if (!s->sent)
			continue;
		for (unsigned wait = 1;; wait = wait < 64 ? wait * 2 : 64) {
			uint8_t rep[4];

			rly_put64(b, s->handle);
			rly_put64(b + 8, s->next_net - 1);
			if (rly_cmd(r, RLY_DATA_PENDING, b, 16, rep, 4, err, errlen,
				    "data pending"))
				return -EIO;
			if (rly_get32(rep) == 0)
				break;
			if (rly_get32(rep) != 1) {
				r->broken = true;
				return rr_fail(err, errlen, -EPROTO,
					       "relayd does not know stream %u any more (answer %u)",
					       i, rly_get32(rep));
			}
			if (rip_now_ms() > deadline) {
				r->broken = true;
				return rr_fail(err, errlen, -ETIMEDOUT,
					       "relayd: stream %u not all received after %u ms", i,
					       timeout_ms);
			}
			rly_sleep_ms(wait);
		}
	}
	/*
	 * Every stream is over at the trace's end: a live reader need not wait
	 * for the ones that ended early to read the others' last packets.
	 */
	for (uint32_t i = 0; i < r->ns; i++)
		if (r->s[i].last_end > end)
			end = r->s[i].last_end;
	for (uint32_t i = 0; i < r->ns; i++)
		if (r->s[i].sent && rly_beacon(r, i, end, err, errlen))
			return -EIO;
	if (rly_flush(r, err, errlen) || rly_drain(r, true, err, errlen))
		return -EIO;
	if (linger_ms)
		rly_sleep_ms(linger_ms);
	for (uint32_t i = 0; i < r->ns; i++) {
		struct rly_stream *s = &r->s[i];

		if (!s->added)
			continue;
		rly_put64(b, s->handle);
		rly_put64(b + 8, s->sent ? s->next_net - 1 : UINT64_MAX);
		if (rly_cmd_status(r, RLY_CLOSE_STREAM, b, 16, err, errlen, "close stream"))
			return -EIO;
	}
	/* the metadata has no sequence numbers: nothing to wait for */
	rly_put64(b, r->meta);
	rly_put64(b + 8, UINT64_MAX);
	if (rly_cmd_status(r, RLY_CLOSE_STREAM, b, 16, err, errlen, "close metadata"))
		return -EIO;
	r->closed = true;
	return 0;
}

void rly_free(struct rly *r)
{
	if (!r)
		return;
	if (r->data >= 0)
		close(r->data);
	if (r->ctrl >= 0)
		close(r->ctrl);
	free(r->s);
	free(r);
}

const struct rly_stats *rly_stats(const struct rly *r)
{
	return &r->st;
}

const char *rly_path(const struct rly *r)
{
	return r->path;
}

bool rly_broken(const struct rly *r)
{
	return r->broken;
}
