#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run --on-rotate=PROG refuses a PROG that cannot be run,
# before it starts anything.  It ran the program, failed to hand each
# chunk on, and said nothing under -q (exit 0).  A name without a slash is
# looked for along PATH, as the command is run.
. tests/data/common.sh
need_bin "$RIP"
cd "$TEST_TMP" || die "no TEST_TMP"

expect_status 2 "--on-rotate=/nonexistent/cmd" "$RIP" run -q --rotate=1s \
	--on-rotate=/nonexistent/cmd -o t1 -- true
grep -q "on-rotate: '/nonexistent/cmd' is no program that can be run" "$TEST_TMP/err" ||
	fail "no reason given: $(cat "$TEST_TMP/err")"
[ -e t1 ] && fail "a trace directory was made: $(ls -a t1)"
expect_status 2 "--on-rotate=no-such-cmd-here" "$RIP" run -q --rotate=1s \
	--on-rotate=no-such-cmd-here -o t2 -- true
expect_status 0 "--on-rotate=true (along PATH)" "$RIP" run -q --rotate=1s --on-rotate=true \
	-o t3 -- true
t_done
