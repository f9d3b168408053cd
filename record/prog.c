/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/prog.c - the program rip run is about to run, looked at first
 * (record/prog.h): its ELF program headers (an interpreter, or libraries it
 * needs: else it is static), its mode bits and capabilities (secure
 * execution), a script's interpreter in its place, and librip's magic in a
 * static program's bytes.  Read as execve will see them, never trusted
 * beyond that: what cannot be read or is not understood is left to execve.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <rip/abi.h>

#include "record/prog.h"

/* ---- statically linked programs ---------------------------------------------------- */

int prog_which(const char *prog, char *buf, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(prog, '/'))
		return snprintf(buf, len, "%s", prog) < (int)len ? 0 : -ENAMETOOLONG;
	if (!path)
		path = "/bin:/usr/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		if (snprintf(buf, len, "%.*s%s%s", (int)n, n ? path : ".", "/", prog) < (int)len &&
		    access(buf, X_OK) == 0)
			return 0;
		path += n + (path[n] == ':');
	}
	return -ENOENT;
}

/*
 * Does the ELF file at fd load a dynamic linker, or need shared libraries?
 * 1 yes, 0 no (static), -1 not an ELF file we understand.
 */
static int prog_elf_dynamic(int fd)
{
	unsigned char id[EI_NIDENT];
	Elf64_Ehdr eh;
	bool is64;

	if (pread(fd, id, sizeof(id), 0) != (ssize_t)sizeof(id) || memcmp(id, ELFMAG, SELFMAG))
		return -1;
	is64 = id[EI_CLASS] == ELFCLASS64;
	if (is64) {
		if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
			return -1;
	} else {
		Elf32_Ehdr e32;

		if (id[EI_CLASS] != ELFCLASS32 ||
		    pread(fd, &e32, sizeof(e32), 0) != (ssize_t)sizeof(e32))
			return -1;
		eh.e_phoff = e32.e_phoff;
		eh.e_phnum = e32.e_phnum;
		eh.e_phentsize = e32.e_phentsize;
	}
	if (eh.e_phentsize != (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) || eh.e_phnum > 4096)
		return -1;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		uint64_t type, off, size;
		off_t at = (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize);

		if (is64) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), at) != (ssize_t)sizeof(ph))
				return -1;
			type = ph.p_type, off = ph.p_offset, size = ph.p_filesz;
		} else {
			Elf32_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), at) != (ssize_t)sizeof(ph))
				return -1;
			type = ph.p_type, off = ph.p_offset, size = ph.p_filesz;
		}
		if (type == PT_INTERP)
			return 1;
		if (type != PT_DYNAMIC)
			continue;
		/* static-pie has a dynamic section but needs nothing */
		for (uint64_t o = 0; o + (is64 ? 16 : 8) <= size && o < (1u << 20);
		     o += is64 ? 16 : 8) {
			int64_t tag;

			if (is64) {
				Elf64_Dyn d;

				if (pread(fd, &d, sizeof(d), (off_t)(off + o)) !=
				    (ssize_t)sizeof(d))
					break;
				tag = d.d_tag;
			} else {
				Elf32_Dyn d;

				if (pread(fd, &d, sizeof(d), (off_t)(off + o)) !=
				    (ssize_t)sizeof(d))
					break;
				tag = d.d_tag;
			}
			if (tag == DT_NEEDED)
				return 1;
			if (tag == DT_NULL)
				break;
		}
	}
	return 0;
}

/*
 * Will the kernel run the program at path in secure-execution mode
 * (AT_SECURE), where the dynamic loader ignores an LD_PRELOAD path?  That is
 * when exec changes our credentials: set-user-ID to another user,
 * set-group-ID (with group execute) to another group, or file capabilities
 * for a user other than root; not on a file system mounted nosuid.  What it
 * is, for the message, or NULL.
 */
static const char *prog_secure_exec(const char *path)
{
	struct statvfs vfs;
	struct stat st;

	if (stat(path, &st) || (statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOSUID)))
		return NULL;
	if ((st.st_mode & S_ISUID) && st.st_uid != getuid())
		return st.st_uid ? "set-user-ID (to its owner)" : "set-user-ID root";
	if ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) && st.st_gid != getgid())
		return "set-group-ID";
	if (getuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0)
		return "given file capabilities (setcap)";
	return NULL;
}

