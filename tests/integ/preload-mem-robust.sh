#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: librip-preload.so never changes what a program does: bash
# pipelines, python3 with threads, frees from a signal handler, a fork
# without exec (the child writes a ring file of its own), a dlopen'd
# library that allocates, threads, a program with no ring (RIP_RING unset)
# and one with the mem category off (RIP_DISABLE=mem: no mem event) all
# give the output and exit status of an untraced run, with no crash and no
# hang (tests/run.sh's timeout bounds the traced runs).
. tests/data/common.sh
prog=$BUILD/tests/integ/memprog
lib=$PWD/$BUILD/librip-preload.so
need_bin "$prog" "$RIP" "$lib"
need_cmd python3
rings=$TEST_TMP/rings
mkdir -p "$rings"

# same WHAT CMD...: traced and untraced runs agree (stdout, stderr, status)
same() {
	what=$1
	shift
	timeout -k 5 60 "$@" >"$TEST_TMP/plain.out" 2>&1
	prc=$?
	# not under timeout(1): it would be traced too (run.sh bounds the whole test)
	LD_PRELOAD=$lib RIP_RING=$rings/ RIP_MODE=block "$@" >"$TEST_TMP/traced.out" 2>&1
	trc=$?
	[ "$trc" = "$prc" ] || fail "$what: status $trc traced, $prc untraced"
	cmp -s "$TEST_TMP/plain.out" "$TEST_TMP/traced.out" ||
		fail "$what: output differs: $(diff "$TEST_TMP/plain.out" "$TEST_TMP/traced.out" | head -n 5)"
}

same "bash pipeline" bash -c 'ls / | wc -l; ls /nonexistent-rip 2>/dev/null; echo $?'
same "bash failing" bash -c 'exit 3'
same "python3 threads" python3 -c '
import threading
out = []
def work(n):
    out.append(sum(len(str(i) * 3) for i in range(20000 + n)))
ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
print(len(out), sorted(out)[0])'
same "signal handler frees" "$prog" signal
same "threads" "$prog" threads 16

# fork without exec: each process has its file, the child's holds its mallocs
rm -f "$rings"/*
same "fork" "$prog" fork
n=$(find "$rings" -name '*.ring' | wc -l)
[ "$n" = 2 ] || fail "fork: $n ring files, want 2 (parent and child)"
child_ok=0
for r in "$rings"/*.ring; do
	"$RIP" dump "$r" >"$TEST_TMP/dump" 2>&1 || fail "fork: rip dump $r failed"
	c=$(grep -Ec 'size=1001 bt=[1-9][0-9]* kind=(1|malloc)$' "$TEST_TMP/dump")
	[ "$c" -ge 1000 ] && child_ok=1
	awk '/rip:bt id=/ { sub(/.*id=/, ""); sub(/ .*/, ""); def[$0] = 1; next }
	     / mem:/ { for (i = 1; i <= NF; i++) if ($i ~ /^bt=/) { b = substr($i, 4);
		if (b != 0 && !(b in def)) bad = 1 } } END { exit bad }' "$TEST_TMP/dump" ||
		fail "fork: $r uses a bt it does not define"
done
[ "$child_ok" = 1 ] || fail "fork: no ring file holds the child's 1000 malloc(1001)"

# a library loaded later allocates: its frames are executable code too
cat >"$TEST_TMP/dl.c" <<'C'
#include <stdlib.h>
#include <string.h>
void *alloc_something(void);
void *alloc_something(void)
{
	char *p = malloc(4321);

	if (p)
		memset(p, 1, 4321);
	return strdup(p ? "x" : "y");
}
C
cc -shared -fPIC -O1 -fno-omit-frame-pointer -o "$TEST_TMP/libdl.so" "$TEST_TMP/dl.c" ||
	die "cc failed"
rm -f "$rings"/*
same "dlopen" "$prog" dlopen "$TEST_TMP/libdl.so"
r=$(find "$rings" -name '*.ring' | head -n 1)
"$RIP" dump "$r" >"$TEST_TMP/dump" 2>&1 || fail "dlopen: rip dump failed"
grep -Eq 'size=4321 bt=[1-9][0-9]* kind=(1|malloc)$' "$TEST_TMP/dump" ||
	fail "dlopen: no malloc(4321) with a backtrace from the library"

# no ring: hooks forward; mem off: nothing recorded
LD_PRELOAD=$lib "$prog" basic >/dev/null 2>&1 || fail "no ring: memprog failed"
rm -f "$rings"/*
RIP_DISABLE=mem LD_PRELOAD=$lib RIP_RING=$rings/ "$prog" basic >/dev/null 2>&1 ||
	fail "mem off: memprog failed"
r=$(find "$rings" -name '*.ring' | head -n 1)
"$RIP" dump "$r" >"$TEST_TMP/dump" 2>&1 || fail "mem off: rip dump failed"
! grep -q ' mem:' "$TEST_TMP/dump" || fail "mem off: mem events recorded"
t_done
