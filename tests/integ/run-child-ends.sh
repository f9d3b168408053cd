#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: how followed children end, as rip ps tells it.  Under rip run
# --follow-fork, child_ends.c forks child A, which calls _exit(3) (as a
# shell's subshell, a server's worker or a signal handler's quick exit do:
# no destructor runs), a vfork child that calls _exit(0) in its parent's
# memory, and child B, which waits until the test kills it with SIGKILL;
# then the parent kills itself.
#  - rip ps of A's trace must say it exited (it said "dead (killed or
#    crashed)": librip marks the exit in a destructor, which _exit skips),
#    and rip ps of the parent must still say it died (the vfork child's
#    _exit is not the parent's).
#  - rip ps of B's trace must say it died; neither child leaves its ring
#    file in RIP_DIR (a pool's workers, ended by their parent's SIGTERM,
#    would each leave one).
# rip ps T/ (a trailing slash) names the ring file T/.rip-ring, not T//.rip-ring.
# rip run's summary line on each child says which died (B), not A.
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
# B's own file first (made at its fork, maybe after READY)
wait_until 30 "$RIP" ps "$b" >/dev/null 2>&1 || die "rip ps $b never worked while it ran"
kill -9 "$b"
wait "$run"
rc=$?
[ "$rc" = 137 ] || fail "rip run: exit $rc, want 137 (the helper's SIGKILL): $(cat run.err)"

# A: exited by _exit; the parent: died
expect_status 0 "rip ps T/$a" "$RIP" ps "T/$a"
head -n 1 "$TEST_TMP/out" | grep -q "(pid $a) exited," ||
	fail "child $a called _exit(3), rip ps says: $(head -n 1 "$TEST_TMP/out")"
expect_status 0 "rip ps T" "$RIP" ps T
head -n 1 "$TEST_TMP/out" | grep -q "(pid $parent) dead (killed or crashed)," ||
	fail "the parent was killed (after its vfork child's _exit), rip ps says: $(head -n 1 "$TEST_TMP/out")"
# the directory given with a trailing slash: its ring file named as T/.rip-ring
expect_status 0 "rip ps T/" "$RIP" ps T/
head -n 1 "$TEST_TMP/out" | grep -q "ring T/.rip-ring$" ||
	fail "rip ps T/ names its ring file: $(head -n 1 "$TEST_TMP/out")"

# the summary: B's line says it died, A's (exited) says nothing of how it ended
grep -q "^rip run:   $b (.*): [0-9]* events, 0 lost; dead (killed or crashed)\$" run.err ||
	fail "rip run's line on child $b (killed): $(cat run.err)"
grep -q "^rip run:   $a (.*): [0-9]* events, 0 lost\$" run.err ||
	fail "rip run's line on child $a (exited): $(cat run.err)"

# B: killed; its trace says so, and no ring file of either child stays
expect_status 0 "rip ps T/$b" "$RIP" ps "T/$b"
head -n 1 "$TEST_TMP/out" | grep -q "(pid $b) dead (killed or crashed)," ||
	fail "rip ps T/$b: $(head -n 1 "$TEST_TMP/out")"
for c in "$a" "$b"; do
	ls "$RIP_DIR"/rip-"$c"-*.ring >/dev/null 2>&1 &&
		fail "child $c's ring file stayed in RIP_DIR: $(ls "$RIP_DIR")"
done
t_done