bool prog_has_librip(const char *path)
{
	static char buf[1 << 20];
	const size_t tail = sizeof(RIP_MAGIC) - 1; /* kept from a chunk for a magic across two */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t have = 0;
	bool found = false;
	ssize_t n = 0;

	if (fd < 0)
		return true; /* cannot tell: say nothing yet */
	while (!found && (n = read(fd, buf + have, sizeof(buf) - have)) > 0) {
		have += (size_t)n;
		found = memmem(buf, have, RIP_MAGIC, sizeof(RIP_MAGIC)) != NULL;
		if (have > tail) {
			memmove(buf, buf + have - tail, tail);
			have = tail;
		}
	}
	close(fd);
	return found || n < 0;
}

int prog_preloadable(const char *prog, char *why, size_t len, char *path)
{
	char line[PATH_MAX];
	int fd, dyn;

	if (prog_which(prog, path, PATH_MAX))
		return PROG_PRELOADABLE; /* execvp reports it */
	for (int depth = 0; depth < 2; depth++) {
		ssize_t n;

		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return PROG_PRELOADABLE;
		dyn = prog_elf_dynamic(fd);
		n = dyn < 0 ? pread(fd, line, sizeof(line) - 1, 0) : 0;
		close(fd);
		if (dyn == 0) {
			snprintf(why, len,
				 "%s is statically linked: LD_PRELOAD cannot trace it (link it "
				 "dynamically, or link librip and emit events yourself)",
				 depth ? path : prog);
			return PROG_STATIC;
		}
		if (dyn > 0) {
			const char *what = prog_secure_exec(path);

			if (!what)
				return PROG_PRELOADABLE;
			snprintf(
				why, len,
				"%s is %s: the dynamic loader ignores LD_PRELOAD for it (secure "
				"execution), so rip cannot trace it as you; run rip as the user it "
				"becomes (root for file capabilities), or trace a copy without that "
				"privilege",
				depth ? path : prog, what);
			return PROG_SECURE;
		}
		if (n < 3 || line[0] != '#' || line[1] != '!')
			return PROG_PRELOADABLE; /* execve's to judge (execvp runs it with sh) */
		/* #!interpreter: check that instead */
		line[n] = 0;
		{
			char *p = line + 2, *end;

			p += strspn(p, " \t");
			end = p + strcspn(p, " \t\n");
			*end = 0;
			if (!*p || snprintf(path, PATH_MAX, "%s", p) >= PATH_MAX)
				return PROG_PRELOADABLE;
		}
	}
	return PROG_PRELOADABLE;
}

/* ---- a program with an allocator of its own ---------------------------------------- */

/*
 * The C allocator's functions, of which a program that defines one in its
 * dynamic symbol table takes every call (its own, libc's, every library's)
 * before LD_PRELOAD's: the executable comes first in the loader's lookup.
 */
static const char *const prog_alloc_fns[] = { "malloc", "calloc", "realloc", "free" };

/* Is the NUL-terminated name at strtab offset off (in a table of n bytes) one of them? */
static const char *prog_alloc_name(int fd, uint64_t strtab, uint64_t n, uint64_t off)
{
	char name[8];

	if (off >= n || n - off < 5)
		return NULL;
	memset(name, 0, sizeof(name));
	if (pread(fd, name, n - off < sizeof(name) ? n - off : sizeof(name),
		  (off_t)(strtab + off)) <= 0)
		return NULL;
	for (size_t i = 0; i < sizeof(prog_alloc_fns) / sizeof(prog_alloc_fns[0]); i++)
		if (!strncmp(name, prog_alloc_fns[i], sizeof(name)) &&
		    strlen(prog_alloc_fns[i]) < sizeof(name))
			return prog_alloc_fns[i];
	return NULL;
}

const char *prog_own_allocator(const char *prog, char *path)
{
	const char *found = NULL;
	Elf64_Ehdr eh;
	Elf64_Shdr sh, st;
	int fd;

	if (prog_which(prog, path, PATH_MAX))
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	/* 64-bit ELF only: what cannot be read is not known, and nothing is said */
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr))
		goto out;
	for (unsigned i = 0; i < eh.e_shnum && !found; i++) {
		if (pread(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff + (uint64_t)i * sizeof(sh))) !=
			    (ssize_t)sizeof(sh) ||
		    sh.sh_type != SHT_DYNSYM || sh.sh_entsize != sizeof(Elf64_Sym) ||
		    sh.sh_link >= eh.e_shnum)
			continue;
		if (pread(fd, &st, sizeof(st),
			  (off_t)(eh.e_shoff + (uint64_t)sh.sh_link * sizeof(st))) !=
		    (ssize_t)sizeof(st))
			continue;
		/* the symbols 256 at a time, at most 2^20 of them */
		for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym) && k < (1u << 20) && !found;
		     k += 256) {
			Elf64_Sym sym[256];
			ssize_t n = pread(fd, sym, sizeof(sym),
					  (off_t)(sh.sh_offset + k * sizeof(sym[0])));

			for (size_t j = 0; n > 0 && j < (size_t)n / sizeof(sym[0]) && !found; j++) {
				unsigned type = ELF64_ST_TYPE(sym[j].st_info);

				if (k + j >= sh.sh_size / sizeof(Elf64_Sym) ||
				    sym[j].st_shndx == SHN_UNDEF ||
				    (type != STT_FUNC && type != STT_GNU_IFUNC) ||
				    ELF64_ST_BIND(sym[j].st_info) == STB_LOCAL)
					continue;
				found = prog_alloc_name(fd, st.sh_offset, st.sh_size,
							sym[j].st_name);
			}
			if (n <= 0)
				break;
		}
	}
