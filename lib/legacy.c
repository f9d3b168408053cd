/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/legacy.c - the functions behind include/librip.h, the original
 * librip API.  Ids (the "concurrent process" numbers given to rip_init) map
 * to slots through a table private to the process; rip_init points the
 * thread's snaps at the id's slot.  Slot 0 of a legacy file is a sink, used
 * after rip_exit and for ids out of range (in the environment's ring, which
 * rip_create_ring takes when RIP_RING or rip run opened one before main,
 * the first free slot is); a thread that never called
 * rip_init gets a slot of its own on its first snap, as with rip.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define RIP_LEGACY_DEFAULT_SLOTS 65536u

static uint32_t rip_pid_max(void)
{
	char buf[32] = "";
	int fd = open("/proc/sys/kernel/pid_max", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	unsigned long v;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 32768;
	buf[n] = 0;
	v = strtoul(buf, NULL, 10);
	return v && v <= (1u << 22) ? (uint32_t)v : 32768;
}

/* Is file the ring of a live process (its pid runs, same start time)?  Then it stays. */
static bool rip_file_in_use(const char *file)
{
	int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct rip_file_hdr h;
	bool busy = false;

	if (fd < 0)
		return false;
	/* the same process (pid and start time), still there */
	if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	    !memcmp(h.magic, RIP_MAGIC, sizeof(h.magic)) && h.pid > 0 && h.pid != getpid() &&
	    h.start_ticks && __rip_start_ticks(h.pid) == h.start_ticks)
		busy = true;
	close(fd);
	return busy;
}

__attribute__((visibility("default"))) struct rip_ring *__rip_legacy_create(const char *file,
									    uint32_t max_procs)
{
	uint32_t ids = max_procs ? max_procs : rip_pid_max();
	uint32_t slots = max_procs ? max_procs + 1 : RIP_LEGACY_DEFAULT_SLOTS;
	struct rip_ev_config ev;
	uint32_t *map;
	uint32_t sink;
	int err;

	if (!file || !*file || ids > RIP_MAX_SLOTS || slots > RIP_MAX_SLOTS) {
		errno = EINVAL;
		return NULL;
	}
	err = __rip_events_config(NULL, &ev);
	if (err) {
		errno = -err;
		return NULL;
	}
	map = mmap(NULL, (size_t)ids * sizeof(*map), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	pthread_mutex_lock(&__rip_proc.lock);
	if (__rip_proc.hdr && __rip_proc.from_env && !__rip_proc.adopted &&
	    !__rip_proc.legacy_map) {
		/*
		 * The environment's ring, opened before main (RIP_RING=1, rip run):
		 * the program's ids go in it, not in a file of its own, and it runs
		 * traced (rip_create_ring failed with EALREADY, and a program of
		 * the original API stopped there).
		 */
		__rip_proc.adopted = true;
		err = __rip_slot_take(__rip_proc.hdr, &sink);
		if (!err) {
			__rip_proc.legacy_map = map;
			__rip_proc.legacy_ids = ids;
			__rip_proc.legacy_sink = sink; /* taken, never set up: FREE to readers */
		}
		pthread_mutex_unlock(&__rip_proc.lock);
		if (err) {
			munmap(map, (size_t)ids * sizeof(*map));
			errno = -err;
			return NULL;
		}
		return (struct rip_ring *)__rip_proc.hdr;
	}
	err = __rip_open_locked(file, NULL, slots, RIP_F_LEGACY_API, &ev);
	if (err == -EEXIST && !rip_file_in_use(file)) {
		/* The original overwrote an old file at the same place. */
		unlink(file);
		err = __rip_open_locked(file, NULL, slots, RIP_F_LEGACY_API, &ev);
	}
	if (!err) {
		__rip_proc.legacy_map = map;
		__rip_proc.legacy_ids = ids;
		/* Slot 0 is the sink; it stays FREE so readers never show it. */
		__rip_slot_take(__rip_proc.hdr, &sink);
		__rip_proc.legacy_sink = sink;
	}
	pthread_mutex_unlock(&__rip_proc.lock);
	if (err) {
		munmap(map, (size_t)ids * sizeof(*map));
		errno = -err;
		return NULL;
	}
	__rip_modules_scan();
	return (struct rip_ring *)__rip_proc.hdr;
}

/* From now on this thread's snaps go to slot (legacy_sink: none); returns slot for rip_tid. */
static int32_t rip_legacy_use(struct rip_file_hdr *h, uint32_t slot)
{
	struct rip_self *me = &__rip_self;

	if (!me->tid)
		me->tid = __rip_gettid();
	if (h)
		rip_self_run(me, rip_slot_at(h, slot));
	return (int32_t)slot;
}

__attribute__((visibility("default"))) int32_t
__rip_legacy_init(uint32_t id, const char *name, size_t namelen, uint8_t idx, uint8_t ctr)
{
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	uint32_t *map = __rip_proc.legacy_map;
	uint32_t cur, slot;
	struct rip_slot *s;

	(void)idx;
	(void)ctr;
	/* As in the original, id 0 means "this thread": its tid. */
	if (!id)
		id = (uint32_t)__rip_gettid();
	if (!h || !map || id >= __rip_proc.legacy_ids)
		return rip_legacy_use(h, __rip_proc.legacy_sink);
	/* A known id: a coroutine resuming on this thread. */
	cur = __atomic_load_n(&map[id], __ATOMIC_ACQUIRE);
	if (cur) {
		s = rip_slot_at(h, cur - 1);
		s->tid = __rip_gettid();
		s->switch_ts = rip_clock_ticks();
		return rip_legacy_use(h, cur - 1);
	}
	if (__rip_slot_take(h, &slot))
		return rip_legacy_use(h, __rip_proc.legacy_sink);
	s = rip_slot_at(h, slot);
	__rip_slot_setup(s, RIP_KIND_THREAD, __rip_gettid(), name ? name : "", name ? namelen : 0);
	s->user_id = id;
	/* Publish id -> slot: pairs with the acquire load above in other threads. */
	cur = 0;
	if (!__atomic_compare_exchange_n(&map[id], &cur, slot + 1, false, __ATOMIC_RELEASE,
					 __ATOMIC_ACQUIRE)) {
		/* Another thread registered the same id first: use its slot. */
		__rip_slot_release(h, s);
		return rip_legacy_use(h, cur - 1);
	}
	__atomic_fetch_add(&h->live_threads, 1, __ATOMIC_RELAXED);
	return rip_legacy_use(h, slot);
}

__attribute__((visibility("default"))) void __rip_legacy_exit(int32_t slot)
{
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	uint32_t *map = __rip_proc.legacy_map;
	struct rip_slot *s;

	if (!h || !map || slot < 0 || (uint32_t)slot == __rip_proc.legacy_sink ||
	    (uint32_t)slot >= h->slot_count)
		return;
	s = rip_slot_at(h, (uint32_t)slot);
	if (s->state != RIP_SLOT_RUNNING)
		return;
	if (s->user_id < __rip_proc.legacy_ids)
		__atomic_store_n(&map[s->user_id], 0, __ATOMIC_RELEASE);
	if (__rip_self.cur == s)
		rip_self_run(&__rip_self,
			     rip_slot_at(h, __rip_proc.legacy_sink)); /* until rip_init */
	__rip_slot_release(h, s);
	__atomic_fetch_sub(&h->live_threads, 1, __ATOMIC_RELAXED);
}
