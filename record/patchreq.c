/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/patchreq.c - the request that has a traced process patch the
 * entries of its functions built with -fpatchable-function-entry, or
 * unpatch them (patchreq.h): the list of sites written next to its ring
 * file (PATH.patch), hdr.patch_req bumped and the watcher woken, the
 * answer awaited in the patch words.  The watcher thread of
 * librip-preload.so serves it (preload/fnpatch.c, lib/patch.c); the sites
 * come from read/patchable.c.  This writes into a traced process (a file
 * it reads and acts on, a word of its ring file that makes it change its
 * code), which is recording's business, not reading's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "record/patchreq.h"

#define PRQ_POLL_NS 100000000 /* while waiting, whether the process still lives */

/* Write the list file path: the header and the addresses.  0 or -errno. */
static int prq_write_list(const char *path, bool on, const uint64_t *addr, size_t n)
{
	struct rip_patch_list l = { .op = on ? 1 : 0, .n = (uint32_t)n };
	FILE *f;
	int fd, ok;

	memcpy(l.magic, RIP_PATCH_MAGIC, sizeof(l.magic));
	unlink(path); /* a list a request of ours left behind (killed meanwhile) */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	ok = fwrite(&l, sizeof(l), 1, f) == 1 && (!n || fwrite(addr, 8, n, f) == n);
	if (fclose(f) || !ok) {
		unlink(path);
		return -EIO;
	}
	return 0;
}

/*
 * The answer to request req, if it came (true); under the SIGBUS guard
 * (*shrank: the file shrank).
 */
static bool prq_answered(struct rip_file_hdr *h, uint32_t req, uint32_t *done,
			 struct prq_answer *out, bool *shrank)
{
	sigjmp_buf jb;

	if (rr_guard_enter(&jb)) {
		*shrank = true;
		return false;
	}
	/* Acquire: pairs with the watcher's release store of patch_done. */
	*done = __atomic_load_n(&h->patch_done, __ATOMIC_ACQUIRE);
	if ((int32_t)(*done - req) >= 0) {
		out->done = true;
		out->err = __atomic_load_n(&h->patch_err, __ATOMIC_RELAXED);
		out->ok = __atomic_load_n(&h->patch_ok, __ATOMIC_RELAXED);
		out->failed = __atomic_load_n(&h->patch_failed, __ATOMIC_RELAXED);
		out->on = __atomic_load_n(&h->patch_on, __ATOMIC_RELAXED);
	}
	rr_guard_leave();
	return out->done;
}

/* Bump the request, wait for the answer.  0 or -EIO (the file shrank). */
static int prq_ask(struct rr_file *f, int timeout_ms, struct prq_answer *out)
{
	struct rip_file_hdr *h = (struct rip_file_hdr *)f->wmap;
	int64_t end = rr_mono_ns() + (int64_t)timeout_ms * 1000000;
	bool shrank = false;
	uint32_t req, done;
	sigjmp_buf jb;

	if (rr_guard_enter(&jb))
		return -EIO;
	/* Seq-cst: the request (the list written before) ahead of the wake. */
	req = __atomic_add_fetch(&h->patch_req, 1, __ATOMIC_SEQ_CST);
	/* The watcher sleeps on watch_req: wake it there (a sweep comes with it). */
	__atomic_add_fetch(&h->watch_req, 1, __ATOMIC_SEQ_CST);
	rr_guard_leave();
	syscall(SYS_futex, &h->watch_req, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
	while (!prq_answered(h, req, &done, out, &shrank) && !shrank) {
		int64_t left = end - rr_mono_ns();
		struct timespec ts;

		if (left <= 0)
			break;
		if (!rr_alive(f)) {
			out->gone = true; /* died (of the patching, maybe): no answer comes */
			break;
		}
		if (left > PRQ_POLL_NS)
			left = PRQ_POLL_NS;
		ts.tv_sec = (time_t)(left / 1000000000);
		ts.tv_nsec = (long)(left % 1000000000);
		/* A page gone past the file's end makes this EFAULT, not SIGBUS. */
		syscall(SYS_futex, &h->patch_done, FUTEX_WAIT, done, &ts, NULL, 0);
	}
	return shrank ? -EIO : 0;
}

int prq_request(struct rr_file *f, bool on, const uint64_t *addr, size_t n, int timeout_ms,
		struct prq_answer *out, char *err, size_t errlen)
{
	char path[PATH_MAX], who[128];
	uint32_t status = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	if (n > RIP_PATCH_MAX)
		return rr_fail(err, errlen, -E2BIG, "%zu functions: at most %u at a time", n,
			       RIP_PATCH_MAX);
	if (f->legacy_raw || f->unpacked ||
	    rr_live_u32(f, offsetof(struct rip_file_hdr, watch_status), &status, err, errlen))
		return rr_fail(err, errlen, -ESRCH, "%s: not the file of a live process", f->path);
	if (status != RIP_WATCHER_RUNNING)
		return rr_fail(err, errlen, -ESRCH,
			       "no watcher thread runs in the process, and it patches functions: "
			       "run the program under rip run (librip-preload.so), with threads");
	/*
	 * The watcher takes a list only of its own user (preload/fnpatch.c), and
	 * the path of another user's file is theirs to redirect (a directory
	 * swapped for a link): nothing is written or removed there.
	 */
	if (f->st.st_uid != geteuid())
		return rr_fail(err, errlen, -EPERM,
			       "%s: owned by %s: its process takes a list of functions to patch "
			       "only from its own user: run this as that user",
			       f->path, rr_user_name(f->st.st_uid, who, sizeof(who)));
	ret = rr_map_writable(f, err, errlen);
	if (ret)
		return ret;
	if (snprintf(path, sizeof(path), "%s.patch", f->path) >= (int)sizeof(path))
		return rr_fail(err, errlen, -ENAMETOOLONG, "%s: path too long", f->path);
	ret = prq_write_list(path, on, addr, n);
	if (ret)
		return rr_fail(err, errlen, ret, "%s: %s", path, strerror(-ret));
	ret = prq_ask(f, timeout_ms, out);
	unlink(path);
	if (ret)
		return rr_fail(err, errlen, ret, "%s: the file shrank while being written",
			       f->path);
	return 0;
}
