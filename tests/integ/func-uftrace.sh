#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip report --functions agrees with uftrace report on the
# calls of every function of the same binary (funcprog count N, built with
# -finstrument-functions: uftrace's libmcount takes the hooks when it runs
# it).  uftrace is the peer of the benchmarks (mk/deps-bench.sh uftrace),
# not something make check installs: without it the test says so and skips.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/funcprog
need_bin "$prog" "$RIP"
need_cmd python3
command -v uftrace >/dev/null 2>&1 || skip "uftrace is not installed (sh mk/deps-bench.sh uftrace)"
rep=$PWD/tests/data/fn-report.py
cd "$TEST_TMP" || die "no TEST_TMP"
n=3000

"$RIP" run --functions -o t -- "$prog" count $n >/dev/null 2>run.err || die "rip run: $(cat run.err)"
"$RIP" report --functions --json t | python3 "$rep" | awk 'NF == 3 { print $1, $2 }' | sort >rip.txt
uftrace record -d u.data "$prog" count $n >/dev/null 2>u.err || die "uftrace record: $(cat u.err)"
# uftrace report: Total, Self (each a number and a unit), Calls, Function; its PLT calls left out
uftrace report -d u.data 2>u.err | awk 'NF >= 6 && $5 ~ /^[0-9]+$/ && $6 !~ /^(linux:|printf|strcmp|strtol|__)/ { print $6, $5 }' |
	sort >uftrace.txt
[ -s uftrace.txt ] || die "uftrace report said nothing: $(cat u.err)"
diff uftrace.txt rip.txt >diff.txt || fail "rip and uftrace count other calls (uftrace, rip): $(cat diff.txt)"
grep -qx "count_rec $((10 * n))" rip.txt || fail "count_rec: $(cat rip.txt)"
t_done
