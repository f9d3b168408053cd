#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip ps PID finds the ring file of a live process after the
# file was unlinked (a cleaner; logind's RemoveIPC=yes empties /dev/shm of a
# user who logs out), through the process's /proc/PID/map_files link to
# the mapping, which reaches the file still.  It said "no ring file for
# pid".  Following those links takes CAP_SYS_ADMIN (or
# CAP_CHECKPOINT_RESTORE): without it the test skips.
. tests/data/common.sh
need_bin "$RIP"
[ "$(id -u)" = 0 ] || skip "map_files links are followed with CAP_SYS_ADMIN only (run as root)"
CC=${CC:-cc}
lib=$PWD/$BUILD
inc=$PWD/include
cd "$TEST_TMP" || die "no TEST_TMP"

cat >u.c <<'C'
#include <rip.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) void still_here(const char *ready)
{
	FILE *f;

	rip_snap();
	f = fopen(ready, "w");
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	still_here(argv[1]);
	return 0;
}
C
"$CC" -O1 -g -I"$inc" -o u u.c -L"$lib" -lrip -Wl,-rpath,"$lib" ||
	die "cannot build the test program"
t_bg env RIP_RING=1 ./u "$TEST_TMP/ready"
wait_file "$TEST_TMP/ready" 30 || die "the program did not get ready"
pid=$(cat ready)
set -- "$RIP_DIR"/rip-"$pid"-*.ring
[ -f "$1" ] || die "no ring file of pid $pid in $RIP_DIR"
rm -f "$1"
expect_status 0 "rip ps PID (file unlinked)" "$RIP" ps "$pid"
grep -q "^u (pid $pid) alive, ring /proc/$pid/map_files/" "$TEST_TMP/out" ||
	fail "rip ps: $(head -n 1 "$TEST_TMP/out")"
grep -q ' still_here ' "$TEST_TMP/out" || fail "rip ps: not in still_here: $(cat "$TEST_TMP/out")"
t_done
