#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run says when most of the CPU samples it calls lost are
# timer periods the kernel merged.  A thread's CPU-time timer expires at
# the kernel's tick (250 Hz on many kernels), whatever rate --sample asks:
# at 1000 Hz three periods in four were merged into the next signal
# (si_overrun) and rip run said "749 lost" with nothing more, as if the
# recorder had failed.  When the merged periods (the trace's overrun, as
# rip top --json gives it) are at least half the loss and a quarter of the
# samples, a line must say how many and that a lower --sample loses fewer;
# otherwise no such line.  At 50 Hz (under any tick) none.
. tests/data/common.sh
need_bin "$RIP"
need_cmd python3
cpu_timers || skip "CPU-time timers deliver no signal here"
cd "$TEST_TMP" || die "no $TEST_TMP"

for hz in 1000 50; do
	# about a second of CPU time in a shell's loop
	"$RIP" run --sample=$hz -o T$hz -- sh -c 'i=0; while [ $i -lt 400000 ]; do i=$((i + 1)); done' \
		>out$hz 2>err$hz ||
		fail "rip run --sample=$hz: $(cat err$hz)"
	"$RIP" top --json T$hz >top$hz.json 2>/dev/null || fail "rip top --json T$hz"
	python3 - top$hz.json err$hz $hz <<'PY' || fail "--sample=$hz: $(cat err$hz)"
import json, re, sys
s = json.load(open(sys.argv[1]))["sampling"]
err = open(sys.argv[2]).read()
hz = int(sys.argv[3])
m = re.search(r"^rip run: (\d+) of the samples lost are timer periods the kernel merged"
              r" into others .*: a lower --sample loses fewer$", err, re.M)
want = s["overrun"] > 0 and 2 * s["overrun"] >= s["lost"] and s["overrun"] >= s["samples"] / 4
if hz == 50 and want:
    print("merged at 50 Hz:", s, file=sys.stderr); sys.exit(1)
if bool(m) != want or (m and int(m.group(1)) != s["overrun"]):
    print("sampling", s, "line", m and m.group(0), file=sys.stderr); sys.exit(1)
PY
done
t_done
