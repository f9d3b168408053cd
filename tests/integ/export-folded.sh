#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip export --format=folded on the events exportprog emits
# itself (rip/resource.h, with backtraces made of its own functions'
# addresses): exactly one line per distinct stack, outermost frame first,
# named after exportprog's functions, two backtraces into one function
# merged, with bytes allocated, --value=count and --value=leaked; a
# backtrace defined after its use (by another thread) still resolves; the
# same from a trace directory; usage errors exit 2; corrupt input exits 1
# and never makes a sanitizer report.
. tests/data/common.sh
prog=$BUILD/tests/integ/exportprog
need_bin "$prog" "$RIP" "$RIP_ASAN"
need_cmd python3

ring=$("$prog" exit) || die "exportprog exit failed"
[ -s "$ring" ] || die "exportprog made no ring file ($ring)"

cat >"$TEST_TMP/want.bytes" <<'W'
[backtrace 99 not defined] 20
[no backtrace] 10
site_root;site_leaf_c 4096
site_root;site_mid;site_leaf_a 350
site_root;site_mid;site_leaf_b 3000
site_root;site_thread_leaf 777
W
cat >"$TEST_TMP/want.count" <<'W'
[backtrace 99 not defined] 1
[no backtrace] 1
site_root;site_leaf_c 1
site_root;site_mid;site_leaf_a 4
site_root;site_mid;site_leaf_b 2
site_root;site_thread_leaf 1
W
cat >"$TEST_TMP/want.leaked" <<'W'
[backtrace 99 not defined] 20
[no backtrace] 10
site_root;site_mid;site_leaf_a 250
site_root;site_mid;site_leaf_b 2000
site_root;site_thread_leaf 777
W

# check WHAT GOT WANT
check() {
	cmp -s "$2" "$3" && return 0
	fail "$1: folded output differs"
	diff "$3" "$2" | sed 's/^/    /' >&2
}

expect_status 0 "folded" "$RIP" export --format=folded "$ring" -o "$TEST_TMP/f.bytes"
check "default value" "$TEST_TMP/f.bytes" "$TEST_TMP/want.bytes"
for v in bytes count leaked; do
	asan_run export --format=folded --value=$v -o - "$ring"
	[ "$asan_rc" = 0 ] || fail "asan folded --value=$v: exit $asan_rc"
	check "--value=$v" "$TEST_TMP/asan.out" "$TEST_TMP/want.$v"
done

# through a trace directory written by rip snapshot
expect_status 0 "rip snapshot" "$RIP" snapshot -o "$TEST_TMP/trace" "$ring"
expect_status 0 "folded (trace)" "$RIP" export --format=folded --value=leaked \
	"$TEST_TMP/trace" -o "$TEST_TMP/t.leaked"
check "trace directory" "$TEST_TMP/t.leaked" "$TEST_TMP/want.leaked"

# usage
expect_status 2 "bad --value" "$RIP" export --format=folded --value=pages "$ring" -o -
expect_status 2 "--value with chrome" "$RIP" export --format=chrome --value=count "$ring" -o -
expect_status 0 "--help" "$RIP" export --help
grep -q folded "$TEST_TMP/out" || fail "--help does not list folded"

# corrupt input
asan_run export --format=folded -o "$TEST_TMP/never" /dev/null
[ "$asan_rc" = 1 ] || fail "folded /dev/null: exit $asan_rc, want 1"
[ -e "$TEST_TMP/never" ] && fail "failed export left OUT behind"
cring=$("$prog" corrupt) || die "exportprog corrupt failed"
# damage FILE: set the count before bt 7's frames (0x5252...) to 0x7fffffff
damage() {
	python3 - "$1" <<'PY' || die "cannot damage $1"
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
i = b.find(bytes([0x52]) * 24)
assert i > 4
b[i - 4:i] = (0x7fffffff).to_bytes(4, "little")
open(p, "wb").write(b)
PY
}
# in a ring file the packet is dropped and counted: a warning, exit 0
cp "$cring" "$TEST_TMP/damaged.ring"
damage "$TEST_TMP/damaged.ring"
asan_run export --format=folded -o - "$TEST_TMP/damaged.ring"
[ "$asan_rc" = 0 ] || fail "damaged ring: exit $asan_rc, want 0"
grep -q 'incomplete' "$TEST_TMP/asan.err" || fail "damaged ring: no warning"
# in a trace directory it is corruption: exit 1 with the reason
expect_status 0 "rip snapshot (corrupt)" "$RIP" snapshot -o "$TEST_TMP/ctrace" "$cring"
damage "$TEST_TMP/ctrace/stream_0"
asan_run export --format=folded -o "$TEST_TMP/c.folded" "$TEST_TMP/ctrace"
[ "$asan_rc" = 1 ] || fail "damaged trace: exit $asan_rc, want 1"
grep -q 'stream_0' "$TEST_TMP/asan.err" || fail "damaged trace: no clear message"
[ -e "$TEST_TMP/c.folded" ] && fail "damaged trace: OUT left behind"

t_done
