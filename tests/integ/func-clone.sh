#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a function gcc copies (fnclone: clone_cp, and
# clone_cp.constprop.0.isra.0 for its calls with a constant argument, each
# with patchable nops of its own).  The copy's debug information names
# the original: rip report --functions must name it by its symbol, a row
# of its own (N calls of clone_cp, 2N of the copy).  Globs match the whole
# name, alike at start (rip run --functions=GLOB, the symbol tables) and
# later (rip enable, rip's symbolizer): clone_cp picks the original alone,
# clone_cp* both.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/fnclone
rep=$PWD/tests/data/fn-report.py
need_bin "$prog" "$RIP"
need_cmd python3 nm
cd "$TEST_TMP" || die "no TEST_TMP"
n=500
copy=$(nm "$prog" | awk '$3 ~ /^clone_cp\./ { print $3; exit }')
[ -n "$copy" ] || skip "the compiler made no copy of clone_cp (gcc -fipa-cp-clone does)"

# rows TRACE: the "FUNCTION CALLS" rows of rip report --functions of TRACE, space-separated
rows() {
	"$RIP" report --functions --json "$1" >"$1.json" 2>"$1.rerr" || die "rip report: $(cat "$1.rerr")"
	python3 "$rep" <"$1.json" | awk '/^clone_cp/ { printf "%s%s %s", s, $1, $2; s = " " }'
}

# at start, by the symbol tables' names
"$RIP" run --functions='clone_cp*' -o t1 -- "$prog" $n >t1.out 2>t1.err || die "rip run: $(cat t1.err)"
got=$(rows t1)
[ "$got" = "clone_cp $n $copy $((2 * n))" ] || fail "--functions='clone_cp*': want clone_cp $n $copy $((2 * n)), got: $got"
"$RIP" run --functions=clone_cp -o t2 -- "$prog" $n >t2.out 2>t2.err || die "rip run: $(cat t2.err)"
got=$(rows t2)
[ "$got" = "clone_cp $n" ] || fail "--functions=clone_cp: want clone_cp $n, got: $got"

# later, by rip enable's names: the same
for g in 'clone_cp' 'clone_cp*'; do
	rm -f ready go
	"$RIP" run --functions -o t3 -- "$prog" $n "$TEST_TMP/ready" "$TEST_TMP/go" >t3.out 2>t3.err &
	run=$!
	T_PIDS="$T_PIDS $run"
	wait_file "$TEST_TMP/ready" 60 || die "fnclone never got ready: $(cat t3.err)"
	pid=$(ps -o pid= --ppid "$run" | tr -d ' ')
	"$RIP" enable --functions="$g" "$pid" func >en.out 2>en.err || fail "rip enable --functions=$g: $(cat en.err)"
	touch go
	wait "$run" || fail "rip run (enable $g): $(cat t3.err)"
	got=$(rows t3)
	want="clone_cp $n"
	[ "$g" = 'clone_cp*' ] && want="clone_cp $n $copy $((2 * n))"
	[ "$got" = "$want" ] || fail "rip enable --functions=$g: want $want, got: $got"
	rm -rf t3
done
t_done
