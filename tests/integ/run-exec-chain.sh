#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run --follow-fork --follow-exec of a child that exec's
# twice, the second image leaving at once (a shell script run through env:
# bash's subshell, env, bash).  rip run had finished the child's first file
# and removed it by the time the second exec came, so the last image made
# its file under the first one's name and never marked the middle image's
# exec'd: rip run said the middle image "dead (killed or crashed)", and rip
# ps DIR/PID.1 too (python3 through pyenv: 2 to 4 of its 79 children).
# A name that comes back now marks the image before it exec'd.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/exec_chain
need_bin "$prog" "$RIP" "$BUILD/librip-preload.so"
cd "$TEST_TMP" || die "no $TEST_TMP"

# ring files in tmpfs, as by default: there rip run finishes a file before the next exec
shm=$(mktemp -d /dev/shm/rip-test.XXXXXX 2>/dev/null) || shm=$TEST_TMP/d
mkdir -p "$shm"
RIP_DIR=$shm "$RIP" run --follow-fork --follow-exec -o T -- "$prog" >run.out 2>run.err
rc=$?
rm -rf "$shm"
[ "$rc" = 0 ] || die "rip run: exit $rc: $(cat run.err)"
pid=$(sed -n 's/^done \([0-9]*\)$/\1/p' run.out)
[ -n "$pid" ] || die "the helper did not finish: $(cat run.out run.err)"
for d in "$pid" "$pid.1" "$pid.2"; do
	[ -d "T/$d" ] || fail "no trace T/$d: $(ls T)"
done
grep -q "dead" run.err && fail "rip run calls an image dead: $(cat run.err)"
grep -q "^rip run:   $pid\\.1 .*; exec'd" run.err ||
	fail "rip run does not say the middle image exec'd: $(cat run.err)"
"$RIP" ps "T/$pid.1" >ps.out 2>&1 || fail "rip ps T/$pid.1: $(cat ps.out)"
head -n 1 ps.out | grep -q ") replaced by execve," ||
	fail "rip ps T/$pid.1: $(head -n 1 ps.out), want 'replaced by execve'"
"$RIP" ps "T/$pid.2" >ps2.out 2>&1 || fail "rip ps T/$pid.2: $(cat ps2.out)"
head -n 1 ps2.out | grep -q ") exited," || fail "rip ps T/$pid.2: $(head -n 1 ps2.out), want 'exited'"
t_done
