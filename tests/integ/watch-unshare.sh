#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: unshare(CLONE_NEWUSER), which the kernel refuses to a
# multithreaded process, still works under the watcher: in a program that
# is single-threaded (no watcher yet: it starts with the first
# pthread_create), and in one whose only thread came and went (the watcher
# runs then: the unshare wrapper stops it for the call and starts it after).
# The watcher then sees the threads created after.
. tests/data/common.sh
. tests/data/watch.sh

command -v unshare >/dev/null || skip "unshare (util-linux) is needed to probe user namespaces"
unshare -U true 2>/dev/null || skip "user namespaces are not available here"
for mode in unshare unshare-after-thread; do
	w_start "$TEST_TMP/$mode" "$mode" futex=2
	grep -q '^unshare ok$' "$W_OUT" || fail "$mode: $(cat "$W_OUT")"
	wait_until 20 w_ps_has "$(w_ring "$TEST_TMP/$mode")" "2 threads in syscall futex" ||
		fail "$mode: the watcher did not see the threads after: $(cat "$TEST_TMP/ps.out")"
	t_kill "$W_PID"
done
t_done
