#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip ps of the child of a program that dropped privileges
# before it forked, under rip run --follow-fork.  rip run's private
# directory is its user's, mode 0700: a process that became another user
# cannot create its ring file there, so the child is untraced.  rip ps
# CHILD said "its parent P is traced (...), but not the children it forks
# (rip run --follow-fork traces them)", to a user who gave --follow-fork.
# It must say why: the child's user, who cannot create files in the
# directory; and rip run's summary must say that a forked child was not
# traced, and why (it said nothing: the child counts itself in its
# parent's header, forks_denied).  Without --follow-fork (--follow-exec alone: apache2ctl's
# shell forks apache2, which drops privileges), the reason is that forks
# are not followed, and rip ps must say that instead.  Needs root (to drop
# privileges); skips otherwise.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/drop_fork
need_bin "$prog" "$RIP"
[ "$(id -u)" = 0 ] || skip "not root: cannot drop privileges"
cd "$TEST_TMP" || die "no $TEST_TMP"

t_bg "$RIP" run --follow-fork -o T -- "$prog" 65534 65534 >ready 2>run.err
run=$T_LAST
wait_file ready 30 || die "the helper did not fork in 30 s: $(cat run.err)"
read -r parent c <ready || die "ready: $(cat ready)"
T_PIDS="$T_PIDS $c $parent"
[ -n "$c" ] || die "ready: $(cat ready)"
"$RIP" ps "$parent" >/dev/null 2>&1 || fail "rip ps $parent: the parent is traced: $("$RIP" ps "$parent" 2>&1)"
expect_status 1 "rip ps $c" "$RIP" ps "$c"
grep -q "^rip: no ring file for pid $c: its parent $parent is traced (.*), but pid $c runs as .*uid 65534.*, who cannot create files in .*rip-run\.[^ ]* (.*uid $(id -u).*'s)" "$TEST_TMP/err" ||
	fail "rip ps $c: $(cat "$TEST_TMP/err")"
grep -q "follow-fork traces them" "$TEST_TMP/err" &&
	fail "rip ps $c tells to give --follow-fork, which was given: $(cat "$TEST_TMP/err")"
kill -9 "$c"
wait "$run"
rc=$?
[ "$rc" = 0 ] || fail "rip run: exit $rc, want 0 (the helper's): $(cat run.err)"
# and rip run's summary says what it did not trace (it said nothing)
grep -q "^rip run: warning: 1 forked child was not traced: drop_fork (pid $parent) changed its user (dropped privileges) before it forked, .*(Permission denied)\$" run.err ||
	fail "rip run's summary on the untraced child: $(cat run.err)"

# forks not followed: that is the reason given, not the change of user
t_bg "$RIP" run --follow-exec -o T2 -- "$prog" 65534 65534 >ready2 2>run2.err
run=$T_LAST
wait_file ready2 30 || die "the helper did not fork in 30 s: $(cat run2.err)"
read -r parent c <ready2 || die "ready2: $(cat ready2)"
T_PIDS="$T_PIDS $c $parent"
expect_status 1 "rip ps $c (forks not followed)" "$RIP" ps "$c"
grep -q "^rip: no ring file for pid $c: its parent $parent is traced (.*), but not the children it forks (rip run --follow-fork traces them)\$" "$TEST_TMP/err" ||
	fail "rip ps $c, forks not followed: $(cat "$TEST_TMP/err")"
kill -9 "$c"
wait "$run"
grep -q "forked child" run2.err && fail "rip run, forks not followed: $(cat run2.err)"
t_done
