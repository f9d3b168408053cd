#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip ps names a wait in a dlopen'd object after kill -9.  The
# module map was rescanned only at safe points (a thread's exit, a
# coroutine's creation), so a single-threaded program that dlopens a
# library and blocks in it (Python's socket module in accept) had no entry
# for it: after its death rip ps showed the wait's caller as a bare
# address.  The program dlopens libblk.so (built here) and blocks in read
# from its blk_wait; under plain rip run it is killed once rip ps PID shows
# the wait, and rip ps T must name blk_wait, in libblk.so.
. tests/data/common.sh
need_bin "$RIP"
need_cmd python3
CC=${CC:-cc}
tests=$PWD/tests
cd "$TEST_TMP" || die "no $TEST_TMP"

cat >blk.c <<'C'
#include <unistd.h>

__attribute__((noinline)) int blk_wait(int fd)
{
	char c;

	return (int)read(fd, &c, 1);
}
C
cat >prog.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

#include "helpers.h"

int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	int (*wait_in)(int) = h ? (int (*)(int))dlsym(h, "blk_wait") : NULL;
	int p[2];

	if (!wait_in || pipe(p) || t_ready(argv[2]))
		return 2;
	return wait_in(p[0]);
}
C
"$CC" -O1 -g -shared -fPIC -o libblk.so blk.c || die "cannot build libblk.so"
"$CC" -O1 -g -I"$tests" -o prog prog.c -ldl || die "cannot build prog"

t_bg "$RIP" run -o T -- "$TEST_TMP/prog" "$TEST_TMP/libblk.so" "$TEST_TMP/ready" 2>run.err
run=$T_LAST
wait_file ready 30 || die "the program did not start: $(cat run.err)"
pid=$(cat ready)
T_PIDS="$T_PIDS $pid"
waiting() {
	"$RIP" ps --json "$pid" >g.json 2>/dev/null &&
		python3 -c 'import json,sys; sys.exit(json.load(open("g.json"))["waiting"] < 1)'
}
wait_until 30 waiting || die "rip ps never showed the wait: $(head -c 300 g.json)"
kill -9 "$pid"
wait "$run"

"$RIP" ps --threads --json T >t.json 2>ps.err || die "rip ps T: $(cat ps.err)"
python3 - t.json <<'PY' || fail "rip ps T does not name the wait's function in libblk.so"
import json, sys
d = json.load(open(sys.argv[1]))
w = [s["wait"] for s in d["slots"] if s.get("wait")]
assert len(w) == 1 and w[0]["in"] == "read", w
c = w[0]["caller"]
assert c.get("function") == "blk_wait", c
PY
t_done
