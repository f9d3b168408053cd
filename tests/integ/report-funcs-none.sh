#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip report --functions on a trace without function calls
# says so.  rip run always preloads librip, so a trace of rip run --mem
# declares the function record types but holds no call: the report printed
# "0 calls of 0 functions" and an empty table, with no word of why, where
# rip export --value=time warns "no function calls".  It now notes that the
# trace has none and how to record them, as it does for a trace without the
# types.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/report_sites
need_bin "$prog" "$RIP"
cd "$TEST_TMP" || die "no $TEST_TMP"

"$RIP" run -q --mem -o T -- "$prog" 2>run.err || die "rip run: exit $?: $(cat run.err)"
expect_status 0 "rip report --functions T" "$RIP" report --functions T
grep -q "^note: no function" "$TEST_TMP/out" ||
	fail "rip report --functions of a trace without calls: no note: $(head -n 5 "$TEST_TMP/out")"
grep -q "rip run --functions" "$TEST_TMP/out" ||
	fail "rip report --functions: the note does not say how to record calls"
t_done
