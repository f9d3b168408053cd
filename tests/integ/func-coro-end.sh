#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the calls open in a coroutine end when it is destroyed.  A
# program (-finstrument-functions, linked with librip, rip run --no-waits:
# its own coroutines of the API on ucontext stacks) parks coroutine
# "doomed" in doomed_a > doomed_b > park, destroys it 100 ms later, then
# runs coroutine "fresh" in the same slot (RIP_SLOTS=2), which returns
# through fresh_a > fresh_b; main runs on 400 ms.  rip report --functions
# said the three parked calls were still running at the end (500 ms each)
# and put them in the fresh coroutine's context with its calls: now
# rip:coro_end ends them at the destroy (coro_ended 3, running 0, under
# 300 ms each), and the two coroutines are contexts of their own.
. tests/data/common.sh
need_bin "$RIP"
need_cmd python3
cd "$TEST_TMP" || die "no TEST_TMP"

cat >ce.c <<'C'
#include <rip.h>

#include "helpers.h"
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>
#include <unistd.h>

static ucontext_t main_uc, uc;

__attribute__((noinline)) void park(void)
{
	rip_coro_switch_out();
	swapcontext(&uc, &main_uc); /* never resumed: destroyed parked */
}

__attribute__((noinline)) void doomed_b(void)
{
	park();
}

__attribute__((noinline)) void doomed_a(void)
{
	doomed_b();
}

__attribute__((noinline)) void fresh_b(void)
{
	usleep(1000);
}

__attribute__((noinline)) void fresh_a(void)
{
	fresh_b();
}

/* the scheduler's side of the coroutine: not traced */
__attribute__((no_instrument_function)) static void fresh_entry(void)
{
	fresh_a();
	rip_coro_switch_out();
}

static void run(struct rip_coro *co, void (*fn)(void))
{
	getcontext(&uc);
	uc.uc_stack.ss_sp = malloc(1 << 16);
	uc.uc_stack.ss_size = 1 << 16;
	uc.uc_link = &main_uc;
	makecontext(&uc, fn, 0);
	rip_coro_switch_in(co);
	swapcontext(&main_uc, &uc);
}

int main(void)
{
	struct rip_coro *a, *b;

	if (rip_coro_create("doomed", &a))
		return 2;
	run(a, doomed_a);
	usleep(100000);
	rip_coro_destroy(a);
	if (rip_coro_create("fresh", &b))
		return 2;
	printf("same slot %d\n", a == b);
	run(b, fresh_entry);
	rip_coro_destroy(b);
	usleep(400000);
	return 0;
}
C
t_cc_rip ce -finstrument-functions

RIP_SLOTS=2 "$RIP" run -q --no-waits --functions -o t -- ./ce >run.out 2>run.err ||
	fail "rip run: $(cat run.err)"
grep -qx "same slot 1" run.out || die "the second coroutine did not take the first's slot: $(cat run.out)"
"$RIP" report --functions --threads --json t >r.json 2>r.err || fail "rip report: $(cat r.err)"
python3 - r.json <<'PY' || fail "rip report --functions: wrong calls"
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
if d.get("coro_ended") != 3 or d["running"] != 0 or d["no_entry"] != 0:
    bad.append("coro_ended %s, running %s, no_entry %s: want 3, 0, 0"
               % (d.get("coro_ended"), d["running"], d["no_entry"]))
for f in d["functions"]:
    if f["function"] in ("doomed_a", "doomed_b", "park") and \
       (f["calls"] != 1 or f["running"] or not 50e6 < f["total_ns"] < 300e6):
        bad.append("%s: %d calls, %d running, %.0f ms: want 1 ended at the destroy"
                   % (f["function"], f["calls"], f["running"], f["total_ns"] / 1e6))
ctx = [sorted(f["function"] for f in t["functions"])
       for t in d.get("threads", []) if t["kind"] == "coroutine"]
if sorted(ctx) != [["doomed_a", "doomed_b", "park"], ["fresh_a", "fresh_b"]]:
    bad.append("coroutine contexts: %s" % ctx)
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
"$RIP" report --functions t >r.txt 2>&1 || fail "rip report (text)"
grep -q "^note: 3 calls ended with their coroutine (destroyed while they ran)$" r.txt ||
	fail "rip report says nothing of the calls ended: $(head -n 4 r.txt)"
if command -v babeltrace2 >/dev/null; then
	"$RIP" export --format=ctf -o t.ctf t 2>ex.err || fail "rip export --format=ctf: $(cat ex.err)"
	babeltrace2 t.ctf 2>bt.err | grep -q 'rip:coro_end: .*{ coro = 2 }' ||
		fail "babeltrace2 does not show rip:coro_end: $(head -n 3 bt.err)"
fi
t_done
