#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a munmap of a file mapping is not a release of something
# never seen made.  --mem records anonymous private mappings only, so a
# program that maps a file privately and unmaps it (git with its packs
# and indexes does it all the time) gave a munmap that matched no
# recorded mapping, and rip leaks and rip report counted each as a free
# never seen made ("made before tracing started, inherited, or lost").
# The program maps a file 5 times and unmaps it each time, and maps and
# unmaps an anonymous page; the traced run must count no unseen free, and
# nothing live.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3
CC=${CC:-cc}

cat >"$TEST_TMP/fm.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd = open(argc > 1 ? argv[1] : "/etc/passwd", O_RDONLY);
	char *p;

	if (fd < 0)
		return 2;
	for (int i = 0; i < 5; i++) {
		p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED || munmap(p, 4096))
			return 3;
	}
	close(fd);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || munmap(p, 4096))
		return 4;
	printf("done\n");
	return 0;
}
C
"$CC" -O1 -g -o "$TEST_TMP/fm" "$TEST_TMP/fm.c" || die "cannot build the test program"
printf 'some bytes\n' >"$TEST_TMP/file"

expect_status 0 "rip run" "$RIP" run --mem -q -o "$TEST_TMP/trace" -- "$TEST_TMP/fm" "$TEST_TMP/file"
grep -q '^done$' "$TEST_TMP/out" || fail "the program did not run to its end"
n=$("$RIP" dump "$TEST_TMP/trace" | grep -c ' mem:unmap .*kind=munmap$')
[ "$n" = 6 ] || fail "expected 6 munmaps in the trace, got $n"
expect_status 0 "rip leaks --json" "$RIP" leaks --json "$TEST_TMP/trace"
python3 - "$TEST_TMP/out" <<'PY' || fail "rip leaks counts a file's munmap as an unseen free"
import json, sys
r = json.load(open(sys.argv[1]))
m = r["totals"]["mem"]
assert m["released_unseen"] == 0, m
assert not [g for g in r["leaks"] if g["resource"] == "mem" and "mmap" in g["kinds"]], r["leaks"]
assert r["complete"], r
PY
expect_status 0 "rip leaks" "$RIP" leaks "$TEST_TMP/trace"
grep -q 'not seen made' "$TEST_TMP/out" && fail "rip leaks prints unseen releases: $(cat "$TEST_TMP/out")"
expect_status 0 "rip report --json" "$RIP" report --json "$TEST_TMP/trace"
python3 - "$TEST_TMP/out" <<'PY' || fail "rip report counts a file's munmap as an unseen free"
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
assert m["frees_unseen"] == 0, m
PY
t_done
