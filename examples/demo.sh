#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# examples/demo.sh - the librip demo (make demo): start a pretend server with
# 10,000 threads and 100,000 coroutines, a few of them stuck, and find the
# stuck ones with rip ps, live and then post mortem after kill -9.
#
#   sh examples/demo.sh            from the top of the tree, after make
#
# Environment: BUILD (default build), DEMO_THREADS, DEMO_COROS (default
# 10000 and 100000), DEMO_TIMEOUT (seconds to wait for the demo to start,
# default 60).  It leaves no process behind and removes only its own files:
# a temporary directory and, at the very end, the demo's ring file.
set -u

BUILD=${BUILD:-build}
DEMO=$BUILD/examples/demo
RIP=$BUILD/rip
THREADS=${DEMO_THREADS:-10000}
COROS=${DEMO_COROS:-100000}
TIMEOUT=${DEMO_TIMEOUT:-60}

pid=
ring=
tmp=

cleanup() {
	if [ -n "$pid" ]; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	[ -n "$ring" ] && rm -f "$ring"
	[ -n "$tmp" ] && rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

die() {
	echo "demo.sh: $*" >&2
	exit 1
}

heading() {
	printf '\n==== %s\n' "$1"
	shift
	for line in "$@"; do
		printf '     %s\n' "$line"
	done
	echo
}

# Sleep a fifth of a second where sleep takes fractions, else a second.
nap() {
	sleep 0.2 2>/dev/null || sleep 1
}

[ -x "$DEMO" ] || die "$DEMO is missing: run make first"
have_rip=yes
if [ ! -x "$RIP" ]; then
	have_rip=
	echo "demo.sh: $RIP is not built; only checking the ring file" >&2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rip-demo.XXXXXX") || die "cannot make a temporary directory"

heading "Starting $DEMO: $THREADS threads, $COROS coroutines" \
	"Most idle where a server idles; five things are stuck on purpose."

: >"$tmp/out"
"$DEMO" --threads "$THREADS" --coros "$COROS" >"$tmp/out" 2>"$tmp/err" &
pid=$!

start=$(date +%s)
while :; do
	line=$(sed -n 's/^ready //p' "$tmp/out")
	[ -n "$line" ] && break
	if ! kill -0 "$pid" 2>/dev/null; then
		wait "$pid"
		status=$?
		pid=
		cat "$tmp/err" >&2
		die "the demo exited (status $status) before it was ready"
	fi
	if [ $(($(date +%s) - start)) -ge "$TIMEOUT" ]; then
		cat "$tmp/err" >&2
		die "the demo was not ready after $TIMEOUT s (set DEMO_TIMEOUT to wait longer)"
	fi
	nap
done
ring=$line
cat "$tmp/err"
echo "pid $pid, ring file $ring ($(($(date +%s) - start)) s to start)"

rss=$(sed -n 's/^VmRSS:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)
[ -n "$rss" ] && echo "resident memory: $rss"

# Without the rip command: check that the file is a ring of the right size.
check_ring() {
	[ -f "$ring" ] || die "no ring file at $ring"
	magic=$(head -c 7 "$ring")
	[ "$magic" = RIPRING ] || die "$ring does not start with RIPRING"
	size=$(wc -c <"$ring" | tr -d ' ')
	hdr_size=$(od -An -t u8 -j 32 -N 8 "$ring" | tr -d ' ')
	slots=$(od -An -t u4 -j 52 -N 4 "$ring" | tr -d ' ')
	[ "$size" = "$hdr_size" ] || die "$ring is $size bytes, its header says $hdr_size"
	[ "$slots" = $((THREADS + COROS + 1000)) ] ||
		die "$ring has $slots slots, expected $((THREADS + COROS + 1000))"
	echo "ring file ok: $size bytes, $slots slots"
}

status=0

heading "1. rip ps $pid: where every thread and coroutine is, live" \
	"Groups are by function, biggest first: the idle workers (wait_for_work," \
	"read_socket_idle, timer_sleep_loop) and coroutines (await_request, await_db," \
	"await_upstream).  The bugs are the groups of one at the bottom:" \
	"stuck_reading_pipe, deadlock_a and deadlock_b, forgotten_coroutine and" \
	"busy_spin, each with its file:line in examples/demo.c."
if [ -n "$have_rip" ]; then
	"$RIP" ps "$pid" || status=1
else
	check_ring
fi

heading "2. rip ps --still=1s $pid: what did not move in one second" \
	"Still: stuck_reading_pipe, deadlock_a, deadlock_b, forgotten_coroutine" \
	"(the other $COROS coroutines are woken every half second), plus what idles" \
	"on purpose: the read_socket_idle keep-alive readers and main in main_wait." \
	"busy_spin moves all the time, but always at the same line."
if [ -n "$have_rip" ]; then
	"$RIP" ps --still=1s "$pid" || status=1
else
	check_ring
fi

kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
pid=

heading "3. kill -9, then rip ps $ring: post mortem" \
	"The process is gone; its ring file says where everything was when it died:" \
	"the same stuck functions at the same lines, read from the file alone."
if [ -n "$have_rip" ]; then
	"$RIP" ps "$ring" || status=1
else
	check_ring
fi

rm -f "$ring"
ring=
if [ "$status" -ne 0 ]; then
	echo "demo.sh: a rip ps step failed (see above)" >&2
fi
exit "$status"
