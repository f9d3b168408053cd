#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a realloc of NULL is an allocation, whatever the name it was
# called by, and rip report counts it as malloc's are, never among the
# reallocs.  The compiler turns realloc(NULL, n) in the source into a call
# of malloc (gcc does at -O0 already), but not reallocarray(NULL, ...),
# __libc_realloc(NULL, ...) nor a realloc called through a pointer, which
# the preload library records as mem:realloc with old 0: those were counted
# as reallocs and the first not.  The program makes four blocks by the four
# routes and reallocs one of them once: 5 allocations, 1 realloc.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3
CC=${CC:-cc}

cat >"$TEST_TMP/rn.c" <<'C'
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_realloc(void *, size_t);
static void *(*volatile rf)(void *, size_t) = realloc;

int main(void)
{
	void *a = realloc(NULL, 100), *b = reallocarray(NULL, 10, 20);
	void *c = __libc_realloc(NULL, 300), *d = rf(NULL, 400);

	if (!a || !b || !c || !d || !(a = realloc(a, 1000)))
		return 3;
	free(a);
	free(b);
	free(c);
	free(d);
	return write(1, "done\n", 5) == 5 ? 0 : 2;
}
C
"$CC" -O1 -g -o "$TEST_TMP/rn" "$TEST_TMP/rn.c" || die "cannot build the test program"
"$TEST_TMP/rn" >/dev/null || die "the test program fails without rip"

expect_status 0 "rip run" "$RIP" run --mem -q -o "$TEST_TMP/trace" -- "$TEST_TMP/rn"
grep -q '^done$' "$TEST_TMP/out" || fail "the program did not run to its end under rip"
# three of the four made by mem:realloc of old 0 (the compiler's malloc aside)
expect_status 0 "rip dump" "$RIP" dump "$TEST_TMP/trace"
n=$(grep -c ' mem:realloc old=0x0 ' "$TEST_TMP/out")
[ "$n" = 3 ] || fail "expected 3 mem:realloc of NULL in the trace, found $n"

expect_status 0 "rip report --json" "$RIP" report --json "$TEST_TMP/trace"
python3 - "$TEST_TMP/out" <<'PY' || fail "rip report --json: reallocs of NULL"
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
got = (m["allocations"], m["bytes"], m["reallocs"], m["frees"], m["live_blocks"])
assert got == (5, 2000, 1, 5, 0), m
PY
expect_status 0 "rip report" "$RIP" report "$TEST_TMP/trace"
grep -q '^  allocations: 5 (2000 bytes), 1 of them reallocs$' "$TEST_TMP/out" ||
	fail "text: $(grep allocations: "$TEST_TMP/out")"
t_done
