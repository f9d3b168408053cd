#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip export removes its partial output when the export fails,
# and only that: a device it wrote to with --force stays.  `rip export --force
# --format=pprof --through=F TRACE -o /dev/null` failed (--through on a trace
# without memory events) and then removed the output by name, as root the
# system's /dev/null.  Here a character device of our own (1,3, made with
# mknod, as root) stands for it; a regular file the failed export made is
# still removed.
. tests/data/common.sh
prog=$BUILD/tests/integ/calltreeprog
need_bin "$prog" "$RIP"

ring=$("$prog") || die "calltreeprog failed"

# the partial file of a failed export is removed (as before)
expect_status 1 "export --through on events" "$RIP" export --format=pprof --through=no_such_fn \
	"$ring" -o "$TEST_TMP/p.pb.gz"
[ -e "$TEST_TMP/p.pb.gz" ] && fail "the failed export left $TEST_TMP/p.pb.gz"

if [ "$(id -u)" = 0 ] && mknod "$TEST_TMP/null" c 1 3 2>/dev/null; then
	chmod 0666 "$TEST_TMP/null"
	expect_status 1 "export --force to a device" "$RIP" export --force --format=pprof \
		--through=no_such_fn "$ring" -o "$TEST_TMP/null"
	[ -c "$TEST_TMP/null" ] || fail "the failed export removed the device it wrote to"
else
	skip_part "needs root (mknod), to make a device to write to"
fi
t_done
