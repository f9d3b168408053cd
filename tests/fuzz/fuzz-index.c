/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz-index.c - libFuzzer harness: the input is a trace's
 * .rip-index (read/trace.h), in a trace directory of its own with no stream
 * files (rings that never wrote a packet).  The trace is read through every
 * pass (fz_passes): the index's header, clock, event types, categories,
 * thread and coroutine names and module map are all used.  fuzz-trace
 * mutates the index and the streams together.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *dir, *index;

	if (!dir) {
		dir = strdup(fz_path("")); /* the harness's directory is the trace */
		index = strdup(fz_path(".rip-index"));
		if (!dir || !index)
			abort();
	}
	if (fz_write(index, data, size))
		abort();
	fz_passes(dir);
	return 0;
}
