/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/patchable.c - the patchable entries of a process's binaries, and
 * the request to patch them (patchable.h).
 *
 * A binary built with -fpatchable-function-entry lists the address of
 * every function's nops in its section __patchable_function_entries, one
 * 8-byte word each: in an executable that is not position-independent the
 * word holds the address; in a shared object or a PIE it is 0 and an
 * R_X86_64_RELATIVE relocation in .rela.dyn gives it (its addend), which
 * the module's load bias turns into the address in the process.  The
 * file's GNU build-id must be the one the module map recorded: the
 * addresses of another build would name other bytes (the watcher also
 * checks that each site holds nops it knows, and leaves the others).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/futex.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "read/patchable.h"

#define RPT_SECTION "__patchable_function_entries"
#define RPT_POLL_NS 100000000 /* while waiting, whether the process still lives */

static int rpt_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int rpt_add(struct rpt_sites *s, size_t *cap, uint64_t a)
{
	if (s->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 1024;
		uint64_t *nv = realloc(s->addr, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		s->addr = nv;
		*cap = nc;
	}
	s->addr[s->n++] = a;
	return 0;
}

/* Does e's GNU build-id equal id (len bytes)?  A module that recorded none matches any. */
static bool rpt_build_id_ok(Elf *e, const uint8_t *id, uint32_t len)
{
	Elf_Scn *scn = NULL;

	if (!len)
		return true;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((const char *)d->d_buf + noff, "GNU", 4))
				return nh.n_descsz == len &&
				       !memcmp((const char *)d->d_buf + doff, id, len);
		}
	}
	return false; /* it recorded one, the file has none: another file */
}

/* The sites of one ELF file, loaded with bias.  0, 1 when it has none, or -errno. */
static int rpt_elf(Elf *e, uint64_t bias, struct rpt_sites *out, size_t *cap)
{
	Elf_Scn *scn = NULL, *sec = NULL;
	GElf_Shdr sh, ssh = { 0 };
	GElf_Ehdr eh;
	Elf_Data *d;
	size_t shstr, nwords;
	uint64_t *add = NULL; /* per word of the section: the addend of its R_X86_64_RELATIVE */
	int ret = 0;

	if (!gelf_getehdr(e, &eh) || elf_getshdrstrndx(e, &shstr))
		return -EBADMSG;
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(e, shstr, sh.sh_name);
		if (name && !strcmp(name, RPT_SECTION) && sh.sh_type == SHT_PROGBITS &&
		    (sh.sh_flags & SHF_ALLOC)) {
			sec = scn;
			ssh = sh;
		}
	}
	d = sec ? elf_getdata(sec, NULL) : NULL;
	if (!d || !d->d_buf)
		return 1; /* none, SHT_NOBITS or empty */
	nwords = (d->d_size < ssh.sh_size ? d->d_size : ssh.sh_size) / 8;
	if (!nwords)
		return 1;
	add = calloc(nwords, sizeof(*add));
	if (!add)
		return -ENOMEM;
	/* The relocations that fill the section's words (a PIE, a shared object). */
	scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *rd;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    !(rd = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;

			if (!gelf_getrela(rd, (int)i, &r) ||
			    GELF_R_TYPE(r.r_info) != R_X86_64_RELATIVE ||
			    r.r_offset < ssh.sh_addr || r.r_offset - ssh.sh_addr >= nwords * 8 ||
			    (r.r_offset - ssh.sh_addr) % 8)
				continue;
			add[(r.r_offset - ssh.sh_addr) / 8] = (uint64_t)r.r_addend;
		}
	}
	for (size_t i = 0; i < nwords; i++) {
		uint64_t v;

		memcpy(&v, (const char *)d->d_buf + i * 8, 8);
		if (!v)
			v = add[i];
		if (!v)
			continue;
		ret = rpt_add(out, cap, eh.e_type == ET_DYN ? v + bias : v);
		if (ret)
			break;
	}
	free(add);
	return ret;
}

