#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a stack is defined (rip:bt) once per process, in the chunk
# where it was first met, and the recorder copies the definitions met so
# far at the head of every later chunk: a later chunk read alone names the
# stacks its events use.  A program leaks a block from one site at its
# start and again at its end, with 500,000 blocks of random sizes made and
# freed between, recorded
# with --chunk-size=1M: read whole, both blocks show their site (the
# copies taken as the same definitions again, no warning); the last chunk
# read alone shows its block at its site too, and warns of no stack unknown
# (leaks-chunk-defs.sh checks the same with --max-size and function ids).
# A chunk of several read alone also says that what it made may be
# released in a later chunk (the first chunk's churn shows as leaks); the
# directory, and the one chunk of a trace that has one, do not.
# Timeout: 60
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
CC=${CC:-cc}

cat >"$TEST_TMP/p.c" <<'C'
#include <stdio.h>
#include <stdlib.h>

static void *keep[2];

__attribute__((noinline)) static void leak_at(int i)
{
	keep[i] = malloc(4000);
}

#include "churn.h"

int main(void)
{
	for (int i = 0; i < 2; i++) { /* one call site: one stack */
		leak_at(i);
		if (!i)
			churn(500000);
	}
	printf("%p %p\n", keep[0], keep[1]);
	return 0;
}
C
"$CC" -O0 -g -fno-omit-frame-pointer -Itests/data -o "$TEST_TMP/p" "$TEST_TMP/p.c" ||
	die "cannot build the test program"
cd "$TEST_TMP" || die "no TEST_TMP"
"$RIP" run --mem -q --chunk-size=1M -o T -- ./p >run.out 2>run.err || fail "rip run: $(cat run.err)"
last=$(ls T | grep '^chunk-' | sort | tail -n 1)
[ -n "$last" ] && [ "$last" != chunk-000000.rpk ] || die "one chunk only: $(ls T)"

"$RIP" leaks T >whole.out 2>whole.err || fail "rip leaks T: $(cat whole.err)"
n=$(grep -A3 '8000 bytes in 2 blocks never freed' whole.out | grep -c 'leak_at')
[ "$n" = 1 ] || fail "read whole, the two blocks are not shown at leak_at: $(head -n 20 whole.out)"

"$RIP" leaks "T/$last" >one.out 2>one.err || fail "rip leaks T/$last: $(cat one.err)"
grep -A1 '4000 bytes in 1 block never freed' one.out | grep -q 'leak_at' ||
	fail "the last chunk alone does not show its block at leak_at: $(head -n 8 one.out)"
grep -q 'not defined\|not read\|bad backtrace' one.out one.err &&
	fail "rip leaks of the last chunk misses a stack: $(cat one.err)"
grep -q 'corrupt' one.err && fail "rip leaks calls the chunk corrupt: $(cat one.err)"
grep -q 'bad backtrace\|not defined' whole.err && fail "rip leaks T warns: $(cat whole.err)"

# one chunk of several read alone says what that leaves out; the directory and a
# trace of one chunk do not
for f in T/chunk-000000.rpk "T/$last"; do
	"$RIP" leaks "$f" >c.out 2>c.err || fail "rip leaks $f: $(cat c.err)"
	grep -q "$f is one chunk of a trace, read alone: what it made may be released in a later" \
		c.err || fail "rip leaks $f does not say it is one chunk of several: $(cat c.err)"
done
grep -q 'one chunk of a trace' whole.err && fail "rip leaks T says it is one chunk: $(cat whole.err)"
"$RIP" run --mem -q -o S -- ./p >/dev/null 2>&1 || fail "rip run (one chunk) failed"
"$RIP" leaks S/chunk-000000.rpk >s.out 2>s.err || fail "rip leaks S/chunk-000000.rpk: $(cat s.err)"
grep -q 'one chunk of a trace' s.err && fail "the one chunk of a trace is said to be one of several"

"$RIP" report "T/$last" >rep.out 2>rep.err || fail "rip report T/$last: $(cat rep.err)"
grep -q 'is not defined' rep.out && fail "rip report misses stacks: $(head -n 20 rep.out)"
grep -q 'leak_at' rep.out || fail "rip report of the last chunk has no leak_at: $(head -n 20 rep.out)"
t_done
