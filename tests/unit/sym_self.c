/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the symbolizer on this very program.  Its modules are fed as
 * the ring file's module map records them (dl_iterate_phdr: PT_LOAD range,
 * load bias, GNU build-id), then addresses of known lines are looked up:
 * a plain function, an always_inline function (two-frame inline chain with
 * the call line), a libc function, a PLT stub (no name: _init, which has
 * no size, named it), addresses in no module, and modules that
 * are missing, not ELF, truncated, absurd or overlapping.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <rip/abi.h>

#include "helpers.h"
#include "read/sym.h"

#if defined(__x86_64__)
#define HERE(ip) __asm__ volatile("1: lea 1b(%%rip), %0" : "=r"(ip))
#elif defined(__aarch64__)
#define HERE(ip) __asm__ volatile("1: adr %0, 1b" : "=r"(ip))
#endif

#ifdef HERE
static int plain_line, inner_line, call_line;

/* The address and its __LINE__ must share a line. */
/* clang-format off */
__attribute__((noinline)) static uintptr_t plain_func(void)
{
	uintptr_t ip;

	HERE(ip); plain_line = __LINE__;
	return ip;
}

static inline __attribute__((always_inline)) uintptr_t inner_func(void)
{
	uintptr_t ip;

	HERE(ip); inner_line = __LINE__;
	return ip;
}

__attribute__((noinline)) static uintptr_t outer_func(void)
{
	uintptr_t ip;

	ip = inner_func(); call_line = __LINE__;
	return ip;
}
/* clang-format on */
#endif

struct self_mod {
	uint64_t lo, hi, bias;
	char path[4096];
	uint8_t build_id[RIP_BUILD_ID_MAX];
	size_t build_id_len;
	uint32_t flags;
};

struct self_map {
	struct self_mod v[256];
	int n;
};

static void self_build_id(struct dl_phdr_info *info, struct self_mod *m)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const char *desc = p + sizeof(*nh) + ((nh->n_namesz + 3) & ~3u);

			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(p + sizeof(*nh), "GNU", 4) &&
			    nh->n_descsz <= RIP_BUILD_ID_MAX) {
				memcpy(m->build_id, desc, nh->n_descsz);
				m->build_id_len = nh->n_descsz;
				return;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
}

static int self_scan(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct self_map *map = arg;
	struct self_mod *m;
	uint64_t lo = UINT64_MAX, hi = 0;
	const char *name = info->dlpi_name;

	(void)size;
	if (map->n == (int)(sizeof(map->v) / sizeof(map->v[0])))
		return 1;
	m = &map->v[map->n];
	memset(m, 0, sizeof(*m));
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_vaddr < lo)
			lo = ph->p_vaddr;
		if (ph->p_vaddr + ph->p_memsz > hi)
			hi = ph->p_vaddr + ph->p_memsz;
	}
	if (hi <= lo)
		return 0;
	m->bias = info->dlpi_addr;
	m->lo = info->dlpi_addr + lo;
	m->hi = info->dlpi_addr + hi;
	if (map->n == 0 && (!name || !*name)) {
		ssize_t n = readlink("/proc/self/exe", m->path, sizeof(m->path) - 1);

		m->path[n > 0 ? n : 0] = 0;
		m->flags = RIP_MOD_EXE;
	} else if (!name || !*name || !strncmp(name, "linux-vdso", 10)) {
		strcpy(m->path, "[vdso]");
		m->flags = RIP_MOD_VDSO;
	} else {
		snprintf(m->path, sizeof(m->path), "%s", name);
	}
	self_build_id(info, m);
	map->n++;
	return 0;
}

