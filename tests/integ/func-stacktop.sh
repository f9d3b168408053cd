#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: traced functions right under the top of a stack that the
# program switched to by hand (assembly, as libcoro's CORO_ASM backend or
# boost.context do: no makecontext for librip-preload.so to see), with an
# unmapped page just above it.  The hooks look for a function's return
# address by reading the words above their frame; past the return address
# they read no further than its page (or the caller's frame, when near):
# before, an entry there whose caller was on another stack, and the exit
# of a frame the hooks had popped, read on into the unmapped page and the
# program died of SIGSEGV (libcoro's CORO_ASM programs did, under rip run).
# fn_stacktop N under rip run --functions exits 0, and rip report counts
# its calls (st_top's exit comes without a frame: the hooks popped it when
# st_back was entered above it, on the stack it came from).
. tests/data/common.sh
. tests/data/fn-lib.sh
prog=$PWD/$BUILD/tests/integ/fn_stacktop
need_bin "$prog" "$RIP"
need_cmd python3
cd "$TEST_TMP" || die "no $TEST_TMP"
n=50

"$prog" 1
case $? in
0) ;;
77) skip "no hand-made stack switch on $(uname -m)" ;;
*) die "fn_stacktop fails on its own" ;;
esac
fn_record t -- "$prog" "$n"
"$RIP" report --functions --json t >t.json 2>t.rerr || die "rip report: $(cat t.rerr)"
python3 "$FN_REPORT" <t.json >t.txt || die "not JSON: $(head -c 300 t.json)"
for l in "main 1 0" "st_run $n 0" "st_top $n 0" "st_back $n 0" "st_leaf $((2 * n)) 0"; do
	grep -qx "$l" t.txt || fail "want $l: $(cat t.txt)"
done
t_done
