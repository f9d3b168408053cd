#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: post-mortem reading after SIGKILL.  1000 threads each park in
# a function of their own (park_0000 .. park_0999) and the process is killed
# with SIGKILL; `rip ps --threads --json` on the file it left must put every
# thread's last position in its own function: by address (runtime address
# from the helper plus the symbol size from nm) and by name.  The grouped and
# per-thread outputs are also run through the AddressSanitizer build of rip.
. tests/data/common.sh
prog=$BUILD/tests/integ/postmortem_prog
need_bin "$prog" "$RIP"
need_cmd python3
need_cmd nm # the function sizes
n=1000
ring=$TEST_TMP/postmortem.ring

t_bg "$prog" "$ring" "$TEST_TMP/addrs" "$TEST_TMP/ready" "$n"
pid=$T_LAST
wait_file "$TEST_TMP/ready" 40 || die "the helper did not park its $n threads in 40s"
# Live first: the file must already tell the same story.
"$RIP" ps --threads --json "$ring" >"$TEST_TMP/live.json" || fail "rip ps on the live file failed"
t_kill "$pid"
kill -0 "$pid" 2>/dev/null && die "the helper survived SIGKILL"

"$RIP" ps --threads --json "$ring" >"$TEST_TMP/dead.json" 2>"$TEST_TMP/dead.err" ||
	fail "rip ps --threads --json on the dead file: exit $?: $(head -n 3 "$TEST_TMP/dead.err")"
nm -S "$prog" | grep ' park_[0-9]' >"$TEST_TMP/nm" || die "nm found no park_ functions"

check() {
	python3 - "$1" "$TEST_TMP/addrs" "$TEST_TMP/nm" "$n" "${RIP_TEST_NOSYM:-0}" "$2" <<'PY'
import json, sys
doc, addrs, nmf = sys.argv[1], sys.argv[2], sys.argv[3]
n, nosym, alive = int(sys.argv[4]), sys.argv[5] == "1", sys.argv[6] == "alive"
size = {}
for line in open(nmf):
    f = line.split()
    size[f[3]] = int(f[1], 16)
rng = {}
for line in open(addrs):
    name, a = line.split()
    a = int(a, 16)
    rng[name] = (a, a + size[name])
d = json.load(open(doc))
bad = 0
seen = set()
def err(msg):
    global bad
    bad += 1
    if bad <= 10:
        print(doc + ": " + msg, file=sys.stderr)
if d["alive"] != alive:
    err("alive is %s" % d["alive"])
for s in d["slots"]:
    if not s["name"].startswith("park-"):
        continue
    i = int(s["name"][5:])
    fn = "park_%04d" % i
    seen.add(i)
    if s["kind"] != "thread" or s["state"] != "running":
        err("%s: kind %s state %s" % (s["name"], s["kind"], s["state"]))
    if s["snaps"] != 2 or len(s["path"]) != 2:
        err("%s: %d snaps, %d in path, want 2" % (s["name"], s["snaps"], len(s["path"])))
    if not s["path"]:
        continue
    last = s["path"][-1]
    a = int(last["address"], 16)
    lo, hi = rng[fn]
    if not lo <= a < hi:
        err("%s: last address %#x not in %s [%#x, %#x)" % (s["name"], a, fn, lo, hi))
    if not nosym and last["function"] != fn:
        err("%s: last function %r, want %s" % (s["name"], last["function"], fn))
    if not nosym and s["path"][0]["function"] != "start":
        err("%s: first function %r, want start" % (s["name"], s["path"][0]["function"]))
if len(seen) != n:
    err("%d park threads in the file, want %d" % (len(seen), n))
print("%s: %d threads checked, %d problems" % (doc, len(seen), bad))
sys.exit(1 if bad else 0)
PY
}
check "$TEST_TMP/live.json" alive || fail "live file: wrong positions"
check "$TEST_TMP/dead.json" dead || fail "dead file: wrong positions"

# The text outputs, under ASan and UBSan.
asan_run ps "$ring"
[ "$asan_rc" = 0 ] || fail "rip (asan) ps: exit $asan_rc"
grep -q 'dead (killed or crashed)' "$TEST_TMP/asan.out" ||
	fail "rip ps does not say the process died: $(head -n 1 "$TEST_TMP/asan.out")"
if [ "${RIP_TEST_NOSYM:-0}" != 1 ]; then
	# grouped: 1000 groups of one, one per park function
	c=$(grep -c ' park_[0-9][0-9][0-9][0-9] ' "$TEST_TMP/asan.out")
	[ "$c" = "$n" ] || fail "grouped output has $c park_ rows, want $n"
fi
asan_run ps --threads --all -v "$ring"
[ "$asan_rc" = 0 ] || fail "rip (asan) ps --threads: exit $asan_rc"
c=$(grep -c '^thread  *park-' "$TEST_TMP/asan.out")
[ "$c" = "$n" ] || fail "--threads output has $c park threads, want $n"
t_done
