#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: CPU sampling across vfork, posix_spawn and fork.  A program
# sampled at 100 Hz runs true through vfork + exec and posix_spawn, then
# forks a child that burns CPU without exec'ing: everything exits 0, the
# parent's file still counts one timer (its own thread's), and the child's
# own file (forks followed) says its timer was made again in the child
# (POSIX timers are not inherited); both files hold samples.
# Timeout: 120
. tests/data/common.sh
prog=$BUILD/tests/integ/topprog
need_bin "$prog" "$RIP"
need_cmd python3
dir=$TEST_TMP/rings
mkdir -p "$dir"

RIP_RING=$dir/ RIP_FOLLOW=fork RIP_DISABLE=1,2,3 RIP_SAMPLE=100 \
	LD_PRELOAD=$BUILD/librip-preload.so "$prog" fork >"$TEST_TMP/out" 2>"$TEST_TMP/err" &
ppid=$!
wait $ppid || fail "the program failed: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
child=$(sed -n 's/^child //p' "$TEST_TMP/out")
[ -n "$child" ] || die "no child pid: $(cat "$TEST_TMP/out")"

check() { # FILE WHAT
	"$RIP" top --json "$1" >"$TEST_TMP/top.json" || { fail "rip top $2 failed"; return; }
	python3 - "$TEST_TMP/top.json" "$2" <<'PY' || fail "$2: wrong sampling status"
import json, sys
s = json.load(open(sys.argv[1]))["sampling"]
ok = s["hz"] == 100 and s["timers"] == 1 and s["timer_failures"] == 0
if not ok:
    print(sys.argv[2], s, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
	samples_stored "$1" "$2"
}
set -- "$dir"/rip-"$ppid"-*.ring
[ -e "$1" ] && check "$1" parent || fail "no ring file of the parent"
set -- "$dir"/rip-"$child"-*.ring
[ -e "$1" ] && check "$1" child || fail "no ring file of the child $child: $(ls "$dir")"
t_done
