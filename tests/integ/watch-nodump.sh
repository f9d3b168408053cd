#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a non-dumpable process run by a non-root user: its own
# /proc/self/task/T/syscall becomes root's and refuses the watcher
# (EACCES).  The program runs on unchanged, and rip ps says the watcher
# could not see its threads instead of showing nothing.  Needs root to run
# the program as uid 65534 (setpriv).
. tests/data/common.sh
. tests/data/watch.sh

[ "$(id -u)" -eq 0 ] || skip "needs root to run the program as uid 65534"
command -v setpriv >/dev/null || skip "setpriv (util-linux) is needed"
setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null ||
	skip "setpriv cannot switch to uid 65534 here"
# A directory uid 65534 can reach and write (the test's own may be private).
d=$(mktemp -d /tmp/rip-nodump.XXXXXX) || die "mktemp"
chmod 777 "$d"
trap 't_cleanup; rm -rf "$d"' EXIT
setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$W_PROG" ||
	skip "uid 65534 cannot run $W_PROG (a private build directory)"
t_bg setpriv --reuid=65534 --regid=65534 --clear-groups env RIP_RING="$d/" \
	LD_PRELOAD="$W_PRELOAD" RIP_DISABLE=1,2,3 "$W_PROG" "$d/ready" futex=2 nodump
pid=$T_LAST
wait_file "$d/ready" 30 || die "watchprog did not start as uid 65534"
ring=$(w_ring "$d")
wait_until 20 w_ps_has "$ring" "watcher: could not see [0-9]+ of the threads.*non-dumpable" ||
	fail "rip ps did not say the watcher was refused: $(cat "$TEST_TMP/ps.out" "$TEST_TMP/ps.err")"
grep -q 'in syscall' "$TEST_TMP/ps.out" && fail "stacks shown that the watcher could not read"
kill -TERM "$pid"
wait "$pid" || fail "the non-dumpable program did not end cleanly"
t_done
