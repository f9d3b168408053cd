/* SPDX-License-Identifier: Apache-2.0 */
/*
 * internal/preload.h - what librip-preload.so uses of librip and librip of
 * it, declared once: lib/ defines these functions, preload/ calls them.
 * They are not the public API: librip.so exports them in the version node
 * LIBRIP_PRIVATE (lib/librip.map), which only the preload library built
 * from the same tree binds to, and no installed header declares them
 * (include/internal/ is not installed, like internal/clock.h).  A function
 * the public headers' inline fast paths call belongs in rip.h or
 * rip/snap.h and in LIBRIP_0.1 instead.
 */
#ifndef RIP_INTERNAL_PRELOAD_H
#define RIP_INTERNAL_PRELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RIP_PRIVATE __attribute__((visibility("default")))

struct rip_coro;
struct rip_event_type;
struct rip_file_hdr;

/*
 * The preload library's first hook, before its constructor: register its
 * event types and open the ring file, taking no lock a caller may hold
 * (lib/ring.c).  0 with a file open (now or before), -errno otherwise
 * (-EBUSY: try again at the next call).
 */
RIP_PRIVATE int __rip_auto_open_early(const struct rip_event_type *const *types, size_t ntypes);

/*
 * A resource kind of rip/module.h: t is "kind:NAME" with no fields, flags
 * its RIP_EVTYPE_* (RIP_EVTYPE_KIND is added), desc what it is; both go
 * into the type table with it (lib/events.c).  0 or -errno.
 */
RIP_PRIVATE int __rip_kind_register(const struct rip_event_type *t, uint32_t flags,
				    const char *desc);

/*
 * A child of a raw clone or clone3, which ran no fork handler (it still maps
 * its parent's file): run librip's handler now, so that it writes a file of
 * its own or none (lib/ring.c).  1 if it ran, 0 otherwise.
 */
RIP_PRIVATE int __rip_fork_check(void);

/*
 * The process ends by _exit() or _Exit(), which run no destructor: mark its
 * file exited as librip's destructor does (exit_ts, RIP_P_EXITED), or
 * readers take a clean end for a death by a signal (lib/ring.c).  Nothing
 * when the caller is not the file's process (a vfork child, a clone(3)
 * child that shares the memory).
 */
RIP_PRIVATE void __rip_exit_mark(void);

/*
 * pthread_setname_np's hook: name the slot of thread tid (0: the caller)
 * without rip_thread_set_name's module rescan, which calls into the loader;
 * no lock, no allocation (lib/ring.c).  0 or -errno.
 */
RIP_PRIVATE int __rip_thread_name(int32_t tid, const char *name);

/* makecontext's hook: rip_coro_create without the module rescan (lib/ring.c). */
RIP_PRIVATE int __rip_coro_new(const char *name, struct rip_coro **out);

/*
 * Who keeps the events of a signal handler's hooks that interrupted the
 * writing of another (preload/nest.c): librip's nested writer calls keep,
 * which returns true when it took (or counted) one; NULL: nobody, librip
 * counts them lost (lib/events.c).  tail is the variable part as librip
 * writes it (a string with its NUL, or an array's count and elements).
 */
RIP_PRIVATE void __rip_event_set_keeper(bool (*keep)(const struct rip_event_type *t,
						     const uint64_t *v, uint32_t nv,
						     const void *tail, uint32_t tlen));

/*
 * Write an event with fields v[0 .. nv) and the variable tail as the slow
 * path takes it, at time ts (no earlier than the stream's last event): the
 * events kept above, written once the interrupted hook is done
 * (lib/events.c).
 */
RIP_PRIVATE void __rip_event_replay(const struct rip_event_type *t, const uint64_t *v, uint32_t nv,
				    const void *tail, size_t tlen, uint64_t ts);

/*
 * Function tracing of code built with -fpatchable-function-entry (lib/patch.c;
 * preload/fnpatch.c calls them).  Patch (on) or unpatch the n sites at addrs
 * (the functions' entries); !on and addrs NULL: every site patched so far.
 * *ok and *failed count the sites.  0, or -errno of a failure (-EPERM: a
 * user shadow stack is on; -ERANGE: no pad reachable).
 */
