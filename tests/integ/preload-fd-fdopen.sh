#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: fdopen and fdopendir make a stream or a directory of a
# descriptor that is already open: no new descriptor.  A program that
# opens a file and a directory, fdopens them and closes them with fclose
# and closedir (and a pipe end fdopened the same way): rip report --json
# counts each descriptor opened once and closed once, none "opened again
# while open" and no close "never seen opened", and leaks nothing.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3
CC=${CC:-cc}

cat >"$TEST_TMP/fo.c" <<'C'
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd = open(argv[1], O_RDONLY), dfd = open(argv[2], O_RDONLY | O_DIRECTORY), p[2];
	FILE *fp, *rp, *wp;
	DIR *d;
	char line[64];

	if (fd < 0 || dfd < 0 || pipe(p))
		return 2;
	fp = fdopen(fd, "r");
	d = fdopendir(dfd);
	rp = fdopen(p[0], "r");
	wp = fdopen(p[1], "w");
	if (!fp || !d || !rp || !wp || !fgets(line, sizeof(line), fp) || !readdir(d))
		return 3;
	fputs("through\n", wp);
	fclose(wp);
	if (!fgets(line, sizeof(line), rp))
		return 4;
	fclose(rp);
	fclose(fp);
	closedir(d);
	printf("fdopen done\n");
	return 0;
}
C
"$CC" -O0 -g -o "$TEST_TMP/fo" "$TEST_TMP/fo.c" || die "cannot build the test program"
echo hello >"$TEST_TMP/file"

expect_status 0 "rip run" "$RIP" run --fd -q -o "$TEST_TMP/trace" -- "$TEST_TMP/fo" \
	"$TEST_TMP/file" "$TEST_TMP"
grep -q '^fdopen done$' "$TEST_TMP/out" || fail "the program did not run to its end"
expect_status 0 "rip report --json" "$RIP" report --json "$TEST_TMP/trace"
python3 - "$TEST_TMP/out" <<'PY' || fail "rip report: fdopen is not the descriptor it was"
import json, sys
fd = json.load(open(sys.argv[1]))["fd"]
assert fd["reopened"] == 0, ("opened again while open", fd)
assert fd["closed_unseen"] == 0, ("closes never seen opened", fd)
assert (fd["opened"], fd["closed"], fd["open_at_end"]) == (4, 4, 0), fd
PY
expect_status 0 "rip report" "$RIP" report "$TEST_TMP/trace"
if grep -E 'opened again while open: [1-9]|never seen opened: [1-9]' "$TEST_TMP/out"; then
	fail "rip report's text says so too"
fi
t_done
