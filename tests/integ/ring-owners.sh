#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: in a shared ring directory (sticky and writable by all, as
# /dev/shm is), rip reads and removes only the caller's files.  Three real
# ring files of dead processes (build/examples/simple, killed): one given
# to nobody (as if nobody had planted it), one of ours, and a copy of ours
# renamed to the name of another pid (its header's pid differs from its
# name).  rip ls must not list nobody's file; rip ps PID of nobody's must
# refuse and name the owner; rip ps of the renamed pid must refuse (the
# header is another process's) rather than show that process's threads;
# rip gc must remove our dead files and leave nobody's; rip gc --all-users
# (root) removes it too.  Root named the file on the command line reads it.
# Needs root (to give a file to nobody): skipped with the reason otherwise.
. tests/data/common.sh
prog=$BUILD/examples/simple
need_bin "$prog" "$RIP"

[ "$(id -u)" = 0 ] || skip "needs root, to give a ring file to another user (nobody)"
id nobody >/dev/null 2>&1 || skip "no user nobody to own the planted file"

shared=$TEST_TMP/shared
mkdir -p "$shared" && chmod 1777 "$shared" || die "mkdir $shared"
export RIP_DIR="$shared"
unset XDG_RUNTIME_DIR

# dead_ring NAME: run simple traced until its ring file exists, kill it; the
# pid in $dpid, the file in $dring
dead_ring() {
	out=$TEST_TMP/$1.out
	t_bg "$prog" --wait >"$out" 2>&1
	dpid=$T_LAST
	wait_until 20 grep -q '^ring ' "$out" || die "simple made no ring file: $(cat "$out")"
	dring=$(sed -n 's/^ring //p' "$out")
	t_kill "$dpid"
	[ -f "$dring" ] || die "no file $dring"
}

dead_ring theirs
their_pid=$dpid their_ring=$dring
chown nobody "$their_ring" || die "chown nobody $their_ring"
dead_ring mine
my_pid=$dpid my_ring=$dring
# a pid no process has: a short-lived shell's
other_pid=$(sh -c 'echo $$')
start=$(basename "$my_ring" | sed -n 's/^rip-[0-9]*-\([0-9]*\)\..*/\1/p')
fake=$shared/rip-$other_pid-$start.ring
cp "$my_ring" "$fake" || die "cp $my_ring $fake"

# rip ls: ours, not nobody's
"$RIP" ls >"$TEST_TMP/ls" 2>&1 || fail "rip ls: exit $?: $(cat "$TEST_TMP/ls")"
grep -qF "$my_ring" "$TEST_TMP/ls" || fail "rip ls does not list our file $my_ring"
grep -qF "$their_ring" "$TEST_TMP/ls" && fail "rip ls lists nobody's file $their_ring"

# rip ps PID of nobody's dead process: refused, the owner named
expect_status 1 "rip ps $their_pid (nobody's file)" "$RIP" ps "$their_pid"
grep -q 'nobody' "$TEST_TMP/err" ||
	fail "rip ps $their_pid does not name the owner of $their_ring: $(cat "$TEST_TMP/err")"
grep -q 'simple-' "$TEST_TMP/out" && fail "rip ps $their_pid showed nobody's threads"

# a file whose header is of another pid than its name: refused
expect_status 1 "rip ps $other_pid (a file whose header is pid $my_pid's)" "$RIP" ps "$other_pid"
grep -q "pid $my_pid" "$TEST_TMP/err" ||
	fail "rip ps $other_pid: not the reason (the header's pid, $my_pid): $(cat "$TEST_TMP/err")"
grep -q 'simple-' "$TEST_TMP/out" && fail "rip ps $other_pid showed the threads of pid $my_pid"

# ours, by pid: read
expect_status 0 "rip ps $my_pid (our file)" "$RIP" ps "$my_pid"
# nobody's, named on the command line by root: read
expect_status 0 "rip ps $their_ring (named)" "$RIP" ps "$their_ring"

# rip gc: ours go, nobody's stays; --all-users takes it
"$RIP" gc >"$TEST_TMP/gc" 2>&1 || fail "rip gc: exit $?: $(cat "$TEST_TMP/gc")"
[ -e "$my_ring" ] && fail "rip gc left our dead file $my_ring"
[ -e "$their_ring" ] || fail "rip gc removed nobody's file $their_ring"
grep -qF "$their_ring" "$TEST_TMP/gc" && fail "rip gc names nobody's file: $(cat "$TEST_TMP/gc")"
"$RIP" gc --all-users >"$TEST_TMP/gc-all" 2>&1 ||
	fail "rip gc --all-users: exit $?: $(cat "$TEST_TMP/gc-all")"
[ -e "$their_ring" ] && fail "rip gc --all-users left nobody's dead file $their_ring"
t_done
