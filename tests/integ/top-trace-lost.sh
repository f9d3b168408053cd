#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip top of a recorded trace says how many CPU samples were
# lost, the number rip run's summary gave.  topprog burn runs two threads
# that burn 500 ms of CPU each, sampled at 1,000 Hz: above the kernel's
# tick rate most periods are merged into one signal and counted lost
# (sample-overrun).  rip top's text said "N samples" and nothing of them;
# its sampling line now ends with ", N lost", --json has the same "lost",
# for a packed trace and a CTF one alike (the count the recorder put in the
# samples' stream).  The recorder is stopped 100 ms in every 150, so that
# it also loses samples the program stored (a sample ring wraps): the
# samples rip top counts are those of the trace, not those stored (it said
# the stored ones, which with the lost counted some twice).
# Timeout: 120
. tests/data/common.sh
prog=$BUILD/tests/integ/topprog
need_bin "$prog" "$RIP"
need_cmd python3

for fmt in packed ctf; do
	opt=
	[ "$fmt" = ctf ] && opt=--ctf
	tr=$TEST_TMP/trace-$fmt
	# shellcheck disable=SC2086 # no option or one
	"$RIP" run $opt --sample=1000 -o "$tr" -- "$prog" burn 500 >"$TEST_TMP/out" \
		2>"$TEST_TMP/err" &
	rp=$!
	# stopped for 100 ms in every 150 while it runs: a sample ring holds a few
	while ! grep -q '^State:.*Z' "/proc/$rp/status" 2>/dev/null && kill -STOP "$rp" 2>/dev/null; do
		sleep 0.1
		kill -CONT "$rp" 2>/dev/null
		sleep 0.05
	done
	wait "$rp" || die "$fmt: rip run: exit $?: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
	line=$(grep "CPU samples of them" "$TEST_TMP/err") ||
		die "$fmt: no samples line: $(cat "$TEST_TMP/err")"
	taken=$(echo "$line" | sed -n 's/.*run: \([0-9]*\) CPU samples.*/\1/p')
	lost=$(echo "$line" | sed -n 's/.*, \([0-9]*\) lost.*/\1/p')
	[ -n "$taken" ] && [ -n "$lost" ] || die "$fmt: cannot read the samples line: $line"
	# the test is of a trace with losses: the kernel merges periods at 1,000 Hz
	[ "$lost" -gt 0 ] || die "$fmt: rip run lost no sample at 1,000 Hz: $line"

	expect_status 0 "$fmt: rip top TRACE" "$RIP" top "$tr"
	grep -q "^sampling: 1000 Hz, $taken samples of [0-9]* threads\?, $lost lost\(,\|$\)" "$TEST_TMP/out" ||
		fail "$fmt: rip top's sampling line does not say $lost lost: $(grep '^sampling' "$TEST_TMP/out")"
	expect_status 0 "$fmt: rip top --json TRACE" "$RIP" top --json "$tr"
	python3 - "$TEST_TMP/out" "$taken" "$lost" <<'PY' || fail "$fmt: rip top --json: lost"
import json, sys
s = json.load(open(sys.argv[1]))["sampling"]
taken, lost = int(sys.argv[2]), int(sys.argv[3])
assert (s["samples"], s["lost"]) == (taken, lost), (s, taken, lost)
assert 0 < s["overrun"] < lost, s
PY
done
t_done
