/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/patchable.c - the patchable entries of a process's binaries
 * (patchable.h); the request that has the process patch them is
 * record/patchreq.c's: read/ only reads.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/patchable.h"
#include "read/ringfile.h"

#define RPT_SECTION "__patchable_function_entries"

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

/* The first of v[0..n) (sorted) at or above a, or n. */
static size_t rpt_lower(const uint64_t *v, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Each site of site[0..n) (0: none) moved to its function's entry.  With
 * -fpatchable-function-entry=N,M the section lists where the nops begin, M
 * bytes before the function: patched there, a call landed in bytes that
 * never run, and rip enable said it patched functions that recorded
 * nothing.  Unless a site is a function's start (by the symbol table),
 * every site moves on by the distance most sites have to the next
 * function's start, if at most RIP_PATCH_PREFIX_MAX bytes; the process then
 * checks that the entry holds nops it can replace (5 bytes at least: N - M
 * >= 5).  Without symbols the sites stay.
 */
static void rpt_entries(Elf *e, uint64_t *site, size_t n)
{
	Elf_Scn *scn = NULL, *tab = NULL;
	size_t count[RIP_PATCH_PREFIX_MAX + 1] = { 0 };
	uint64_t *fn = NULL, m = 0;
	size_t nfn = 0, cap = 0;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !tab))
			tab = scn;
	}
	if (tab && gelf_getshdr(tab, &sh) && sh.sh_entsize) {
		Elf_Data *d = elf_getdata(tab, NULL);

		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
			    !sym.st_value)
				continue;
			if (nfn == cap) {
				uint64_t *nv =
					realloc(fn, (cap = cap ? cap * 2 : 256) * sizeof(*nv));

				if (!nv)
					goto out;
				fn = nv;
			}
			fn[nfn++] = sym.st_value;
		}
	}
	if (!nfn)
		goto out;
	qsort(fn, nfn, sizeof(*fn), rpt_cmp);
	/*
	 * One M for the file (its functions are built alike): none when a site
	 * is a function's start; else the distance most sites have to the next
	 * start, which also moves the sites of functions the symbols leave out.
	 */
	for (size_t i = 0; i < n; i++) {
		size_t k = site[i] ? rpt_lower(fn, nfn, site[i]) : nfn;
		uint64_t d = k < nfn ? fn[k] - site[i] : 0;

		if (site[i] && k < nfn && !d)
			goto out; /* M is 0 */
		if (d && d <= RIP_PATCH_PREFIX_MAX)
			count[d]++;
	}
	for (uint64_t d = 1; d <= RIP_PATCH_PREFIX_MAX; d++)
		if (count[d] > count[m])
			m = d;
	for (size_t i = 0; m && i < n; i++)
		if (site[i])
			site[i] += m;
out:
	free(fn);
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
		add[i] = v; /* the word, done with: its site */
	}
	rpt_entries(e, add, nwords);
	for (size_t i = 0; i < nwords && !ret; i++)
		if (add[i])
			ret = rpt_add(out, cap, eh.e_type == ET_DYN ? add[i] + bias : add[i]);
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
		/* a device or a FIFO a module map names is not opened (nor waited on) */
		fd = rr_open_regular(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
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
