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
prog=$PWD/$BUILD/tests/integ/funcprog-nofp
need_bin "$prog" "$RIP"
need_cmd python3
rep=$PWD/tests/data/fn-report.py
cd "$TEST_TMP" || die "no TEST_TMP"
n=1000

"$RIP" run --functions -o t -- "$prog" stale $n >run.out 2>run.err || die "rip run: $(cat run.err)"
grep -q ", 0 lost\$" run.err || fail "rip run lost records: $(cat run.err)"
"$RIP" report --functions --json t >rep.json 2>rep.err || die "rip report: $(cat rep.err)"
python3 "$rep" <rep.json >rep.txt || die "not JSON: $(head -c 300 rep.json)"
cat >want.txt <<EOW
main 1 0
stale_run 1 0
stale_victim $n 0
entries $((n + 2))
exits $((n + 2))
no_entry 0
no_exit 0
running 0
ids_unknown 0
id0 0
EOW
diff want.txt rep.txt >rep.diff || fail "rip report --functions (want, got): $(cat rep.diff)"
t_done
