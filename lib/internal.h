/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/internal.h - what the parts of librip share and do not export:
 * the process-wide ring state, the clock and module-map helpers.  What
 * librip-preload.so calls is in internal/preload.h, included here.
 */
#ifndef RIP_LIB_INTERNAL_H
#define RIP_LIB_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <internal/preload.h>
#include <rip.h>

#define __hidden __attribute__((visibility("hidden")))
/* rip_evw.ring past any ring: none was free (try again at the next event), or exited */
#define RIP_EVW_RETRY (UINT32_MAX - 1)
#define RIP_EVW_EXITED UINT32_MAX
#define RIP_DEFAULT_SLOTS 131072u /* 10,000 threads and 100,000 coroutines, backed as used */
#define RIP_EV_SMALL_RINGS 16320u /* with the 64 big ones: 16,384 threads with rings */
#define RIP_MAX_SLOTS (1u << 22)
#define RIP_MOD_CAP 1024u
#define RIP_WATCH_COPY_SIZE 16384u     /* bytes per buffer of the watcher's copy area */
#define RIP_WATCH_COPIES_DEFAULT 4096u /* buffers: at most 64 MiB, backed as filled */
#define RIP_WATCH_COPIES_MAX 65536u

/* __rip_self.flags */
#define RIP_SELF_EXITING 0x1u	   /* key destructor ran: never attach again */
#define RIP_SELF_DUMMY 0x2u	   /* writing into a dummy slot (no ring, or pool full) */
#define RIP_SELF_ATTACHING 0x4u	   /* inside rip_attach (a signal handler may interrupt it) */
#define RIP_SELF_EXIT_PUT_OFF 0x8u /* thread exit put off to the next key-destructor round */
#define RIP_TYPES_CAP 256u	   /* as many as the registry holds (events.c) */

/* Event ring geometry for a new file. */
/*
 * The event rings: big ones first (rings of them), then small ones, so that
 * thousands of threads fit in bounded memory (see doc/design.md).
 */
struct rip_ev_config {
	uint32_t rings, ring_size, packet_size, mode;
	uint32_t small_rings, small_ring_size, small_packet_size;
};

/* The process's ring; changed only under lock, read by the slow paths. */
struct rip_proc {
	pthread_mutex_t lock;
	struct rip_file_hdr *hdr; /* NULL while closed: release store, acquire loads */
	size_t map_len;
	uint32_t flags; /* RIP_F_* of the file */
	char path[PATH_MAX];
	pthread_key_t key;
	bool key_ok;
	uint32_t *legacy_map; /* librip.h: id -> slot index + 1 */
	uint32_t legacy_ids;
	uint32_t legacy_sink; /* the slot of snaps of no id (0 in a file of rip_create_ring's) */
	/*
	 * The ring was opened from the environment (RIP_RING, rip run) before
	 * the program could: its own first rip_ring_open or rip_create_ring
	 * takes it (adopted) instead of failing with -EALREADY.
	 */
	bool from_env;
	bool adopted;
	bool no_exec_follow;   /* RIP_FOLLOW without exec: an exec'd image gets no file */
	bool exec_unfollowed;  /* this image is such an image: not followed (__rip_followed) */
	bool early;	       /* opening from a hook (__rip_auto_open_early): no atfork */
	bool atfork_pending;   /* opened early: rip_auto_open registers the fork handler */
	bool scan_pending;     /* opened early: rip_auto_open scans the module map */
	bool sparse;	       /* the file is backed as it is used: __rip_commit before use */
	uint64_t slots_backed; /* struct rip_fifo.backed of the slots' queue */
	uint32_t slot_holes;   /* a forked child's slots below it may be holes: backed when taken */
	uint64_t rings_backed; /* ... and of the event rings' queue (events.c) */
	size_t page;	       /* the page size */
};

extern struct rip_proc __rip_proc __hidden;

/*
 * me (this thread's __rip_self) runs slot s from now on: the
 * function-tracing hooks' stack of the old one goes too.  fn_stack is
 * cleared after cur (a signal handler in between keeps its frames on the
 * old stack, in pairs, and one after finds none cached).
 */
