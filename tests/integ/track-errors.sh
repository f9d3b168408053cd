#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: what rip run --track refuses and what it reports.  A bad
# spec (no '=', a bad kind, a bad or missing function name, an id that is
# not ret/N/*N, an argument out of range, a release by its return value, a
# missing releasing function, something left over, a kind given twice) is
# a usage error (exit 2) whose message quotes the spec and names the wrong
# part, and the program never runs.  A function that no object of the
# program defines is named at the end (exit status the program's), and the
# other function of the same spec, which libc defines, is not; the calls of
# the spec's found function are still traced.  A program the run does not
# follow (an exec'd image) loses librip-track.so from LD_AUDIT, as it loses
# librip's LD_PRELOAD entries; with --follow-fork --follow-exec it keeps it.
. tests/data/common.sh
prog=$BUILD/tests/integ/trackprog
need_bin "$prog" "$RIP" "$BUILD/librip-track.so"

# bad SPEC WORDS: rip run refuses SPEC with a message holding WORDS; PROG never ran
bad() {
	rm -f "$TEST_TMP/ran"
	expect_status 2 "--track='$1'" "$RIP" run -o "$TEST_TMP/bad" --track="$1" -- \
		touch "$TEST_TMP/ran"
	grep -qF -- "--track='$1': $2" "$TEST_TMP/err" ||
		fail "--track='$1': message lacks '$2': $(cat "$TEST_TMP/err")"
	[ ! -e "$TEST_TMP/ran" ] || fail "--track='$1': the program ran"
	[ ! -e "$TEST_TMP/bad" ] || fail "--track='$1': a trace was written"
}

bad 'regcomp(1),regfree(1)' "expected KIND=ACQUIRE(ID),RELEASE(ID) (no '=')"
bad 're gex=regcomp(1),regfree(1)' "kind 're gex': a kind's name is"
bad '=regcomp(1),regfree(1)' "the kind's name before '=' is missing"
bad 'regex=(1),regfree(1)' "the acquiring function's name is missing"
bad 'regex=2comp(1),regfree(1)' "'2comp' is not a function's name (the acquiring function)"
bad 'regex=regcomp,regfree(1)' "regcomp: expected '(ID)' after the name"
bad 'regex=regcomp(x),regfree(1)' "regcomp(x): the id is ret (the return value), N"
bad 'regex=regcomp(9),regfree(1)' "regcomp(9): argument 9: an id is one of arguments 1 to 6"
bad 'regex=regcomp(1),regfree(ret)' "regfree(ret): a release's id is one of its arguments"
bad 'regex=regcomp(1)' "after regcomp(...): expected ',' and the releasing function"
bad 'regex=regcomp(1),regfree(1)x' "after regfree(...): 'x' is left over"
bad 'regex=regcomp(1),regfree(1' "regfree(1: no ')' after the id"

# a kind given twice: the second --track is the one named
rm -f "$TEST_TMP/ran"
expect_status 2 "kind twice" "$RIP" run -o "$TEST_TMP/bad" --track='a=regcomp(1),regfree(1)' \
	--track='a=sqlite3_open(*2),sqlite3_close(1)' -- touch "$TEST_TMP/ran"
grep -qF -- "--track='a=sqlite3_open(*2),sqlite3_close(1)': kind a is given twice" \
	"$TEST_TMP/err" || fail "kind twice: $(cat "$TEST_TMP/err")"
[ ! -e "$TEST_TMP/ran" ] || fail "kind twice: the program ran"

# a function nobody defines: named at the end; the other one of its spec is not
expect_status 0 "missing function" "$RIP" run -o "$TEST_TMP/t" \
	--track='regex=regcomp(1),rip_no_such_regfree(1)' -- "$prog"
grep -q "warning: --track regex: rip_no_such_regfree was not found in any object" \
	"$TEST_TMP/err" || fail "missing function not reported: $(cat "$TEST_TMP/err")"
grep -q "regcomp was not found" "$TEST_TMP/err" && fail "regcomp reported missing"
grep -q "trackprog: done" "$TEST_TMP/out" || fail "trackprog did not run to its end"
# regcomp's calls were traced all the same: 6 acquisitions of kind regex, no release
"$RIP" dump "$TEST_TMP/t" >"$TEST_TMP/dump" 2>&1 || fail "rip dump: $(cat "$TEST_TMP/dump")"
n=$(grep -c ' res:acquire ' "$TEST_TMP/dump")
[ "$n" = 6 ] || fail "regcomp: $n acquisitions recorded, want 6"
grep -q ' res:release ' "$TEST_TMP/dump" && fail "a release was recorded"

# not followed: the shell's children start without the audit library
expect_status 0 "rip run --track of a shell" "$RIP" run -q -o "$TEST_TMP/sh" \
	--track='regex=regcomp(1),regfree(1)' -- \
	sh -c 'grep -c librip-track /proc/self/maps; echo "aud=$LD_AUDIT"'
[ "$(head -n 1 "$TEST_TMP/out")" = 0 ] ||
	fail "a child not followed maps librip-track.so: $(cat "$TEST_TMP/out")"
grep -qx "aud=" "$TEST_TMP/out" || fail "LD_AUDIT kept librip-track.so: $(cat "$TEST_TMP/out")"
expect_status 0 "rip run --track --follow-fork --follow-exec" "$RIP" run -q -o "$TEST_TMP/sh2" \
	--follow-fork --follow-exec --track='regex=regcomp(1),regfree(1)' -- \
	sh -c 'grep -c librip-track /proc/self/maps'
[ "$(head -n 1 "$TEST_TMP/out")" -gt 0 ] ||
	fail "with --follow-exec the child did not load librip-track.so: $(cat "$TEST_TMP/out")"

t_done
