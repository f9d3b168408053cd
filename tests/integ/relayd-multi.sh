#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: two producers with different --hostname land apart on one
# lttng-relayd and one babeltrace2 run over both copies merges them (as it
# merges the two local traces); and a live reader does not stall while one
# thread of three stays idle for 4 s: the other threads' last events are
# printed live while it still sleeps, and in the end the live output equals
# babeltrace2 on the local trace.  `rip record --relayd -o -` streams a
# running process to relayd alone.
# Timeout: 120
. tests/data/common.sh
. tests/data/relayd-lib.sh
relayd_need
prog=$BUILD/tests/integ/relaydprog
need_bin "$prog"
relayd_start rd

# Two hosts, one session name each, at the same time.
for h in hostb1 hostb2; do
	t_bg "$RIP" run -q --ctf --relayd="$RD_URL" --session=pair --hostname="$h" --live-timer=100ms \
		-o "$TEST_TMP/$h" -- "$prog" --events 700 --gap-us 200 >/dev/null 2>"$TEST_TMP/$h.err"
	eval "pid_$h=\$T_LAST"
done
for h in hostb1 hostb2; do
	eval "wait \$pid_$h" || { cat "$TEST_TMP/$h.err" >&2; fail "rip run --hostname=$h failed"; }
done
c1=$(relayd_copy hostb1 pair)
c2=$(relayd_copy hostb2 pair)
[ -n "$c1" ] && [ -n "$c2" ] || die "relayd has no copy for hostb1/pair or hostb2/pair"
[ "$c1" != "$c2" ] || fail "both hosts landed in $c1"
babeltrace2 "$c1" "$c2" >"$TEST_TMP/merged.copy" 2>/dev/null || fail "babeltrace2 on both copies failed"
babeltrace2 "$TEST_TMP/hostb1" "$TEST_TMP/hostb2" >"$TEST_TMP/merged.local" 2>/dev/null
n=$(grep -c 'relaydprog:tick' "$TEST_TMP/merged.copy")
[ "$n" = 4200 ] || fail "merged copies: $n events, want 4200"
cmp -s "$TEST_TMP/merged.copy" "$TEST_TMP/merged.local" || fail "the merged copies differ from the merged local traces"

# One thread idle for 4 s; the others emit 1500 events each over about 1 s.
go=$TEST_TMP/go
t_bg "$RIP" run -q --ctf --relayd="$RD_URL" --session=idle --hostname=hostc --live-timer=100ms \
	-o "$TEST_TMP/idle" -- "$prog" --go "$go" --events 1500 --gap-us 7000 --idle 4000 \
	>/dev/null 2>"$TEST_TMP/idle.err"
run_pid=$T_LAST
wait_until 30 session_listed hostc idle || die "relayd does not list hostc/idle"
t_bg sh -c "exec stdbuf -oL babeltrace2 'net://127.0.0.1:$RD_L/host/hostc/idle' \
	--params 'session-not-found-action=\"end\"' >'$TEST_TMP/live.txt' 2>'$TEST_TMP/live.err'"
LIVE_PID=$T_LAST
wait_until 30 sh -c "babeltrace2 query src.ctf.lttng-live sessions \
	-p 'url=\"net://127.0.0.1:$RD_L\"' 2>/dev/null | grep -B6 'host/hostc/idle' | \
	grep -q 'client-count: 1'" || die "the live reader did not attach"
touch "$go"
t0=$(date +%s)
# the last events of workers 1 and 2 (seq = thread << 32 | 1499) while worker 0 sleeps
wait_until 30 sh -c "grep -q 'seq = 4294968795,' '$TEST_TMP/live.txt' && \
	grep -q 'seq = 8589936091,' '$TEST_TMP/live.txt'" ||
	fail "the live reader never printed the busy threads' last events"
t1=$(date +%s)
grep -q 'seq = 1, thread = 0 ' "$TEST_TMP/live.txt" &&
	fail "worker 0 woke before the busy threads' events were printed ($((t1 - t0)) s): nothing proven"
wait "$run_pid" || { cat "$TEST_TMP/idle.err" >&2; fail "rip run (idle) failed"; }
live_wait 60 || fail "the live reader did not end with the session"
babeltrace2 "$TEST_TMP/idle" >"$TEST_TMP/idle.txt" 2>/dev/null
n=$(grep -c 'relaydprog:tick' "$TEST_TMP/idle.txt")
[ "$n" = 4500 ] || fail "idle run: $n events in the local trace, want 4500"
cmp -s "$TEST_TMP/live.txt" "$TEST_TMP/idle.txt" || fail "idle run: live output differs from the local trace"

# rip record --relayd -o -: a running process, to relayd only.
rm -f "$go"
t_bg env RIP_RING=1 RIP_MODE=block "$prog" --go "$go" --events 500 --gap-us 20000
prog_pid=$T_LAST
touch "$go" # its ring file comes with its first event
wait_until 20 sh -c "'$RIP' ps $prog_pid >/dev/null 2>&1" ||
	die "relaydprog made no ring file in $RIP_DIR"
t_bg "$RIP" record -q --ctf --relayd="$RD_URL" --session=rec --hostname=hostd --live-timer=100ms \
	-o - "$prog_pid" 2>"$TEST_TMP/rec.err"
rec_pid=$T_LAST
wait "$prog_pid"
wait "$rec_pid" || { cat "$TEST_TMP/rec.err" >&2; fail "rip record --relayd -o - failed"; }
c=$(relayd_copy hostd rec)
[ -n "$c" ] || die "no copy of hostd/rec"
n=$(babeltrace2 "$c" 2>/dev/null | grep -c 'relaydprog:tick')
[ "$n" = 1500 ] || fail "rip record --relayd: $n events on relayd, want 1500"
"$RIP" dump "$c" >/dev/null 2>"$TEST_TMP/dump.err" || fail "rip dump on the recorded copy: $(head -n 1 "$TEST_TMP/dump.err")"

relayd_stop
t_done
