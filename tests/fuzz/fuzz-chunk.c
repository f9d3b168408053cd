/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz-chunk.c - libFuzzer harness: the input is one chunk file
 * of a packed trace (read/trace.h), read alone with no index beside it, as
 * a chunk handed on by --on-rotate is: its header, the tail that carries
 * the trace's index (read as .rip-index is), its records up to that tail,
 * and the blocks of their packets.  The directory holds that file alone;
 * it is read through every pass (fz_passes).  Seeds: the closed chunks of
 * small traces of real programs, by tests/fuzz/seeds.sh.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *dir, *path;

	if (!dir && !(dir = strdup(fz_path(""))))
		abort();
	if (!path && !(path = strdup(fz_path("chunk-000000.rpk"))))
		abort();
	fz_clear(dir);
	if (fz_write(path, data, size))
		abort();
	fz_passes(path);
	return 0;
}
