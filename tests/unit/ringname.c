/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the one parser of ring file names (read/ringname.c) reads
 * back exactly what librip writes and nothing else.  Real files first: a
 * child opens its ring file in a directory of the test and execs itself,
 * and the new image opens one too (rip-PID-START.ring, then
 * rip-PID-START.1.ring): each name parses to the pid and start time its
 * header holds, and to the image's number.  Then names made as lib/ring.c
 * makes them, at the bounds of each number, with the random part librip
 * adds when a name is taken by another's file, and hostile ones (signs,
 * spaces, leading zeros, overflow by one, missing or extra parts, random
 * parts of the wrong length or letters, bytes past the end, librip's
 * markers of files it could not create, mangled): each is taken or refused
 * as the grammar says.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rip.h>

#include "helpers.h"
#include "read/ringfile.h"
#include "read/ringname.h"

/* The child's images: each opens a ring file in dir; the first execs the second. */
static int image(const char *dir, const char *self, int n)
{
	RIP_OPTS(rip_ring_opts, o, .dir = dir, .slots = 4, .ev_rings = 1);

	if (rip_ring_open(&o))
		return 1;
	if (n == 0) {
		execl(self, self, "image", dir, (char *)NULL);
		return 1;
	}
	return 0;
}

/* The real files: every ring file in dir parses to what its header says. */
static void real_files(const char *self)
{
	char dir[PATH_MAX], path[PATH_MAX + NAME_MAX + 2], err[RR_ERR_MAX];
	const char *tmp = getenv("TEST_TMP");
	unsigned seen = 0, gens = 0;
	struct dirent *e;
	pid_t pid;
	DIR *d;
	int st;

	snprintf(dir, sizeof(dir), "%s/rings", tmp ? tmp : "/tmp");
	mkdir(dir, 0700);
	pid = fork();
	if (pid == 0)
		_exit(image(dir, self, 0));
	T_CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st));
	d = opendir(dir);
	T_CHECK(d != NULL);
	while (d && (e = readdir(d))) {
		struct rn_name n;
		struct rr_file f;

		if (e->d_name[0] == '.')
			continue;
		T_EQ(rn_parse(e->d_name, &n), 0);
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		T_EQ(rr_open(path, &f, err, sizeof(err)), 0);
		T_EQ(n.pid, pid);
		T_EQ(n.pid, f.hdr.pid);
		T_EQ(n.start, f.hdr.start_ticks);
		T_CHECK(n.start != 0);
		rr_close(&f);
		seen++;
		gens |= 1u << (n.gen < 8 ? n.gen : 7);
	}
	if (d)
		closedir(d);
	T_EQ(seen, 2);
	T_EQ(gens, 3); /* the first image (0) and the one after the execve (1) */
}

struct good {
	const char *name;
	pid_t pid;
	uint64_t start;
	unsigned gen;
	const char *tag;
};

static const struct good goods[] = {
	{ "rip-1-0.ring", 1, 0, 0, "" },
	{ "rip-4242-123456.ring", 4242, 123456, 0, "" },
	{ "rip-4242-123456.1.ring", 4242, 123456, 1, "" },
	{ "rip-4242-123456.99.ring", 4242, 123456, 99, "" },
	{ "rip-1073741823-18446744073709551615.ring", 0x3fffffff, UINT64_MAX, 0, "" },
	{ "rip-7-8.4294967295.ring", 7, 8, 4294967295u, "" },
	{ "rip-10-20.10.ring", 10, 20, 10, "" },
	{ "rip-4242-123456.abcdefgh.ring", 4242, 123456, 0, "abcdefgh" },
	{ "rip-4242-123456.3.zzzzzzzz.ring", 4242, 123456, 3, "zzzzzzzz" },
	{ "rip-4242-123456.ringabcd.ring", 4242, 123456, 0, "ringabcd" },
	{ "rip-4242-123456.ringring.ring", 4242, 123456, 0, "ringring" },
};

