#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: ring files that outlive rip run.  (a) rip run --follow-fork
# of a program that starts a daemon (daemon_prog.c: fork, setsid, fork) and
# exits: rip run ends with the program and names the daemon's pid and the
# ring file it keeps for it; rip ls lists that pid alive, rip ps PID reads
# it, and once the daemon is killed rip ls lists it dead and rip gc removes
# it.  (b) rip run itself killed with SIGKILL while its program runs: the
# program's file stays in rip run's directory (RIP_DIR/rip-run.XXXXXX), and
# rip ls lists it there with its pid; rip gc keeps it while the program
# lives, and once it is killed removes the file and the directory (and the
# marks of --track's functions in it, which it left), and counts the
# directory apart from the ring files (it said "2 removed").
. tests/data/common.sh
daemon=$PWD/$BUILD/tests/integ/daemon_prog
waits=$PWD/$BUILD/tests/integ/waits_prog
need_bin "$daemon" "$waits" "$RIP"
cd "$TEST_TMP" || die "no $TEST_TMP"
RIP_DIR=$TEST_TMP/rings
mkdir -p "$RIP_DIR" || die "mkdir $RIP_DIR"

# (a) a daemon's double-forked child
"$RIP" run --follow-fork -o A -- "$daemon" "$TEST_TMP/ready" 2>run.err
rc=$?
[ "$rc" = 0 ] || fail "rip run of the daemon's parent: exit $rc: $(cat run.err)"
[ -s ready ] || die "the daemon did not start"
d=$(cat ready)
T_PIDS="$T_PIDS $d"
kill -0 "$d" 2>/dev/null || die "the daemon $d is not running"
grep -q "(pid $d) still runs: its ring file stays as $RIP_DIR/rip-$d-[0-9]*\.ring" run.err ||
	fail "rip run does not name the daemon's pid and file: $(cat run.err)"
expect_status 0 "rip ls (daemon alive)" "$RIP" ls
grep -q "^$d  *daemon_prog  *alive " "$TEST_TMP/out" || fail "rip ls: $d not alive: $(cat "$TEST_TMP/out")"
expect_status 0 "rip ps $d" "$RIP" ps "$d"
grep -q "daemon_prog (pid $d) alive" "$TEST_TMP/out" || fail "rip ps $d: $(head -n 2 "$TEST_TMP/out")"
t_kill "$d"
# (not our child: it is gone once init has reaped it)
gone() {
	"$RIP" ls >ls.out 2>&1 && grep -q "^$1  *$2  *dead " ls.out
}
wait_until 20 gone "$d" daemon_prog || fail "rip ls: $d not dead: $(cat ls.out)"
expect_status 0 "rip gc (daemon)" "$RIP" gc
grep -q "^removed .*rip-$d-.*(pid $d, daemon_prog)" "$TEST_TMP/out" || fail "rip gc: $(cat "$TEST_TMP/out")"

# (b) rip run killed: its directory and the program's file stay
rm -f ready
t_bg "$RIP" run -o B -- "$waits" "$TEST_TMP/ready" 3600
run=$T_LAST
wait_file ready 30 || die "the server did not start its threads in 30 s"
pid=$(cat ready)
T_PIDS="$T_PIDS $pid"
t_kill "$run"
listed() {
	"$RIP" ls >ls.out 2>&1 && grep -q "^$pid  *waits_prog  *$1 .*/rip-run\.[^/]*/rip-$pid-" ls.out
}
listed alive || fail "rip ls does not list $pid alive in rip run's directory: $(cat ls.out)"
expect_status 0 "rip gc (program alive)" "$RIP" gc
ls -d "$RIP_DIR"/rip-run.* >/dev/null 2>&1 || fail "rip gc removed rip run's directory of a live program"
t_kill "$pid"
wait_until 20 listed dead || fail "rip ls does not list $pid dead in rip run's directory: $(cat ls.out)"
# what rip run --track leaves there (the marks of the functions found: directories)
for d in "$RIP_DIR"/rip-run.*; do
	mkdir -p "$d/track/sqlite3_open" "$d/track/sqlite3_close" || die "mkdir $d/track"
done
expect_status 0 "rip gc (program dead)" "$RIP" gc
grep -q "^removed .*/rip-run\.[^/]*/rip-$pid-" "$TEST_TMP/out" || fail "rip gc: $(cat "$TEST_TMP/out")"
grep -q "^removed .*/rip-run\.[^/]* (a directory rip run left)" "$TEST_TMP/out" ||
	fail "rip gc does not remove rip run's directory: $(cat "$TEST_TMP/out")"
# the directory is not counted as a ring file (it said "2 removed")
grep -q "^1 removed, [0-9]* kept (alive or not ring files); 1 directory rip run left removed\$" \
	"$TEST_TMP/out" || fail "rip gc's summary: $(tail -n 1 "$TEST_TMP/out")"
left=$(ls -A "$RIP_DIR")
[ -z "$left" ] || fail "left in RIP_DIR after rip gc: $left"
t_done
