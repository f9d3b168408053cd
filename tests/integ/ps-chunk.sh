#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: `rip ps` of one chunk file of a packed trace (rip run
# --chunk-size) reads the copy of the ring file the trace keeps beside it, as
# `rip top` does, not the chunk as a ring file (bad magic); a chunk copied
# away from its trace is said to be so, exit 1.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/recprog
need_bin "$RIP" "$prog"
cd "$TEST_TMP" || die "no TEST_TMP"

# noise packs to about 2 bytes an event: a few chunks of 1 MiB
"$RIP" run --chunk-size=1M -o T -- "$prog" 1500000 --noise >run.out 2>run.err || die "rip run: $(cat run.err)"
set -- T/chunk-*.rpk
[ $# -ge 2 ] || die "want 2 chunks or more: $*"
expect_status 0 "rip ps T (the directory)" "$RIP" ps T
head -n 1 "$TEST_TMP/out" >dir.head
for c in "$@"; do
	expect_status 0 "rip ps $c" "$RIP" ps "$c"
	head -n 1 "$TEST_TMP/out" | grep -q "^recprog (pid [0-9]*) exited, ring T/\\.rip-ring\$" ||
		fail "rip ps $c: $(head -n 1 "$TEST_TMP/out")"
	head -n 1 "$TEST_TMP/out" | cmp -s - dir.head || fail "rip ps $c is not rip ps T"
done
cp "$1" away.rpk
expect_status 1 "rip ps of a chunk away from its trace" "$RIP" ps away.rpk
grep -q 'away.rpk: a chunk away from its trace' "$TEST_TMP/err" ||
	fail "rip ps away.rpk: $(cat "$TEST_TMP/err")"
t_done
