#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a test server that never calls librip (waits_prog.c), run by
# plain `rip run`: rip ps PID shows each of its 17 threads waiting in the
# right call (epoll_wait, poll, select, nanosleep, sigtimedwait, accept and
# recv with SO_RCVTIMEO, a futex through syscall(), sem_timedwait, read,
# a mutex, a condition, sem_wait, pthread_join) with the right caller
# function and a line of waits_prog.c.  Five rip ps runs during the timed
# waits: none of them returns early or with EINTR.  A SIGUSR1 handler that
# calls write during w_nest's read leaves the read's record in place.  Then
# the same program killed with SIGKILL: rip ps on the file it left shows the
# same waits (and the AddressSanitizer build of rip reads it cleanly).
# Timeout: 120
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/waits_prog
need_bin "$prog" "$RIP"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"
need_cmd python3
preload=$PWD/$BUILD/librip-preload.so
cd "$TEST_TMP" || die "no $TEST_TMP"

# check JSON alive|dead: every w_* thread waits where it should.
check() {
	python3 - "$1" "$2" "${RIP_TEST_NOSYM:-0}" <<'PY'
import json, sys
want = {"w_epoll": "epoll_wait", "w_poll": "poll", "w_select": "select",
        "w_nanosleep": "sleep", "w_sigtimedwait": "signal", "w_accept": "accept",
        "w_recv": "recv", "w_futex": "futex", "w_semtimed": "sem_wait", "w_read": "read",
        "w_mutex": "mutex", "w_cond": "cond_wait", "w_sem": "sem_wait", "w_join": "join",
        "w_joined": "read", "w_nest": "read", None: "join"}
d = json.load(open(sys.argv[1]))
alive, nosym = sys.argv[2] == "alive", sys.argv[3] == "1"
bad, seen = [], set()
if d["alive"] != alive:
    bad.append("alive is %s" % d["alive"])
for s in d["slots"]:
    if s["kind"] != "thread" or s["state"] != "running":
        continue
    start = s["path"][0]["function"] if s["path"] else None
    if nosym and start is not None:
        start = "?"
    w = s.get("wait")
    if not w:
        bad.append("%s (tid %d): no wait" % (start, s["tid"]))
        continue
    seen.add(start)
    if nosym:
        continue
    if w["in"] != want.get(start):
        bad.append("%s: waits in %s, want %s" % (start, w["in"], want.get(start)))
    c = w["caller"]
    fn = start if start else "main"
    if c["function"] != fn or not (c["file"] or "").endswith("waits_prog.c") or c["line"] <= 0:
        bad.append("%s: caller %r" % (start, c))
    if alive and w.get("waited_ns", -1) < 0:
        bad.append("%s: no waited_ns" % start)
if not nosym and len(seen) != len(want):
    bad.append("threads seen waiting: %s" % sorted(map(str, seen)))
for b in bad[:20]:
    print(sys.argv[1] + ": " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

# 1. Live, under rip run: 8-second timed waits, rip ps five times meanwhile.
"$RIP" run -q -o tr -- "$prog" "$TEST_TMP/ready" 8 >srv.out 2>srv.err &
run=$!
T_PIDS="$T_PIDS $run"
wait_file ready 30 || die "the server did not start its threads in 30 s"
pid=$(cat ready)
wait_file ready.nest 30 || die "the server's SIGUSR1 handler did not run"
waits17() {
	"$RIP" ps --json "$pid" >g.json 2>/dev/null &&
		python3 -c 'import json,sys; sys.exit(json.load(open("g.json"))["waiting"] < 17)'
}
wait_until 20 waits17 || fail "rip ps never showed 17 waiting threads: $(head -c 300 g.json)"
for i in 1 2 3 4 5; do
	"$RIP" ps --threads --json "$pid" >live$i.json 2>ps.err || fail "rip ps $pid: $(cat ps.err)"
done
check live5.json alive || fail "live: wrong waits"
"$RIP" ps "$pid" >live.txt 2>&1 || fail "rip ps (text): $(cat live.txt)"
grep -q 'epoll_wait(fd [0-9]*) *w_epoll *waits_prog.c:[0-9]' live.txt ||
	[ "${RIP_TEST_NOSYM:-0}" = 1 ] || fail "rip ps text: no epoll_wait row: $(cat live.txt)"
wait "$run"
rc=$?
[ "$rc" = 0 ] || fail "rip run of the server: exit $rc: $(cat srv.err)"
grep -q '^done$' srv.out || fail "the server did not finish: $(cat srv.out srv.err)"
grep '^FAIL' srv.out >&2 && fail "waits ended early or with an error under rip ps"
[ "$(grep -c '^ok ' srv.out)" = 15 ] || fail "the server reported $(grep -c '^ok ' srv.out) ok, want 15"

# 2. Post-mortem: the same server, waits of an hour, killed with SIGKILL.
rm -f ready ready.nest
t_bg env RIP_RING="$TEST_TMP/dead.ring" LD_PRELOAD="$preload" "$prog" "$TEST_TMP/ready" 3600
srv=$T_LAST
wait_file ready.nest 30 || die "the second server did not start"
pid=$srv
wait_until 20 waits17 || fail "rip ps never showed 17 waiting threads (second run)"
t_kill "$srv"
"$RIP" ps --threads --json dead.ring >dead.json 2>ps.err || fail "rip ps on the dead file: $(cat ps.err)"
check dead.json dead || fail "post-mortem: wrong waits"
asan_run ps dead.ring
[ "$asan_rc" = 0 ] || fail "rip (asan) ps: exit $asan_rc"
grep -q 'when each wait began' "$TEST_TMP/asan.out" || fail "rip ps (dead): no waits table: $(cat "$TEST_TMP/asan.out")"
t_done
