#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: pthread_cancel of threads blocked in wrapped calls (a C++
# thread in read inside try/catch(...) that rethrows, and one in
# pthread_cond_wait): under plain rip run both show their waits in rip ps,
# the forced unwind reaches the catch and goes on (both joins return
# PTHREAD_CANCELED), and afterwards their slots are exited with no wait
# record left: only the main thread still waits (in pause).
# Timeout: 90
. tests/data/common.sh
need_bin "$RIP"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"
need_cmd python3
CXX=${CXX:-c++}
command -v "$CXX" >/dev/null || die "no C++ compiler ($CXX): make check installs g++ (mk/deps.sh)"
cp tests/integ/waits_cancel.cc "$TEST_TMP/" || die "no tests/integ/waits_cancel.cc"
cd "$TEST_TMP" || die "no $TEST_TMP"
"$CXX" -O1 -g -pthread -o waits_cancel waits_cancel.cc || die "cannot build waits_cancel.cc"

"$RIP" run -q -o tr -- ./waits_cancel ready go "done" >out 2>err &
run=$!
T_PIDS="$T_PIDS $run"
wait_file ready 30 || die "the program did not start"
pid=$(cat ready)
both() {
	"$RIP" ps --threads --json "$pid" >before.json 2>/dev/null && python3 - before.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
w = {s["name"]: s.get("wait", {}).get("in") for s in d["slots"] if s["state"] == "running"}
sys.exit(0 if w.get("reader") == "read" and w.get("condw") == "cond_wait" else 1)
PY
}
wait_until 20 both || fail "rip ps did not show reader in read and condw in cond_wait: $(head -c 400 before.json)"
touch go
wait_file "done" 30 || die "the program did not finish cancelling: $(cat out err)"
grep -qx 'caught 1' out || fail "the catch(...) that rethrows did not run once: $(cat out)"
grep -qx 'canceled 2' out || fail "the joins did not both return PTHREAD_CANCELED: $(cat out)"
"$RIP" ps --threads --all --json "$pid" >after.json 2>ps.err || fail "rip ps: $(cat ps.err)"
python3 - after.json <<'PY' || fail "rip ps after the cancellations: wrong slots"
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
for s in d["slots"]:
    if s["name"] in ("reader", "condw"):
        if s["state"] != "exited" or "wait" in s:
            bad.append("%s: %s, wait %r" % (s["name"], s["state"], s.get("wait")))
live = [s for s in d["slots"] if s["state"] == "running"]
if len(live) != 1 or live[0].get("wait", {}).get("in") != "pause":
    bad.append("live threads: %r" % [(s["name"], s.get("wait")) for s in live])
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
kill "$pid"
wait "$run"
t_done
