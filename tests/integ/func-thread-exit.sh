#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the calls a thread is in when it exits by pthread_exit end
# there.  25 threads each call w1 > quit_deep x 11, the innermost calling
# pthread_exit (C without -fexceptions: no cleanup calls the exit hooks);
# then 25 threads sleep 1 s in w2 > second_wave x 3 > wait_here, keeping
# the trace going.  rip report --functions ran the first threads' 300
# calls on to the end of the trace ("still running"), 25 s of w1 in a 1 s
# run: now the hooks write their exits at the thread's exit, innermost
# first, and every call is closed, w1's under 0.5 s in all.  The same with
# a -fpatchable-function-entry build under rip run --functions='*'.
. tests/data/common.sh
need_bin "$RIP"
need_cmd python3
cd "$TEST_TMP" || die "no TEST_TMP"
export RIP_DIR="$TEST_TMP/rings"
mkdir -p "$RIP_DIR"

cat >te.c <<'C'
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) void quit_deep(int d)
{
	if (d == 0)
		pthread_exit(NULL);
	quit_deep(d - 1);
}

__attribute__((noinline)) void wait_here(int s)
{
	sleep(s);
}

__attribute__((noinline)) void second_wave(int d, int s)
{
	if (d == 0) {
		wait_here(s);
		return;
	}
	second_wave(d - 1, s);
}

__attribute__((noinline)) static void *w1(void *a)
{
	quit_deep(10);
	return a;
}

__attribute__((noinline)) static void *w2(void *a)
{
	second_wave(2, 1);
	return a;
}

int main(void)
{
	pthread_t t[50];

	for (int i = 0; i < 25; i++)
		pthread_create(&t[i], 0, w1, 0);
	for (int i = 0; i < 25; i++)
		pthread_join(t[i], 0);
	for (int i = 25; i < 50; i++)
		pthread_create(&t[i], 0, w2, 0);
	for (int i = 25; i < 50; i++)
		pthread_join(t[i], 0);
	return 0;
}
C
t_cc_rip te -finstrument-functions
cp te.c tep.c
t_cc_rip tep -fpatchable-function-entry=5

for v in te tep; do
	opt=--functions
	[ $v = tep ] && opt='--functions=*'
	"$RIP" run -q "$opt" -o t.$v -- ./$v >run.$v 2>&1 || fail "$v: rip run: $(cat run.$v)"
	"$RIP" report --functions --json t.$v >r.$v.json 2>r.$v.err ||
		fail "$v: rip report: $(cat r.$v.err)"
	python3 - r.$v.json <<'PY' || fail "$v: rip report --functions: calls of exited threads"
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
if d["running"] != 0 or d["no_entry"] != 0:
    bad.append("running %d, no_entry %d: want 0, 0" % (d["running"], d["no_entry"]))
fn = {f["function"]: f for f in d["functions"]}
for name, calls in (("w1", 25), ("quit_deep", 275), ("w2", 25), ("wait_here", 25)):
    f = fn.get(name)
    if not f or f["calls"] != calls or f["running"]:
        bad.append("%s: %s" % (name, f and (f["calls"], f["running"])))
if "w1" in fn and fn["w1"]["total_ns"] > 0.5e9:
    bad.append("w1: %.3f s in all: its calls ran on past their threads" % (fn["w1"]["total_ns"] / 1e9))
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
done
t_done
