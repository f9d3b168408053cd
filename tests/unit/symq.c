/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the symbolizer driver for tests/integ/sym-files.sh.  Without
 * arguments it is a self-test: it resolves its own main().  With arguments
 * it plays the recorder (module ranges and build-ids read from ELF files)
 * and prints what read/sym.c makes of the addresses given:
 *
 *   symq [-s SYSROOT] [-d DEBUG_DIR] [-b] MODULE... [--] ADDR...
 *     -m PATH@BIAS[@REC]   a module at load bias BIAS; its range and build-id
 *                          are read from REC (default: PATH under SYSROOT),
 *                          "the file as it was when the trace was taken"
 *     -x LO:HI:BIAS:PATH   a module given raw, without build-id
 *     -X LO:HI:BIAS        the vDSO
 *     -b                   look up every address of every -m module, twice
 *
 * Output: one line per frame, "ADDR INDEX FUNC FILE:LINE inl|- MODULE", with
 * "??" for unknowns and the file's basename; then "problem PATH: WHY (N)".
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <rip/abi.h>

#include "helpers.h"
#include "read/sym.h"

struct rec {
	uint64_t lo, hi;
	uint8_t build_id[64];
	size_t build_id_len;
};

/* Range of the PT_LOAD segments and the GNU build-id, as lib/modules.c records them. */
static int read_rec(const char *file, struct rec *r)
{
	size_t nph = 0;
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd, err = 0;

	memset(r, 0, sizeof(*r));
	r->lo = UINT64_MAX;
	elf_version(EV_CURRENT);
	fd = open(file, O_RDONLY);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getphdrnum(elf, &nph)) {
		err = -EINVAL;
		goto out_end;
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_vaddr < r->lo)
			r->lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > r->hi)
			r->hi = ph.p_vaddr + ph.p_memsz;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + name_off, "GNU", 4) &&
			    nh.n_descsz <= sizeof(r->build_id)) {
				memcpy(r->build_id, (char *)d->d_buf + desc_off, nh.n_descsz);
				r->build_id_len = nh.n_descsz;
			}
		}
	}
	if (r->hi <= r->lo)
		err = -EINVAL;
out_end:
	elf_end(elf);
	close(fd);
	return err;
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p;
}

static void print_problem(const char *path, const char *why, unsigned hits, void *arg)
{
	(void)arg;
	printf("problem %s: %s (%u)\n", path, why, hits);
}

static void print_lookup(struct rip_sym *sym, uint64_t addr)
{
	struct rip_frame fr[16];
	int n = rip_sym_lookup(sym, addr, fr, 16);

	if (n < 0) {
		printf("0x%llx error %d\n", (unsigned long long)addr, n);
		return;
	}
	for (int i = 0; i < n; i++)
		printf("0x%llx %d %s %s:%d %s %s\n", (unsigned long long)addr, i,
		       fr[i].func ? fr[i].func : "??", fr[i].file ? base_name(fr[i].file) : "??",
		       fr[i].line, fr[i].inlined ? "inl" : "-", fr[i].module ? fr[i].module : "??");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void bench(struct rip_sym *sym, const uint64_t (*ranges)[2], int n)
{
	struct rip_frame fr[16];
	unsigned long count = 0, named = 0;
	double t0 = now(), t1, t2;

	for (int i = 0; i < n; i++)
		for (uint64_t a = ranges[i][0]; a < ranges[i][1] && count < 4000000; a++, count++)
			if (rip_sym_lookup(sym, a, fr, 16) > 0 && fr[0].func)
				named++;
	t1 = now();
	for (int i = 0; i < n; i++)
		for (uint64_t a = ranges[i][0]; a < ranges[i][1]; a++)
			rip_sym_lookup(sym, a, fr, 16);
	t2 = now();
	printf("bench %lu lookups %lu named %.2f s cached %.2f s\n", count, named, t1 - t0,
	       t2 - t1);
}

static int base_of_main(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uint64_t *)arg = info->dlpi_addr;
	return 1; /* the first entry is the executable */
}

