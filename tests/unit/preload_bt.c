// SPDX-License-Identifier: Apache-2.0
/*
 * Description: librip-preload.so's backtraces are right.  Runs memprog
 * basic with the preload library and a ring file, then reads the file: the
 * 100 malloc(1001) of site_malloc share one interned stack whose frames[0]
 * lies in site_malloc and frames[1] in basic (the site's caller), and so on
 * for calloc, realloc, mmap and the leak; every bt id a mem event uses was
 * defined by a rip:bt event before it in the same stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rip/resource.h>

#include "read/evread.h"
#include "helpers.h"

#define NSITES 8
#define MAXBT 4096

static const char *site_names[NSITES] = { "site_malloc", "site_calloc", "site_realloc",
					  "site_memalign", "site_valloc", "site_mmap",
					  "site_leak", "basic" };
static uintptr_t site_lo[NSITES], site_hi[NSITES];

static uint64_t bt_f0[MAXBT], bt_f1[MAXBT];
static uint32_t bt_n[MAXBT];
static bool bt_def[MAXBT];
static uint32_t malloc_bt, n_malloc, n_undef, n_checked;

static int site(const char *name)
{
	for (int i = 0; i < NSITES; i++)
		if (!strcmp(site_names[i], name))
			return i;
	return -1;
}

static bool in_site(uint64_t a, const char *name)
{
	int i = site(name);

	return i >= 0 && a >= site_lo[i] && a < site_hi[i];
}

/* frames[0] in the site, frames[1] in basic. */
static void check_bt(uint32_t bt, const char *name, const char *what)
{
	n_checked++;
	if (!bt || bt >= MAXBT || !bt_def[bt]) {
		fprintf(stderr, "%s: bt %u not defined\n", what, bt);
		t_failures++;
		return;
	}
	if (!in_site(bt_f0[bt], name) || bt_n[bt] < 2 || !in_site(bt_f1[bt], "basic")) {
		fprintf(stderr, "%s: bt %u frames %#lx %#lx (%u), want in %s then basic\n", what, bt,
			(unsigned long)bt_f0[bt], (unsigned long)bt_f1[bt], bt_n[bt], name);
		t_failures++;
	}
}

static int on_event(const struct ev_event *e, void *arg)
{
	const char *n = e->type->name;

	if (!strcmp(n, "rip:bt")) {
		uint32_t id = (uint32_t)e->v[0];

		if (id < MAXBT && e->narr) {
			bt_def[id] = true;
			bt_n[id] = e->narr;
			memcpy(&bt_f0[id], e->arr, 8);
			if (e->narr > 1)
				memcpy(&bt_f1[id], e->arr + 8, 8);
		}
		return 0;
	}
	if (!strncmp(n, "mem:", 4)) {
		uint32_t bt = (uint32_t)(strcmp(n, "mem:free") ? e->v[strcmp(n, "mem:alloc") ? 3 : 2]
							      : e->v[1]);

		if (bt && (bt >= MAXBT || !bt_def[bt]))
			n_undef++;
	}
	if (!strcmp(n, "mem:alloc")) {
		uint64_t size = e->v[1], kind = e->v[3];
		uint32_t bt = (uint32_t)e->v[2];

		if (size == 1001 && kind == RIP_MEM_MALLOC) {
			if (!n_malloc++)
				malloc_bt = bt;
			T_EQ(bt, malloc_bt);
			if (n_malloc == 1)
				check_bt(bt, "site_malloc", "malloc");
		} else if (size == 1001 && kind == RIP_MEM_CALLOC) {
			check_bt(bt, "site_calloc", "calloc");
		} else if (size == 1009 && kind == RIP_MEM_MALLOC) {
			check_bt(bt, "site_leak", "leak");
		} else if (size == 65536 && kind == RIP_MEM_MMAP) {
			check_bt(bt, "site_mmap", "mmap");
		} else if (size == 1006 && kind == RIP_MEM_VALLOC) {
			check_bt(bt, "site_valloc", "valloc");
		} else if (size == 1003 && kind == RIP_MEM_POSIX_MEMALIGN) {
			check_bt(bt, "site_memalign", "posix_memalign");
		}
	} else if (!strcmp(n, "mem:realloc") && e->v[2] == 20020) {
		check_bt((uint32_t)e->v[3], "site_realloc", "realloc");
	}
	return 0;
}

static int read_sites(const char *path)
{
	FILE *f = fopen(path, "r");
	char name[64];
	void *addr;

	if (!f)
		return -1;
	while (fscanf(f, "%63s %p", name, &addr) == 2) {
		int i = site(name);

		if (i >= 0)
			site_lo[i] = (uintptr_t)addr;
	}
	fclose(f);
	/* Each site ends where the next one (in address order) starts. */
	for (int i = 0; i < NSITES; i++) {
		site_hi[i] = site_lo[i] + 0x400;
		for (int j = 0; j < NSITES; j++)
			if (site_lo[j] > site_lo[i] && site_lo[j] < site_hi[i])
				site_hi[i] = site_lo[j];
	}
	return 0;
}

int main(void)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	const char *tmp = getenv("TEST_TMP") ? getenv("TEST_TMP") : "/tmp";
	char prog[512], lib[512], ring[512], sites[512], err[256];
	static struct ev_types types;
	struct rr_file f;
	int st;
	pid_t pid;

	snprintf(prog, sizeof(prog), "%s/tests/integ/memprog", build);
	snprintf(lib, sizeof(lib), "%s/librip-preload.so", build);
	snprintf(ring, sizeof(ring), "%s/preload_bt.ring", tmp);
	snprintf(sites, sizeof(sites), "%s/preload_bt.sites", tmp);
	if (access(lib, R_OK) != 0) {
		fprintf(stderr, "%s is missing: run make\n", lib);
		return T_FAIL;
	}
	unlink(ring);
	pid = fork();
	if (pid == 0) {
		char abslib[1024];

		if (!realpath(lib, abslib))
			_exit(126);
		setenv("LD_PRELOAD", abslib, 1);
		setenv("RIP_RING", ring, 1);
		setenv("RIP_MODE", "block", 1);
		setenv("MEMPROG_SITES", sites, 1);
		execl(prog, prog, "basic", (char *)NULL);
		_exit(127);
	}
	T_CHECK(pid > 0);
	T_CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	T_EQ(read_sites(sites), 0);
	if (rr_open(ring, &f, err, sizeof(err))) {
		fprintf(stderr, "rr_open: %s\n", err);
		return T_FAIL;
	}
	T_EQ(ev_read_types(&f, &types, err, sizeof(err)), 0);
	for (uint32_t r = 0; r < f.hdr.ev_rings; r++) {
		struct ev_packet *pk = NULL;
		size_t n = 0, torn = 0;

		if (ev_copy_ring(&f, &types, r, &pk, &n, &torn, err, sizeof(err))) {
			fprintf(stderr, "ring %u: %s\n", r, err);
			t_failures++;
			continue;
		}
		for (size_t i = 0; i < n; i++)
			T_CHECK(ev_decode(&types, pk[i].data, pk[i].len, pk[i].hdr.timestamp_begin,
					  on_event, NULL, err, sizeof(err)) >= 0);
		ev_packets_free(pk, n);
	}
	rr_close(&f);
	T_EQ(n_malloc, 100);
	T_EQ(n_undef, 0);
	T_CHECK(n_checked >= 7);
	printf("%u malloc(1001), %u stacks checked\n", n_malloc, n_checked);
	return t_result();
}
