/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz-reply.c - libFuzzer harness: the input is what a server
 * on the network sends back to rip, fed by a fake server in this process (a
 * thread) over real TCP connections on the loopback, to the very code the
 * commands run:
 *
 *   byte 0 even: lttng-relayd (record/relayd.c).  Bytes 1-2 (little-endian)
 *	are the length of the answers on the first control connection, which
 *	follow; the rest answers a second one, after rly_reconnect.  The
 *	client plays a short rip run --relayd whose shape the rest of byte 0
 *	gives (1 to 4 streams, live or not, 1 to 36 packets: a batch of 32
 *	indexes and its answers, reconnect or not): rly_open, the metadata,
 *	the packets, beacons and flushes among them, rly_close; if a step
 *	fails and a reconnection was asked for, rly_reconnect and a shorter
 *	session again.  The data connection's bytes are read and dropped:
 *	relayd sends nothing there.
 *   byte 0 odd: a Pyroscope server's answer to rip push's POST (the rest of
 *	the input, tools/http.c's http_post).
 *
 * The server writes its answers as soon as a connection is accepted, then
 * shuts its side down: the client reads what it waits for or sees the
 * connection end, never a timeout.  Seeds: a relayd session's exact answers
 * and a few HTTP answers (tests/fuzz/seeds.sh).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rip/abi.h>

#include "record/relayd.h"
#include "read/ringfile.h"
#include "tools/http.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_CONNS 8

volatile uint64_t fz_reply_sink;

struct fz_srv {
	int lc, ld;	       /* listening: control (and HTTP), data */
	uint16_t pc, pd;       /* their ports */
	const uint8_t *ans[2]; /* the answers of the first and later control connections */
	size_t nans[2];
	int stop; /* eventfd: the client is done */
};

struct fz_conn {
	int fd;
	const uint8_t *out;
	size_t left;
};

static int fz_listen(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&a, &len))
		abort(); /* no loopback: the harness cannot run at all */
	*port = ntohs(a.sin_port);
	return fd;
}

