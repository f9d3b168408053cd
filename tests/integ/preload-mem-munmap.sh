#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a munmap of part of a mapping leaves the rest live.  A
# program maps 3 MiB, unmaps its first and last MiB, punches a one-page
# hole in the middle one and leaks the rest; it also moves the last two
# of eight pages of another mapping with mremap (to four pages) and leaks
# both.  rip leaks --json must report exactly the bytes still mapped at
# each site (1 MiB - 1 page at the mmap; 6 pages at the other mmap; 4 pages
# at the mremap), and the program's own /proc/self/maps must agree.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3
CC=${CC:-cc}

cat >"$TEST_TMP/mu.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIB (1ul << 20)

static char maps[1 << 16];

/* Bytes of [lo, hi) mapped, from /proc/self/maps (read without allocating). */
static unsigned long mapped(unsigned long lo, unsigned long hi)
{
	unsigned long sum = 0, a, b;
	char *s = maps;
	int fd = open("/proc/self/maps", O_RDONLY);
	ssize_t n, len = 0;

	while (fd >= 0 && (n = read(fd, maps + len, sizeof(maps) - 1 - len)) > 0)
		len += n;
	close(fd);
	maps[len] = 0;
	while (s && *s) {
		if (sscanf(s, "%lx-%lx", &a, &b) == 2 && b > lo && a < hi)
			sum += (b < hi ? b : hi) - (a > lo ? a : lo);
		s = strchr(s, '\n');
		s = s ? s + 1 : NULL;
	}
	return sum;
}

__attribute__((noinline)) static char *trimmed(void)
{
	long page = sysconf(_SC_PAGESIZE);
	int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS;
	char *p = mmap(NULL, 3 * MIB, prot, flags, -1, 0); /* SITE1 */

	if (p == MAP_FAILED)
		exit(2);
	if (munmap(p, MIB) || munmap(p + 2 * MIB, MIB) || munmap(p + MIB + 16 * page, page))
		exit(3);
	memset(p + MIB, 1, 16 * page);
	memset(p + MIB + 17 * page, 1, MIB - 17 * page);
	return p;
}

__attribute__((noinline)) static char *moved(char **to)
{
	long page = sysconf(_SC_PAGESIZE);
	int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS;
	char *p = mmap(NULL, 8 * page, prot, flags, -1, 0); /* SITE2 */

	if (p == MAP_FAILED)
		exit(2);
	*to = mremap(p + 6 * page, 2 * page, 4 * page, MREMAP_MAYMOVE); /* SITE3 */
	if (*to == MAP_FAILED)
		exit(4);
	return p;
}

int main(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *to, *p = trimmed(), *q = moved(&to);
	unsigned long a = mapped((unsigned long)p, (unsigned long)p + 3 * MIB);
	unsigned long b = mapped((unsigned long)q, (unsigned long)q + 8 * page);
	unsigned long c = mapped((unsigned long)to, (unsigned long)to + 4 * page);

	printf("maps %lu %lu %lu\n", a, b, c);
	return 0;
}
C
"$CC" -O0 -g -fno-omit-frame-pointer -o "$TEST_TMP/mu" "$TEST_TMP/mu.c" ||
	die "cannot build the test program"
site1=$(grep -n '/\* SITE1 \*/' "$TEST_TMP/mu.c" | cut -d: -f1)
site2=$(grep -n '/\* SITE2 \*/' "$TEST_TMP/mu.c" | cut -d: -f1)
site3=$(grep -n '/\* SITE3 \*/' "$TEST_TMP/mu.c" | cut -d: -f1)
page=$(getconf PAGESIZE)

expect_status 0 "rip run" "$RIP" run --mem -q -o "$TEST_TMP/trace" -- "$TEST_TMP/mu"
maps=$(grep '^maps ' "$TEST_TMP/out") || fail "the program did not run to its end"
expect_status 0 "rip leaks --json" "$RIP" leaks --json "$TEST_TMP/trace"
python3 - "$TEST_TMP/out" "$page" "$site1" "$site2" "$site3" "$maps" <<'PY' ||
import json, sys
r = json.load(open(sys.argv[1]))
page, s1, s2, s3 = (int(x) for x in sys.argv[2:6])
maps = [int(x) for x in sys.argv[6].split()[1:]]
want = {("trimmed", s1): (1 << 20) - page, ("moved", s2): 6 * page, ("moved", s3): 4 * page}
assert maps == list(want.values()), ("/proc/self/maps says", maps, "expected", want)
got = {}
for g in r["leaks"]:
    if g["resource"] != "mem" or not g["stack"]:
        continue
    f = g["stack"][0]
    if f["file"] and f["file"].endswith("mu.c"):
        assert (f["function"], f["line"]) not in got, g
        got[(f["function"], f["line"])] = (g["count"], g["bytes"])
assert got == {k: (1, v) for k, v in want.items()}, ("leaks", got, "expected", want)
assert r["totals"]["mem"]["made_again"] == 0, r["totals"]["mem"]
PY
	fail "rip leaks does not report the bytes still mapped"
t_done
