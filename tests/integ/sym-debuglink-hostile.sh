#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the separate debug file of a binary somebody else owns opens
# nothing but a regular file.  rip reads the binaries a process maps (root
# runs rip ps PID on any user's process); whoever owns such a binary and its
# directory chooses the name its .gnu_debuglink gives and what lies there.
# Through the driver build/tests/unit/symq: a stripped binary whose debug
# file, where the link sends the search, is a FIFO (an open for reading
# would wait for a writer for ever), then a symbolic link to /dev/zero (a
# device opened, then read to its end for the CRC: never).  Each lookup must
# end within its time limit, the address unnamed; the debug file put back,
# the address is named again.  The same for a FIFO where the debug file of a
# build-id goes under --debug-dir.
. tests/data/common.sh
Q=$PWD/$BUILD/tests/unit/symq
need_bin "$Q"
need_cmd objcopy nm readelf
unset DEBUGINFOD_URLS
CC=${CC:-cc}

cd "$TEST_TMP" || die "cd $TEST_TMP"
cat >prog.c <<'EOF'
#include <stdio.h>
int target(int x) { int y = x * 3; return y + 1; }
int main(int argc, char **argv) { (void)argv; printf("%d\n", target(argc)); return 0; }
EOF
$CC -g -O0 -Wl,--build-id=none -o nobid prog.c || die "cc"
objcopy --only-keep-debug nobid nobid.debug || die "objcopy --only-keep-debug"
mkdir bin && objcopy --strip-all --add-gnu-debuglink=nobid.debug nobid bin/nobid ||
	die "objcopy --add-gnu-debuglink"
v=$(nm nobid | awk '$3 == "target" { print $1; exit }')
NB=0x555555550000
A=$(printf '0x%x' $((0x$v + 4 + NB)))

# look WHAT: symq on the stripped binary, at most 20 s; its output in $out
look() {
	timeout 20 "$Q" -m "$TEST_TMP/bin/nobid@$NB" "$A" >out 2>&1
	st=$?
	out=$(cat out)
	[ "$st" != 124 ] || fail "$1: the lookup still ran after 20 s (it waits on the debug file)"
}

cp nobid.debug bin/ && look "a real debug file"
printf '%s\n' "$out" | grep -q "^$A 0 target prog\.c:2 " ||
	die "the debug file next to the binary is not found: $out"

rm bin/nobid.debug && mkfifo bin/nobid.debug || die "mkfifo"
look "a FIFO for a debug file"
printf '%s\n' "$out" | grep -q "^$A 0 target" && fail "a FIFO gave symbols: $out"

rm bin/nobid.debug && ln -s /dev/zero bin/nobid.debug || die "ln -s"
look "a link to /dev/zero for a debug file"
printf '%s\n' "$out" | grep -q "^$A 0 target" && fail "/dev/zero gave symbols: $out"

rm bin/nobid.debug && cp nobid.debug bin/ && look "the debug file put back"
printf '%s\n' "$out" | grep -q "^$A 0 target prog\.c:2 " ||
	fail "the debug file put back is not found: $out"

# -- by build-id under --debug-dir (a sysroot or a debug dir may be anyone's too)
$CC -g -O0 -o bid prog.c || die "cc"
id=$(readelf -n bid | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ -n "$id" ] || die "no build-id in the test program"
objcopy --only-keep-debug bid bid.debug && objcopy --strip-all bid bin/bid || die "objcopy"
bdir=dbg/.build-id/$(echo "$id" | cut -c1-2)
mkdir -p "$bdir" && mkfifo "$bdir/$(echo "$id" | cut -c3-).debug" || die "mkfifo"
v=$(nm bid | awk '$3 == "target" { print $1; exit }')
A=$(printf '0x%x' $((0x$v + 4 + NB)))
timeout 20 "$Q" -d "$TEST_TMP/dbg" -m "$TEST_TMP/bin/bid@$NB" "$A" >out 2>&1
[ $? != 124 ] || fail "a FIFO for the debug file by build-id: the lookup still ran after 20 s"
rm "$bdir/$(echo "$id" | cut -c3-).debug" && cp bid.debug "$bdir/$(echo "$id" | cut -c3-).debug"
out=$(timeout 20 "$Q" -d "$TEST_TMP/dbg" -m "$TEST_TMP/bin/bid@$NB" "$A" 2>&1)
printf '%s\n' "$out" | grep -q "^$A 0 target prog\.c:2 " ||
	fail "the debug file by build-id is not found: $out"
t_done
