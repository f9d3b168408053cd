#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: failed calls of the allocator are recorded and counted, per
# function.  The program makes a known number of failing calls of each kind
# (malloc of SIZE_MAX, calloc whose n * size overflows and one too big,
# realloc to a huge size, reallocarray overflowing and too big,
# posix_memalign and aligned_alloc too big), each of which must still set
# errno as the real one does.  The preload library recorded nothing for a
# failed call, so rip report said no allocation failed: now --json has
# "failed" and "failed_by_function" exact, the text report the same line,
# rip leaks counts them (not as leaks), and the block a failed realloc left
# in place is still the one freed later (no free never seen, nothing live).
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3
CC=${CC:-cc}

cat >"$TEST_TMP/fp.c" <<'C'
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* volatile: the compiler must neither see the sizes nor drop the calls */
static volatile size_t big = SIZE_MAX - 4096, quarter = SIZE_MAX / 4;
static void *volatile sink;

#define FAILS(call)                                                          \
	do {                                                                 \
		errno = 0;                                                   \
		sink = (call);                                               \
		if (sink || errno != ENOMEM) {                               \
			fprintf(stderr, "%s: %p, errno %d\n", #call, sink, errno); \
			return 3;                                            \
		}                                                            \
	} while (0)

int main(void)
{
	void *p = malloc(100), *q = (void *)1;

	if (!p)
		return 2;
	FAILS(malloc(big));
	FAILS(calloc(quarter, 8)); /* overflows */
	FAILS(calloc(quarter, 8));
	FAILS(calloc(big, 1)); /* too big */
	FAILS(realloc(p, big));
	FAILS(realloc(p, big));
	FAILS(reallocarray(p, quarter, 8)); /* overflows */
	FAILS(reallocarray(NULL, big, 1)); /* too big */
	if (posix_memalign(&q, 64, big) != ENOMEM || q != (void *)1)
		return 4;
	FAILS(aligned_alloc(64, big));
	free(p); /* still the block malloc made */
	return write(1, "done\n", 5) == 5 ? 0 : 5; /* no stdio buffer: nothing else allocated */
}
C
"$CC" -O1 -g -o "$TEST_TMP/fp" "$TEST_TMP/fp.c" || die "cannot build the test program"
"$TEST_TMP/fp" >/dev/null || die "the test program fails without rip"

expect_status 0 "rip run" "$RIP" run --mem -q -o "$TEST_TMP/trace" -- "$TEST_TMP/fp"
grep -q '^done$' "$TEST_TMP/out" || fail "the program did not run to its end under rip: $(cat "$TEST_TMP/err")"

expect_status 0 "rip report --json" "$RIP" report --json "$TEST_TMP/trace"
python3 - "$TEST_TMP/out" <<'PY' || fail "rip report --json: failed calls"
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
want = {"malloc": 1, "calloc": 3, "realloc": 2, "reallocarray": 2, "posix_memalign": 1,
        "aligned_alloc": 1}
assert m.get("failed_by_function") == want, m.get("failed_by_function")
assert m["failed"] == 10, m
# the realloc that failed left p: freed once, seen made
assert (m["frees_unseen"], m["live_blocks"], m["allocations"], m["frees"]) == (0, 0, 1, 1), m
PY

expect_status 0 "rip report" "$RIP" report "$TEST_TMP/trace"
grep -q '^  failed allocations: 10, frees of blocks never seen allocated: 0, allocated again while live: 0$' \
	"$TEST_TMP/out" || fail "text: failed allocations line"
grep -q '^  failed calls by function: malloc 1, calloc 3, realloc 2, reallocarray 2, posix_memalign 1, aligned_alloc 1$' \
	"$TEST_TMP/out" || fail "text: failed calls by function: $(grep failed "$TEST_TMP/out")"

expect_status 0 "rip leaks --json" "$RIP" leaks --json "$TEST_TMP/trace"
python3 - "$TEST_TMP/out" <<'PY' || fail "rip leaks: failed calls"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["failed_allocs"] == 10, r["failed_allocs"]
assert r["totals"]["mem"]["count"] == 0, r["totals"]
PY
t_done
