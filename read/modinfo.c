// SPDX-License-Identifier: Apache-2.0
/*
 * read/modinfo.c - the rip_modinfo section of a tracing module, read from
 * the file (see modinfo.h).  The file is hostile: every offset and size is
 * checked against the file's size before it is used, and the records are
 * copied, checked for their magic, their NULs and their names.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/modinfo.h"
#include "read/ringfile.h"

#define MI_MAX_FILE (1ull << 32) /* larger is not a module */
#define MI_MAX_SECT (64u << 10)	 /* bytes of rip_modinfo read at most */

/* [off, off + len) of the file into buf; 0 or -errno (-EBADMSG: outside the file). */
static int mi_pread(int fd, uint64_t size, uint64_t off, void *buf, size_t len)
{
	ssize_t n;

	if (off > size || len > size - off)
		return -EBADMSG;
	n = pread(fd, buf, len, (off_t)off);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EBADMSG;
}

static int mi_fail(char *err, size_t errlen, int ret, const char *path, const char *what)
{
	snprintf(err, errlen, "%s: %s", path, what);
	return ret;
}

static int mi_name_ok(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-' || s[i] == '.'))
			return 0;
	return i > 0 && i < len;
}

/* The records in sec (len bytes) into m. */
static int mi_parse(const uint8_t *sec, size_t len, struct mi_module *m, const char *path,
		    char *err, size_t errlen)
{
	int have_module = 0;

	for (size_t off = 0; off + sizeof(struct rip_modinfo) <= len;) {
		struct rip_modinfo r;

		memcpy(&r, sec + off, sizeof(r));
		if (r.magic != RIP_MODINFO_MAGIC) {
			off += 8; /* padding between records (aligned 8) */
			continue;
		}
		off += sizeof(r);
		if (!mi_name_ok(r.name, sizeof(r.name)) || !memchr(r.desc, 0, sizeof(r.desc)))
			return mi_fail(err, errlen, -EBADMSG, path, "a damaged module record");
		if (r.what == RIP_MODINFO_MODULE) {
			memcpy(m->name, r.name, sizeof(m->name));
			memcpy(m->desc, r.desc, sizeof(m->desc));
			m->api = r.api;
			have_module = 1;
		} else if (r.what == RIP_MODINFO_KIND && m->nkinds < RIP_MODULE_KINDS_MAX) {
			struct mi_kind *k = &m->kinds[m->nkinds++];

			memcpy(k->name, r.name, sizeof(k->name));
			memcpy(k->desc, r.desc, sizeof(k->desc));
			k->flags = r.flags;
		}
	}
	if (!have_module)
		return mi_fail(err, errlen, -ENOENT, path,
			       "not a tracing module (no RIP_MODULE record: see librip-module(3))");
	return 0;
}

int mi_read(const char *path, struct mi_module *m, char *err, size_t errlen)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, strh;
	struct stat st;
	uint8_t *sec = NULL;
	char name[16];
	int fd, ret;

	memset(m, 0, sizeof(*m));
	/* a device is not opened: that may do something */
	fd = rr_open_regular(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 && errno == EINVAL)
		return mi_fail(err, errlen, -ENOENT, path, "not a regular file of a sane size");
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > MI_MAX_FILE) {
		ret = mi_fail(err, errlen, -ENOENT, path, "not a regular file of a sane size");
		goto out_close;
	}
	if (mi_pread(fd, (uint64_t)st.st_size, 0, &eh, sizeof(eh)) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] !=
		    (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
	    eh.e_type != ET_DYN || eh.e_shentsize != sizeof(Elf64_Shdr)) {
		ret = mi_fail(err, errlen, -ENOENT, path,
			      "not a shared object of this machine (a tracing module is one)");
		goto out_close;
	}
	if (eh.e_shstrndx >= eh.e_shnum ||
	    mi_pread(fd, (uint64_t)st.st_size, eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof(sh),
		     &strh, sizeof(strh))) {
		ret = mi_fail(err, errlen, -EBADMSG, path, "damaged section headers");
		goto out_close;
	}
	ret = mi_fail(err, errlen, -ENOENT, path,
		      "not a tracing module (no rip_modinfo section: see librip-module(3))");
	for (uint32_t i = 1; i < eh.e_shnum; i++) {
		if (mi_pread(fd, (uint64_t)st.st_size, eh.e_shoff + (uint64_t)i * sizeof(sh), &sh,
			     sizeof(sh))) {
			ret = mi_fail(err, errlen, -EBADMSG, path, "damaged section headers");
			break;
		}
		memset(name, 0, sizeof(name));
		if (sh.sh_name >= strh.sh_size ||
		    mi_pread(fd, (uint64_t)st.st_size, strh.sh_offset + sh.sh_name, name,
			     strh.sh_size - sh.sh_name < sizeof(name) - 1 ?
				     strh.sh_size - sh.sh_name :
				     sizeof(name) - 1) ||
		    strcmp(name, "rip_modinfo"))
			continue;
		if (sh.sh_type != SHT_PROGBITS || !sh.sh_size || sh.sh_size > MI_MAX_SECT) {
			ret = mi_fail(err, errlen, -EBADMSG, path, "a damaged rip_modinfo section");
			break;
		}
		sec = malloc(sh.sh_size);
		if (!sec) {
			ret = mi_fail(err, errlen, -ENOMEM, path, "out of memory");
			break;
		}
		if (mi_pread(fd, (uint64_t)st.st_size, sh.sh_offset, sec, sh.sh_size)) {
			ret = mi_fail(err, errlen, -EBADMSG, path, "a damaged rip_modinfo section");
			break;
		}
		ret = mi_parse(sec, sh.sh_size, m, path, err, errlen);
		break;
	}
	free(sec);
out_close:
	close(fd);
	return ret;
}
