/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/http.h - rip push's HTTP/1.1 client (tools/http.c): one POST, its
 * answer's status.
 */
#ifndef RIP_TOOLS_HTTP_H
#define RIP_TOOLS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * POST the request head (its lines and the blank line) and body to host
 * (an IPv6 address without its brackets when v6) at port, giving up after
 * timeout seconds at each step.  0 when the server answered 2xx (its
 * status in *status), else -1 with why in err (*status: the code of a
 * non-2xx answer, 0 with none).
 */
int http_post(const char *host, const char *port, bool v6, const uint8_t *head, size_t hlen,
	      const uint8_t *body, size_t blen, int timeout, int *status, char *err, size_t errlen);

#endif /* RIP_TOOLS_HTTP_H */
