#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip top --once and --json on a program run with rip run
# --sample: every thread of /proc is listed once and in exactly one group,
# the sampling status is in the file (100 Hz, a timer per thread), the
# spinning thread's group is top_spin_here (waited for: no sample is due in
# any given time of the clock, but some are once the spinner has used 2 s of
# CPU where CPU-time timers deliver signals at all); a copy of the ring file
# read after the process was killed gives the samples it left, and its own
# file, kept by rip run, says it was killed (it said "exited"); usage errors
# exit 2.
# Timeout: 180
. tests/data/common.sh
prog=$BUILD/tests/integ/topprog
need_bin "$prog" "$RIP"
need_cmd python3

expect_status 2 "no target" "$RIP" top
expect_status 2 "bad sort key" "$RIP" top --sort=size 1
expect_status 0 "--help" "$RIP" top --help
grep -q "usage: rip top" "$TEST_TMP/out" || fail "--help does not print the usage"

t_bg "$RIP" run -q --sample -o "$TEST_TMP/trace" -- "$prog" top "$TEST_TMP/ready"
rpid=$T_LAST
wait_file "$TEST_TMP/ready" 60 || die "the helper did not start its threads in 60s"
pid=$(cat "$TEST_TMP/ready")
# rip run does not take its program down when it is killed: the cleanup must.
T_PIDS="$T_PIDS $pid"

# The spinner shows, or has used 2 s of CPU (200 periods) and no sample is stored.
spins() {
	"$RIP" top --json -d 100ms "$pid" >"$TEST_TMP/top.json" 2>"$TEST_TMP/top.err" || return 1
	grep -q '"function":"top_spin_here"' "$TEST_TMP/top.json" ||
		{ grep -q '"sampling":{[^}]*"samples":0,' "$TEST_TMP/top.json" &&
			[ "$(cpu_seconds "$pid")" -ge 2 ]; }
}
wait_until 90 spins || die "top_spin_here never showed in 90 s:" \
	"$(cat "$TEST_TMP/top.err") $(head -c 400 "$TEST_TMP/top.json")"
# Without a sample, the checks below that need one (the spinning function) are replaced
# by the thread shown running, and the test skips: only where timers deliver no signal.
nosample=0
if ! grep -q '"function":"top_spin_here"' "$TEST_TMP/top.json"; then
	cpu_timers && die "no CPU sample stored in 2 s of the spinning thread's CPU time:" \
		"$(head -c 400 "$TEST_TMP/top.json")"
	nosample=1
fi
ring=$(grep -o '/[^ ]*\.ring$' "/proc/$pid/maps" | head -n 1)
[ -n "$ring" ] && cp "$ring" "$TEST_TMP/copy.ring" || fail "no ring file mapped by $pid"

python3 - "$TEST_TMP/top.json" "$pid" "$nosample" <<'PY' || fail "the JSON view is wrong"
import json, os, sys
d = json.load(open(sys.argv[1]))
pid = int(sys.argv[2])
nosample = sys.argv[3] == "1"
bad = []
tids = sorted(int(t) for t in os.listdir("/proc/%d/task" % pid))
got = sorted(t["tid"] for t in d["threads"])
if got != tids:
    bad.append("threads %s, /proc has %s" % (got, tids))
ingroups = sorted(t for g in d["groups"] for t in g["tids"])
if ingroups != got:
    bad.append("groups hold %s" % ingroups)
s = d["sampling"]
# every thread has a timer but the preload library's watcher (all its signals blocked)
watcher = [t for t in tids if open("/proc/%d/task/%d/comm" % (pid, t)).read().strip() == "rip-watch"]
if s["hz"] != 100 or s["timers"] != len(tids) - len(watcher) or s["timer_failures"] != 0:
    bad.append("sampling %s" % s)
spin = [g for g in d["groups"] if g["function"] == "top_spin_here"]
if nosample:
    if not [g for g in d["groups"] if g["kind"] == "run"]:
        bad.append("no run group without samples: %s" % d["groups"])
elif len(spin) != 1 or spin[0]["kind"] != "run" or not spin[0]["file"].endswith("topprog.c"):
    bad.append("spin group %s" % spin)
if not d["alive"] or d["pid"] != pid or d["interval_ns"] <= 0:
    bad.append("head %s" % {k: d[k] for k in ("alive", "pid", "interval_ns")})
for b in bad:
    print("json:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

expect_status 0 "--once" "$RIP" top --once -d 100ms "$pid"
grep -q "^rip top - pid $pid (topprog)" "$TEST_TMP/out" || fail "--once has no head line"
grep -q "sampling: 100 Hz" "$TEST_TMP/out" || fail "--once does not say the sampling rate"

kill -9 "$pid" 2>/dev/null
wait "$rpid" 2>/dev/null
kill -0 "$pid" 2>/dev/null && die "the helper survived SIGKILL"
# its file, kept where rip top PID finds it: killed, not exited (it said "exited")
expect_status 0 "--once on the killed one" "$RIP" top --once "$pid"
grep -q "^rip top - pid $pid (topprog) (dead, killed or crashed: its samples) - " "$TEST_TMP/out" ||
	fail "rip top of the killed program: $(head -n 1 "$TEST_TMP/out")"
expect_status 0 "--json on the dead copy" "$RIP" top --json "$TEST_TMP/copy.ring"
[ "$nosample" = 1 ] || python3 - "$TEST_TMP/out" <<'PY' || fail "the post-mortem view is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
spin = [g for g in d["groups"] if g["function"] == "top_spin_here"]
ok = not d["alive"] and len(spin) == 1 and spin[0]["samples"] > 0 and spin[0]["cpu"] > 0
if not ok:
    print("post-mortem:", d["alive"], spin, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
t_done