static inline void rip_self_run(struct rip_self *me, struct rip_slot *s)
{
	me->cur = s;
	/* Pairs with a signal handler's hooks on this thread: cur is set first. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	me->fn_stack = NULL;
}

static inline struct rip_slot *rip_slot_at(struct rip_file_hdr *h, uint32_t i)
{
	return (struct rip_slot *)((char *)h + h->slot_off + ((size_t)i << RIP_SLOT_SHIFT));
}

/* A bounded MPMC queue of indices in the file (slots, event rings). */
struct rip_fifo {
	struct rip_fifo_cell *cells;
	uint64_t n;
	uint64_t *head, *tail;
	/*
	 * In a sparse file: the file, and how many cells from the first are
	 * known to be backed (this process's count, moved by pushes; the
	 * queue's own cells stay holes until a push reaches them).  NULL in a
	 * file backed all at once.
	 */
	struct rip_file_hdr *h;
	uint64_t *backed;
};

/* ring.c */
struct rip_fifo __rip_fifo_slots(struct rip_file_hdr *h) __hidden;
int __rip_fifo_push(struct rip_fifo q, uint32_t item) __hidden;
int __rip_fifo_pop(struct rip_fifo q, uint32_t *item) __hidden;
/* Empty the queue (a fork child's, only this thread running). */
void __rip_fifo_reset(struct rip_fifo q) __hidden;
int __rip_open_locked(const char *path, const char *dir, uint32_t slots, uint32_t flags,
		      const struct rip_ev_config *ev) __hidden;
int __rip_slot_take(struct rip_file_hdr *h, uint32_t *out) __hidden;
/*
 * Back [off, off + len) of the mapped file h with memory before its first
 * write (a sparse file: slots and event rings are backed as they are first
 * used).  0, or -errno (tmpfs full: the caller counts the loss).  Never a
 * SIGBUS later.  errno unchanged.
 */
int __rip_commit(struct rip_file_hdr *h, uint64_t off, size_t len) __hidden;
void __rip_slot_release(struct rip_file_hdr *h, struct rip_slot *s) __hidden;
void __rip_slot_setup(struct rip_slot *s, uint32_t kind, int32_t tid, const char *name,
		      size_t namelen) __hidden;
void __rip_name_copy(char *dst, const char *src, size_t len) __hidden;
pid_t __rip_gettid(void) __hidden;
int __rip_type_register(const struct rip_event_type *t, bool early) __hidden;
/*
 * Is this process one rip run follows (RIP_ROOT, RIP_FOLLOW: the root, or
 * any process when forks are followed, but not an image exec'd into when
 * execs are not)?  true outside rip run.
 */
bool __rip_followed(void) __hidden;
uint64_t __rip_start_ticks(pid_t pid) __hidden;

/* clock.c */
void __rip_clock_init(struct rip_file_hdr *h) __hidden;

/* legacy.c: the functions behind include/librip.h */
struct rip_ring;
RIP_API struct rip_ring *__rip_legacy_create(const char *file, uint32_t max_procs);
RIP_API int32_t __rip_legacy_init(uint32_t id, const char *name, size_t namelen, uint8_t idx,
				  uint8_t ctr);
RIP_API void __rip_legacy_exit(int32_t slot);

/* events.c */
int __rip_events_config(const struct rip_ring_opts *o, struct rip_ev_config *c) __hidden;
void __rip_events_open(struct rip_file_hdr *h) __hidden;
void __rip_events_start(struct rip_file_hdr *h) __hidden;
void __rip_events_close(void) __hidden;
void __rip_events_thread_exit(struct rip_file_hdr *h, struct rip_self *me) __hidden;
void __rip_events_fork_child(struct rip_file_hdr *h, struct rip_self *me) __hidden;
void __rip_events_fork_lock(void) __hidden;
/* rip.h's __rip_event_reserve for a writer that read the file's clock, TSC or not. */
char *__rip_event_reserve_any(struct rip_evw *w, uint32_t id, uint32_t size, uint64_t ts) __hidden;

/* func.c: function tracing (the hooks are exported by their compiler-given names) */
extern const struct rip_event_type __rip_fn_entry_type __hidden;
extern const struct rip_event_type __rip_fn_exit_type __hidden;
extern const struct rip_event_type __rip_fn_def_type __hidden;
/* Lay out the shadow stacks and the function table from off: the new end. */
size_t __rip_fn_layout(struct rip_file_hdr *h, size_t off, uint32_t slots, bool sparse) __hidden;
/* A file was opened (lock held), or closed: the hooks keep its stacks, or none. */
void __rip_fn_open(struct rip_file_hdr *h) __hidden;
void __rip_fn_close(void) __hidden;
/*
 * Before fork() (on) and after it in the parent (off): the forking thread's
 * stack as the child inherits it; in the child, its trace starts with the
 * calls open at the fork (func.c).
 */
void __rip_fn_fork_prepare(bool on) __hidden;
void __rip_fn_fork_child(void) __hidden;
/* A fork child's copy of what the hooks wrote: 0 or -1. */
int __rip_fn_fork_copy(int fd, struct rip_file_hdr *h, uint32_t used,
		       int (*write_all)(int fd, const void *buf, size_t len, off_t off)) __hidden;
/*
 * For patched entries (patch.c): the stack of the slot the thread runs now
 * and its index (NULL: none kept); a function entered or left at cfa, on
 * that stack (NULL: none, the timed record only).  The entry's record is
 * written when the func category is on (enter_at says whether it was); the
 * exit's when rec, what enter_at said for the same call: a call toggled
 * on or off mid-way (rip enable, rip disable) has both records or neither.
 */
/* librip's own hooks (func.c), hidden aliases: what the program's calls of the hooks reach. */
void __rip_fn_enter_self(void *this_fn, void *call_site) __hidden;
void __rip_fn_exit_self(void *this_fn, void *call_site) __hidden;
struct rip_fn_stack *__rip_fn_stack_now(uint32_t *index) __hidden;
/* The thread exits: the exits of the calls it is still in are written (func.c). */
void __rip_fn_thread_exit(void) __hidden;
bool __rip_fn_enter_at(struct rip_fn_stack *st, uintptr_t fn, uintptr_t cfa) __hidden;
void __rip_fn_exit_at(struct rip_fn_stack *st, uintptr_t fn, uintptr_t cfa, bool rec) __hidden;

/*
 * patch.c: -fpatchable-function-entry (what the preload library calls is in
 * internal/preload.h); a catch's part for the patched calls' return
 * addresses (__rip_fn_caught's).
 */
void __rip_fn_rets_caught(uintptr_t cfa) __hidden;
void __rip_fn_rets_jumped(uintptr_t lo, uintptr_t sp, uintptr_t deep) __hidden;
void __rip_fn_exit_deep(uintptr_t fn) __hidden;

#if defined(__x86_64__)
#define RIP_FN_RETS 128u /* entries of a slot's return stack */

/* A patched call's return address, taken by the exit trampoline. */
struct rip_fn_ret {
	uintptr_t ra;  /* where the function returns */
	uintptr_t cfa; /* its cfa: its return address sits at cfa - 8 */
	/*
	 * The function, and RIP_FN_RET_REC when its entry's record was written
	 * (the func category was on), so that its exit's is, whether the
	 * category is on or off when it returns; without it neither is (an
	 * entry made while off, before rip enable turned it on).
	 */
	uintptr_t fn;
};
#define RIP_FN_RET_REC (1ull << 63) /* above any user address */

/* The return stack of a slot. */
struct rip_fn_rets {
	uint32_t n;	/* entries in use */
	uint32_t owner; /* (uint32_t)slot.attach_ts: another owner's entries are gone */
	struct rip_fn_ret e[RIP_FN_RETS];
};

/* slot_count return stacks, private memory backed as used (NULL until a first patch). */
extern struct rip_fn_rets *__rip_fn_rets __hidden;
extern uint32_t __rip_fn_nrets __hidden;
/* A patched entry or exit under way on this thread (a signal handler's is not hijacked). */
extern __thread int __rip_fn_busy __hidden __attribute__((tls_model("initial-exec")));
/* The exit trampoline: a hijacked return address. */
extern char __rip_fn_pexit[] __hidden;
/*
 * The trampolines' slow paths (patch.c), called with every vector argument
 * register saved, and their fast paths (func.c, built without vector
 * registers: the trampolines call them before saving any): an entry whose
 * patched call pushed *slot, 0 when it is done; an exit at cfa, the
 * return address (0: take the slow path).
 */
void __rip_fn_penter(uintptr_t *slot) __hidden;
uintptr_t __rip_fn_pexit_c(uintptr_t cfa) __hidden;
int __rip_fn_penter_fast(uintptr_t *slot) __hidden;
uintptr_t __rip_fn_pexit_fast(uintptr_t cfa) __hidden;
#endif

/* nop.c: referred to by func.c, so that librip.a's func.o brings nop.o along */
extern const char __rip_fn_nop_linked __hidden;

/* modules.c */
/* The module map rescanned: 0, -EAGAIN (a fork under way: not done) or -ENOMEM. */
int __rip_modules_scan(void) __hidden;
struct dl_phdr_info;
/* dl_iterate_phdr, never while a fork is under way (lib/modules.c): its result. */
int __rip_dl_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg) __hidden;
/* The fork handlers of our calls of dl_iterate_phdr. */
void __rip_dl_fork_prepare(void) __hidden;
void __rip_dl_fork_parent(void) __hidden;
void __rip_dl_fork_child(void) __hidden;

#endif /* RIP_LIB_INTERNAL_H */
