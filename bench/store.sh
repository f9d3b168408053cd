#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench/store.sh - recording in bounded disk: `rip record --max-size=SIZE` of a
# program that emits far more than SIZE, the disk the trace takes polled
# while it is written, and what the readers say of what was dropped.
#
# build/tests/integ/recprog (STORE_N events:count events on each of 2
# threads, STORE_RATE a second each, 12 bytes an event in the ring,
# RIP_MODE=block: nothing lost to the rings once a recorder is there) is
# attached to by `rip record --max-size=STORE_MAX`, which records some
# 200 MB of packets (its summary says how many).  While
# rip record runs, the trace directory's files are measured (disk_bytes:
# sizes, the sparse copy of the ring file for the pages it holds) every
# 20 ms; the largest is the peak.  The bound is STORE_MAX plus one chunk
# (STORE_MAX / 4) plus 128 KiB (the index and the chunk headers).  Then rip
# dump reads what is left: its events, and the events it counts as gone
# (dropped chunks), which with the events left must make every event the
# program emitted, and rip record's summary says how many it dropped.
#
#   sh bench/store.sh DIR           (from the top of a built tree; DIR: scratch)
#   STORE_N=10000000 STORE_RATE=4000000 STORE_MAX=10M  (defaults)
#
# Output: a block of lines, and "budget" lines.  Exit status 1 when a program
# failed.
set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
BUILD=${BUILD:-build}
RIP=$top/$BUILD/rip
PROG=$top/$BUILD/tests/integ/recprog
N=${STORE_N:-10000000}
RATE=${STORE_RATE:-4000000}
MAX=${STORE_MAX:-10M}
dir=${1:?usage: store.sh DIR}
. bench/lib.sh # now_ns, median, bench_work, disk_bytes
bench_work "$dir/store"

echo
echo "recording in bounded disk: rip record --max-size=$MAX [12]"
if [ ! -x "$PROG" ]; then
	echo "  $PROG is missing (make tests), skipped"
	exit 1
fi
case $MAX in
*[kK]) maxb=$((${MAX%?} * 1024)) ;;
*[mM]) maxb=$((${MAX%?} * 1048576)) ;;
*[gG]) maxb=$((${MAX%?} * 1073741824)) ;;
*) maxb=$MAX ;;
esac
bound=$((maxb + maxb / 4 + 131072))

cd "$work" || exit 1
RIP_RING=1 RIP_MODE=block "$PROG" "$N" --threads 2 --rate "$RATE" --progress progress >prog.out 2>prog.err &
pid=$!
i=0
while [ ! -s progress ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 1000 ]; do
	sleep 0.01
	i=$((i + 1))
done
s=$(now_ns)
"$RIP" record --max-size="$MAX" -o T "$pid" 2>rec.err &
rp=$!
peak=0 polls=0
while kill -0 "$rp" 2>/dev/null; do
	b=$(disk_bytes T)
	[ "${b:-0}" -gt "$peak" ] && peak=$b
	polls=$((polls + 1))
	sleep 0.02
done
wait "$rp"
rrc=$?
e=$(now_ns)
wait "$pid"
prc=$?
if [ $rrc != 0 ] || [ $prc != 0 ]; then
	echo "  rip record exit $rrc, the program $prc: $(head -n 2 rec.err | tr '\n' ' ')"
	exit 1
fi
final=$(disk_bytes T)
chunks=$(ls T | grep -c '^chunk-')
# rip record: ... the oldest E events (C chunks) removed to keep within --max-size
rec_drop=$(sed -n 's/.*the oldest \([0-9]*\) events (\([0-9]*\) chunks) removed.*/\1 events in \2 chunks/p' \
	rec.err)
# rip record: E events (X MB, Y MB on disk) recorded in T/, ...
rec=$(sed -n 's/^rip record: \([0-9]* events ([^)]*)\) recorded.*/\1/p' rec.err | head -n 1)
"$RIP" dump T >dump.txt 2>dump.err || {
	echo "  rip dump failed: $(head -n 2 dump.err | tr '\n' ' ')"
	exit 1
}
kept=$(grep -c 'events:count' dump.txt)
# rip dump's last line: ... E events, S streams, D discarded/overwritten, P packets lost (...)
gone=$(tail -n 1 dump.txt | sed -n 's/.* streams, \([0-9]*\) discarded.*/\1/p')
made=$((2 * N))
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1048576 }'; }
echo "  emitted                          $made events ($(awk -v n=$made \
	'BEGIN { printf "%.0f MB", n * 12 / 1048576 }') in the rings)"
echo "  rip record recorded              ${rec:-?}"
echo "  recording took                   $(awk -v t=$((e - s)) 'BEGIN { printf "%.2f s", t / 1e9 }')"
echo "  trace on disk, peak              $(mb "$peak") ($polls polls; bound $(mb $bound):" \
	"$MAX + a chunk + 128 KiB)"
echo "  trace on disk, at the end        $(mb "$final"), $chunks chunk files"
echo "  rip record says dropped          ${rec_drop:-nothing}"
echo "  rip dump reads                   $kept events, counts ${gone:-?} gone; together" \
	"$((kept + ${gone:-0})) of $made"
echo "[12] build/tests/integ/recprog $N --threads 2 --rate $RATE (RIP_RING=1 RIP_MODE=block), rip record"
echo "    --max-size=$MAX PID; disk: each file's size or its allocated bytes when fewer (du -sb"
echo "    would count the sparse ring copy at its length), polled every 20 ms."
echo "budget:"
if [ "$peak" -le "$bound" ]; then
	echo "  --max-size=$MAX, peak disk use: $(mb "$peak") <= $(mb $bound), within budget"
else
	echo "  --max-size=$MAX, peak disk use: $(mb "$peak") > $(mb $bound), OVER budget"
fi
if [ -n "$gone" ] && [ $((kept + gone)) = $made ] && [ -n "$rec_drop" ]; then
	echo "  --max-size=$MAX: every event read or counted as dropped, within budget"
else
	echo "  --max-size=$MAX: $kept read + ${gone:-?} counted of $made emitted, OVER budget"
fi
