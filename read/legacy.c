/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/legacy.c - where the executable that wrote a raw file of the original
 * librip header was loaded: from /proc/PID/maps while its writer runs, or
 * from the snapped addresses themselves (read/legacy.h says how).
 *
 * The search keeps the ELF addresses just after every `lea 0(%rip), reg`
 * of the executable's code, keyed by page offset.  A snapped address a and
 * such a site t with the same page offset give the candidate bias a - t;
 * counting how many distinct addresses give each bias scores every bias at
 * once, without trying each page of the address space.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <internal/grow.h>

#include "read/legacy.h"
#include "read/ringfile.h"

/* Snapped addresses hold 56 bits; a PIE's segments must fit below that. */
#define LG_ADDR_MAX (1ull << 56)
/* The searches give up (-E2BIG) past this many candidates or checks. */
#define LG_MAX_WORK (1ull << 22)
/* `lea 0(%rip), reg`: REX.W (R), 8D, ModRM 00 reg 101, disp32 0. */
#define LG_LEA_LEN 7

struct lg_func {
	uint64_t lo, hi;
	uint64_t maxhi; /* the largest hi of this and every earlier function */
};

struct lg_load {
	uint64_t vaddr, offset;
};

static uint64_t lg_trunc(uint64_t x)
{
	return x & ~(uint64_t)(LG_PAGE - 1);
}

/* Sites sort by page offset first, then address: one bucket per page offset. */
static uint64_t lg_key(uint64_t t)
{
	return (t & (LG_PAGE - 1)) << 52 | t >> 12;
}

static int lg_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int lg_cmp_func(const void *a, const void *b)
{
	const struct lg_func *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static int lg_push(void **v, size_t *n, size_t *cap, size_t size, const void *item)
{
	if (rip_grow(v, cap, size, *n + 1, 64))
		return -ENOMEM;

	memcpy((char *)*v + *n * size, item, size);
	(*n)++;
	return 0;
}

/* Every place in bytes (ELF address vaddr) just after a snap's lea. */
static int lg_scan_code(struct lg_exe *e, size_t *cap, const uint8_t *bytes, size_t len,
			uint64_t vaddr)
{
	const uint8_t *p = bytes, *end = bytes + len;

	while (p < end && (p = memchr(p, 0x8d, (size_t)(end - p)))) {
		size_t at = (size_t)(p - bytes);

		if (at >= 1 && len - at >= LG_LEA_LEN - 1 && (p[-1] == 0x48 || p[-1] == 0x4c) &&
		    (p[1] & 0xc7) == 0x05 && !p[2] && !p[3] && !p[4] && !p[5]) {
			uint64_t t = lg_key(vaddr + at + LG_LEA_LEN - 1);
			int ret = lg_push((void **)&e->sites, &e->nsites, cap, sizeof(t), &t);

			if (ret)
				return ret;
		}
		p++;
	}
	return 0;
}

static int lg_read_funcs(struct lg_exe *e, Elf *elf)
{
	size_t cap = 0;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = NULL;
		GElf_Shdr sh;
		size_t n, esz;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		esz = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
		while (esz && (data = elf_getdata(scn, data))) {
			n = data->d_size / esz;
			for (size_t i = 0; i < n && i <= INT_MAX; i++) {
				struct lg_func f;
				GElf_Sym s;
				int ret;

				if (!gelf_getsym(data, (int)i, &s) || !s.st_size ||
				    s.st_shndx == SHN_UNDEF ||
				    s.st_value > UINT64_MAX - s.st_size ||
				    (GELF_ST_TYPE(s.st_info) != STT_FUNC &&
				     GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC))
					continue;
				f.lo = s.st_value;
				f.hi = s.st_value + s.st_size;
				ret = lg_push((void **)&e->funcs, &e->nfuncs, &cap, sizeof(f), &f);
				if (ret)
					return ret;
			}
		}
	}
	if (e->nfuncs)
		qsort(e->funcs, e->nfuncs, sizeof(*e->funcs), lg_cmp_func);
	for (size_t i = 0; i < e->nfuncs; i++) {
		uint64_t prev = i ? e->funcs[i - 1].maxhi : 0;

		e->funcs[i].maxhi = prev > e->funcs[i].hi ? prev : e->funcs[i].hi;
	}
	return 0;
}

