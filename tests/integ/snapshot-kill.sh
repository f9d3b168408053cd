#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: snapshot of a process killed with SIGKILL in the middle of
# writing.  evprog emits in a tight loop on 2 threads and a third thread
# SIGKILLs it at a random moment; each thread's ring is left with an open
# packet, maybe with an event half written.  rip snapshot must close those
# packets in its copy (end time, event count), drop nothing as torn (the
# writers are dead), and babeltrace2 must read the trace with no warning
# but the discarded-events one: per thread, events with no gap from the
# first kept to the last committed, the lost ones all before the first.
# Five rounds: default rings and small ones, both clocks.
. tests/data/common.sh
. tests/data/ctf-lib.sh
ctf_need

round() {
	name=$1
	shift
	env "$@" "$EVPROG" 0 --threads 2 --types 30 --kill >"$TEST_TMP/$name.evprog" 2>&1
	rc=$?
	[ "$rc" = 137 ] || { fail "$name: evprog --kill: exit $rc, want 137 (SIGKILL)"; return; }
	pid=$(sed -n 's/^pid //p' "$TEST_TMP/$name.evprog")
	snap_check "$name" "$pid" --threads 2
	python3 - "$TEST_TMP/$name.json" <<'PY' || fail "$name: wrong summary"
import json, sys
s = json.load(open(sys.argv[1]))
ok = not s["alive"] and s["torn_packets"] == 0 and s["events"] > 0 and s["streams"] == 2
print("summary:", s)
sys.exit(0 if ok else 1)
PY
	grep -q 'process_dead = 1;' "$TEST_TMP/$name/metadata" || fail "$name: not marked dead"
}

round k1 RIP_EVENT_RING_SIZE=8192 RIP_EVENT_PACKET_SIZE=1024
round k2 RIP_EVENT_RING_SIZE=65536 RIP_EVENT_PACKET_SIZE=2048
round k3 RIP_CLOCK=mono RIP_EVENT_RING_SIZE=16384 RIP_EVENT_PACKET_SIZE=1024
round k4 RIP_CLOCK=tsc
round k5 RIP_CLOCK=mono
t_done
