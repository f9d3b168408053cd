#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a recorder that is stopped (SIGSTOP) is not waited for past
# the bound.  rip run records recprog (2 threads, forever, 200,000 events a
# second each) in block mode; the test stops rip run for 6 s: the
# program's writers wait for it at most 3 s (its heartbeat stands still),
# then run on, dropping and counting: its count of events emitted grows
# while rip run is stopped; after SIGCONT and SIGTERM rip run's last line
# and rip dump's summary both count the events lost.
# Timeout: 60
. tests/data/common.sh
ev=$PWD/$BUILD/tests/integ/recprog
need_bin "$ev" "$RIP"
cd "$TEST_TMP" || die "no TEST_TMP"

t_bg "$RIP" run -o t -- "$ev" 1 --threads 2 --forever --rate 200000 --progress progress \
	>out 2>err
rp=$T_LAST
# the program, once its events flow into the trace
prog=
started() {
	prog=$(pgrep -P "$rp" -f recprog | head -n 1)
	[ -n "$prog" ] && [ -n "$(ls t/chunk-* 2>/dev/null)" ]
}
wait_until 20 started || die "the program did not start: $(cat err)"
kill -STOP "$rp"
# the stop: on purpose, longer than the 3 s bound
sleep 6
# the program must have gone on past the bound: it emitted in the last 2 s
e1=$(cat progress)
sleep 2
e2=$(cat progress)
[ "$e2" -gt "$e1" ] || fail "the program did not run on while rip run was stopped ($e1 -> $e2)"
kill -CONT "$rp"
sleep 1
kill -TERM "$prog"
wait "$rp"
grep -q 'thread 0 emitted' out || fail "the program did not say what it emitted: $(cat out err)"
tail -n 1 err | grep -Eq ', [1-9][0-9]* lost' || fail "rip run's last line counts no loss: $(tail -n 3 err)"
"$RIP" dump t >dump.out 2>dump.err || fail "rip dump: $(cat dump.err)"
tail -n 1 dump.out | grep -Eq '[1-9][0-9]* (events )?(discarded|lost)' ||
	fail "rip dump's summary counts no loss: $(tail -n 1 dump.out)"
t_done