static int self_test(void)
{
	struct rip_frame fr[4];
	struct rip_sym *sym;
	struct rec r;
	uint64_t bias = 0;
	int n;

	dl_iterate_phdr(base_of_main, &bias);
	T_EQ(read_rec("/proc/self/exe", &r), 0);
	T_EQ(rip_sym_new(NULL, &sym), 0);
	T_EQ(rip_sym_add_module(sym, r.lo + bias, r.hi + bias, bias, "/proc/self/exe", r.build_id,
				r.build_id_len, RIP_MOD_EXE),
	     0);
	n = rip_sym_lookup(sym, (uintptr_t)self_test, fr, 4);
	T_EQ(n, 1);
	T_STREQ(fr[0].func, "self_test");
	T_STREQ(base_name(fr[0].file), "symq.c");
	T_EQ(rip_sym_problems(sym, NULL, NULL), 0);
	rip_sym_free(sym);
	return t_result();
}

int main(int argc, char **argv)
{
	struct rip_sym_opts opts = { 0 };
	struct rip_sym *sym;
	uint64_t ranges[64][2];
	int nranges = 0, i, err;
	bool do_bench = false;

	if (argc < 2)
		return self_test();
	/* options first: rip_sym_new needs them before any module */
	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-s"))
			opts.sysroot = argv[i + 1];
		else if (!strcmp(argv[i], "-d"))
			opts.debug_dir = argv[i + 1];
		else
			break;
	}
	err = rip_sym_new(&opts, &sym);
	if (err) {
		fprintf(stderr, "rip_sym_new: %s\n", strerror(-err));
		return T_FAIL;
	}
	for (; i < argc; i++) {
		unsigned long long lo, hi, bias;
		char path[4096], rec_file[4096];
		struct rec r;

		if (!strcmp(argv[i], "-b")) {
			do_bench = true;
		} else if (!strcmp(argv[i], "-m") && i + 1 < argc) {
			char *arg = argv[++i], *at = strchr(arg, '@'), *at2;

			if (!at)
				goto usage;
			snprintf(path, sizeof(path), "%.*s", (int)(at - arg), arg);
			bias = strtoull(at + 1, &at2, 0);
			if (*at2 == '@')
				snprintf(rec_file, sizeof(rec_file), "%s", at2 + 1);
			else
				snprintf(rec_file, sizeof(rec_file), "%s%s",
					 opts.sysroot ? opts.sysroot : "", path);
			err = read_rec(rec_file, &r);
			if (err) {
				fprintf(stderr, "%s: %s\n", rec_file, strerror(-err));
				goto err_free;
			}
			err = rip_sym_add_module(sym, r.lo + bias, r.hi + bias, bias, path,
						 r.build_id_len ? r.build_id : NULL, r.build_id_len,
						 0);
			if (nranges < 64) {
				ranges[nranges][0] = r.lo + bias;
				ranges[nranges++][1] = r.hi + bias;
			}
			printf("module %s 0x%llx-0x%llx bias 0x%llx: %d\n", path,
			       (unsigned long long)(r.lo + bias), (unsigned long long)(r.hi + bias),
			       bias, err);
		} else if (!strcmp(argv[i], "-x") && i + 1 < argc) {
			int used = 0;

			if (sscanf(argv[++i], "%lli:%lli:%lli:%n", &lo, &hi, &bias, &used) != 3 ||
			    !used)
				goto usage;
			err = rip_sym_add_module(sym, lo, hi, bias, argv[i] + used, NULL, 0, 0);
			printf("module %s: %d\n", argv[i] + used, err);
		} else if (!strcmp(argv[i], "-X") && i + 1 < argc) {
			if (sscanf(argv[++i], "%lli:%lli:%lli", &lo, &hi, &bias) != 3)
				goto usage;
			err = rip_sym_add_module(sym, lo, hi, bias, "linux-vdso.so.1", NULL, 0,
						 RIP_MOD_VDSO);
			printf("module [vdso]: %d\n", err);
		} else if (!strcmp(argv[i], "--")) {
			continue;
		} else {
			char *end;
			unsigned long long a = strtoull(argv[i], &end, 0);

			if (*end)
				goto usage;
			print_lookup(sym, a);
		}
	}
	if (do_bench)
		bench(sym, (const uint64_t(*)[2])ranges, nranges);
	rip_sym_problems(sym, print_problem, NULL);
	rip_sym_free(sym);
	return T_PASS;

usage:
	fprintf(stderr, "symq: bad argument '%s' (see the comment at the top of symq.c)\n",
		argv[i]);
err_free:
	rip_sym_free(sym);
	return T_FAIL;
}
