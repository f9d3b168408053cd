#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a path given where a trace, a ring file or a chunk is
# expected that names a device or a FIFO is refused without being opened
# (opening some devices does something: a watchdog starts, a tape
# rewinds): rip dump, rip leaks and rip ps say "not a regular file", and
# strace sees no open of it.
. tests/data/common.sh
need_cmd strace
cd "$TEST_TMP" || die "no TEST_TMP"
mkfifo fifo || die "mkfifo"
for path in /dev/zero "$TEST_TMP/fifo"; do
	for cmd in dump leaks ps; do
		strace -f -o trace.txt -e trace=open,openat "$RIP" "$cmd" "$path" >out 2>err
		rc=$?
		[ "$rc" = 1 ] || fail "rip $cmd $path: exit $rc, want 1: $(cat err)"
		grep -q "not a regular file" err || fail "rip $cmd $path: $(cat err)"
		grep -F "\"$path\"" trace.txt && fail "rip $cmd opened $path"
	done
done
t_done
