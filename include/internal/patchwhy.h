/* SPDX-License-Identifier: Apache-2.0 */
/*
 * internal/patchwhy.h - why no function could be patched, from the error
 * __rip_fn_patch gave (a positive errno), in the words `rip enable func`
 * and the preload library's RIP_FUNCTIONS (rip run --functions=GLOB) both
 * print, so that the two say the same of the same binary.  Not installed.
 */
#ifndef RIP_INTERNAL_PATCHWHY_H
#define RIP_INTERNAL_PATCHWHY_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

/*
 * err said into buf: strerror's words, and what they mean for patching; or
 * that alone where strerror's would mislead (EILSEQ: "Invalid or
 * incomplete multibyte or wide character").  buf.
 */
static inline const char *rip_patch_why(int err, char *buf, size_t len)
{
	switch (err) {
	case EPERM:
		snprintf(buf, len, "%s (a user shadow stack is on: no return trampoline)",
			 strerror(err));
		break;
	case ERANGE:
		snprintf(buf, len,
			 "%s (no address space for the calls' pads: gcc's nops in an executable "
			 "that is not position-independent?)",
			 strerror(err));
		break;
	case EILSEQ:
		snprintf(buf, len,
			 "the nops at their entries are not 5 bytes librip can replace (build with "
			 "-fpatchable-function-entry=5, or gcc's =N,M with N - M >= 5)");
		break;
	default:
		snprintf(buf, len, "%s", strerror(err));
	}
	return buf;
}

#endif
