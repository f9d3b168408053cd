#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a pseudo-terminal master that posix_openpt (or getpt) opened
# is a descriptor like any other.  glibc opens /dev/ptmx inside, out of the
# open hooks' sight: rip leaks did not list it.  A program leaks one of
# each: two descriptors left open, of /dev/ptmx.
. tests/data/common.sh
need_bin "$RIP"
[ -c /dev/ptmx ] || skip "no /dev/ptmx"
CC=${CC:-cc}
cd "$TEST_TMP" || die "no TEST_TMP"

cat >pt.c <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>

int main(void)
{
	return posix_openpt(O_RDWR | O_NOCTTY) < 0 || getpt() < 0;
}
C
"$CC" -O1 -g -o pt pt.c || die "cannot build the test program"
./pt || skip "no pseudo-terminal can be opened here"
"$RIP" run -q --fd -o t -- ./pt 2>run.err || fail "rip run: $(cat run.err)"
"$RIP" leaks t >l.txt 2>&1 || fail "rip leaks: $(cat l.txt)"
grep -q ', 2 file descriptors left open, ' l.txt || fail "rip leaks: $(tail -n 1 l.txt)"
[ "$(grep -c '(open: /dev/ptmx)' l.txt)" = 2 ] || fail "not the two masters: $(cat l.txt)"
t_done
