#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: processes and images that are not followed open no ring file
# at all (RIP_FOLLOW, RIP_ROOT: what rip run sets), so that they cost
# nothing.  A shell that is the root of the family runs two programs and a
# subshell, then execs into a last program, under each RIP_FOLLOW setting;
# the ring files made are exactly: none -> the root's; exec -> the root's
# and its exec'd image's; fork -> the root's and one per forked child (the
# programs they exec make none); fork,exec -> every process and image.
# Unset RIP_FOLLOW keeps the old default (everything).  Under rip run
# without --follow-*, a shell loop of short programs gives the shell's
# trace and no child trace, and the programs it runs do not load librip;
# with no LD_PRELOAD or LD_AUDIT of the user's, they see none set (they saw
# both set to "", where untraced they are unset).
. tests/data/common.sh
lib=$PWD/$BUILD/librip-preload.so
[ -f "$lib" ] || die "$lib is missing: run make"

# family FOLLOW: run the family with RIP_FOLLOW=FOLLOW ("-" for unset); prints the number
# of ring files it left
family() {
	d=$TEST_TMP/rings.$1
	rm -rf "$d"
	mkdir -p "$d"
	if [ "$1" = - ]; then
		LD_PRELOAD=$lib RIP_RING=$d/ sh -c '/bin/true; /bin/true; (/bin/true); exec /bin/true'
	else
		sh -c 'RIP_ROOT=$$ exec env LD_PRELOAD="$1" RIP_RING="$2/" RIP_FOLLOW="$3" \
			sh -c "/bin/true; /bin/true; (/bin/true); exec /bin/true"' sh "$lib" "$d" "$1"
	fi
	find "$d" -name '*.ring' | wc -l
}

# The root sh (1 file); with exec followed, + its exec'd /bin/true (1); with fork
# followed, + a file per forked child (how many the shell forks is its business).
n_none=$(family none)
[ "$n_none" = 1 ] || fail "RIP_FOLLOW=none: $n_none ring files, want 1 (the root's)"
n_exec=$(family exec)
[ "$n_exec" = 2 ] || fail "RIP_FOLLOW=exec: $n_exec ring files, want 2 (the root and its exec)"
n_fork=$(family fork)
n_all=$(family fork,exec)
n_unset=$(family -)
# fork: the root plus one per forked child (the subshell at least: sh may vfork the
# others, and a vforked child only execs), none for what they exec
[ "$n_fork" -ge 2 ] || fail "RIP_FOLLOW=fork: $n_fork ring files, want the root and its children"
# fork,exec: each forked child's exec'd image adds one, and the root's exec one more
[ "$n_all" -gt "$n_fork" ] || fail "RIP_FOLLOW=fork,exec: $n_all files, not more than fork's $n_fork"
[ "$n_unset" = "$n_all" ] || fail "RIP_FOLLOW unset: $n_unset files, want fork,exec's $n_all"
[ "$(family 0)" = 1 ] || fail "RIP_FOLLOW=0: want the root's file only"

# rip run: a loop of short programs leaves only the shell's trace
expect_status 0 "rip run of a loop" "$RIP" run --mem -q -o "$TEST_TMP/trace" -- \
	sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done; echo loop done'
grep -q '^loop done$' "$TEST_TMP/out" || fail "rip run: the loop's output did not pass through"
[ -f "$TEST_TMP/trace/.rip-index" ] || fail "rip run: no trace of the shell"
n=$(find "$TEST_TMP/trace" -mindepth 1 -maxdepth 1 -type d | wc -l)
[ "$n" = 0 ] || fail "rip run: $n child traces, want none"
expect_status 0 "rip leaks on the shell's trace" "$RIP" leaks "$TEST_TMP/trace"

# An image that is not followed does not even load librip: LD_PRELOAD loses
# librip's entries (and keeps the user's own), so the loader maps nothing of
# ours into it.  With --follow-exec the entries stay.
other=$(find /lib /usr/lib -name 'libz.so.1' 2>/dev/null | head -n 1)
[ -n "$other" ] || die "no libz.so.1 to preload as the user's own (make installs zlib1g-dev)"
LD_PRELOAD=$other expect_status 0 "rip run of a child that reads its maps" "$RIP" run --mem -q \
	-o "$TEST_TMP/maps" -- sh -c 'grep -c librip /proc/self/maps; echo "pre=$LD_PRELOAD"'
[ "$(head -n 1 "$TEST_TMP/out")" = 0 ] ||
	fail "an exec'd image not followed maps librip: $(head -n 1 "$TEST_TMP/out") lines"
grep -qx "pre=${other}" "$TEST_TMP/out" ||
	fail "the user's own LD_PRELOAD entry was not kept: $(grep pre= "$TEST_TMP/out")"
# With none of the user's, LD_PRELOAD and LD_AUDIT are gone, as untraced, not left empty.
env -u LD_PRELOAD -u LD_AUDIT "$RIP" run --mem --track='regex=regcomp(1),regfree(1)' -q \
	-o "$TEST_TMP/env" -- sh -c 'echo "pre=${LD_PRELOAD+set} aud=${LD_AUDIT+set}"' \
	>"$TEST_TMP/env.out" 2>&1 || fail "rip run of a child that shows its LD_ variables"
grep -qx "pre= aud=" "$TEST_TMP/env.out" ||
	fail "librip's LD_PRELOAD or LD_AUDIT left set, empty: $(cat "$TEST_TMP/env.out")"
expect_status 0 "rip run --follow-exec of the same" "$RIP" run --mem -q --follow-exec \
	-o "$TEST_TMP/maps2" -- sh -c 'grep -c librip /proc/self/maps'
[ "$(head -n 1 "$TEST_TMP/out")" -gt 0 ] ||
	fail "with --follow-exec the exec'd image did not load librip"

# The root's file after an exec not followed: rip ps says what happened to it.
mkdir -p "$TEST_TMP/rx"
LD_PRELOAD=$lib RIP_RING=$TEST_TMP/rx/ RIP_FOLLOW=none t_bg sh -c 'exec sleep 30'
wait_until 10 sh -c "grep -q sleep /proc/$T_LAST/comm" || fail "the shell did not exec sleep"
expect_status 0 "rip ps on the pre-exec file" "$RIP" ps "$(find "$TEST_TMP/rx" -name '*.ring')"
grep -q 'replaced by execve' "$TEST_TMP/out" ||
	fail "rip ps does not say the process exec'd: $(head -n 1 "$TEST_TMP/out")"
t_kill "$T_LAST"
t_done
