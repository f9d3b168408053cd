#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip ps PID of a followed child killed while rip run goes on
# (a server's worker: apache's and varnish's children, killed with
# kill -9).  Under rip run --follow-fork, worker_dies.c forks a worker that
# the test kills; the server goes on until the test lets it exit.
#  - while the server runs, rip ps WORKER must show the worker's threads
#    from the copy of its ring file in its trace (it said "no ring file for
#    pid N (is it linked with librip and run with RIP_RING=1? ...)": the
#    file goes when the child's trace ends, and only the program's own is
#    kept in the ring directory when a signal kills it);
#  - rip ps of its trace says the same;
#  - once rip run ends, nothing of it stays in RIP_DIR (its note on the
#    dead worker goes with its directory), and rip run exits 0 as the
#    server did.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/worker_dies
need_bin "$prog" "$RIP"
cd "$TEST_TMP" || die "no $TEST_TMP"

t_bg "$RIP" run --follow-fork -o T -- "$prog" "$TEST_TMP/ready" "$TEST_TMP/go" 2>run.err
run=$T_LAST
wait_file ready 30 || die "the helper did not start its worker in 30 s: $(cat run.err)"
read -r parent w <ready || die "ready: $(cat ready)"
T_PIDS="$T_PIDS $w $parent"
[ -n "$w" ] || die "ready: $(cat ready)"
wait_until 30 "$RIP" ps "$w" >/dev/null 2>&1 || die "rip ps $w never worked while it ran"
kill -9 "$w"
# its trace ends once rip run sees it gone (it polls a silent child now and then)
wait_until 30 test -s "T/$w/.rip-ring" || die "no T/$w/.rip-ring 30 s after the kill"
wait_until 30 sh -c "\"$RIP\" ps $w >ps.out 2>ps.err" ||
	fail "rip ps $w of the killed worker, while the server runs: $(cat ps.err)"
head -n 1 ps.out | grep -q "^worker_dies (pid $w) dead (killed or crashed), ring /.*/T/$w/.rip-ring\$" ||
	fail "rip ps $w: $(head -n 1 ps.out)"
expect_status 0 "rip ps T/$w" "$RIP" ps "T/$w"
head -n 1 "$TEST_TMP/out" | grep -q "(pid $w) dead (killed or crashed)," ||
	fail "rip ps T/$w: $(head -n 1 "$TEST_TMP/out")"
kill -0 "$parent" 2>/dev/null || fail "the server ended before the test let it"

: >go
wait "$run"
rc=$?
[ "$rc" = 0 ] || fail "rip run: exit $rc, want 0 (the server's): $(cat run.err)"
left=$(ls -A "$RIP_DIR" | grep '^rip-')
[ -z "$left" ] || fail "rip run left in RIP_DIR: $left"
t_done
