/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz-legacy.c - libFuzzer harness: the input is a raw file of
 * the original librip format (slots of a 64-byte name and 32 tagged
 * entries, no header), read as rip ps --legacy reads one: opened with
 * rr_open_legacy, its slots and (none) modules read, then the load address
 * of a position-independent --exe looked for from the slots' addresses and
 * their fit checked (read/legacy.c), with this very program as the
 * executable (it has a snap's lea of its own, fz_legacy_snap).  Seeds: the
 * files of tests/data/legacy_raw.py.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "read/legacy.h"
#include "read/ringfile.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile uint64_t fz_legacy_sink;

/* A site as the original's rip_snap leaves one, so that the search has one to find. */
__attribute__((noinline)) uint64_t fz_legacy_snap(void);
__attribute__((noinline)) uint64_t fz_legacy_snap(void)
{
	uint64_t ip;

	__asm__ volatile("leaq 0(%%rip), %0" : "=r"(ip));
	return ip;
}

/* The search for the load address over the slots' addresses, as rip ps --legacy does it. */
static uint64_t fz_legacy_base(const struct rr_slots *slots)
{
	static struct lg_exe exe;
	static int opened; /* 1: exe is open, -1: it cannot be */
	char err[RR_ERR_MAX];
	struct lg_guess g;
	struct lg_fit fit;
	uint64_t *addr, h = fz_legacy_snap();
	size_t n = 0, k = 0;

	if (!opened)
		opened = lg_exe_open("/proc/self/exe", &exe, err, sizeof(err)) ? -1 : 1;
	if (opened < 0)
		abort();
	for (size_t i = 0; i < slots->n; i++)
		n += slots->v[i].n;
	addr = malloc((n ? n : 1) * sizeof(*addr));
	if (!addr)
		abort();
	for (size_t i = 0; i < slots->n; i++)
		for (uint32_t j = 0; j < slots->v[i].n; j++)
			addr[k++] = slots->v[i].ip[j];
	if (!lg_infer(&exe, addr, n, &g, err, sizeof(err)))
		h += g.bias + g.fit.snaps;
	else
		h += strlen(err) + g.ncand;
	/* Any bias at all: the one the first address gives, page-aligned. */
	if (!lg_fit(&exe, n ? addr[0] & ~(uint64_t)(LG_PAGE - 1) : 0, addr, n, &fit))
		h += fit.snaps + fit.funcs + fit.n;
	free(addr);
	return h;
}

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
		h += fz_legacy_base(&slots);
		rr_slots_free(&slots);
	}
	if (!rr_read_modules(&f, &mods, &n, err, sizeof(err)))
		free(mods);
	h += (uint64_t)rr_ticks_to_ns(&f.hdr, h);
	rr_close(&f);
	fz_legacy_sink += h;
	return 0;
}
