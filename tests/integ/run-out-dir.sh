#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run -o DIR where DIR cannot be made (in /proc, where
# access(2) says root may write): rip run says so and fails before it runs
# the program, and leaves no ring file behind.  Before, root's program ran
# untraced to its end, and rip run then noted a ring file left "of other
# processes" in its ring directory.
. tests/data/common.sh
need_bin "$RIP"
cd "$TEST_TMP" || die "no TEST_TMP"
mkdir ringdir
RIP_DIR=$TEST_TMP/ringdir "$RIP" run -o /proc/rip-no-such-dir -- sh -c ': >ran' >out 2>err
rc=$?
[ "$rc" = 1 ] || fail "rip run: exit $rc, want 1: $(cat err)"
grep -q '^rip: cannot create /proc/rip-no-such-dir: ' err ||
	fail "rip run does not say it cannot create the trace: $(cat err)"
[ -e ran ] && fail "rip run ran the program though it could not write its trace"
[ -z "$(ls ringdir)" ] || fail "rip run left files behind: $(ls -R ringdir)"
t_done
