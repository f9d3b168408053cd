#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a second rip record on a process whose recorder (rip run)
# is stopped (SIGSTOP, a Ctrl-Z) does not wait for it for ever: with the
# recorder's queue of connections full (those of recorders that gave up
# on it stay queued until it accepts them), connecting to it gives up as
# the wait for its answer does, after 5 s, and rip record -d 1s exits 1
# saying that the recorder did not answer, well within 20 s.  Continued,
# the recorder ends as usual.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/phaseprog
need_bin "$prog" "$RIP"
need_cmd python3
export RIP_DIR="$TEST_TMP/rings"
mkdir -p "$RIP_DIR" "$TEST_TMP/ctl"
cd "$TEST_TMP" || die "no TEST_TMP"

t_bg "$RIP" run -o prim -- "$prog" ctl 1 10 1 >prog.out 2>run.err
run=$T_LAST
wait_until 30 grep -q ready prog.out || die "phaseprog did not start: $(cat run.err)"
pid=$(ls "$RIP_DIR"/rip-run.*/ 2>/dev/null | sed -n 's/^rip-\([0-9]*\)-[0-9]*\.ring$/\1/p' | head -n 1)
[ -n "$pid" ] || die "no ring file of phaseprog under rip run"
sock=$(ls /run/user/"$(id -u)"/ring-*-"$run".sock /tmp/rip-rec-"$(id -u)"/ring-*-"$run".sock \
	2>/dev/null | head -n 1)
[ -n "$sock" ] || die "rip run (pid $run) listens for no second recorder"

kill -STOP "$run"
# recorders that gave up on it: their connections fill its queue
python3 - "$sock" <<'PY' || fail "the recorder's queue did not fill"
import socket, sys
for i in range(64):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(1)
    try:
        s.connect(sys.argv[1])
    except OSError:
        sys.exit(0 if i else 1)
    s.close()
sys.exit(1)
PY
t0=$(date +%s)
t_bg "$RIP" record -d 1s -o sub "$pid" 2>sub.err
sub=$T_LAST
if wait_until 20 sh -c "! kill -0 $sub 2>/dev/null"; then
	wait "$sub"
	rc=$?
	[ "$rc" = 1 ] || fail "rip record: exit $rc, want 1: $(cat sub.err)"
	grep -q "did not answer" sub.err || fail "rip record does not say why: $(cat sub.err)"
else
	fail "rip record -d 1s still waits for the stopped recorder after $(($(date +%s) - t0)) s"
	t_kill "$sub"
fi
kill -CONT "$run"
touch ctl/go.0
wait "$run" || fail "rip run: exit $?: $(cat run.err)"
t_done
