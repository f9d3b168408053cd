/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rip.h - the librip API: instruction-pointer snapshots of threads and
 * coroutines into a shared-memory ring file that outlives the process.
 *
 * The fast paths (rip_snap, the coroutine switches, the clock) are static
 * inline and touch only the per-thread block __rip_self and the slot it
 * points to; everything stateful sits behind the exported functions.  See
 * rip(7) for the model and rip/abi.h for the file layout.
 *
 * Library functions return 0 or a negative errno value.  None of them
 * prints anything.
 */
#ifndef RIP_H
#define RIP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <rip/abi.h>
#include <rip/snap.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RIP_VERSION_MAJOR 0
#define RIP_VERSION_MINOR 1

/*
 * The first of a macro's variable arguments, and the others (call both with
 * an empty argument last: `__RIP_HEAD(__VA_ARGS__, )`, so that ISO C and
 * C++ before C++20 see an argument for their `...` however few the
 * caller passed).
 */
#define __RIP_HEAD(X, ...) X
#define __RIP_TAIL(X, ...) __VA_ARGS__

/*
 * Options carry their own size so that new fields never need new symbols:
 *	RIP_OPTS(rip_ring_opts, o, .slots = 20000);
 *	rip_ring_open(&o);
 * A library older than the header takes them if the fields it does not
 * know are 0, and fails with -E2BIG otherwise.
 * RIP_OPTS(TYPE, NAME, fields...) declares NAME; the fields may be left out.
 * __extension__: designated initializers are C++20 (g++ and clang++ accept
 * them before).  g++ -Wextra also warns about the members a designated
 * initializer leaves out, in C++ only (they are zero, which is the point):
 * not for this declaration, whose last line takes the caller's `;`.
 */
#define __RIP_OPTS(TYPE, ...)                                                                      \
	__extension__ struct TYPE __RIP_HEAD(__VA_ARGS__, ) = { .sz = sizeof(struct TYPE),         \
								__RIP_TAIL(__VA_ARGS__, ) }
#ifdef __cplusplus
#define __RIP_OPTS_PUSH                                                                            \
	_Pragma("GCC diagnostic push")                                                             \
		_Pragma("GCC diagnostic ignored \"-Wmissing-field-initializers\"")
#define __RIP_OPTS_POP _Pragma("GCC diagnostic pop")
#define RIP_OPTS(TYPE, ...)                                                                        \
	__RIP_OPTS_PUSH __RIP_OPTS(TYPE, __VA_ARGS__);                                             \
	__RIP_OPTS_POP RIP_STATIC_ASSERT(1, "RIP_OPTS")
#else
#define RIP_OPTS(TYPE, ...) __RIP_OPTS(TYPE, __VA_ARGS__)
#endif

struct rip_ring_opts {
	size_t sz;	  /* sizeof(struct rip_ring_opts) */
	const char *path; /* exact file to create; NULL: a new file in dir */
	const char *dir;  /* NULL: $RIP_DIR, else $XDG_RUNTIME_DIR/rip, else /dev/shm */
	uint32_t slots;	  /* threads + coroutines alive at once; 0: $RIP_SLOTS or 131072 */
	uint32_t flags;	  /* reserved, 0 */
	/* events (0: the environment's RIP_EVENT_* or the defaults) */
	uint32_t ev_rings;	 /* threads that emit events at once; default 64 */
	uint32_t ev_ring_size;	 /* bytes per thread, a power of two; default 256 KiB */
	uint32_t ev_packet_size; /* bytes per packet, a power of two; default 16 KiB */
	uint32_t ev_mode;	 /* enum rip_ev_mode + 1 (0: $RIP_MODE or overwrite) */
};

/* The ring file's category enable words; all zero while no ring is open. */
extern uint64_t *__rip_enable RIP_API;

RIP_API uint64_t __rip_clock_fallback(void);

