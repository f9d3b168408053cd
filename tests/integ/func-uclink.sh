#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: ucontext coroutines whose functions return, and go on at
# their uc_link inside libc without a swapcontext the preload library sees:
# the thread is back in its own slot (or uc_link's coroutine) with its own
# call path, and the coroutine that ended gives its slot back.
# func_uclink N under rip run --functions: N contexts return to main's,
# half of them after a swap back and forth, then one returns into another
# made context, which returns to main's; rip report --functions counts
# every call with its exit (no exit without its entry, nothing left
# running), the folded paths have main's calls under main and the
# coroutines' under their functions; then main parks after the same runs
# and rip ps --stacks shows main > uc_run > uc_park and no coroutine left,
# live and after kill -9.
. tests/data/common.sh
. tests/data/fn-lib.sh
prog=$PWD/$BUILD/tests/integ/func_uclink
need_bin "$prog" "$RIP"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"
need_cmd python3
cd "$TEST_TMP" || die "no $TEST_TMP"
n=200

fn_record t -- "$prog" "$n"
cat >want.txt <<EOW
chain_a 1 0
chain_b 1 0
main 1 0
uc_check $((n + 1)) 0
uc_co $n 0
uc_leaf $((2 * n + 2)) 0
uc_make $((n + 2)) 0
uc_run 1 0
EOW
fn_paired "$((5 * n + 9))" >>want.txt
fn_counts t
"$RIP" export --format=folded --value=calls t -o f.txt 2>exp.err || fail "rip export: $(cat exp.err)"
cat >fwant.txt <<EOW
chain_a 1
chain_a;uc_leaf 1
chain_b 1
chain_b;uc_leaf 1
main 1
main;uc_run 1
main;uc_run;uc_check $((n + 1))
main;uc_run;uc_make $((n + 2))
uc_co $n
uc_co;uc_leaf $((2 * n))
EOW
LC_ALL=C sort f.txt | diff fwant.txt - >f.diff || fail "folded calls (want, got): $(cat f.diff)"

# main parked after the same runs: its path, and no coroutine, live and after kill -9
"$RIP" run -o tr -- "$prog" "$n" "$TEST_TMP/ready" >parked.out 2>parked.err &
run=$!
T_PIDS="$T_PIDS $run"
wait_file ready 60 || die "the program never got ready: $(cat parked.err)"
pid=$(ps -o pid= --ppid "$run" | tr -d ' ')
for target in "$pid" tr; do
	[ "$target" = tr ] && { kill -9 "$pid"; wait "$run"; }
	fn_paths_has "$target" "main thread blocked: main>uc_run>uc_park"
	[ "$(wc -l <paths.txt)" = 1 ] || fail "rip ps --stacks $target, more than main: $(cat paths.txt)"
	"$RIP" ps --threads --json "$target" >ps.json 2>ps.err || fail "rip ps $target: $(cat ps.err)"
	python3 -c '
import json, sys
d = json.load(open("ps.json"))
co = [(s.get("name"), s["state"]) for s in d["slots"] if s["kind"] == "coroutine"]
sys.exit("coroutines left: %r" % co if co else 0)
' || fail "rip ps $target: the ended coroutines are still there"
done
t_done
