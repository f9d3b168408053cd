#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: fork without exec: the watcher did not come along into the
# child (only the forking thread does), and the child starts its own at its
# first pthread_create, as any process does (a single-threaded child has
# none: see trust-ns.sh); rip ps on the child's ring file shows its two
# threads blocked in a raw futex in child_waiter, and the parent's watcher
# goes on.
. tests/data/common.sh
. tests/data/watch.sh

export RIP_FOLLOW=fork
w_start "$TEST_TMP/a" futex=2 fork
unset RIP_FOLLOW
wait_file "$TEST_TMP/a/ready.child" 30 || die "no child"
child=$(sed -n 's/^child \([0-9]*\)$/\1/p' "$W_OUT")
[ -n "$child" ] || die "watchprog did not say its child: $(cat "$W_OUT")"
T_PIDS="$T_PIDS $child"
cring=$(ls "$TEST_TMP/a/rip-$child"-*.ring 2>/dev/null | head -n 1)
[ -n "$cring" ] || die "the child has no ring file"
wait_until 20 w_ps_has "$cring" "2 blocked with no wait record" "child_thread" "main" ||
	fail "child: $(cat "$TEST_TMP/ps.out" "$TEST_TMP/ps.err")"
wait_until 20 w_ps_has "$(ls "$TEST_TMP/a/rip-$W_PID"-*.ring)" "2 threads in syscall futex" ||
	fail "parent: $(cat "$TEST_TMP/ps.out" "$TEST_TMP/ps.err")"
kill -9 "$child"
t_done
