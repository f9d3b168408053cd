#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip top names the functions of a library loaded with dlopen,
# live and in the trace.  The module map is rescanned only at safe points,
# and a program that dlopens a library and then only computes in it
# reaches none: rip top showed its samples as bare addresses, live (which
# did not read /proc/PID/maps, as rip ps does) and in the trace (no entry
# in the map at all).  The program dlopens libspin.so (built here) and
# spins in spin_here under rip run --sample: rip top --once PID and, once it
# is killed, rip top T must both put its samples at spin_here.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3
CC=${CC:-cc}
tests=$PWD/tests
cd "$TEST_TMP" || die "no $TEST_TMP"

cat >spin.c <<'C'
volatile unsigned long spin_sink;

__attribute__((noinline)) void spin_here(void)
{
	for (;;)
		spin_sink++;
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
	void (*spin)(void) = h ? (void (*)(void))dlsym(h, "spin_here") : NULL;

	if (!spin || t_ready(argv[2]))
		return 2;
	spin();
	return 0;
}
C
"$CC" -O1 -g -shared -fPIC -o libspin.so spin.c || die "cannot build libspin.so"
"$CC" -O1 -g -I"$tests" -o prog prog.c -ldl || die "cannot build prog"

t_bg "$RIP" run -q --sample -o T -- "$TEST_TMP/prog" "$TEST_TMP/libspin.so" "$TEST_TMP/ready" \
	2>run.err
run=$T_LAST
wait_file ready 30 || die "the program did not start: $(cat run.err)"
pid=$(cat ready)
T_PIDS="$T_PIDS $pid"

# the share of the samples in rows of spin_here (JSON on stdin)
share='import json, sys
d = json.load(sys.stdin)
rows = d.get("groups") or d.get("rows") or []
tot = sum(r.get("samples", 0) for r in rows)
mine = sum(r.get("samples", 0) for r in rows if "spin_here" in json.dumps(r))
print("%d %d" % (mine, tot))'
"$RIP" top --once --json "$pid" >live.json 2>top.err || fail "rip top --once $pid: $(cat top.err)"
kill -9 "$pid"
wait "$run"
"$RIP" top --json T >trace.json 2>top.err || fail "rip top T: $(cat top.err)"
for w in live trace; do
	# shellcheck disable=SC2046 # two numbers
	set -- $(python3 -c "$share" <"$w.json")
	[ "${2:-0}" -gt 0 ] || { fail "$w: no samples: $(head -c 300 "$w.json")"; continue; }
	[ $(($1 * 10)) -ge $(($2 * 9)) ] ||
		fail "$w: $1 of $2 samples at spin_here: $(head -c 600 "$w.json")"
done
t_done
