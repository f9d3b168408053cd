#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: CPU samples survive a normal exit and are in the trace.
# topprog burn runs two threads that burn CPU in top_burn_here (called from
# top_burn_caller) under rip run --sample, then exits normally.  The trace
# must hold rip:sample events (rip dump, and babeltrace2 when installed, see
# as many); rip top --json T must put the samples in top_burn_here, as the
# group of most CPU; rip top on the trace's copy of the ring file (what the
# dead process's file says) must count the samples the exited threads left
# there; rip export --format=folded T must have the stack
# top_burn_caller;top_burn_here, and --format=pprof T a CPU profile with
# that stack (read by tests/data/pprof.py).  The AddressSanitizer build of
# rip reads the trace too.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/topprog
need_bin "$prog" "$RIP" "$RIP_ASAN"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON output"
PP="python3 $PWD/tests/data/pprof.py"
nosym=${RIP_TEST_NOSYM:-0}
cd "$TEST_TMP" || die "no $TEST_TMP"

"$RIP" run --sample=200 -o T -- "$prog" burn 400 >run.out 2>run.err
rc=$?
[ "$rc" = 0 ] || die "rip run --sample: exit $rc: $(cat run.err)"
grep -q '^burned$' run.out || die "the program did not finish: $(cat run.out)"
grep -q 'CPU samples of them' run.err || fail "rip run does not count the samples: $(cat run.err)"

"$RIP" dump T >dump.txt 2>dump.err || fail "rip dump T: $(cat dump.err)"
n=$(grep -c ' rip:sample ' dump.txt)
[ "$n" -gt 0 ] || die "no rip:sample event in the trace: $(cat run.err)"
if command -v babeltrace2 >/dev/null; then
	"$RIP" export --format=ctf T -o T.ctf 2>ex.err || fail "rip export --format=ctf: $(cat ex.err)"
	babeltrace2 T.ctf >bt.txt 2>bt.err || fail "babeltrace2 T: $(head -n 3 bt.err)"
	b=$(grep -c ' rip:sample: ' bt.txt)
	[ "$b" = "$n" ] || fail "babeltrace2 sees $b samples, rip dump $n"
fi

# rip top of the trace: every sample, in top_burn_here
"$RIP" top --json T >top.json 2>top.err || fail "rip top T: $(cat top.err)"
# rip top of the ring file the trace keeps: the samples the exited threads left
"$RIP" top --json T/.rip-ring >ring.json 2>top.err || fail "rip top T/.rip-ring: $(cat top.err)"
python3 - top.json ring.json "$n" "$nosym" <<'PY' || fail "rip top: wrong views"
import json, sys
n, nosym = int(sys.argv[3]), sys.argv[4] == "1"
bad = []
for f in sys.argv[1:3]:
    d = json.load(open(f))
    run = [g for g in d["groups"] if g["kind"] == "run" and g["samples"] > 0]
    if d["alive"] or not run:
        bad.append("%s: alive %s, run groups with samples %s" % (f, d["alive"], run))
        continue
    top = max(run, key=lambda g: g["cpu"])
    if not nosym and top["function"] != "top_burn_here":
        bad.append("%s: most CPU in %s, want top_burn_here: %s" % (f, top["function"], d["groups"]))
    if f == sys.argv[1] and (not d["trace"] or d["samples"] != n):
        bad.append("%s: trace %s, %s samples, want %d" % (f, d["trace"], d["samples"], n))
    if f == sys.argv[1] and not nosym and (top["threads"] != 2 or len(top["tids"]) != 2):
        bad.append("%s: %s threads in top_burn_here, want the 2 that burned" % (f, top["threads"]))
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

"$RIP" top T >top.txt 2>top.err || fail "rip top T: $(cat top.err)"
grep -q "^sampling: [0-9]* Hz, $n samples of 2 threads, " top.txt ||
	fail "rip top T: sampling line: $(sed -n 2p top.txt)"

# folded stacks and a pprof CPU profile of the samples
"$RIP" export --format=folded -o folded.txt T 2>exp.err || fail "export folded: $(cat exp.err)"
total=$(awk '{ s += $NF } END { print s + 0 }' folded.txt)
[ "$total" = "$n" ] || fail "folded: $total samples, the trace has $n"
[ "$nosym" = 1 ] || grep -q 'top_burn_caller;top_burn_here [0-9]' folded.txt ||
	fail "folded: no top_burn_caller;top_burn_here stack: $(cat folded.txt)"
"$RIP" export --format=pprof -o cpu.pb.gz T 2>exp.err || fail "export pprof: $(cat exp.err)"
$PP folded cpu.pb.gz samples >pprof.txt || fail "the pprof profile does not decode"
[ "$nosym" = 1 ] || grep -q 'top_burn_caller;top_burn_here [0-9]' pprof.txt ||
	fail "pprof: no top_burn_caller;top_burn_here stack: $(cat pprof.txt)"
$PP summary cpu.pb.gz >summary.json || fail "pprof summary"
grep -q '"cpu"' summary.json || fail "pprof: no cpu sample type: $(cat summary.json)"

asan_run top --json T
[ "$asan_rc" = 0 ] || fail "rip (asan) top T: exit $asan_rc"
asan_run export --format=folded -o - T
[ "$asan_rc" = 0 ] || fail "rip (asan) export folded T: exit $asan_rc"
t_done
