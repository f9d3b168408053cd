// SPDX-License-Identifier: Apache-2.0
/*
 * read/watch.c - the reader's side of the watcher thread (preload/watch.c):
 * ask it for a sweep, read what it recorded of each thread, unwind the
 * stack copies with libdw.
 *
 * The file is hostile input: every offset, index and length of the copy
 * area is checked against the mapping before use, reads of the mapping are
 * guarded against the file shrinking (rr_guard_enter), and a record or copy
 * that changes under us (odd or moved seqlock) is dropped, not used.
 *
 * Unwinding: one Dwfl with every module of the file's map reported at its
 * load bias, attached once (dwfl_attach_state) with callbacks that give
 * libdw the copied stack as the thread's memory and the sp and pc of the
 * syscall file as its registers.  /proc does not give the frame pointer;
 * the first plausible frame record in the copy (a saved frame pointer that
 * points higher into the copy, next to a return address into a module)
 * stands in for it, so that frames whose CFA is frame-pointer based
 * unwind too.  x86_64 only for now (other architectures: -ENOTSUP).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>

#include "read/ringfile.h"
#include "read/symcache.h"
#include "read/watch.h"

/* ---- asking for a sweep ---- */

void wt_request_sweep(struct rr_file *f, int timeout_ms, struct wt_request *out)
{
	struct rip_file_hdr *h;
	char err[RR_ERR_MAX];
	int64_t t0 = rr_mono_ns(), end = t0 + (int64_t)timeout_ms * 1000000;
	uint32_t req, status = 0;
	sigjmp_buf jb;

	memset(out, 0, sizeof(*out));
	out->timeout_ms = timeout_ms;
	if (f->legacy_raw || rr_live_u32(f, offsetof(struct rip_file_hdr, watch_status), &status,
					 err, sizeof(err))) {
		snprintf(out->why, sizeof(out->why), "no watcher in this file");
		return;
	}
	if (status != RIP_WATCHER_RUNNING && status != RIP_WATCHER_DENIED) {
		snprintf(out->why, sizeof(out->why), "the watcher is not running");
		return;
	}
	if (rr_map_writable(f, err, sizeof(err))) {
		snprintf(out->why, sizeof(out->why), "%s", err);
		return;
	}
	h = (struct rip_file_hdr *)f->wmap;
	if (rr_guard_enter(&jb)) {
		snprintf(out->why, sizeof(out->why), "the file shrank");
		return;
	}
	/* Seq-cst: the request before the wake (pairs with the watcher's acquire load). */
	req = __atomic_add_fetch(&h->watch_req, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &h->watch_req, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
	out->asked = true;
	for (;;) {
		/* Acquire: pairs with the watcher's release store after its sweep. */
		uint32_t done = __atomic_load_n(&h->watch_done, __ATOMIC_ACQUIRE);
		int64_t now = rr_mono_ns(), left = end - now;
		struct timespec ts;

		if ((int32_t)(done - req) >= 0) {
			out->done = true;
			break;
		}
		if (left <= 0)
			break;
		ts.tv_sec = (time_t)(left / 1000000000);
		ts.tv_nsec = (long)(left % 1000000000);
		syscall(SYS_futex, &h->watch_done, FUTEX_WAIT, done, &ts, NULL, 0);
	}
	rr_guard_leave();
	out->waited_ns = rr_mono_ns() - t0;
}

/* ---- records ---- */

static bool wt_area_ok(const struct rr_file *f, uint32_t *copies, uint32_t *size)
{
	const struct rip_file_hdr *h = &f->hdr;

	if (!h->watch_off || !h->watch_copies || h->watch_copy_size <= RIP_WATCH_COPY_HDR ||
	    h->watch_copy_size > (1u << 24) || (h->watch_copy_size & 7) || (h->watch_off & 7))
		return false;
	if (h->watch_off > f->len ||
	    (uint64_t)h->watch_copies * h->watch_copy_size > f->len - h->watch_off)
		return false;
	*copies = h->watch_copies;
	*size = h->watch_copy_size;
	return true;
}

int wt_read(struct rr_file *f, uint32_t index, int32_t tid, struct wt_thread *out, char *err,
	    size_t errlen)
{
	const struct rip_file_hdr *h = &f->hdr;
	const struct rip_slot *s;
	uint32_t copies, size;
	sigjmp_buf jb;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	out->slot = index;
	out->tid = tid;
	if (f->legacy_raw || index >= h->slot_count ||
	    h->slot_off + ((uint64_t)index + 1) * RIP_SLOT_SIZE > f->len)
		return 0;
	s = (const struct rip_slot *)(f->map + h->slot_off + (size_t)index * RIP_SLOT_SIZE);
	if (rr_guard_enter(&jb))
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being read", f->path);
	for (int tries = 0; tries < 3 && !ret; tries++) {
		/* Acquire both: pair with the watcher's seqlock (preload/watch.c). */
		uint32_t s1 = __atomic_load_n(&s->watch.seq, __ATOMIC_ACQUIRE), s2;

		memcpy(&out->rec, &s->watch, sizeof(out->rec));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&s->watch.seq, __ATOMIC_RELAXED);
		if (s1 == s2 && !(s1 & 1))
			ret = 1;
	}
	if (ret != 1 || !(out->rec.flags & RIP_WATCH_SEEN)) {
		ret = 0;
		goto out;
	}
	out->sp = out->rec.sp;
	out->pc = out->rec.pc;
	memcpy(out->args, out->rec.args, sizeof(out->rec.args));
	if (!(out->rec.flags & RIP_WATCH_COPY) || !out->rec.copy ||
	    !wt_area_ok(f, &copies, &size) || out->rec.copy > copies)
		goto out;
	{
		const uint8_t *base =
			f->map + f->hdr.watch_off + (size_t)(out->rec.copy - 1) * size;
		const struct rip_watch_copy *c = (const void *)base;
		struct rip_watch_copy head;
		uint8_t *buf = NULL;
		uint32_t cap = 0;

		for (int tries = 0; tries < 3; tries++) {
			uint32_t s1 = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE), s2;

			memcpy(&head, c, sizeof(head));
			if (head.len > size - RIP_WATCH_COPY_HDR)
				break;
			/* As much as the copy holds (rarely all of the buffer). */
			if (head.len > cap || !buf) {
				uint8_t *t = realloc(buf, head.len ? head.len : 1);

				if (!t) {
					free(buf);
					ret = rr_fail(err, errlen, -ENOMEM, "out of memory");
					goto out;
				}
				buf = t;
				cap = head.len;
			}
			memcpy(buf, base + RIP_WATCH_COPY_HDR, head.len);
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			s2 = __atomic_load_n(&c->seq, __ATOMIC_RELAXED);
			if (s1 != s2 || (s1 & 1))
				continue;
			if (head.slot != index + 1 || head.tid != tid || !head.len ||
			    head.sp != out->rec.sp || head.pc != out->rec.pc)
				break;
			out->have_copy = true;
			out->stack = buf;
			out->len = head.len;
			memcpy(out->args, head.args, sizeof(out->args));
			buf = NULL;
			break;
		}
		free(buf);
	}