/* Connections the client made but the server never took (it gave up first): closed. */
static void fz_drain(int l)
{
	int fd;

	while ((fd = accept4(l, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		close(fd);
}

/*
 * Take a connection that is to get len bytes of out.  Its close resets it,
 * so that the client's side never waits in TIME_WAIT; ours does when we shut
 * our side down first, and connect(2) reuses those ports on the loopback
 * (net.ipv4.tcp_tw_reuse 2, the default since Linux 4.20): a long run does
 * not use up the ports.
 */
static void fz_take(struct fz_conn *c, size_t *n, int l, const uint8_t *out, size_t len)
{
	struct linger now = { 1, 0 };
	int fd = accept4(l, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
	if (*n == FZ_CONNS) {
		close(fd);
		return;
	}
	c[*n] = (struct fz_conn){ fd, out, len };
	if (!len)
		shutdown(fd, SHUT_WR);
	(*n)++;
}

static void *fz_serve(void *arg)
{
	struct fz_srv *s = arg;
	struct fz_conn c[FZ_CONNS];
	size_t n = 0, nctrl = 0;
	uint8_t buf[65536];

	for (;;) {
		struct pollfd p[3 + FZ_CONNS];

		p[0] = (struct pollfd){ .fd = s->stop, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = s->lc, .events = POLLIN };
		p[2] = (struct pollfd){ .fd = s->ld, .events = POLLIN };
		for (size_t i = 0; i < n; i++)
			p[3 + i] = (struct pollfd){ .fd = c[i].fd,
						    .events = POLLIN | (c[i].left ? POLLOUT : 0) };
		if (poll(p, 3 + n, -1) < 0) {
			if (errno == EINTR)
				continue;
			abort();
		}
		if (p[0].revents)
			break;
		if (p[1].revents) {
			size_t k = nctrl ? 1 : 0;

			fz_take(c, &n, s->lc, s->ans[k], s->nans[k]);
			nctrl++;
		}
		if (p[2].revents)
			fz_take(c, &n, s->ld, NULL, 0);
		for (size_t i = 0; i < n; i++) {
			short ev = p[3 + i].revents;
			ssize_t k;

			if (ev & POLLOUT) {
				k = send(c[i].fd, c[i].out, c[i].left, MSG_NOSIGNAL);
				if (k > 0) {
					c[i].out += k;
					c[i].left -= (size_t)k;
					if (!c[i].left)
						shutdown(c[i].fd, SHUT_WR);
				} else if (k < 0 && errno != EAGAIN) {
					c[i].left = 0;
				}
			}
			if (ev & (POLLIN | POLLHUP | POLLERR)) {
				k = recv(c[i].fd, buf, sizeof(buf), 0);
				if (k == 0 || (k < 0 && errno != EAGAIN)) {
					/* the client is gone: this connection is over */
					close(c[i].fd);
					c[i].fd = -1;
				}
			}
		}
		for (size_t i = 0; i < n;)
			if (c[i].fd < 0)
				c[i] = c[--n];
			else
				i++;
	}
	for (size_t i = 0; i < n; i++)
		close(c[i].fd);
	return NULL;
}

/* The client of rip run --relayd, as far as the answers let it go. */
static void fz_relayd(const struct fz_srv *s, uint8_t opts)
{
	static const char tsdl[] = "/* CTF 1.8 */\ntrace { major = 1; minor = 8; };\n";
	unsigned streams = 1 + (opts & 3), packets = 1 + (opts >> 4 & 7) * 5;
	bool live = opts & 4, reconnect = opts & 8;
	uint8_t body[64];
	struct rip_packet h;
	char url[64], err[RR_ERR_MAX];
	struct rly_url u;
	struct rly *r;
	int ret;

	err[0] = 0;
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%u:%u", s->pc, s->pd);
	if (rly_url_parse(url, &u, err, sizeof(err)))
		abort();
	if (rly_open(&u, "fz", "fzhost", live ? 1000 : 0, 1, 0, 2000, &r, err, sizeof(err)))
		return;
	memset(body, 0xab, sizeof(body));
	for (int round = 0; round < 2; round++) {
		ret = rly_metadata(r, tsdl, sizeof(tsdl) - 1, err, sizeof(err));
		for (unsigned i = 0; !ret && i < packets; i++) {
			memset(&h, 0, sizeof(h));
			h.magic = RIP_CTF_MAGIC;
			h.stream_instance_id = i % streams;
			h.timestamp_begin = 1000 + i * 10;
			h.timestamp_end = h.timestamp_begin + 5;
			h.content_size = (sizeof(h) + sizeof(body)) * 8;
			h.packet_size = h.content_size;
			h.packet_seq_num = i / streams;
			ret = rly_packet(r, i % streams, &h, body, sizeof(body), err, sizeof(err));
			if (!ret && i % 7 == 3)
				ret = rly_beacon(r, i % streams, h.timestamp_end + 100, err,
						 sizeof(err));
			if (!ret && i % 5 == 4)
				ret = rly_flush(r, err, sizeof(err));
		}
		if (!ret)
			ret = rly_close(r, 0, 0, err, sizeof(err));
		(void)rly_stats(r);
		(void)rly_streams(r);
		(void)rly_stream_end(r, 0);
		fz_reply_sink += strlen(rly_path(r)) + strlen(err);
		if (!ret || !reconnect || !rly_broken(r) || round)
			break;
		if (rly_reconnect(r, 1, 0, err, sizeof(err)))
			break;
		packets = packets > 3 ? 3 : packets;
	}
	rly_free(r);
}

/* The client of rip push: one POST, the answer's status. */
static void fz_http(const struct fz_srv *s)
{
	static const char head[] = "POST /ingest?name=fz&format=pprof HTTP/1.1\r\n"
				   "Host: 127.0.0.1\r\nContent-Length: 4\r\n"
				   "Connection: close\r\n\r\n";
	char port[8], err[RR_ERR_MAX];
	int status;

	snprintf(port, sizeof(port), "%u", s->pc);
	err[0] = 0;
	http_post("127.0.0.1", port, false, (const uint8_t *)head, sizeof(head) - 1,
		  (const uint8_t *)"body", 4, 5, &status, err, sizeof(err));
	/* the message is whole, NUL-terminated and read to its end */
	fz_reply_sink += strlen(err) + (unsigned)status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz_srv s = { .lc = -1 };
	pthread_t t;
	uint64_t one = 1;

	if (s.lc < 0) {
		s.lc = fz_listen(&s.pc);
		s.ld = fz_listen(&s.pd);
	}
	if (!size)
		return 0;
	s.stop = eventfd(0, EFD_CLOEXEC);
	if (s.stop < 0)
		abort();
	if (data[0] & 1) {
		s.ans[0] = s.ans[1] = data + 1;
		s.nans[0] = s.nans[1] = size - 1;
	} else {
		size_t first = size >= 3 ? (size_t)(data[1] | data[2] << 8) : 0;

		if (first > size - (size >= 3 ? 3 : size))
			first = size - (size >= 3 ? 3 : size);
		s.ans[0] = data + (size >= 3 ? 3 : size);
		s.nans[0] = first;
		s.ans[1] = s.ans[0] + first;
		s.nans[1] = size - (size_t)(s.ans[1] - data);
	}
	if (pthread_create(&t, NULL, fz_serve, &s))
		abort();
	if (data[0] & 1)
		fz_http(&s);
	else
		fz_relayd(&s, data[0] >> 1);
	if (write(s.stop, &one, sizeof(one)) != sizeof(one))
		abort();
	pthread_join(t, NULL);
	close(s.stop);
	fz_drain(s.lc);
	fz_drain(s.ld);
	return 0;
}
