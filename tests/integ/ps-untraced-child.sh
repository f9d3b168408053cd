#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip ps PID of a child that rip run does not trace says why.
# Under plain rip run (no --follow-fork), child_ends.c's child B runs
# with no ring file of its own, as a server's forked worker does; rip ps B
# must fail naming B's traced parent and rip run --follow-fork (it asked
# whether B was linked with librip and run with RIP_RING=1).
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/child_ends
need_bin "$prog" "$RIP"
cd "$TEST_TMP" || die "no $TEST_TMP"

t_bg "$RIP" run -o T -- "$prog" "$TEST_TMP/ready" 2>run.err
run=$T_LAST
wait_file ready 30 || die "the helper did not start its children in 30 s"
read -r parent _ b <ready || die "ready: $(cat ready)"
T_PIDS="$T_PIDS $b $parent"
[ -n "$b" ] || die "ready: $(cat ready)"
expect_status 1 "rip ps $b (an untraced child)" "$RIP" ps "$b"
grep -q "no ring file for pid $b: its parent $parent is traced .*rip run --follow-fork" \
	"$TEST_TMP/err" || fail "rip ps $b does not say why: $(cat "$TEST_TMP/err")"
kill -9 "$b"
wait "$run"
"$RIP" gc >/dev/null 2>&1
t_done
