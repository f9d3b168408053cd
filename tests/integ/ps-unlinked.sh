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
cd "$TEST_TMP" || die "no TEST_TMP"

cat >u.c <<'C'
#include <rip.h>

#include "helpers.h"
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) void still_here(const char *ready)
{

	rip_snap();
	t_ready(ready);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	still_here(argv[1]);
	return 0;
}
C
t_cc_rip u
t_bg env RIP_RING=1 ./u "$TEST_TMP/ready"
t_ready_pid "$TEST_TMP/ready"
set -- "$RIP_DIR"/rip-"$pid"-*.ring
[ -f "$1" ] || die "no ring file of pid $pid in $RIP_DIR"
rm -f "$1"
expect_status 0 "rip ps PID (file unlinked)" "$RIP" ps "$pid"
grep -q "^u (pid $pid) alive, ring /proc/$pid/map_files/" "$TEST_TMP/out" ||
	fail "rip ps: $(head -n 1 "$TEST_TMP/out")"
grep -q ' still_here ' "$TEST_TMP/out" || fail "rip ps: not in still_here: $(cat "$TEST_TMP/out")"
t_done