static const char *const bads[] = {
	"",
	"rip-",
	"rip-.ring",
	"rip-1.ring",
	"rip-1-.ring",
	"rip--1-2.ring",
	"rip-0-2.ring",
	"rip-+1-2.ring",
	"rip- 1-2.ring",
	"rip-1- 2.ring",
	"rip-1--2.ring",
	"rip-1-+2.ring",
	"rip-01-2.ring",
	"rip-1-02.ring",
	"rip-1073741824-2.ring", /* pid one past the bound */
	"rip-99999999999999999999-2.ring",
	"rip-1-18446744073709551616.ring", /* start one past UINT64_MAX */
	"rip-1-99999999999999999999999.ring",
	"rip-1-2.0.ring", /* the first image has no .N */
	"rip-1-2.00.ring",
	"rip-1-2.01.ring",
	"rip-1-2.4294967296.ring", /* N one past 32 bits */
	"rip-1-2..ring",
	"rip-1-2.3.4.ring",
	"rip-1-2.-3.ring",
	"rip-1-2.ring.",
	"rip-1-2.ringx",
	"rip-1-2.ring/",
	"rip-1-2.rin",
	"rip-1-2",
	"rip-1-2.RING",
	"RIP-1-2.ring",
	"xrip-1-2.ring",
	" rip-1-2.ring",
	"rip-1-2.ring ",
	"rip-1-2x.ring",
	"rip-1x-2.ring",
	"rip-1-2\n.ring",
	"rip-1-2.ring\n",
	"rip-\xff-2.ring",
	"rip-1-2.\xc3\xa9.ring",
	"rip-1/2-3.ring",
	"../rip-1-2.ring",
	"rip-1-2.ring.failed-28-4096", /* a marker is not a ring file */
	"rip-1-2.abcdefg.ring",	       /* the random part: 8 letters, no fewer */
	"rip-1-2.abcdefghi.ring",      /* nor more */
	"rip-1-2.abcDefgh.ring",
	"rip-1-2.abcdefg1.ring",
	"rip-1-2.abcdefgh.3.ring",     /* N before it, never after */
	"rip-1-2.abcdefgh..ring",
	"rip-1-2..abcdefgh.ring",
	"rip-1-2.0.abcdefgh.ring",
	"rip-1-2.abcdefgh.abcdefgh.ring",
	"rip-1-2.abcdefgh",
	"rip-1-2.ringabcd",
};

struct failed {
	const char *name;
	int ok;
	pid_t pid;
	int err;
	uint64_t need;
};

static const struct failed markers[] = {
	{ "rip-12-34.ring.failed-28-1048576", 1, 12, 28, 1048576 },
	{ "rip-12-34.2.ring.failed-122-0", 1, 12, 122, 0 },
	{ "rip-12-34.ring.failed-4095-18446744073709551615", 1, 12, 4095, UINT64_MAX },
	{ "rip-12-34.ring.failed-1-1", 1, 12, 1, 1 },
	{ "rip-12-34.qwertyui.ring.failed-28-1", 1, 12, 28, 1 },
	{ "rip-12-34.ring.failed-0-1", 0, 0, 0, 0 },
	{ "rip-12-34.ring.failed-4096-1", 0, 0, 0, 0 },
	{ "rip-12-34.ring.failed--28-1", 0, 0, 0, 0 },
	{ "rip-12-34.ring.failed-28-", 0, 0, 0, 0 },
	{ "rip-12-34.ring.failed-28", 0, 0, 0, 0 },
	{ "rip-12-34.ring.failed-28-12x", 0, 0, 0, 0 },
	{ "rip-12-34.ring.failed-28-18446744073709551616", 0, 0, 0, 0 },
	{ "rip-12-34.ring.failed-028-1", 0, 0, 0, 0 },
	{ "rip-12-34.ring.failed-28-1-", 0, 0, 0, 0 },
	{ "rip-12-34.ring.failed-", 0, 0, 0, 0 },
	{ "rip-12-34.ring.failure-28-1", 0, 0, 0, 0 },
	{ "rip-0-34.ring.failed-28-1", 0, 0, 0, 0 },
	{ "rip-12-34.0.ring.failed-28-1", 0, 0, 0, 0 },
	{ "x.ring.failed-28-1", 0, 0, 0, 0 },
	{ "rip-12-34.ring", 0, 0, 0, 0 },
	{ "", 0, 0, 0, 0 },
};

