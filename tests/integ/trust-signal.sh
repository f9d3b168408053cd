#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: allocations in signal handlers are recorded, also when the
# handler interrupts a hook of ours (whose guard used to make the
# handler's malloc forward unrecorded: 453-466 of 500 found, and "complete,
# 0 lost").  trust_prog signal: a SIGALRM handler leaks one 48-byte block
# per signal, 500 signals, while the main loop churns traced calls; the
# same on an alternate signal stack.  rip leaks: exactly 500 blocks, 24,000
# bytes, each made in on_alarm, and the trace complete.
. tests/data/common.sh
prog=$BUILD/tests/integ/trust_prog
need_bin "$prog" "$RIP"
need_cmd python3

for mode in signal signal-altstack; do
	t=$TEST_TMP/$mode
	"$RIP" run --mem --fd -o "$t" -- "$prog" "$mode" >"$TEST_TMP/run.out" 2>&1 ||
		{ fail "$mode: rip run: $(cat "$TEST_TMP/run.out")"; continue; }
	"$RIP" leaks --json "$t" >"$TEST_TMP/leaks.json" 2>"$TEST_TMP/leaks.err" ||
		{ fail "$mode: rip leaks: $(cat "$TEST_TMP/leaks.err")"; continue; }
	python3 - "$TEST_TMP/leaks.json" <<'PY' || fail "$mode: the handler's blocks are not all there"
import json, sys
r = json.load(open(sys.argv[1]))
t = r["totals"]["mem"]
print("blocks", t["count"], "bytes", t["bytes"], "complete", r["complete"], file=sys.stderr)
assert (t["count"], t["bytes"]) == (500, 24000), t
assert r["complete"] is True and r["discarded"] == 0, r
for g in r["leaks"]:
    assert g["resource"] == "mem" and g["bytes"] == 48 * g["count"], g
    assert "on_alarm" in [f["function"] for f in g["stack"]], g["stack"]
assert r["totals"]["fd"]["count"] == 0, r["totals"]["fd"]
PY
done
t_done
