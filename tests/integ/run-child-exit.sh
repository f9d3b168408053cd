#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a child that ends by _exit() has exited, not died.  Under rip
# run --follow-fork, child_ends.c forks child A, which calls _exit(3) (as a
# shell's subshell, a server's worker or a signal handler's quick exit do:
# no destructor runs), and a vfork child that calls _exit(0) in its
# parent's memory; the parent ends by SIGKILL.  rip ps of A's trace must
# say it exited (it said "dead (killed or crashed)": librip marks the exit
# in a destructor, which _exit skips), and rip ps of the parent must still
# say it died (the vfork child's _exit is not the parent's).
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/child_ends
need_bin "$prog" "$RIP"
cd "$TEST_TMP" || die "no $TEST_TMP"

t_bg "$RIP" run --follow-fork -o T -- "$prog" "$TEST_TMP/ready" 2>run.err
run=$T_LAST
wait_file ready 30 || die "the helper did not start its children in 30 s"
read -r parent a b <ready || die "ready: $(cat ready)"
T_PIDS="$T_PIDS $b $parent"
[ -n "$b" ] || die "ready: $(cat ready)"
kill -9 "$b"
wait "$run"
rc=$?
[ "$rc" = 137 ] || fail "rip run: exit $rc, want 137 (the helper's SIGKILL): $(cat run.err)"

expect_status 0 "rip ps T/$a" "$RIP" ps "T/$a"
head -n 1 "$TEST_TMP/out" | grep -q "(pid $a) exited," ||
	fail "child $a called _exit(3), rip ps says: $(head -n 1 "$TEST_TMP/out")"
expect_status 0 "rip ps T" "$RIP" ps T
head -n 1 "$TEST_TMP/out" | grep -q "(pid $parent) dead (killed or crashed)," ||
	fail "the parent was killed (after its vfork child's _exit), rip ps says: $(head -n 1 "$TEST_TMP/out")"
"$RIP" gc >/dev/null 2>&1
t_done