out:
	rr_guard_leave();
	return ret;
}

void wt_thread_free(struct wt_thread *t)
{
	free(t->stack);
	t->stack = NULL;
}

/* ---- unwinding ---- */

struct wt_unwinder {
	Dwfl *dwfl;
	Dwfl_Callbacks cb;
	char *debuginfo_path;
	bool attached;
	const struct rip_module *mods; /* for the frame-pointer guess: text ranges */
	size_t nmods;
	const struct wt_thread *cur; /* the thread being unwound */
	uint64_t fp;		     /* its guessed frame pointer, 0: none */
};

static bool wt_in_module(const struct wt_unwinder *u, uint64_t a)
{
	for (size_t i = 0; i < u->nmods; i++)
		if (a >= u->mods[i].lo && a < u->mods[i].hi &&
		    !(u->mods[i].flags & RIP_MOD_UNLOADED))
			return true;
	return false;
}

static bool wt_word(const struct wt_thread *t, uint64_t addr, uint64_t *v)
{
	if (addr < t->sp || addr - t->sp > (uint64_t)t->len || t->len - (addr - t->sp) < 8)
		return false;
	memcpy(v, t->stack + (addr - t->sp), 8);
	return true;
}

/*
 * The frame pointer the thread had, guessed: the lowest 16-byte aligned
 * address a in the copy whose word is a higher address in the copy (the
 * caller's saved frame pointer) with a return address into a module next
 * to it, and whose caller's record holds a return address too.  0 when
 * nothing fits.
 */
