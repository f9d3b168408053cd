#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the disk fills while rip run records (a trace on a 2 MiB
# tmpfs, cut into chunks of 1M, of a program that writes ten times that).
# The recording stops and the program runs on to its end; the chunk closed
# before stays, with the index that counts it, and every reader reads it
# (as the trace of a recorder killed), instead of the whole trace removed;
# rip run exits 1, says what it kept, and names where the program's ring
# file stays (rip ps PID reads it), not "files of other processes".
# Needs root (mount): otherwise the test skips with the reason.
# Timeout: 60
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
CC=${CC:-cc}
RIP=$(cd "$(dirname "$RIP")" && pwd)/$(basename "$RIP")
cd "$TEST_TMP" || die "no TEST_TMP"
[ "$(id -u)" = 0 ] || skip "not root: cannot mount a small tmpfs"
MNT=$TEST_TMP/mnt
mkdir "$MNT" rings || die "mkdir"
mount -t tmpfs -o size=2m none "$MNT" || skip "cannot mount a tmpfs here"
trap 'umount "$MNT" 2>/dev/null; t_cleanup' EXIT
trap 'umount "$MNT" 2>/dev/null; t_cleanup; exit 1' INT TERM HUP

cat >p.c <<'C'
#include <stdio.h>
#include <stdlib.h>

static void *pool[4096];

int main(void)
{
	unsigned long x = 88172645463325252ul;

	for (int i = 0; i < 3000000; i++) { /* random sizes and addresses: ~10 MB packed */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		free(pool[x % 4096]);
		pool[x % 4096] = malloc(16 + (x >> 20) % 3000);
	}
	puts("ran to its end");
	return 0;
}
C
"$CC" -O1 -g -o p p.c || die "cannot build the test program"
RIP_DIR=$TEST_TMP/rings "$RIP" run --mem --chunk-size=1M -o "$MNT/t" -- ./p >out 2>err
rc=$?
[ "$rc" = 1 ] || fail "rip run: exit $rc, want 1: $(cat err)"
grep -q '^ran to its end$' out || fail "the program did not run on to its end: $(cat out err)"
grep -q "No space left on device; recording stops (the chunks closed before are kept in $MNT/t)" \
	err || fail "rip run does not say it kept the chunks closed: $(cat err)"
[ -f "$MNT/t/.rip-index" ] && [ -f "$MNT/t/chunk-000000.rpk" ] ||
	fail "the chunk closed and its index are gone: $(ls -a "$MNT/t" 2>&1)"
for c in dump leaks report; do
	"$RIP" "$c" "$MNT/t" >r.out 2>r.err || fail "rip $c of what was kept: $(cat r.err)"
	grep -q 'holds what was written so far' r.err ||
		fail "rip $c does not warn that the trace holds the chunks closed: $(cat r.err)"
done
grep -q 'were left' err && fail "rip run says files of other processes were left: $(cat err)"
pid=$(sed -n 's/^rip run: the recording of p (pid \([0-9]*\)) failed: its ring file stays as .*/\1/p' err)
[ -n "$pid" ] || fail "rip run does not say where the program's ring file stays: $(cat err)"
[ -n "$pid" ] && { RIP_DIR=$TEST_TMP/rings "$RIP" ps "$pid" >/dev/null 2>ps.err || fail "rip ps $pid: $(cat ps.err)"; }
t_done
