#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: glibc's own names of its allocator (__libc_malloc,
# __libc_calloc, __libc_realloc, __libc_memalign, __libc_free), which a
# program may call directly, are traced like malloc and free.  They were
# not hooked: a block from malloc freed by __libc_free was reported as a
# leak, and one from __libc_malloc freed by free as a free never seen
# made.  The program mixes the two families and leaks one 100-byte block
# from __libc_malloc; rip leaks must report exactly that block, and
# rip report count every allocation and free.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3
CC=${CC:-cc}

cat >"$TEST_TMP/lm.c" <<'C'
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

int main(void)
{
	void *a = malloc(10), *b = __libc_malloc(20), *c = __libc_calloc(3, 10);
	void *d = __libc_memalign(64, 40), *e = __libc_realloc(NULL, 50), *leak;

	e = __libc_realloc(e, 60);
	leak = __libc_malloc(100);
	if (!a || !b || !c || !d || !e || !leak)
		return 3;
	__libc_free(a);
	free(b);
	__libc_free(c);
	free(d);
	__libc_free(e);
	return write(1, "done\n", 5) == 5 ? 0 : 2;
}
C
"$CC" -O1 -g -o "$TEST_TMP/lm" "$TEST_TMP/lm.c" || die "cannot build the test program"
"$TEST_TMP/lm" >/dev/null || skip "this libc has no __libc_malloc family"

expect_status 0 "rip run" "$RIP" run --mem -q -o "$TEST_TMP/trace" -- "$TEST_TMP/lm"
grep -q '^done$' "$TEST_TMP/out" || fail "the program did not run to its end"
expect_status 0 "rip leaks --json" "$RIP" leaks --json "$TEST_TMP/trace"
python3 - "$TEST_TMP/out" <<'PY' || fail "rip leaks: wrong answer for the __libc_ names"
import json, sys
r = json.load(open(sys.argv[1]))
m = r["totals"]["mem"]
assert (m["count"], m["bytes"], m["released_unseen"]) == (1, 100, 0), m
PY
expect_status 0 "rip report --json" "$RIP" report --json "$TEST_TMP/trace"
python3 - "$TEST_TMP/out" <<'PY' || fail "rip report: wrong answer for the __libc_ names"
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
# 6 blocks made (the realloc moves or resizes one: a free and an allocation), 5 freed
assert m["frees_unseen"] == 0 and m["live_blocks"] == 1 and m["live_bytes"] == 100, m
assert m["allocations"] == 7 and m["frees"] == 6, m
PY
t_done
