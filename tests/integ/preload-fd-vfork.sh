#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a vfork child's descriptors are not its parent's.  The child
# runs on its parent's thread and ring until it execs, but its descriptor
# table is its own copy: its dup2s and closes were recorded as the parent's,
# so that the parent's leaked pipe showed as closed and the child's dup2 as
# the leak.  The program leaks a pipe, vforks children that dup2 the pipe
# onto stdout, close both ends and close_range the rest before exec, then
# leaks a dup of its own (the parent's events after a vfork are still
# recorded); rip leaks must list the pipe and the dup, made in main, and no
# close of a descriptor never seen made.  Then CPython's subprocess, which
# vforks: only the script's own pipe is left open.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3
CC=${CC:-cc}

cat >"$TEST_TMP/vf.c" <<'C'
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

int main(void)
{
	int p[2], d;

	if (pipe(p))
		return 2;
	for (int i = 0; i < 3; i++) {
		pid_t c = vfork();

		if (c == 0) {
			dup2(p[1], 1);
			close(p[0]);
			close(p[1]);
			syscall(SYS_close_range, 3, ~0u, 0);
			execlp("true", "true", (char *)NULL);
			_exit(127);
		}
		if (c < 0 || waitpid(c, NULL, 0) != c)
			return 3;
	}
	d = dup(p[0]);
	printf("open %d %d %d\n", p[0], p[1], d);
	return 0;
}
C
"$CC" -O1 -g -o "$TEST_TMP/vf" "$TEST_TMP/vf.c" || die "cannot build the test program"

expect_status 0 "rip run" "$RIP" run --fd -q -o "$TEST_TMP/trace" -- "$TEST_TMP/vf"
grep -q '^open ' "$TEST_TMP/out" || fail "the program did not run to its end"
expect_status 0 "rip leaks --json" "$RIP" leaks --json "$TEST_TMP/trace"
python3 - "$TEST_TMP/out" <<'PY' || fail "rip leaks takes the vfork children's descriptors for the parent's"
import json, sys
r = json.load(open(sys.argv[1]))
fds = [g for g in r["leaks"] if g["resource"] == "fd"]
kinds = sorted((k, g["count"]) for g in fds for k in g["kinds"])
assert kinds == [("dup", 1), ("pipe", 2)], fds
assert all(g["stack"] and g["stack"][0]["function"] == "main" for g in fds), fds
t = r["totals"]["fd"]
assert t["count"] == 3 and t["released_unseen"] == 0, t
PY

cat >"$TEST_TMP/sub.py" <<'PY'
import os, subprocess
r, w = os.pipe()
for i in range(3):
    subprocess.run(["true"], stdout=w, close_fds=True)
print("open", r, w)
PY
expect_status 0 "rip run python3" "$RIP" run --fd -q -o "$TEST_TMP/py" -- python3 "$TEST_TMP/sub.py"
grep -q '^open ' "$TEST_TMP/out" || fail "the script did not run to its end"
expect_status 0 "rip leaks --json (python3)" "$RIP" leaks --json "$TEST_TMP/py"
python3 - "$TEST_TMP/out" <<'PY' || fail "rip leaks takes subprocess's children's descriptors for python's"
import json, sys
r = json.load(open(sys.argv[1]))
fds = [g for g in r["leaks"] if g["resource"] == "fd"]
kinds = sorted((k, g["count"]) for g in fds for k in g["kinds"])
assert kinds == [("pipe", 2)], fds
assert r["totals"]["fd"]["released_unseen"] == 0, r["totals"]["fd"]
PY
t_done
