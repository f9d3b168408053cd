#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip calltree --kind=NAME with a kind the trace does not
# declare is a usage error, as rip leaks --resource=NAME is.  A trace of
# rip run --mem (no --module) has no module kinds; rip calltree
# --kind=nokind printed an empty graph ("no unreleased allocations") and
# exited 0, so a mistyped kind read as "nothing leaked".  A kind the trace
# has still draws its graph (module-gobject.sh).
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/report_sites
need_bin "$prog" "$RIP"
cd "$TEST_TMP" || die "no $TEST_TMP"

"$RIP" run -q --mem -o T -- "$prog" 2>run.err || die "rip run: exit $?: $(cat run.err)"
expect_status 2 "rip calltree --kind=nokind T" "$RIP" calltree --kind=nokind T
grep -q "nokind" "$TEST_TMP/err" || fail "rip calltree --kind=nokind: no word of the kind: $(cat "$TEST_TMP/err")"
[ -s "$TEST_TMP/out" ] && fail "rip calltree --kind=nokind wrote a graph: $(head -n 3 "$TEST_TMP/out")"
# Heap memory is still drawn without --kind.
expect_status 0 "rip calltree T" "$RIP" calltree T
grep -q "digraph" "$TEST_TMP/out" || fail "rip calltree T: no graph"
t_done
