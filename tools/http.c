// SPDX-License-Identifier: Apache-2.0
/*
 * tools/http.c - the smallest HTTP/1.1 client that rip push needs (one POST
 * on one TCP connection, IPv4 or IPv6 through getaddrinfo, Connection:
 * close), in a file of its own so that the fuzz harness of the answers a
 * server sends (tests/fuzz/fuzz-reply.c) calls the very code rip push runs.
 *
 * The server is a peer on the network: its answer is read into a bounded
 * buffer (64 KiB: the status line and the start of the body are all we
 * use), NUL-terminated, and only the status code and the first line of the
 * body, cut and with control characters blanked, reach a message.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <internal/deadline.h>

#include "tools/http.h"

struct http_server {
	const char *host, *port;
	bool v6;
};

/* Connect to u within timeout seconds: the socket, or -1 with why in err. */
static int http_connect(const struct http_server *u, int timeout, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct timeval tv = { .tv_sec = timeout };
	struct addrinfo *ai, *a;
	int fd = -1, r, last = 0;

	r = getaddrinfo(u->host, u->port, &hints, &ai);
	if (r) {
		snprintf(err, errlen, "cannot resolve %s: %s", u->host,
			 r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
		return -1;
	}
	for (a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0) {
			last = errno;
			continue;
		}
		/* connect(2) on Linux gives up after SO_SNDTIMEO too */
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (!connect(fd, a->ai_addr, a->ai_addrlen))
			break;
		last = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		snprintf(err, errlen, "cannot connect to %s%s%s:%s: %s%s", u->v6 ? "[" : "",
			 u->host, u->v6 ? "]" : "", u->port,
			 last == EINPROGRESS || last == EAGAIN ? "timed out" : strerror(last),
			 last == ECONNREFUSED ? " (is Pyroscope listening there?)" : "");
	return fd;
}

static int http_send_all(int fd, const uint8_t *p, size_t n, int64_t deadline)
{
	while (n) {
		ssize_t w;
		int r = rip_wait_until(fd, POLLOUT, deadline);

		if (r)
			return r;
		w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Read the answer: until the server closes, or the head and Content-Length
 * bytes are in, or 64 KiB (the rest is of no use to us), or the deadline
 * (rip_now_ms) passes.  Its length, or -errno.
 */
static ssize_t http_recv(int fd, char *buf, size_t cap, int64_t deadline)
{
	size_t n = 0;

	while (n + 1 < cap) {
		int w = rip_wait_until(fd, POLLIN, deadline);
		ssize_t r = w ? -1 : recv(fd, buf + n, cap - 1 - n, MSG_DONTWAIT);
		char *head;

		if (w)
			errno = -w;
		if (r < 0 && !w && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		/* out of time before the status line was in: no answer */
		if (r < 0 && w == -EAGAIN && !memchr(buf, '\n', n))
			return -EAGAIN;
		if (r < 0)
			return n ? (ssize_t)n : -errno;
		if (!r)
			break;
		n += (size_t)r;
		buf[n] = 0;
		head = strstr(buf, "\r\n\r\n");
		if (head) {
			const char *cl = strcasestr(buf, "\r\ncontent-length:");

			if (cl && cl < head &&
			    (size_t)(head + 4 - buf) + strtoull(cl + 17, NULL, 10) <= n)
				break;
		}
	}
	buf[n] = 0;
	return (ssize_t)n;
}

/*
 * The line at p (to its CR or LF) into out, cut to fit and with control
 * characters blanked: what the server sent reaches the user's terminal
 * as text, never as its commands.
 */
static void http_line(const char *p, char *out, size_t len)
{
	size_t n = strcspn(p, "\r\n");

	if (n >= len)
		n = len - 1;
	memcpy(out, p, n);
	out[n] = 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)out[i] < ' ' || out[i] == 0x7f)
			out[i] = ' ';
}

/* The body of an answer, its first line, cut to fit a message. */
static void http_body_line(const char *resp, char *out, size_t len)
{
	const char *b = strstr(resp, "\r\n\r\n");

	out[0] = 0;
	if (b)
		http_line(b + 4, out, len);
}

int http_post(const char *host, const char *port, bool v6, const uint8_t *head, size_t hlen,
	      const uint8_t *body, size_t blen, int timeout, int *status, char *err, size_t errlen)
{
	static char resp[1 << 16];
	const struct http_server srv = { host, port, v6 }, *u = &srv;
	char line[200], why[81];
	int64_t deadline;
	ssize_t n;
	int fd, ret, code = 0;

	*status = 0;
	fd = http_connect(u, timeout, err, errlen);
	if (fd < 0)
		return -1;
	/* each step within timeout seconds in all, however the server trickles */
	deadline = rip_now_ms() + (int64_t)timeout * 1000;
	ret = http_send_all(fd, head, hlen, deadline);
	if (!ret)
		ret = http_send_all(fd, body, blen, deadline);
	/* A server that refuses early may close before the body is in: read its answer anyway. */
	n = http_recv(fd, resp, sizeof(resp), rip_now_ms() + (int64_t)timeout * 1000);
	close(fd);
	if (n > 0 && sscanf(resp, "HTTP/1.%*1[01] %3d", &code) != 1)
		code = 0;
	*status = code;
	if (code >= 200 && code < 300)
		return 0;
	if (code) {
		http_line(resp + 9, why, sizeof(why)); /* after "HTTP/1.x " */
		http_body_line(resp, line, sizeof(line));
		snprintf(err, errlen, "the server answered %s%s%s", why, line[0] ? ": " : "", line);
	} else if (ret) {
		snprintf(err, errlen, "sending to %s:%s failed: %s", u->host, u->port,
			 ret == -EAGAIN ? "timed out" : strerror(-ret));
	} else if (n < 0) {
		snprintf(err, errlen, "no answer from %s:%s: %s", u->host, u->port,
			 n == -EAGAIN ? "timed out" : strerror((int)-n));
	} else {
		snprintf(err, errlen, "%s from %s:%s", n ? "not an HTTP answer" :
			 "the connection was closed without an answer", u->host, u->port);
	}
	return -1;
}
