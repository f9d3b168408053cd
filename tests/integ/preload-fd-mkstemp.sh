#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: descriptors made by mkstemp and its variants are recorded.
# glibc's mkstemp opens the file with its internal open, which the open
# hook does not see: sort(1) writing its temporary files showed only their
# closes ("closes of descriptors never seen opened"), and a temporary file
# left open was no leak.  The program makes four files with mkstemp,
# mkostemp, mkstemps and mkostemps, closes two (one through fdopen and
# fclose) and keeps two open; rip leaks must list exactly those two, with
# the names the calls made, and count no close never seen opened; rip
# report must count the four opens.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3
CC=${CC:-cc}

cat >"$TEST_TMP/mk.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char a[4096], b[4096], c[4096], d[4096];
	int fa, fb, fc, fd;
	FILE *f;

	snprintf(a, sizeof(a), "%s/a-XXXXXX", argv[1]);
	snprintf(b, sizeof(b), "%s/b-XXXXXX", argv[1]);
	snprintf(c, sizeof(c), "%s/c-XXXXXX.tmp", argv[1]);
	snprintf(d, sizeof(d), "%s/d-XXXXXX.tmp", argv[1]);
	fa = mkstemp(a);
	fb = mkostemp(b, O_CLOEXEC);
	fc = mkstemps(c, 4);
	fd = mkostemps(d, 4, O_CLOEXEC);
	if (fa < 0 || fb < 0 || fc < 0 || fd < 0)
		return 2;
	close(fa);
	f = fdopen(fc, "w");
	if (!f || fputs("x\n", f) < 0 || fclose(f))
		return 3;
	printf("open %s %s\n", b, d);
	return 0;
}
C
"$CC" -O1 -g -o "$TEST_TMP/mk" "$TEST_TMP/mk.c" || die "cannot build the test program"
mkdir "$TEST_TMP/files" || die "mkdir"

expect_status 0 "rip run" "$RIP" run --fd -q -o "$TEST_TMP/trace" -- "$TEST_TMP/mk" "$TEST_TMP/files"
open=$(grep '^open ' "$TEST_TMP/out") || fail "the program did not run to its end"
expect_status 0 "rip leaks --json" "$RIP" leaks --json "$TEST_TMP/trace"
python3 - "$TEST_TMP/out" "$open" <<'PY' || fail "rip leaks misses the descriptors of mkstemp"
import json, sys
r = json.load(open(sys.argv[1]))
want = sorted(sys.argv[2].split()[1:])
fds = [g for g in r["leaks"] if g["resource"] == "fd"]
got = sorted(g["sample"] for g in fds)
assert got == want, ("open at the end", got, "expected", want)
assert all(g["count"] == 1 and g["kinds"] == ["open"] for g in fds), fds
assert all(g["stack"] and g["stack"][0]["function"] == "main" for g in fds), fds
t = r["totals"]["fd"]
assert t["count"] == 2 and t["released_unseen"] == 0, t
PY
expect_status 0 "rip report --json" "$RIP" report --json "$TEST_TMP/trace"
python3 - "$TEST_TMP/out" <<'PY' || fail "rip report misses the descriptors of mkstemp"
import json, sys
f = json.load(open(sys.argv[1]))["fd"]
assert (f["opened"], f["closed"], f["open_at_end"], f["closed_unseen"]) == (4, 2, 2, 0), f
PY
t_done
