/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz-unpack.c - libFuzzer harness: the input is a compressed
 * copy of a ring file (gzip or zstd: read/unpack.c), or anything else,
 * written to a file and read as rip ps and rip ls read a ring file
 * (fz_ring: rr_open unpacks it first, then every reader of fuzz-ring), and
 * as rip ps --legacy opens a raw file of the original format
 * (rr_open_legacy, unpacked under its own bound).  RIP_UNPACK_MAX is 64 MiB
 * for the ring file (every bound of read/unpack.c, the header's checks, the
 * ratio past 32 MiB of data, the ceiling, is reached by inputs of a few
 * kilobytes) and 4 MiB for the legacy file (its bound differs, not the
 * unpacking): no run spends long unpacking.  Seeds: ring files and a legacy
 * file compressed both ways, and small bombs (tests/fuzz/seeds.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "read/ringfile.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *path;
	char err[RR_ERR_MAX];
	struct rr_file f;

	if (!path && !(path = strdup(fz_path("input.ring"))))
		abort();
	if (fz_write(path, data, size))
		abort(); /* no room to write the input: not a finding of the readers */
	if (setenv(RR_UNPACK_ENV, "64m", 1))
		abort();
	fz_ring(path, NULL, NULL);
	if (rr_packing_of(data, size) == RR_PACK_NONE)
		return 0;
	if (setenv(RR_UNPACK_ENV, "4m", 1))
		abort();
	if (!rr_open_legacy(path, &f, err, sizeof(err)))
		rr_close(&f);
	return 0;
}
