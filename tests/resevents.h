/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/resevents.h - for the test programs that emit the memory events of
 * rip/resource.h themselves, through rip.h, instead of the preload library:
 * the types rip:bt, mem:alloc and mem:free, and backtraces made of the
 * program's own functions (their addresses plus one, as return addresses
 * are), so that the readers must name them.  One file of a program
 * includes it: the types register before main().
 */
#ifndef RIP_TESTS_RESEVENTS_H
#define RIP_TESTS_RESEVENTS_H

#include <stdint.h>

#include <rip.h>
#include <rip/resource.h>

RIP_EVENT_TYPE(ev_bt, "rip:bt", RIP_CAT_BT, RIP_FIELD(U32, "id"),
	       RIP_FIELD(HEX64_ARRAY, "frames"));
RIP_EVENT_TYPE(ev_alloc, "mem:alloc", RIP_CAT_MEM, RIP_FIELD(HEX64, "addr"),
	       RIP_FIELD(U64, "size"), RIP_FIELD(U32, "bt"), RIP_FIELD(U32, "kind"));
RIP_EVENT_TYPE(ev_free, "mem:free", RIP_CAT_MEM, RIP_FIELD(HEX64, "addr"), RIP_FIELD(U32, "bt"),
	       RIP_FIELD(U32, "kind"));

/* The functions of the backtraces: real ones, so that their addresses have names. */
#define NOINLINE static __attribute__((noinline, used))

/* Define backtrace id from n functions (at most 8), innermost first. */
static inline void define_bt(uint32_t id, int n, void (*const *fns)(void))
{
	uint64_t v[1] = { id }, frames[8];

	for (int i = 0; i < n && i < 8; i++)
		frames[i] = (uint64_t)(uintptr_t)fns[i] + 1;
	rip_event_array(&ev_bt, v, frames, (uint32_t)(n < 8 ? n : 8));
}

/* BT(id, innermost, ..., outermost): define backtrace id from these functions. */
#define BT(id, ...)                                                                                \
	do {                                                                                       \
		static void (*const f_[])(void) = { __VA_ARGS__ };                                 \
		define_bt(id, (int)(sizeof(f_) / sizeof(f_[0])), f_);                              \
	} while (0)

/* A malloc of size bytes at addr, from backtrace bt. */
static inline void alloc(uint64_t addr, uint64_t size, uint32_t bt)
{
	rip_event4(&ev_alloc, addr, size, bt, RIP_MEM_MALLOC);
}

#endif /* RIP_TESTS_RESEVENTS_H */
