#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a reader given the copy of the ring file that rip run keeps
# in its trace (T/.rip-ring, for rip ps and rip top) says that the events
# are in the trace.  The copy's rings were drained into the trace: rip
# leaks T/.rip-ring read 0 events and said nothing leaked, with no hint.
# It must warn and name T; rip leaks T must not.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/report_sites
need_bin "$prog" "$RIP"
cd "$TEST_TMP" || die "no $TEST_TMP"

"$RIP" run -q --mem -o T -- "$prog" 2>run.err || die "rip run: $(cat run.err)"
expect_status 0 "rip leaks T/.rip-ring" "$RIP" leaks T/.rip-ring
grep -q "^rip: warning: T/.rip-ring is the copy of its ring file .*; read T for them$" \
	"$TEST_TMP/err" || fail "rip leaks T/.rip-ring: no warning: $(cat "$TEST_TMP/err")"
expect_status 0 "rip leaks T" "$RIP" leaks T
grep -q "copy of its ring file" "$TEST_TMP/err" && fail "rip leaks T warns: $(cat "$TEST_TMP/err")"
t_done
