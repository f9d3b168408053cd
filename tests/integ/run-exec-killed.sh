#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run --follow-exec of a program that exec's another,
# which a signal kills: the ring file kept for rip ps PID, and the trace
# rip run's last line names, are the killed image's, not the one it
# replaced.  sh exec's bash, which kills itself with SIGKILL: the line must
# name bash, DIR/PID.1 and the image's file, rip ps PID must show bash dead
# (it showed sh, "replaced by execve": erl exec's beam.smp, whose threads
# rip ps then never showed), and rip gc removes the file.  Without
# --follow-exec the line says that bash, which sh exec'd, was killed, and
# that rip ps shows sh before the exec (it said sh was killed).
. tests/data/common.sh
need_bin "$RIP"
need_cmd bash
cd "$TEST_TMP" || die "no $TEST_TMP"

"$RIP" run -o T --follow-exec -- sh -c 'exec bash -c "kill -9 \$\$"' >run.out 2>run.err
rc=$?
[ "$rc" = 137 ] || die "rip run: exit $rc, want 137 (SIGKILL): $(cat run.err)"
set -- T/*.1
[ -d "$1" ] || die "no trace of the new image: $(ls T; cat run.err)"
pid=${1#T/}
pid=${pid%.1}
line=$(tail -n 1 run.err)
set -- "$RIP_DIR"/rip-"$pid"-*.ring
[ -e "$1" ] || die "no ring file of pid $pid kept in RIP_DIR: $(ls "$RIP_DIR"; cat run.err)"
kept=$1
echo "$line" | grep -q "^rip run: bash (pid $pid) was killed by signal 9 .*rip ps $pid or rip ps T/$pid.1 .*stays as $kept " ||
	fail "rip run's last line does not name bash's trace and file: $line"
"$RIP" ps "$pid" >ps.out 2>&1 || fail "rip ps $pid: $(cat ps.out)"
head -n 1 ps.out | grep -q "^bash (pid $pid) dead" ||
	fail "rip ps $pid does not show bash dead: $(head -n 1 ps.out)"
"$RIP" ps T/"$pid".1 >ps1.out 2>&1 || fail "rip ps T/$pid.1: $(cat ps1.out)"
head -n 1 ps1.out | grep -q "^bash (pid $pid) dead" ||
	fail "rip ps T/$pid.1 does not show bash dead: $(head -n 1 ps1.out)"
"$RIP" gc >gc.out 2>&1 || fail "rip gc: $(cat gc.out)"
[ ! -e "$kept" ] || fail "rip gc left $kept"
ls -a "$RIP_DIR" | grep -q '^rip-run\.' && fail "rip run left its directory: $(ls -a "$RIP_DIR")"

"$RIP" run -o U -- sh -c 'exec bash -c "kill -9 \$\$"' >run2.out 2>run2.err
rc=$?
[ "$rc" = 137 ] || die "rip run, exec not followed: exit $rc, want 137: $(cat run2.err)"
line=$(tail -n 1 run2.err)
echo "$line" | grep -Eq "^rip run: (/[^ ]*/)?bash, which sh \(pid [0-9]+\) exec'd, was killed by signal 9 .*rip ps [0-9]+ or rip ps U shows sh before the exec" ||
	fail "exec not followed: the last line does not say bash was killed: $line"
"$RIP" gc >gc.out 2>&1 || fail "rip gc: $(cat gc.out)"
t_done
