#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a program that opens its own ring runs traced when the
# environment opened one first.  With RIP_RING=1 (or under rip run)
# librip opens the ring before main, and the program's rip_ring_open, or
# the original API's rip_create_ring, failed with EALREADY: the shipped
# examples (simple, coroutines) exited 1 at once, and a program of the
# original API could not run under rip run.  The first such call now takes
# the environment's ring (0, and the program's snaps in it); a second
# rip_ring_open is still -EALREADY.  rip ps of each shows its snaps.  The
# ring's path has one slash after its directory (it had two under rip run).
. tests/data/common.sh
ex=$PWD/$BUILD/examples
need_bin "$RIP" "$ex/simple" "$ex/coroutines" "$ex/legacy"
cd "$TEST_TMP" || die "no TEST_TMP"

for e in simple coroutines; do
	RIP_RING=1 timeout 20 "$ex/$e" >$e.out 2>$e.err ||
		fail "$e under RIP_RING=1: exit $?: $(cat $e.err)"
done

cat >twice.c <<'C'
#include <errno.h>
#include <rip.h>

int main(void)
{
	if (rip_ring_open(NULL))
		return 2; /* the environment's ring: taken */
	return rip_ring_open(NULL) == -EALREADY ? 0 : 3;
}
C
t_cc_rip twice
RIP_RING=1 ./twice || fail "rip_ring_open twice under RIP_RING=1: exit $?, want 0"
./twice || fail "rip_ring_open twice: exit $?, want 0"

# the ring's path names its directory with one slash (RIP_RING=DIR/, as rip run gives it)
cat >path.c <<'C'
#include <rip.h>
#include <stdio.h>

int main(void)
{
	char p[4096];

	if (rip_ring_open(NULL) || rip_ring_path(p, sizeof(p)))
		return 1;
	puts(p);
	return 0;
}
C
t_cc_rip path
RIP_RING="$TEST_TMP/" ./path >p1.out || fail "rip_ring_path under RIP_RING=DIR/: exit $?"
"$RIP" run -q -o tp -- ./path >p2.out || fail "rip_ring_path under rip run: exit $?"
grep -q '//' p1.out p2.out && fail "a path with two slashes: $(cat p1.out p2.out)"

# the original API under rip run: its ids are threads of the trace's ring
"$RIP" run -q -o t -- "$ex/legacy" "$TEST_TMP/legacy.ring" >l.out 2>l.err ||
	fail "legacy under rip run: $(cat l.err)"
expect_status 0 "rip ps --all t" "$RIP" ps --all t
grep -q 'exited kept for history' "$TEST_TMP/out" || fail "rip ps t: $(head -n 2 "$TEST_TMP/out")"
n=$(awk '/^ *[0-9]+  [a-z_]/ && $0 !~ /no snap yet/ { n += $1 } END { print n + 0 }' "$TEST_TMP/out")
[ "$n" -gt 0 ] || fail "no snap of the legacy program in its trace: $(cat "$TEST_TMP/out")"
t_done
