#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip ls and rip gc judge what they open, not the name they
# listed.  In a shared ring directory (sticky, writable by all), a file of
# ours named rip-1-1.ring is replaced, between the directory listing and
# the open, by a symbolic link to a real ring file given to nobody (a small
# preload library, tests/data/swap-open.c, renames the link over it at
# rip's first open of that name: what another user who can write the
# directory could do).  rip ls must not read nobody's file through the
# link (no valid entry for rip-1-1.ring, nobody's pid not shown); rip gc
# must not remove nobody's file.  Needs root (to give a file to nobody):
# skipped with the reason otherwise.
. tests/data/common.sh
prog=$BUILD/examples/simple
need_bin "$prog" "$RIP"
CC=${CC:-cc}

[ "$(id -u)" = 0 ] || skip "needs root, to give a ring file to another user (nobody)"
id nobody >/dev/null 2>&1 || skip "no user nobody to own the file behind the link"

$CC -O1 -fPIC -shared -o "$TEST_TMP/swap.so" tests/data/swap-open.c -ldl ||
	die "cannot build the swapping preload library"
shared=$TEST_TMP/shared
mkdir -p "$shared" "$TEST_TMP/theirs" && chmod 1777 "$shared" || die "mkdir $shared"
export RIP_DIR="$shared"
unset XDG_RUNTIME_DIR

# nobody's real ring file of a dead process, outside the scanned directory
t_bg env RIP_DIR="$TEST_TMP/theirs" "$prog" --wait >"$TEST_TMP/simple.out" 2>&1
pid=$T_LAST
wait_until 20 grep -q '^ring ' "$TEST_TMP/simple.out" ||
	die "simple made no ring file: $(cat "$TEST_TMP/simple.out")"
theirs=$(sed -n 's/^ring //p' "$TEST_TMP/simple.out")
t_kill "$pid"
chown nobody "$theirs" || die "chown nobody $theirs"

# run NAME CMD...: rip with the swap armed: rip-1-1.ring (ours) becomes a link to nobody's file
run() {
	name=$1
	shift
	rm -f "$shared/rip-1-1.ring" "$TEST_TMP/link"
	: >"$shared/rip-1-1.ring" && ln -s "$theirs" "$TEST_TMP/link" || die "cannot set up the swap"
	SWAP_PATH=$shared/rip-1-1.ring SWAP_FROM=$TEST_TMP/link LD_PRELOAD=$TEST_TMP/swap.so \
		"$@" >"$TEST_TMP/$name" 2>&1
}

run ls "$RIP" ls
[ -L "$shared/rip-1-1.ring" ] || die "the swap did not happen: $(cat "$TEST_TMP/ls")"
grep -q "^[0-9].*rip-1-1\.ring" "$TEST_TMP/ls" &&
	fail "rip ls read nobody's file through a link: $(grep rip-1-1 "$TEST_TMP/ls")"
grep -q "^$pid " "$TEST_TMP/ls" && fail "rip ls shows nobody's process $pid: $(cat "$TEST_TMP/ls")"

run gc "$RIP" gc
[ -f "$theirs" ] || fail "rip gc removed nobody's file $theirs through a link"
grep -q "(pid $pid," "$TEST_TMP/gc" && fail "rip gc took nobody's file for ours: $(cat "$TEST_TMP/gc")"
t_done
