#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: stacks walked through patched functions (rip run
# --functions=GLOB, whose return addresses point at librip's exit
# trampoline) are the stacks of the program unpatched: fnbt-patch (by gcc,
# and by clang) patched and unpatched, both under rip run --mem.  The
# program's own backtrace(3) (whole, and cut to 3 frames) prints the same
# frames; the stack rip leaks gives its leaked block starts with the
# same frames (it may stop at a patched frame).  Before anything else the patched
# run must have traced the chain's calls (the check is not vacuous).
. tests/data/common.sh
need_cmd python3
rep=$PWD/tests/data/fn-report.py
cd "$TEST_TMP" || die "no TEST_TMP"

# leak T: the stack rip leaks gives T's block of 4321 bytes (its header, which has a time, less)
leak() {
	"$RIP" leaks "$1" | awk '/^4321 bytes/ { on = 1; next } on && NF == 0 { exit } on'
}

# prefix WANT GOT: GOT's lines are WANT's first ones, in blocks that each line starting
# without a blank begins ("backtrace depth N"): a walk that stopped early, never a wrong frame.
prefix() {
	python3 - "$1" "$2" <<'PY'
import sys
def blocks(p):
    b = []
    for l in open(p).read().splitlines():
        if not l.startswith(" ") or not b:
            b.append([])
        if l.startswith(" "):
            b[-1].append(l)
    return b
w, g = blocks(sys.argv[1]), blocks(sys.argv[2])
# the patched frame the walk stopped at: its return address is librip's exit trampoline
g = [b[:-1] if b and "librip" in b[-1] else b for b in g]
sys.exit(0 if len(w) == len(g) and all(x[:len(y)] == y for x, y in zip(w, g)) else 1)
PY
}

for v in gcc clang; do
	prog=$OLDPWD/$BUILD/tests/integ/fnbt-patch
	[ $v = clang ] && prog=$prog-clang
	need_bin "$prog" "$RIP"

	"$RIP" run --mem -o u.$v -- "$prog" >u.$v.out 2>u.$v.err || fail "$v: unpatched: $(cat u.$v.err)"
	"$RIP" run --mem --functions='fnbt_*' --functions=main -o p.$v -- "$prog" >p.$v.out \
		2>p.$v.err || fail "$v: patched: $(cat p.$v.err)"
	"$RIP" report --functions --json p.$v | python3 "$rep" >calls.$v || fail "$v: rip report"
	for f in fnbt_leaf fnbt_mid fnbt_top main; do
		grep -q "^$f 1 0$" calls.$v || fail "$v: $f not traced once: $(cat calls.$v)"
	done
	grep -q "^  .*fnbt_leaf" u.$v.out || fail "$v: no backtrace unpatched: $(cat u.$v.out)"
	cmp -s u.$v.out p.$v.out || fail "$v: backtrace(3) through patched frames (unpatched, patched):
$(cat u.$v.out)
--
$(cat p.$v.out)"

	leak u.$v >u.$v.leak || fail "$v: rip leaks (unpatched)"
	leak p.$v >p.$v.leak || fail "$v: rip leaks (patched)"
	grep -q fnbt_top u.$v.leak || fail "$v: no leak stack unpatched: $(cat u.$v.leak)"
	sed 's/^/ /' u.$v.leak >u.$v.leakb
	sed 's/^/ /; s/__rip_fn_pentry/librip/' p.$v.leak >p.$v.leakb
	prefix u.$v.leakb p.$v.leakb || fail "$v: the leak's stack through patched frames (unpatched, patched):
$(cat u.$v.leak)
--
$(cat p.$v.leak)"
done
t_done