/* Create this process's ring file.  -EALREADY if one is open. */
RIP_API int rip_ring_open(const struct rip_ring_opts *opts);
/*
 * Close the ring: no new slots are taken and the file is marked closed.
 * The mapping stays (threads may still hold pointers into it) and attached
 * threads keep writing into it until they detach; the file stays on disk.
 */
RIP_API int rip_ring_close(void);
/* Copy the path of the open ring file into buf.  -ENOENT if none, -ERANGE if too small. */
RIP_API int rip_ring_path(char *buf, size_t len);

/* Take a slot for the calling thread now (rip_snap() does it on first use). */
RIP_API int rip_thread_attach(void);
/* Give the thread's slot back; its history stays readable until the slot is reused. */
RIP_API int rip_thread_detach(void);
/* Name the calling thread's slot (default: the thread's comm). */
RIP_API int rip_thread_set_name(const char *name);

/* A coroutine is a slot of its own; the handle points into the ring file. */
struct rip_coro;
RIP_API int rip_coro_create(const char *name, struct rip_coro **out);
RIP_API int rip_coro_destroy(struct rip_coro *co);
RIP_API int rip_coro_set_name(struct rip_coro *co, const char *name);

/*
 * rip_clock_ticks - the file's clock: the TSC where it is invariant and the
 * kernel's clocksource, else CLOCK_MONOTONIC_RAW nanoseconds.  The header
 * of the ring file holds the calibration to nanoseconds.
 */
RIP_INLINE uint64_t rip_clock_ticks(void)
{
#if defined(__x86_64__)
	if (RIP_LIKELY(__rip_clock_tsc)) {
		uint32_t lo, hi;

		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	}
#endif
	return __rip_clock_fallback();
}

/*
 * The event fast path's clock: the raw TSC on x86-64 (one instruction, no
 * test).  Where the TSC is not the file's clock, the library keeps every
 * thread's packet "full" so that all events take the slow path, which reads
 * the right clock.
 */
RIP_INLINE uint64_t __rip_event_clock(void)
{
#if defined(__x86_64__)
	uint64_t ts, hi;

	/* edx:eax into one register in two instructions (rdtsc zeroes the high halves) */
	__asm__ __volatile__("rdtsc\n\tshl $32, %1\n\tor %1, %0" : "=a"(ts), "=d"(hi));
	return ts;
#else
	return rip_clock_ticks();
#endif
}

/* Record where the calling thread or coroutine is: see rip/snap.h. */
#define rip_snap() __rip_snap(RIP_HERE())

/* ---- events -------------------------------------------------------------------------- */

struct rip_event_field {
	uint32_t type; /* enum rip_field_type */
	const char *name;
};

/*
 * An event type: a name, a category (its enable bit) and up to
 * RIP_EVENT_MAX_FIELDS fields.  Define one with RIP_EVENT_TYPE at file scope;
 * it is registered in the ring file before main() (or when the ring opens),
 * so every reader knows it.
 */
struct rip_event_type {
	const char *name;
	uint32_t category;
	uint32_t nfields;
	struct rip_event_field fields[RIP_EVENT_MAX_FIELDS];
	uint32_t *id; /* set by registration; UINT32_MAX until then */
};

/* (clang-format would spread the braces over four lines) */
/* clang-format off */
#define RIP_FIELD(TYPE, NAME) { .type = RIP_FT_##TYPE, .name = NAME }
/* clang-format on */

/*
 * RIP_EVENT_TYPE(ident, "name", category, RIP_FIELD(U64, "bytes"), ...);
 * defines `static const struct rip_event_type ident` and registers it (at
 * file scope, with a `;` after it like any declaration).  The arguments
 * after the name are the category and the fields, if any: the fields
 * counted with { 0, 0 } in front (0 of them: an array of one).
 * __extension__: compound literals and designated initializers are C99 but
 * C++20 only, and empty braces (no fields) C23; g++ and clang++ accept them
 * all.  The last line takes the caller's `;`.
 */