/* The address of .plt + 16 in the ELF file path (its first stub after PLT0), or 0. */
static uint64_t plt_addr(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, str;
	uint64_t found = 0;
	char name[16];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || eh.e_shentsize != sizeof(sh) ||
	    pread(fd, &str, sizeof(str), (off_t)(eh.e_shoff + eh.e_shstrndx * sizeof(sh))) !=
		    sizeof(str))
		goto out;
	for (unsigned i = 1; i < eh.e_shnum && !found; i++) {
		if (pread(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff + i * sizeof(sh))) !=
			    sizeof(sh) ||
		    pread(fd, name, sizeof(name), (off_t)(str.sh_offset + sh.sh_name)) !=
			    sizeof(name))
			continue;
		name[sizeof(name) - 1] = 0;
		if (!strcmp(name, ".plt") && sh.sh_size > 16)
			found = sh.sh_addr + 16;
	}
out:
	close(fd);
	return found;
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p;
}

struct problem_seen {
	char libc_why[128];
	const char *libc_path;
	int missing, not_elf, truncated;
};

static void on_problem(const char *path, const char *why, unsigned hits, void *arg)
{
	struct problem_seen *ps = arg;

	printf("problem: %s: %s (%u addresses)\n", path, why, hits);
	if (ps->libc_path && !strcmp(path, ps->libc_path))
		snprintf(ps->libc_why, sizeof(ps->libc_why), "%s", why);
	if (strstr(path, "/no-such-file/lib.so") && !strcmp(why, "not found"))
		ps->missing = (int)hits;
	if (strstr(path, "/not-elf") && !strcmp(why, "not an ELF file"))
		ps->not_elf = (int)hits;
	if (strstr(path, "/truncated") && !strcmp(why, "not an ELF file"))
		ps->truncated = (int)hits;
}

static const char *tmp_file(const char *name)
{
	static char buf[4][4096];
	static int k;
	const char *dir = getenv("TEST_TMP");
	char *p = buf[k++ & 3];

	snprintf(p, sizeof(buf[0]), "%s/%s", dir && *dir ? dir : "/tmp", name);
	return p;
}

