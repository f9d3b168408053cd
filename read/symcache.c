/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/symcache.c - a cache of separate debug files with their sections
 * inflated, so that compressed debug info is inflated once per build-id
 * instead of on every run of rip.
 *
 * Debian's -dbg packages (libc6-dbg among them) ship .debug files whose
 * DWARF sections are zlib-compressed (SHF_COMPRESSED); libdw inflates every
 * one of them when it opens the file: 60-80 ms for libc alone, more than
 * the rest of a typical `rip leaks`.  libdwfl's find_debuginfo callback is
 * wrapped: when the standard search finds a debug file with compressed
 * sections, an inflated copy is written to
 *
 *	$RIP_DEBUG_CACHE, else $XDG_CACHE_HOME/rip/debug, else ~/.cache/rip/debug
 *	    <build-id in hex>.debug		(0600, in a 0700 directory)
 *
 * and used from the next run on (this one has it open already).  The copy is
 * content-addressed: it is used for a module of that build-id, and only
 * when its own build-id note says so and it holds DWARF with nothing left
 * compressed; anything else in the directory is ignored.  It is written
 * under a temporary name and renamed into place, so that concurrent runs
 * never see half a file.  Debug files over 256 MiB are not copied.
 * RIP_DEBUG_CACHE=0 turns the cache off.  Every failure falls back to the
 * file libdwfl found.
 *
 * The search itself (symcache_find_safe) is libdwfl's standard one made
 * safe for binaries somebody else owns (root reads any user's process):
 * whoever owns a binary and its directory chooses the name its
 * .gnu_debuglink gives and what lies there, a FIFO (libdwfl's open would
 * wait for ever) or a link to a device (opened, then read to its end for
 * the CRC).  Only regular files are opened there.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <zlib.h>

#include <gelf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>

#include "read/ringfile.h"
#include "read/symcache.h"

#define SYMCACHE_BUILD_ID_MAX 64
/* Bigger debug files are read as they are: a copy would cost more than it saves once. */
#define SYMCACHE_FILE_MAX (256ull << 20)

static pthread_once_t symcache_once = PTHREAD_ONCE_INIT;
static char *symcache_dir; /* NULL: no cache */

static void symcache_init(void)
{
	const char *env = getenv("RIP_DEBUG_CACHE"), *base;
	char *dir = NULL;

	if (env && !strcmp(env, "0"))
		return;
	if (env && env[0] == '/') {
		dir = strdup(env);
	} else if ((base = getenv("XDG_CACHE_HOME")) && base[0] == '/') {
		if (asprintf(&dir, "%s/rip/debug", base) < 0)
			dir = NULL;
	} else if ((base = getenv("HOME")) && base[0] == '/') {
		if (asprintf(&dir, "%s/.cache/rip/debug", base) < 0)
			dir = NULL;
	}
	if (dir && rr_mkdirs(dir)) {
		free(dir);
		dir = NULL;
	}
	symcache_dir = dir;
}

/* Does e's build-id note say id? */
static bool symcache_id_is(Elf *e, const unsigned char *id, int len)
{
	const void *bits;
	ssize_t n = dwelf_elf_gnu_build_id(e, &bits);

	return n == len && !memcmp(bits, id, (size_t)len);
}

/* Is e what symcache_write makes: DWARF, and no section left compressed? */
static bool symcache_inflated(Elf *e)
{
	Elf_Scn *scn = NULL;
	size_t strndx;
	bool info = false;

	if (elf_getshdrstrndx(e, &strndx))
		return false;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return false;
		if ((sh.sh_flags & SHF_COMPRESSED) && sh.sh_type != SHT_NOBITS)
			return false;
		name = elf_strptr(e, strndx, sh.sh_name);
		if (name && !strcmp(name, ".debug_info") && sh.sh_type != SHT_NOBITS)
			info = true;
	}
	return info;
}

/* ---- the search by .gnu_debuglink ---- */

/* Files bigger than this are not read whole for their CRC. */
#define SYMCACHE_CRC_MAX (4ull << 30)

/* Is the CRC-32 of the whole file fd want (the one .gnu_debuglink gives)? */
static bool symcache_crc_is(int fd, uint32_t want)
{
	unsigned char *buf = malloc(64 << 10);
	uLong crc = crc32(0, Z_NULL, 0);
	struct stat st;
	off_t off = 0;
	ssize_t n = 0;

	if (!buf || fstat(fd, &st) || (uint64_t)st.st_size > SYMCACHE_CRC_MAX) {
		free(buf);
		return false;
	}
	while (off < st.st_size && (n = pread(fd, buf, 64 << 10, off)) > 0) {
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	free(buf);
	return n >= 0 && (uint32_t)crc == want;
}

/* Is fd the debug file of mod: its build-id if it has one, else the CRC (if not 0). */
static bool symcache_fits(Dwfl_Module *mod, int fd, GElf_Word crc)
{
	const unsigned char *id;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &id, &vaddr);
	Elf *e;
	bool ok;

	if (len <= 0)
		return !crc || symcache_crc_is(fd, crc);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ok = e && elf_kind(e) == ELF_K_ELF && symcache_id_is(e, id, len);
	if (e)
		elf_end(e);
	return ok;
}

