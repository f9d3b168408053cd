#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run with a RIP_DIR it cannot use fails before the
# program runs, naming it.  RIP_DIR must exist (rip(1)); rip run made a
# missing one (mkdir /nonexistent, as root), and with one it could not
# write put its directory in $TMPDIR or /tmp, where rip ps, rip ls and
# rip gc, which look in RIP_DIR only, never found the ring file a crash
# left.  A missing directory and a file: exit 1, a line that names
# RIP_DIR, the program not run, nothing made there or in TMPDIR.
. tests/data/common.sh
need_bin "$RIP"
cd "$TEST_TMP" || die "no TEST_TMP"
mkdir tmp
: >afile
for d in "$TEST_TMP/missing" "$TEST_TMP/afile"; do
	TMPDIR=$TEST_TMP/tmp RIP_DIR=$d "$RIP" run -q -o tr -- touch ran >out 2>err
	rc=$?
	[ "$rc" = 1 ] || fail "RIP_DIR=$d: exit $rc, want 1: $(cat err)"
	grep -q "RIP_DIR=$d: cannot make rip run's directory there: .*must exist" err ||
		fail "RIP_DIR=$d: the error does not name it: $(cat err)"
	[ -e ran ] && fail "RIP_DIR=$d: the program ran"
	[ -e tr ] && fail "RIP_DIR=$d: a trace was made"
	[ -z "$(ls tmp)" ] || fail "RIP_DIR=$d: made in TMPDIR: $(ls tmp)"
	rm -f ran
done
[ -e missing ] && fail "a missing RIP_DIR was made"
t_done