static uint64_t wt_guess_fp(const struct wt_unwinder *u, const struct wt_thread *t)
{
	for (uint64_t a = (t->sp + 15) & ~15ull; a + 16 <= t->sp + t->len; a += 16) {
		uint64_t next, ra, ra2, next2;

		if (!wt_word(t, a, &next) || !wt_word(t, a + 8, &ra) || next <= a ||
		    next >= t->sp + t->len || (next & 15) || !wt_in_module(u, ra))
			continue;
		/*
		 * One more link: a return address next to the saved frame pointer
		 * too (what that frame saved may be anything: libc keeps no frame
		 * pointers), or a saved 0 that ends the chain (the thread's start).
		 */
		if (!wt_word(t, next + 8, &ra2) || !wt_word(t, next, &next2))
			continue;
		if (next2 == 0 || wt_in_module(u, ra2))
			return a;
	}
	return 0;
}

static pid_t wt_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	return 0; /* threads are asked for by tid only (get_thread) */
}

static bool wt_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct wt_unwinder *u = arg;

	if (!u->cur || u->cur->tid != tid)
		return false;
	*thread_argp = u;
	return true;
}

static bool wt_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct wt_unwinder *u = arg;
	uint64_t v;

	if (!u->cur || !wt_word(u->cur, addr, &v))
		return false;
	*result = v;
	return true;
}

static bool wt_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct wt_unwinder *u = arg;
	const struct wt_thread *t = u->cur;
#if defined(__x86_64__)
	Dwarf_Word sp = t->sp, fp = u->fp;

	/* DWARF numbers: 6 rbp, 7 rsp; the pc apart. */
	if (!dwfl_thread_state_registers(thread, 7, 1, &sp))
		return false;
	if (fp && !dwfl_thread_state_registers(thread, 6, 1, &fp))
		return false;
	dwfl_thread_state_register_pc(thread, t->pc);
	return true;
#else
	(void)thread;
	(void)t;
	return false;
#endif
}

static const Dwfl_Thread_Callbacks wt_thread_cb = {
	.next_thread = wt_next_thread,
	.get_thread = wt_get_thread,
	.memory_read = wt_memory_read,
	.set_initial_registers = wt_set_initial_registers,
};

int wt_unwinder_new(const struct rip_module *mods, size_t n, const char *sysroot,
		    struct wt_unwinder **out)
{
	struct wt_unwinder *u = calloc(1, sizeof(*u));
	int reported = 0;

