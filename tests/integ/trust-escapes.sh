#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: names a traced process chose never reach the terminal of
# whoever runs rip as bytes that drive it.  Root runs rip ps on any user's
# process; the names in its ring file (the process's, its threads') are
# that user's to choose, and escape sequences there would set the
# terminal's title, clear it, or on many terminals write the clipboard
# (OSC 52) with a command for root to paste.  trust_escprog names itself and
# its thread so (ESC, BEL, a C1 control in UTF-8): rip ps, rip ps -t and
# rip enable (which lists the categories under the process's name) must
# print none of those bytes, and rip ps -j none unescaped; nor rip run, which
# names the program by its name in /proc when that changed.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/trust_escprog
need_bin "$prog" "$RIP"

t_bg "$prog" >"$TEST_TMP/prog.out" 2>&1
pid=$T_LAST
wait_file "$TEST_TMP/prog.out" 30 || die "trust_escprog never got ready"

# clean WHAT FILE: FILE holds no ESC, BEL nor C1 control (c2 80..c2 9f)
clean() {
	od -An -tx1 -v "$2" | xargs -n1 >"$TEST_TMP/bytes"
	if grep -qx '1b\|07' "$TEST_TMP/bytes"; then
		fail "$1: a terminal control byte in its output: $(od -c "$2" | grep -m3 '033\|\\a')"
	elif grep -A1 -x 'c2' "$TEST_TMP/bytes" | grep -qx '[89][0-9a-f]'; then
		fail "$1: a C1 control in its output"
	fi
}

"$RIP" ps "$pid" >"$TEST_TMP/ps" 2>&1 || die "rip ps: $(cat "$TEST_TMP/ps")"
grep -q 'PWNED' "$TEST_TMP/ps" || die "rip ps does not show the thread's name: $(cat -v "$TEST_TMP/ps")"
clean "rip ps" "$TEST_TMP/ps"
"$RIP" ps -t "$pid" >"$TEST_TMP/ps-t" 2>&1 || die "rip ps -t: $(cat "$TEST_TMP/ps-t")"
clean "rip ps -t" "$TEST_TMP/ps-t"
"$RIP" ps -j "$pid" >"$TEST_TMP/ps-j" 2>&1 || die "rip ps -j: $(cat "$TEST_TMP/ps-j")"
clean "rip ps -j" "$TEST_TMP/ps-j"
"$RIP" enable "$pid" >"$TEST_TMP/enable" 2>&1 || die "rip enable: $(cat "$TEST_TMP/enable")"
clean "rip enable (the list)" "$TEST_TMP/enable"
t_kill "$pid"
# rip run names a program whose name changed (it looks exec'd): the name as /proc has it
timeout -s INT 3 "$RIP" run -o "$TEST_TMP/trace" -- "$prog" >/dev/null 2>"$TEST_TMP/run.err"
clean "rip run" "$TEST_TMP/run.err"
t_done
