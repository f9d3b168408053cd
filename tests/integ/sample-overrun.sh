#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: timer periods the kernel merges into one signal are counted
# as lost samples.  topprog burn runs two threads that burn 500 ms of CPU
# each, sampled at 1,000 Hz under rip run: 1,000 periods.  Above the
# kernel's tick rate (250 Hz on Debian's kernels) a CPU-time timer fires
# once a tick and the signal carries the periods it merged (si_overrun):
# the samples taken and those counted lost must add up to the periods the
# threads ran (within the slack of when the timers start and stop), never
# a few hundred samples and "0 lost".  The trace's readers count the same
# loss.
# Timeout: 120
. tests/data/common.sh
prog=$BUILD/tests/integ/topprog
need_bin "$prog" "$RIP"

"$RIP" run --sample=1000 -o "$TEST_TMP/trace" -- "$prog" burn 500 >"$TEST_TMP/out" \
	2>"$TEST_TMP/err" || fail "exit $?: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
grep -q burned "$TEST_TMP/out" || fail "the program did not finish: $(cat "$TEST_TMP/out")"
line=$(grep "CPU samples of them" "$TEST_TMP/err") || fail "no samples line: $(cat "$TEST_TMP/err")"
taken=$(echo "$line" | sed -n 's/.*run: \([0-9]*\) CPU samples.*/\1/p')
lost=$(echo "$line" | sed -n 's/.*, \([0-9]*\) lost.*/\1/p')
[ -n "$taken" ] && [ -n "$lost" ] || fail "cannot read the samples line: $line"
sum=$((taken + lost))
# 2 threads x 500 ms x 1,000 Hz; a timer starts when its thread does and
# reads its clock a tick late at most: 700 at least, 1,150 at most.
[ "$sum" -ge 700 ] && [ "$sum" -le 1150 ] ||
	fail "$taken samples and $lost lost for 1,000 periods of CPU time: $line"
# the file's counter, as rip top reads it from the trace: the merged periods, among the lost
"$RIP" top --json "$TEST_TMP/trace" >"$TEST_TMP/top.json" 2>"$TEST_TMP/top.err" ||
	fail "rip top: $(cat "$TEST_TMP/top.err")"
python3 - "$TEST_TMP/top.json" "$taken" "$lost" <<'PY' || fail "rip top's counts disagree"
import json, sys
s = json.load(open(sys.argv[1]))["sampling"]
taken, lost = int(sys.argv[2]), int(sys.argv[3])
ok = s["samples"] == taken and 0 <= s["overrun"] <= lost
if not ok:
    print("sampling:", s, "taken", taken, "lost", lost, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
t_done
