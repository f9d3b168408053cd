#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a fork after thousands of threads have come and gone
# (fork_churn 3000: each snapped and wrote an event).  The child copied
# every slot ever used and, followed, every event ring ever taken: after
# 20,000 threads a fork cost 711 ms under rip run --mem --follow-fork, and
# 416 ms untraced after 100,000.  Only what the child can still use goes
# with it now.  (a) Followed: the child's ring file holds none of the
# slots and rings of the parent's gone threads (it had 3,000 of each,
# tens of MB: now under 8 MB allocated, and "0 exited kept"); its new
# threads take the slots the parent freed, and rip ps shows the 4 of them
# parked in kid_park.  (b) Not followed: the private copy the child keeps
# in place of the parent's file holds the slots in use only (it held
# 3,000 slots, 1.5 MB; now under 512 kB resident).
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/fork_churn
need_bin "$prog" "$RIP"
cd "$TEST_TMP" || die "no $TEST_TMP"

# parked PID: rip ps PID shows the child's 4 threads in kid_park
parked() {
	"$RIP" ps "$1" >ps.out 2>&1 && grep -Eq '^ +4 +read.* kid_park ' ps.out
}

# (a) followed
t_bg "$RIP" run --mem --follow-fork -o T -- "$prog" 3000 >ready 2>run.err
run=$T_LAST
wait_file ready 120 || die "fork_churn did not fork in 120 s: $(cat run.err)"
read -r parent c <ready || die "ready: $(cat ready)"
T_PIDS="$T_PIDS $c $parent"
wait_until 30 parked "$c" || fail "rip ps $c: not 4 threads in kid_park: $(cat ps.out)"
grep -q ", 0 exited kept for history" ps.out || fail "rip ps $c: the parent's gone threads: $(cat ps.out)"
f=$(find "$RIP_DIR" -name "rip-$c-*.ring" | head -n 1)
pf=$(find "$RIP_DIR" -name "rip-$parent-*.ring" | head -n 1)
[ -n "$f" ] && [ -n "$pf" ] || die "no ring files of $parent and $c in $RIP_DIR"
kb=$(($(stat -c '%b * %B' "$f") / 1024))
pkb=$(($(stat -c '%b * %B' "$pf") / 1024))
[ "$kb" -lt 8192 ] || fail "the child's ring file: $kb kB allocated (the parent's: $pkb kB)"
kill -9 "$c"
wait "$run"
rc=$?
[ "$rc" = 0 ] || fail "rip run: exit $rc, want 0: $(cat run.err)"
grep -q "^rip run:   $c (fork_churn): .* 0 lost" run.err || fail "rip run, the child: $(cat run.err)"

# (b) not followed
t_bg "$RIP" run --mem -o T2 -- "$prog" 3000 >ready2 2>run2.err
run=$T_LAST
wait_file ready2 120 || die "fork_churn did not fork in 120 s: $(cat run2.err)"
read -r parent c <ready2 || die "ready2: $(cat ready2)"
T_PIDS="$T_PIDS $c $parent"
pf=$(find "$RIP_DIR" -name "rip-$parent-*.ring" | head -n 1)
[ -n "$pf" ] || die "no ring file of $parent in $RIP_DIR"
start=$(grep -F "$pf" "/proc/$parent/maps" | head -n 1 | cut -d- -f1)
[ -n "$start" ] || die "$pf is not mapped in $parent"
# the child's mapping at that address, its resident kB
rss=$(awk -v a="$start" '$1 ~ "^" a "-" { on = 1; next } /^[0-9a-f]+-/ { on = 0 }
	on && $1 == "Rss:" { print $2; exit }' "/proc/$c/smaps")
[ -n "$rss" ] || fail "the child has nothing mapped at $start: $(grep "^$start" "/proc/$c/maps")"
[ "${rss:-0}" -lt 512 ] || fail "the child's copy of the parent's file: $rss kB resident"
kill -9 "$c"
wait "$run"
rc=$?
[ "$rc" = 0 ] || fail "rip run, not followed: exit $rc, want 0: $(cat run2.err)"
t_done
