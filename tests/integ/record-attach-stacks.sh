#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip record attached to a running program under the preload
# library: a stack defined (rip:bt) before it attached, and overwritten in
# the ring since, is used again while it records.  rip leaks must report
# the block with its stack: the recorder asks for the definitions again
# (the header's bt_gen), and the preload library writes each at its next
# use.  Before, the stack was "(backtrace N is not defined)", with a
# warning that it may have been defined before the recorder attached.
# Timeout: 60
. tests/data/common.sh
pre=$PWD/$BUILD/librip-preload.so
need_bin "$RIP" "$pre"
CC=${CC:-cc}
cd "$TEST_TMP" || die "no TEST_TMP"

cat >p.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *keep[2];

__attribute__((noinline)) static void leak_at(int i)
{
	keep[i] = malloc(4000);
}

int main(void)
{
	FILE *f;

	for (int i = 0; i < 2; i++) { /* one call site: one stack */
		leak_at(i);
		if (i)
			break;
		for (int k = 0; k < 200000; k++) /* the rings wrap: the definition is gone */
			free(malloc(16 + k % 500));
		f = fopen("ready", "w");
		fclose(f);
		while (access("go", F_OK)) /* until rip record attached */
			usleep(10000);
	}
	printf("%p %p\n", keep[0], keep[1]);
	return 0;
}
C
"$CC" -O0 -g -fno-omit-frame-pointer -o p p.c || die "cannot build the test program"
t_bg env RIP_RING=1 LD_PRELOAD="$pre" ./p >p.out 2>p.err
pid=$T_LAST
wait_until 30 test -e ready || die "the program did not get ready: $(cat p.err)"
t_bg "$RIP" record -o T "$pid" 2>rec.err
rec=$T_LAST
wait_until 20 grep -q '^rip record: recording' rec.err || die "rip record did not attach: $(cat rec.err)"
: >go
wait "$rec" || fail "rip record: exit $?: $(cat rec.err)"
grep -q '^0x' p.out || fail "the program did not run to its end: $(cat p.err)"
"$RIP" leaks T >l.out 2>l.err || fail "rip leaks T: $(cat l.err)"
grep -A1 '4000 bytes in 1 block never freed' l.out | grep -q 'leak_at (.*p\.c:' ||
	fail "the block made while recording is not shown with its stack: $(head -n 20 l.out)"
! grep -q 'is not defined' l.out l.err ||
	fail "a stack is not defined: $(grep 'not defined' l.out l.err)"
t_done