/*
 * One place the debug file may be: a regular file only, never the main file
 * again, fit for mod.  Its descriptor (and *name), or -1.
 */
static int symcache_try(Dwfl_Module *mod, char *path, const struct stat *main_st, GElf_Word crc,
			char **name)
{
	struct stat st;
	int fd;

	if (!path)
		return -1;
	fd = rr_open_regular(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0 && (fstat(fd, &st) ||
			(main_st && st.st_dev == main_st->st_dev && st.st_ino == main_st->st_ino) ||
			!symcache_fits(mod, fd, crc))) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0)
		*name = path;
	else
		free(path);
	return fd;
}

/*
 * The debug file .gnu_debuglink names (link), looked for where libdwfl's
 * standard search looks, along search (its debuginfo_path): next to the
 * binary file (dir ""), in a directory under it (a relative dir), under
 * each absolute root at the binary's directory.  -1 when none fits.
 */
static int symcache_by_link(Dwfl_Module *mod, const char *search, const char *file,
			    const char *link, GElf_Word crc, char **name)
{
	char *dir = strdup(file), *slash, *p;
	struct stat main_st;
	bool have_main = !stat(file, &main_st);
	const char *colon;
	int fd = -1;

	if (!dir)
		return -1;
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else
		*(slash == dir ? slash + 1 : slash) = 0;
	for (const char *e = search; fd < 0; e = colon + 1) {
		int n;

		colon = strchr(e, ':');
		n = (int)(colon ? (size_t)(colon - e) : strlen(e));
		if (n && (*e == '+' || *e == '-')) {
			e++;
			n--;
		}
		if (*e == '/' && n) {
			/* The binary's directory under the root, then with its leading parts cut. */
			for (const char *sub = dir; fd < 0 && sub; sub = strchr(sub + 1, '/')) {
				int k = asprintf(&p, "%.*s%s%s/%s", n, e, *sub == '/' ? "" : "/",
						 sub, link);

				fd = symcache_try(mod, k < 0 ? NULL : p,
						  have_main ? &main_st : NULL, crc, name);
			}
		} else {
			if (!n)
				n = asprintf(&p, "%s/%s", dir, link);
			else
				n = asprintf(&p, "%s/%.*s/%s", dir, n, e, link);
			fd = symcache_try(mod, n < 0 ? NULL : p, have_main ? &main_st : NULL, crc,
					  name);
		}
		if (!colon)
			break;
	}
	free(dir);
	return fd;
}

/*
 * The debug file of build-id id under each absolute root of search
 * (ROOT/.build-id/xx/rest.debug, where libdwfl looks): -1 when none fits.
 * The roots may be anyone's (a sysroot of a rootless container's files).
 */
static int symcache_by_id(Dwfl_Module *mod, const char *search, const unsigned char *id, int len,
			  char **name)
{
	char hex[2 * SYMCACHE_BUILD_ID_MAX + 1];
	const char *colon;
	int fd = -1;

	if (len < 2 || len > SYMCACHE_BUILD_ID_MAX)
		return -1;
	for (int i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	for (const char *e = search; fd < 0; e = colon + 1) {
		int n, k;
		char *p;

		colon = strchr(e, ':');
		n = (int)(colon ? (size_t)(colon - e) : strlen(e));
		if (n && (*e == '+' || *e == '-')) {
			e++;
			n--;
		}
		if (n && *e == '/') {
			k = asprintf(&p, "%.*s/.build-id/%.2s/%s.debug", n, e, hex, hex + 2);
			fd = symcache_try(mod, k < 0 ? NULL : p, NULL, 0, name);
		}
		if (!colon)
			break;
	}
	return fd;
}

int symcache_find_safe(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
		       const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		       char **debuginfo_file_name)
{
	const char *search = userdata && *userdata ? *userdata : ":.debug:/usr/lib/debug";
	const unsigned char *id;
	const char *main_link;
	GElf_Word main_crc;
	GElf_Addr vaddr;
	Dwarf_Addr bias;
	char *canon;
	Elf *me;
	int fd, len;

	(void)modname;
	(void)base;
	/*
	 * The module's own debug file (debuglink_file its .gnu_debuglink, or
	 * none), or the one its DWARF's .gnu_debugaltlink names (dwz), which is
	 * found by build-id only, libdwfl's lookup (that build-id is the DWARF's).
	 */
	me = dwfl_module_getelf(mod, &bias);
	main_link = me ? dwelf_elf_gnu_debuglink(me, &main_crc) : NULL;
	len = dwfl_module_build_id(mod, &id, &vaddr);
	if (debuglink_file && (!main_link || strcmp(main_link, debuglink_file)))
		return len > 0 ? dwfl_build_id_find_debuginfo(mod, NULL, NULL, 0, NULL, NULL, 0,
							      debuginfo_file_name) :
				 -1;
	/* By build-id under the absolute roots first, as libdwfl's standard search; then by name. */
	fd = len > 0 ? symcache_by_id(mod, search, id, len, debuginfo_file_name) : -1;
	if (fd >= 0 || !file_name || !debuglink_file || !*debuglink_file)
		return fd;
	fd = symcache_by_link(mod, search, file_name, debuglink_file, debuglink_crc,
			      debuginfo_file_name);
	/* A binary named through a symbolic link: where it really is, too. */
	canon = fd < 0 ? realpath(file_name, NULL) : NULL;
	if (canon && strcmp(canon, file_name))
		fd = symcache_by_link(mod, search, canon, debuglink_file, debuglink_crc,
				      debuginfo_file_name);
	free(canon);
	return fd;
}

/* The cached copy for id, opened and checked; -1 when there is none fit to use. */
static int symcache_open(const char *path, const unsigned char *id, int len)
{
	struct stat st;
	Elf *e;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	bool ok;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
		goto out_close;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		goto out_close;
	ok = elf_kind(e) == ELF_K_ELF && symcache_id_is(e, id, len) && symcache_inflated(e);
	elf_end(e);
	if (ok)
		return fd;
out_close:
	close(fd);
	return -1;
}

/* Is fd a file of the caller's or root's? */
static bool symcache_trusted(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && (st.st_uid == geteuid() || st.st_uid == 0);
}

/* Has the ELF file fd a compressed section? */
static bool symcache_compressed(int fd)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	bool any = false;

	if (!e)
		return false;
	while (!any && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		any = gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
		      sh.sh_type != SHT_NOBITS;
	}
	elf_end(e);
	return any;
}

