#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip report on input that makes no sense, under AddressSanitizer
# and UBSan: bad backtrace definitions, undefined ids, double frees, blocks
# allocated twice (exit 0 with warnings and exact counts); a trace directory
# whose array count is damaged (exit 1, the file and the offset named); a
# damaged ring file (exit 0, the loss reported at the top); truncated and
# bit-flipped stream files (exit 0 or 1, never a crash or a sanitizer report).
. tests/data/common.sh
prog=$BUILD/tests/integ/reportprog
need_bin "$prog" "$RIP" "$RIP_ASAN"
need_cmd python3

ring=$("$prog" bad) || die "reportprog bad failed"

asan_run report "$ring"
[ "$asan_rc" = 0 ] || fail "bad backtraces: exit $asan_rc, want 0"
grep -q 'bad backtrace definitions' "$TEST_TMP/asan.err" || fail "no warning on bad rip:bt"
grep -q '(backtrace 999 is not defined in the trace)' "$TEST_TMP/asan.out" ||
	fail "undefined id not shown"
grep -q '(no backtrace recorded)' "$TEST_TMP/asan.out" || fail "bt 0 not shown"

asan_run report --json "$ring"
[ "$asan_rc" = 0 ] || fail "bad backtraces --json: exit $asan_rc"
python3 - "$TEST_TMP/asan.out" <<'EOF' || fail "bad: JSON counts"
import json, sys
r = json.load(open(sys.argv[1]))
m = r["memory"]
assert (m["allocations"], m["bytes"], m["frees"], m["frees_unseen"], m["allocated_again"]) == \
    (6, 210, 1, 1, 1), m
assert (m["live_blocks"], m["live_bytes"], m["peak"]["bytes"]) == (4, 180, 180), m
assert r["backtraces"]["bad"] == 2, r["backtraces"]
assert [s["site"] for s in r["top_bytes"] if s["bt"] in (0, 999)] == [None, None], r["top_bytes"]
EOF

# damage FILE: set the count before bt 32's frames (0x5252...) to 0x7fffffff
damage() {
	python3 - "$1" <<'EOF' || die "cannot damage $1"
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
i = b.find(bytes([0x52]) * 24)
assert i > 4
b[i - 4:i] = (0x7fffffff).to_bytes(4, "little")
open(p, "wb").write(b)
EOF
}

cp "$ring" "$TEST_TMP/damaged.ring"
damage "$TEST_TMP/damaged.ring"
asan_run report "$TEST_TMP/damaged.ring"
[ "$asan_rc" = 0 ] || fail "damaged ring: exit $asan_rc, want 0"
head -n 1 "$TEST_TMP/asan.out" | grep -q '^WARNING: this trace is incomplete' ||
	fail "damaged ring: no warning at the top"

expect_status 0 "rip snapshot" "$RIP" snapshot -o "$TEST_TMP/trace" "$ring"
cp -r "$TEST_TMP/trace" "$TEST_TMP/dtrace"
damage "$TEST_TMP/dtrace/stream_0"
asan_run report "$TEST_TMP/dtrace"
[ "$asan_rc" = 1 ] || fail "damaged trace: exit $asan_rc, want 1"
grep -q 'stream_0: offset [0-9]*: ' "$TEST_TMP/asan.err" ||
	fail "damaged trace: no file and offset in the message"
asan_run report --json "$TEST_TMP/dtrace"
[ "$asan_rc" = 1 ] || fail "damaged trace --json: exit $asan_rc, want 1"

# truncations and bit flips of a bigger trace: 0 or 1, nothing else
kring=$("$prog" known) || die "reportprog known failed"
expect_status 0 "rip snapshot (known)" "$RIP" snapshot -o "$TEST_TMP/ktrace" "$kring"
size=$(wc -c <"$TEST_TMP/ktrace/stream_0")
for cut in 0 7 100 $((size / 2)) $((size - 1)); do
	rm -rf "$TEST_TMP/cut"
	cp -r "$TEST_TMP/ktrace" "$TEST_TMP/cut"
	truncate -s "$cut" "$TEST_TMP/cut/stream_0"
	asan_run report --json "$TEST_TMP/cut"
	[ "$asan_rc" -le 1 ] || fail "truncated to $cut: exit $asan_rc"
done
for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do
	rm -rf "$TEST_TMP/flip"
	cp -r "$TEST_TMP/ktrace" "$TEST_TMP/flip"
	python3 - "$TEST_TMP/flip/stream_0" "$seed" <<'EOF' || die "cannot flip bits"
import random, sys
p = sys.argv[1]
random.seed(int(sys.argv[2]))
b = bytearray(open(p, "rb").read())
for _ in range(4):
    i = random.randrange(len(b))
    b[i] ^= 1 << random.randrange(8)
open(p, "wb").write(b)
EOF
	asan_run report "$TEST_TMP/flip"
	[ "$asan_rc" -le 1 ] || fail "bit flips (seed $seed): exit $asan_rc"
done

t_done
