// SPDX-License-Identifier: Apache-2.0
/*
 * preload/fnpatch.c - the preload library's part in tracing functions
 * built with -fpatchable-function-entry (librip's lib/patch.c does the
 * patching and holds the trampolines):
 *
 *  - the watcher thread serves the requests of rip enable and rip disable
 *    (rip_pl_fn_serve): hdr.patch_req moved past patch_done, the list of
 *    sites waits in PATH.patch next to the ring file; its answer is
 *    patch_err, patch_ok, patch_failed, patch_on, then patch_done (release)
 *    and a wake of its futex.  The list was made by rip with the symbols
 *    of the program's binaries (names are never read in the process);
 *    it must be a regular file of this user, of the size its header says.
 *
 *  - the unwinder's entry points (_Unwind_RaiseException,
 *    _Unwind_Resume_or_Rethrow, _Unwind_ForcedUnwind, which exceptions and
 *    thread cancellation go through) first put the thread's real return
 *    addresses back where librip put its trampoline, so that the unwinder
 *    walks real frames: the calls it unwinds are seen leaving by the
 *    repair of the shadow stack, not by the trampoline.
 *
 *  - a catch block's start (__cxa_begin_catch, which every C++ catch calls
 *    first): the frames below the catching one are gone, whether their
 *    exit hooks ran (C++ code built with -finstrument-functions) or not
 *    (C frames, patched functions): the shadow stack drops them now, and
 *    the patched frames that live on get the trampoline back.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <unwind.h>

#include <rip.h>

#include "common.h"
#include "watch.h"


/* Read the request's list; its addresses (a mapping to unmap) into *out.  0 or -errno. */
static int rip_pl_fn_list(const char *path, struct rip_patch_list *l, uint64_t **out, size_t *len)
{
	struct stat st;
	void *m;
	int fd, err = 0;

	*out = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (size_t)st.st_size < sizeof(*l) || pread(fd, l, sizeof(*l), 0) != (ssize_t)sizeof(*l) ||
	    memcmp(l->magic, RIP_PATCH_MAGIC, sizeof(l->magic)) || l->n > RIP_PATCH_MAX ||
	    (size_t)st.st_size != sizeof(*l) + (size_t)l->n * 8) {
		err = -EINVAL;
		goto out;
	}
	if (l->n) {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			err = -errno;
			goto out;
		}
		*out = (uint64_t *)((char *)m + sizeof(*l));
		*len = (size_t)st.st_size;
	}
out:
	close(fd);
	return err;
}

void rip_pl_fn_serve(struct rip_file_hdr *h)
{
	uint32_t req = __atomic_load_n(&h->patch_req, __ATOMIC_ACQUIRE), ok = 0, failed = 0;
	struct rip_patch_list l;
	char path[PATH_MAX];
	uint64_t *addrs = NULL;
	size_t len = 0;
	int err;

	if (req == __atomic_load_n(&h->patch_done, __ATOMIC_RELAXED))
		return;
	err = rip_ring_path(path, sizeof(path) - 6);
	if (!err) {
		strcat(path, ".patch");
		err = rip_pl_fn_list(path, &l, &addrs, &len);
	}
	if (!err)
		err = __rip_fn_patch(addrs, l.n, l.op == 1, &ok, &failed);
	if (len)
		munmap((char *)addrs - sizeof(l), len);
	__atomic_store_n(&h->patch_err, -err, __ATOMIC_RELAXED);
	__atomic_store_n(&h->patch_ok, ok, __ATOMIC_RELAXED);
	__atomic_store_n(&h->patch_failed, failed, __ATOMIC_RELAXED);
	__atomic_store_n(&h->patch_on, __rip_fn_patched(), __ATOMIC_RELAXED);
	/* Release: the answer before the word the requester waits on (it acquires). */
	__atomic_store_n(&h->patch_done, req, __ATOMIC_RELEASE);
	syscall(SYS_futex, &h->patch_done, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

/* ---- the unwinder ---------------------------------------------------------------------- */

RIP_PL_EXPORT _Unwind_Reason_Code _Unwind_RaiseException(struct _Unwind_Exception *e)
{
	static _Unwind_Reason_Code (*real)(struct _Unwind_Exception *);

	__rip_fn_unwinding();
	if (!RIP_PL_REAL(real, "_Unwind_RaiseException"))
		return _URC_FATAL_PHASE1_ERROR;
	return real(e);
}

RIP_PL_EXPORT _Unwind_Reason_Code _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *e)
{
	static _Unwind_Reason_Code (*real)(struct _Unwind_Exception *);

	__rip_fn_unwinding();
	if (!RIP_PL_REAL(real, "_Unwind_Resume_or_Rethrow"))
		return _URC_FATAL_PHASE1_ERROR;
	return real(e);
}

RIP_PL_EXPORT _Unwind_Reason_Code _Unwind_ForcedUnwind(struct _Unwind_Exception *e,
						       _Unwind_Stop_Fn stop, void *arg)
{
	static _Unwind_Reason_Code (*real)(struct _Unwind_Exception *, _Unwind_Stop_Fn, void *);

	__rip_fn_unwinding();
	if (!RIP_PL_REAL(real, "_Unwind_ForcedUnwind"))
		return _URC_FATAL_PHASE1_ERROR;
	return real(e, stop, arg);
}

/* The catching frame's sp: this hook's cfa (its caller's sp at the call). */
RIP_PL_EXPORT void *__cxa_begin_catch(void *e);
RIP_PL_EXPORT void *__cxa_begin_catch(void *e)
{
	static void *(*real)(void *);

	__rip_fn_caught((uintptr_t)__builtin_frame_address(0) + 2 * sizeof(void *));
	if (!RIP_PL_REAL(real, "__cxa_begin_catch"))
		abort(); /* a catch with no C++ runtime: cannot be */
	return real(e);
}
