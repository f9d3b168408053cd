/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz-chunk.c - libFuzzer harness: the input is one chunk file
 * of a packed trace (read/trace.h), read alone with no index beside it, as
 * a chunk handed on by --on-rotate is: its header, the tail that carries
 * the trace's index (read as .rip-index is), its records up to that tail,
 * and the blocks of their packets.  The directory holds that file alone;
 * it is read through every pass (fz_passes).  Then, when the input ends
 * with a tail whose index lies inside it, the chunk as it was before its
 * close (its records alone) is read beside that index as the directory's
 * .rip-index, as rip dump DIR/chunk-NNNNNN.rpk reads a chunk of a trace
 * still being recorded: the index of its directory, and records that run
 * to the file's end.  Seeds: the closed chunks of small traces of real
 * programs, later chunks of a rotated trace among them (they begin with
 * copied definitions), by tests/fuzz/seeds.sh.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "read/trace.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *dir, *path, *index;

	if (!dir && !(dir = strdup(fz_path(""))))
		abort();
	if (!path && !(path = strdup(fz_path("chunk-000000.rpk"))))
		abort();
	fz_clear(dir);
	if (fz_write(path, data, size))
		abort();
	fz_passes(path);
	if (size >= sizeof(struct trace_chunk_hdr) + sizeof(struct trace_chunk_tail) &&
	    !memcmp(data + size - sizeof(struct trace_chunk_tail), TRACE_CHUNK_TAIL_MAGIC, 8)) {
		struct trace_chunk_tail t;
		size_t body = size - sizeof(t);

		memcpy(&t, data + body, sizeof(t));
		if (t.index_off <= body && t.index_len <= body - t.index_off) {
			if (!index && !(index = strdup(fz_path(TRACE_INDEX))))
				abort();
			if (fz_write(index, data + t.index_off, (size_t)t.index_len) ||
			    fz_write(path, data, (size_t)t.index_off))
				abort();
			fz_passes(path);
		}
	}
	return 0;
}
