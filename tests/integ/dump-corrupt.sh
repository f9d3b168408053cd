#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip dump on damaged input exits 1 with one clear message
# that names the file (and the ring and packet, or the stream file and its
# offset), never crashes, and the AddressSanitizer/UBSan build reports
# nothing.  Ring files: an unknown event id, an absurd content size and a
# wrong event count in a closed packet, a truncated file, and random bytes
# flipped in the event rings (exit 0 or 1).  Trace directories (written by
# rip snapshot): a truncated stream file, flipped bytes in
# a stream file, a bad packet magic, a garbage .rip-index.
# 70 runs of the ASan build (CORRUPT_FLIPS=60 for more): 30 s alone.
# Timeout: 360
. tests/data/common.sh
prog=$BUILD/tests/integ/dumpprog
need_bin "$prog" "$RIP" "$RIP_ASAN"
need_cmd python3
flips=${CORRUPT_FLIPS:-30}

# a small file (few slots, few small event rings): every damaged copy is a copy of it
ring=$(RIP_SLOTS=4096 RIP_EVENT_SMALL_RINGS=64 "$prog" fill 300) || die "dumpprog fill failed"
[ -s "$ring" ] || die "dumpprog made no ring file ($ring)"
expect_status 0 "intact ring" "$RIP" dump "$ring"
grep -q '^300 events, 1 streams, 0 discarded/overwritten, 0 packets lost$' "$TEST_TMP/out" ||
	fail "intact ring: summary: $(tail -n 1 "$TEST_TMP/out")"

# damage NAME WANT PYTHON: copy the ring, apply PYTHON to bytearray b (ev:
# offset of ring 0's data, psz: packet size), dump it with the ASan build,
# want exit 1 and a message matching WANT.
damage() {
	name=$1 want=$2
	python3 - "$ring" "$TEST_TMP/$name.ring" "$3" <<'PY' || die "$name: generator failed"
import struct, sys
sys.path.insert(0, "tests/data")
from corrupt import write_sparse
b = bytearray(open(sys.argv[1], "rb").read())
ev = struct.unpack_from("<Q", b, 128)[0]
psz = struct.unpack_from("<I", b, 144)[0]
exec(sys.argv[3])
write_sparse(sys.argv[2], b)
PY
	asan_run dump "$TEST_TMP/$name.ring"
	[ "$asan_rc" = 1 ] || fail "$name: exit $asan_rc, want 1"
	grep -Eq "^rip: .*$want" "$TEST_TMP/asan.err" ||
		fail "$name: message does not say '$want': $(head -n 2 "$TEST_TMP/asan.err")"
	[ "$(wc -l <"$TEST_TMP/asan.err")" = 1 ] || fail "$name: more than one error line"
}

damage unknown-id "ring 0 packet 0: unknown event id" 'b[ev + 80] = (b[ev + 80] & ~31) | 29'
damage content-size "ring 0 packet 0: content size" 'struct.pack_into("<Q", b, ev + 32, 1 << 40)'
damage event-count "ring 0 packet 0: says 7[0-9] events" \
	'struct.pack_into("<I", b, ev + 72, struct.unpack_from("<I", b, ev + 72)[0] + 1)'
damage truncated "truncated.ring: .*corrupt" 'del b[len(b) // 2:]'

# random flips in the first packets of ring 0: exit 0 or 1, never a crash
python3 - "$ring" "$TEST_TMP/flips" "$flips" <<'PY' || die "flip generator failed"
import os, random, struct, sys
sys.path.insert(0, "tests/data")
from corrupt import PAGE, data_pages, write_sparse
b0 = open(sys.argv[1], "rb").read()
pages = set(data_pages(b0))
ev = struct.unpack_from("<Q", b0, 128)[0]
psz = struct.unpack_from("<I", b0, 144)[0]
os.makedirs(sys.argv[2], exist_ok=True)
random.seed(1)
for i in range(int(sys.argv[3])):
    b = bytearray(b0)
    flipped = set()
    for _ in range(random.randint(1, 4)):
        off = ev + random.randrange(4 * psz)
        b[off] ^= 1 << random.randrange(8)
        flipped.add(off - off % PAGE)
    write_sparse(os.path.join(sys.argv[2], "f%03d.ring" % i), b, sorted(pages | flipped))
PY
for f in "$TEST_TMP"/flips/*.ring; do
	asan_run dump "$f"
	case $asan_rc in
	0) ;;
	1) [ -s "$TEST_TMP/asan.err" ] || fail "$(basename "$f"): exit 1 without a message" ;;
	*) fail "$(basename "$f"): exit $asan_rc" ;;
	esac
done

trace=$TEST_TMP/trace
expect_status 0 "rip snapshot" "$RIP" snapshot -o "$trace" "$ring"
expect_status 0 "intact trace" "$RIP" dump "$trace"
grep -q '^300 events, 1 streams' "$TEST_TMP/out" || fail "intact trace: $(tail -n 1 "$TEST_TMP/out")"

# tdamage NAME WANT FILE PYTHON: copy the trace, apply PYTHON to bytearray b
# (the contents of FILE in it), dump with the ASan build: exit 1, WANT.
tdamage() {
	name=$1 want=$2 file=$3
	rm -rf "$TEST_TMP/t-$name"
	cp -r "$trace" "$TEST_TMP/t-$name"
	python3 - "$TEST_TMP/t-$name/$file" "$4" <<'PY' || die "$name: generator failed"
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
exec(sys.argv[2])
open(sys.argv[1], "wb").write(b)
PY
	asan_run dump "$TEST_TMP/t-$name"
	[ "$asan_rc" = 1 ] || fail "trace $name: exit $asan_rc, want 1"
	grep -Eq "^rip: .*$want" "$TEST_TMP/asan.err" ||
		fail "trace $name: message does not say '$want': $(head -n 2 "$TEST_TMP/asan.err")"
}

tdamage truncated "stream_0: offset [0-9]+: " stream_0 'del b[len(b) - 100:]'
tdamage short-header "stream_0: offset [0-9]+: packet header cut" stream_0 \
	'b += b[:40]'
tdamage bad-magic "stream_0: offset 0: bad packet magic" stream_0 'b[0] ^= 0xff'
tdamage unknown-id "stream_0: offset 0: unknown event id" stream_0 \
	'b[80] = (b[80] & ~31) | 29'
tdamage index-garbage "rip-index" .rip-index 'b[:64] = bytes(range(64))'
tdamage index-short "rip-index" .rip-index 'del b[len(b) // 2:]'

# random flips in the stream file: exit 0 or 1 only
i=0
while [ "$i" -lt "$flips" ]; do
	rm -rf "$TEST_TMP/tf"
	cp -r "$trace" "$TEST_TMP/tf"
	python3 - "$TEST_TMP/tf/stream_0" "$i" <<'PY' || die "cannot flip bits"
import random, sys
b = bytearray(open(sys.argv[1], "rb").read())
random.seed(int(sys.argv[2]))
for _ in range(random.randint(1, 4)):
    b[random.randrange(len(b))] ^= 1 << random.randrange(8)
open(sys.argv[1], "wb").write(b)
PY
	asan_run dump "$TEST_TMP/tf"
	[ "$asan_rc" -le 1 ] || fail "trace flip $i: exit $asan_rc"
	i=$((i + 1))
done
t_done
