#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: nothing rip does for itself shows as the program's.  A
# program that makes one thread and joins it: under rip run --mem with the
# watcher thread on (it starts at the program's first pthread_create, and
# the DTV pthread_create allocated for it was recorded against the
# program's call site), rip leaks reports exactly what it reports with the
# watcher off (RIP_WATCH=0): the DTV of the program's own thread, which
# glibc keeps with the joined thread's cached stack, and nothing else.
. tests/data/common.sh
prog=$BUILD/tests/integ/trust_prog
need_bin "$prog" "$RIP"
need_cmd python3

for w in 1 0; do
	RIP_WATCH=$w "$RIP" run --mem -o "$TEST_TMP/t$w" -- "$prog" thread >"$TEST_TMP/run.out" 2>&1 ||
		die "rip run (RIP_WATCH=$w): $(cat "$TEST_TMP/run.out")"
	expect_status 0 "rip leaks --json (RIP_WATCH=$w)" "$RIP" leaks --json "$TEST_TMP/t$w"
	mv "$TEST_TMP/out" "$TEST_TMP/leaks$w.json"
done
python3 - "$TEST_TMP/leaks1.json" "$TEST_TMP/leaks0.json" <<'PY' || fail "the watcher's own allocations show"
import json, sys
on, off = (json.load(open(f)) for f in sys.argv[1:])
assert on["complete"] is True, on
def groups(r):
    return sorted((g["count"], g["bytes"], [f["function"] for f in g["stack"]][:6]) for g in r["leaks"])
print("watcher on: ", groups(on), file=sys.stderr)
print("watcher off:", groups(off), file=sys.stderr)
assert groups(on) == groups(off)
assert on["totals"]["mem"]["count"] == off["totals"]["mem"]["count"] <= 1
PY
t_done
