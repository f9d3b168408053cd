#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: librip-preload.so records the memory calls of a program we
# wrote (memprog basic) into its ring file: every allocator once with its
# size and kind, the realloc chain, the anonymous mmap and munmap, one
# interned stack for 100 calls from one site, nothing for free(NULL), no
# event lost; the program's output and status are those of an untraced
# run.  Then C++: every operator new and delete variant, by kind and size,
# from a small program built with g++.  The frames
# themselves are checked by the unit test preload_bt.
. tests/data/common.sh
prog=$BUILD/tests/integ/memprog
lib=$PWD/$BUILD/librip-preload.so
need_bin "$prog" "$RIP" "$lib"
need_cmd g++

ring=$TEST_TMP/basic.ring
"$prog" basic >"$TEST_TMP/plain.out" 2>&1
plain_rc=$?
LD_PRELOAD=$lib RIP_RING=$ring RIP_MODE=block "$prog" basic >"$TEST_TMP/traced.out" 2>&1
rc=$?
[ "$rc" = "$plain_rc" ] || fail "status $rc traced, $plain_rc untraced"
cmp -s "$TEST_TMP/plain.out" "$TEST_TMP/traced.out" || fail "output differs when traced"
expect_status 0 "rip dump" "$RIP" dump "$ring"
cp "$TEST_TMP/out" "$TEST_TMP/dump"

# count PATTERN: lines of the dump matching the extended regex (kinds: numbers or names)
count() { grep -Ec "$1" "$TEST_TMP/dump"; }
want() { # N PATTERN WHAT
	got=$(count "$2")
	[ "$got" = "$1" ] || fail "$3: $got events, want $1 ($2)"
}
want 100 'mem:alloc addr=0x[0-9a-f]+ size=1001 bt=[0-9]+ kind=(1|malloc)$' "malloc(1001)"
want 1 'mem:alloc addr=0x[0-9a-f]+ size=1001 bt=[0-9]+ kind=(2|calloc)$' "calloc(7, 143)"
want 1 'mem:realloc old=0x0 addr=0x[0-9a-f]+ size=1002 ' "realloc(NULL, 1002)"
want 1 'mem:realloc old=0x[1-9a-f][0-9a-f]* addr=0x[0-9a-f]+ size=20020 ' "realloc to 20020"
want 1 'mem:realloc old=0x[1-9a-f][0-9a-f]* addr=0x[0-9a-f]+ size=300300 ' "realloc to 300300"
want 1 'size=1003 bt=[0-9]+ kind=(5|posix_memalign)$' "posix_memalign"
want 1 'size=1024 bt=[0-9]+ kind=(6|aligned_alloc)$' "aligned_alloc"
want 1 'size=1005 bt=[0-9]+ kind=(7|memalign)$' "memalign"
want 1 'size=1006 bt=[0-9]+ kind=(8|valloc)$' "valloc"
want 1 'mem:alloc addr=0x[0-9a-f]+ size=65536 bt=[0-9]+ kind=(12|mmap)$' "mmap"
want 1 'mem:unmap addr=0x[0-9a-f]+ size=65536 bt=[0-9]+ kind=(17|munmap)$' "munmap"
want 1 'size=1009 bt=[0-9]+ kind=(1|malloc)$' "the leak"
want 0 'mem:free addr=0x0 ' "free(NULL)"
# the 100 malloc(1001) share one stack
ids=$(grep -E 'size=1001 bt=[0-9]+ kind=(1|malloc)$' "$TEST_TMP/dump" | sed 's/.* bt=\([0-9]*\) .*/\1/' | sort -u)
[ "$(echo "$ids" | wc -l)" = 1 ] || fail "malloc(1001) from one site has several stacks: $ids"
[ "$ids" != 0 ] || fail "malloc(1001) has no backtrace"
grep -Eq "rip:bt id=$ids frames=([1-9]|\[0x)" "$TEST_TMP/dump" || fail "no rip:bt for id $ids"
nbt=$(count 'rip:bt id=')
nid=$(grep -E 'rip:bt id=' "$TEST_TMP/dump" | sed 's/.*id=\([0-9]*\).*/\1/' | sort -u | wc -l)
[ "$nbt" = "$nid" ] || fail "$nbt rip:bt events for $nid ids: a stack defined twice"
[ "$nbt" -lt 100 ] || fail "$nbt stacks: not interned"
# every bt a mem event uses was defined before it
awk '/rip:bt id=/ { sub(/.*id=/, ""); sub(/ .*/, ""); def[$0] = 1; next }
     / mem:/ { for (i = 1; i <= NF; i++) if ($i ~ /^bt=/) { b = substr($i, 4);
	if (b != 0 && !(b in def)) { print "undefined bt " b; bad = 1 } } }
     END { exit bad }' "$TEST_TMP/dump" || fail "a mem event uses a bt defined nowhere before it"