#define RIP_EVENT_TYPE(IDENT, NAME, ...)                                                           \
	static uint32_t IDENT##__rip_id = UINT32_MAX;                                              \
	__extension__ static const struct rip_event_type IDENT = {                                 \
		.name = NAME,                                                                      \
		.category = __RIP_HEAD(__VA_ARGS__, ),                                             \
		.nfields = sizeof((struct rip_event_field[]){ { 0, 0 },                            \
							      __RIP_TAIL(__VA_ARGS__, ) }) /       \
				   sizeof(struct rip_event_field) -                                \
			   1,                                                                      \
		.fields = { __RIP_TAIL(__VA_ARGS__, ) },                                           \
		.id = &IDENT##__rip_id,                                                            \
	};                                                                                         \
	__attribute__((constructor)) static void IDENT##__rip_register(void)                       \
	{                                                                                          \
		rip_event_register(&IDENT);                                                        \
	}                                                                                          \
	RIP_STATIC_ASSERT(1, "RIP_EVENT_TYPE")

/* Register an event type now (RIP_EVENT_TYPE does it for you).  0 or -errno. */
RIP_API int rip_event_register(const struct rip_event_type *type);
/* Name category bit (RIP_CAT_USER..255) so that `rip enable PID NAME` finds it. */
RIP_API int rip_category_name(unsigned bit, const char *name);
/* Emit an event whose last field is a string (not inline: strings are rare). */
RIP_API void rip_event_str(const struct rip_event_type *type, const uint64_t *vals,
			   const char *str);
/* Emit an event whose last field is an array of n u64 (at most RIP_ARRAY_MAX). */
RIP_API void rip_event_array(const struct rip_event_type *type, const uint64_t *vals,
			     const uint64_t *arr, uint32_t n);
RIP_API void __rip_event_slow(const struct rip_event_type *type, const uint64_t *vals,
			      const char *str, uint64_t ts);
RIP_API void __rip_event_nested(void);
/*
 * An event written while this thread's writer was busy (a signal handler
 * that interrupted it): librip may keep it for later, else it counts it as
 * lost.  The fast path's cold branch; __rip_event_nested is the same
 * without the event, for code built against older headers.
 */
RIP_API void __rip_event_nested_v(const struct rip_event_type *type, const uint64_t *vals,
				  uint32_t nvals);

/*
 * Is category on?  One load, one test, one branch at the call site: a byte
 * test of the ring file's control words, which `rip enable/disable` flip
 * from outside (seen by the next event; no ordering is needed).
 */
RIP_INLINE int rip_category_enabled(unsigned category)
{
	const uint8_t *byte = (const uint8_t *)__rip_enable + ((category >> 3) & 31);

#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
	if (__builtin_constant_p(category)) {
		int on;

		/* testb $bit, mem: the load and the test in one instruction */
		__asm__("testb %2, %1" : "=@ccnz"(on) : "m"(*byte), "i"(1u << (category & 7)));
		return on;
	}
#endif
	return (__atomic_load_n(byte, __ATOMIC_RELAXED) >> (category & 7)) & 1;
}

/*
 * The fast path in two halves.  __rip_event_reserve raises w->nest before
 * it reads the writer's position: a signal handler that emits while it is
 * up (here or in the slow path) drops its event and counts it as discarded
 * rather than race for the same bytes or switch packets under us.  It then
 * checks the id fits the compact header, the event fits the packet and the
 * time fits 27 bits, reserves size bytes and writes the header; NULL means
 * "take the slow path" (nest still up).  __rip_event_commit publishes the
 * event up to end and drops nest.
 */
