#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: libc entry points that call other hooked ones are recorded
# once.  reallocarray (glibc's calls realloc through the PLT, our hook):
# a chain of three reallocarray calls that leaks 300 bytes and a fourth
# block freed; rip leaks --json reports exactly one leaked block of 300
# bytes at its site, nothing made again while live, and valgrind's
# definitely-lost set is the same.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3 valgrind
CC=${CC:-cc}

cat >"$TEST_TMP/ra.c" <<'C'
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vgscrub.h"

static void *volatile sink;

__attribute__((noinline)) static void leak_reallocarray(void)
{
	char *p = reallocarray(NULL, 10, 10);

	memset(p, 1, 100);
	p = reallocarray(p, 20, 10);
	memset(p, 2, 200);
	p = reallocarray(p, 30, 10); /* SITE */
	memset(p, 3, 300);
	sink = p;
	sink = NULL;
}

__attribute__((noinline)) static void freed_reallocarray(void)
{
	char *q = reallocarray(NULL, 5, 5);

	memset(q, 4, 25);
	free(q);
}

int main(void)
{
	leak_reallocarray();
	freed_reallocarray();
	if (write(1, "ra done\n", 8) != 8)
		return 1;
	vg_scrub();
	return 0;
}
C
"$CC" -O0 -g -fno-omit-frame-pointer -Wl,-z,now -Itests -o "$TEST_TMP/ra" "$TEST_TMP/ra.c" ||
	die "cannot build the test program"
site=$(grep -n '/\* SITE \*/' "$TEST_TMP/ra.c" | cut -d: -f1)

expect_status 0 "rip run" "$RIP" run --mem -q -o "$TEST_TMP/trace" -- "$TEST_TMP/ra"
grep -q '^ra done$' "$TEST_TMP/out" || fail "the program did not run to its end"
expect_status 0 "rip leaks --json" "$RIP" leaks --json "$TEST_TMP/trace"
python3 - "$TEST_TMP/out" "$site" <<'PY' || fail "rip leaks: not exactly the one reallocarray leak"
import json, sys
r = json.load(open(sys.argv[1]))
site = int(sys.argv[2])
mine = [g for g in r["leaks"] if g["resource"] == "mem" and any(
    f["file"] and f["file"].endswith("ra.c") for f in g["stack"] or [])]
assert len(mine) == 1, mine
g = mine[0]
assert (g["count"], g["bytes"]) == (1, 300), g
assert (g["stack"][0]["function"], g["stack"][0]["line"]) == ("leak_reallocarray", site), g["stack"][0]
t = r["totals"]["mem"]
assert t["made_again"] == 0, ("made again while live", t)
assert r["complete"], "incomplete trace"
PY

valgrind --leak-check=full "$TEST_TMP/ra" >/dev/null 2>"$TEST_TMP/vg.err" ||
	fail "the program under valgrind failed"
grep -q 'definitely lost: 300 bytes in 1 blocks' "$TEST_TMP/vg.err" ||
	fail "valgrind does not agree: $(grep 'definitely lost' "$TEST_TMP/vg.err")"
grep -q 'total heap usage: 4 allocs, 3 frees' "$TEST_TMP/vg.err" ||
	fail "valgrind counts other calls: $(grep 'total heap usage' "$TEST_TMP/vg.err")"
t_done
