#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run's summary line of a followed child says how many CPU
# samples its trace holds and how many were lost, as the program's own
# lines do.  sh exec's topprog burn under rip run --sample --follow-exec:
# the new image's line names its samples and where rip top reads them, and
# the count is the one rip top finds in that trace (an Erlang VM, whose
# beam.smp erl exec's, had 1,015 samples and 42 lost that no line named).
# Timeout: 120
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/topprog
need_bin "$prog" "$RIP"
need_cmd python3
tr=$TEST_TMP/trace

"$RIP" run --sample --follow-exec -o "$tr" -- sh -c "exec '$prog' burn 300" >"$TEST_TMP/out" \
	2>"$TEST_TMP/err" || die "exit $?: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
grep -q burned "$TEST_TMP/out" || die "the program did not finish: $(cat "$TEST_TMP/out")"
set -- "$tr"/*.1
[ -d "$1" ] || die "no trace of the new image: $(ls "$tr"; cat "$TEST_TMP/err")"
sub=$1
line=$(grep "^rip run:   ${sub##*/} (topprog)" "$TEST_TMP/err") ||
	die "no line of the child: $(cat "$TEST_TMP/err")"
n=$(echo "$line" | sed -n "s|.*; \([0-9]*\) CPU samples (rip top $sub), [0-9]* lost.*|\1|p")
[ -n "$n" ] || die "the child's line names no samples: $line"
"$RIP" top --json "$sub" >"$TEST_TMP/top.json" || die "rip top $sub failed"
python3 - "$TEST_TMP/top.json" "$n" <<'PY' || fail "rip run and rip top count other samples"
import json, sys
s = json.load(open(sys.argv[1]))["sampling"]
ok = s["samples"] == int(sys.argv[2]) and s["samples"] > 0
if not ok:
    print("sampling:", s, "the summary:", sys.argv[2], file=sys.stderr)
sys.exit(0 if ok else 1)
PY
t_done
