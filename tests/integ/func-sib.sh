#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: sibling calls through patched entries: sib_1 jumps to
# sib_2, which jumps to sib_leaf, so three patched entries share one frame
# and one return, which comes back through the trampoline once for each.
# The entry of sib_2 ends sib_1 (its frame is gone: its exit is written
# then), so the trampoline's return for sib_1 must not write it again.
# funcprog-sib sib N under rip run --functions=sib_* (patched at start,
# sib_run too):
# rip report --functions counts N calls of each and no exit without its
# entry.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/funcprog-sib
need_bin "$prog" "$RIP"
need_cmd python3
rep=$PWD/tests/data/fn-report.py
cd "$TEST_TMP" || die "no TEST_TMP"
n=1000

"$RIP" run --functions='sib_*' -o t -- "$prog" sib $n >run.out 2>run.err ||
	die "rip run (or the program's results): $(cat run.err)"
grep -q ", 0 lost\$" run.err || fail "rip run lost records: $(cat run.err)"
"$RIP" report --functions --json t >rep.json 2>rep.err || die "rip report: $(cat rep.err)"
python3 "$rep" <rep.json >rep.txt || die "not JSON: $(head -c 300 rep.json)"
cat >want.txt <<EOW
sib_1 $n 0
sib_2 $n 0
sib_leaf $n 0
sib_run 1 0
entries $((3 * n + 1))
exits $((3 * n + 1))
no_entry 0
no_exit 0
running 0
ids_unknown 0
id0 0
EOW
diff want.txt rep.txt >rep.diff || fail "rip report --functions (want, got): $(cat rep.diff)"
t_done
