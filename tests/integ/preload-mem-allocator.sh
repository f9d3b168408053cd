#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a program whose malloc is a library of its own (as
# Debian's redis-server links libjemalloc) is traced through its blocks,
# not through the arenas the allocator maps them from.  A small allocator
# library maps 1 MiB arenas with mmap, gives blocks of 64 KiB and more
# mappings of their own and unmaps them on free; the program leaks 7
# blocks of 100 bytes at one site, frees everything else (a big block
# among them) and leaks one mapping of 3 pages it makes itself.  rip leaks
# --json must report exactly those two groups: no arena of the allocator
# (made or unmapped in its code), no block made again while live, and the
# program's own mapping still there.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3
CC=${CC:-cc}

cat >"$TEST_TMP/myalloc.c" <<'C'
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA (1ul << 20)
#define BIG (64ul << 10)
#define HDR 16ul

static char *cur, *end;
static int lock;

static void *take(size_t n)
{
	char *p;

	n = (n + HDR + 15) & ~15ul;
	if (n - HDR >= BIG) {
		p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
	} else {
		while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
			;
		if (!cur || cur + n > end) {
			cur = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				   -1, 0);
			if (cur == MAP_FAILED)
				cur = NULL;
			end = cur ? cur + ARENA : NULL;
		}
		p = cur;
		if (p)
			cur += n;
		__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
		if (!p)
			return NULL;
	}
	*(size_t *)p = n;
	return p + HDR;
}

void *malloc(size_t n) { return take(n); }
void *calloc(size_t a, size_t b) { return take(a * b); } /* fresh arenas are zero */
size_t malloc_usable_size(void *p) { return p ? *(size_t *)((char *)p - HDR) - HDR : 0; }

void free(void *p)
{
	size_t n;

	if (!p)
		return;
	n = *(size_t *)((char *)p - HDR);
	if (n - HDR >= BIG)
		munmap((char *)p - HDR, n);
}

void *realloc(void *p, size_t n)
{
	void *q = take(n);
	size_t old = malloc_usable_size(p);

	if (q && p)
		memcpy(q, p, old < n ? old : n);
	if (q)
		free(p);
	return q;
}

int posix_memalign(void **out, size_t align, size_t n)
{
	char *p = take(n + align);

	if (!p)
		return 12;
	*out = (void *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	return 0; /* never freed in this test's runs */
}

void *aligned_alloc(size_t align, size_t n)
{
	void *p;

	return posix_memalign(&p, align, n) ? NULL : p;
}

void *memalign(size_t align, size_t n) { return aligned_alloc(align, n); }
C

cat >"$TEST_TMP/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void *keep[7];

__attribute__((noinline)) static void leak_some(void)
{
	for (int i = 0; i < 7; i++)
		keep[i] = malloc(100); /* LEAK */
}

__attribute__((noinline)) static char *own_map(long page)
{
	return mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0); /* MAP */
}

int main(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *m, *big;

	for (int i = 0; i < 20000; i++) /* 2.5 MB of small blocks: several arenas */
		free(malloc(32 + i % 200));
	big = malloc(1 << 20);
	memset(big, 1, 1 << 20);
	free(big);
	leak_some();
	m = own_map(page);
	if (m == MAP_FAILED)
		return 2;
	m[0] = 1;
	printf("done %p\n", (void *)keep[0]);
	return 0;
}
C
"$CC" -O1 -g -fPIC -shared -o "$TEST_TMP/libmyalloc.so" "$TEST_TMP/myalloc.c" ||
	die "cannot build the allocator"
"$CC" -O0 -g -fno-omit-frame-pointer -o "$TEST_TMP/prog" "$TEST_TMP/prog.c" \
	-L"$TEST_TMP" -lmyalloc -Wl,-rpath,"$TEST_TMP" ||
	die "cannot build the test program"
leak=$(grep -n '/\* LEAK \*/' "$TEST_TMP/prog.c" | cut -d: -f1)
map=$(grep -n '/\* MAP \*/' "$TEST_TMP/prog.c" | cut -d: -f1)
page=$(getconf PAGESIZE)

expect_status 0 "rip run" "$RIP" run --mem -q -o "$TEST_TMP/trace" -- "$TEST_TMP/prog"
grep -q '^done ' "$TEST_TMP/out" || fail "the program did not run to its end"
expect_status 0 "rip leaks --json" "$RIP" leaks --json "$TEST_TMP/trace"
python3 - "$TEST_TMP/out" "$page" "$leak" "$map" <<'PY' ||
import json, sys
r = json.load(open(sys.argv[1]))
page, leak, mapl = (int(x) for x in sys.argv[2:5])
got, other = {}, []
for g in r["leaks"]:
    if g["resource"] != "mem":
        continue
    f = g["stack"][0] if g["stack"] else {}
    if f.get("file") and f["file"].endswith("prog.c") and f["function"] in ("leak_some", "own_map"):
        got[f["function"]] = (g["count"], g["bytes"])
    else:
        other.append((g["count"], g["bytes"], [s.get("function") or s.get("address") for s in g["stack"][:4]]))
want = {"leak_some": (7, 700), "own_map": (1, 3 * page)}
assert got == want, ("leaks", got, "expected", want)
assert not [o for o in other if o[1] >= 1 << 20], ("the allocator's arenas shown as leaks", other)
assert r["totals"]["mem"]["made_again"] == 0, r["totals"]["mem"]
PY
	fail "rip leaks reports the allocator's arenas, or not the program's leaks"
t_done
