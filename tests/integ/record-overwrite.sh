#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip record streams a live program in overwrite mode, the
# hard case: recprog --forever on 2 threads, whose writers never wait,
# recorded for RECORD_SECS (10) seconds and then killed with SIGKILL.
# recprog emits 400k events/s per thread in 1 ms bursts into 4 KiB rings
# of 1 KiB packets, so rip record is overrun all the time while the volume
# stays small enough to check every event (examples/events flat out would
# make gigabytes).  rip record must notice the death, drain and finish; no packet
# may be corrupt (rip dump validates every one; babeltrace2 reads them all);
# each thread's counter must only go up; and the counts must add up: for
# every thread the events recorded plus the events rip record reports lost
# (before it attached and while it recorded) equal the events emitted, known
# from the last counter value (the open packet is recorded at the end).
. tests/data/common.sh
ev=$PWD/$BUILD/tests/integ/recprog
need_bin "$ev" "$RIP"
need_cmd babeltrace2
SECS=${RECORD_SECS:-10}
export RIP_DIR="$TEST_TMP/rings"
mkdir -p "$RIP_DIR"
cd "$TEST_TMP" || die "no TEST_TMP"

t_bg env RIP_RING=1 RIP_MODE=overwrite RIP_EVENT_RING_SIZE=4096 RIP_EVENT_PACKET_SIZE=1024 \
	"$ev" 0 --forever --threads 2 --rate "${RECORD_RATE:-400000}" --progress progress
pid=$T_LAST
# attach once the threads emit: the ring file is complete by then
emitting() { [ "$(cat "$TEST_TMP/progress" 2>/dev/null || echo 0)" -gt 0 ]; }
wait_until 60 emitting || die "recprog emitted nothing"
ls "$RIP_DIR"/rip-"$pid"-*.ring >/dev/null 2>&1 || die "events made no ring file"

"$RIP" record -o rec "$pid" 2>rec.err &
rec=$!
T_PIDS="$T_PIDS $rec"
sleep "$SECS"
t_kill "$pid"
i=0
while kill -0 "$rec" 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 600 ] && die "rip record did not stop within 60 s of the process's death"
	sleep 0.1
done
wait "$rec"
rc=$?
[ "$rc" = 0 ] || die "rip record: exit $rc: $(cat rec.err)"
cat rec.err

# rip record's own account
line=$(grep '^rip record: [0-9]* events .* recorded in rec/' rec.err)
[ -n "$line" ] || die "no summary line: $(cat rec.err)"
recorded=$(echo "$line" | sed 's/^rip record: \([0-9]*\) events.*/\1/')
during=$(echo "$line" | sed -n 's/.*, \([0-9]*\) lost while recording.*/\1/p')
before=$(sed -n 's/^rip record: \([0-9]*\) events had been overwritten before rip attached$/\1/p' \
	rec.err)
: "${before:=0}"
[ -n "$during" ] || die "no lost count in: $line"
grep -q corrupt rec.err && fail "rip record skipped corrupt packets"

# every packet decodes and validates
"$RIP" dump rec >dump.txt 2>dump.err || die "rip dump of the recording failed: $(cat dump.err)"
tail -n 1 dump.txt
# per thread: counters only go up; emitted = last + 1
awk -v rec="$recorded" -v lost="$((during + before))" '
$3 == "events:count" {
	t = $2; n = substr($4, 3) + 0
	if ((t in last) && n <= last[t]) { back++; if (back < 5) print t ": " n " after " last[t] }
	last[t] = n; count[t]++; total++
}
END {
	for (t in last) { emitted += last[t] + 1; print t ": recorded " count[t] ", emitted " last[t] + 1 }
	print "recorded " total " (rip record says " rec "), lost " lost ", emitted " emitted
	if (back) { print back " counters went backwards or repeated"; exit 1 }
	if (total != rec) { print "rip record counted " rec " events, the trace holds " total; exit 1 }
	if (total + lost != emitted) {
		print "recorded + lost = " total + lost " != emitted " emitted \
			" (off by " total + lost - emitted ")"
		exit 1
	}
}' dump.txt >check.txt
rc=$?
cat check.txt
[ "$rc" = 0 ] || fail "counts do not add up"

# babeltrace2 reads all of it, with the same number of events
"$RIP" export --format=ctf rec -o rec.ctf 2>ex.err || fail "rip export --format=ctf: $(cat ex.err)"
babeltrace2 rec.ctf -c sink.utils.counter -p step=+0 >bt.txt 2>bt.err ||
	fail "babeltrace2 cannot read the recording: $(grep -v WARNING bt.err | head -n 3)"
bt=$(awk '/Event messages/ { n = $1 } END { print n + 0 }' bt.txt)
[ "$bt" = "$recorded" ] || fail "babeltrace2 reads $bt events, rip record wrote $recorded"

# a process that is not running cannot be recorded
expect_status 1 "rip record of a dead process" "$RIP" record -o rec2 "$pid"
[ -e rec2 ] && fail "rip record of a dead process left a directory"
expect_status 2 "rip record without TARGET" "$RIP" record
expect_status 0 "rip record --help" "$RIP" record --help
t_done
