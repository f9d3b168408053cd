/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz-pack.c - libFuzzer harness: the input is one packed block
 * (read/pack.h) of packets written with the types of tests/packtypes.h.  Its
 * checksum is set right before decoding, so that mutations reach the
 * decoder's columns, lists and packets rather than stop at the checksum;
 * what decodes is then read as every reader reads packets (ev_decode).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../packtypes.h"
#include "read/pack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ev_types types;
	static int ready;
	struct pk_block b = { 0 };
	struct pk_hdr h;
	uint8_t *copy;
	char err[256];

	if (!ready) {
		if (pt_types(&types))
			abort();
		ready = 1;
	}
	copy = malloc(size ? size : 1);
	if (!copy)
		abort();
	memcpy(copy, data, size);
	if (size >= sizeof(h)) {
		uint32_t crc;

		memcpy(&h, copy, sizeof(h));
		h.crc = 0;
		memcpy(copy, &h, sizeof(h));
		crc = (uint32_t)crc32(0, copy, (uInt)size);
		h.crc = crc;
		memcpy(copy, &h, sizeof(h));
	}
	if (!pk_decode(NULL, &types, copy, size, &b, err, sizeof(err))) {
		for (uint32_t i = 0; i < b.npackets; i++) {
			size_t end = i + 1 < b.npackets ? b.off[i + 1] : b.len;
			struct rip_packet ph;

			if (end - b.off[i] < sizeof(ph))
				continue;
			memcpy(&ph, b.data + b.off[i], sizeof(ph));
			ev_decode(&types, b.data + b.off[i], end - b.off[i], ph.timestamp_begin, NULL,
				  NULL, err, sizeof(err));
		}
	}
	pk_block_free(&b);
	free(copy);
	return 0;
}