/*
 * Write path: a copy of the file fd with every compressed section inflated,
 * under a temporary name first.  0 or -1.
 */
static int symcache_write(int fd, const char *path, const unsigned char *id, int len)
{
	char *tmp = NULL;
	struct stat st;
	off_t off = 0;
	Elf *e = NULL;
	Elf_Scn *scn = NULL;
	int out, ret = -1;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > SYMCACHE_FILE_MAX ||
	    asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return -1;
	out = mkstemp(tmp); /* 0600, O_EXCL: never an existing file or link */
	if (out < 0)
		goto out_free;
	while (off < st.st_size)
		if (sendfile(out, fd, &off, (size_t)(st.st_size - off)) <= 0)
			goto out_unlink;
	e = elf_begin(out, ELF_C_RDWR, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !symcache_id_is(e, id, len))
		goto out_unlink;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
		    sh.sh_type != SHT_NOBITS && elf_compress(scn, 0, 0) < 0)
			goto out_unlink;
	}
	if (elf_update(e, ELF_C_WRITE) < 0)
		goto out_unlink;
	elf_end(e);
	e = NULL;
	if (close(out)) {
		out = -1;
		goto out_unlink;
	}
	out = -1;
	if (rename(tmp, path))
		goto out_unlink;
	ret = 0;
	goto out_free;

out_unlink:
	if (e)
		elf_end(e);
	if (out >= 0)
		close(out);
	unlink(tmp);
out_free:
	free(tmp);
	return ret;
}

int symcache_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			    GElf_Addr base, const char *file_name, const char *debuglink_file,
			    GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *id;
	char hex[2 * SYMCACHE_BUILD_ID_MAX + 1], *path = NULL;
	GElf_Addr vaddr;
	int len, fd;

	pthread_once(&symcache_once, symcache_init);
	len = dwfl_module_build_id(mod, &id, &vaddr);
	if (symcache_dir && len > 0 && len <= SYMCACHE_BUILD_ID_MAX) {
		for (int i = 0; i < len; i++)
			snprintf(hex + 2 * i, 3, "%02x", id[i]);
		if (asprintf(&path, "%s/%s.debug", symcache_dir, hex) < 0)
			path = NULL;
	}
	/*
	 * The cache first: the standard search opens what it finds as the
	 * module's debug ELF itself, after which a descriptor handed back
	 * instead would not be used.
	 */
	if (path) {
		fd = symcache_open(path, id, len);
		if (fd >= 0) {
			*debuginfo_file_name = path;
			return fd;
		}
	}
	fd = symcache_find_safe(mod, userdata, modname, base, file_name, debuglink_file,
				debuglink_crc, debuginfo_file_name);
	/*
	 * This run reads it as it is; the next ones read the inflated copy.
	 * Only of a file of ours or root's: another user's says what build-id
	 * it likes, and its copy would stand for that one in all our runs.
	 */
	if (fd >= 0 && path && symcache_trusted(fd) && symcache_compressed(fd))
		symcache_write(fd, path, id, len);
	free(path);
	return fd;
}