static int lg_read_loads(struct lg_exe *e, Elf *elf, const char *path, char *err, size_t errlen)
{
	size_t nph, size = 0, cap = 0, lcap = 0;
	const uint8_t *image = (const uint8_t *)elf_rawfile(elf, &size);
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nph))
		return rr_fail(err, errlen, -ENOEXEC, "%s: corrupt ELF header", path);
	e->lo = UINT64_MAX;
	for (size_t i = 0; i < nph && i <= INT_MAX; i++) {
		struct lg_load l;
		GElf_Phdr ph;
		uint64_t end;
		int ret;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_vaddr > UINT64_MAX - LG_PAGE ||
		    ph.p_memsz > UINT64_MAX - LG_PAGE - ph.p_vaddr ||
		    (e->pie && ph.p_vaddr + ph.p_memsz > LG_ADDR_MAX))
			return rr_fail(err, errlen, -ENOEXEC,
				       "%s: a segment at 0x%llx of 0x%llx bytes lies beyond the "
				       "addresses a snap holds",
				       path, (unsigned long long)ph.p_vaddr,
				       (unsigned long long)ph.p_memsz);
		end = ph.p_vaddr + ph.p_memsz;
		if (lg_trunc(ph.p_vaddr) < e->lo)
			e->lo = lg_trunc(ph.p_vaddr);
		if (lg_trunc(end + LG_PAGE - 1) > e->hi)
			e->hi = lg_trunc(end + LG_PAGE - 1);
		l.vaddr = ph.p_vaddr;
		l.offset = ph.p_offset;
		ret = lg_push((void **)&e->loads, &e->nloads, &lcap, sizeof(l), &l);
		if (ret)
			return ret;
		/* Only x86-64 code has the original's snaps (it supported nothing else). */
		if ((ph.p_flags & PF_X) && eh.e_machine == EM_X86_64 && image &&
		    ph.p_offset < size) {
			uint64_t len = ph.p_filesz < ph.p_memsz ? ph.p_filesz : ph.p_memsz;

			if (len > size - ph.p_offset)
				len = size - ph.p_offset;
			ret = lg_scan_code(e, &cap, image + ph.p_offset, (size_t)len, ph.p_vaddr);
			if (ret)
				return ret;
		}
	}
	if (!e->nloads || e->lo >= e->hi)
		return rr_fail(err, errlen, -ENOEXEC, "%s: no loadable segment", path);
	if (e->nsites)
		qsort(e->sites, e->nsites, sizeof(*e->sites), lg_cmp_u64);
	return 0;
}

int lg_exe_open(const char *path, struct lg_exe *e, char *err, size_t errlen)
{
	GElf_Ehdr eh;
	Elf *elf;
	int fd, ret;

	memset(e, 0, sizeof(*e));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return rr_fail(err, errlen, -ENOSYS, "libelf is out of date");
	e->path = strdup(path);
	if (!e->path)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	fd = rr_open_regular(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 && errno == EINVAL) { /* a device is not opened: that may do something */
		ret = rr_fail(err, errlen, -EINVAL, "%s: not a regular file", path);
		goto err_free;
	}
	if (fd < 0) {
		ret = rr_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
		goto err_free;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		ret = rr_fail(err, errlen, -ENOEXEC, "%s: not an ELF file", path);
		goto err_end;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		ret = rr_fail(err, errlen, -ENOEXEC, "%s: not an executable (ELF type %u)", path,
			      (unsigned)eh.e_type);
		goto err_end;
	}
	e->pie = eh.e_type == ET_DYN;
	ret = lg_read_loads(e, elf, path, err, errlen);
	if (!ret)
		ret = lg_read_funcs(e, elf);
	if (ret == -ENOMEM)
		rr_fail(err, errlen, ret, "out of memory");
	if (ret)
		goto err_end;
	elf_end(elf);
	close(fd);
	return 0;

err_end:
	if (elf)
		elf_end(elf);
	close(fd);
err_free:
	lg_exe_close(e);
	return ret;
}

void lg_exe_close(struct lg_exe *e)
{
	free(e->path);
	free(e->sites);
	free(e->funcs);
	free(e->loads);
	memset(e, 0, sizeof(*e));
}

/* ---- fitting ---------------------------------------------------------------------- */

/* The sites with t's page offset: [*first, *last). */
static void lg_bucket(const struct lg_exe *e, uint64_t t, size_t *first, size_t *last)
{
	uint64_t k0 = lg_key(t & (LG_PAGE - 1)), k1 = k0 | ((1ull << 52) - 1);
	size_t lo = 0, hi = e->nsites;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->sites[mid] < k0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	for (hi = e->nsites; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->sites[mid] <= k1)
			lo = mid + 1;
		else
			hi = mid;
	}
	*last = lo;
}

