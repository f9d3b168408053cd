#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench/relayd.sh - events streamed through lttng-relayd on loopback:
# build/bench/stream on 2 threads (RLY_N u64 events each, as fast
# as they can) under a lossless consumer, in the same run:
#
#   disk     rip run --buffer=4m -o DIR             (block mode: nothing lost)
#   relayd   rip run --buffer=4m --relayd=URL -o -  (the same, to relayd only)
#   both     rip run --buffer=4m --relayd=URL -o DIR
#   lttng    LTTng-UST 2.13 (build/bench/stream-lttng, ripbench:count) in a
#            live session of its own sending to the same relayd: per-UID
#            buffers of 4 x 1 MiB per CPU, --blocking-timeout=inf and
#            LTTNG_UST_ALLOW_BLOCKING=1, so that it loses nothing either
#
# Rates are events / the program's own time from its first event to its last
# thread's end (writers wait for the consumer, so it is the consumer's rate);
# the median of RLY_REPS.  Every run is checked lossless: rip's summary says
# 0 lost and counts every event; LTTng's copy on relayd is counted with
# babeltrace2's sink.utils.counter.  Goal: rip through relayd at least 3x
# LTTng's rate.  lttng-relayd runs on free loopback ports with its own home
# and output directory, stopped by pid; the LTTng rows need root (the session
# daemon), lttng-tools and liblttng-ust-dev, and a root lttng-sessiond that
# already runs is used as it is (only our session is created and destroyed;
# one of ours is stopped by pid).
#
#   sh bench/relayd.sh DIR          (from the top of a built tree; DIR: scratch)
#   RLY_N=4000000 RLY_REPS=3        (defaults)
#
# Exit status 1 when a rip run failed or lost events, 0 otherwise (LTTng's
# rows missing included: they say why).
set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
BUILD=${BUILD:-build}
RIP=$top/$BUILD/rip
PROG=$top/$BUILD/bench/stream
N=${RLY_N:-4000000}
REPS=${RLY_REPS:-3}
dir=${1:?usage: relayd.sh DIR}
work=$dir/relayd
rm -rf "$work"
mkdir -p "$work/home" || exit 1
RIP_DIR=$work
export RIP_DIR
. bench/lib.sh # now_ns, median
failed=0
relayd_pid="" sessiond_pid="" session=""
total=$((N * 2))

cleanup() {
	[ -n "$session" ] && lttng destroy "$session" >/dev/null 2>&1
	[ -n "$sessiond_pid" ] && kill "$sessiond_pid" 2>/dev/null
	[ -n "$relayd_pid" ] && kill "$relayd_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

echo ""
echo "relayd: events/s streamed through lttng-relayd on loopback, 2 threads, lossless [13]"
if ! command -v lttng-relayd >/dev/null 2>&1; then
	echo "  skipped: lttng-relayd is not installed (apt-get install lttng-tools)"
	exit 0
fi
[ -x "$PROG" ] || { echo "  skipped: $PROG is missing (make)"; exit 1; }

# relayd on three free ports
listening() { ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
for attempt in 1 2 3 4 5 6; do
	base=$(( ($$ + attempt * 1237) % 30000 + 20000 ))
	listening $base || listening $((base + 1)) || listening $((base + 2)) || {
		LTTNG_HOME=$work/home lttng-relayd -C tcp://127.0.0.1:$base -D tcp://127.0.0.1:$((base + 1)) \
			-L tcp://127.0.0.1:$((base + 2)) -o "$work/out" >"$work/relayd.log" 2>&1 &
		relayd_pid=$!
		i=0
		while [ $i -lt 100 ] && kill -0 $relayd_pid 2>/dev/null &&
			! { listening $base && listening $((base + 1)) && listening $((base + 2)); }; do
			sleep 0.05
			i=$((i + 1))
		done
		kill -0 $relayd_pid 2>/dev/null && break
		relayd_pid=""
	}
done
[ -n "$relayd_pid" ] || { echo "  skipped: lttng-relayd would not start ($(tail -n 1 "$work/relayd.log"))"; exit 1; }
URL=net://127.0.0.1:$base:$((base + 1))

# LTTng-UST: the tracepoint program and a session daemon
lt_note=""
if ! pkg-config --exists lttng-ust 2>/dev/null; then
	lt_note="liblttng-ust-dev is not installed (sh mk/deps-bench.sh)"
elif [ "$(id -u)" != 0 ]; then
	lt_note="lttng-sessiond runs as root here; run as root"
elif ! cc -std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -DBENCH_LTTNG -Iinclude -Ibench \
	$(pkg-config --cflags lttng-ust) -o "$work/stream-lttng" bench/stream.c bench/lttng-tp.c \
	-L"$BUILD" -lrip -Wl,-rpath,"$top/$BUILD" $(pkg-config --libs lttng-ust) -ldl -pthread \
	2>"$work/cc.err"; then
	lt_note="the tracepoint program did not build: $(grep -m 1 error "$work/cc.err")"
else
	running=$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null)
	if [ -z "$running" ] || ! kill -0 "$running" 2>/dev/null; then
		lttng-sessiond --daemonize --no-kernel >"$work/sessiond.out" 2>&1
		i=0
		while [ $i -lt 50 ]; do
			sessiond_pid=$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null)
			[ -n "$sessiond_pid" ] && kill -0 "$sessiond_pid" 2>/dev/null && break
			sessiond_pid=""
			sleep 0.1
			i=$((i + 1))
		done
		[ -n "$sessiond_pid" ] || lt_note="lttng-sessiond did not start: $(tail -n 1 "$work/sessiond.out")"
	fi
