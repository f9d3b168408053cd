#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: followed children lose nothing, like the program itself, and
# rip run's summary accounts for each of them.  A shell runs two programs
# that allocate as fast as they can from their first instruction (2,000,000
# and 200,000 malloc + free pairs) under rip run --mem --follow-fork
# --follow-exec: each child trace holds exactly that many allocations and
# frees, and rip run prints "0 lost" for each child by pid.  The same for a
# forked child that allocates without exec (--follow-fork).  Then the same
# shell in overwrite mode with small rings must lose events, and rip run
# must say so for the children (a warning naming the incomplete traces).
# Before the fix, a program exec'd by a child of the shell overwrote its
# rings until rip run attached, and rip run printed nothing about it.
# Timeout: 300
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/burstprog
need_bin "$prog"
cd "$TEST_TMP" || exit 1

# child_allocs DIR: allocations and frees in the trace DIR, "A F"
child_allocs() {
	"$RIP" report --json "$1" >rep.json 2>rep.err || {
		echo "report-failed"
		return
	}
	a=$(sed -n 's/.*"memory":{"allocations":\([0-9]*\),.*/\1/p' rep.json)
	f=$(sed -n 's/.*"memory":{[^}]*"frees":\([0-9]*\),.*/\1/p' rep.json)
	echo "$a $f"
}

# 1. Two exec'd children of a shell: exact counts, 0 lost each.
"$RIP" run --mem --follow-fork --follow-exec -o t1 -- \
	sh -c "'$prog' 2000000; '$prog' 200000" >out 2>err
rc=$?
[ "$rc" = 0 ] || fail "rip run: exit $rc: $(cat err)"
n2m=0 n200k=0
for d in t1/[0-9]*; do
	[ -d "$d" ] || continue
	pid=${d#t1/}
	got=$(child_allocs "$d")
	case $got in
	"2000000 2000000") n2m=$((n2m + 1)) ;;
	"200000 200000") n200k=$((n200k + 1)) ;;
	*)
		# the shell's own forked children (if it forks before exec) allocate little
		comm=$(sed -n 's/.*"comm":"\([^"]*\)".*/\1/p' rep.json)
		[ "$comm" = burstprog ] && fail "child $pid: allocations and frees '$got', want 2000000 or 200000 of each"
		;;
	esac
	grep -q "^rip run:   ${pid%%.*}[.0-9]* (.*): [0-9]* events, 0 lost\(; exec'd .*\)\?\$" err ||
		fail "rip run's summary has no '0 lost' line for child $pid: $(cat err)"
done
[ "$n2m" = 1 ] && [ "$n200k" = 1 ] ||
	fail "want one child trace with 2000000 allocations and one with 200000, got $n2m and $n200k"
grep -q "child traces (children, new images) in t1/PID\[.N\]/: [0-9]* events, 0 lost\$" err ||
	fail "no total line for the child traces: $(cat err)"
grep -q "warning" err && fail "warnings in a lossless run: $(cat err)"

# 2. A forked child (no exec) of the traced program itself.
"$RIP" run --mem --follow-fork -o t2 -- "$prog" fork 1000000 >out 2>err
rc=$?
[ "$rc" = 0 ] || fail "rip run (fork): exit $rc: $(cat err)"
set -- t2/[0-9]*
[ $# = 1 ] && [ -d "$1" ] || fail "fork: want one child trace, got: $*"
got=$(child_allocs "$1")
[ "$got" = "1000000 1000000" ] || fail "forked child: allocations and frees '$got', want 1000000 each"
grep -q "^rip run:   ${1#t2/} (burstprog): [0-9]* events, 0 lost\$" err ||
	fail "fork: no '0 lost' line for child ${1#t2/}: $(cat err)"

# 3. Loss in children is said: overwrite mode, small rings.
"$RIP" run --mem --mode=overwrite --buffer=32k --follow-fork --follow-exec -o t3 -- \
	sh -c "'$prog' 2000000; '$prog' 200000" >out 2>err
rc=$?
[ "$rc" = 0 ] || fail "rip run (overwrite): exit $rc: $(cat err)"
grep -q "^rip run:   [0-9.]* (burstprog): [0-9]* events, [1-9][0-9]* lost\$" err ||
	fail "overwrite: no child line with its loss: $(cat err)"
grep -q "^rip run: warning: [0-9]* child traces* [a-z]* incomplete" err ||
	fail "overwrite: no warning about incomplete child traces: $(cat err)"
t_done