RIP_INLINE char *__rip_event_reserve(struct rip_evw *w, uint32_t id, uint32_t size, uint64_t ts)
{
	char *p;

	w->nest = 1;
	/* The flag before the position is read: pairs with a handler's check of nest. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	p = w->pos;
	if (RIP_UNLIKELY(id > RIP_EVENT_ID_COMPACT_MAX || p + size > w->end ||
			 ts - w->last >= (1u << RIP_EVENT_TS_BITS)))
		return NULL;
	w->pos = p + size;
	{
		uint32_t h = id | (uint32_t)(ts << 5);

		memcpy(p, &h, 4);
	}
	return p + 4;
}

RIP_INLINE void __rip_event_commit(struct rip_evw *w, char *end, uint64_t ts)
{
	w->last = ts;
	w->events++;
	/* Commit: pairs with the acquire load of content_size in the readers. */
	__atomic_store_n((uint32_t *)&w->pkt->content_size,
			 (uint32_t)((size_t)(end - (char *)w->pkt) * 8), __ATOMIC_RELEASE);
	/* Everything above before the flag drops: pairs with a handler's check. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	w->nest = 0;
}

/*
 * Unroll the loops over a type's fields: with the type a constant they then
 * fold into straight stores (gcc -O2 keeps a loop of four fields, twice
 * over, which cost a resource event about 100 instructions).  For gcc 8+.
 */
#if defined(__clang__)
#define __RIP_UNROLL /* clang unrolls these itself, and warns where a pragma cannot be met */
#elif defined(__GNUC__) && __GNUC__ >= 8
#define __RIP_UNROLL _Pragma("GCC unroll 16")
#else
#define __RIP_UNROLL
#endif

/*
 * Write one event of fixed-size fields.  With t a compile-time constant the
 * sizes fold away: the clock, three checks, the stores, the commit.
 */
RIP_INLINE void __rip_event_emit(const struct rip_event_type *t, const uint64_t *v, uint32_t nv,
				 uint64_t ts)
{
	struct rip_evw *w = &__rip_self.ev;
	uint32_t size = 4, i;
	char *p;

	if (RIP_UNLIKELY(w->nest)) {
		__rip_event_nested_v(t, v, nv);
		return;
	}
	__RIP_UNROLL
	for (i = 0; i < t->nfields; i++)
		size += rip_field_size(t->fields[i].type);
	/* Pairs with the release store of the id in rip_event_register (a plain load on x86). */
	p = __rip_event_reserve(w, __atomic_load_n(t->id, __ATOMIC_ACQUIRE), size, ts);
	if (RIP_UNLIKELY(!p)) {
		uint64_t all[RIP_EVENT_MAX_FIELDS] = { 0 };

		for (i = 0; i < nv && i < RIP_EVENT_MAX_FIELDS; i++)
			all[i] = v[i];
		__rip_event_slow(t, all, NULL, ts); /* drops nest */
		return;
	}
	__RIP_UNROLL
	for (i = 0; i < t->nfields; i++) {
		uint32_t n = rip_field_size(t->fields[i].type);
		uint64_t x = i < nv ? v[i] : 0;

		memcpy(p, &x, n); /* little-endian: the low bytes */
		p += n;
	}
	__rip_event_commit(w, p, ts);
}

/* rip_event0..4 - emit an event of type t with 0 to 4 integer fields. */
#define __RIP_EVENT(T, ...)                                                                        \
	do {                                                                                       \
		const struct rip_event_type *__t = (T);                                            \
		if (RIP_UNLIKELY(rip_category_enabled(__t->category))) {                           \
			const uint64_t __v[] = { __VA_ARGS__ };                                    \
			__rip_event_emit(__t, __v, sizeof(__v) / sizeof(__v[0]),                   \
					 __rip_event_clock());                                     \
		}                                                                                  \
	} while (0)

RIP_INLINE void rip_event0(const struct rip_event_type *t)
{
	__RIP_EVENT(t, 0);
}

RIP_INLINE void rip_event1(const struct rip_event_type *t, uint64_t a)
{
	__RIP_EVENT(t, a);
}

RIP_INLINE void rip_event2(const struct rip_event_type *t, uint64_t a, uint64_t b)
{
	__RIP_EVENT(t, a, b);
}

RIP_INLINE void rip_event3(const struct rip_event_type *t, uint64_t a, uint64_t b, uint64_t c)
{
	__RIP_EVENT(t, a, b, c);
}

RIP_INLINE void rip_event4(const struct rip_event_type *t, uint64_t a, uint64_t b, uint64_t c,
			   uint64_t d)
{
	__RIP_EVENT(t, a, b, c, d);
}

/* The built-in coroutine-switch event (category RIP_CAT_CORO, id 0). */
extern const struct rip_event_type __rip_coro_switch_type RIP_API;

/* rip:coro_switch {u32 to, u32 from}: 12 bytes, id 0, no type table on the way. */
RIP_INLINE void __rip_coro_event(uint32_t to, uint32_t from, uint64_t ts)
{
	struct rip_evw *w = &__rip_self.ev;
	char *p;

	if (RIP_UNLIKELY(w->nest)) {
		__rip_event_nested();
		return;
	}
	p = __rip_event_reserve(w, RIP_EV_CORO_SWITCH, 12, ts);
	if (RIP_UNLIKELY(!p)) {
		const uint64_t v[RIP_EVENT_MAX_FIELDS] = { to, from };

		__rip_event_slow(&__rip_coro_switch_type, v, NULL, ts); /* drops nest */
		return;
	}
	memcpy(p, &to, 4);
	memcpy(p + 4, &from, 4);
	__rip_event_commit(w, p + 8, ts);
}

/*
 * rip_coro_switch_in - the calling thread starts (or resumes) running co,
 * a handle from rip_coro_create() (not NULL).
 * From now on rip_snap() on this thread records into co's history, and the
 * thread's slot says which coroutine it runs.  Call it from the scheduler
 * right before jumping into the coroutine.
 */
RIP_INLINE void rip_coro_switch_in(struct rip_coro *co)
{
	struct rip_slot *c = (struct rip_slot *)co;
	struct rip_slot *t = __rip_self.thread;

	if (RIP_UNLIKELY(!t)) {
		__rip_attach_slow();
		t = __rip_self.thread;
	}
	uint64_t now = rip_clock_ticks();

	if (RIP_UNLIKELY(rip_category_enabled(RIP_CAT_CORO)))
		__rip_coro_event(c->index + 1, t->coro, now);
	c->switch_ts = now;
	c->tid = __rip_self.tid;
	c->switches++;
	/* state is read racily by readers; a stale value is only ever one switch old */
	c->state = RIP_SLOT_RUNNING;
	t->coro = c->index + 1;
	__rip_self.cur = c;
	/* After cur: a signal handler in between keeps its frames on the old stack, in pairs. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__rip_self.fn_stack = (void *)0;
}

/*
 * rip_coro_switch_out - the running coroutine parks: it is marked waiting
 * since now, and rip_snap() goes back to the thread's own history.
 */
RIP_INLINE void rip_coro_switch_out(void)
{
	struct rip_slot *c = __rip_self.cur;
	struct rip_slot *t = __rip_self.thread;

	uint64_t now;

	if (RIP_UNLIKELY(c == t || !c))
		return;
	now = rip_clock_ticks();
	if (RIP_UNLIKELY(rip_category_enabled(RIP_CAT_CORO)))
		__rip_coro_event(0, c->index + 1, now);
	c->switch_ts = now;
	c->state = RIP_SLOT_WAITING;
	t->coro = 0;
	__rip_self.cur = t;
	/* After cur, as in rip_coro_switch_in. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__rip_self.fn_stack = (void *)0;
}

/*
 * Function tracing: librip defines the hooks that code built with
 * -finstrument-functions calls at the entry and the exit of every function
 * it compiled so (the shadow call stacks of rip ps --stacks, the records of
 * rip report --functions).  Programs never call them.
 */
void __cyg_profile_func_enter(void *this_fn, void *call_site)
	__attribute__((no_instrument_function));
void __cyg_profile_func_exit(void *this_fn, void *call_site)
	__attribute__((no_instrument_function));

#ifdef __cplusplus
}
#endif

#endif /* RIP_H */
