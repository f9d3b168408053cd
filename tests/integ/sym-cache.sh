#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the cache of inflated debug files (read/symcache.c).  A
# program built with compressed DWARF (-gz=zlib), stripped, its debug file
# found by build-id under --debug-dir: the first rip leaks resolves the leak
# to its function and line and leaves RIP_DEBUG_CACHE/<build-id>.debug,
# 0600, with no compressed section; the second run reads that copy (and
# says the same); a planted file of another build-id or without DWARF, a
# symlink in the cache's place and RIP_DEBUG_CACHE=0 are all ignored and
# change nothing.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd "${CC:-cc}" objcopy readelf python3 strace
unset DEBUGINFOD_URLS
cd "$TEST_TMP" || die "no $TEST_TMP"
top=$OLDPWD

cat >leaky.c <<'EOC'
#include <stdlib.h>
__attribute__((noinline)) static void *leak_here(void)
{
	return malloc(77); /* LEAK */
}
int main(void)
{
	return leak_here() ? 0 : 1;
}
EOC
"${CC:-cc}" -O0 -g -gz=zlib -fno-omit-frame-pointer -o leaky leaky.c 2>cc.err ||
	die "the compiler cannot write compressed DWARF: $(head -n 1 cc.err)"
line=$(grep -n "LEAK" leaky.c | cut -d: -f1)
id=$(readelf -n leaky | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ -n "$id" ] || die "no build-id in the test program"
mkdir -p "dbg/.build-id/$(echo "$id" | cut -c1-2)"
dbgfile="dbg/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
objcopy --only-keep-debug leaky "$dbgfile" && objcopy --strip-debug leaky ||
	die "objcopy failed"

# compressed FILE: the names of FILE's SHF_COMPRESSED sections, one a line
compressed() {
	python3 - "$1" <<'EOP'
import struct, sys
d = open(sys.argv[1], "rb").read()
assert d[:4] == b"\x7fELF" and d[4] == 2 and d[5] == 1, "not a 64-bit LE ELF"
shoff, = struct.unpack_from("<Q", d, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
def sh(i):
    return struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize)
stroff = sh(shstrndx)[4]
for i in range(shnum):
    name, typ, flags = sh(i)[:3]
    if flags & 0x800:
        n = d[stroff + name:d.index(b"\0", stroff + name)].decode()
        print(n)
EOP
}
[ -n "$(compressed "$dbgfile")" ] || die "the debug file has no compressed section to test with"

"$RIP" run --mem -q -o trace -- ./leaky >/dev/null 2>run.err || die "rip run: $(cat run.err)"
cache=$TEST_TMP/cache
RIP_DEBUG_CACHE=$cache "$RIP" leaks --debug-dir=dbg trace >out1 2>err1 || die "rip leaks: $(cat err1)"
grep -q "leak_here (.*leaky.c:$line)" out1 || fail "first run: leak_here at line $line not named: $(cat out1)"
c=$cache/$id.debug
[ -f "$c" ] || die "no $c after the first run ($(ls -la "$cache" 2>&1))"
[ "$(stat -c %a "$c")" = 600 ] || fail "$c is mode $(stat -c %a "$c"), want 600"
[ "$(stat -c %a "$cache")" = 700 ] || fail "$cache is mode $(stat -c %a "$cache"), want 700"
left=$(compressed "$c")
[ -z "$left" ] || fail "still compressed in the cache: $left"
ls "$cache" | grep -q XXXXXX && fail "a temporary file was left in the cache"

RIP_DEBUG_CACHE=$cache strace -f -e trace=openat -o strace.out "$RIP" leaks --debug-dir=dbg \
	trace >out2 2>err2 || fail "second run failed: $(cat err2)"
grep -q "$id.debug\", O_RDONLY.* = [0-9]" strace.out ||
	fail "the second run did not open the cached copy"
cmp -s out1 out2 || fail "the second run (from the cache) says something else"

# files that are not an inflated copy for this build-id: ignored
cp "$c" good.debug
for planted in /bin/true leaky; do # another build-id; this one without DWARF
	cp "$planted" "$c"
	RIP_DEBUG_CACHE=$cache "$RIP" leaks --debug-dir=dbg trace >out3 2>err3 ||
		fail "planted $planted: $(cat err3)"
	cmp -s out1 out3 || fail "a planted copy of $planted changed the report"
done
cp good.debug "$c"

# a symlink in the cache's place: not used, not followed
mkdir elsewhere
ln -s "$TEST_TMP/elsewhere" link
RIP_DEBUG_CACHE=$TEST_TMP/link "$RIP" leaks --debug-dir=dbg trace >out4 2>err4 ||
	fail "symlinked cache: $(cat err4)"
cmp -s out1 out4 || fail "a symlinked cache changed the report"
[ -z "$(ls elsewhere)" ] || fail "the cache followed a symlink: $(ls elsewhere)"

RIP_DEBUG_CACHE=0 "$RIP" leaks --debug-dir=dbg trace >out5 2>err5 || fail "no cache: $(cat err5)"
cmp -s out1 out5 || fail "RIP_DEBUG_CACHE=0 changed the report"
cd "$top" || true
t_done
