#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: what was not traced is said to be so, not counted as none.
# A program leaks 100 bytes and 3 descriptors.  Under rip run --mem, rip
# leaks said "0 file descriptors left open" and rip report "FILE
# DESCRIPTORS opened: 0" (a check of the JSON concluded no descriptor
# leaked): now the text says "file descriptors not traced (rip run --fd)",
# the report's sections "not traced", and the JSON has traced: false for fd
# and shm, true for mem.  Under --all every kind is traced and counted.
. tests/data/common.sh
need_bin "$RIP"
need_cmd python3
CC=${CC:-cc}
cd "$TEST_TMP" || die "no TEST_TMP"

cat >l.c <<'C'
#include <fcntl.h>
#include <stdlib.h>

void *keep;

int main(void)
{
	for (int i = 0; i < 3; i++)
		if (open("/dev/null", O_RDONLY) < 0)
			return 1;
	keep = malloc(100);
	return 0;
}
C
"$CC" -O1 -g -o l l.c || die "cannot build the test program"

"$RIP" run -q --mem -o m -- ./l 2>run.err || fail "rip run --mem: $(cat run.err)"
"$RIP" leaks m >m.txt 2>&1 || fail "rip leaks: $(cat m.txt)"
grep -q '^total: 100 bytes in 1 block never freed (1 sites), file descriptors not traced (rip run --fd), shared memory not traced (rip run --shm)$' m.txt ||
	fail "rip leaks (--mem): $(tail -n 1 m.txt)"
"$RIP" leaks --json m >m.json 2>&1 || fail "rip leaks --json"
"$RIP" report m >r.txt 2>&1 || fail "rip report: $(cat r.txt)"
[ "$(grep -c '^  not traced (rip run --\(fd\|shm\))$' r.txt)" = 2 ] ||
	fail "rip report (--mem): $(sed -n '/^FILE/,$p' r.txt)"
"$RIP" report --json m >r.json 2>&1 || fail "rip report --json"
python3 - m.json r.json <<'PY' || fail "the JSON does not say what was traced"
import json, sys
l, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
t = {k: l["totals"][k]["traced"] for k in ("mem", "fd", "shm")}
u = {"mem": r["memory"]["traced"], "fd": r["fd"]["traced"], "shm": r["shm"]["traced"]}
want = {"mem": True, "fd": False, "shm": False}
sys.exit(0 if t == want and u == want else print(t, u, file=sys.stderr) or 1)
PY

"$RIP" run -q --all -o a -- ./l 2>run.err || fail "rip run --all: $(cat run.err)"
"$RIP" leaks a >a.txt 2>&1 || fail "rip leaks: $(cat a.txt)"
grep -q '^total: 100 bytes in 1 block never freed (1 sites), 3 file descriptors left open, 0 shared memory segments never removed (0 bytes), 0 shared memory mappings never detached$' a.txt ||
	fail "rip leaks (--all): $(tail -n 1 a.txt)"
"$RIP" report a >ra.txt 2>&1 || fail "rip report: $(cat ra.txt)"
grep -q 'not traced' ra.txt && fail "rip report (--all) says not traced: $(grep 'not traced' ra.txt)"
t_done
