#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip ps after kill -9 of a program started with rip run.  A
# server that never calls librip (waits_prog.c: 17 threads parked in
# wrapped calls) runs under plain rip run -o T and is killed with SIGKILL
# once rip ps PID shows its threads waiting.  rip run must say the program
# was killed and name the ring file it keeps; then rip ps T (the trace's
# copy of the ring file) and rip ps PID (the file kept in RIP_DIR) both
# show the 17 threads and where they wait, dead; rip ls lists the kept file
# as dead, and rip gc removes it.  The trace's copy is also read by the
# AddressSanitizer build of rip.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/waits_prog
need_bin "$prog" "$RIP"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON output"
cd "$TEST_TMP" || die "no $TEST_TMP"

t_bg "$RIP" run -o T -- "$prog" "$TEST_TMP/ready" 3600 2>run.err
run=$T_LAST
wait_file ready 30 || die "the server did not start its threads in 30 s"
pid=$(cat ready)
T_PIDS="$T_PIDS $pid"
# its main thread sleeps, in and out of usleep, until w_nest's handler ran: then it joins
# for good (a kill in between found 16 waiting, once in a CI run)
wait_file ready.nest 30 || die "the server's nested handler did not run in 30 s"
waits17() {
	"$RIP" ps --json "$pid" >g.json 2>/dev/null &&
		python3 -c 'import json,sys; sys.exit(json.load(open("g.json"))["waiting"] < 17)'
}
wait_until 30 waits17 || die "rip ps never showed 17 waiting threads: $(head -c 300 g.json)"
kill -9 "$pid"
wait "$run"
rc=$?
[ "$rc" = 137 ] || fail "rip run: exit $rc, want 137 (the program's SIGKILL)"
kept=$(ls "$RIP_DIR"/rip-"$pid"-*.ring 2>/dev/null)
[ -n "$kept" ] || fail "no ring file of pid $pid kept in RIP_DIR: $(ls -R "$RIP_DIR")"
tail -n 1 run.err | grep -q "(pid $pid) was killed by signal 9.*rip ps $pid or rip ps T .*stays as $kept" ||
	fail "rip run's last line does not name the kept file: $(cat run.err)"
[ -f T/.rip-ring ] || fail "no copy of the ring file in the trace: $(ls -a T)"
[ "$(stat -c %a T/.rip-ring 2>/dev/null)" = 600 ] || fail "the trace's copy is not mode 0600"

# check JSON: every thread of the server, dead, waiting where it should
check() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
if d["alive"]:
    bad.append("alive")
want = {"w_epoll": "epoll_wait", "w_poll": "poll", "w_read": "read", "w_mutex": "mutex",
        "w_cond": "cond_wait", "w_sem": "sem_wait", "w_accept": "accept"}
seen = {}
for s in d["slots"]:
    if s["kind"] != "thread" or s["state"] != "running":
        continue
    w = s.get("wait")
    if w:
        seen[w["caller"]["function"]] = w["in"]
waiting = sum(1 for s in d["slots"] if s.get("wait"))
if waiting < 17:
    bad.append("%d threads waiting, want 17" % waiting)
for f, k in want.items():
    if seen.get(f) != k:
        bad.append("%s waits in %s, want %s" % (f, seen.get(f), k))
for b in bad:
    print(sys.argv[1] + ": " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}
"$RIP" ps --threads --json T >t.json 2>ps.err || fail "rip ps T: $(cat ps.err)"
[ "${RIP_TEST_NOSYM:-0}" = 1 ] || check t.json || fail "rip ps T: wrong threads"
"$RIP" ps --threads --json "$pid" >p.json 2>ps.err || fail "rip ps $pid: $(cat ps.err)"
[ "${RIP_TEST_NOSYM:-0}" = 1 ] || check p.json || fail "rip ps $pid: wrong threads"
asan_run ps T
[ "$asan_rc" = 0 ] || fail "rip (asan) ps T: exit $asan_rc"
grep -q 'dead (killed or crashed)' "$TEST_TMP/asan.out" ||
	fail "rip ps T does not say the process died: $(head -n 2 "$TEST_TMP/asan.out")"

expect_status 0 "rip ls" "$RIP" ls
grep -q "^$pid  *waits_prog  *dead " "$TEST_TMP/out" || fail "rip ls: $pid not dead: $(cat "$TEST_TMP/out")"
expect_status 0 "rip gc" "$RIP" gc
[ -e "$kept" ] && fail "rip gc left $kept"
[ -f T/.rip-ring ] || fail "rip gc removed the trace's copy"
t_done
