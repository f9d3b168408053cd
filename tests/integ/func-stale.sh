#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: without frame pointers the hooks look for a function's
# return address above their own frame, and the function's locals, not
# yet set when its entry hook runs, may hold copies of it that an earlier
# call left (the exit hook runs in the frame a tail call to it left; a
# PLT's resolver, a signal frame may write there too).  funcprog-nofp
# stale N: an untraced function fills the stack where stale_victim's
# frame will be with its return address, then stale_victim runs (it
# leaves through a tail call to the exit hook), N times; rip report
# --functions counts N calls and no exit without its entry.
. tests/data/common.sh
. tests/data/fn-lib.sh
prog=$PWD/$BUILD/tests/integ/funcprog-nofp
need_bin "$prog" "$RIP"
need_cmd python3
cd "$TEST_TMP" || die "no TEST_TMP"
n=1000

fn_record t -- "$prog" stale $n
cat >want.txt <<EOW
main 1 0
stale_run 1 0
stale_victim $n 0
EOW
fn_paired "$((n + 2))" >>want.txt
fn_counts t
t_done
