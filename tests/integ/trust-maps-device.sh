#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip ps PID opens no file but a regular one among those the
# process maps.  The names in /proc/PID/maps are the process's, in its own
# mount namespace, which any user may have (unshare -Urm): there a
# regular file, a ring file even, may sit where in rip's namespace a device
# is (root runs rip ps on any user's process; an open alone of some devices
# does something: /dev/watchdog is armed).  A program of librip's (its ring
# file shared, read-write) runs in a namespace of its own where a tmpfs
# covers the directory that, outside, holds a FIFO of the ring file's
# name.  rip ps PID, under strace, must open that name only as a path
# (O_PATH, to look at what it is), never for reading.  Skipped where user
# namespaces are off.
. tests/data/common.sh
prog=$PWD/$BUILD/examples/simple
need_bin "$prog" "$RIP"
need_cmd strace unshare

d=$TEST_TMP/ns
mkdir -p "$d/fake" || die "mkdir $d/fake"
unshare -Urm true 2>/dev/null || skip "no user namespaces here (unshare -Urm)"
t_bg unshare -Urm sh -c 'mount -t tmpfs none "$1" && exec env RIP_DIR="$1" "$2" --wait' \
	sh "$d/fake" "$prog" >"$TEST_TMP/prog.out" 2>&1
pid=$T_LAST
wait_until 30 grep -q "$d/fake/.*\.ring" "/proc/$pid/maps" ||
	die "the program never mapped its ring file: $(cat "$TEST_TMP/prog.out")"
ring=$(grep -o "$d/fake/.*\.ring" "/proc/$pid/maps" | head -1)
# outside the namespace, the name is a FIFO's
mkfifo "$ring" || die "mkfifo $ring"
strace -f -e trace=open,openat -o "$TEST_TMP/strace.out" "$RIP" ps "$pid" >"$TEST_TMP/ps.out" 2>&1
grep -q "$ring\", .*O_PATH" "$TEST_TMP/strace.out" ||
	skip_part "rip ps never looked at the name (nothing checked): $(cat "$TEST_TMP/ps.out")"
opened=$(grep "$ring\"" "$TEST_TMP/strace.out" | grep -v 'O_PATH' | grep ') = [0-9]')
[ -z "$opened" ] || fail "rip ps PID opened the FIFO outside the namespace: $opened"
t_done
