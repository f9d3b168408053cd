/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz-legacy.c - libFuzzer harness: the input is a raw file of
 * the original librip format (slots of a 64-byte name and 32 tagged
 * entries, no header), read as rip ps --legacy reads one: opened with
 * rr_open_legacy, its slots and (none) modules read.  Seeds: the files of
 * tests/data/legacy_raw.py.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "read/ringfile.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile uint64_t fz_legacy_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *path;
	char err[RR_ERR_MAX];
	struct rip_module *mods;
	struct rr_slots slots;
	struct rr_file f;
	uint64_t h = 0;
	size_t n;

	if (!path && !(path = strdup(fz_path("input.raw"))))
		abort();
	if (fz_write(path, data, size))
		abort();
	if (rr_open_legacy(path, &f, err, sizeof(err)))
		return 0;
	if (!rr_read_slots(&f, &slots, err, sizeof(err))) {
		for (size_t i = 0; i < slots.n; i++) {
			h += strlen(slots.v[i].name) + slots.v[i].state + (uint64_t)slots.v[i].tid;
			for (uint32_t k = 0; k < slots.v[i].n; k++)
				h ^= slots.v[i].ip[k];
		}
		rr_slots_free(&slots);
	}
	if (!rr_read_modules(&f, &mods, &n, err, sizeof(err)))
		free(mods);
	h += (uint64_t)rr_ticks_to_ns(&f.hdr, h);
	rr_close(&f);
	fz_legacy_sink += h;
	return 0;
}
