/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz-ring.c - libFuzzer harness: the input is a ring file
 * (rip/abi.h).  It is written to a file of the harness's own and read as rip
 * ps, snapshot and record read one (fz_ring), then as a source of events
 * through every pass (fz_passes).  Seeds: ring files of real programs
 * (tests/fuzz/seeds.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *path;

	if (!path && !(path = strdup(fz_path("input.ring"))))
		abort();
	if (fz_write(path, data, size))
		abort(); /* no room to write the input: not a finding of the readers */
	fz_ring(path, NULL, NULL);
	fz_passes(path);
	return 0;
}
