#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: read/sym.c names the file and line of code whose CU has no
# .debug_aranges entry between two CUs that have one.  libdwfl gives such an
# address the CU before it (the gap after one CU's ranges is taken as its
# own), as in a Go program built with cgo (Go's CUs have no entries, the C
# beside them has): every Go frame got the cgo C file's line, or none.  Here
# the CU in the middle loses its entry to objcopy; its function and the
# function inlined into it must still come with b.c's lines.
. tests/data/common.sh
CC=${CC:-cc}
Q=$PWD/$BUILD/tests/unit/symq
unset DEBUGINFOD_URLS
[ -x "$Q" ] || die "missing $Q (run make tests)"
for tool in "$CC" objcopy objdump readelf; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool is not installed: make check installs it"
done
cd "$TEST_TMP" || exit 1
cat >a.c <<'C'
int a_fn(int x) { return x * 7 + 1; }
C
cat >b.c <<'C'
int a_fn(int);
static inline __attribute__((always_inline)) int b_in(int x)
{
	return a_fn(x) + 2;
}
__attribute__((noinline)) int b_fn(int x)
{
	return b_in(x) * 3;
}
C
cat >c.c <<'C'
int b_fn(int);
int main(int argc, char **argv) { (void)argv; return b_fn(argc) & 1; }
C
for f in a b c; do
	$CC -g -O1 -fno-pie -c "$f.c" || die "cannot compile $f.c"
done
objcopy --remove-section .debug_aranges b.o || die "objcopy"
$CC -no-pie -o prog a.o b.o c.o || die "cannot link"
# the layout the test needs: b's code between the two ranges of .debug_aranges
n=$(readelf --debug-dump=aranges prog | grep -c '^ *Length:')
[ "$n" -ge 2 ] || die "expected two CUs in .debug_aranges, found $n"

# the call of a_fn in b_fn (inlined from b_in)
call=$(objdump -d --no-show-raw-insn prog | awk '
	/^[0-9a-f]+ <b_fn>:/ { in_b = 1; next }
	/^$/ { in_b = 0 }
	in_b && /call.*<a_fn>/ { sub(/:.*/, ""); gsub(/ /, ""); print "0x" $0; exit }')
[ -n "$call" ] || die "no call of a_fn in b_fn: $(objdump -d prog | sed -n '/<b_fn>:/,/^$/p')"
out=$("$Q" -m "$TEST_TMP/prog@0" "$call")
echo "$out"
printf '%s\n' "$out" | grep -Eq "^$call 0 b_in b\.c:4 inl " ||
	fail "the inlined b_in at b.c:4 is not the innermost frame"
printf '%s\n' "$out" | grep -Eq "^$call 1 b_fn b\.c:8 - " ||
	fail "b_fn at b.c:8 is not the outer frame"
printf '%s\n' "$out" | grep -Eq " a\.c:| c\.c:|\?\?:0" &&
	fail "a frame of b_fn is given another CU's file, or none"
t_done