int rpt_read_sites(const struct rip_module *mods, size_t n, const char *sysroot,
		   struct rpt_sites *out, char *err, size_t errlen)
{
	size_t cap = 0;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	for (size_t i = 0; i < n; i++) {
		const struct rip_module *m = &mods[i];
		char path[PATH_MAX];
		Elf *e;
		int fd, r;

		if ((m->flags & (RIP_MOD_UNLOADED | RIP_MOD_VDSO)) || !m->path[0] || m->hi <= m->lo)
			continue;
		if (snprintf(path, sizeof(path), "%s%s", sysroot ? sysroot : "", m->path) >=
		    (int)sizeof(path))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			out->unreadable++;
			continue;
		}
		e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		if (!e || elf_kind(e) != ELF_K_ELF ||
		    !rpt_build_id_ok(e, m->build_id,
				     m->build_id_len <= RIP_BUILD_ID_MAX ? m->build_id_len : 0)) {
			out->unreadable += e && elf_kind(e) == ELF_K_ELF;
			if (e)
				elf_end(e);
			close(fd);
			continue;
		}
		r = rpt_elf(e, m->bias, out, &cap);
		elf_end(e);
		close(fd);
		if (r < 0 && r != -EBADMSG) {
			ret = rr_fail(err, errlen, r, "out of memory");
			break;
		}
		out->modules += r == 0;
	}
	if (ret) {
		rpt_sites_free(out);
		return ret;
	}
	if (out->n)
		qsort(out->addr, out->n, sizeof(*out->addr), rpt_cmp);
	return 0;
}

void rpt_sites_free(struct rpt_sites *s)
{
	free(s->addr);
	memset(s, 0, sizeof(*s));
}

/* ---- the request ---- */

/* Write the list file path: the header and the addresses.  0 or -errno. */
static int rpt_write_list(const char *path, bool on, const uint64_t *addr, size_t n)
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
static bool rpt_answered(struct rip_file_hdr *h, uint32_t req, uint32_t *done,
			 struct rpt_answer *out, bool *shrank)
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
static int rpt_ask(struct rr_file *f, int timeout_ms, struct rpt_answer *out)
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
	while (!rpt_answered(h, req, &done, out, &shrank) && !shrank) {
		int64_t left = end - rr_mono_ns();
		struct timespec ts;

		if (left <= 0)
			break;
		if (!rr_alive(f)) {
			out->gone = true; /* died (of the patching, maybe): no answer comes */
			break;
		}
		if (left > RPT_POLL_NS)
			left = RPT_POLL_NS;
		ts.tv_sec = (time_t)(left / 1000000000);
		ts.tv_nsec = (long)(left % 1000000000);
		/* A page gone past the file's end makes this EFAULT, not SIGBUS. */
		syscall(SYS_futex, &h->patch_done, FUTEX_WAIT, done, &ts, NULL, 0);
	}
	return shrank ? -EIO : 0;
}

int rpt_request(struct rr_file *f, bool on, const uint64_t *addr, size_t n, int timeout_ms,
		struct rpt_answer *out, char *err, size_t errlen)
{
	char path[PATH_MAX];
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
	ret = rr_map_writable(f, err, errlen);
	if (ret)
		return ret;
	if (snprintf(path, sizeof(path), "%s.patch", f->path) >= (int)sizeof(path))
		return rr_fail(err, errlen, -ENAMETOOLONG, "%s: path too long", f->path);
	ret = rpt_write_list(path, on, addr, n);
	if (ret)
		return rr_fail(err, errlen, ret, "%s: %s", path, strerror(-ret));
	ret = rpt_ask(f, timeout_ms, out);
	unlink(path);
	if (ret)
		return rr_fail(err, errlen, ret, "%s: the file shrank while being written",
			       f->path);
	return 0;
}