	if (!u)
		return -ENOMEM;
	u->debuginfo_path = strdup("-:.debug:/usr/lib/debug");
	u->cb.find_elf = dwfl_build_id_find_elf;
	u->cb.find_debuginfo = symcache_find_safe; /* the binaries may be anyone's */
	u->cb.section_address = dwfl_offline_section_address;
	u->cb.debuginfo_path = &u->debuginfo_path;
	u->mods = mods;
	u->nmods = n;
	u->dwfl = dwfl_begin(&u->cb);
	if (!u->dwfl || !u->debuginfo_path) {
		wt_unwinder_free(u);
		return -ENOMEM;
	}
	dwfl_report_begin(u->dwfl);
	for (size_t i = 0; i < n; i++) {
		const struct rip_module *m = &mods[i];
		char path[PATH_MAX + RIP_MODULE_PATH_MAX];
		size_t len = strnlen(m->path, sizeof(m->path));
		Dwfl_Module *dm;
		void **ud;
		int fd;

		if ((m->flags & (RIP_MOD_VDSO | RIP_MOD_UNLOADED)) || !len ||
		    len >= sizeof(m->path) || m->path[0] != '/' || m->hi <= m->lo)
			continue;
		snprintf(path, sizeof(path), "%s%.*s", sysroot ? sysroot : "", (int)len, m->path);
		/*
		 * A regular file only, as sym.c checks, and libdw reads the
		 * descriptor checked, not the name again: a FIFO swapped in for
		 * it must not hang libdw's open, and a device is never opened.
		 */
		fd = rr_open_regular(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			continue;
		/* ET_DYN: placed at bias + p_vaddr; ET_EXEC: at its own p_vaddr (as sym.c). */
		dm = dwfl_report_elf(u->dwfl, path, path, fd, m->bias, true);
		if (dm && dwfl_module_info(dm, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
			*ud = u->debuginfo_path; /* symcache_find_safe's search path */
		if (dm)
			reported++;
		else
			close(fd); /* libdw's when taken */
	}
	dwfl_report_end(u->dwfl, NULL, NULL);
	*out = u;
	(void)reported; /* none: every unwind stops at the pc */
	return 0;
}

void wt_unwinder_free(struct wt_unwinder *u)
{
	if (!u)
		return;
	if (u->dwfl)
		dwfl_end(u->dwfl);
	free(u->debuginfo_path);
	free(u);
}

struct wt_walk {
	uint64_t *pcs;
	int n, max;
	bool first;
};

static int wt_frame(Dwfl_Frame *state, void *arg)
{
	struct wt_walk *w = arg;
	Dwarf_Addr pc;
	bool act;

	if (!dwfl_frame_pc(state, &pc, &act) || !pc)
		return DWARF_CB_ABORT;
	/* The first frame is the thread's pc itself: wt_unwind put it in already. */
	if (w->first) {
		w->first = false;
		return DWARF_CB_OK;
	}
	w->pcs[w->n++] = pc;
	return w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int wt_unwind(struct wt_unwinder *u, const struct wt_thread *t, uint64_t *pcs, int max)
{
	struct wt_walk w = { pcs, 1, max, true };

	if (max < 1)
		return -EINVAL;
	pcs[0] = t->pc;
	if (!t->have_copy)
		return -ENODATA;
#if !defined(__x86_64__)
	return -ENOTSUP;
#else
	if (!u->attached) {
		/* pid 1 stands in: only our callbacks are used, never /proc or ptrace. */
		if (!dwfl_attach_state(u->dwfl, NULL, 1, &wt_thread_cb, u))
			return 1;
		u->attached = true;
	}
	u->cur = t;
	u->fp = wt_guess_fp(u, t);
	if (max > 1)
		dwfl_getthread_frames(u->dwfl, t->tid, wt_frame, &w);
	u->cur = NULL;
	return w.n;
#endif
}

/* ---- system call names ---- */

#define WT_SC(n)                                                                                   \
	{                                                                                          \
		__NR_##n, #n                                                                       \
	}
static const struct {
	long nr;
	const char *name;
} wt_syscalls[] = {
	WT_SC(read),	       WT_SC(write),
	WT_SC(close),	       WT_SC(openat),
	WT_SC(readv),	       WT_SC(writev),
	WT_SC(pread64),	       WT_SC(pwrite64),
	WT_SC(preadv),	       WT_SC(pwritev),
	WT_SC(ppoll),	       WT_SC(pselect6),
	WT_SC(epoll_pwait),    WT_SC(futex),
	WT_SC(nanosleep),      WT_SC(clock_nanosleep),
	WT_SC(accept4),	       WT_SC(connect),
	WT_SC(recvfrom),       WT_SC(recvmsg),
	WT_SC(recvmmsg),       WT_SC(sendto),
	WT_SC(sendmsg),	       WT_SC(sendmmsg),
	WT_SC(wait4),	       WT_SC(waitid),
	WT_SC(rt_sigsuspend),  WT_SC(rt_sigtimedwait),
	WT_SC(io_uring_enter), WT_SC(io_getevents),
	WT_SC(msgrcv),	       WT_SC(msgsnd),
	WT_SC(semtimedop),     WT_SC(flock),
	WT_SC(fcntl),	       WT_SC(ioctl),
	WT_SC(fsync),	       WT_SC(fdatasync),
	WT_SC(splice),	       WT_SC(tee),
	WT_SC(sendfile),       WT_SC(mq_timedreceive),
	WT_SC(mq_timedsend),   WT_SC(sched_yield),
	WT_SC(getrandom),      WT_SC(msync),
	WT_SC(mmap),	       WT_SC(munmap),
	WT_SC(madvise),	       WT_SC(exit),
	WT_SC(exit_group),     WT_SC(execve),
	WT_SC(clone),	       WT_SC(sync),
	WT_SC(epoll_pwait2),   WT_SC(futex_waitv),
	WT_SC(io_pgetevents),
#ifdef __NR_poll
	WT_SC(poll),
#endif
#ifdef __NR_select
	WT_SC(select),
#endif
#ifdef __NR_epoll_wait
	WT_SC(epoll_wait),
#endif
#ifdef __NR_accept
	WT_SC(accept),
#endif
#ifdef __NR_pause
	WT_SC(pause),
#endif
#ifdef __NR_open
	WT_SC(open),
#endif
#ifdef __NR_semop
	WT_SC(semop),
#endif
};

const char *wt_syscall_name(long nr)
{
	for (size_t i = 0; i < sizeof(wt_syscalls) / sizeof(wt_syscalls[0]); i++)
		if (wt_syscalls[i].nr == nr)
			return wt_syscalls[i].name;
	return NULL;
}
