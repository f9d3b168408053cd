#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip top in a terminal (tmux: new-session, send-keys,
# capture-pane).  A program run with rip run --sample has one thread
# spinning in top_spin_here() and others waiting: the screen must show the
# spinning function (waited for with a generous bound, since no sample is
# due in any given time of the clock; but some are once the spinner has used
# 2 s of CPU), the other threads by the waits the preload library records,
# refresh (the screen changes), re-sort on n, w and c, and quit on q with
# exit status 0.  Where CPU-time timers deliver no signal at all
# (cpu_timers), the spinning thread must still show as running, and the test
# skips.
# Timeout: 180
. tests/data/common.sh
prog=$BUILD/tests/integ/topprog
need_bin "$prog" "$RIP"
command -v tmux >/dev/null || skip "tmux is not installed"
sock=$TEST_TMP/tmux.sock
screen=$TEST_TMP/screen

t_bg "$RIP" run -q --sample -o "$TEST_TMP/trace" -- "$prog" top "$TEST_TMP/ready"
wait_file "$TEST_TMP/ready" 60 || die "the helper did not start its threads in 60s"
pid=$(cat "$TEST_TMP/ready")
# rip run does not take its program down when it is killed: the cleanup must.
T_PIDS="$T_PIDS $pid"

# The view in a 150x40 terminal; its exit status goes to a file.
tmux -S "$sock" -f /dev/null new-session -d -x 150 -y 40 \
	"'$RIP' top -d 200ms $pid; echo \$? >'$TEST_TMP/status'" ||
	die "tmux could not start a session"
tpid=$(tmux -S "$sock" display-message -p '#{pid}' 2>/dev/null)
[ -n "$tpid" ] && T_PIDS="$T_PIDS $tpid"

grab() {
	tmux -S "$sock" capture-pane -p >"$screen" 2>/dev/null
}
shows() {
	grab && grep -q -- "$1" "$screen"
}
samples_now() {
	grab && sed -n 's/.*sampling: [0-9]* Hz, [0-9]* timers, \([0-9]*\) samples.*/\1/p' "$screen"
}

# The spinning function shows, or the spinner has used 2 s of CPU (200 periods) and
# no sample is stored.
spins() {
	shows "run   top_spin_here" ||
		{ [ "$(samples_now)" = 0 ] && [ "$(cpu_seconds "$pid")" -ge 2 ]; }
}
wait_until 90 spins ||
	{ cat "$screen" >&2; die "the screen never showed top_spin_here in 90s"; }
if ! shows "run   top_spin_here"; then
	cpu_timers && { cat "$screen" >&2; die "no CPU sample stored in 2 s of the spinner's CPU"; }
	# no timer delivers a signal here: the spinning thread, from /proc, shows as running
	shows "run   " || { cat "$screen" >&2; fail "the spinning thread is not shown running"; }
fi
wait_until 30 shows "keys: c cpu" || fail "no key help line"

# The other threads: by what they wait in (the preload library's wrappers record it).
for w in "sleep in sleeper" "poll in poller" "epoll_wait in epoller" "cond_wait in condwaiter"; do
	wait_until 30 shows "wait  $w" || fail "the screen does not show '$w'"
done

# It refreshes: the screen changes (the waits' durations grow, the spinner's CPU
# moves; samples need not come).
[ -n "$(samples_now)" ] || fail "no sample count on the screen"
grab
cp "$screen" "$TEST_TMP/first"
moved() {
	grab && ! cmp -s "$screen" "$TEST_TMP/first"
}
wait_until 30 moved || fail "the screen did not refresh"

for k in n:count w:wait c:cpu; do
	tmux -S "$sock" send-keys "${k%%:*}"
	wait_until 30 shows "sort: ${k#*:}" || fail "key ${k%%:*} did not sort by ${k#*:}"
done

tmux -S "$sock" send-keys q
wait_file "$TEST_TMP/status" 30 || { grab; cat "$screen" >&2; die "rip top did not quit on q"; }
[ "$(cat "$TEST_TMP/status")" = 0 ] || fail "rip top exited with $(cat "$TEST_TMP/status")"
tmux -S "$sock" kill-server 2>/dev/null
t_done