static bool lg_is_site(const struct lg_exe *e, uint64_t t)
{
	return e->nsites && bsearch(&(uint64_t){ lg_key(t) }, e->sites, e->nsites,
				    sizeof(*e->sites), lg_cmp_u64);
}

static bool lg_in_func(const struct lg_exe *e, uint64_t t)
{
	size_t lo = 0, hi = e->nfuncs;

	/* The last function that starts at or before t; maxhi says if any covers t. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->funcs[mid].lo <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && t < e->funcs[lo - 1].maxhi;
}

/* A sorted copy of addr without repeats (and without 0): 0 or -ENOMEM. */
static int lg_uniq(const uint64_t *addr, size_t n, uint64_t **out, size_t *nout)
{
	uint64_t *v = malloc((n ? n : 1) * sizeof(*v));
	size_t k = 0;

	if (!v)
		return -ENOMEM;
	if (n)
		memcpy(v, addr, n * sizeof(*v));
	qsort(v, n, sizeof(*v), lg_cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (v[i] && (!k || v[k - 1] != v[i]))
			v[k++] = v[i];
	*out = v;
	*nout = k;
	return 0;
}

static void lg_fit_sorted(const struct lg_exe *e, uint64_t bias, const uint64_t *u, size_t n,
			  struct lg_fit *out)
{
	memset(out, 0, sizeof(*out));
	out->n = n;
	for (size_t i = 0; i < n; i++) {
		if (u[i] < bias)
			continue;
		out->snaps += lg_is_site(e, u[i] - bias);
		out->funcs += lg_in_func(e, u[i] - bias);
	}
}

int lg_fit(const struct lg_exe *e, uint64_t bias, const uint64_t *addr, size_t n,
	   struct lg_fit *out)
{
	uint64_t *u;
	size_t nu;

	if (lg_uniq(addr, n, &u, &nu))
		return -ENOMEM;
	lg_fit_sorted(e, bias, u, nu, out);
	free(u);
	return 0;
}

/* ---- the search ------------------------------------------------------------------- */

static const char *lg_cands(const struct lg_guess *g, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; i < g->ncand && i < LG_SHOW && off < len; i++) {
		int k = snprintf(buf + off, len - off, "%s0x%llx", i ? ", " : "",
				 (unsigned long long)g->cand[i]);

		off += k > 0 ? (size_t)k : 0;
	}
	if (g->ncand > LG_SHOW && off < len)
		snprintf(buf + off, len - off, " and %zu more", g->ncand - LG_SHOW);
	return buf;
}

/* By snaps: every (address, site) pair with one page offset votes for a bias. */
static int lg_by_snaps(const struct lg_exe *e, const uint64_t *u, size_t n, struct lg_guess *g)
{
	uint64_t *votes = NULL;
	size_t nv = 0, cap = 0, best = 0;
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		size_t first, last;

		lg_bucket(e, u[i], &first, &last);
		for (size_t k = first; k < last; k++) {
			uint64_t t = (e->sites[k] & ((1ull << 52) - 1)) << 12 | (e->sites[k] >> 52);
			uint64_t bias = u[i] - t;

			if (t > u[i])
				break; /* sorted by address within the bucket */
			if (nv >= LG_MAX_WORK) {
				ret = -E2BIG;
				goto out_free;
			}
			ret = lg_push((void **)&votes, &nv, &cap, sizeof(bias), &bias);
			if (ret)
				goto out_free;
		}
	}
	if (nv)
		qsort(votes, nv, sizeof(*votes), lg_cmp_u64);
	for (size_t i = 0, j; i < nv; i = j) {
		for (j = i + 1; j < nv && votes[j] == votes[i]; j++)
			;
		if (j - i > best) {
			best = j - i;
			g->ncand = 0;
		}
		if (j - i == best) {
			if (g->ncand < LG_SHOW)
				g->cand[g->ncand] = votes[i];
			g->ncand++;
		}
	}
	/* Fewer than half: the file is not this executable's, or mostly another run's. */
	if (best * 2 <= n)
		g->ncand = 0;
	else
		g->bias = g->cand[0];
out_free:
	free(votes);
	return ret;
}

