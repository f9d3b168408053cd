/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz-ring.c - libFuzzer harness: the input is a ring file
 * (rip/abi.h).  It is written to a file of the harness's own and read as rip
 * ps, snapshot and record read one (fz_ring), then as a source of events
 * through every pass (fz_passes).  Seeds: ring files of real programs
 * (tests/fuzz/seeds.sh).  The header's file_size is made the input's size
 * unless byte FZ_EXACT_SIZE is nonzero.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rip/abi.h>

#include "fuzz.h"

#define FZ_EXACT_SIZE 400 /* a byte of struct rip_file_hdr's pad1 */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *path;

	if (!path && !(path = strdup(fz_path("input.ring"))))
		abort();
	if (size >= RIP_HDR_SIZE && !data[FZ_EXACT_SIZE]) {
		/*
		 * Most mutations insert or erase bytes: the header's file_size is
		 * made the input's so that these get past the size check.  A
		 * nonzero byte FZ_EXACT_SIZE (in the header's padding) keeps the
		 * input as it is, for that check itself.
		 */
		uint8_t *copy = malloc(size);
		uint64_t n = size;

		if (!copy)
			abort();
		memcpy(copy, data, size);
		memcpy(copy + 32, &n, 8); /* struct rip_file_hdr's file_size */
		if (fz_write(path, copy, size))
			abort();
		free(copy);
	} else if (fz_write(path, data, size)) {
		abort(); /* no room to write the input: not a finding of the readers */
	}
	fz_ring(path, NULL, NULL);
	fz_passes(path);
	return 0;
}
