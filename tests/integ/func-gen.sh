#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: patched functions of a generator that the program switches
# by its own assembly (no makecontext, as libcoro's CORO_ASM and
# boost.context do).  gen_next returns while the generator's frames live
# on, hijacked, on the other stack; when it is switched back they return
# through the trampoline.  They must find their return addresses: before,
# the return of gen_next dropped them as a longjmp's, and the first return
# on the generator's stack aborted the program.  Under rip run
# --functions='*' fngen-patch must print the right sum, exit 0, and every
# call be counted.
. tests/data/common.sh
prog=$BUILD/tests/integ/fngen-patch
need_bin "$prog" "$RIP"

"$prog" 3000 >"$TEST_TMP/plain.out" 2>&1
rc=$?
[ "$rc" = 77 ] && skip "no switch written for this architecture"
[ "$rc" = 0 ] || die "fngen fails untraced: $(cat "$TEST_TMP/plain.out")"

"$RIP" run --functions='*' -o "$TEST_TMP/t" -- "$prog" 3000 >"$TEST_TMP/run.out" 2>"$TEST_TMP/run.err"
rc=$?
[ "$rc" = 0 ] || fail "exit $rc under rip run --functions: $(cat "$TEST_TMP/run.out" "$TEST_TMP/run.err")"
grep -q '^sum 4498500$' "$TEST_TMP/run.out" || fail "wrong sum: $(cat "$TEST_TMP/run.out")"
"$RIP" report --functions --json "$TEST_TMP/t" >"$TEST_TMP/rep.json" 2>"$TEST_TMP/rep.err" ||
	fail "rip report --functions: $(cat "$TEST_TMP/rep.err")"
# calls: gen_next and gen_yield 3000 each, gen_a, gen_b and gen_c 1000 each
python3 - "$TEST_TMP/rep.json" <<'PY' || fail "call counts"
import json, sys
d = json.load(open(sys.argv[1]))
fns = {f["function"]: f["calls"] for f in d["functions"]}
want = {"gen_next": 3000, "gen_yield": 3000, "gen_a": 1000, "gen_b": 1000, "gen_c": 1000,
        "gen_sum": 1, "gen_body": 1}
bad = {k: (fns.get(k), v) for k, v in want.items() if fns.get(k) != v}
if bad:
    print("got, want:", bad)
    sys.exit(1)
PY
t_done
