#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip ps --stacks reads the call stacks of a big ring file as
# it goes, keeping nothing per slot but what a group shows of its members:
# on 200 threads and 30,000 coroutines parked in traced calls
# (bench/many-fn, built with -finstrument-functions), after kill -9, the
# grouped view and --threads account for every one of them, and the heap
# rip ps takes at its peak (valgrind's massif) stays under 300 bytes a slot
# grouped and 4 MiB with --threads (reading every slot and its stack into
# arrays first took 1.7 KiB a slot).
. tests/data/common.sh
many=$PWD/$BUILD/bench/many-fn
need_bin "$many" "$RIP"
need_cmd valgrind python3
cd "$TEST_TMP" || die "no TEST_TMP"

nthr=200
nco=30000
"$many" $nthr $nco >many.out 2>many.err &
mpid=$!
T_PIDS="$T_PIDS $mpid"
wait_until 120 grep -q '^ready ' many.out || die "bench/many-fn never got ready: $(cat many.err)"
read -r ring _ nthr nco _ <<READY
$(sed -n 's/^ready //p' many.out)
READY
kill -9 "$mpid"
wait "$mpid" 2>/dev/null
[ -f "$ring" ] || die "no ring file $ring"

# peak PROG ARGS...: the peak of the heap (bytes) PROG ARGS takes, by massif
peak() {
	valgrind --tool=massif --massif-out-file=massif.out "$@" >peak.out 2>peak.err ||
		die "$*: $(tail -n 3 peak.err)"
	sed -n 's/^mem_heap_B=//p' massif.out | sort -n | tail -n 1
}

"$RIP" ps --stacks --json "$ring" >grouped.json 2>grouped.err || fail "rip ps --stacks: $(cat grouped.err)"
n=$(python3 -c '
import json, sys
d = json.load(open("grouped.json"))
print(sum(g["count"] for g in d["stacks"]))') || fail "rip ps --stacks --json: not JSON"
[ "$n" = $((nthr + nco)) ] || fail "grouped: $n in traced calls, want $((nthr + nco))"
"$RIP" ps --stacks --threads "$ring" >threads.txt 2>threads.err || fail "rip ps --stacks --threads: $(cat threads.err)"
n=$(grep -c '^\(thread\|coroutine\) .*, [1-9][0-9]* frames*' threads.txt)
[ "$n" = $((nthr + nco)) ] || fail "--threads: $n in traced calls, want $((nthr + nco))"

heap=$(peak "$RIP" ps --stacks "$ring")
limit=$(((nthr + nco) * 300))
echo "rip ps --stacks: heap peak $heap bytes for $((nthr + nco)) slots (limit $limit)"
[ "$heap" -lt "$limit" ] || fail "rip ps --stacks took $heap bytes of heap for $((nthr + nco)) slots (limit $limit)"
heap=$(peak "$RIP" ps --stacks --threads "$ring")
echo "rip ps --stacks --threads: heap peak $heap bytes"
[ "$heap" -lt $((4 << 20)) ] || fail "rip ps --stacks --threads took $heap bytes of heap (limit 4 MiB)"
rm -f "$ring"
t_done
