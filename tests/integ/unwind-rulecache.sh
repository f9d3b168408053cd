#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: unwind rules kept in RIP_RULE_CACHE by one process are used
# by the next, and never change a stack.  A program built -O2
# -fomit-frame-pointer (recursion, callbacks through libc's qsort) is
# recorded with RIP_UNWIND=libunwind for reference, then with the default
# walk and an empty cache directory (which must then hold the program's
# rules, in a file named by its build ID), then again with that cache: the
# same stacks as libunwind's, event by event.  Then the program's file is
# rewritten with every rule "last frame": the stacks of the events in the
# program's code end at their first frame, which shows the file is read; and rewritten as garbage
# (a bad magic, a short file): ignored, libunwind's stacks again.  Last,
# `rip run --mem --follow-exec` of two runs succeeds and leaves nothing in
# its ring directory.  x86-64 only (the walk of the tables is).
. tests/data/common.sh
lib=$PWD/$BUILD/librip-preload.so
CC=${CC:-cc}
need_bin "$RIP"
[ -f "$lib" ] || die "$lib is missing: run make"
[ "$(uname -m)" = x86_64 ] || skip "the unwind-table walk is x86-64 only"
need_cmd "$CC"
need_libunwind
need_cmd readelf
setarch "$(uname -m)" -R true 2>/dev/null ||
	skip "setarch -R (no address space randomisation) is not permitted here"

cat >"$TEST_TMP/prog.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

__attribute__((noinline)) static void *leaf(size_t n)
{
	char *p = malloc(n);

	if (p)
		p[0] = (char)n;
	sink += (long)n;
	return p;
}

__attribute__((noinline)) static void *rec(int d, size_t n)
{
	void *p;

	if (d <= 0)
		return leaf(n);
	p = rec(d - 1, n + 1);
	sink += d;
	return p;
}

static int cmp(const void *a, const void *b)
{
	free(rec(3, 8));
	return *(const int *)a - *(const int *)b;
}

int main(void)
{
	int v[16];

	for (int i = 0; i < 300; i++)
		free(rec(i % 23, 32 + (size_t)(i % 5)));
	for (int i = 0; i < 16; i++)
		v[i] = (i * 7) % 16;
	qsort(v, 16, sizeof(v[0]), cmp);
	printf("done %d\n", v[0]);
	return 0;
}
EOF
$CC -O2 -g -fomit-frame-pointer -Wl,--build-id -o "$TEST_TMP/prog" "$TEST_TMP/prog.c" ||
	die "building the program failed"
bid=$(readelf -n "$TEST_TMP/prog" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -n 1)
[ -n "$bid" ] || die "the program has no build ID"
cache=$TEST_TMP/rules
mkdir -p "$cache"

# stacks NAME MODE: record with RIP_UNWIND=MODE and the cache; the stacks in $TEST_TMP/NAME.stacks
stacks() {
	ring=$TEST_TMP/$1.ring
	setarch "$(uname -m)" -R env RIP_UNWIND="$2" RIP_RULE_CACHE="$cache" LD_PRELOAD="$lib" \
		RIP_RING="$ring" RIP_MODE=block "$TEST_TMP/prog" >"$TEST_TMP/$1.out" 2>&1 ||
		fail "$1: the program failed: $(head -n 3 "$TEST_TMP/$1.out")"
	"$RIP" dump "$ring" >"$TEST_TMP/$1.dump" 2>"$TEST_TMP/$1.err" ||
		die "rip dump ($1) failed: $(head -n 3 "$TEST_TMP/$1.err")"
	awk -f tests/data/mem-stacks.awk "$TEST_TMP/$1.dump" >"$TEST_TMP/$1.stacks"
	[ "$(wc -l <"$TEST_TMP/$1.stacks")" -gt 300 ] || fail "$1: too few mem events"
}

# same NAME: its stacks are libunwind's
same() {
	cmp -s "$TEST_TMP/ref.stacks" "$TEST_TMP/$1.stacks" || {
		fail "$1: stacks differ from libunwind's:"
		diff "$TEST_TMP/ref.stacks" "$TEST_TMP/$1.stacks" | head -n 6 >&2
	}
}

stacks ref libunwind
rm -f "$cache"/*
stacks first auto
same first
[ -f "$cache/$bid" ] || die "no rules kept for the program ($cache/$bid): $(ls "$cache")"
size=$(wc -c <"$cache/$bid")
[ "$size" -gt 48 ] && [ $(((size - 48) % 16)) = 0 ] || fail "the rules file has $size bytes"
for f in "$cache"/.[!.]*; do
	[ -e "$f" ] && fail "a temporary file was left: $f"
done
stacks again auto
same again

# every rule of the program "last frame": its stacks end at their first frame
/usr/bin/env python3 - "$cache/$bid" <<'EOF' || die "rewriting the rules file failed"
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
n = struct.unpack_from('<I', b, 8)[0]
for i in range(n):
    struct.pack_into('<Q', b, 48 + 16 * i + 8, 2)
open(p, 'wb').write(b)
EOF
stacks forced auto
one=$(grep -c ' \[0x[0-9a-f]*\]$' "$TEST_TMP/forced.stacks")
[ "$one" -gt 300 ] ||
	fail "every rule of the program \"last frame\": only $one stacks end at its first frame"

# garbage: ignored
printf 'RIPRULE0 not a rules file' >"$cache/$bid"
stacks magic auto
same magic
head -c 100 "$TEST_TMP/ref.dump" >"$cache/$bid"
stacks short auto
same short

# rip run: the family shares a cache in its ring directory, and removes it
out=$TEST_TMP/run
"$RIP" run -q --mem --follow-exec -o "$out" -- sh -c "'$TEST_TMP/prog' && '$TEST_TMP/prog'" \
	>"$TEST_TMP/run.out" 2>"$TEST_TMP/run.err" ||
	fail "rip run failed: $(head -n 3 "$TEST_TMP/run.err")"
grep -q 'left in' "$TEST_TMP/run.err" && fail "rip run left files: $(cat "$TEST_TMP/run.err")"
[ "$(grep -c '^done' "$TEST_TMP/run.out")" = 2 ] ||
	fail "the program did not run twice under rip run"
t_done
