#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the cache of inflated debug files (read/symcache.c) keeps
# copies only of debug files of the caller's or root's.  A debug file of
# another user's says what build-id it likes: copied into root's cache under
# that name (say libc's), it would stand for that build-id in every later
# run of root's, whatever process.  Through the driver
# build/tests/unit/symq as root: a stripped program with compressed DWARF
# whose debug file lies beside it (.gnu_debuglink), owned by nobody: the
# address is named (the file is read for this run) and RIP_DEBUG_CACHE stays
# empty; the same file owned by root is copied there (the check would pass
# with no cache at all otherwise).  Needs root (to give the file away).
. tests/data/common.sh
Q=$PWD/$BUILD/tests/unit/symq
need_bin "$Q"
need_cmd "${CC:-cc}" objcopy nm
unset DEBUGINFOD_URLS
[ "$(id -u)" = 0 ] || skip "needs root, to make a debug file another user's"
id nobody >/dev/null 2>&1 || skip "no user nobody to own the debug file"

cd "$TEST_TMP" || die "cd $TEST_TMP"
cat >prog.c <<'EOC'
int target(int x) { int y = x * 3; return y + 1; }
int main(int argc, char **argv) { (void)argv; return target(argc); }
EOC
"${CC:-cc}" -g -O0 -gz=zlib -o prog prog.c 2>cc.err ||
	die "the compiler cannot write compressed DWARF: $(head -n 1 cc.err)"
objcopy --only-keep-debug prog prog.debug || die "objcopy --only-keep-debug"
mkdir bin && objcopy --strip-all --add-gnu-debuglink=prog.debug prog bin/prog ||
	die "objcopy --add-gnu-debuglink"
cp prog.debug bin/
v=$(nm prog | awk '$3 == "target" { print $1; exit }')
B=0x555555550000
A=$(printf '0x%x' $((0x$v + 4 + B)))

# look CACHE: symq on the stripped program with its cache in CACHE
look() {
	out=$(RIP_DEBUG_CACHE=$1 timeout 60 "$Q" -m "$TEST_TMP/bin/prog@$B" "$A" 2>&1)
	printf '%s\n' "$out" | grep -q "^$A 0 target prog\.c:1 " ||
		fail "the debug file beside the program is not read: $out"
}

chown nobody bin/prog.debug || die "chown nobody"
look "$TEST_TMP/c1"
left=$(ls -A c1 2>/dev/null)
[ -z "$left" ] || fail "a debug file of nobody's was copied into root's cache: $left"

chown root bin/prog.debug || die "chown root"
look "$TEST_TMP/c2"
ls c2/*.debug >/dev/null 2>&1 || fail "root's own debug file was not copied into the cache"
t_done
