#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: another user cannot stop a program from being traced by
# taking its ring file's names first.  A shell stops itself, its pid and
# start time are read, and every name librip would try for it
# (rip-PID-START.ring and .1.ring ... .99.ring) is made in the shared ring
# directory (sticky, writable by all, as /dev/shm is) and given to nobody;
# then the shell goes on and execs sleep traced (RIP_RING=1 and the preload
# library: same pid, same start time).  It must still get its ring file (a
# name with a random part), ours, in that directory; rip ps PID must show
# it live and, once the program is killed, pick it among the planted ones;
# rip ls must list it.  Again with RIP_FOLLOW=fork (execs not followed),
# where a planted rip-PID-START.ring once made the program run untraced.
# Needs root (to give files to nobody): skipped with the reason otherwise.
. tests/data/common.sh
pre=$PWD/$BUILD/librip-preload.so
need_bin "$pre" "$RIP"

[ "$(id -u)" = 0 ] || skip "needs root, to plant files owned by another user (nobody)"
id nobody >/dev/null 2>&1 || skip "no user nobody to own the planted files"

shared=$TEST_TMP/shared
mkdir -p "$shared" && chmod 1777 "$shared" || die "mkdir $shared"
export RIP_DIR="$shared"
unset XDG_RUNTIME_DIR

stopped() {
	grep -q '^State:[[:space:]]*T' "/proc/$1/status" 2>/dev/null
}

# planted CASE N ENV...: plant N+1 names (.ring, .1 ... .N) for a program run with ENV
planted() {
	case=$1 n=$2
	shift 2
	out=$TEST_TMP/$case.out
	# the shell untraced (its own file would take the name), what it execs traced
	t_bg sh -c 'kill -STOP $$; exec env "$@"' sh "$@" RIP_RING=1 LD_PRELOAD="$pre" \
		sleep 1000 >"$out" 2>&1
	pid=$T_LAST
	wait_until 20 stopped "$pid" || die "$case: the shell did not stop"
	# field 22 of /proc/PID/stat, after the command name in parentheses
	start=$(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f20)
	i=0
	while [ "$i" -le "$n" ]; do
		if [ "$i" = 0 ]; then f=$shared/rip-$pid-$start.ring; else f=$shared/rip-$pid-$start.$i.ring; fi
		(set -C && : >"$f") && chown nobody "$f" || die "$case: cannot plant $f"
		i=$((i + 1))
	done
	kill -CONT "$pid"
	# the program's own file: a ring (magic) of ours with its pid and start time
	mine() {
		ring=$(find "$shared" -name "rip-$pid-$start*.ring" -user 0 | head -n 1)
		[ -n "$ring" ] && "$RIP" ps "$ring" >/dev/null 2>&1
	}
	if ! wait_until 20 mine; then
		fail "$case: the program got no ring file: $(cat "$out"; ls -l "$shared")"
		t_kill "$pid"
		return
	fi
	case $ring in
	"$shared"/rip-"$pid"-"$start".[a-z][a-z][a-z][a-z][a-z][a-z][a-z][a-z].ring) ;;
	*) fail "$case: the ring file is not in $shared with a random part: $ring" ;;
	esac
	[ -f "$ring" ] || fail "$case: $ring is not a regular file: $(ls -l "$ring")"
	expect_status 0 "$case: rip ps $pid (live)" "$RIP" ps "$pid"
	grep -q "^sleep (pid $pid) alive, ring $ring" "$TEST_TMP/out" ||
		fail "$case: rip ps $pid (live) does not show its file: $(head -n 1 "$TEST_TMP/out")"
	t_kill "$pid"
	expect_status 0 "$case: rip ps $pid (dead)" "$RIP" ps "$pid"
	grep -q "^sleep (pid $pid) .*, ring $ring" "$TEST_TMP/out" ||
		fail "$case: rip ps $pid (dead) does not show its file: $(head -n 1 "$TEST_TMP/out")"
	"$RIP" ls >"$TEST_TMP/ls" 2>&1 || fail "$case: rip ls: exit $?"
	grep -qF "$ring" "$TEST_TMP/ls" || fail "$case: rip ls does not list $ring"
	left=$(find "$shared" -name "rip-$pid-*" ! -user nobody ! -path "$ring")
	[ -z "$left" ] || fail "$case: other files of ours: $left"
}

planted all 99
planted nofollow 0 RIP_FOLLOW=fork
t_done
