#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the progress bar of the commands that read a whole trace.
# With RIP_PROGRESS=1, rip leaks and rip report draw "NAME: [...] N%  X of
# Y" on stderr and wipe it when the trace is read (the last thing written
# is the wipe, so what follows starts on a clean line); the report itself
# on stdout is the same as without the bar.  With RIP_PROGRESS=0, and by
# default when stderr is not a terminal, stderr carries no bar at all.
. tests/data/common.sh
prog=$BUILD/tests/integ/leakprog
need_bin "$prog" "$RIP"
need_cmd python3

ring=$("$prog" exit) || die "leakprog exit failed"
[ -s "$ring" ] || die "leakprog made no ring file ($ring)"
"$RIP" snapshot -o "$TEST_TMP/tr" "$ring" >/dev/null 2>"$TEST_TMP/snap.err" ||
	die "rip snapshot failed: $(cat "$TEST_TMP/snap.err")"
esc=$(printf '\033')

for cmd in leaks report; do
	RIP_PROGRESS=0 "$RIP" $cmd "$TEST_TMP/tr" >"$TEST_TMP/$cmd.plain" 2>"$TEST_TMP/$cmd.err0" ||
		fail "rip $cmd (RIP_PROGRESS=0) failed"
	grep -q "\[.*%" "$TEST_TMP/$cmd.err0" && fail "rip $cmd: a bar with RIP_PROGRESS=0"
	unset RIP_PROGRESS
	"$RIP" $cmd "$TEST_TMP/tr" >/dev/null 2>"$TEST_TMP/$cmd.errd" ||
		fail "rip $cmd failed"
	grep -q "$esc" "$TEST_TMP/$cmd.errd" && fail "rip $cmd: escapes on a stderr that is no terminal"

	RIP_PROGRESS=1 "$RIP" $cmd "$TEST_TMP/tr" >"$TEST_TMP/$cmd.bar" 2>"$TEST_TMP/$cmd.err1" ||
		fail "rip $cmd (RIP_PROGRESS=1) failed"
	cmp -s "$TEST_TMP/$cmd.plain" "$TEST_TMP/$cmd.bar" ||
		fail "rip $cmd: stdout differs with the bar"
	grep -q "rip $cmd: \[[# ]*\] *[0-9]*%  [0-9.]* MiB of [0-9.]* MiB" "$TEST_TMP/$cmd.err1" ||
		fail "rip $cmd: no bar with RIP_PROGRESS=1: $(cat -v "$TEST_TMP/$cmd.err1")"
	# the bar is wiped before anything else is written: "\r ESC[K" follows the last bar
	python3 - "$TEST_TMP/$cmd.err1" "$cmd" <<'EOF' || fail "rip $cmd: the bar is not wiped"
import sys
s = open(sys.argv[1], "rb").read()
last = s.rfind(b"rip " + sys.argv[2].encode() + b": [")
wipe = s.find(b"\r\x1b[K", last)
sys.exit(0 if last >= 0 and wipe > last else 1)
EOF
done
t_done