/* By function bounds: each page that puts the lowest address in a function, checked. */
static int lg_by_funcs(const struct lg_exe *e, const uint64_t *u, size_t n, struct lg_guess *g)
{
	uint64_t pivot = u[0], top, t, work = 0;

	if (!e->nfuncs || !n)
		return 0;
	top = e->funcs[e->nfuncs - 1].maxhi - 1;
	if (top > pivot)
		top = pivot;
	/* The highest t <= top with pivot's page offset, then down: biases go up. */
	t = lg_trunc(top) | (pivot & (LG_PAGE - 1));
	if (t > top) {
		if (t < LG_PAGE)
			return 0;
		t -= LG_PAGE;
	}
	for (;; t -= LG_PAGE) {
		uint64_t bias = pivot - t;
		size_t i = 0;

		if (lg_in_func(e, t)) {
			for (i = 1; i < n && lg_in_func(e, u[i] - bias); i++)
				;
			work += i;
			if (i == n) {
				if (g->ncand < LG_SHOW)
					g->cand[g->ncand] = bias;
				g->ncand++;
			}
		}
		if (++work > LG_MAX_WORK)
			return -E2BIG;
		if (t < LG_PAGE || t - LG_PAGE < e->funcs[0].lo)
			break;
	}
	if (g->ncand)
		g->bias = g->cand[0];
	return 0;
}

int lg_infer(const struct lg_exe *e, const uint64_t *addr, size_t n, struct lg_guess *g, char *err,
	     size_t errlen)
{
	char list[128];
	uint64_t *u;
	size_t nu;
	int ret;

	memset(g, 0, sizeof(*g));
	if (lg_uniq(addr, n, &u, &nu))
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	ret = lg_by_snaps(e, u, nu, g);
	if (!ret && !g->ncand) {
		g->by_funcs = true;
		ret = lg_by_funcs(e, u, nu, g);
	}
	if (ret == -E2BIG) {
		rr_fail(err, errlen, ret,
			"%s: trying every load address for the %zu snapped addresses would "
			"take too long: give --base",
			e->path, nu);
	} else if (ret) {
		rr_fail(err, errlen, ret, "out of memory");
	} else if (!g->ncand) {
		ret = rr_fail(err, errlen, -ENOENT,
			      "%s: no base puts most of the %zu snapped address%s just after a "
			      "snap (lea 0(%%rip)) in its code%s: is it the program that wrote "
			      "the file? give --base if you know where it was loaded",
			      e->path, nu, nu == 1 ? "" : "es",
			      e->nfuncs ? ", nor all of them in its functions" : "");
	} else if (g->ncand > 1) {
		for (size_t i = 0; i < g->ncand && i < LG_SHOW; i++)
			g->cand[i] += e->lo;
		if (g->by_funcs)
			ret = rr_fail(err, errlen, -ENOTUNIQ,
				      "%s: no base puts most of the %zu snapped address%s just "
				      "after a snap (lea 0(%%rip)) in its code, and %zu candidate "
				      "bases put them all in its functions (%s): is it the program "
				      "that wrote the file? give --base",
				      e->path, nu, nu == 1 ? "" : "es", g->ncand,
				      lg_cands(g, list, sizeof(list)));
		else
			ret = rr_fail(err, errlen, -ENOTUNIQ,
				      "%s: %zu candidate bases fit the %zu snapped address%s "
				      "equally well (%s): give --base",
				      e->path, g->ncand, nu, nu == 1 ? "" : "es",
				      lg_cands(g, list, sizeof(list)));
		for (size_t i = 0; i < g->ncand && i < LG_SHOW; i++)
			g->cand[i] -= e->lo;
	} else {
		lg_fit_sorted(e, g->bias, u, nu, &g->fit);
	}
	free(u);
	return ret;
}

/* ---- /proc/PID/maps --------------------------------------------------------------- */

struct lg_scan {
	const struct lg_exe *e;
	struct stat exe;	 /* the executable's device and inode */
	const char *real;	 /* its real path, or NULL */
	const struct stat *file; /* the raw file, for lg_writer_bias */
	bool writes;		 /* pid maps file shared and writable */
	bool mapped;		 /* pid maps the executable */
	bool have_bias;		 /* ... in a line that gives its bias */
	uint64_t bias;
};

static bool lg_same(const struct stat *st, unsigned maj, unsigned min, unsigned long long ino)
{
	return ino == (unsigned long long)st->st_ino && maj == major(st->st_dev) &&
	       min == minor(st->st_dev);
}

