/* SPDX-License-Identifier: Apache-2.0 */
/*
 * librip.h - source compatibility with the original librip API.
 *
 * A program written for the original header compiles unchanged against this
 * one and links with -lrip; the file it creates is an ordinary ring file
 * that rip ps reads.  As before, the program defines the storage:
 *
 *	thread_local pid_t rip_tid;
 *	thread_local uint8_t rip_idx;
 *	thread_local uint8_t rip_ctr;
 *	struct rip_ring *rip_ring;
 *
 * rip_init() points the calling thread's snaps at the slot of id (rip_tid
 * receives the slot's index, rip_ring the address of the mapped file); a
 * thread that snaps without rip_init() gets a slot of its own, named after
 * the thread, as with rip.h.  rip_init() with the id of a coroutine that already has a slot
 * switches the thread to that slot, as the original did with saved counters.
 * Do not include both this header and rip.h in one file.
 */
#ifndef LIBRIP_H
#define LIBRIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <rip/abi.h>
#include <rip/snap.h>
#ifndef __cplusplus
#include <threads.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct rip_ring;

extern thread_local pid_t rip_tid;
extern thread_local uint8_t rip_idx;
extern thread_local uint8_t rip_ctr;
extern struct rip_ring *rip_ring;

__attribute__((visibility("default"))) struct rip_ring *__rip_legacy_create(const char *file,
									    uint32_t max_procs);
__attribute__((visibility("default"))) int32_t
__rip_legacy_init(uint32_t id, const char *name, size_t namelen, uint8_t idx, uint8_t ctr);
__attribute__((visibility("default"))) void __rip_legacy_exit(int32_t slot);

/* Create the ring file at file for ids below max_procs (0: the system's pid_max). */
static inline bool rip_create_ring(const char *file, uint32_t max_procs)
{
	rip_ring = __rip_legacy_create(file, max_procs);
	return rip_ring != NULL;
}

/* Start (or, for a known id, resume) concurrent process id on this thread. */
static inline void rip_init(uint32_t id, const char *name, size_t namelen, uint8_t idx, uint8_t ctr)
{
	rip_tid = __rip_legacy_init(id, name, namelen, idx, ctr);
	rip_idx = idx;
	rip_ctr = ctr;
}

/* Mark the calling thread's concurrent process as exited. */
static inline void rip_exit(void)
{
	__rip_legacy_exit(rip_tid);
	rip_tid = 0;
}

/* Record the instruction pointer of the caller (the same code as rip.h's). */
#define rip_snap() __rip_snap(RIP_HERE())

#ifdef __cplusplus
}
#endif

#endif /* LIBRIP_H */
