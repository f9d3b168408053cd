#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: plain `rip run -- PROG` gives every thread of a program that
# never calls librip a slot from its start: rip ps PID lists the main thread
# and each thread created with pthread_create, whose first snap is its start
# routine (idle_worker x3, self_namer, other_named), named by
# pthread_setname_np whether the thread named itself or was named by
# another; the thread that already exited is kept as exited.  --no-waits
# turns it off (no ring file then).
# Timeout: 60
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/slots_prog
need_bin "$prog" "$RIP"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"
need_cmd python3

cd "$TEST_TMP" || die "no $TEST_TMP"
t_bg "$RIP" run -q -o tr -- "$prog" "$TEST_TMP/ready"
run=$T_LAST
wait_file "$TEST_TMP/ready" 30 || die "the program did not start its threads in 30 s"
pid=$(cat ready)
"$RIP" ps --threads --all --json "$pid" >ps.json 2>ps.err || die "rip ps $pid: $(cat ps.err)"
python3 - ps.json "${RIP_TEST_NOSYM:-0}" <<'PY' || fail "rip ps --threads: wrong slots"
import json, sys
d = json.load(open(sys.argv[1]))
nosym = sys.argv[2] == "1"
live = [s for s in d["slots"] if s["state"] == "running" and s["kind"] == "thread"]
bad = []
if len(live) != 6:
    bad.append("%d live threads, want 6" % len(live))
start = {}
for s in live:
    f = s["path"][0]["function"] if s["path"] else None
    start.setdefault(f, []).append(s["name"])
if not nosym:
    if len(start.get("idle_worker", [])) != 3:
        bad.append("idle_worker threads: %r" % start.get("idle_worker"))
    if start.get("self_namer") != ["namer-self"]:
        bad.append("self_namer: %r" % start.get("self_namer"))
    if start.get("other_named") != ["named-by-main"]:
        bad.append("other_named: %r" % start.get("other_named"))
    if len(start.get(None, [])) != 1:
        bad.append("want one thread without a start snap (main): %r" % start.get(None))
    ex = [s for s in d["slots"] if s["state"] == "exited" and s["path"] and
          s["path"][0]["function"] == "short_lived"]
    if len(ex) != 1:
        bad.append("the exited short_lived thread: %d slots" % len(ex))
for b in bad:
    print(b, file=sys.stderr)
print(json.dumps(d["slots"])[:600] if bad else "ok")
sys.exit(1 if bad else 0)
PY
kill "$pid"
wait "$run"

# --no-waits: no preload library, so no ring file and nothing for rip ps.
rm -f ready
t_bg "$RIP" run -q --no-waits -o tr2 -- "$prog" "$TEST_TMP/ready"
wait_file "$TEST_TMP/ready" 30 || die "the program did not start under --no-waits"
pid=$(cat ready)
grep -q librip-preload "/proc/$pid/maps" && fail "--no-waits still preloads librip-preload.so"
kill "$pid"
t_done
