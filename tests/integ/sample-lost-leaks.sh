#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: CPU samples lost are no resource events lost.  topprog burn
# under rip run --mem --sample=1000: above the kernel's tick rate timer
# periods merge into one signal and the run counts them as lost samples,
# while no event of the rings is lost.  rip leaks and rip report must not
# call the trace incomplete (their warning says a lost release shows as a
# false leak: a Go program under --mem --sample got it for one merged timer
# period), nor rip export of the heap; rip dump and the export of the CPU
# profile still count the samples lost.
# Timeout: 120
. tests/data/common.sh
prog=$BUILD/tests/integ/topprog
need_bin "$prog" "$RIP"
tr=$TEST_TMP/trace

"$RIP" run --mem --sample=1000 -o "$tr" -- "$prog" burn 300 >"$TEST_TMP/out" \
	2>"$TEST_TMP/err" || die "exit $?: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
grep -q "recorded in .*, 0 lost$" "$TEST_TMP/err" || die "events were lost: $(cat "$TEST_TMP/err")"
lost=$(sed -n 's/.*CPU samples of them.*, \([0-9]*\) lost.*/\1/p' "$TEST_TMP/err")
[ -n "$lost" ] || die "no samples line: $(cat "$TEST_TMP/err")"
[ "$lost" -gt 0 ] || skip "no sample lost at 1,000 Hz (a kernel ticking at 1,000 Hz?)"

"$RIP" leaks "$tr" >"$TEST_TMP/leaks" 2>&1 || fail "rip leaks: $(cat "$TEST_TMP/leaks")"
grep -q "incomplete" "$TEST_TMP/leaks" &&
	fail "rip leaks calls the trace incomplete for $lost lost samples: $(head -3 "$TEST_TMP/leaks")"
"$RIP" leaks --json "$tr" >"$TEST_TMP/leaks.json" 2>&1 || fail "rip leaks --json"
grep -q '"complete":true' "$TEST_TMP/leaks.json" ||
	fail "rip leaks --json: not complete: $(head -c 300 "$TEST_TMP/leaks.json")"
"$RIP" report "$tr" >"$TEST_TMP/report" 2>&1 || fail "rip report: $(cat "$TEST_TMP/report")"
grep -q "incomplete" "$TEST_TMP/report" &&
	fail "rip report calls the trace incomplete for $lost lost samples: $(head -3 "$TEST_TMP/report")"
"$RIP" export --format=pprof --profile=heap -o "$TEST_TMP/heap.pb.gz" "$tr" 2>"$TEST_TMP/heap.err" ||
	fail "rip export heap: $(cat "$TEST_TMP/heap.err")"
grep -q "incomplete" "$TEST_TMP/heap.err" &&
	fail "rip export of the heap calls the trace incomplete: $(cat "$TEST_TMP/heap.err")"
"$RIP" export --format=pprof --profile=cpu -o "$TEST_TMP/cpu.pb.gz" "$tr" 2>"$TEST_TMP/cpu.err" ||
	fail "rip export cpu: $(cat "$TEST_TMP/cpu.err")"
grep -q "incomplete ($lost events" "$TEST_TMP/cpu.err" ||
	fail "rip export of the CPU profile does not count the $lost lost samples: $(cat "$TEST_TMP/cpu.err")"
"$RIP" dump "$tr" >"$TEST_TMP/dump" 2>&1 || fail "rip dump: $(tail -3 "$TEST_TMP/dump")"
tail -n 1 "$TEST_TMP/dump" | grep -q " $lost discarded/overwritten," ||
	fail "rip dump does not count the $lost lost samples: $(tail -n 1 "$TEST_TMP/dump")"
t_done
