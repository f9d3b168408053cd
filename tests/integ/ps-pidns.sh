#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a process in a pid namespace of its own (a container's) is
# seen from outside it.  Its ring file is named, and its header filled,
# with the namespace's pid (1): rip ps HOSTPID found no file, rip ls said
# it was dead, and rip gc removed the file of the live process.  The header
# now has the namespace's inode (pidns), and readers outside take the pid
# the process has there: rip ps HOSTPID shows it, rip ls says alive with
# that pid, rip gc keeps the file; once it is killed, rip gc removes it.
. tests/data/common.sh
need_bin "$RIP"
need_cmd unshare
cd "$TEST_TMP" || die "no TEST_TMP"

# a pid namespace with its own /proc: as root, else in a user namespace
ns="unshare -fp --mount-proc"
$ns true 2>/dev/null || ns="unshare -Ufp --map-root-user --mount-proc"
$ns true 2>/dev/null || skip "no pid namespace can be made here (unshare -fp)"

cat >ns.c <<'C'
#include <rip.h>

#include "helpers.h"
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) void ns_park(const char *ready)
{

	rip_snap();
	t_ready(ready);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	ns_park(argv[1]);
	return 0;
}
C
t_cc_rip ns
mkdir rd
# shellcheck disable=SC2086 # $ns: the command and its options
t_bg $ns env RIP_RING="$TEST_TMP/rd/" ./ns "$TEST_TMP/ready"
wait_file "$TEST_TMP/ready" 30 || die "the program did not start in its namespace"
[ "$(cat ready)" = 1 ] || die "the program is not pid 1 of a namespace: $(cat ready)"
pid=
for _ in 1 2 3 4 5 6 7 8 9 10; do
	pid=$(pgrep -n -x ns) && break
	sleep 0.2
done
[ -n "$pid" ] || die "cannot find the program from outside its namespace"
T_PIDS="$T_PIDS $pid"
[ "$pid" != 1 ] || die "the program is pid 1 here too"

expect_status 0 "rip ps HOSTPID" "$RIP" ps "$pid"
grep -q "^ns (pid $pid) alive, ring " "$TEST_TMP/out" || fail "rip ps HOSTPID: $(head -n 1 "$TEST_TMP/out")"
grep -q ' ns_park ' "$TEST_TMP/out" || fail "rip ps HOSTPID: not in ns_park: $(cat "$TEST_TMP/out")"
RIP_DIR=$TEST_TMP/rd expect_status 0 "rip ls" "$RIP" ls
grep -q "^$pid  *ns  *alive " "$TEST_TMP/out" || fail "rip ls: $(cat "$TEST_TMP/out")"
expect_status 0 "rip gc" "$RIP" gc -d rd
[ "$(ls rd)" ] || fail "rip gc removed the ring file of the live process"

kill -9 "$pid"
wait_until 10 sh -c "! kill -0 $pid 2>/dev/null" || die "the program did not die"
expect_status 0 "rip gc (dead)" "$RIP" gc -d rd
[ -z "$(ls rd)" ] || fail "rip gc kept the file of the dead process: $(ls rd)"
t_done
