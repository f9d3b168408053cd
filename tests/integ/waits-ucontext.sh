#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: ucontext coroutines get slots of their own under plain rip
# run: three contexts made with makecontext (co_a, co_b, co_c) each show
# as a coroutine whose first snap is its function; while co_b blocks in
# read, the thread runs co_b and waits in read called from co_b, and co_a
# and co_c are parked.
# Timeout: 60
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/waits_ucontext
need_bin "$prog" "$RIP"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"
need_cmd python3
cd "$TEST_TMP" || die "no $TEST_TMP"
t_bg "$RIP" run -q -o tr -- "$prog" "$TEST_TMP/ready"
wait_file ready 30 || die "the program did not start"
pid=$(cat ready)
inread() {
	"$RIP" ps --threads --json "$pid" >ps.json 2>/dev/null &&
		grep -q '"in":"read"' ps.json
}
wait_until 20 inread || fail "the thread never showed waiting in read: $(head -c 300 ps.json)"
python3 - ps.json "${RIP_TEST_NOSYM:-0}" <<'PY' || fail "rip ps: wrong coroutines"
import json, sys
d = json.load(open(sys.argv[1]))
nosym = sys.argv[2] == "1"
bad = []
co = {}
for s in d["slots"]:
    if s["kind"] == "coroutine":
        f = s["path"][0]["function"] if s["path"] else None
        co[f if not nosym else len(co)] = s
if len(co) != 3:
    bad.append("%d coroutines, want 3" % len(co))
th = [s for s in d["slots"] if s["kind"] == "thread" and s["state"] == "running"]
if len(th) != 1:
    bad.append("%d threads" % len(th))
elif not nosym:
    t = th[0]
    b = co.get("co_b")
    if not b or t.get("running_coroutine_slot") != b["slot"]:
        bad.append("the thread runs slot %r, co_b is %r" % (t.get("running_coroutine_slot"), b and b["slot"]))
    w = t.get("wait") or {}
    if w.get("in") != "read" or w.get("caller", {}).get("function") != "co_b":
        bad.append("thread wait %r" % w)
    for name, state in (("co_a", "waiting"), ("co_b", "running"), ("co_c", "waiting")):
        s = co.get(name)
        if not s or s["state"] != state:
            bad.append("%s: %r" % (name, s and s["state"]))
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
kill "$pid"
t_done
