#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run --mem --off, then rip enable PID mem and rip disable
# PID mem from outside while the program runs (robust_toggle, driven
# phase by phase through a fifo; each phase allocates blocks of sizes of
# its own).  The listing shows mem off at start and on after enable, fd
# and shm staying off; allocations appear only for the phases run while
# mem was on, exactly (100 made and freed, 1 kept); rip leaks counts the
# frees of blocks made while off as releases never seen made.  Then two
# threads allocate (from before the first flip, while mem is on, to after
# the last) while mem is flipped 10 times: no crash, no hang, nothing
# lost, and after the last disable nothing more is recorded.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/robust_toggle
need_bin "$prog" "$RIP"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"
need_cmd python3
cd "$TEST_TMP" || die "no TEST_TMP"
mkfifo ctl || die "mkfifo failed"

"$RIP" run -q --mem --off -o t -- "$prog" <ctl >prog.out 2>err &
run=$!
T_PIDS="$T_PIDS $run"
exec 3>ctl
wait_file prog.out 60 || die "the program did not start: $(cat err)"
pid=$(sed -n "s/^pid //p" prog.out)
[ -n "$pid" ] || die "no pid: $(cat prog.out)"

# step CMD WANT: send CMD, wait for the line WANT
step() {
	[ -z "$1" ] || echo "$1" >&3
	wait_until 60 grep -qx "$2" prog.out ||
		die "no '$2' after '$1' (60 s): $(tail -n 3 prog.out err)"
}
# state CAT: on or off, from rip enable's listing
state() {
	"$RIP" enable "$pid" >list 2>list.err || fail "listing failed: $(cat list.err)"
	awk -v c="$1" '$3 == c { print $2 }' list
}

[ "$(state mem)" = off ] || fail "mem is not off at start: $(cat list)"
step 1 "phase 1 done"
expect_status 0 "rip enable PID mem" "$RIP" enable "$pid" mem
[ "$(state mem)" = on ] || fail "mem is not on after rip enable: $(cat list)"
[ "$(state fd)" = off ] || fail "fd turned on with mem: $(cat list)"
[ "$(state shm)" = off ] || fail "shm turned on with mem: $(cat list)"
step 2 "phase 2 done"
expect_status 0 "rip disable PID mem" "$RIP" disable "$pid" mem
[ "$(state mem)" = off ] || fail "mem is not off after rip disable: $(cat list)"
step 3 "phase 3 done"
expect_status 0 "rip enable PID mem (again)" "$RIP" enable "$pid" mem
step 4 "phase 4 done"

# flip mem while two threads allocate (they have, mem on, when "spinning"
# comes, and go on until "stop"); end with it off.  The pauses only space
# the flips out.
step spin spinning
for k in 1 2 3 4 5 6 7 8 9 10; do
	sleep 0.1
	"$RIP" disable -q "$pid" mem || fail "rip disable $k failed"
	sleep 0.02
	"$RIP" enable -q "$pid" mem || fail "rip enable $k failed"
done
"$RIP" disable -q "$pid" mem || fail "the last rip disable failed"
step stop "spin done"
step 5 "phase 5 done"
echo q >&3
exec 3>&-
ended() { ! kill -0 "$run" 2>/dev/null; }
wait_until 60 ended || die "rip run did not end after q"
wait "$run"
rc=$?
T_PIDS=""
[ "$rc" = 0 ] || fail "rip run: exit $rc: $(cat err)"
[ -f t/.rip-index ] || die "no trace"

# shellcheck disable=SC2094 # dump, the command, is not the file dump
"$RIP" dump t >dump 2>dump.err || die "rip dump failed: $(cat dump.err)"
tail -n 1 dump | grep -q ' 0 discarded/overwritten, 0 packets lost$' || fail "$(tail -n 1 dump)"
# allocs N SIZE PHASE
allocs() {
	got=$(grep -Ec " mem:alloc .*size=$2 bt=[1-9][0-9]* kind=malloc\$" dump)
	[ "$got" = "$1" ] || fail "$3: $got allocations of $2 bytes, want $1"
}
allocs 0 10001 "phase 1 (off)"
allocs 0 20001 "phase 1 (off)"
allocs 100 10002 "phase 2 (on)"
allocs 1 20002 "phase 2 (on)"
allocs 0 10003 "phase 3 (off again)"
allocs 0 20003 "phase 3 (off again)"
allocs 100 10004 "phase 4 (on again)"
allocs 1 20004 "phase 4 (on again)"
allocs 0 10005 "phase 5 (off after the flips)"
allocs 0 20005 "phase 5 (off after the flips)"
# phases 2 and 4 free each block they made
n=$(grep -c ' mem:free ' dump)
s=$(grep -Ec ' mem:alloc .*size=30000 ' dump)
echo "spin: $s blocks of 30000 bytes recorded"
[ "$s" -gt 0 ] || fail "spin: nothing recorded while mem was on"
[ "$n" -ge 200 ] || fail "only $n frees recorded"

expect_status 0 "rip leaks" "$RIP" leaks --json t
python3 - out <<'PY' || fail "rip leaks: wrong report"
import json, sys
r = json.load(open(sys.argv[1]))
fns = lambda g: [f["function"] for f in g["stack"] or []]
ph = sorted(g["bytes"] for g in r["leaks"] if "phase_leak" in fns(g))
# 20004 was freed while mem was off: live as far as the trace knows.  So
# was 20002, unless malloc gave its address to 20003 (made while off) whose
# free in phase 4 was seen: the trace cannot tell them apart.
assert ph in ([20004], [20002, 20004]), ph
assert not [g for g in r["leaks"] if g["count"] and
            10000 < g["bytes"] // g["count"] < 10006], r["leaks"]
# the free of 20001 (made while off) in phase 2
assert r["totals"]["mem"]["released_unseen"] >= 1, r["totals"]
assert r["complete"], r
PY
t_done
