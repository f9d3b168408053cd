#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: babeltrace2 reads a `rip snapshot` of a process that exited,
# with nothing lost: 2 threads, every field type (signed, hex, strings,
# names TSDL cannot take as they are), 30 extra event types so that ids
# >= 31 use the extended header, on the TSC and on the CLOCK_MONOTONIC_RAW
# clock.  Every event must come back with its values and its time, and
# babeltrace2 must print no warning.  The wall-clock time babeltrace2 gives
# the first event must fall inside the run, and the metadata must say what
# the index says (env, clock).
. tests/data/common.sh
. tests/data/ctf-lib.sh
ctf_need

t0=$(date +%s)
evprog_run basic 3000 --threads 2 --types 30
t1=$(date +%s)
snap_check basic "$EV_PID" --emitted "$EV_EMITTED" --threads 2 --want-ext-ids
babeltrace2 --clock-seconds "$TEST_TMP/basic" 2>/dev/null | head -n 1 >"$TEST_TMP/first"
s=$(sed 's/^\[\([0-9]*\)\..*/\1/' "$TEST_TMP/first")
[ -n "$s" ] && [ "$s" -ge "$((t0 - 1))" ] && [ "$s" -le "$((t1 + 1))" ] ||
	fail "first event at $s s since the epoch, the program ran in [$t0, $t1]"
m=$TEST_TMP/basic/metadata
head -n 1 "$m" | grep -qx '/\* CTF 1.8 \*/' || fail "metadata does not start with /* CTF 1.8 */"
grep -q "pid = $EV_PID;" "$m" || fail "metadata env has no pid = $EV_PID"
grep -q 'tracer_name = "librip";' "$m" || fail "metadata env has no tracer_name"
grep -q 'procname = "evprog";' "$m" || fail "metadata env has no procname"
grep -q 'process_dead = 1;' "$m" || fail "metadata does not say the process is dead"
grep -q '^	name = "evprog:odd \\"x\\"";$' "$m" || fail "event name not escaped"
[ -f "$TEST_TMP/basic/.rip-index" ] || fail "no .rip-index in the trace"

# The same on CLOCK_MONOTONIC_RAW (ns ticks).
RIP_CLOCK=mono evprog_run mono 1000 --threads 2 --types 30
snap_check mono "$EV_PID" --emitted "$EV_EMITTED" --threads 2 --want-ext-ids
grep -q 'freq = 1000000000;' "$TEST_TMP/mono/metadata" || fail "mono clock: freq is not 1 GHz"

# The ASan build reads the ring file and writes a trace babeltrace2 reads.
asan_run snapshot -o "$TEST_TMP/asan" "$EV_PID"
[ "$asan_rc" = 0 ] || fail "rip (asan) snapshot: exit $asan_rc"
babeltrace2 "$TEST_TMP/asan" >/dev/null 2>"$TEST_TMP/asan.bterr" ||
	fail "babeltrace2 on the asan snapshot: $(head -n 3 "$TEST_TMP/asan.bterr")"
t_done