out:
	close(fd);
	return found;
}

int prog_find_lib(const char *name, char *buf, size_t len)
{
	static const char *const rel[] = { "", "../lib/", "../lib64/", "../" };
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -ENOENT;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char cand[PATH_MAX + 32];

		snprintf(cand, sizeof(cand), "%s/%s%s", self, rel[i], name);
		if (access(cand, R_OK) == 0 && realpath(cand, buf) && strlen(buf) < len)
			return 0;
	}
	return -ENOENT;
}

#ifndef RIP_MODULE_DIR
#define RIP_MODULE_DIR "/usr/local/lib/rip/modules"
#endif

int prog_module_dirs(char dirs[][4096])
{
	static const char *const rel[] = { "modules", "../lib/rip/modules",
					   "../lib64/rip/modules" };
	char self[PATH_MAX], cand[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;
	int k = 0;

	if (n > 0) {
		self[n] = 0;
		slash = strrchr(self, '/');
		if (slash)
			*slash = 0;
		for (size_t i = 0; slash && i < sizeof(rel) / sizeof(rel[0]); i++) {
			snprintf(cand, sizeof(cand), "%s/%s", self, rel[i]);
			if (!access(cand, R_OK | X_OK) && realpath(cand, dirs[k]))
				k++;
		}
	}
	if (!access(RIP_MODULE_DIR, R_OK | X_OK) && realpath(RIP_MODULE_DIR, dirs[k])) {
		for (int i = 0; i < k; i++)
			if (!strcmp(dirs[i], dirs[k]))
				return k; /* the same directory, by another path */
		k++;
	}
	return k;
}

int prog_find_module(const char *spec, char *buf, size_t len)
{
	char dirs[PROG_MODULE_DIRS][4096], cand[4096 + 80];
	int n;

	if (strchr(spec, '/')) {
		if (access(spec, R_OK) || !realpath(spec, cand) || strlen(cand) >= len)
			return -ENOENT;
		strcpy(buf, cand);
		return 0;
	}
	if (!*spec || strlen(spec) > 64)
		return -ENOENT;
	n = prog_module_dirs(dirs);
	for (int i = 0; i < n; i++) {
		snprintf(cand, sizeof(cand), "%.4095s/%.64s.so", dirs[i], spec);
		if (!access(cand, R_OK) && strlen(cand) < len) {
			strcpy(buf, cand);
			return 0;
		}
	}
	return -ENOENT;
}

int prog_plan(const char *prog, bool resources, bool preload, bool no_waits, char *lib,
	      size_t liblen, bool *waits, char *why, size_t whylen)
{
	char bin[PATH_MAX];
	int ret = PROG_PLAN_OK, reach;

	*waits = false;
	if (resources && prog_find_lib("librip-preload.so", lib, liblen))
		return PROG_PLAN_NO_PRELOAD;
	if (!resources && preload && prog_find_lib("librip.so", lib, liblen))
		return PROG_PLAN_NO_LIBRIP;
	if ((resources || preload) && prog_preloadable(prog, why, whylen, bin))
		return PROG_PLAN_UNREACHABLE;
	/* Plain rip run: the wait wrappers, where the preload library can go (quietly). */
	if (!resources && !preload && !no_waits &&
	    !prog_find_lib("librip-preload.so", lib, liblen)) {
		reach = prog_preloadable(prog, why, whylen, bin);
		*waits = reach == PROG_PRELOADABLE;
		/* Untraced for sure (librip ignores RIP_* under secure execution too). */
		if (reach == PROG_SECURE || (reach == PROG_STATIC && !prog_has_librip(bin)))
			ret = PROG_PLAN_UNTRACED;
	}
	if (!resources && !preload && !*waits)
		lib[0] = 0;
	return ret;
}
