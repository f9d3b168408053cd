#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a program with an allocator of its own (a pool cut from a
# static arena, which no hook of librip-preload.so sees) reports its
# blocks through <rip/module.h> itself, as librip-module(3) says: its own
# RIP_MODULE and RIP_KIND, and rip_acquire and rip_release called from its
# pool_alloc and pool_free.  Under rip run --mem, rip leaks --json shows
# the one block it never released (200 bytes, made in main), as a kind
# "pool".  The modules' category was on only with --module or --track, so
# those reports were dropped and rip leaks said "pool: 0 never released".
# Untraced, the program runs as it is (the functions are weak).
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3
CC=${CC:-cc}

cat >"$TEST_TMP/pool.c" <<'C'
#include <stdio.h>
#include <rip/module.h>

RIP_MODULE("pool", "the program's own pool allocator");
RIP_KIND(pool_kind, "pool", "a block of the pool", 0);

static _Alignas(16) char arena[1 << 16];
static size_t used;

__attribute__((noinline)) void *pool_alloc(size_t n)
{
	void *p = arena + used;

	used += (n + 15) & ~(size_t)15;
	rip_acquire(pool_kind, p, n);
	return p;
}

__attribute__((noinline)) void pool_free(void *p)
{
	rip_release(pool_kind, p);
}

int main(void)
{
	void *a = pool_alloc(100), *b = pool_alloc(200);

	pool_free(a);
	printf("kept %p\n", b);
	return 0;
}
C
"$CC" -g -O1 -Iinclude -o "$TEST_TMP/pool" "$TEST_TMP/pool.c" || die "cannot build the program"
"$TEST_TMP/pool" >"$TEST_TMP/plain" || die "the program fails untraced"

expect_status 0 "rip run --mem" "$RIP" run --mem -q -o "$TEST_TMP/tr" -- "$TEST_TMP/pool"
expect_status 0 "rip leaks --json" "$RIP" leaks --json "$TEST_TMP/tr"
python3 - "$TEST_TMP/out" <<'PY' || fail "the pool's block is not reported: $(cat "$TEST_TMP/out")"
import json, sys
r = json.load(open(sys.argv[1]))
g = [g for g in r["leaks"] if g["resource"] == "pool"]
assert len(g) == 1 and g[0]["count"] == 1, g
assert g[0]["stack"][0]["function"] == "main", g[0]["stack"]
PY
t_done
