#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run whose stderr reader has gone exits with the
# program's status.  rip run -o T -- PROG 2>&1 | head -n 1: head leaves
# after PROG's one line, and rip's summary then killed it with SIGPIPE
# (exit 141, not PROG's 3) before it removed its ring directory.  Now rip
# ignores SIGPIPE (PROG keeps its own): exit 3, the trace is whole, and no
# rip-run directory is left in RIP_DIR.
. tests/data/common.sh
need_bin "$RIP"
cd "$TEST_TMP" || die "no TEST_TMP"

{
	"$RIP" run -o t -- sh -c 'echo first; sleep 0.3; exit 3'
	echo $? >rc
} 2>&1 | head -n 1 >head.out
[ "$(cat head.out)" = first ] || die "head did not read PROG's line: $(cat head.out)"
[ "$(cat rc)" = 3 ] || fail "rip run exited $(cat rc), want PROG's 3"
expect_status 0 "rip dump t" "$RIP" dump t
left=$(find "$RIP_DIR" -maxdepth 1 -name 'rip-run.*' | head -n 1)
[ -z "$left" ] || fail "rip run left its ring directory: $left"
t_done