RIP_PRIVATE int __rip_fn_patch(const uint64_t *addrs, uint32_t n, bool on, uint32_t *ok,
			       uint32_t *failed);
/* Sites patched now. */
RIP_PRIVATE uint32_t __rip_fn_patched(void);
/* An exception is about to unwind this thread's stack: the real return addresses back. */
RIP_PRIVATE void __rip_fn_unwinding(void);
/*
 * A catch block begins in the frame whose sp is cfa: the frames below it are
 * gone, from the call stack and the patched calls' return stack (lib/func.c).
 */
RIP_PRIVATE void __rip_fn_caught(uintptr_t cfa);
/*
 * A longjmp lands where the sp is sp: the frames at or below it are gone
 * (lib/func.c).  lo: the lowest address of the thread's stack when both
 * the jump and sp lie on it (its patched calls' entries there go too), or 0.
 */
RIP_PRIVATE void __rip_fn_jumped(uintptr_t sp, uintptr_t lo);
/*
 * backtrace(3) is about to walk this thread's stack, or the thread to block
 * in a call that may be a cancellation point (which unwinds it): the
 * frames above sp get their real return addresses back (lent: which, for
 * rets_back), then the trampoline again (lib/patch.c).
 */
RIP_PRIVATE void __rip_fn_rets_lend(uintptr_t sp, uint64_t lent[2]);
RIP_PRIVATE void __rip_fn_rets_back(uintptr_t sp, const uint64_t lent[2]);
/*
 * A stack walker met a return address that is __rip_fn_pexit_at() (a
 * patched function's, hijacked) at cfa - 8: the real one, from the return
 * stack of the slot this thread runs (else of its own), or 0 if none is
 * known.  Writes nothing; no lock, no system call (lib/patch.c).
 */
RIP_PRIVATE uintptr_t __rip_fn_ret_at(uintptr_t cfa);
/* The address hijacked return addresses hold (UINTPTR_MAX where nothing is patched ever). */
RIP_PRIVATE uintptr_t __rip_fn_pexit_at(void);

/*
 * The open file's bt_gen (struct rip_file_hdr), a zero word while none is
 * open: the preload library's stack hook reads it (relaxed) at every stack.
 */
RIP_PRIVATE extern const uint32_t *__rip_bt_gen;

/*
 * Set (relaxed, once) by the program's first rip_coro_create: it keeps its
 * coroutines' slots itself, and the preload library's hooks of makecontext
 * and swapcontext (preload/ucontext.c) make and switch none of their own,
 * which doubled every coroutine of a program that runs the coroutine API
 * over ucontext (the program's slots never snapped: its snaps went to the
 * hooks' slots).  __rip_coro_new, the hooks' own, does not set it.
 */
RIP_PRIVATE extern bool __rip_coro_api;

/* The watcher and the sampler (preload/watch.c, sample.c): the open file, NULL if none. */
RIP_PRIVATE struct rip_file_hdr *__rip_file_hdr(void);
/* Back [off, off + len) of the open file before its first write: 0 or -errno (lib/ring.c). */
RIP_PRIVATE int __rip_file_commit(uint64_t off, size_t len);

/*
 * Put the object that holds addr in the module map if it is not there,
 * without the loader's lock: *lo, *hi its range once it is in the map, else
 * 0 (lib/modules.c).  For a wait wrapper's call site in an object dlopen'd
 * since the last rescan.
 */
RIP_PRIVATE void __rip_modules_note(uintptr_t addr, uintptr_t *lo, uintptr_t *hi);

/*
 * Rescan the module map if the loader added or removed objects since the
 * last scan (lib/modules.c; takes the loader's lock: never in a wait or a
 * signal handler).  dlclose's hook calls it first, so that an object
 * dlopen'd and closed between two rescans is in the map, and its frames
 * in the stacks recorded meanwhile are named.
 */
RIP_PRIVATE void __rip_modules_maybe_rescan(void);

/*
 * Defined by librip-preload.so (preload/watch.c), which alone has a watcher
 * and a sampler: librip refers to it weakly (lib/ring.c), and gives a file
 * a watcher's copy area and a sample area only when it is there.
 */
extern const int __rip_preload_watch RIP_PRIVATE;

#endif /* RIP_INTERNAL_PRELOAD_H */