fi

# run NAME CMD...: time one rip run; its rate into $work/r.NAME, or - (and failed=1)
run_rip() {
	name=$1
	shift
	rm -rf "$work/tr"
	if "$@" >"$work/out.txt" 2>"$work/err.txt" &&
		grep -q "rip run: $total events .* 0 lost" "$work/err.txt"; then
		awk '/^events / { print $6 }' "$work/out.txt" >>"$work/r.$name"
	else
		echo "  $name: failed or lost events: $(tail -n 1 "$work/err.txt")" >&2
		echo - >>"$work/r.$name"
		failed=1
	fi
}

run_lttng() {
	session=ripbench-relayd-$$-$1
	if ! { lttng create "$session" --live=1000000 --set-url="$URL" &&
		lttng enable-channel --session="$session" -u --blocking-timeout=inf \
			--subbuf-size=1M --num-subbuf=4 ch &&
		lttng enable-event --session="$session" -u -c ch ripbench:count &&
		lttng start "$session"; } >"$work/lttng.out" 2>&1; then
		lt_note="the session would not start: $(grep -m 1 -i error "$work/lttng.out")"
		lttng destroy "$session" >/dev/null 2>&1
		session=""
		return
	fi
	LTTNG_UST_ALLOW_BLOCKING=1 "$work/stream-lttng" "$N" 2 >"$work/out.txt" 2>"$work/err.txt"
	lttng stop "$session" >/dev/null 2>&1
	lttng destroy "$session" >/dev/null 2>&1
	copy=$(ls -d "$work/out/"*/"$session"-* 2>/dev/null | tail -n 1)
	got=$(babeltrace2 "$copy" -c sink.utils.counter --params 'step=+0' 2>/dev/null |
		awk '/Event messages/ { n = $1 } END { print n }')
	if [ "$got" = "$total" ]; then
		awk '/^events / { print $6 }' "$work/out.txt" >>"$work/r.lttng"
	else
		echo "  lttng: $got of $total events on relayd" >&2
		echo - >>"$work/r.lttng"
		lt_note="LTTng lost events ($got of $total on relayd)"
	fi
	rm -rf "$copy"
	session=""
}

for k in disk relayd both lttng; do : >"$work/r.$k"; done
for rep in $(seq "$REPS"); do
	echo "  repetition $rep of $REPS ..." >&2
	run_rip disk "$RIP" run -b 4m -o "$work/tr" -- "$PROG" "$N" 2
	run_rip relayd "$RIP" run -b 4m --relayd="$URL" --session=rip-$rep -o - -- "$PROG" "$N" 2
	run_rip both "$RIP" run -b 4m --relayd="$URL" --session=both-$rep -o "$work/tr" -- "$PROG" "$N" 2
	rm -rf "$work/out/"*/rip-* "$work/out/"*/both-*
	[ -z "$lt_note" ] && run_lttng "$rep"
done
d=$(grep -v - "$work/r.disk" | median)
r=$(grep -v - "$work/r.relayd" | median)
b=$(grep -v - "$work/r.both" | median)
l=$(grep -v - "$work/r.lttng" | median)
mev() { awk -v v="$1" 'BEGIN { if (v == "-" || v == "") print "-"; else printf "%.2f", v / 1e6 }'; }
printf '  %-44s %10s\n' "consumer ($total events, median of $REPS)" "Mevents/s"
printf '  %-44s %10s\n' "rip run -o DIR (to disk)" "$(mev "$d")"
printf '  %-44s %10s\n' "rip run --relayd -o - (relayd only)" "$(mev "$r")"
printf '  %-44s %10s\n' "rip run --relayd -o DIR (both)" "$(mev "$b")"
printf '  %-44s %10s\n' "LTTng-UST 2.13 consumerd -> relayd" "$(mev "$l")"
[ -n "$lt_note" ] && echo "  LTTng-UST: $lt_note"
ratio=$(awk -v a="$r" -v b="$l" 'BEGIN { if (a != "-" && b != "-" && b > 0) printf "%.2f", a / b; else print "-" }')
echo "  budget: rip through relayd / LTTng through relayd = ${ratio}x (goal >= 3x)"
exit $failed
