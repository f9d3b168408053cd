#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a process whose main thread left by pthread_exit while its
# other threads run on is alive.  The kernel then shows it as a zombie
# (its main thread's state) with empty /proc/PID/maps and exe, and rip took
# it for dead: rip ps PID said "dead", and rip run --follow-fork finished
# a child's trace there, so that what its worker did after (1,000 blocks
# made and freed, 10 left at leak_late) was not recorded, and the child was
# said "dead (killed or crashed)".  leader_exit.c forks such a child, whose
# worker waits for the file GO: meanwhile rip ps PID must show it alive with
# its worker; then the child's trace must hold every event, its summary
# line say no death, rip ps of its trace say it exited.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/leader_exit
need_bin "$prog" "$RIP" "$BUILD/librip-preload.so"
need_cmd python3
cd "$TEST_TMP" || die "no $TEST_TMP"

t_bg "$RIP" run --mem --follow-fork -o T -- "$prog" "$TEST_TMP/go" >run.out 2>run.err
run=$T_LAST
wait_file run.out 30 || die "the helper did not start: $(cat run.err)"
read -r pid <run.out
[ -n "$pid" ] || die "no pid: $(cat run.out)"
# its main thread gone: the process is a zombie by the kernel's word
n=0
until grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; do
	n=$((n + 1))
	[ "$n" -lt 300 ] || die "the child's main thread did not leave"
	sleep 0.02
done
"$RIP" ps "$pid" >ps.out 2>&1 || fail "rip ps $pid: $(cat ps.out)"
head -n 1 ps.out | grep -q "dead\|exited\|replaced" && fail "rip ps $pid calls it ended: $(head -n 2 ps.out)"
grep -q "worker" ps.out || fail "rip ps $pid does not show the worker: $(cat ps.out)"
# rip run looks at a child that says nothing every 100 ms: let it look
sleep 0.5
: >go
wait "$run" || fail "rip run: exit $?: $(cat run.err)"

line=$(grep "^rip run:   $pid " run.err) || fail "no summary line of the child: $(cat run.err)"
echo "$line" | grep -q "dead\|exec'd\|still running" && fail "the child's line: $line"
"$RIP" ps T/"$pid" >ps2.out 2>&1 || fail "rip ps T/$pid: $(cat ps2.out)"
head -n 1 ps2.out | grep -q "^leader_exit (pid $pid) exited" ||
	fail "rip ps T/$pid does not say it exited: $(head -n 1 ps2.out)"
"$RIP" report --json T/"$pid" >rep.json 2>&1 || fail "rip report T/$pid: $(cat rep.json)"
python3 - rep.json <<'PY' || fail "the child's events after its main thread left are not all there"
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
assert m["frees"] == 1000 and m["allocations"] >= 1010, m
PY
"$RIP" leaks T/"$pid" >leaks.out 2>&1 || fail "rip leaks T/$pid: $(cat leaks.out)"
grep -A1 "^1000 bytes in 10 blocks never freed" leaks.out | grep -q leak_late ||
	fail "rip leaks T/$pid: no 10 blocks at leak_late: $(cat leaks.out)"
t_done