int main(int argc, char **argv)
{
	struct rn_name n;
	char name[128];
	uint64_t need;
	int err;

	if (argc == 3 && !strcmp(argv[1], "image"))
		return image(argv[2], argv[0], 1);
	real_files(argv[0]);

	for (size_t i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		memset(&n, 0xa5, sizeof(n));
		if (rn_parse(goods[i].name, &n)) {
			fprintf(stderr, "refused: \"%s\"\n", goods[i].name);
			t_failures++;
			continue;
		}
		T_EQ(n.pid, goods[i].pid);
		T_CHECK(n.start == goods[i].start);
		T_EQ(n.gen, goods[i].gen);
		T_CHECK(!strcmp(n.tag, goods[i].tag));
	}
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		memset(&n, 0, sizeof(n));
		if (rn_parse(bads[i], &n) != -EINVAL) {
			fprintf(stderr, "taken: \"%s\"\n", bads[i]);
			t_failures++;
		}
		T_EQ(n.pid, 0); /* nothing written on a refusal */
	}
	for (size_t i = 0; i < sizeof(markers) / sizeof(markers[0]); i++) {
		const struct failed *m = &markers[i];
		int ret;

		memset(&n, 0, sizeof(n));
		err = 0;
		need = 0;
		ret = rn_parse_failed(m->name, &n, &err, &need);
		if ((ret == 0) != m->ok) {
			fprintf(stderr, "%s: \"%s\"\n", m->ok ? "refused" : "taken", m->name);
			t_failures++;
			continue;
		}
		T_EQ(n.pid, m->pid);
		T_EQ(err, m->err);
		T_CHECK(need == m->need);
	}

	/* names as lib/ring.c writes them, over a spread of values */
	for (uint64_t v = 1; v && v < UINT64_MAX / 3; v = v * 3 + 1) {
		pid_t pid = (pid_t)(v % RN_PID_MAX) + 1;
		unsigned gen = (unsigned)(v % 100);

		if (gen)
			snprintf(name, sizeof(name), "rip-%d-%" PRIu64 ".%u.ring", (int)pid, v,
				 gen);
		else
			snprintf(name, sizeof(name), "rip-%d-%" PRIu64 ".ring", (int)pid, v);
		T_EQ(rn_parse(name, &n), 0);
		T_EQ(n.pid, pid);
		T_CHECK(n.start == v);
		T_EQ(n.gen, gen);
		snprintf(name + strlen(name), sizeof(name) - strlen(name), ".failed-%d-%" PRIu64,
			 (int)(v % 4095) + 1, v);
		T_EQ(rn_parse_failed(name, &n, &err, &need), 0);
		T_EQ(n.pid, pid);
		T_EQ(err, (int)(v % 4095) + 1);
		T_CHECK(need == v);
	}
	/* rip run's note on a dead child (RING.gone): exactly that suffix */
	T_EQ(rn_parse_gone("rip-42-7.ring.gone", &n), 0);
	T_EQ(n.pid, 42);
	T_CHECK(n.start == 7);
	T_EQ(rn_parse_gone("rip-42-7.2.abcdefgh.ring.gone", &n), 0);
	T_EQ(n.gen, 2u);
	T_EQ(strcmp(n.tag, "abcdefgh"), 0);
	T_EQ(rn_parse_gone("rip-42-7.ring", &n), -EINVAL);
	T_EQ(rn_parse_gone("rip-42-7.ring.gonex", &n), -EINVAL);
	T_EQ(rn_parse_gone("rip-42-7.ring.gon", &n), -EINVAL);
	T_EQ(rn_parse_gone(".rip-42-7.ring.gone", &n), -EINVAL);
	T_EQ(rn_parse("rip-42-7.ring.gone", &n), -EINVAL);
	return t_result();
}
