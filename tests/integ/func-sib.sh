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
. tests/data/fn-lib.sh
prog=$PWD/$BUILD/tests/integ/funcprog-sib
need_bin "$prog" "$RIP"
need_cmd python3
cd "$TEST_TMP" || die "no TEST_TMP"
n=1000

fn_record t --functions='sib_*' -- "$prog" sib $n
cat >want.txt <<EOW
sib_1 $n 0
sib_2 $n 0
sib_leaf $n 0
sib_run 1 0
EOW
fn_paired "$((3 * n + 1))" >>want.txt
fn_counts t
t_done
