/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/data/orig/librip.h - a stand-in for the ORIGINAL librip header
 * (Fastly, 2014), for the tests that need a raw file written by a running
 * program (integ/legacy-pie.sh).  It writes the format doc/format.md
 * describes under "The legacy raw format", as the original did: the whole
 * API inline, a sparse file of max_procs 320-byte records mapped shared,
 * record id holding a 64-byte name and 32 entries, each snap storing
 * counter << 56 | the address that `lea 0(%rip)` gives (the instruction
 * after the lea), an all-ones entry at rip_exit().  No header, no load
 * address, no publication protocol.  A program built with -Itests/data/orig
 * gets this header for <librip.h> instead of include/librip.h.
 */
#ifndef LIBRIP_ORIG_H
#define LIBRIP_ORIG_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef thread_local
#define thread_local _Thread_local
#endif

struct rip_ring {
	char name[64];
	uintptr_t rip[32];
};

extern thread_local pid_t rip_tid;
extern thread_local uint8_t rip_idx;
extern thread_local uint8_t rip_ctr;
extern struct rip_ring *rip_ring;

static inline bool rip_create_ring(const char *file, uint32_t max_procs)
{
	uint64_t n = max_procs;
	char buf[32] = { 0 };
	int fd;

	if (!n) {
		fd = open("/proc/sys/kernel/pid_max", O_RDONLY);
		if (fd < 0)
			return false;
		if (read(fd, buf, sizeof(buf) - 1) <= 0) {
			close(fd);
			return false;
		}
		close(fd);
		n = strtoull(buf, NULL, 10);
		if (!n)
			return false;
	}
	fd = open(file, O_RDWR | O_CREAT, 0644);
	if (fd < 0)
		return false;
	if (ftruncate(fd, (off_t)(n * sizeof(*rip_ring)))) {
		close(fd);
		return false;
	}
	rip_ring = mmap(NULL, n * sizeof(*rip_ring), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return rip_ring != MAP_FAILED;
}

static inline __attribute__((always_inline)) void rip_init(pid_t id, const char *name,
							   size_t namelen, uint8_t idx, uint8_t ctr)
{
	if (!id)
		id = (pid_t)syscall(SYS_gettid);
	memset(&rip_ring[id], 0, sizeof(rip_ring[id]));
	if (name) {
		size_t len = sizeof(rip_ring[id].name) - 1;

		if (namelen < len)
			len = namelen;
		memcpy(rip_ring[id].name, name, len);
		rip_ring[id].name[len] = 0;
	}
	rip_tid = id;
	rip_idx = idx;
	rip_ctr = ctr;
}

static inline __attribute__((always_inline)) void rip_exit(void)
{
	rip_ring[rip_tid].rip[rip_idx++ & 31] = ~(uintptr_t)0;
}

static inline __attribute__((always_inline)) uintptr_t rip_snap(void)
{
	uintptr_t ip;

	__asm__ __volatile__("leaq 0(%%rip), %0" : "=q"(ip));
	rip_ring[rip_tid].rip[rip_idx++ & 31] = ((uintptr_t)rip_ctr++ << 56) | ip;
	return ip;
}

#endif /* LIBRIP_ORIG_H */
