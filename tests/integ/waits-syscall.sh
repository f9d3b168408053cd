#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a thread blocked in a system call made through syscall(2)
# (pause, here) is shown as waiting in it, with its caller: the syscall
# wrapper writes a wait record of kind syscall with the call's number.  It
# used to be left to the watcher, whose copy of the stack stopped at the
# preload library's own syscall wrapper (the frame found from a guessed
# frame pointer), never reaching the caller.  rip ps -t heads such a thread
# "blocked", not "running" (the slot's state, which a wait does not change).
. tests/data/common.sh
prog=$BUILD/tests/integ/trust_prog
need_bin "$prog" "$RIP"

t_bg "$RIP" run -q -o "$TEST_TMP/t" -- "$prog" syscall "$TEST_TMP/ready"
wait_file "$TEST_TMP/ready" 30 || die "trust_prog did not start"
pid=$(cat "$TEST_TMP/ready")
T_PIDS="$T_PIDS $pid"
parked() {
	"$RIP" ps "$pid" >"$TEST_TMP/ps.out" 2>&1 &&
		grep -Eq '^ +1 +syscall\(pause\) +park_deep +trust_prog\.c:[0-9]+' "$TEST_TMP/ps.out"
}
wait_until 20 parked || fail "the syscall(2) wait is not shown with its caller: $(cat "$TEST_TMP/ps.out")"
"$RIP" ps --json "$pid" >"$TEST_TMP/ps.json" 2>&1 || fail "rip ps --json failed"
grep -q '"in": *"syscall", *"arg": *34' "$TEST_TMP/ps.json" || grep -q '"in":"syscall","arg":34' \
	"$TEST_TMP/ps.json" || fail "--json: no syscall wait with pause's number: $(cat "$TEST_TMP/ps.json")"
"$RIP" ps -t "$pid" >"$TEST_TMP/pst.out" 2>&1 || fail "rip ps -t failed: $(cat "$TEST_TMP/pst.out")"
grep -B1 "waiting in syscall(pause)" "$TEST_TMP/pst.out" | grep -q "^thread .* tid [0-9]* *blocked (" ||
	fail "rip ps -t: the thread in pause is not said blocked: $(cat "$TEST_TMP/pst.out")"
t_done
