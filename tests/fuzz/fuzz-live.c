/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz-live.c - libFuzzer harness: a ring file that changes while
 * it is read, as a live process (or one that truncates its file) changes it
 * under rip.  The input is a ring file (its first hdr.file_size bytes, or
 * all of it when that does not fit) followed by changes, 16 bytes each:
 *
 *	u32 offset, u8 op, u8 length (1..8), u16 unused, u64 value
 *
 *	op 0: write the low length bytes of value at offset (modulo the size)
 *	op 1: xor them in
 *	op 2: truncate the file to offset (modulo the size): the reader's
 *	      mapping past the end then raises SIGBUS, which it must survive
 *	op 3: give the file its size back (what was cut comes back as zeros)
 *
 * The reads of fz_ring (header, slots, modules, types, each event ring's
 * copy, the consumer) run one after the other; before each the next change
 * is made through a descriptor of our own, which the reader's shared mapping
 * sees at once.  What is left is made before the passes (fz_passes), each of
 * which opens the file again, at its full size.  Deterministic: a finding
 * replays.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rip/abi.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct live {
	int fd;
	uint64_t size; /* of the ring file as written */
	const uint8_t *ops;
	size_t nops, next;
};

static void live_step(void *arg)
{
	struct live *l = arg;
	const uint8_t *op;
	uint64_t off, v;
	uint8_t len, buf[8];

	if (l->next >= l->nops || !l->size)
		return;
	op = l->ops + l->next++ * 16;
	off = fz_u32(op) % l->size;
	len = op[5] % 8 + 1;
	memcpy(&v, op + 8, 8);
	if (len > l->size - off)
		len = (uint8_t)(l->size - off);
	switch (op[4] % 4) {
	case 0:
		memcpy(buf, &v, 8);
		if (pwrite(l->fd, buf, len, (off_t)off) < 0)
			abort();
		break;
	case 1:
		if (pread(l->fd, buf, len, (off_t)off) == len) {
			for (unsigned i = 0; i < len; i++)
				buf[i] ^= (uint8_t)(v >> (8 * i));
			if (pwrite(l->fd, buf, len, (off_t)off) < 0)
				abort();
		}
		break;
	case 2:
		if (ftruncate(l->fd, (off_t)off))
			abort();
		break;
	case 3:
		if (ftruncate(l->fd, (off_t)l->size))
			abort();
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *path;
	struct live l = { .fd = -1 };
	uint64_t fsize = 0;

	if (!path && !(path = strdup(fz_path("live.ring"))))
		abort();
	if (size >= 40)
		memcpy(&fsize, data + 32, 8); /* struct rip_file_hdr's file_size */
	l.size = fsize >= RIP_HDR_SIZE && fsize <= size ? fsize : size;
	l.ops = data + l.size;
	l.nops = (size - l.size) / 16;
	if (fz_write(path, data, l.size))
		abort();
	l.fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (l.fd < 0)
		abort();
	fz_ring(path, live_step, &l);
	while (l.next < l.nops)
		live_step(&l);
	/* the passes open the file again: at its size, with the changes in it */
	if (ftruncate(l.fd, (off_t)l.size))
		abort();
	fz_passes(path);
	close(l.fd);
	return 0;
}
