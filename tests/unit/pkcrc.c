/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the checksum of packed blocks (read/pack.c pk_crc32, folded
 * by carry-less multiplication where the CPU has it) is zlib's crc32 for
 * every length from 0 to a few KiB and a long one, at every alignment, from
 * any crc before (a checksum continued, as pk_peek continues the header's
 * over the rest), and for bytes of all 0s and all 1s.
 */
#include <stdint.h>
#include <string.h>

#include <zlib.h>

#include "helpers.h"
#include "read/packfmt.h"

static uint8_t buf[200000];

int main(void)
{
	uint64_t r = 88172645463325252ull;

	for (size_t i = 0; i < sizeof(buf); i++) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		buf[i] = (uint8_t)r;
	}
	for (size_t n = 0; n < 4200; n++)
		for (size_t off = 0; off < 17; off += 5) {
			uint32_t c0 = (uint32_t)(n * 2654435761u);

			T_EQ(pk_crc32(c0, buf + off, n), (uint32_t)crc32(c0, buf + off, (uInt)n));
		}
	T_EQ(pk_crc32(0, buf, sizeof(buf)), (uint32_t)crc32(0, buf, sizeof(buf)));
	T_EQ(pk_crc32(pk_crc32(0, buf, 64), buf + 64, 1000),
	     (uint32_t)crc32(0, buf, 1064)); /* continued */
	memset(buf, 0, 4096);
	T_EQ(pk_crc32(0, buf, 4096), (uint32_t)crc32(0, buf, 4096));
	memset(buf, 0xff, 4096);
	T_EQ(pk_crc32(~0u, buf, 4096), (uint32_t)crc32(~0u, buf, 4096));
	return t_result();
}