grep -q ' 0 discarded/overwritten, 0 packets lost' "$TEST_TMP/dump" || fail "events lost: $(tail -n 1 "$TEST_TMP/dump")"

# C++: new and delete, every variant
if ! command -v g++ >/dev/null 2>&1; then
	echo "no g++: C++ checks skipped"
	t_done
fi
cat >"$TEST_TMP/newprog.cpp" <<'CPP'
#include <cstdio>
#include <new>
struct alignas(256) Big { char c[512]; };
int main()
{
	int *a = new int[2001 / sizeof(int) + 1];	// new[] 2004
	char *b = new char[3001];			// new[] 3001
	long *c = new long;				// new 8
	char *d = new (std::nothrow) char[3003];	// new[] nothrow 3003
	Big *e = new Big;				// aligned new 512
	Big *f = new Big[3];				// aligned new[] 1536
	delete[] a;
	delete[] b;
	delete c;					// sized delete
	delete[] d;
	delete e;					// aligned sized delete
	delete[] f;
	try {
		char *g = new char[(size_t)1 << 62];
		delete[] g;
	} catch (const std::bad_alloc &) {
		std::puts("bad_alloc");
	}
	std::puts("newprog done");
	return 0;
}
CPP
g++ -O0 -std=c++17 -o "$TEST_TMP/newprog" "$TEST_TMP/newprog.cpp" ||
	die "g++ failed"
"$TEST_TMP/newprog" >"$TEST_TMP/plain.out" 2>&1
plain_rc=$?
ring=$TEST_TMP/new.ring
LD_PRELOAD=$lib RIP_RING=$ring RIP_MODE=block "$TEST_TMP/newprog" >"$TEST_TMP/traced.out" 2>&1
rc=$?
[ "$rc" = "$plain_rc" ] && [ "$rc" = 0 ] || fail "newprog: status $rc traced, $plain_rc untraced"
cmp -s "$TEST_TMP/plain.out" "$TEST_TMP/traced.out" || fail "newprog: output differs when traced"
grep -q bad_alloc "$TEST_TMP/traced.out" || fail "newprog: no std::bad_alloc when traced"
expect_status 0 "rip dump (C++)" "$RIP" dump "$ring"
cp "$TEST_TMP/out" "$TEST_TMP/dump"
want 1 'size=2004 bt=[1-9][0-9]* kind=(11|new\[\])$' "new[] 2004"
want 1 'size=3001 bt=[1-9][0-9]* kind=(11|new\[\])$' "new[] 3001"
want 1 'size=8 bt=[1-9][0-9]* kind=(10|new)$' "new long"
want 1 'size=3003 bt=[1-9][0-9]* kind=(11|new\[\])$' "new[] nothrow"
want 1 'size=512 bt=[1-9][0-9]* kind=(10|new)$' "aligned new"
want 1 'size=1536 bt=[1-9][0-9]* kind=(11|new\[\])$' "aligned new[]"
want 2 'mem:free .* kind=(15|delete)$' "delete"
want 4 'mem:free .* kind=(16|delete\[\])$' "delete[]"
t_done
