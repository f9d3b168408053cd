#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: RIP_RING in the environment makes librip's constructor create
# the ring at start, with no code change: a helper that only snaps, run with
# RIP_RING=1 (the default directory, here RIP_DIR), RIP_RING=DIR/ and
# RIP_RING=FILE, leaves a file of mode 0600 that `rip ps` reads (its snaps
# in snapper_work); RIP_RING=0 or unset makes no file.  Then programs we did
# not write: python3 with threads and bash, with LD_PRELOAD=librip.so and
# RIP_RING=1, each leave a ring file that rip ps and rip ls read, live too.
. tests/data/common.sh
prog=$BUILD/tests/integ/snapper
need_bin "$prog" "$RIP"
need_cmd python3
export RIP_DIR="$TEST_TMP/rings"
mkdir -p "$RIP_DIR"

count() { find "$1" -maxdepth 1 -type f | wc -l; }

RIP_RING='' "$prog" || fail "snapper without RIP_RING failed"
RIP_RING=0 "$prog" || fail "snapper with RIP_RING=0 failed"
[ "$(count "$RIP_DIR")" = 0 ] || fail "a ring file without RIP_RING: $(ls "$RIP_DIR")"

check_file() { # FILE WHAT
	[ -f "$1" ] || { fail "$2: no file $1"; return; }
	mode=$(stat -c %a "$1")
	[ "$mode" = 600 ] || fail "$2: mode $mode, want 600"
	expect_status 0 "$2: rip ps" "$RIP" ps --threads "$1"
	grep -q 'snapper_work .* x5  <- now' "$TEST_TMP/out" ||
		fail "$2: rip ps does not show 5 snaps in snapper_work: $(cat "$TEST_TMP/out")"
	grep -q '^snapper (pid [0-9]*) exited' "$TEST_TMP/out" || fail "$2: not shown exited"
}

RIP_RING=1 "$prog" || fail "snapper with RIP_RING=1 failed"
[ "$(count "$RIP_DIR")" = 1 ] || fail "RIP_RING=1: want one file in RIP_DIR: $(ls "$RIP_DIR")"
check_file "$(find "$RIP_DIR" -name 'rip-*.ring' | head -n 1)" "RIP_RING=1"
mkdir -p "$TEST_TMP/other"
RIP_RING=$TEST_TMP/other/ "$prog" || fail "snapper with RIP_RING=DIR/ failed"
[ "$(count "$TEST_TMP/other")" = 1 ] || fail "RIP_RING=DIR/: want one file in DIR"
check_file "$(find "$TEST_TMP/other" -name 'rip-*.ring' | head -n 1)" "RIP_RING=DIR/"
RIP_RING=$TEST_TMP/exact.ring "$prog" || fail "snapper with RIP_RING=FILE failed"
check_file "$TEST_TMP/exact.ring" "RIP_RING=FILE"
# RIP_RING=FILE that exists already: the program runs anyway, the file is left alone
echo keep >"$TEST_TMP/taken.ring"
RIP_RING=$TEST_TMP/taken.ring "$prog" || fail "snapper with an existing RIP_RING=FILE failed"
[ "$(cat "$TEST_TMP/taken.ring")" = keep ] || fail "an existing RIP_RING=FILE was overwritten"

# Programs we did not write, through LD_PRELOAD.
lib=$PWD/$BUILD/librip.so
[ -f "$lib" ] || die "$lib is missing"
rm -f "$RIP_DIR"/*
# the real interpreter, not a wrapper script (pyenv) that would exec through bash first
pyexe=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
pyexe=$(readlink -f "$pyexe" 2>/dev/null)
[ -x "$pyexe" ] || die "python3 runs no interpreter of its own: '$pyexe'"
pycomm=$(basename "$pyexe" | cut -c 1-15)
t_bg env LD_PRELOAD="$lib" RIP_RING=1 "$pyexe" -c '
import sys, threading
ev = threading.Event()
ts = [threading.Thread(target=ev.wait) for _ in range(4)]
for t in ts: t.start()
open(sys.argv[1], "w").write("ready\n")
ev.wait()  # until killed: alive for as long as the checks take
' "$TEST_TMP/py-ready"
py=$T_LAST
wait_file "$TEST_TMP/py-ready" 60 || fail "python3 with librip preloaded did not start"
expect_status 0 "rip ps PID (python3, live)" "$RIP" ps "$py"
grep -q "^$pycomm (pid $py) alive" "$TEST_TMP/out" ||
	fail "rip ps on python3: $(head -n 2 "$TEST_TMP/out") $(cat "$TEST_TMP/err")"
expect_status 0 "rip ls (python3)" "$RIP" ls
grep -q "^$py  *$pycomm  *alive" "$TEST_TMP/out" || fail "rip ls: python3 not alive"
t_kill "$py"
f=$(ls "$RIP_DIR"/rip-"$py"-*.ring 2>/dev/null)
[ "$(echo "$f" | wc -w)" = 1 ] || fail "want one ring file for python3 (pid $py): $f"
[ -n "$f" ] && expect_status 0 "rip ps FILE (python3, dead)" "$RIP" ps "$f"
grep -q "dead (killed or crashed)" "$TEST_TMP/out" || fail "python3: not dead after kill"
export RIP_DIR="$TEST_TMP/bash"
mkdir -p "$RIP_DIR"
LD_PRELOAD=$lib RIP_RING=1 bash -c 'echo $$ >"$1"; exit 0' bash "$TEST_TMP/bash.pid" ||
	fail "bash with librip preloaded failed"
bpid=$(cat "$TEST_TMP/bash.pid")
f=$(ls "$RIP_DIR"/rip-"$bpid"-*.ring 2>/dev/null)
[ "$(echo "$f" | wc -w)" = 1 ] || fail "want one ring file for bash (pid $bpid): $f"
[ -n "$f" ] && expect_status 0 "rip ps FILE (bash)" "$RIP" ps "$f"
grep -q "^bash (pid $bpid) exited" "$TEST_TMP/out" ||
	fail "rip ps on bash: $(head -n 1 "$TEST_TMP/out")"
t_done