/* A truncated copy of our own ELF file, and a text file: both hostile. */
static void make_hostile_files(const char *exe)
{
	char buf[200];
	int in, out;
	ssize_t n;

	out = open(tmp_file("not-elf"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out >= 0) {
		n = write(out, "hello, world\n", 13);
		(void)n;
		close(out);
	}
	in = open(exe, O_RDONLY);
	out = open(tmp_file("truncated"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in >= 0 && out >= 0) {
		n = read(in, buf, sizeof(buf));
		if (n > 0)
			n = write(out, buf, (size_t)n);
	}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
#ifndef HERE
	T_SKIP_IF(1, "no instruction-address snippet for this architecture");
#else
	static struct self_map map;
	struct problem_seen ps = { 0 };
	struct rip_frame fr[8], fr2[8];
	struct rip_sym *sym;
	const struct self_mod *exe, *libc_mod = NULL;
	uintptr_t ip, hole = 0;
	void *getpid_addr;
	uint64_t plt;
	double t0, t1;
	int n, err;

	dl_iterate_phdr(self_scan, &map);
	T_CHECK(map.n > 1);
	exe = &map.v[0];
	T_CHECK(exe->flags & RIP_MOD_EXE);

	T_EQ(rip_sym_new(NULL, NULL), -EINVAL);
	err = rip_sym_new(NULL, &sym);
	T_EQ(err, 0);
	if (err)
		return T_FAIL;
	T_EQ(rip_sym_add_module(sym, 0x2000, 0x1000, 0, "/bin/true", NULL, 0, 0), -EINVAL);
	T_EQ(rip_sym_add_module(sym, 0x1000, 0x1000, 0, "/bin/true", NULL, 0, 0), -EINVAL);
	T_EQ(rip_sym_add_module(sym, 0x1000, 0x2000, 0, NULL, NULL, 0, 0), -EINVAL);
	T_EQ(rip_sym_add_module(sym, 0x1000, 0x2000, 0, "/bin/true", NULL, 4, 0), -EINVAL);
	T_EQ(rip_sym_lookup(sym, 0x1000, fr, 0), -EINVAL);
	T_EQ(rip_sym_lookup(sym, 0x1000, NULL, 4), -EINVAL);

	for (int i = 0; i < map.n; i++) {
		const struct self_mod *m = &map.v[i];

		T_EQ(rip_sym_add_module(sym, m->lo, m->hi, m->bias, m->path,
					m->build_id_len ? m->build_id : NULL, m->build_id_len,
					m->flags),
		     0);
		if (strstr(m->path, "/libc.so"))
			libc_mod = m;
	}
	/* overlapping our executable, added later: must lose */
	T_EQ(rip_sym_add_module(sym, exe->lo, exe->hi, exe->bias, "/no-such-file/overlap", NULL, 0,
				0),
	     0);

	/* a plain function, an exact instruction address */
	ip = plain_func();
	n = rip_sym_lookup(sym, ip, fr, 8);
	T_EQ(n, 1);
	T_STREQ(fr[0].func, "plain_func");
	T_STREQ(base_name(fr[0].file), "sym_self.c");
	T_EQ(fr[0].line, plain_line);
	T_STREQ(fr[0].module, exe->path);
	T_CHECK(!fr[0].inlined);
	T_CHECK(fr[0].offset < 256);

	/* cached: the same strings again */
	n = rip_sym_lookup(sym, ip, fr2, 8);
	T_EQ(n, 1);
	T_CHECK(fr2[0].func == fr[0].func && fr2[0].file == fr[0].file);

	/* the inline chain */
	ip = outer_func();
	n = rip_sym_lookup(sym, ip, fr, 8);
	T_EQ(n, 2);
	T_STREQ(fr[0].func, "inner_func");
	T_STREQ(base_name(fr[0].file), "sym_self.c");
	T_EQ(fr[0].line, inner_line);
	T_CHECK(fr[0].inlined);
	T_STREQ(fr[1].func, "outer_func");
	T_STREQ(base_name(fr[1].file), "sym_self.c");
	T_EQ(fr[1].line, call_line);
	T_CHECK(!fr[1].inlined);
	/* max = 1: the innermost frame only */
	T_EQ(rip_sym_lookup(sym, ip, fr2, 1), 1);
	T_STREQ(fr2[0].func, "inner_func");

	/* libc: a name, or listed as a problem */
	getpid_addr = dlsym(RTLD_DEFAULT, "getpid");
	T_CHECK(getpid_addr != NULL);
	n = rip_sym_lookup(sym, (uintptr_t)getpid_addr, fr, 8);
	T_CHECK(n >= 1);
	if (n >= 1)
		printf("getpid: %s in %s\n", fr[n - 1].func ? fr[n - 1].func : "(null)",
		       fr[n - 1].module ? fr[n - 1].module : "(null)");
	T_CHECK(n >= 1 && fr[n - 1].module != NULL);

	/*
	 * A PLT stub: no symbol covers it.  _init (no size, in .init just
	 * before .plt) did, so that samples of PLT stubs were named _init.
	 */
	plt = plt_addr(exe->path);
	if (plt) {
		n = rip_sym_lookup(sym, exe->bias + plt, fr, 8);
		T_EQ(n, 1);
		if (fr[0].func)
			printf("PLT stub named %s\n", fr[0].func);
		T_CHECK(fr[0].func == NULL && fr[0].module != NULL);
	} else {
		printf("no .plt in %s: the PLT part left out\n", exe->path);
	}

	/* in no module */
	n = rip_sym_lookup(sym, 0x10, fr, 8);
	T_EQ(n, 1);
	T_CHECK(fr[0].func == NULL && fr[0].module == NULL && fr[0].file == NULL);
	T_EQ(fr[0].offset, 0x10);
	n = rip_sym_lookup(sym, UINT64_MAX - 7, fr, 8);
	T_EQ(n, 1);
	T_CHECK(fr[0].func == NULL && fr[0].module == NULL);

	/* hostile modules, placed in a hole below every real one */
	for (int i = 0; i < map.n; i++)
		if (!hole || map.v[i].lo < hole)
			hole = map.v[i].lo;
	T_CHECK(hole > 0x40000);
	hole = 0x10000;
	make_hostile_files(exe->path);
	T_EQ(rip_sym_add_module(sym, hole, hole + 0x1000, hole, "/no-such-file/lib.so", NULL, 0, 0),
	     0);
	T_EQ(rip_sym_add_module(sym, hole + 0x1000, hole + 0x2000, hole + 0x1000,
				tmp_file("not-elf"), NULL, 0, 0),
	     0);
	T_EQ(rip_sym_add_module(sym, hole + 0x2000, hole + 0x3000, hole + 0x2000,
				tmp_file("truncated"), NULL, 0, 0),
	     0);
	T_EQ(rip_sym_add_module(sym, hole + 0x3000, hole + 0x4000, hole + 0x3000, "/", NULL, 0, 0),
	     0);
	for (int k = 0; k < 4; k++) {
		n = rip_sym_lookup(sym, hole + 0x1000 * k + 0x10, fr, 8);
		T_EQ(n, 1);
		T_CHECK(fr[0].func == NULL && fr[0].module != NULL);
		T_EQ(fr[0].offset, 0x10);
	}
	/* the same address again counts once; another address of it makes two */
	rip_sym_lookup(sym, hole + 0x10, fr, 8);
	rip_sym_lookup(sym, hole + 0x20, fr, 8);

	/* a module added after a lookup missed: the miss is not cached for good */
	n = rip_sym_lookup(sym, 0x8010, fr, 8);
	T_CHECK(n == 1 && fr[0].module == NULL);
	T_EQ(rip_sym_add_module(sym, 0x8000, 0x9000, 0x8000, "/no-such-file/late.so", NULL, 0, 0),
	     0);
	n = rip_sym_lookup(sym, 0x8010, fr, 8);
	T_CHECK(n == 1 && fr[0].module && !strcmp(fr[0].module, "/no-such-file/late.so"));

	/* speed: every byte of our text, then of libc's, twice */
	t0 = now();
	n = 0;
	for (uint64_t a = exe->lo; a < exe->hi && a < exe->lo + 200000; a++) {
		if (rip_sym_lookup(sym, a, fr, 8) < 1)
			n++;
	}
	if (libc_mod) {
		for (uint64_t a = libc_mod->lo; a < libc_mod->hi && a < libc_mod->lo + 1000000; a++)
			if (rip_sym_lookup(sym, a, fr, 8) < 1)
				n++;
	}
	t1 = now();
	T_EQ(n, 0);
	printf("first pass: %.2fs\n", t1 - t0);
	T_CHECK(t1 - t0 < 60);
	t0 = now();
	if (libc_mod) {
		for (uint64_t a = libc_mod->lo; a < libc_mod->hi && a < libc_mod->lo + 1000000; a++)
			rip_sym_lookup(sym, a, fr, 8);
	}
	t1 = now();
	printf("cached pass: %.2fs\n", t1 - t0);

	ps.libc_path = libc_mod ? libc_mod->path : NULL;
	n = rip_sym_problems(sym, on_problem, &ps);
	T_CHECK(n >= 3);
	T_EQ(ps.missing, 2);
	T_EQ(ps.not_elf, 1);
	T_EQ(ps.truncated, 1);
	n = rip_sym_lookup(sym, (uintptr_t)getpid_addr, fr, 8);
	T_CHECK(fr[n - 1].func != NULL || ps.libc_why[0]);
	if (fr[n - 1].func)
		T_CHECK(strstr(fr[n - 1].func, "getpid") != NULL);
	for (int i = 0; i < map.n; i++)
		if (map.v[i].flags & RIP_MOD_VDSO) {
			n = rip_sym_lookup(sym, map.v[i].lo, fr, 8);
			T_EQ(n, 1);
			T_STREQ(fr[0].module, "[vdso]");
		}
	T_EQ(rip_sym_problems(sym, NULL, NULL), rip_sym_problems(sym, NULL, NULL));

	rip_sym_free(sym);
	rip_sym_free(NULL);
	return t_result();
#endif
}