/* Read /proc/PID/maps into sc: 0, or -errno when it cannot be read. */
static int lg_scan_maps(pid_t pid, struct lg_scan *sc)
{
	char path[64], line[PATH_MAX + 256];
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fp = fopen(path, "re");
	if (!fp)
		return -errno;
	sc->writes = sc->mapped = sc->have_bias = false;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		char perms[8], *name;
		size_t l;
		int at = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off,
			   &maj, &min, &ino, &at) != 7 ||
		    !at)
			continue;
		name = line + at;
		l = strlen(name);
		if (l && name[l - 1] == '\n')
			name[--l] = 0;
		if (l >= 10 && !strcmp(name + l - 10, " (deleted)"))
			name[l -= 10] = 0;
		if (sc->file && lg_same(sc->file, maj, min, ino) && perms[1] == 'w' &&
		    perms[3] == 's')
			sc->writes = true;
		if (!lg_same(&sc->exe, maj, min, ino) && !(sc->real && !strcmp(name, sc->real)))
			continue;
		sc->mapped = true;
		/* The segment this line maps gives the bias; the lowest line wins. */
		for (size_t i = 0; i < sc->e->nloads && !sc->have_bias; i++) {
			const struct lg_load *ld = &sc->e->loads[i];

			if (lg_trunc(ld->offset) == off && start >= lg_trunc(ld->vaddr) &&
			    !((start - lg_trunc(ld->vaddr)) & (LG_PAGE - 1))) {
				sc->bias = start - lg_trunc(ld->vaddr);
				sc->have_bias = true;
			}
		}
	}
	fclose(fp);
	return 0;
}

static int lg_scan_init(struct lg_scan *sc, const struct lg_exe *e, char *real, char *err,
			size_t errlen)
{
	memset(sc, 0, sizeof(*sc));
	sc->e = e;
	if (stat(e->path, &sc->exe))
		return rr_fail(err, errlen, -errno, "%s: %s", e->path, strerror(errno));
	/* By path too: an overlay shows /proc/PID/maps another device than stat(). */
	sc->real = realpath(e->path, real) ? real : NULL;
	return 0;
}

int lg_maps_bias(pid_t pid, const struct lg_exe *e, uint64_t *bias, char *err, size_t errlen)
{
	char real[PATH_MAX];
	struct lg_scan sc;
	int ret;

	ret = lg_scan_init(&sc, e, real, err, errlen);
	if (ret)
		return ret;
	ret = lg_scan_maps(pid, &sc);
	if (ret)
		return rr_fail(err, errlen, ret, "cannot read /proc/%d/maps: %s", (int)pid,
			       ret == -ENOENT ? "no such process" : strerror(-ret));
	if (!sc.have_bias)
		return rr_fail(err, errlen, -ENOENT, "process %d %s %s", (int)pid,
			       sc.mapped ? "maps no segment of" : "does not map", e->path);
	*bias = sc.bias;
	return 0;
}

int lg_writer_bias(const char *file, const struct lg_exe *e, pid_t *pid, uint64_t *bias, char *err,
		   size_t errlen)
{
	char real[PATH_MAX];
	struct lg_scan sc;
	struct stat fst;
	struct dirent *d;
	pid_t self = getpid(), found = 0, other = 0;
	uint64_t b = 0;
	bool have = false;
	DIR *dir;
	int ret;

	if (stat(file, &fst))
		return -ENOENT;
	ret = lg_scan_init(&sc, e, real, err, errlen);
	if (ret)
		return ret;
	sc.file = &fst;
	dir = opendir("/proc");
	if (!dir)
		return -ENOENT;
	while ((d = readdir(dir))) {
		long p;

		if (!rr_all_digits(d->d_name) || strlen(d->d_name) > 9)
			continue;
		p = strtol(d->d_name, NULL, 10);
		if (p <= 0 || p == self || lg_scan_maps((pid_t)p, &sc) || !sc.writes)
			continue;
		if (!found) {
			found = (pid_t)p;
			have = sc.have_bias;
			b = sc.bias;
		} else if (have != sc.have_bias || (have && sc.bias != b)) {
			other = (pid_t)p;
		} else if (p < found) {
			found = (pid_t)p;
		}
	}
	closedir(dir);
	if (!found)
		return -ENOENT;
	if (other)
		return rr_fail(err, errlen, -ENOTUNIQ,
			       "processes %d and %d both write %s, with %s at different "
			       "addresses: give --pid",
			       (int)found, (int)other, file, e->path);
	if (!have)
		return rr_fail(err, errlen, -ENOEXEC,
			       "process %d, which has %s mapped for writing, does not map %s: "
			       "is that the program that wrote it?",
			       (int)found, file, e->path);
	*pid = found;
	*bias = b;
	return 0;
}
