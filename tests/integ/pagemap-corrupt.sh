#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip pagemap on input that makes no sense, under AddressSanitizer
# and UBSan.  Snapshots whose events contradict each other (an array shorter
# than its page count, a chunk past its mapping or without one, overlapping
# mappings, a page described twice, an empty range): exit 1 with a message
# naming the snapshot.  A 64 TiB mapping with a block as big: counted, not
# allocated.  A snapshot cut short: no complete snapshot, exit 1.  A real
# trace truncated and bit-flipped: exit 0 or 1, never a crash.
. tests/data/common.sh
prog=$BUILD/tests/integ/pagemapprog
need_bin "$prog" "$RIP" "$RIP_ASAN"
[ -e "$BUILD/librip-preload.so" ] || die "no $BUILD/librip-preload.so: run make"
command -v python3 >/dev/null || die "python3 is needed"

for c in short-array past-end overlap twice bad-range orphan; do
	"$RIP" run --ctf -q -o "$TEST_TMP/$c" -- "$prog" hostile $c || die "pagemapprog hostile $c failed"
	asan_run pagemap "$TEST_TMP/$c"
	[ "$asan_rc" = 1 ] || fail "$c: exit $asan_rc, want 1"
	grep -q 'snapshot [0-9]' "$TEST_TMP/asan.err" || fail "$c: message: $(cat "$TEST_TMP/asan.err")"
	asan_run pagemap --json "$TEST_TMP/$c"
	[ "$asan_rc" = 1 ] || fail "$c --json: exit $asan_rc, want 1"
	[ -s "$TEST_TMP/asan.out" ] && fail "$c --json: output on failure"
done

"$RIP" run --ctf -q -o "$TEST_TMP/huge" -- "$prog" hostile huge || die "pagemapprog hostile huge failed"
asan_run pagemap --json "$TEST_TMP/huge"
[ "$asan_rc" = 0 ] || fail "huge: exit $asan_rc, want 0"
python3 - "$TEST_TMP/asan.out" <<'PY' || fail "huge: JSON"
import json, sys
r = json.load(open(sys.argv[1]))
m = r["mappings"]
assert len(m) == 1 and m[0]["pages"] == 1 << 34 and m[0]["present"] == 32, m
assert m[0]["live_blocks"] == 2 and m[0]["live_pages"] == 1 << 34 and m[0]["unused"] == 0, m
PY

"$RIP" run --ctf -q -o "$TEST_TMP/cut" -- "$prog" hostile cut || die "pagemapprog hostile cut failed"
asan_run pagemap "$TEST_TMP/cut"
[ "$asan_rc" = 1 ] || fail "cut: exit $asan_rc, want 1"
grep -q 'cut short' "$TEST_TMP/asan.err" || fail "cut: message"

# a real trace, damaged
"$RIP" run --ctf -q --mem -o "$TEST_TMP/t" -- "$prog" block 50 50 >/dev/null || die "rip run block failed"
asan_run pagemap "$TEST_TMP/t"
[ "$asan_rc" = 0 ] || fail "intact trace: exit $asan_rc"
stream=$(ls "$TEST_TMP"/t/stream_* | head -n 1)
size=$(wc -c <"$stream")
for cut in 0 7 100 $((size / 3)) $((size / 2)) $((size - 1)); do
	rm -rf "$TEST_TMP/c"
	cp -r "$TEST_TMP/t" "$TEST_TMP/c"
	truncate -s "$cut" "$TEST_TMP/c/$(basename "$stream")"
	asan_run pagemap --json "$TEST_TMP/c"
	[ "$asan_rc" -le 1 ] || fail "truncated to $cut: exit $asan_rc"
done
for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do
	rm -rf "$TEST_TMP/f"
	cp -r "$TEST_TMP/t" "$TEST_TMP/f"
	python3 - "$TEST_TMP/f/$(basename "$stream")" "$seed" <<'PY' || die "cannot flip bits"
import random, sys
p = sys.argv[1]
random.seed(int(sys.argv[2]))
b = bytearray(open(p, "rb").read())
for _ in range(4):
    i = random.randrange(len(b))
    b[i] ^= 1 << random.randrange(8)
open(p, "wb").write(b)
PY
	asan_run pagemap "$TEST_TMP/f"
	[ "$asan_rc" -le 1 ] || fail "bit flips (seed $seed): exit $asan_rc"
done

t_done
