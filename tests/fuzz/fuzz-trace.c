/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz-trace.c - libFuzzer harness: the input is a whole trace
 * directory (read/trace.h), packed as a list of files:
 *
 *	u8 id, u32 length (little-endian), that many bytes   ... repeated
 *
 * id 0 is .rip-index, id N (1..127) is stream_<N-1>, id N (128..254) is the
 * chunk file chunk-<N-128> of a packed trace (chunk-000000.rpk ..
 * chunk-000126.rpk: a rotated trace keeps its later ones), 255 is the TSDL
 * metadata (the readers parse its env block of the index when there is no
 * .rip-index: relayd's copies).  A short last file takes what is left.  The directory is read through every pass
 * (fz_passes).  Seeds: traces of real programs (CTF streams, packed chunks,
 * rotated ones with their first chunks dropped), packed by tests/fuzz/seeds.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *dir;
	char name[32];
	size_t off = 0;

	if (!dir && !(dir = strdup(fz_path(""))))
		abort();
	fz_clear(dir);
	while (size - off >= 5) {
		unsigned id = data[off];
		size_t len = fz_u32(data + off + 1);

		off += 5;
		if (len > size - off)
			len = size - off;
		if (id == 0)
			snprintf(name, sizeof(name), ".rip-index");
		else if (id == 255)
			snprintf(name, sizeof(name), "metadata");
		else if (id >= 128)
			snprintf(name, sizeof(name), "chunk-%06u.rpk", id - 128);
		else
			snprintf(name, sizeof(name), "stream_%u", id - 1);
		if (fz_write(fz_path(name), data + off, len))
			abort();
		off += len;
	}
	fz_passes(dir);
	return 0;
}
