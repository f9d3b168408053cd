#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench/ps-watch.sh - every thread's stack of an uninstrumented program with
# PSW_THREADS (default 10,000) blocked threads (build/bench/psprog: raw
# futex, raw read, pthread_cond_wait, sleep, a quarter each), three ways in
# the same run, on the same process:
#
#   rip ps FILE              the watcher thread sweeps /proc/self/task and
#                            copies the stacks; rip ps unwinds the copies
#   eu-stack -p PID          ptrace: stops every thread
#   gdb -batch -ex 'thread apply all bt' -p PID
#
# For each: the wall time (median of PSW_REPS for rip ps, one run for the
# peers, each capped at PSW_CAP seconds: the row says when it hit the cap)
# and the longest pause the program saw meanwhile: one of its threads sleeps
# 1 ms at a time and keeps the longest gap between wake-ups (the "idle" row
# is that gap with nothing running).  Goal: rip ps under 1 s, no pause.
# Also: the tmpfs bytes the copies took (the ring file's blocks less those
# of the same file before the first sweep) against the copy area's bound.
#
#   sh bench/ps-watch.sh DIR      (from the top of a built tree; DIR: a tmpfs scratch)
#
# Prints its block on stdout, progress on stderr.  Exit status 1 when a
# program failed, 0 otherwise (missing gdb or eu-stack: their rows say so).
set -u
cd "$(dirname "$0")/.." || exit 1
. bench/lib.sh
BUILD=${BUILD:-build}
RIP=$BUILD/rip
PROG=$BUILD/bench/psprog
N=${PSW_THREADS:-10000}
REPS=${PSW_REPS:-3}
CAP=${PSW_CAP:-300}
dir=${1:?usage: ps-watch.sh DIR}
work=$dir/psw
rm -rf "$work"
mkdir -p "$work" || exit 1
pid=""
cleanup() {
	exec 3>&- 2>/dev/null
	if [ -n "$pid" ]; then
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

echo
echo "rip ps on $N blocked threads of an uninstrumented program, against ptrace tools"
if [ ! -x "$PROG" ] || [ ! -x "$RIP" ]; then
	echo "  skipped: $PROG or $RIP is not built (make bench builds them)"
	exit 0
fi
# The peers (elfutils' eu-stack, gdb), installed when root can; else their rows say so.
command -v eu-stack >/dev/null && command -v gdb >/dev/null || sh mk/deps-bench.sh eu-stack >&2
# One copy buffer per thread (the default pool, 4096, would leave the rest without a stack).
copies=$((N + 64))
mkfifo "$work/ctl" || exit 1
# psprog alone gets a small stack limit (its threads' default stack size): in this shell it
# would also cut the argument list of the commands below (ARG_MAX is a quarter of it).
(
	ulimit -s 256 2>/dev/null
	exec env RIP_RING="$work/" LD_PRELOAD="$PWD/$BUILD/librip-preload.so" RIP_DISABLE=1,2,3 \
		RIP_WATCH_COPIES=$copies RIP_SLOTS=$((N + 1024)) \
		"$PROG" "$N" "$work/ready" <"$work/ctl" >"$work/out" 2>"$work/err"
) &
pid=$!
exec 3>"$work/ctl"
i=0
while [ ! -s "$work/ready" ]; do
	kill -0 "$pid" 2>/dev/null || { echo "  psprog failed: $(cat "$work/err")"; exit 1; }
	i=$((i + 1))
	[ $i -gt 2400 ] && { echo "  psprog did not start its threads in 120 s"; exit 1; }
	sleep 0.05
done
ring=$(ls "$work"/rip-"$pid"-*.ring 2>/dev/null | head -n 1)
[ -n "$ring" ] || { echo "  psprog has no ring file"; exit 1; }

# gap: the program's longest 1 ms-sleep gap since the last reset, in microseconds
gap() {
	n0=$(wc -l <"$work/out")
	echo p >&3
	j=0
	while [ "$(wc -l <"$work/out")" -le "$n0" ] && [ $j -lt 200 ]; do
		sleep 0.01
		j=$((j + 1))
	done
	tail -n 1 "$work/out"
}
reset() {
	echo r >&3
	sleep 0.05 # the ticker resets at its next wake-up
}

# The first sweep (and every thread seen blocked) before timing anything.
blocks0=$(stat -c %b "$ring")
i=0
until "$RIP" ps "$ring" >"$work/ps.out" 2>&1 &&
	grep -q "threads in syscall futex" "$work/ps.out"; do
	i=$((i + 1))
	[ $i -gt 60 ] && { echo "  the watcher never showed the threads: $(head -n 20 "$work/ps.out")"; exit 1; }
	sleep 0.5
done
reset
sleep 1
idle=$(gap)

# CPU time (clock ticks) of the watcher thread: what the sweeps cost the program.
wtid=$(grep -lx "rip-watch" /proc/"$pid"/task/*/comm 2>/dev/null | head -n 1 | cut -d/ -f5)
wcpu() { [ -n "$wtid" ] && awk '{ print $14 + $15 }' /proc/"$pid"/task/"$wtid"/stat 2>/dev/null || echo 0; }
hz=$(getconf CLK_TCK)
walls=""
gaps=""
cpus=""
c0=$(wcpu)
for r in $(seq "$REPS"); do
	reset
	t0=$(now_ns)
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%U %S' -o "$work/time" "$RIP" ps "$ring" >"$work/ps.out" 2>"$work/ps.err"
	else
		"$RIP" ps "$ring" >"$work/ps.out" 2>"$work/ps.err"
	fi || { echo "  rip ps failed: $(cat "$work/ps.err")"; exit 1; }
	t1=$(now_ns)
	walls="$walls $(((t1 - t0) / 1000000))"
	gaps="$gaps $(gap)"
	[ -s "$work/time" ] && cpus="$cpus $(awk '{ printf "%d", ($1 + $2) * 1000 }' "$work/time")"
done
c1=$(wcpu)
wsweep=$((((c1 - c0) * 1000 / hz) / REPS))
cpu=$(echo "$cpus" | tr ' ' '\n' | grep . | median)
wall=$(echo "$walls" | tr ' ' '\n' | grep . | median)
pgap=$(echo "$gaps" | tr ' ' '\n' | grep . | median)
fresh=yes
grep -q "did not answer" "$work/ps.out" && fresh="no (the sweep did not answer in time)"
sweep=$(sed -n 's/.*(took \([^)]*\)).*/\1/p' "$work/ps.out" | head -n 1)
shown=$(awk '/threads? in syscall/ { s += $1 } END { print s + 0 }' "$work/ps.out")
nostack=$(grep -c "no stack copy" "$work/ps.out")
blocks1=$(stat -c %b "$ring")
copykib=$(((blocks1 - blocks0) * 512 / 1024))

peer() {
	name=$1
	shift
	if ! command -v "$1" >/dev/null; then
		echo "$name: not installed"
		return
	fi
	reset
	t0=$(now_ns)
	timeout -k 5 "$CAP" "$@" >"$work/peer.out" 2>&1
	st=$?
	t1=$(now_ns)
	g=$(gap)
	ms=$(((t1 - t0) / 1000000))
	if [ $st -eq 124 ] || [ $st -eq 137 ]; then
		echo "$name: hit the cap of ${CAP} s (killed); pause ${g} us"
	else
		frames=$(grep -c '^#' "$work/peer.out")
		echo "$name: ${ms} ms, pause ${g} us (exit $st, $frames frame lines)"
	fi
}
eus=$(peer eu-stack eu-stack -p "$pid")
gdbs=$(peer gdb gdb -batch -ex 'thread apply all bt' -p "$pid")
kill -0 "$pid" 2>/dev/null || { echo "  psprog died under the peers"; exit 1; }

printf '  %-44s %s\n' "threads (blocked + ticker + main)" "$((N + 2))"
printf '  %-44s %s us\n' "idle: longest 1 ms-sleep gap, nothing running" "$idle"
printf '  %-44s %s ms (median of %s:%s)\n' "rip ps: wall time" "$wall" "$REPS" "$walls"
printf '  %-44s %s us (median:%s)\n' "rip ps: longest gap the program saw" "$pgap" "$gaps"
printf '  %-44s %s ms of CPU (median), besides waiting for the sweep\n' "rip ps: its own CPU" "$cpu"
printf '  %-44s %s; sweep took %s (wall), about %s ms of the watcher'"'"'s CPU\n' \
	"rip ps: fresh sweep" "$fresh" "${sweep:-?}" "$wsweep"
printf '  %-44s %s\n' "load average (shared machine)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '  %-44s %s shown in groups, %s groups without a stack copy\n' "rip ps: threads" \
	"$shown" "$nostack"
printf '  %-44s %s KiB (bound: %s buffers of 16 KiB = %s MiB)\n' "tmpfs taken by the copies" \
	"$copykib" "$copies" "$((copies / 64))"
printf '  %-44s %s\n' "eu-stack -p" "${eus#eu-stack: }"
printf '  %-44s %s\n' "gdb thread apply all bt" "${gdbs#gdb: }"
if [ "$wall" != - ] && [ "$wall" -lt 1000 ]; then
	echo "  budget: rip ps under 1 s: met (${wall} ms)"
else
	echo "  budget: rip ps under 1 s: MISSED (${wall} ms)"
fi
exit 0
