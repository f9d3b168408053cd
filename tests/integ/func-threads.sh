#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: 1,000 threads calling traced functions at once (funcprog
# many: each 4 N + 1 calls).  Under rip run --functions nothing is lost
# and rip report --functions counts every call.  In the flight recorder
# (RIP_RING, overwrite mode), the rings of the small-ring threads wrap:
# rip snapshot's records and those it says were overwritten add up to
# every record written, and the ring file takes no more tmpfs than the
# budget of 1,000 threads (a packet's worth each, plus their stacks).
. tests/data/common.sh
prog=$BUILD/tests/integ/funcprog
need_bin "$prog" "$RIP"
need_cmd python3
rep=$PWD/tests/data/fn-report.py
t=1000

# ---- streamed: every call ----
n=300
expect_status 0 "rip run --functions, $t threads" "$RIP" run --functions -o "$TEST_TMP/t" -- \
	"$prog" many $t $n
calls=$((t * (4 * n + 1) + 1)) # and main
grep -q "^calls $((t * (4 * n + 1)))\$" "$TEST_TMP/out" || fail "the program says: $(cat "$TEST_TMP/out")"
grep -q ", 0 lost\$" "$TEST_TMP/err" || fail "rip run lost records: $(cat "$TEST_TMP/err")"
"$RIP" report --functions --json "$TEST_TMP/t" | python3 "$rep" >"$TEST_TMP/rep.txt" ||
	die "rip report --functions failed"
grep -qx "many_thread $t 0" "$TEST_TMP/rep.txt" && grep -qx "spin_a $((t * n)) 0" "$TEST_TMP/rep.txt" &&
	grep -qx "spin_c $((2 * t * n)) 0" "$TEST_TMP/rep.txt" && grep -qx "entries $calls" "$TEST_TMP/rep.txt" &&
	grep -qx "exits $calls" "$TEST_TMP/rep.txt" || fail "counts of $t threads: $(cat "$TEST_TMP/rep.txt")"

# ---- the flight recorder: losses counted, tmpfs bounded ----
n=3000
rings=$TEST_TMP/rings
mkdir -p "$rings"
RIP_RING=$rings/ "$prog" many $t $n >"$TEST_TMP/fr.out" 2>"$TEST_TMP/fr.err" ||
	die "flight recorder: funcprog many failed: $(cat "$TEST_TMP/fr.err")"
ring=$(ls "$rings"/rip-*.ring | head -n 1)
[ -f "$ring" ] || die "flight recorder: no ring file"
kb=$(du -k "$ring" | cut -f1)
# 64 big rings of 256 KiB, 936 small ones of 16 KiB, the slots, stacks and tables: 48 MiB at most
[ "$kb" -le 49152 ] || fail "flight recorder: the ring file takes $kb KiB of tmpfs, more than 48 MiB"
echo "$t threads: the ring file takes $kb KiB of tmpfs"
expect_status 0 "rip snapshot" "$RIP" snapshot -o "$TEST_TMP/snap" "$ring"
summary=$(grep ' events, ' "$TEST_TMP/out" | head -n 1)
# records: 2 a call (main's too), and a rip:fn for each of the 5 functions
python3 - "$summary" $((t * (8 * n + 2) + 2 + 5)) <<'PY' || fail "flight recorder: records and losses do not add up: $summary"
import re, sys
m = re.search(r": (\d+) events, .*; (\d+) events lost", sys.argv[1])
assert m, sys.argv[1]
kept, lost, want = int(m.group(1)), int(m.group(2)), int(sys.argv[2])
assert kept + lost == want, (kept, lost, kept + lost, want)
assert lost > 0, "no ring wrapped: the test does not test overwriting"
PY
"$RIP" report --functions "$TEST_TMP/snap" >"$TEST_TMP/snaprep.txt" 2>&1 ||
	fail "rip report --functions of the snapshot: $(head -n 3 "$TEST_TMP/snaprep.txt")"
grep -q "^WARNING: this trace is incomplete: [1-9][0-9]* events discarded or overwritten" \
	"$TEST_TMP/snaprep.txt" || fail "the report does not say records were overwritten: $(head -n 3 "$TEST_TMP/snaprep.txt")"
t_done
